"""The annotator pages: entry -> consent -> instructions -> practice -> comprehension check -> items -> done.

Each view parses the request with a form, calls ``services.participation.flow`` and renders or redirects. Where an
annotator stands comes from ``flow.next_step``; asking for any other page redirects there, so
reloads, back/forward and returning through the platform link all land on the right page.

The browser session holds the annotator's secret token per study (the per-annotator secret): an
assignment id of someone else answers 404, exactly like an id that does not exist. Annotator pages
are never cached (``never_cache``), so back/forward asks the server again.
"""

from __future__ import annotations

import functools
import logging
import math
import secrets
from collections.abc import Callable
from functools import wraps

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import translation
from django.utils.translation import gettext
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST

from studyapp.exceptions import AnswerConflict, ConsentOutdated, IdentityInUse, PlatformIdRequired, StudyClosed, StudyFull
from studyapp.forms import AnswerForm, ArrivalForm, ComprehensionForm, ConsentForm, HeartbeatForm, PracticeForm
from studyapp.models import Annotator, Study
from studyapp.services import platforms
from studyapp.services.access import throttle
from studyapp.services.participation import allocation, flow, sessions
from studyapp.services.participation.answers import record_answer
from studyapp.services.participation.completion import completion_for, screenout_link
from studyapp.services.participation.item_page import item_page, result_page
from studyapp.services.participation.onboarding import (
    COMPREHENSION,
    COMPREHENSION_ATTEMPTS,
    PRACTICE_NEEDS,
    PRACTICE_QUERY,
    failed_attempt_notice,
)
from studyapp.services.participation.scale import SCALE, point
from studyapp.services.participation.sequence import Sequence
from studyapp.services.quality.stated import exclusion_rule, stated_rules
from studyapp.views.site import wants_json

security = logging.getLogger("studyapp.security")

STEP_URLS = {
    flow.CONSENT: "study_consent",
    flow.INSTRUCTIONS: "study_instructions",
    flow.PRACTICE: "study_practice",
    flow.COMPREHENSION: "study_comprehension",
    flow.ITEMS: "study_next_item",
    flow.DONE: "study_done",
}

# -- messages and steps ----------------------------------------------------------------------------


def _message(request: HttpRequest, study: Study | None, kind: str, *, status: int = 200, **extra) -> HttpResponse:
    """A friendly page for every state in which the annotator cannot go on (or has to go back).

    Its title and text are the template ``messages/<kind>.html``; this adds what the page needs to
    know: the screen-out code and Prolific's redirect of a full study, the reason of an exclusion.
    """
    context = {"study": study, "kind": kind, "platform_names": platforms.names_text(), **extra}
    if kind == "full":
        _exit_with_screenout(request, study, context)
    elif kind == "excluded":
        annotator = sessions.session_annotator(request, study)
        context.update(rule=exclusion_rule(annotator) if annotator is not None else "", rules=stated_rules(study))
        if study.excluded_exit == Study.ExcludedExit.SCREENOUT:
            _exit_with_screenout(request, study, context)
    return render(request, f"studyapp/annotator/messages/{kind}.html", context, status=status)


def _exit_with_screenout(request: HttpRequest, study: Study, context: dict) -> None:
    """The screen-out code, and the platform's own redirect (Prolific's for a Prolific participant; an MTurk worker returns the HIT on MTurk)."""
    context["code"] = study.screenout_code
    platform = platforms.by_key(_arrived_from(request, study))
    link = screenout_link(study, platform.key)
    if link:
        context.update(link=link, platform_name=platform.name)


def _arrived_from(request: HttpRequest, study: Study) -> str:
    """The platform of whoever asks: the link's parameters, else the session's annotator or pending newcomer."""
    form = ArrivalForm(request.GET)
    if form.is_valid() and form.arrival().external_id:
        return form.arrival().platform
    annotator = sessions.session_annotator(request, study)
    arrival = sessions.pending(request, study)
    return annotator.platform if annotator is not None else arrival.platform if arrival is not None else platforms.ANONYMOUS.key


def _to_step(request: HttpRequest, study: Study, step: str) -> HttpResponse:
    """Where ``step`` is shown: the message of a terminal step, else a redirect to its page."""
    return _message(request, study, step) if step in flow.TERMINAL else _go(study, step)


def _step_url(study: Study, step: str) -> str:
    """The page of ``step``; terminal steps are told on the entry page."""
    return reverse(STEP_URLS.get(step, "study_entry"), args=[study.slug])


def _go(study: Study, step: str) -> HttpResponse:
    return redirect(_step_url(study, step))


def _item_url(study: Study, pk: int) -> str:
    return reverse("study_item", args=[study.slug, pk])


def study_page(view: Callable) -> Callable:
    """Resolve the slug (friendly 404 for an unknown one), speak the study's language and never cache an annotator page.

    The study and the session's annotator in it are read together (one query), once per request.
    """

    @wraps(view)
    @never_cache
    def wrapper(request: HttpRequest, slug: str, *args, **kwargs) -> HttpResponse:
        study, _ = sessions.resolve(request, slug)
        if study is None:
            with translation.override(translation.get_language_from_request(request)):
                if wants_json(request):
                    return JsonResponse({"error": "unknown", "message": gettext("This study does not exist.")}, status=404)
                return _message(request, None, "unknown", status=404)
        with translation.override(study.language):  # every text of the page in the study's language
            response = view(request, study, *args, **kwargs)
        response.headers.setdefault("Content-Language", study.language)
        return response

    return wrapper


def annotator_at(*steps: str) -> Callable:
    """For views under :func:`study_page`: pass the session's annotator when they stand at one of ``steps``.

    Without a session annotator the page says the session has ended (403); an annotator standing
    elsewhere is taken where they belong. The view is called as ``view(request, study, annotator, ...)``.
    """

    def decorate(view: Callable) -> Callable:
        @wraps(view)
        def wrapper(request: HttpRequest, study: Study, *args, **kwargs) -> HttpResponse:
            annotator = sessions.session_annotator(request, study)
            if annotator is None:
                return _message(request, study, "expired", status=403)
            step = flow.next_step(annotator)
            if step not in steps:
                return _to_step(request, study, step)
            return view(request, study, annotator, *args, **kwargs)

        return wrapper

    return decorate


def _page(request: HttpRequest, template: str, study: Study, annotator: Annotator | None, **context) -> HttpResponse:
    """Render an annotator page; pages of an active annotator send heartbeats (item pages name their item)."""
    heartbeat = annotator is not None and annotator.status == Annotator.Status.ACTIVE
    status = context.pop("status", 200)
    context = {
        "study": study,
        "annotator": annotator,
        "heartbeat_url": reverse("study_heartbeat", args=[study.slug]) if heartbeat else "",
        "heartbeat_seconds": settings.STUDYAPP_HEARTBEAT_SECONDS,
        **context,
    }
    return render(request, template, context, status=status)


# -- entry, consent, onboarding ---------------------------------------------------------------------


@study_page
@require_http_methods(["GET", "HEAD"])
def study_entry(request: HttpRequest, study: Study) -> HttpResponse:
    """``/s/<slug>/?PROLIFIC_PID=...`` (or MTurk ids, or none): resume, preview, or start with consent."""
    form = ArrivalForm(request.GET)
    if not form.is_valid():
        return _message(request, study, "bad_link", status=400, problem=form.problem())
    arrival = form.arrival()
    if arrival.preview:
        return render(request, "studyapp/annotator/preview.html", {"study": study, "rules": stated_rules(study)})
    session_annotator = sessions.session_annotator(request, study)
    annotator = flow.find(study, arrival) if arrival.external_id else session_annotator
    if annotator is not None and annotator != session_annotator and not flow.may_resume(annotator, arrival):
        return _taken(request, study, annotator)  # a known id in a browser that is not theirs, without their session id
    if arrival.external_id and annotator is None and session_annotator is not None:
        sessions.unbind(request, study)  # another participant in the same browser: they start afresh
    if annotator is not None:
        sessions.bind(request, study, annotator)
        flow.returned(annotator, arrival)
        step = flow.next_step(annotator)
        return _to_step(request, study, step)
    try:
        flow.check_platform_id(study, arrival)
    except PlatformIdRequired:
        return _message(request, study, "id_required", status=403)
    if not arrival.same_participant(sessions.pending(request, study)):  # reloading the link is no new arrival
        wait = throttle.arrival_wait_seconds(study.pk, throttle.client_address(request.META))
        if wait:
            response = _message(request, study, "busy", status=429, wait_minutes=max(1, math.ceil(wait / 60)))
            response["Retry-After"] = str(wait)
            return response
    try:
        flow.check_room(study)
    except StudyFull:
        return _message(request, study, "full")
    except StudyClosed:
        return _message(request, study, study.status)
    sessions.set_pending(request, study, arrival)
    return _go(study, flow.CONSENT)


def _taken(request: HttpRequest, study: Study, annotator: Annotator | None) -> HttpResponse:
    """Refuse a known platform id to a session that is not the participant's (409): nothing shown, nothing changed."""
    who = annotator.pseudonym if annotator is not None else "an annotator"
    address = throttle.client_address(request.META)
    security.warning("study %s: the platform id of %s was refused to another session from %s", study.slug, who, address)
    return _message(request, study, "taken", status=409)


def _consent_page(request: HttpRequest, study: Study, annotator: Annotator | None, form: ConsentForm, *, notice: str = "", status=200):
    if notice:
        form = ConsentForm(initial={"version": study.consent_version})
    return _page(request, "studyapp/annotator/consent.html", study, annotator, form=form, notice=notice, status=status)


@study_page
@require_http_methods(["GET", "HEAD", "POST"])
def consent(request: HttpRequest, study: Study) -> HttpResponse:
    """The versioned consent text; accepting it stores the version and time and leases the quota."""
    annotator = sessions.session_annotator(request, study)
    if annotator is not None:
        step = flow.next_step(annotator)
        if step != flow.CONSENT:
            return _to_step(request, study, step)
    elif sessions.pending(request, study) is None:
        return redirect("study_entry", slug=study.slug)  # came straight here: start as an anonymous arrival
    # No second room check: the entry page checked it once, and admission at the POST is the real
    # one (a newcomer it refuses, the study having filled meanwhile, is shown the "full" page).
    if request.method != "POST":
        changed = annotator is not None and annotator.consented_at is not None
        notice = gettext("The consent information has changed since you agreed. Please read it again.") if changed else ""
        return _consent_page(request, study, annotator, ConsentForm(initial={"version": study.consent_version}), notice=notice)
    if "decline" in request.POST:
        return _message(request, study, "declined")
    form = ConsentForm(request.POST)
    if not form.is_valid():
        return _consent_page(request, study, annotator, form, status=400)
    arrival = sessions.pending(request, study) or flow.Arrival()
    try:
        annotator = flow.give_consent(study, annotator, arrival, form.cleaned_data["version"])
    except ConsentOutdated:
        notice = gettext("The consent information was updated while this page was open. Please read it again.")
        return _consent_page(request, study, annotator, form, notice=notice, status=409)
    except StudyClosed:
        return _message(request, study, study.status)
    except PlatformIdRequired:
        return _message(request, study, "id_required", status=403)
    except IdentityInUse:
        return _taken(request, study, flow.find(study, arrival))
    sessions.bind(request, study, annotator)
    if annotator.status == Annotator.Status.NEW:  # consented, but the study stopped taking people just now
        return _message(request, study, "paused" if study.status == Study.Status.PAUSED else "closed")
    step = flow.next_step(annotator)
    return _to_step(request, study, step)


@study_page
@require_http_methods(["GET", "HEAD", "POST"])
@annotator_at(flow.INSTRUCTIONS)
def instructions(request: HttpRequest, study: Study, annotator: Annotator) -> HttpResponse:
    """The study's instructions with an annotated example."""
    if request.method == "POST":
        flow.read_instructions(annotator)
        return _go(study, flow.next_step(annotator))
    flow.seen(annotator)
    return _page(request, "studyapp/annotator/instructions.html", study, annotator, scale=SCALE, rules=stated_rules(study))


@study_page
@require_http_methods(["GET", "HEAD", "POST"])
@annotator_at(flow.PRACTICE, flow.COMPREHENSION)
def practice(request: HttpRequest, study: Study, annotator: Annotator) -> HttpResponse:
    """One practice item, then feedback on the answer (the first answer counts)."""
    feedback = flow.practice_result(annotator)
    if request.method == "POST" and feedback is None:
        form = PracticeForm(request.POST)
        if form.is_valid():
            flow.answer_practice(annotator, form.cleaned_data["value"])
            return redirect("study_practice", slug=study.slug)
    else:
        form = PracticeForm()
        flow.seen(annotator)
    item = flow.practice_for(annotator)
    return _page(
        request,
        "studyapp/annotator/practice.html",
        study,
        annotator,
        form=form,
        feedback=feedback,
        chosen=getattr(point(annotator.practice_value), "name", ""),
        query=PRACTICE_QUERY,
        needs=PRACTICE_NEEDS,
        left=result_page(item.left),
        right=result_page(item.right),
        scale=SCALE,
        status=400 if form.errors else 200,
    )


@study_page
@require_http_methods(["GET", "HEAD", "POST"])
@annotator_at(flow.COMPREHENSION)
def comprehension(request: HttpRequest, study: Study, annotator: Annotator) -> HttpResponse:
    """A few questions on the instructions; two attempts, then the annotator is screened out."""
    notice = ""
    wrong: list[str] = []
    status = 200
    if request.method == "POST":
        form = ComprehensionForm(request.POST)
        if form.is_valid():
            result = flow.check_comprehension(annotator, form.cleaned_data)
            if result.passed or result.attempts_left == 0:
                step = flow.next_step(annotator)
                return _to_step(request, study, step)
            wrong = result.wrong
            notice = failed_attempt_notice(wrong, result.attempts_left)
            form = ComprehensionForm(initial={k: v for k, v in form.cleaned_data.items() if k not in wrong})  # the right ones stay
        else:
            status = 400
    else:
        form = ComprehensionForm()
        flow.seen(annotator)
    attempt = annotator.comprehension_attempts + 1
    return _page(
        request,
        "studyapp/annotator/comprehension.html",
        study,
        annotator,
        form=form,
        notice=notice,
        wrong=wrong,
        attempt=attempt,
        attempts=COMPREHENSION_ATTEMPTS,
        questions=len(COMPREHENSION),
        status=status,
    )


# -- items ------------------------------------------------------------------------------------------


@study_page
@require_http_methods(["GET", "HEAD"])
@annotator_at(flow.ITEMS)
def next_item(request: HttpRequest, study: Study, annotator: Annotator) -> HttpResponse:
    """The annotator's current item (``/item/``): redirects to its own address, or to the completion page."""
    current = allocation.current_assignment(annotator, sequence=Sequence.of(annotator))
    if current is None:
        return _go(study, flow.next_step(annotator))
    return redirect(_item_url(study, current.pk))


@study_page
@require_http_methods(["GET", "HEAD"])
@annotator_at(flow.ITEMS)
def item(request: HttpRequest, study: Study, annotator: Annotator, pk: int) -> HttpResponse:
    """One item: the query, the need(s), two result pages side by side and the 9-point scale."""
    sequence = Sequence.of(annotator)
    if sequence.get(pk) is None:
        return _message(request, study, "not_found", status=404)
    current = allocation.current_assignment(annotator, sequence=sequence)  # first serve time, lease renewal, stable order
    if current is None:
        return _go(study, flow.next_step(annotator))
    if current.pk != pk:  # answered already (back button) or not its turn yet
        return redirect(_item_url(study, current.pk))
    answered, quota = sequence.progress()
    page = item_page(current, study, answered + 1, quota)
    return _page(
        request,
        "studyapp/annotator/item.html",
        study,
        annotator,
        page=page,
        scale_fieldset=scale_fieldset(page.needs),
        answered=answered,
        request_id=secrets.token_hex(16),
        answer_url=reverse("study_answer", args=[study.slug, current.pk]),
        heartbeat_item=current.pk,
    )


@functools.cache
def _drawn_scale(needs_count: int, language: str) -> str:
    return render_to_string("studyapp/annotator/_scale.html", {"scale": SCALE, "needs_count": needs_count})


def scale_fieldset(needs: list[str]) -> str:
    """The answer scale of an item page (safe HTML): the same on every item but for the question's
    wording (one need or several) and the language, so a server process draws it once per wording and
    language; it is a third of the item page's template work. With DEBUG on it is drawn afresh, so
    template edits show at once."""
    needs_count = min(len(needs), 2)
    language = translation.get_language()
    return _drawn_scale.__wrapped__(needs_count, language) if settings.DEBUG else _drawn_scale(needs_count, language)


def _refuse(request: HttpRequest, study: Study, status: int, error: str, message: str, next_url: str = "") -> HttpResponse:
    if wants_json(request):
        return JsonResponse({"error": error, "message": message, "next": next_url}, status=status)
    return _message(request, study, "not_stored", status=status, problem=message)


@study_page
@require_POST
def answer(request: HttpRequest, study: Study, pk: int) -> HttpResponse:
    """Store an answer (idempotent: a repeat returns the stored one). JSON for the page's script, else a redirect.

    A different value for an item answered already is refused (409 ``conflict``, with the next address).

    Never loses data: an answer to the annotator's own served item is stored whatever their step or
    the study's status, then the reply names the page that comes next (the next item, the consent
    again, the closed page, the completion page).
    """
    annotator = sessions.session_annotator(request, study)
    if annotator is None:
        return _refuse(
            request, study, 403, "session", gettext("Your session has ended. Please open the study link from your platform again.")
        )
    sequence = Sequence.of(annotator)
    assignment = sequence.get(pk)
    if assignment is None:
        return _refuse(request, study, 404, "not_found", gettext("This item does not exist or is not yours."))
    if assignment.served_at is None:
        next_url = reverse("study_next_item", args=[study.slug])
        return _refuse(request, study, 409, "not_served", gettext("This item was not shown yet."), next_url)
    form = AnswerForm(request.POST)
    if not form.is_valid():
        return _refuse(request, study, 400, "invalid", gettext("Please choose a point on the scale."), _item_url(study, pk))
    data = form.cleaned_data
    try:
        preference, created = record_answer(
            assignment,
            data["value"],
            client_ms=data["client_ms"],
            visible_ms=data["visible_ms"],
            first_interaction_ms=data["first_interaction_ms"],
            request_id=data["request_id"],
            answered_before=sequence.progress()[0],
            leases=sequence.lease_ends(),
        )
    except AnswerConflict:  # e.g. a second tab: the first answer stands, this one is not stored
        preference, created = None, False
    step, following = flow.after_answer(annotator, sequence, assignment.pk)
    next_url = _item_url(study, following.pk) if following is not None else _step_url(study, step)
    if preference is None:
        message = gettext("This item was already answered with a different choice, which stays stored: an answer cannot be changed.")
        return _refuse(request, study, 409, "conflict", message, next_url)
    if not wants_json(request):
        return redirect(next_url)
    answered, quota = sequence.progress(just_answered=assignment.pk)
    return JsonResponse(
        {
            "stored": True,
            "created": created,
            "value": preference.value,
            "next": next_url,
            "step": step,
            "finished": step == flow.DONE,
            "answered": answered,
            "quota": quota,
        }
    )


@study_page
@require_POST
def heartbeat(request: HttpRequest, study: Study) -> HttpResponse:
    """Sent by open annotator pages every minute: the annotator is there; an item page's keeps that item's lease.

    A heartbeat naming an item that is not the one on screen (not theirs, not served, answered,
    lease expired) is refused (409) and extends nothing.
    """
    annotator = sessions.session_annotator(request, study)
    if annotator is None:
        return JsonResponse({"error": "session", "message": gettext("Your session has ended.")}, status=403)
    form = HeartbeatForm(request.POST)
    if not form.is_valid():
        return JsonResponse({"error": "invalid", "message": gettext("The heartbeat names no item.")}, status=400)
    item = form.cleaned_data["item"]
    extended = flow.heartbeat(annotator, item)
    if item is not None and not extended:
        message = gettext("This item is not the one on your screen; nothing was extended.")
        return JsonResponse({"ok": False, "error": "not_on_screen", "message": message, "status": annotator.status}, status=409)
    return JsonResponse({"ok": True, "status": annotator.status, "extended": extended})


@study_page
@require_http_methods(["GET", "HEAD"])
@annotator_at(flow.DONE)
def done(request: HttpRequest, study: Study, annotator: Annotator) -> HttpResponse:
    """The completion page, only reachable once every item is answered: each platform's own way out
    (``services.participation.completion``: the MTurk submit, the Prolific redirect, or the code)."""
    return render(
        request,
        "studyapp/annotator/done.html",
        {
            "study": study,
            "annotator": annotator,
            "completion": completion_for(annotator),
            "redirect_seconds": settings.STUDYAPP_REDIRECT_SECONDS,
        },
    )
