"""Choosing a quota: which presentations an annotator gets (need first, then the spread over run
pairs, levels and topics, a fill-first pass when the spread comes up short) and their order and sides."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
from datetime import datetime

from django.db.models import Count

from studyapp.models import Assignment, Study
from studyapp.services.participation.allocation.pool import Design, History, Item, Offer, live_counts, offer_of

Locker = Callable[[list[int]], set[int]]  # locks presentation rows, returns the ids it got

# How many same-need candidates are compared for the spread; bounds the work per item on big studies.
SPREAD_SAMPLE = 200
# How many rows a choice locks beyond those it needs (the next in its order; at most as many as it needs):
# benchmarks/bench_admission.py counts the re-choices of arrivals at once with and without.
SPARE = 6


class Contended(Exception):
    """Rows were skipped because other transactions held them; retry serialised."""


def pick_regular(
    study: Study,
    design: Design,
    want: int,
    history: History,
    now: datetime,
    rng: random.Random,
    lock: Locker,
) -> tuple[list[Item], bool]:
    """Lease up to ``want`` of the ``design``'s regular presentations; returns (picked, some rows were skipped as locked).

    Each choice locks up to :data:`SPARE` more rows than it needs, the next ones in its order, and takes the first
    ``want`` that it locked and that are below k: rows held or filled by arrivals at once cost a re-choice only when
    more of them fail than there are spares. A re-choice reads the counts again (arrivals committed meanwhile)."""
    k = study.annotators_per_presentation
    counts = live_counts(study, now)
    first = offer_of(study, design)
    candidates = design.regular
    tiebreak = tiebreaks(candidates, rng)
    unavailable: set[int] = set()
    picked: list[Item] = []
    contended = False
    while len(picked) < want:
        if unavailable:  # choosing again: the counts read before are stale by what other arrivals committed since
            counts = live_counts(study, now)
        need = want - len(picked)
        tentative = greedy(
            design,
            need,
            spare=min(SPARE, need),
            counts=counts,
            k=k,
            history=history,
            unavailable=unavailable,
            tiebreak=tiebreak,
            same_pair_both_levels=study.same_pair_both_levels,
            first=first,
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
            elif len(picked) < want:  # a spare beyond what is needed stays locked, unused, until the transaction ends
                picked.append(item)
                history.add(item)
    return picked, contended


def tiebreaks(candidates: list[Item], rng: random.Random) -> dict[int, float]:
    """A random number per candidate: the last criterion of :func:`greedy`."""
    return {c.id: rng.random() for c in candidates}


def greedy(
    design: Design,
    n: int,
    *,
    spare: int = 0,
    counts: dict[int, int],
    k: int,
    history: History,
    unavailable: set[int],
    tiebreak: dict[int, float],
    same_pair_both_levels: bool,
    first: Offer | None = None,
) -> list[Item]:
    """Choose ``n`` of the ``design``'s regular presentations: most needed first, then the level, pair
    and topic the annotator has least.

    ``first``: adaptive allocation's drawn groups with their depth, round and place by dispute weight
    (:class:`.pool.Offer`): a presentation of one with fewer answer slots taken than its depth (k:
    full, 1: first layer) comes before all others, the oldest round first, most needed first within a round; then
    the drawn groups' further
    answers, the one most disputed among the contenders at the last recomputation first (never by its own answers'
    values beyond the best set they inform), most needed first among equals; then the groups not drawn, most needed first; None
    (uniform allocation): one tier.

    ``counts`` are the answer slots taken per presentation (``k`` is full), ``history`` what the annotator
    already holds, ``unavailable`` ids to skip (locked by others or found full) and ``tiebreak`` a
    random number per candidate (:func:`tiebreaks`). Each level aims at its share of the design.

    If that spread comes up short, :func:`fill_first` is tried: it finds ``n`` whenever the level
    exclusion allows that many, so a newcomer is refused only when no full quota exists.
    """
    trial = history.copy()
    taken = counts.get

    def is_open(c: Item) -> bool:
        return c.id not in unavailable and taken(c.id, 0) < k

    # Most needed first, ties at random: one bucket per rank, each in tiebreak order (a stable sort: equal numbers
    # keep the design's order). The rank is the slots taken; with adaptive allocation (R rounds drawn) three tiers:
    # a drawn group below its depth (age x k + slots taken: the oldest round first, so that the rounds complete in
    # the order the analysis needs them, instead of each new round's unanswered presentations going before an older
    # round's last answers), then every drawn group's further answers (one bucket, R x k), then the groups not drawn
    # (R x k + 1 + slots taken).
    further = first.rounds * k if first is not None else k
    buckets: list[list[Item]] = [[] for _ in range(further + 1 + k)]
    rank_of: dict[int, int] = {}  # each open candidate's rank, worked out once (the loop below asks it again and again)
    depth, age = (first.depth.get, first.age) if first is not None else (None, {})
    for c in design.regular:
        slots = taken(c.id, 0)
        if slots >= k or c.id in unavailable:
            continue
        if depth is None:
            r = slots
        else:
            d = depth(c.id)
            r = further + 1 + slots if d is None else age[c.id] * k + slots if slots < d else further
        rank_of[c.id] = r
        buckets[r].append(c)

    # Within the drawn groups' buckets (up to R x k): the group most disputed now first (its place by dispute weight,
    # 0 first), then the fewest slots taken, then at random, as one number (the place and
    # the slots are whole numbers, the tiebreak below 1). The other buckets' candidates have the same slots taken
    # and no draw: the tiebreak alone orders them. A few look-ups per candidate, no tuple: admission sorts the whole
    # design on every arrival (a tuple key per candidate once cost the item pages' p95).
    def within(r: int) -> Callable[[Item], float]:
        if first is None or r > further:
            return lambda c: tiebreak[c.id]
        place, width = first.place, k + 1
        return lambda c: place[c.id] * width + taken(c.id, 0) + tiebreak[c.id]

    pool = [c for r, bucket in enumerate(buckets) for c in sorted(bucket, key=within(r))]
    mixed: dict[tuple[int, int, int], bool] = {}  # groups whose open presentations span both levels (read as needed)
    share = design.share
    levels, pairs, topics = trial.levels, trial.pairs, trial.topics  # what the annotator has, updated as items are chosen

    def room_at_both_levels(group: tuple[int, int, int]) -> bool:
        if group not in mixed:
            mixed[group] = len({m.level for m in design.groups[group] if is_open(m)}) > 1
        return mixed[group]

    available = list(pool)
    chosen: list[Item] = []
    for _ in range(n + spare):
        tier: list[Item] = []
        need = None
        for c in pool:
            if trial.excludes(c, same_pair_both_levels):
                continue
            if need is None:
                need = rank_of[c.id]
            elif rank_of[c.id] != need or len(tier) >= SPREAD_SAMPLE:
                break
            tier.append(c)
        if not tier:
            break
        best = fittest(tier, levels, share, room_at_both_levels, pairs, topics, tiebreak)
        chosen.append(best)
        trial.add(best)
        pool.remove(best)
    if len(chosen) < n:
        fuller = fill_first(available, n, history, same_pair_both_levels)
        return fuller if len(fuller) > len(chosen) else chosen
    return chosen


def fittest(
    tier: list[Item],
    levels: Counter,
    share: dict[str, float],
    room_at_both_levels: Callable[[tuple[int, int, int]], bool],
    pairs: Counter,
    topics: Counter,
    tiebreak: dict[int, float],
) -> Item:
    """The candidate of ``tier`` (equally needed) that spreads the annotator's items best: the level furthest below its
    ``share`` (``levels``: the annotator's items per level), then a (topic, pair) group that still has room at both
    levels (one annotator can use only one level of a group, so such groups are what a late annotator cannot fill),
    then the run pair and the topic the annotator has least, then the ``tiebreak``.

    The first of ``min(tier, key=...)`` by the tuple of these five, narrowed one criterion at a time instead: no tuple
    and no group check per candidate (a tier has up to :data:`SPREAD_SAMPLE` candidates, for every item chosen on
    every arrival); ``tests/studyapp/test_allocation_fittest.py`` checks the two against each other."""
    balance = {level: levels.get(level, 0) / share[level] for level in {c.level for c in tier}}
    low = min(balance.values())
    best = [c for c in tier if balance[c.level] == low]
    if len(best) > 1:
        best = [c for c in best if room_at_both_levels(c.group)] or best
    if len(best) > 1:
        fewest = min(pairs.get(c.pair, 0) for c in best)
        best = [c for c in best if pairs.get(c.pair, 0) == fewest]
    if len(best) > 1:
        fewest = min(topics.get(c.topic, 0) for c in best)
        best = [c for c in best if topics.get(c.topic, 0) == fewest]
    return best[0] if len(best) == 1 else min(best, key=lambda c: tiebreak[c.id])


def fill_first(pool: list[Item], n: int, history: History, same_pair_both_levels: bool) -> list[Item]:
    """As many of ``pool`` (most needed first) as the annotator may take, up to ``n``.

    Per (topic, pair) the level with the most items comes first, so the level exclusion costs the
    fewest items: this reaches ``n`` whenever any choice does.
    """
    trial = history.copy()
    sizes = Counter((c.group, c.level) for c in pool if not trial.excludes(c, same_pair_both_levels))
    chosen: list[Item] = []
    for c in sorted(pool, key=lambda c: -sizes[c.group, c.level]):  # stable: most needed first within a size
        if len(chosen) == n:
            break
        if not trial.excludes(c, same_pair_both_levels):
            chosen.append(c)
            trial.add(c)
    return chosen


def pick_checks(study: Study, checks: list[Item], want: int, history: History, rng: random.Random) -> list[Item]:
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
    chosen: list[Item] = []
    while len(chosen) < want and pool:
        best = min(pool, key=lambda c: (used.get(c.id, 0), by_kind[c.kind]))
        pool.remove(best)
        chosen.append(best)
        by_kind[best.kind] += 1
        history.add(best)
    return chosen


def in_sequence(regular: list[Item], checks: list[Item], rng: random.Random) -> list[Item]:
    """Shuffle the regular items and put the checks at evenly spaced positions."""
    order = list(regular)
    rng.shuffle(order)
    total = len(order) + len(checks)
    slots = {int((i + 0.5) * total / len(checks)) for i in range(len(checks))} if checks else set()
    out: list[Item] = []
    check_iter = iter(checks)
    rest = iter(order)
    for position in range(total):
        out.append(next(check_iter) if position in slots else next(rest))
    return out


def balanced_sides(n: int, already_left: int, already_right: int, rng: random.Random) -> list[bool]:
    """Sides for ``n`` new items so that run_a is on the left about half of the time overall."""
    total = already_left + already_right + n
    left = min(n, max(0, total // 2 - already_left))
    if total % 2 and left < n and already_left + left < (total + 1) // 2 and rng.random() < 0.5:
        left += 1  # odd total: the last side is a coin flip
    sides = [True] * left + [False] * (n - left)
    rng.shuffle(sides)
    return sides
