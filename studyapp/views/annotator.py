"""The annotator pages before and after the items: entry -> consent -> instructions -> practice ->
comprehension check, and the completion page (the items: views.items).

Each view parses the request with a form, calls ``services.participation.flow`` and renders or redirects. Where an
annotator stands comes from ``flow.next_step``; asking for any other page redirects there, so
reloads, back/forward and returning through the platform link all land on the right page
(views.participant).
"""

from __future__ import annotations

import logging
import math

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext
from django.views.decorators.http import require_http_methods

from studyapp.exceptions import ConsentOutdated, IdentityInUse, PlatformIdRequired, StudyClosed, StudyFull
from studyapp.forms import ArrivalForm, ComprehensionForm, ConsentForm, PracticeForm
from studyapp.models import Annotator, Study
from studyapp.services.access import throttle
from studyapp.services.data import erasure
from studyapp.services.participation import flow, sessions
from studyapp.services.participation.completion import completion_for
from studyapp.services.participation.item_page import practice_pages
from studyapp.services.participation.onboarding import (
    COMPREHENSION,
    COMPREHENSION_ATTEMPTS,
    PRACTICE_NEEDS,
    PRACTICE_QUERY,
    failed_attempt_notice,
)
from studyapp.services.participation.scale import SCALE, point
from studyapp.services.quality.stated import stated_rules
from studyapp.views.participant import annotator_at, go_to, message_page, render_page, study_page, to_step

security = logging.getLogger("studyapp.security")


# -- entry, consent, onboarding ---------------------------------------------------------------------


@study_page
@require_http_methods(["GET", "HEAD"])
def study_entry(request: HttpRequest, study: Study) -> HttpResponse:
    """``/s/<slug>/?PROLIFIC_PID=...`` (or MTurk ids, or none): resume, preview, or start with consent."""
    form = ArrivalForm(request.GET)
    if not form.is_valid():
        return message_page(request, study, "bad_link", status=400, problem=form.problem())
    arrival = form.arrival()
    if arrival.preview:
        return render(request, "studyapp/annotator/preview.html", {"study": study, "rules": stated_rules(study)})
    session_annotator = sessions.session_annotator(request, study)
    annotator, withdrew = erasure.find_or_withdrawn(study, arrival) if arrival.external_id else (session_annotator, False)
    if annotator is not None and annotator != session_annotator and not flow.may_resume(annotator, arrival):
        return _taken(request, study, annotator)  # a known id in a browser that is not theirs, without their session id
    if arrival.external_id and annotator is None and session_annotator is not None:
        sessions.unbind(request, study)  # another participant in the same browser: they start afresh
    if annotator is not None:
        sessions.bind(request, study, annotator)
        flow.returned(annotator, arrival)
        step = flow.next_step(annotator)
        return to_step(request, study, step)
    if withdrew:  # their data is gone; they are not new
        return message_page(request, study, "withdrawn_before", status=403)
    try:
        flow.check_platform_id(study, arrival)
    except PlatformIdRequired:
        return message_page(request, study, "id_required", status=403)
    if not arrival.same_participant(sessions.pending(request, study)):  # reloading the link is no new arrival
        wait = throttle.arrival_wait_seconds(study.pk, throttle.client_address(request.META))
        if wait:
            response = message_page(request, study, "busy", status=429, wait_minutes=max(1, math.ceil(wait / 60)))
            response["Retry-After"] = str(wait)
            return response
    try:
        flow.check_room(study)
    except StudyFull:
        return message_page(request, study, "full")
    except StudyClosed:
        return message_page(request, study, study.status)
    sessions.set_pending(request, study, arrival)
    return go_to(study, flow.CONSENT)


def _taken(request: HttpRequest, study: Study, annotator: Annotator | None) -> HttpResponse:
    """Refuse a known platform id to a session that is not the participant's (409): nothing shown, nothing changed."""
    who = annotator.pseudonym if annotator is not None else "an annotator"
    address = throttle.client_address(request.META)
    security.warning("study %s: the platform id of %s was refused to another session from %s", study.slug, who, address)
    return message_page(request, study, "taken", status=409)


def _consent_page(request: HttpRequest, study: Study, annotator: Annotator | None, form: ConsentForm, *, notice: str = "", status=200):
    if notice:
        form = ConsentForm(initial={"version": study.consent_version})
    return render_page(request, "studyapp/annotator/consent.html", study, annotator, form=form, notice=notice, status=status)


@study_page
@require_http_methods(["GET", "HEAD", "POST"])
def consent(request: HttpRequest, study: Study) -> HttpResponse:
    """The versioned consent text; accepting it stores the version and time and leases the quota."""
    annotator = sessions.session_annotator(request, study)
    if annotator is not None:
        step = flow.next_step(annotator)
        if step != flow.CONSENT:
            return to_step(request, study, step)
    elif sessions.pending(request, study) is None:
        return redirect("study_entry", slug=study.slug)  # came straight here: start as an anonymous arrival
    # No second room check: the entry page checked it once, and admission at the POST is the real
    # one (a newcomer it refuses, the study having filled meanwhile, is shown the "full" page).
    if request.method != "POST":
        changed = annotator is not None and annotator.consented_at is not None
        notice = gettext("The consent information has changed since you agreed. Please read it again.") if changed else ""
        return _consent_page(request, study, annotator, ConsentForm(initial={"version": study.consent_version}), notice=notice)
    if "decline" in request.POST:
        return message_page(request, study, "declined")
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
        return message_page(request, study, study.status)
    except PlatformIdRequired:
        return message_page(request, study, "id_required", status=403)
    except IdentityInUse:
        return _taken(request, study, flow.find(study, arrival))
    sessions.bind(request, study, annotator)
    if annotator.status == Annotator.Status.NEW:  # consented, but the study stopped taking people just now
        return message_page(request, study, "paused" if study.status == Study.Status.PAUSED else "closed")
    step = flow.next_step(annotator)
    return to_step(request, study, step)


@study_page
@require_http_methods(["GET", "HEAD", "POST"])
@annotator_at(flow.INSTRUCTIONS)
def instructions(request: HttpRequest, study: Study, annotator: Annotator) -> HttpResponse:
    """The study's instructions with an annotated example."""
    if request.method == "POST":
        flow.read_instructions(annotator)
        return go_to(study, flow.next_step(annotator))
    flow.seen(annotator)
    return render_page(request, "studyapp/annotator/instructions.html", study, annotator, scale=SCALE, rules=stated_rules(study))


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
    left, right = practice_pages(flow.practice_for(annotator))
    return render_page(
        request,
        "studyapp/annotator/practice.html",
        study,
        annotator,
        form=form,
        feedback=feedback,
        chosen=getattr(point(annotator.practice_value), "name", ""),
        query=PRACTICE_QUERY,
        needs=PRACTICE_NEEDS,
        left=left,
        right=right,
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
                return to_step(request, study, step)
            wrong = result.wrong
            notice = failed_attempt_notice(wrong, result.attempts_left)
            form = ComprehensionForm(initial={k: v for k, v in form.cleaned_data.items() if k not in wrong})  # the right ones stay
        else:
            status = 400
    else:
        form = ComprehensionForm()
        flow.seen(annotator)
    attempt = annotator.comprehension_attempts + 1
    return render_page(
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
        fresh=not form.is_bound and not form.initial and not wrong,
        status=status,
    )


# -- items ------------------------------------------------------------------------------------------


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
