"""The item pages: the current item, one item with its two result pages and the scale, storing an
answer, and the heartbeat that keeps an item's lease while it is on screen."""

from __future__ import annotations

import functools
import secrets

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import translation
from django.utils.translation import gettext
from django.views.decorators.http import require_http_methods, require_POST

from studyapp.exceptions import AnswerConflict
from studyapp.forms import AnswerForm, HeartbeatForm
from studyapp.models import Annotator, Study
from studyapp.services.participation import allocation, flow, sessions
from studyapp.services.participation.answers import record_answer
from studyapp.services.participation.item_page import item_page
from studyapp.services.participation.scale import SCALE
from studyapp.services.participation.sequence import Sequence
from studyapp.views.participant import annotator_at, go_to, item_url, message_page, render_page, step_url, study_page
from studyapp.views.site import wants_json


@study_page
@require_http_methods(["GET", "HEAD"])
@annotator_at(flow.ITEMS)
def next_item(request: HttpRequest, study: Study, annotator: Annotator) -> HttpResponse:
    """The annotator's current item (``/item/``): redirects to its own address, or to the completion page."""
    current = allocation.current_assignment(annotator, sequence=Sequence.of(annotator))
    if current is None:
        return go_to(study, flow.next_step(annotator))
    return redirect(item_url(study, current.pk))


@study_page
@require_http_methods(["GET", "HEAD"])
@annotator_at(flow.ITEMS)
def item(request: HttpRequest, study: Study, annotator: Annotator, pk: int) -> HttpResponse:
    """One item: the query, the need(s), two result pages side by side and the 9-point scale."""
    sequence = Sequence.of(annotator)
    if sequence.get(pk) is None:
        return message_page(request, study, "not_found", status=404)
    current = allocation.current_assignment(annotator, sequence=sequence)  # first serve time, lease renewal, stable order
    if current is None:
        return go_to(study, flow.next_step(annotator))
    if current.pk != pk:  # answered already (back button) or not its turn yet
        return redirect(item_url(study, current.pk))
    answered, quota = sequence.progress()
    page = item_page(current, study, answered + 1, quota)
    return render_page(
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
    return message_page(request, study, "not_stored", status=status, problem=message)


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
        return _refuse(request, study, 400, "invalid", gettext("Please choose a point on the scale."), item_url(study, pk))
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
    next_url = item_url(study, following.pk) if following is not None else step_url(study, step)
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
