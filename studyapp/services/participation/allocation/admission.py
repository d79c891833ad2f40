"""Admission: registering an arrival and leasing a newcomer's whole quota in one short transaction,
optimistic with skip-locked rows, else serialised per study."""

from __future__ import annotations

import logging
import random
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any, NamedTuple, TypedDict, Unpack

from django.db import IntegrityError, connection, transaction
from django.db.models import Q

from studyapp.exceptions import AnnotatorExcluded, StudyClosed, StudyFull
from studyapp.models import Annotator, Assignment, Presentation, Study
from studyapp.services import platforms
from studyapp.services.clock import now_or
from studyapp.services.participation.allocation.choice import Contended, Locker, balanced_sides, in_sequence, pick_checks, pick_regular
from studyapp.services.participation.allocation.pool import History, Item, design_of

logger = logging.getLogger("studyapp.services.participation.allocation")


class Sides(NamedTuple):
    """How many of an annotator's assignments show run_a on the left and on the right, and their last position."""

    left: int
    right: int
    last_position: int


def history_of(annotator: Annotator, items: dict[int, Item]) -> tuple[History, Sides]:
    """What ``annotator`` holds, read once: the history for the choice and the sides and positions for :func:`create_leases`."""
    history, left, right, last = History(), 0, 0, 0
    for pid, a_on_left, position in annotator.assignments.values_list("presentation_id", "a_on_left", "position"):
        history.add(items[pid])
        left, right, last = left + a_on_left, right + (not a_on_left), max(last, position)
    return history, Sides(left, right, last)


def locker(blocking: bool) -> Locker:
    """Lock presentation rows; returns the ids actually locked (all of them when blocking)."""

    def lock(ids: list[int]) -> set[int]:
        if not connection.features.has_select_for_update:
            return set(ids)  # SQLite: the IMMEDIATE transaction already serialises writers
        qs = Presentation.objects.filter(id__in=sorted(ids)).order_by("id")
        qs = qs.select_for_update() if blocking else qs.select_for_update(skip_locked=True)
        return set(qs.values_list("id", flat=True))

    return lock


def create_leases(
    annotator: Annotator, study: Study, items: list[Item], held: Sides, now: datetime, rng: random.Random
) -> list[Assignment]:
    """Lease ``items`` to ``annotator`` after the assignments they ``held`` (read by :func:`history_of`), sides balanced."""
    lease = now + timedelta(minutes=study.lease_minutes)
    start = held.last_position + 1
    rows = [
        Assignment(
            annotator=annotator, presentation_id=item.id, position=start + n, a_on_left=side, assigned_at=now, lease_expires_at=lease
        )
        for n, (item, side) in enumerate(zip(items, balanced_sides(len(items), held.left, held.right, rng)))
    ]
    return Assignment.objects.bulk_create(rows)


def serialised(study: Study, attempt: Callable[[Locker], Any]) -> Any:
    """Run ``attempt(lock)`` optimistically with skip-locked row locks, else once serialised per study."""
    if connection.features.has_select_for_update_skip_locked:
        try:
            with transaction.atomic():
                return attempt(locker(blocking=False))
        except Contended:
            # The transaction rolled back, so every lock it held is gone before we wait below.
            logger.info("study %s: rows were locked by other arrivals; retrying serialised", study.pk)
    with transaction.atomic():
        # Serialised path: one admission at a time per study; it waits for rows instead of skipping them.
        Study.objects.select_for_update().filter(pk=study.pk).first()
        return attempt(locker(blocking=True))


class Identity(TypedDict, total=False):
    """Who arrives: :func:`registered`'s keyword arguments but ``savepoint``."""

    external_id: str
    external_ids: dict | None
    platform: str
    arrival_key: str
    now: datetime | None


def register(study: Study, **identity: Unpack[Identity]) -> Annotator:
    """The annotator for (``platform``, ``external_id``) or for the browser arrival ``arrival_key`` in
    ``study``, created on first arrival; a new one when neither is given.

    Both are unique per study (database constraints), so the same participant or the same arrival
    registering twice at the same moment (two consent posts of one browser) makes one annotator.
    """
    return registered(study, **identity)[0]


def registered(
    study: Study,
    *,
    external_id: str = "",
    external_ids: dict | None = None,
    platform: str = "",
    arrival_key: str = "",
    now: datetime | None = None,
    savepoint: bool = True,
    consent: tuple[str, datetime] | None = None,
) -> tuple[Annotator, bool]:
    """:func:`register`, and whether the annotator was created now (with ``consent``, the consent version and
    time, in the same insert; a participant found instead keeps theirs). Without ``savepoint`` (inside a
    transaction of the caller's) the row is inserted without a savepoint of its own: a participant or
    arrival registered at the same moment raises ``IntegrityError`` and fails the caller's transaction,
    which the caller runs again (:func:`~studyapp.services.participation.flow.give_consent`)."""
    if platform not in platforms.REGISTRY:
        raise ValueError(f"unknown platform {platform!r} (registered: {', '.join(map(repr, platforms.REGISTRY))})")
    now = now_or(now)
    external_id = (external_id or "").strip()[:100]
    arrival_key = (arrival_key or "")[:32]
    same = Q(platform=platform, external_id=external_id) if external_id else Q(pk__in=[])
    if arrival_key:
        same |= Q(arrival_key=arrival_key)
    if external_id or arrival_key:
        existing = Annotator.objects.filter(same, study=study).first()
        if existing is not None:
            return existing, False
    fields = {"platform": platform, "external_id": external_id, "external_ids": external_ids or {}, "arrival_key": arrival_key}
    if consent is not None:
        fields["consent_version"], fields["consented_at"] = consent
    if not savepoint:
        return Annotator.objects.create(study=study, created_at=now, **fields), True
    try:
        with transaction.atomic():
            return Annotator.objects.create(study=study, created_at=now, **fields), True
    except IntegrityError:  # the same participant or arrival registered at the same moment
        return Annotator.objects.filter(same, study=study).order_by("pk").first(), False


def admit(annotator: Annotator, *, now: datetime | None = None, rng: random.Random | None = None) -> list[Assignment]:
    """Lease a full quota for a newcomer, or refuse (:class:`StudyFull`) without leasing anything.

    Idempotent: an annotator who already has items gets their assignments back.
    """
    now = now_or(now)
    rng = rng or random.Random()
    study = annotator.study
    if study.status != Study.Status.OPEN:
        raise StudyClosed(f"study {study.name!r} is {study.status}", study.screenout_code)

    def attempt(lock: Locker) -> tuple[Annotator, Any]:
        me = Annotator.objects.select_for_update().get(pk=annotator.pk)
        if me.status == Annotator.Status.EXCLUDED:
            raise AnnotatorExcluded(f"annotator {me.pseudonym} was excluded")
        if me.status in (Annotator.Status.ACTIVE, Annotator.Status.FINISHED):
            return me, list(me.assignments.order_by("position"))
        design = design_of(study)
        history, held = history_of(me, design.by_id)
        picked, contended = pick_regular(study, design, study.regular_items_per_annotator, history, now, rng, lock)
        checks = pick_checks(study, design.checks, study.check_items_per_annotator, history, rng)
        if len(picked) < study.regular_items_per_annotator or len(checks) < study.check_items_per_annotator:
            if contended:
                raise Contended()
            me.status = Annotator.Status.REFUSED
            me.last_seen_at = now
            me.save(update_fields=["status", "last_seen_at"])
            return me, None
        created = create_leases(me, study, in_sequence(picked, checks, rng), held, now, rng)
        me.status = Annotator.Status.ACTIVE
        me.last_seen_at = now
        me.save(update_fields=["status", "last_seen_at"])
        return me, created

    me, created = serialised(study, attempt)
    annotator.status, annotator.last_seen_at = me.status, me.last_seen_at
    if created is None:
        raise StudyFull(
            f"study {study.name!r} cannot give a newcomer a full set of {study.items_per_annotator} items right now",
            study.screenout_code,
        )
    return created
