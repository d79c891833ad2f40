"""Admission's spread step (``choice.fittest``) chooses exactly what ``min`` over the tier by the tuple of its five
criteria chose before it was narrowed one criterion at a time: the same item on every tier, and the same quotas from
``choice.greedy`` over varied studies, with and without spare rows, uniform and adaptive, including ties at every
criterion (few topics and pairs, tiebreaks drawn from a handful of values)."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
from unittest import mock

from django.test import SimpleTestCase

from studyapp.models import Presentation
from studyapp.models.study import Level
from studyapp.services.participation.allocation import choice
from studyapp.services.participation.allocation.pool import Design, History, Item, Offer

STATES = 300


def by_tuple(
    tier: list[Item],
    levels: Counter,
    share: dict[str, float],
    room_at_both_levels: Callable[[tuple[int, int, int]], bool],
    pairs: Counter,
    topics: Counter,
    tiebreak: dict[int, float],
) -> Item:
    """The spread step as it was: the first of the tier by (level balance, no room at both levels, pair, topic, tiebreak)."""
    return min(tier, key=lambda c: spread(c, levels, share, room_at_both_levels, pairs, topics, tiebreak))


def spread(c: Item, levels, share, room_at_both_levels, pairs, topics, tiebreak) -> tuple:
    return (
        levels.get(c.level, 0) / share[c.level],
        not room_at_both_levels(c.group),
        pairs.get(c.pair, 0),
        topics.get(c.topic, 0),
        tiebreak[c.id],
    )


def a_design(rng: random.Random) -> Design:
    """Topics x run pairs, each group one topic-level and 1-3 subtopic-level presentations, a few check items."""
    runs = rng.randint(3, 6)
    items: list[Item] = []
    for topic in range(1, rng.randint(2, 14) + 1):
        subtopics = rng.randint(1, 3)
        for a in range(1, runs + 1):
            for b in range(a + 1, runs + 1):
                items.append(Item(len(items) + 1, Presentation.Kind.PAIR, Level.TOPIC, topic, a, b, None))
                for s in range(subtopics):
                    items.append(Item(len(items) + 1, Presentation.Kind.PAIR, Level.SUBTOPIC, topic, a, b, 100 * topic + s))
    items += [Item(len(items) + 1, "check", Level.TOPIC, 1, 1, 2, None) for _ in range(2)]
    return Design.of(items)


def a_state(rng: random.Random, design: Design, k: int) -> dict:
    """Slots taken, rows unavailable, what the annotator holds, the tiebreaks (coarse ones tie often)."""
    regular = design.regular
    counts = {c.id: rng.randrange(k + 1) for c in rng.sample(regular, rng.randrange(len(regular) + 1))}
    history = History()
    for c in rng.sample(regular, rng.randrange(min(12, len(regular)))):
        history.add(c)
    coarse = rng.random() < 0.5
    return {
        "counts": counts,
        "k": k,
        "history": history,
        "unavailable": {c.id for c in rng.sample(regular, rng.randrange(min(30, len(regular))))},
        "tiebreak": {c.id: (rng.randrange(3) / 4 if coarse else rng.random()) for c in regular},
        "same_pair_both_levels": rng.random() < 0.3,
    }


def an_offer(rng: random.Random, design: Design, k: int) -> Offer | None:
    if rng.random() < 0.5:
        return None
    groups = rng.sample(sorted(design.groups), rng.randrange(len(design.groups) + 1))
    return Offer.of(design, {g: (rng.choice([1, k]), rng.choice([0.2, 0.5, 0.9]), rng.randrange(3)) for g in groups})


class FittestTests(SimpleTestCase):
    def test_fittest_picks_what_the_tuple_minimum_picks_on_every_tier(self) -> None:
        rng = random.Random(7)
        ties = Counter()
        for _ in range(2_000):
            design = a_design(rng)
            tier = rng.sample(design.regular, rng.randint(1, min(60, len(design.regular))))
            levels = Counter({level: rng.randrange(4) for level in design.share})
            pairs = Counter({c.pair: rng.randrange(3) for c in tier})
            topics = Counter({c.topic: rng.randrange(3) for c in tier})
            tiebreak = {c.id: rng.randrange(3) / 4 for c in tier}
            room = {c.group: rng.random() < 0.5 for c in tier}
            arguments = (tier, levels, design.share, room.__getitem__, pairs, topics, tiebreak)
            expected = by_tuple(*arguments)
            self.assertIs(choice.fittest(*arguments), expected)
            best = spread(expected, *arguments[1:])
            ties[sum(spread(c, *arguments[1:]) == best for c in tier) > 1] += 1
        self.assertGreater(ties[True], 100)  # tiers whose minimum ties at every criterion (the first of them wins)

    def test_greedy_chooses_the_same_quotas_as_with_the_tuple_minimum(self) -> None:
        rng = random.Random(11)
        compared = Counter()
        for _ in range(STATES):
            design = a_design(rng)
            k = rng.choice([1, 2, 3])
            state = a_state(rng, design, k)
            first = an_offer(rng, design, k)
            n, spare = rng.choice([1, 4, 8, 20]), rng.choice([0, 3, 6])
            chosen = [c.id for c in choice.greedy(design, n, spare=spare, first=first, **state)]
            with mock.patch.object(choice, "fittest", by_tuple):
                before = [c.id for c in choice.greedy(design, n, spare=spare, first=first, **state)]
            self.assertEqual(chosen, before, (n, spare, first is not None))
            compared["adaptive" if first else "uniform"] += 1
            compared["chose"] += bool(chosen)
        self.assertGreater(min(compared["adaptive"], compared["uniform"]), STATES // 4)
        self.assertGreater(compared["chose"], STATES // 2)
