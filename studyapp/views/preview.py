"""The staff preview of a study (``/staff/<slug>/preview/``, docs/studyapp.md#preview): the participant pages
with the study's real texts and items, a "preview" banner on each, and nothing stored that counts.

Study team only (services.access.teams.member_study: 403 for other staff). Where the staff member stands
is kept in their session (services.participation.staff_preview); asking for another step's page redirects
to the current one, as the participant flow does. Answers posted here are checked like a participant's
and then dropped.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from functools import wraps

from django.contrib.admin.views.decorators import staff_member_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import translation
from django.utils.translation import gettext
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods

from studyapp.forms import AnswerForm, ComprehensionForm, ConsentForm, PracticeForm
from studyapp.models import Study
from studyapp.services.access.teams import member_study
from studyapp.services.participation import staff_preview as walk
from studyapp.services.participation.completion import Completion
from studyapp.services.participation.item_page import result_page, unstored_item_page
from studyapp.services.participation.onboarding import (
    COMPREHENSION,
    COMPREHENSION_ATTEMPTS,
    PRACTICE_NEEDS,
    PRACTICE_QUERY,
    failed_attempt_notice,
    practice_feedback,
    practice_item,
    wrong_answers,
)
from studyapp.services.participation.scale import SCALE, point
from studyapp.services.quality.stated import stated_rules
from studyapp.views.items import scale_fieldset
from studyapp.views.site import wants_json

STEP_URLS = {
    walk.CONSENT: "staff_preview_consent",
    walk.INSTRUCTIONS: "staff_preview_instructions",
    walk.PRACTICE: "staff_preview_practice",
    walk.COMPREHENSION: "staff_preview_check",
    walk.ITEMS: "staff_preview_item",
    walk.DONE: "staff_preview_done",
    walk.SCREENED: "staff_preview_done",
}


def _url(study: Study, step: str) -> str:
    return reverse(STEP_URLS[step], args=[study.slug])


def preview_page(*steps: str) -> Callable:
    """Team only, never cached, in the study's language; the view gets the preview state when it stands at one of ``steps``."""

    def decorate(view: Callable) -> Callable:
        @staff_member_required
        @never_cache
        @wraps(view)
        def wrapper(request: HttpRequest, slug: str) -> HttpResponse:
            study = member_study(request.user, slug)
            state = walk.load(request.session, study)
            if state is None:
                return redirect("staff_preview", slug=study.slug)
            if state.step not in steps:
                return redirect(_url(study, state.step))
            with translation.override(study.language):
                response = view(request, study, state)
            walk.save(request.session, study, state)
            response.headers.setdefault("Content-Language", study.language)
            return response

        return wrapper

    return decorate


def _page(request: HttpRequest, template: str, study: Study, status: int = 200, **context) -> HttpResponse:
    """A participant template with the preview's banner and links (``preview`` in the context)."""
    urls = {step: _url(study, step) for step in walk.STEPS}
    preview = {"restart": reverse("staff_preview", args=[study.slug]), "back": reverse("staff_study", args=[study.slug]), **urls}
    context = {"study": study, "annotator": None, "heartbeat_url": "", "preview": preview, **context}
    return render(request, template, context, status=status)


@staff_member_required
@never_cache
@require_http_methods(["GET", "HEAD"])
def start(request: HttpRequest, slug: str) -> HttpResponse:
    """``/staff/<slug>/preview/``: a fresh walk-through, from the consent page."""
    study = member_study(request.user, slug)
    walk.start(request.session, study, token=secrets.token_hex(8))
    return redirect(_url(study, walk.CONSENT))


@require_http_methods(["GET", "HEAD", "POST"])
@preview_page(walk.CONSENT)
def consent(request: HttpRequest, study: Study, state: walk.PreviewState) -> HttpResponse:
    if request.method == "POST":
        if "decline" in request.POST:
            return _page(request, "studyapp/annotator/messages/declined.html", study, kind="declined")
        form = ConsentForm(request.POST)
        if form.is_valid():
            state.step = walk.INSTRUCTIONS
            return redirect(_url(study, state.step))
        return _page(request, "studyapp/annotator/consent.html", study, status=400, form=form)
    return _page(request, "studyapp/annotator/consent.html", study, form=ConsentForm(initial={"version": study.consent_version}))


@require_http_methods(["GET", "HEAD", "POST"])
@preview_page(walk.INSTRUCTIONS)
def instructions(request: HttpRequest, study: Study, state: walk.PreviewState) -> HttpResponse:
    if request.method == "POST":
        state.step = walk.PRACTICE
        return redirect(_url(study, state.step))
    return _page(request, "studyapp/annotator/instructions.html", study, scale=SCALE, rules=stated_rules(study))


@require_http_methods(["GET", "HEAD", "POST"])
@preview_page(walk.PRACTICE, walk.COMPREHENSION)
def practice(request: HttpRequest, study: Study, state: walk.PreviewState) -> HttpResponse:
    item = practice_item(state.token)
    form = PracticeForm(request.POST if request.method == "POST" and state.practice_value is None else None)
    if form.is_bound and form.is_valid():
        state.practice_value, state.step = form.cleaned_data["value"], walk.COMPREHENSION
        return redirect(_url(study, walk.PRACTICE))
    value = state.practice_value
    return _page(
        request,
        "studyapp/annotator/practice.html",
        study,
        status=400 if form.errors else 200,
        form=form,
        feedback=practice_feedback(value, item.good_on_left) if value is not None else None,
        chosen=getattr(point(value), "name", ""),
        query=PRACTICE_QUERY,
        needs=PRACTICE_NEEDS,
        left=result_page(item.left),
        right=result_page(item.right),
        scale=SCALE,
    )


@require_http_methods(["GET", "HEAD", "POST"])
@preview_page(walk.COMPREHENSION)
def comprehension(request: HttpRequest, study: Study, state: walk.PreviewState) -> HttpResponse:
    notice, wrong, status, form = "", [], 200, ComprehensionForm()
    if request.method == "POST":
        form = ComprehensionForm(request.POST)
        if not form.is_valid():
            status = 400
        elif not (wrong := wrong_answers(form.cleaned_data)):
            state.step = walk.ITEMS if state.items else walk.DONE
            return redirect(_url(study, state.step))
        else:
            left = state.check_failed()
            if not left:
                return redirect(_url(study, state.step))
            notice = failed_attempt_notice(wrong, left)
            form = ComprehensionForm(initial={k: v for k, v in form.cleaned_data.items() if k not in wrong})
    return _page(
        request,
        "studyapp/annotator/comprehension.html",
        study,
        status=status,
        form=form,
        notice=notice,
        wrong=wrong,
        attempt=state.attempts + 1,
        attempts=COMPREHENSION_ATTEMPTS,
        questions=len(COMPREHENSION),
    )


@require_http_methods(["GET", "HEAD", "POST"])
@preview_page(walk.ITEMS)
def item(request: HttpRequest, study: Study, state: walk.PreviewState) -> HttpResponse:
    """The current item (GET); its answer (POST, JSON for the page's script): checked, then dropped."""
    presentation_id, a_on_left = state.current
    if request.method == "POST":
        form = AnswerForm(request.POST)
        if not form.is_valid():
            message = gettext("Please choose a point on the scale.")
            if wants_json(request):
                return JsonResponse({"error": "invalid", "message": message, "next": _url(study, walk.ITEMS)}, status=400)
            return redirect(_url(study, walk.ITEMS))
        state.answer_item()
        next_url = _url(study, state.step)
        if not wants_json(request):
            return redirect(next_url)
        finished = state.step == walk.DONE
        data = {"stored": False, "preview": True, "next": next_url, "finished": finished, "answered": state.answered}
        return JsonResponse({**data, "quota": len(state.items)})
    page = unstored_item_page(study, presentation_id, a_on_left, state.answered + 1, len(state.items))
    return _page(
        request,
        "studyapp/annotator/item.html",
        study,
        page=page,
        scale_fieldset=scale_fieldset(page.needs),
        answered=state.answered,
        request_id=secrets.token_hex(16),
        answer_url=_url(study, walk.ITEMS),
    )


@require_http_methods(["GET", "HEAD"])
@preview_page(walk.DONE, walk.SCREENED)
def done(request: HttpRequest, study: Study, state: walk.PreviewState) -> HttpResponse:
    """The completion page with the study's completion code (no platform), or the screened-out page after two failed checks."""
    if state.step == walk.SCREENED:
        return _page(request, "studyapp/annotator/messages/screened.html", study, kind="screened")
    return _page(
        request, "studyapp/annotator/done.html", study, completion=Completion(platform="", platform_name="", code=study.completion_code)
    )
