"""Room for newcomers: whether admission would find a full quota now (one aggregate query), and how
many more newcomers would get one (the admission rule simulated, for the status report)."""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass
from datetime import datetime

from django.db import connection
from django.db.models import Count

from studyapp.models import Assignment, Presentation, Study
from studyapp.services.clock import now_or
from studyapp.services.participation.allocation.choice import greedy, tiebreaks
from studyapp.services.participation.allocation.pool import History, design_of, live_counts, offer_of


@dataclass(frozen=True)
class Capacity:
    """Room left in a study at ``now`` as admission sees it (answers + live leases count as taken).

    ``newcomers`` is how many more annotators :func:`admit` would give a full quota if they arrived
    one after another now, simulated with the admission code itself: exact for the next newcomer
    (:func:`can_admit`), an estimate beyond (admission breaks ties at random). The ``unfillable``
    slots are the open ones left after them: no full quota can hold them, because the most
    admission then finds for one more newcomer is ``next_quota`` < ``regular_quota`` items.
    """

    open_slots: int
    regular_quota: int
    newcomers: int
    unfillable: dict[str, int]  # level -> open answer slots that no full quota can hold
    unfillable_presentations: int
    next_quota: int  # regular items admission would find for the newcomer after ``newcomers``

    @property
    def unfillable_slots(self) -> int:
        return sum(self.unfillable.values())


class Room:
    """The open answer slots of a study's regular presentations, on which admissions are simulated (nothing is written)."""

    def __init__(self, study: Study, now: datetime) -> None:
        self.study = study
        self.design = design_of(study)
        self.items = self.design.regular
        self.counts = live_counts(study, now)
        self.quota = study.regular_items_per_annotator
        self.rng = random.Random(0)  # a fixed seed: the same state always gives the same report
        self.first = offer_of(study, self.design)

    def open_slots(self) -> dict[int, int]:
        k = self.study.annotators_per_presentation
        return {i.id: k - self.counts.get(i.id, 0) for i in self.items if self.counts.get(i.id, 0) < k}

    def admit_one(self) -> int:
        """Give one newcomer what :func:`admit` would; returns how many regular items it found (all taken if a full quota)."""
        tiebreak = tiebreaks(self.items, self.rng)
        picked = greedy(
            self.design,
            self.quota,
            counts=self.counts,
            k=self.study.annotators_per_presentation,
            history=History(),
            unavailable=set(),
            tiebreak=tiebreak,
            same_pair_both_levels=self.study.same_pair_both_levels,
            first=self.first,
        )
        if len(picked) == self.quota:
            for item in picked:
                self.counts[item.id] = self.counts.get(item.id, 0) + 1
        return len(picked)


def newcomer_room(study: Study, *, now: datetime | None = None) -> tuple[int, int]:
    """(regular, check): how many items :func:`admit` could give a newcomer now, in one aggregate query.

    A newcomer has seen nothing, so the most regular items they can take are the open presentations
    (fewer than k valid answers + live leases), of which one level per (topic, run pair) unless the
    study allows both: per group the level with more open presentations. That is exactly what
    admission's fill-first pass reaches (:func:`fill_first`), so ``regular >= quota`` if and only
    if :func:`admit` finds a full quota. Check items have no answer limit: all of them are available.
    The query's count does not depend on the study's size (the database does the counting).
    """
    now = now_or(now)
    # taken slots counted per presentation in one pass over the study's assignments (a grouped join,
    # not a subquery per presentation), with the lease states' one definition (AssignmentQuerySet); the
    # study's assignments are found through their annotators, whose join the exclusion needs anyway (an
    # assignment's annotator and presentation are of one study): no join of the presentations there
    taken, taken_params = (
        Assignment.objects.filter(annotator__study=study)
        .valid()
        .taking_slot(now)
        .order_by()
        .values("presentation_id")
        .annotate(n=Count("pk"))
        .query.sql_with_params()
    )
    pairs, pair_params = (
        Presentation.objects.filter(study=study, kind=Presentation.Kind.PAIR)
        .order_by()
        .values("id", "topic_id", "run_a_id", "run_b_id", "level")
        .query.sql_with_params()
    )
    inner = (
        f"SELECT p.topic_id, p.run_a_id, p.run_b_id, p.level, COUNT(*) AS n FROM ({pairs}) p LEFT JOIN ({taken}) t"
        " ON t.presentation_id = p.id WHERE COALESCE(t.n, 0) < %s GROUP BY p.topic_id, p.run_a_id, p.run_b_id, p.level"
    )
    params = (*pair_params, *taken_params, study.annotators_per_presentation)
    checks, check_params = (
        Presentation.objects.filter(study=study).exclude(kind=Presentation.Kind.PAIR).order_by().values("pk").query.sql_with_params()
    )
    per_group = "SUM(n)" if study.same_pair_both_levels else "MAX(n)"
    sql = (
        f"SELECT (SELECT COALESCE(SUM(best), 0) FROM (SELECT {per_group} AS best FROM ({inner}) per_level"
        f" GROUP BY topic_id, run_a_id, run_b_id) per_group), (SELECT COUNT(*) FROM ({checks}) check_items)"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, (*params, *check_params))
        regular, check = cursor.fetchone()
    return int(regular), int(check)


def can_admit(study: Study, *, now: datetime | None = None) -> bool:
    """Would :func:`admit` find a full quota for a newcomer now? The pre-check before consent (no locks, one query)."""
    return room_fits(study, *newcomer_room(study, now=now))


def room_fits(study: Study, regular: int, check: int) -> bool:
    """Does a newcomer's full quota fit in what :func:`newcomer_room` found (``regular`` and ``check`` items)?"""
    quota = study.regular_items_per_annotator
    return quota > 0 and regular >= quota and check >= study.check_items_per_annotator


def capacity(study: Study, *, now: datetime | None = None) -> Capacity:
    """How many more newcomers get a full quota, and which open slots none can get (see :class:`Capacity`)."""
    room = Room(study, now_or(now))
    open_slots = sum(room.open_slots().values())
    newcomers, found = 0, 0
    while room.quota > 0 and (found := room.admit_one()) == room.quota:
        newcomers += 1
    left = room.open_slots()
    levels = {i.id: i.level for i in room.items}
    unfillable = Counter()
    for pid, slots in left.items():
        unfillable[levels[pid]] += slots
    return Capacity(open_slots, room.quota, newcomers, dict(unfillable), len(left), found)
