"""The assignment engine: who judges which presentation, on which side, for how long.

How it works
------------
* **Admission reserves a full quota.** When an annotator starts (:func:`admit`), one short
  transaction leases their whole sequence of ``items_per_annotator`` presentations: the regular
  ones that most need answers (fewest valid answers + live leases), never beyond k per
  presentation, honouring the level exclusion, spread over run pairs, levels and topics, plus
  the check items. When that spread comes up short, a fill-first pass (per topic and run pair the
  level with more items) finds a full quota whenever one exists. If none exists, nothing is leased
  and the annotator is refused with the screen-out code: nobody starves halfway.
* **Room for a newcomer is one aggregate query.** :func:`can_admit`, the check before consent,
  asks the database how many items a newcomer could get (:func:`newcomer_room`): per (topic, run
  pair) the level with more open presentations, which is exactly what admission reaches. Its cost
  in queries does not depend on the study's size.
* **Capacity is the admission rule, simulated** (for the status report): :func:`capacity` admits
  imaginary newcomers one after another with the same code (nothing written): how many more get a
  full quota, and which open slots no full quota can hold (the tail ``study_status`` reports as unfillable).
* **Items are served one at a time** (:func:`current_assignment`) in sequence order; a reload
  returns the same assignment with the same sides. Sides are balanced per annotator (half of
  the items show run_a on the left) and stored on the assignment. While no lease of the annotator
  has expired (the common case) serving takes no lock: one write renews the lease of the item
  shown (stamping its first serve time), a second records the activity unless it was recorded in
  the last :data:`SEEN_RESOLUTION`.
* **Leases follow progress.** The annotator's steps (consent, onboarding, answers, the platform
  link: :func:`touch`) move all their live leases to ``now + lease_minutes`` (to
  :data:`LEASE_RESOLUTION`: a lease renewed less than that ago is left alone); showing an item
  (its page, a reload, :func:`current_assignment`) and the heartbeat of its page renew only the
  item on screen (:func:`keep_on_screen`), so reloads or heartbeats alone cannot hold a whole
  quota. After that much inactivity their unanswered items count for nobody, so new annotators
  can be admitted onto them. If the annotator comes back, an expired item is renewed when it still has room,
  otherwise it is released and replaced. An answer that arrives on an expired or released
  assignment is still stored and counted (``Preference.late``); the resulting over-coverage shows
  in ``study_status``.
* **Concurrency.** PostgreSQL: candidate presentations are locked with
  ``select_for_update(skip_locked=True)`` and recounted after locking, so simultaneous
  admissions take different rows without waiting. If skipped rows made an admission come up
  short, it is retried once serialised on the study row with blocking locks, so nobody is
  refused because of a transient lock. SQLite: the settings open every transaction with
  ``BEGIN IMMEDIATE``, which serialises these short transactions. In both, the unique
  constraints on (annotator, presentation) and (annotator, position) are the last guard.

Time is injected (``now``) and so is randomness (``rng``), so tests need neither sleeping nor luck.
"""

from __future__ import annotations

import logging
import random
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, NamedTuple

from django.db import IntegrityError, connection, transaction
from django.db.models import Count, Q

from studyapp.exceptions import AnnotatorExcluded, StudyClosed, StudyError, StudyFull
from studyapp.models import Annotator, Assignment, Presentation, Study
from studyapp.services import platforms
from studyapp.services.clock import now_or
from studyapp.services.participation.sequence import Sequence

logger = logging.getLogger(__name__)
Locker = Callable[[list[int]], set[int]]  # locks presentation rows, returns the ids it got

# How many same-need candidates are compared for the spread; bounds the work per item on big studies.
SPREAD_SAMPLE = 200
# How precisely an annotator's last activity is recorded (``mark_seen``): staff read it, nothing decides on it.
SEEN_RESOLUTION = timedelta(seconds=30)
# A renewal that would move a lease by less than this writes nothing: an annotator answering every
# few seconds would otherwise rewrite all their leases (and the lease index) on every answer.
LEASE_RESOLUTION = timedelta(seconds=60)


class _Contended(Exception):
    """Rows were skipped because other transactions held them; retry serialised."""


@dataclass(frozen=True)
class _Item:
    id: int
    kind: str
    level: str
    topic: int
    run_a: int
    run_b: int
    subtopic: int | None  # the subtopic of a subtopic-level presentation
    group: tuple[int, int, int] = field(init=False, compare=False)  # (topic, run_a, run_b): one level of it per annotator
    pair: tuple[int, int] = field(init=False, compare=False)

    def __post_init__(self) -> None:
        # built once per process: admission compares them tens of thousands of times per arrival
        object.__setattr__(self, "group", (self.topic, self.run_a, self.run_b))
        object.__setattr__(self, "pair", (self.run_a, self.run_b))


@dataclass
class _History:
    """What an annotator already has: the basis of 'never twice', the exclusion and the spread."""

    seen: set[int] = field(default_factory=set)
    group_levels: dict[tuple[int, int, int], set[str]] = field(default_factory=dict)
    levels: Counter = field(default_factory=Counter)
    pairs: Counter = field(default_factory=Counter)
    topics: Counter = field(default_factory=Counter)

    def add(self, item: _Item) -> None:
        self.seen.add(item.id)
        if item.kind == Presentation.Kind.PAIR:
            self.group_levels.setdefault(item.group, set()).add(item.level)
            self.levels[item.level] += 1
            self.pairs[item.pair] += 1
            self.topics[item.topic] += 1

    def copy(self) -> _History:
        return _History(set(self.seen), {g: set(v) for g, v in self.group_levels.items()}, Counter(self.levels),
                        Counter(self.pairs), Counter(self.topics))  # fmt: skip

    def excludes(self, item: _Item, same_pair_both_levels: bool) -> bool:
        if item.id in self.seen:
            return True
        if same_pair_both_levels:
            return False
        levels = self.group_levels.get(item.group)  # the annotator may hold only this item's level of its group
        return bool(levels) and (len(levels) > 1 or item.level not in levels)


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


@dataclass(frozen=True)
class _Design:
    """A study's presentations as admission works with them (see :func:`_design`)."""

    by_id: dict[int, _Item]  # every presentation, in id order
    regular: list[_Item]  # the run-pair presentations, in id order
    checks: list[_Item]
    share: dict[str, float]  # each level's share of the regular presentations: the level balance aims at it
    groups: dict[tuple[int, int, int], list[_Item]]  # the regular presentations of each (topic, run_a, run_b)

    @classmethod
    def of(cls, items: list[_Item]) -> _Design:
        regular = [i for i in items if i.kind == Presentation.Kind.PAIR]
        by_level = Counter(i.level for i in regular)
        share = {level: n / len(regular) for level, n in by_level.items()}
        groups: dict[tuple[int, int, int], list[_Item]] = {}
        for item in regular:
            groups.setdefault(item.group, []).append(item)
        checks = [i for i in items if i.kind != Presentation.Kind.PAIR]
        return cls({i.id: i for i in items}, regular, checks, share, groups)


# A study's presentations never change after create_study (the design is frozen), so each process reads
# them once per study, with what admission derives from them: an arrival then costs no 4,000-row read
# and no pass over them before the choice. Keyed by (id, created_at), so a study created later under a
# reused id (SQLite after a rolled-back test) is read afresh.
_DESIGNS: dict[tuple[int, datetime], _Design] = {}
_DESIGNS_KEPT = 16  # studies per process


def _design(study: Study) -> _Design:
    key = (study.pk, study.created_at)
    design = _DESIGNS.get(key)
    if design is None:
        rows = Presentation.objects.filter(study=study).values_list(
            "id", "kind", "level", "topic_id", "run_a_id", "run_b_id", "subtopic_id"
        )
        design = _Design.of([_Item(*row) for row in rows.order_by("id")])
        if len(_DESIGNS) >= _DESIGNS_KEPT:
            _DESIGNS.clear()
        _DESIGNS[key] = design
    return design


def design_item(study: Study, presentation_id: int) -> _Item:
    """A presentation of ``study`` as the design holds it (read once per process; again for an id it lacks)."""
    item = _design(study).by_id.get(presentation_id)
    if item is None:
        _DESIGNS.pop((study.pk, study.created_at), None)
        item = _design(study).by_id.get(presentation_id)
    if item is None:
        raise Presentation.DoesNotExist(f"presentation {presentation_id} is not one of study {study.pk}")
    return item


def live_counts(study: Study, now: datetime, presentation_ids: Iterable[int] | None = None) -> dict[int, int]:
    """Valid answers + live leases per presentation (absent = 0). Excluded annotators count for nothing."""
    qs = Assignment.objects.filter(presentation__study=study).valid().taking_slot(now)
    if presentation_ids is not None:
        qs = qs.filter(presentation_id__in=list(presentation_ids))
    return dict(qs.order_by().values("presentation_id").annotate(n=Count("id")).values_list("presentation_id", "n"))


class _Room:
    """The open answer slots of a study's regular presentations, on which admissions are simulated (nothing is written)."""

    def __init__(self, study: Study, now: datetime) -> None:
        self.study = study
        self.design = _design(study)
        self.items = self.design.regular
        self.counts = live_counts(study, now)
        self.quota = study.regular_items_per_annotator
        self.rng = random.Random(0)  # a fixed seed: the same state always gives the same report

    def open_slots(self) -> dict[int, int]:
        k = self.study.annotators_per_presentation
        return {i.id: k - self.counts.get(i.id, 0) for i in self.items if self.counts.get(i.id, 0) < k}

    def admit_one(self) -> int:
        """Give one newcomer what :func:`admit` would; returns how many regular items it found (all taken if a full quota)."""
        tiebreak = _tiebreak(self.items, self.rng)
        picked = _greedy(
            self.design,
            self.quota,
            counts=self.counts,
            k=self.study.annotators_per_presentation,
            history=_History(),
            unavailable=set(),
            tiebreak=tiebreak,
            same_pair_both_levels=self.study.same_pair_both_levels,
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
    admission's fill-first pass reaches (:func:`_fill_first`), so ``regular >= quota`` if and only
    if :func:`admit` finds a full quota. Check items have no answer limit: all of them are available.
    The query's count does not depend on the study's size (the database does the counting).
    """
    now = now_or(now)
    # taken slots counted per presentation in one pass over the study's assignments (a grouped join,
    # not a subquery per presentation), with the lease states' one definition (AssignmentQuerySet)
    taken, taken_params = (
        Assignment.objects.filter(presentation__study=study)
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
    regular, check = newcomer_room(study, now=now)
    return (
        study.regular_items_per_annotator > 0 and regular >= study.regular_items_per_annotator and check >= study.check_items_per_annotator
    )


def capacity(study: Study, *, now: datetime | None = None) -> Capacity:
    """How many more newcomers get a full quota, and which open slots none can get (see :class:`Capacity`)."""
    room = _Room(study, now_or(now))
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


class _Sides(NamedTuple):
    """How many of an annotator's assignments show run_a on the left and on the right, and their last position."""

    left: int
    right: int
    last_position: int


def _history(annotator: Annotator, items: dict[int, _Item]) -> tuple[_History, _Sides]:
    """What ``annotator`` holds, read once: the history for the choice and the sides and positions for :func:`_create`."""
    history, left, right, last = _History(), 0, 0, 0
    for pid, a_on_left, position in annotator.assignments.values_list("presentation_id", "a_on_left", "position"):
        history.add(items[pid])
        left, right, last = left + a_on_left, right + (not a_on_left), max(last, position)
    return history, _Sides(left, right, last)


def _locker(blocking: bool) -> Locker:
    """Lock presentation rows; returns the ids actually locked (all of them when blocking)."""

    def lock(ids: list[int]) -> set[int]:
        if not connection.features.has_select_for_update:
            return set(ids)  # SQLite: the IMMEDIATE transaction already serialises writers
        qs = Presentation.objects.filter(id__in=sorted(ids)).order_by("id")
        qs = qs.select_for_update() if blocking else qs.select_for_update(skip_locked=True)
        return set(qs.values_list("id", flat=True))

    return lock


def _pick_regular(
    study: Study,
    design: _Design,
    want: int,
    history: _History,
    now: datetime,
    rng: random.Random,
    lock: Locker,
) -> tuple[list[_Item], bool]:
    """Lease up to ``want`` of the ``design``'s regular presentations; returns (picked, some rows were skipped as locked)."""
    k = study.annotators_per_presentation
    counts = live_counts(study, now)
    candidates = design.regular
    tiebreak = _tiebreak(candidates, rng)
    unavailable: set[int] = set()
    picked: list[_Item] = []
    contended = False
    while len(picked) < want:
        tentative = _greedy(
            design,
            want - len(picked),
            counts=counts,
            k=k,
            history=history,
            unavailable=unavailable,
            tiebreak=tiebreak,
            same_pair_both_levels=study.same_pair_both_levels,
        )
        if not tentative:
            break
        locked = lock([c.id for c in tentative])
        fresh = live_counts(study, now, locked)  # after the lock: no one else can add to these rows now
        for item in tentative:
            if item.id not in locked:
                contended = True
                unavailable.add(item.id)
            elif fresh.get(item.id, 0) >= k:
                counts[item.id] = fresh[item.id]
                unavailable.add(item.id)
            else:
                picked.append(item)
                history.add(item)
    return picked, contended


def _tiebreak(candidates: list[_Item], rng: random.Random) -> dict[int, float]:
    """A random number per candidate: the last criterion of :func:`_greedy`."""
    return {c.id: rng.random() for c in candidates}


def _greedy(
    design: _Design,
    n: int,
    *,
    counts: dict[int, int],
    k: int,
    history: _History,
    unavailable: set[int],
    tiebreak: dict[int, float],
    same_pair_both_levels: bool,
) -> list[_Item]:
    """Choose ``n`` of the ``design``'s regular presentations: most needed first, then the level, pair
    and topic the annotator has least.

    ``counts`` are the answer slots taken per presentation (``k`` is full), ``history`` what the annotator
    already holds, ``unavailable`` ids to skip (locked by others or found full) and ``tiebreak`` a
    random number per candidate (:func:`_tiebreak`). Each level aims at its share of the design.

    If that spread comes up short, :func:`_fill_first` is tried: it finds ``n`` whenever the level
    exclusion allows that many, so a newcomer is refused only when no full quota exists.
    """
    trial = history.copy()
    taken = counts.get

    def is_open(c: _Item) -> bool:
        return c.id not in unavailable and taken(c.id, 0) < k

    # most needed first, ties at random: one bucket per number of slots taken, each in tiebreak order
    # (a stable sort: equal numbers keep the design's order)
    buckets: list[list[_Item]] = [[] for _ in range(k)]
    for c in design.regular:
        if is_open(c):
            buckets[taken(c.id, 0)].append(c)
    pool = [c for bucket in buckets for c in sorted(bucket, key=lambda c: tiebreak[c.id])]
    mixed: dict[tuple[int, int, int], bool] = {}  # groups whose open presentations span both levels (read as needed)
    share = design.share
    levels, pairs, topics = trial.levels, trial.pairs, trial.topics  # what the annotator has, updated as items are chosen

    def spread(c: _Item) -> tuple:
        group = c.group
        if group not in mixed:
            mixed[group] = len({m.level for m in design.groups[group] if is_open(m)}) > 1
        return (
            levels.get(c.level, 0) / share[c.level],
            # Prefer (topic, pair) groups that still have room at both levels: one annotator can
            # use only one level of a group, so such groups are what a late annotator cannot fill.
            not mixed[group],
            pairs.get(c.pair, 0),
            topics.get(c.topic, 0),
            tiebreak[c.id],
        )

    available = list(pool)
    chosen: list[_Item] = []
    for _ in range(n):
        tier: list[_Item] = []
        need = None
        for c in pool:
            if trial.excludes(c, same_pair_both_levels):
                continue
            if need is None:
                need = taken(c.id, 0)
            elif taken(c.id, 0) != need or len(tier) >= SPREAD_SAMPLE:
                break
            tier.append(c)
        if not tier:
            break
        best = min(tier, key=spread)
        chosen.append(best)
        trial.add(best)
        pool.remove(best)
    if len(chosen) < n:
        fuller = _fill_first(available, n, history, same_pair_both_levels)
        return fuller if len(fuller) > len(chosen) else chosen
    return chosen


def _fill_first(pool: list[_Item], n: int, history: _History, same_pair_both_levels: bool) -> list[_Item]:
    """As many of ``pool`` (most needed first) as the annotator may take, up to ``n``.

    Per (topic, pair) the level with the most items comes first, so the level exclusion costs the
    fewest items: this reaches ``n`` whenever any choice does.
    """
    trial = history.copy()
    sizes = Counter((c.group, c.level) for c in pool if not trial.excludes(c, same_pair_both_levels))
    chosen: list[_Item] = []
    for c in sorted(pool, key=lambda c: -sizes[c.group, c.level]):  # stable: most needed first within a size
        if len(chosen) == n:
            break
        if not trial.excludes(c, same_pair_both_levels):
            chosen.append(c)
            trial.add(c)
    return chosen


def _pick_checks(study: Study, checks: list[_Item], want: int, history: _History, rng: random.Random) -> list[_Item]:
    """Check items have no answer limit: take the least used ones the annotator has not had, kinds alternating."""
    if want <= 0:
        return []
    used = dict(
        Assignment.objects.filter(presentation__in=[c.id for c in checks])
        .order_by()
        .values("presentation_id")
        .annotate(n=Count("id"))
        .values_list("presentation_id", "n")
    )
    pool = sorted((c for c in checks if c.id not in history.seen), key=lambda c: (used.get(c.id, 0), rng.random()))
    by_kind = Counter(c.kind for c in checks if c.id in history.seen)
    chosen: list[_Item] = []
    while len(chosen) < want and pool:
        best = min(pool, key=lambda c: (used.get(c.id, 0), by_kind[c.kind]))
        pool.remove(best)
        chosen.append(best)
        by_kind[best.kind] += 1
        history.add(best)
    return chosen


def _sequence(regular: list[_Item], checks: list[_Item], rng: random.Random) -> list[_Item]:
    """Shuffle the regular items and put the checks at evenly spaced positions."""
    order = list(regular)
    rng.shuffle(order)
    total = len(order) + len(checks)
    slots = {int((i + 0.5) * total / len(checks)) for i in range(len(checks))} if checks else set()
    out: list[_Item] = []
    check_iter = iter(checks)
    rest = iter(order)
    for position in range(total):
        out.append(next(check_iter) if position in slots else next(rest))
    return out


def _balanced_sides(n: int, already_left: int, already_right: int, rng: random.Random) -> list[bool]:
    """Sides for ``n`` new items so that run_a is on the left about half of the time overall."""
    total = already_left + already_right + n
    left = min(n, max(0, total // 2 - already_left))
    if total % 2 and left < n and already_left + left < (total + 1) // 2 and rng.random() < 0.5:
        left += 1  # odd total: the last side is a coin flip
    sides = [True] * left + [False] * (n - left)
    rng.shuffle(sides)
    return sides


def _create(annotator: Annotator, study: Study, items: list[_Item], held: _Sides, now: datetime, rng: random.Random) -> list[Assignment]:
    """Lease ``items`` to ``annotator`` after the assignments they ``held`` (read by :func:`_history`), sides balanced."""
    lease = now + timedelta(minutes=study.lease_minutes)
    start = held.last_position + 1
    rows = [
        Assignment(
            annotator=annotator, presentation_id=item.id, position=start + n, a_on_left=side, assigned_at=now, lease_expires_at=lease
        )
        for n, (item, side) in enumerate(zip(items, _balanced_sides(len(items), held.left, held.right, rng)))
    ]
    return Assignment.objects.bulk_create(rows)


def _serialised(study: Study, attempt: Callable[[Locker], Any]) -> Any:
    """Run ``attempt(lock)`` optimistically with skip-locked row locks, else once serialised per study."""
    if connection.features.has_select_for_update_skip_locked:
        try:
            with transaction.atomic():
                return attempt(_locker(blocking=False))
        except _Contended:
            # The transaction rolled back, so every lock it held is gone before we wait below.
            logger.info("study %s: rows were locked by other arrivals; retrying serialised", study.pk)
    with transaction.atomic():
        # Serialised path: one admission at a time per study; it waits for rows instead of skipping them.
        Study.objects.select_for_update().filter(pk=study.pk).first()
        return attempt(_locker(blocking=True))


def register(
    study: Study,
    *,
    external_id: str = "",
    external_ids: dict | None = None,
    platform: str = "",
    arrival_key: str = "",
    now: datetime | None = None,
) -> Annotator:
    """The annotator for (``platform``, ``external_id``) or for the browser arrival ``arrival_key`` in
    ``study``, created on first arrival; a new one when neither is given.

    Both are unique per study (database constraints), so the same participant or the same arrival
    registering twice at the same moment (two consent posts of one browser) makes one annotator.
    """
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
            return existing
    try:
        with transaction.atomic():
            return Annotator.objects.create(
                study=study,
                platform=platform,
                external_id=external_id,
                external_ids=external_ids or {},
                arrival_key=arrival_key,
                created_at=now,
            )
    except IntegrityError:  # the same participant or arrival registered at the same moment
        return Annotator.objects.filter(same, study=study).order_by("pk").first()


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
        design = _design(study)
        history, held = _history(me, design.by_id)
        picked, contended = _pick_regular(study, design, study.regular_items_per_annotator, history, now, rng, lock)
        checks = _pick_checks(study, design.checks, study.check_items_per_annotator, history, rng)
        if len(picked) < study.regular_items_per_annotator or len(checks) < study.check_items_per_annotator:
            if contended:
                raise _Contended()
            me.status = Annotator.Status.REFUSED
            me.last_seen_at = now
            me.save(update_fields=["status", "last_seen_at"])
            return me, None
        created = _create(me, study, _sequence(picked, checks, rng), held, now, rng)
        me.status = Annotator.Status.ACTIVE
        me.last_seen_at = now
        me.save(update_fields=["status", "last_seen_at"])
        return me, created

    me, created = _serialised(study, attempt)
    annotator.status, annotator.last_seen_at = me.status, me.last_seen_at
    if created is None:
        raise StudyFull(
            f"study {study.name!r} cannot give a newcomer a full set of {study.items_per_annotator} items right now",
            study.screenout_code,
        )
    return created


def _renew_or_replace(me: Annotator, expired: list[Assignment], now: datetime, rng: random.Random, lock: Locker) -> None:
    """Expired items of a returning annotator: keep those that still have room, replace the others."""
    study = me.study
    regular = [a for a in expired if a.presentation.kind == Presentation.Kind.PAIR]
    ids = [a.presentation_id for a in regular]
    locked = lock(ids)
    if set(ids) - locked:
        raise _Contended()
    counts = live_counts(study, now, ids)  # these leases are expired, so they do not count themselves
    released = [a for a in regular if counts.get(a.presentation_id, 0) >= study.annotators_per_presentation]
    if not released:
        return
    Assignment.objects.filter(pk__in=[a.pk for a in released]).update(released_at=now)
    design = _design(study)
    history, held = _history(me, design.by_id)
    picked, contended = _pick_regular(study, design, len(released), history, now, rng, lock)
    if len(picked) < len(released) and contended:
        raise _Contended()
    rng.shuffle(picked)
    _create(me, study, picked, held, now, rng)  # fewer than released when the study has no room left: they were away too long


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

    me, first = _serialised(study, attempt)
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
        changes: dict[str, Any] = {"lease_expires_at": lease}
        if first.served_at is None:
            changes["served_at"] = now
        if Assignment.objects.filter(pk=first.pk, released_at__isnull=True, lease_expires_at__gt=now).update(**changes):
            first.served_at, first.lease_expires_at = changes.get("served_at", first.served_at), lease
    mark_seen(annotator, now)
    return first


def mark_seen(annotator: Annotator, now: datetime) -> None:
    """Record that ``annotator`` was there at ``now`` (``last_seen_at``, shown to staff), to :data:`SEEN_RESOLUTION`.

    A request within that time of the recorded one writes nothing: an item page right after its
    answer, or the answer a few seconds after its page, costs no second write of the same fact.
    """
    if annotator.last_seen_at is not None and timedelta(0) <= now - annotator.last_seen_at < SEEN_RESOLUTION:
        return
    Annotator.objects.filter(pk=annotator.pk).update(last_seen_at=now)
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
