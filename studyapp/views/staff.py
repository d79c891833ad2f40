"""The staff dashboard: a study list and one page per study (docs/studyapp.md#staff-dashboard). Each study's
team only (services.access.teams: 403 for other staff; superusers see all).

Thin: the numbers come from services.analysis.dashboard, the figures from services.analysis.figures, the live metric
ranking from services.analysis.preview (cached per state of the answers), the files from services.data.export and
services.data.payments. The study page's figures and tables live in a fragment that static/studyapp/staff.js
fetches again every ``REFRESH_SECONDS``.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.admin.views.decorators import staff_member_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from studyapp.exceptions import StudyError
from studyapp.forms import AnnotatorSearchForm, ReviewApplyForm, ReviewDecisionForm
from studyapp.forms.study import json_download, study_form_step
from studyapp.models import Collection, StoredPlan, Study
from studyapp.services.access.teams import member_study, sees_platform_ids, visible_studies
from studyapp.services.data.file_names import safe_name
from studyapp.services.data.payments import payments_csv
from studyapp.services.design.readiness import consent_warnings, link_warnings
from studyapp.services.platforms.review_api import ApiError
from studyapp.services.review import decisions, jobs, sending
from studyapp.services.review.setup import base_url, setup_sections, study_link

REFRESH_SECONDS = 15


def download(study: Study, fmt: str) -> HttpResponse:
    """The study's default preference export in ``fmt`` as an attachment (the admin action uses it too)."""
    # imported here, not at start: docs/contributing.md#lazy-evaluation-imports
    from studyapp.services.data.export import content_type, download_name, export_bytes

    content, _ = export_bytes(study, fmt)
    response = HttpResponse(content, content_type=content_type(fmt))
    response["Content-Disposition"] = f'attachment; filename="{download_name(study, fmt)}"'
    return response


def _live_context(study: Study) -> dict:
    # imported here, not at start: docs/contributing.md#lazy-evaluation-imports
    from studyapp.services.analysis import dashboard, figures, preview

    numbers = dashboard.live_numbers(study)
    return {
        "study": study,
        **numbers,
        "completion_svg": figures.completion_svg(numbers["levels"], study.annotators_per_presentation),
        "histogram_svg": figures.histogram_svg(numbers["histogram"]),
        "sides_svg": figures.sides_svg(numbers["sides"]),
        "preview": preview.cached_preview(study),
    }


@staff_member_required
def study_list(request: HttpRequest) -> HttpResponse:
    # imported here, not at start: docs/contributing.md#lazy-evaluation-imports
    from studyapp.services.analysis import dashboard

    return render(request, "studyapp/staff/study_list.html", {"summaries": dashboard.study_summaries(visible_studies(request.user))})


@staff_member_required
def study_new(request: HttpRequest) -> HttpResponse:
    """Create a study (the admin's form and ``create_study``'s service): every problem at once, with suggestions;
    the creator owns it, and the summary and the link warnings come with the study's page."""
    if not request.user.has_perm("studyapp.add_study"):
        raise PermissionDenied("creating studies needs the permission to add studies")
    step = study_form_step(request)
    if step.download is not None:
        return json_download(step.download, step.filename)
    if step.summary is not None:
        for line in step.summary.lines(base_url(request)):
            messages.success(request, line)
        return redirect("staff_study", step.summary.study.slug)
    context = {"form": step.form, "collections": Collection.objects.order_by("name")}
    return render(request, "studyapp/staff/study_new.html", context)


@staff_member_required
def study_page(request: HttpRequest, slug: str) -> HttpResponse:
    # imported here, not at start: docs/contributing.md#lazy-evaluation-imports
    from studyapp.services.analysis import adaptive, dashboard
    from studyapp.services.analysis.stored_plan import plan_command, stored_plan
    from studyapp.services.data.export import export_formats

    study = member_study(request.user, slug, Study.objects.select_related("collection"))
    ids = sees_platform_ids(request.user, study)
    form = AnnotatorSearchForm(request.GET or None, platform_ids=ids)
    query = form.cleaned_data["q"] if form.is_valid() else ""
    rows, matching = dashboard.annotator_rows(study, query, platform_ids=ids)
    context = {
        **_live_context(study),
        "form": form,
        "query": query,
        "annotators": rows,
        "rule_columns": dashboard.rule_columns(study),
        "matching": matching,
        "platform_ids": ids,
        "formats": export_formats(),
        "refresh_seconds": REFRESH_SECONDS,
        "adaptive": adaptive.dashboard_view(study),
        "data_plan": stored_plan(study, StoredPlan.Kind.DATA),
        "data_plan_command": plan_command(study, from_data=True),
    }
    return render(request, "studyapp/staff/study.html", context)


@staff_member_required
def study_live(request: HttpRequest, slug: str) -> HttpResponse:
    """The refreshing part of the study page (figures and their tables) as an HTML fragment."""
    study = member_study(request.user, slug, Study.objects.select_related("collection"))
    return render(request, "studyapp/staff/_live.html", _live_context(study))


@staff_member_required
def study_payments(request: HttpRequest, slug: str) -> HttpResponse:
    """The payments export (services.data.payments); its raw platform ids only for team members allowed to see them."""
    study = member_study(request.user, slug)
    response = HttpResponse(
        payments_csv(study, platform_ids=sees_platform_ids(request.user, study)), content_type="text/csv; charset=utf-8"
    )
    response["Content-Disposition"] = f'attachment; filename="{safe_name(study.slug)}-payments.csv"'
    return response


@staff_member_required
def study_export(request: HttpRequest, slug: str, fmt: str) -> HttpResponse:
    # imported here, not at start: docs/contributing.md#lazy-evaluation-imports
    from studyapp.services.data.export import export_formats

    if fmt not in export_formats():
        raise Http404(f"no export format {fmt!r}")
    return download(member_study(request.user, slug), fmt)


@staff_member_required
def study_setup(request: HttpRequest, slug: str) -> HttpResponse:
    """What to paste into Prolific, MTurk or an e-mail to recruit for the study (services.review.setup)."""
    # imported here, not at start: docs/contributing.md#lazy-evaluation-imports
    from studyapp.services.analysis.stored_plan import plan_command, stored_plan

    study = member_study(request.user, slug)
    base = base_url(request)
    link = study_link(study, base)
    context = {
        "study": study,
        "link": link,
        "warnings": link_warnings(link) + consent_warnings(study.consent_text),
        "sections": setup_sections(study, base),
        "plan": stored_plan(study, StoredPlan.Kind.DESIGN),
        "plan_command": plan_command(study),
    }
    return render(request, "studyapp/staff/setup.html", context)


@staff_member_required
def study_review(request: HttpRequest, slug: str) -> HttpResponse:
    """Review the study's submissions on their platform: the rules' and staff's decisions, a dry run of the calls, Apply,
    and the audit log (services.review.decisions, services.review.sending)."""
    study = member_study(request.user, slug)
    rows = decisions.review_rows(study)
    error: tuple[str, str] | None = None  # (pseudonym, problem) of a refused change, shown at its row
    if request.method == "POST":
        done, error = _review_post(request, study, rows)
        if done:
            return redirect("staff_study_review", slug=study.slug)
    context = {
        "study": study,
        "rows": [(row, *_row_form(row, request.POST if error and error[0] == row.pseudonym else None, error)) for row in rows],
        "platform_ids": sees_platform_ids(request.user, study),
        "page_error": error[1] if error and not any(row.pseudonym == error[0] for row in rows) else "",
        "dry_run": sending.plan(rows) if "dry_run" in request.GET else None,
        "apply_form": ReviewApplyForm(),
        "job": _job(study, sees_platform_ids(request.user, study)),
        "audit": decisions.audit_log(study, platform_ids=sees_platform_ids(request.user, study)),
    }
    return render(request, "studyapp/staff/review.html", context, status=400 if error else 200)


def _job(study: Study, platform_ids: bool) -> dict | None:
    """The study's latest Apply job for the page: its state, counts and step lines (ids masked without the permission)."""
    job = jobs.latest(study)
    if job is None:
        return None
    log = job.log if platform_ids else decisions.mask_ids(study, job.log)
    error = job.error if platform_ids else decisions.mask_ids(study, job.error)
    return {"job": job, "lines": log.splitlines()[-200:], "error": error, "active": job.status in jobs.ACTIVE}


def _row_form(row: decisions.Row, posted, error: tuple[str, str] | None) -> tuple[dict, str]:
    """The values a row's form shows (what staff typed, after a refused change) and its error."""
    final = row.final
    values = {"action": final.action, "category": final.category, "message": final.message, "bonus": final.bonus}
    if posted is not None:
        values = {key: posted.get(key, "") for key in values}
    return values, error[1] if posted is not None and error else ""


def _review_post(request: HttpRequest, study: Study, rows: list[decisions.Row]) -> tuple[bool, tuple[str, str] | None]:
    """Carry out one form of the review page; ``(done, error)``."""
    pseudonym = request.POST.get("pseudonym", "")
    try:
        if "apply" in request.POST:
            if not ReviewApplyForm(request.POST).is_valid():
                raise StudyError("tick the box to confirm, then Apply")
            sending.clients_for(rows)  # a missing token or platform without API: said now, nothing queued
            job, created = jobs.enqueue(study, request.user)
            if created:
                messages.success(request, "Apply queued: a job worker sends it; its progress is shown below.")
            else:
                messages.warning(request, f"An Apply of this study is {job.status} already: its progress is shown below.")
        elif "settle" in request.POST:
            paid = request.POST["settle"] == "paid"
            sending.resolve_unknown_bonus(decisions.row_of(rows, pseudonym), paid=paid, staff=request.user)
            messages.success(request, f"{pseudonym}: bonus recorded as {'paid' if paid else 'not paid (the next Apply pays it)'}.")
        elif "rules" in request.POST:
            decisions.use_rules(decisions.row_of(rows, pseudonym))
            messages.success(request, f"{pseudonym}: the rules decide again.")
        else:
            form = ReviewDecisionForm(request.POST)
            if not form.is_valid():
                raise StudyError("; ".join(f"{k}: {' '.join(v)}" for k, v in form.errors.items()))
            row, data = decisions.row_of(rows, form.cleaned_data["pseudonym"]), form.cleaned_data
            decision = decisions.check_decision(row, data["action"], data["category"], data["message"], data["bonus"] or decisions.ZERO)
            decisions.set_decision(study, row, decision, request.user)
            messages.success(request, f"{row.pseudonym}: decision saved ({decision.action}).")
    except (StudyError, ApiError) as exc:
        if "apply" in request.POST or "settle" in request.POST:  # rows already sent have no form to show it at
            messages.error(request, f"Nothing sent: {exc}" if "apply" in request.POST else str(exc))
            return True, None
        return False, (pseudonym, str(exc))
    return True, None
