"""Leases after admission: serving items one at a time, renewing what the annotator works on, and
renewing or replacing expired items of a returning annotator."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from typing import Any

from django.db.models import QuerySet

from studyapp.compiled_queries import compiled_update
from studyapp.exceptions import AnnotatorExcluded, StudyError
from studyapp.models import Annotator, Assignment, Presentation
from studyapp.services.clock import now_or
from studyapp.services.participation.allocation.admission import create_leases, history_of, serialised
from studyapp.services.participation.allocation.choice import Contended, Locker, pick_regular
from studyapp.services.participation.allocation.pool import design_of, live_counts
from studyapp.services.participation.sequence import Sequence

# How precisely an annotator's last activity is recorded (``mark_seen``): staff read it, nothing decides on it.
SEEN_RESOLUTION = timedelta(seconds=30)
# A renewal that would move a lease by less than this writes nothing: an annotator answering every
# few seconds would otherwise rewrite all their leases (and the lease index) on every answer.
LEASE_RESOLUTION = timedelta(seconds=60)


def _renew_or_replace(me: Annotator, expired: list[Assignment], now: datetime, rng: random.Random, lock: Locker) -> None:
    """Expired items of a returning annotator: keep those that still have room, replace the others."""
    study = me.study
    regular = [a for a in expired if a.presentation.kind == Presentation.Kind.PAIR]
    ids = [a.presentation_id for a in regular]
    locked = lock(ids)
    if set(ids) - locked:
        raise Contended()
    counts = live_counts(study, now, ids)  # these leases are expired, so they do not count themselves
    released = [a for a in regular if counts.get(a.presentation_id, 0) >= study.annotators_per_presentation]
    if not released:
        return
    Assignment.objects.filter(pk__in=[a.pk for a in released]).update(released_at=now)
    design = design_of(study)
    history, held = history_of(me, design.by_id)
    picked, contended = pick_regular(study, design, len(released), history, now, rng, lock)
    if len(picked) < len(released) and contended:
        raise Contended()
    rng.shuffle(picked)
    create_leases(me, study, picked, held, now, rng)  # fewer than released when the study has no room left: they were away too long


def current_assignment(
    annotator: Annotator, *, now: datetime | None = None, rng: random.Random | None = None, sequence: Sequence | None = None
) -> Assignment | None:
    """The item to show now (stable on reload), or None when the annotator has finished.

    Also records the activity: the lease of that item moves to ``now + lease`` (the other live
    leases move with progress, :func:`touch`). A returning annotator with expired leases goes the
    full way: expired items that still have room are kept, the others replaced, and all open leases
    renewed.
    ``sequence``, the annotator's :class:`Sequence` read in this request, saves reading it again.
    """
    now = now_or(now)
    rng = rng or random.Random()
    study = annotator.study
    if annotator.status == Annotator.Status.ACTIVE:
        sequence = sequence or Sequence.of(annotator)
        open_items = sequence.open()
        if open_items and not sequence.expired(now):
            return _serve_live(annotator, open_items[0], now)

    def attempt(lock: Locker) -> tuple[Annotator, Any]:
        me = Annotator.objects.select_related("study").select_for_update(of=("self",)).get(pk=annotator.pk)
        if me.status == Annotator.Status.EXCLUDED:
            raise AnnotatorExcluded(f"annotator {me.pseudonym} was excluded")
        if me.status in (Annotator.Status.NEW, Annotator.Status.REFUSED):
            raise StudyError(f"annotator {me.pseudonym} has no items; admit them first")
        open_items = me.assignments.open()
        expired = list(open_items.expired(now).select_related("presentation"))
        if expired:
            _renew_or_replace(me, expired, now, rng, lock)
        open_items.update(lease_expires_at=now + timedelta(minutes=me.study.lease_minutes))
        first = open_items.order_by("position").select_related("presentation").first()
        me.last_seen_at = now
        if first is None:
            if me.status != Annotator.Status.FINISHED:
                me.status, me.finished_at = Annotator.Status.FINISHED, now
            me.save(update_fields=["status", "finished_at", "last_seen_at"])
            return me, None
        if first.served_at is None:
            first.served_at = now
            first.save(update_fields=["served_at"])
        me.save(update_fields=["last_seen_at"])
        return me, first

    me, first = serialised(study, attempt)
    annotator.status, annotator.finished_at, annotator.last_seen_at = me.status, me.finished_at, me.last_seen_at
    return first


def _serve_live(annotator: Annotator, first: Assignment, now: datetime) -> Assignment:
    """The common case of :func:`current_assignment`, no expired lease: one or two writes and no lock.

    Showing an item keeps that item only, as its page's heartbeat does (:func:`keep_on_screen`):
    ``first`` runs for another ``lease_minutes`` and gets its serve time if it has none; the other
    leases move with the annotator's progress (:func:`touch`), so reloading an item page cannot
    hold a whole quota. A lease that expired meanwhile is left to the full path of the next
    request, which checks for room first.
    """
    lease = now + timedelta(minutes=annotator.study.lease_minutes)
    # a reload right after the last renewal writes nothing
    if first.served_at is None or first.lease_expires_at <= lease - LEASE_RESOLUTION:
        serve = first.served_at is None
        values = [first.pk, now, lease, now] if serve else [first.pk, now, lease]
        if compiled_update(("serve_live", serve), _serve_live_update, _SERVE_LIVE[: len(values)]).run(values):
            first.served_at, first.lease_expires_at = now if serve else first.served_at, lease
    mark_seen(annotator, now)
    return first


# _serve_live's update: (assignment id, now, lease end[, serve time]), each with the field that prepares it (compiled_queries)
_SERVE_LIVE = [
    (Assignment._meta.pk, -1),
    (Assignment._meta.get_field("lease_expires_at"), datetime(2001, 1, 1, tzinfo=UTC)),
    (Assignment._meta.get_field("lease_expires_at"), datetime(2002, 1, 1, tzinfo=UTC)),
    (Assignment._meta.get_field("served_at"), datetime(2003, 1, 1, tzinfo=UTC)),
]


def _serve_live_update(pk: int, now: datetime, lease: datetime, served: datetime | None = None) -> tuple[QuerySet, dict[str, Any]]:
    """The shown item's lease runs to ``lease`` (and its serve time is set, if ``served``), if it is still live at ``now``."""
    changes: dict[str, Any] = {"lease_expires_at": lease} if served is None else {"lease_expires_at": lease, "served_at": served}
    return Assignment.objects.filter(pk=pk, released_at__isnull=True, lease_expires_at__gt=now), changes


def _seen_update(pk: int, now: datetime) -> tuple[QuerySet, dict[str, Any]]:
    return Annotator.objects.filter(pk=pk), {"last_seen_at": now}


_SEEN = [(Annotator._meta.pk, -1), (Annotator._meta.get_field("last_seen_at"), datetime(2001, 1, 1, tzinfo=UTC))]


def mark_seen(annotator: Annotator, now: datetime) -> None:
    """Record that ``annotator`` was there at ``now`` (``last_seen_at``, shown to staff), to :data:`SEEN_RESOLUTION`.

    A request within that time of the recorded one writes nothing: an item page right after its
    answer, or the answer a few seconds after its page, costs no second write of the same fact.
    """
    if annotator.last_seen_at is not None and timedelta(0) <= now - annotator.last_seen_at < SEEN_RESOLUTION:
        return
    compiled_update("seen", _seen_update, _SEEN).run([annotator.pk, now])
    annotator.last_seen_at = now


def keep_on_screen(annotator: Annotator, pk: int, now: datetime) -> bool:
    """A heartbeat's renewal: only the item on screen runs for another ``lease_minutes`` from ``now``.

    That is the annotator's served, unanswered assignment ``pk`` whose lease is still live (an expired
    lease may have been taken by someone else meanwhile). Returns whether it was that item.
    """
    lease = now + timedelta(minutes=annotator.study.lease_minutes)
    return bool(annotator.assignments.live(now).filter(pk=pk, served_at__isnull=False).update(lease_expires_at=lease))


def touch(annotator: Annotator, now: datetime, *, leases: list[datetime] | None = None) -> None:
    """Record progress: the annotator's live leases run for another ``lease_minutes`` from ``now``.

    Plain writes without joins (the activity only when :func:`mark_seen` records it): answered rows
    may have their lease moved too, which changes nothing (an answered item takes its slot whatever
    its lease says). Leases renewed less than :data:`LEASE_RESOLUTION` ago are left as they are;
    ``leases``, the annotator's lease ends as the caller read them in this request
    (``Sequence.lease_ends``), spares the statement when no live one is due.
    """
    lease = now + timedelta(minutes=annotator.study.lease_minutes)
    due = lease - LEASE_RESOLUTION
    if leases is None or any(now < end <= due for end in leases):
        due_rows = Assignment.objects.filter(
            annotator_id=annotator.pk, released_at__isnull=True, lease_expires_at__gt=now, lease_expires_at__lte=due
        )
        due_rows.update(lease_expires_at=lease)
    mark_seen(annotator, now)
