"""The study's presentations as admission sees them (read once per process) and what an annotator already holds."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from django.db.models import Count

from studyapp.models import AllocationGroup, AllocationRound, Assignment, Presentation, Study
from studyapp.models.study_settings import Allocation


@dataclass(frozen=True)
class Item:
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
class History:
    """What an annotator already has: the basis of 'never twice', the exclusion and the spread."""

    seen: set[int] = field(default_factory=set)
    group_levels: dict[tuple[int, int, int], set[str]] = field(default_factory=dict)
    levels: Counter = field(default_factory=Counter)
    pairs: Counter = field(default_factory=Counter)
    topics: Counter = field(default_factory=Counter)

    def add(self, item: Item) -> None:
        self.seen.add(item.id)
        if item.kind == Presentation.Kind.PAIR:
            self.group_levels.setdefault(item.group, set()).add(item.level)
            self.levels[item.level] += 1
            self.pairs[item.pair] += 1
            self.topics[item.topic] += 1

    def copy(self) -> History:
        return History(set(self.seen), {g: set(v) for g, v in self.group_levels.items()}, Counter(self.levels),
                        Counter(self.pairs), Counter(self.topics))  # fmt: skip

    def excludes(self, item: Item, same_pair_both_levels: bool) -> bool:
        if item.id in self.seen:
            return True
        if same_pair_both_levels:
            return False
        levels = self.group_levels.get(item.group)  # the annotator may hold only this item's level of its group
        return bool(levels) and (len(levels) > 1 or item.level not in levels)


@dataclass(frozen=True)
class Design:
    """A study's presentations as admission works with them (see :func:`design_of`)."""

    by_id: dict[int, Item]  # every presentation, in id order
    regular: list[Item]  # the run-pair presentations, in id order
    checks: list[Item]
    share: dict[str, float]  # each level's share of the regular presentations: the level balance aims at it
    groups: dict[tuple[int, int, int], list[Item]]  # the regular presentations of each (topic, run_a, run_b)

    @classmethod
    def of(cls, items: list[Item]) -> Design:
        regular = [i for i in items if i.kind == Presentation.Kind.PAIR]
        by_level = Counter(i.level for i in regular)
        share = {level: n / len(regular) for level, n in by_level.items()}
        groups: dict[tuple[int, int, int], list[Item]] = {}
        for item in regular:
            groups.setdefault(item.group, []).append(item)
        checks = [i for i in items if i.kind != Presentation.Kind.PAIR]
        return cls({i.id: i for i in items}, regular, checks, share, groups)


# A study's presentations never change after create_study (the design is frozen), so each process reads
# them once per study, with what admission derives from them: an arrival then costs no 4,000-row read
# and no pass over them before the choice. Keyed by (id, created_at), so a study created later under a
# reused id (SQLite after a rolled-back test) is read afresh.
DESIGNS: dict[tuple[int, datetime], Design] = {}
DESIGNS_KEPT = 16  # studies per process


def design_of(study: Study) -> Design:
    key = (study.pk, study.created_at)
    design = DESIGNS.get(key)
    if design is None:
        rows = Presentation.objects.filter(study=study).values_list(
            "id", "kind", "level", "topic_id", "run_a_id", "run_b_id", "subtopic_id"
        )
        design = Design.of([Item(*row) for row in rows.order_by("id")])
        if len(DESIGNS) >= DESIGNS_KEPT:
            DESIGNS.clear()
        DESIGNS[key] = design
    return design


def design_item(study: Study, presentation_id: int) -> Item:
    """A presentation of ``study`` as the design holds it (read once per process; again for an id it lacks)."""
    item = design_of(study).by_id.get(presentation_id)
    if item is None:
        DESIGNS.pop((study.pk, study.created_at), None)
        item = design_of(study).by_id.get(presentation_id)
    if item is None:
        raise Presentation.DoesNotExist(f"presentation {presentation_id} is not one of study {study.pk}")
    return item


def live_counts(study: Study, now: datetime, presentation_ids: Iterable[int] | None = None) -> dict[int, int]:
    """Valid answers + live leases per presentation (absent = 0). Excluded annotators count for nothing.

    The study's assignments are found through their annotators (an assignment's annotator and presentation are
    of one study), whose join the exclusion needs anyway: joining the presentations too doubled the query's
    PostgreSQL CPU (docs/benchmarks.md, "The burst's database work")."""
    qs = Assignment.objects.filter(annotator__study=study).valid().taking_slot(now)
    if presentation_ids is not None:
        qs = qs.filter(presentation_id__in=list(presentation_ids))
    return dict(qs.order_by().values("presentation_id").annotate(n=Count("id")).values_list("presentation_id", "n"))


@dataclass(frozen=True)
class Offer:
    """Adaptive allocation's draws as admission orders them, per presentation of a drawn group: its ``depth`` (the
    answers it is offered first for: k for a full group, 1 for a first-layer one), its round's ``age`` (0: the
    oldest round drawn; ``rounds`` in all) and its group's ``place`` among the drawn (0: the highest dispute weight among
    the contenders when the round was read, i.e. the most disputed now; equal weights share a place). Admission then costs a few dict look-ups
    per candidate, as uniform allocation's need order does."""

    depth: dict[int, int]
    age: dict[int, int]
    place: dict[int, int]
    rounds: int

    @classmethod
    def of(cls, design: Design, groups: dict[tuple[int, int, int], tuple[int, float, int]]) -> Offer:
        """From :func:`offered_groups`' drawn groups (group -> (depth, dispute weight, round))."""
        places = {w: n for n, w in enumerate(sorted({w for _, w, _ in groups.values()}, reverse=True))}
        ages = {r: n for n, r in enumerate(sorted({r for _, _, r in groups.values()}))}
        depth, age, place = {}, {}, {}
        for group, (d, w, r) in groups.items():
            for item in design.groups.get(group, ()):
                depth[item.id], age[item.id], place[item.id] = d, ages[r], places[w]
        return cls(depth, age, place, len(ages))


# The draws change only when allocation_priorities draws a round: it writes the drawn groups and the round in one
# transaction, and a drawn group's depth never changes afterwards (the groups not drawn, whose probability it rewrites,
# are not offered first; the dispute weights that order the further answers are those of the recomputation the round
# was read after: a round's worth of answers at most old). So each process reads the draws once per round: an arrival
# reads the number of the last round (one indexed row), not the ~1,300 rows of a TREC-sized study's drawn groups.
OFFERS: dict[tuple[int, datetime], tuple[tuple[int, int] | None, Offer]] = {}


def offer_of(study: Study, design: Design) -> Offer | None:
    """The study's :class:`Offer` (read again when a round was drawn since), None for uniform allocation."""
    if study.allocation != Allocation.ADAPTIVE:
        return None
    latest = AllocationRound.objects.filter(study=study).order_by("-number").values_list("pk", "number").first()
    key = (study.pk, study.created_at)
    cached = OFFERS.get(key)
    if cached is not None and cached[0] == latest:
        return cached[1]
    offer = Offer.of(design, offered_groups(study) or {})
    if len(OFFERS) >= DESIGNS_KEPT:
        OFFERS.clear()
    OFFERS[key] = (latest, offer)
    return offer


def offered_groups(study: Study) -> dict[tuple[int, int, int], tuple[int, float, int]] | None:
    """Adaptive allocation: the (topic, run_a, run_b) groups drawn so far, each with the answers per presentation it
    is offered first for (k for a full group, 1 for a first-layer one), its dispute weight among the contenders at the
    last recomputation (the drawn groups' further answers go to the most disputed now first; docs/meta.md#adaptive-allocation) and the round
    that drew it (the rounds are completed oldest first: the analysis waits for them in order). One indexed
    query; the draws are written off the request path by ``manage.py allocation_priorities``; admission reads them
    through :func:`offer_of` (once per round). None for uniform allocation."""
    if study.allocation != Allocation.ADAPTIVE:
        return None
    k = study.annotators_per_presentation
    rows = AllocationGroup.objects.filter(study=study, drawn_round__gte=0).values_list(
        "topic_id", "run_a_id", "run_b_id", "full", "priority", "drawn_round"
    )
    return {(t, a, b): (k if full else 1, w, r) for t, a, b, full, w, r in rows}
