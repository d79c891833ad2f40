"""Once no undrawn group is disputed, rounds are small and wait for a round's worth of answers; when the drawn groups
have no room left for the answers arriving meanwhile (all at k), admission put them on groups never drawn, outside the
design (44 % of a 14-topic study's answers). A round is now drawn at once and raised to restore a round's worth of room,
with every new group's selection probability recorded (docs/meta.md#adaptive-allocation)."""

from __future__ import annotations

from unittest import mock

import numpy as np

from studyapp.models import AllocationGroup, AllocationRound
from studyapp.services.analysis import adaptive as service
from studyapp.services.analysis.adaptive import groups_of, recompute
from tests.studyapp.base import NOW, BaseTestCase, import_toy, make_toy_study

SERVICE = "studyapp.services.analysis.adaptive"


def undisputed(d, in_set, closeness=None):
    return np.zeros(np.shape(d)[1])  # d is (metrics, groups)


class StarvationTests(BaseTestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.collection = import_toy()
        # one presentation per group, k = 3, per_round = 4 x 1 regular item = 4 answers (18 slots / 20 is less)
        cls.study = make_toy_study(
            allocation="adaptive", name="Starved", levels=["topic"], items_per_annotator=1, annotators_per_presentation=3
        )

    def setUp(self) -> None:
        super().setUp()
        groups = groups_of(self.study)
        self.first = groups.rows[0]
        AllocationGroup.objects.filter(pk=self.first.pk).update(drawn_round=0, probability=0.5, full=True, full_probability=1.0)
        # the last draw saw every answer so far: round_due waits for a round's worth more
        AllocationRound.objects.create(study=self.study, number=0, drawn_at=NOW, answers=0, target=0.5, drawn=1)
        self.per_round = max(groups.slots.sum() / service.ROUNDS, service.MIN_ROUND_QUOTAS * self.study.regular_items_per_annotator)

    def recompute_with(self, answers: int, layered: int) -> tuple:
        """recompute with the drawn group holding ``answers`` (``layered`` presentations answered) and nothing disputed."""
        real = service.groups_of

        def answered(study):
            groups = real(study)
            drawn = groups.drawn_round == 0  # round 0's group; a new round's have no answers yet
            groups.answers[drawn], groups.layered[drawn] = answers, layered
            return groups

        with (
            mock.patch(f"{SERVICE}.groups_of", side_effect=answered),
            mock.patch(f"{SERVICE}.analysis_round", return_value=None),
            mock.patch(f"{SERVICE}.adaptive.dispute_weights", side_effect=undisputed),
        ):
            self.assertFalse(service.round_due(self.study, answered(self.study), np.zeros(6), np.ones(6, dtype=bool), self.per_round))
            result = recompute(self.study, now=NOW, rng=np.random.default_rng(3))
        return result, answered(self.study)

    def test_a_round_restores_the_room_when_the_drawn_groups_are_full(self) -> None:
        k = self.study.annotators_per_presentation
        result, groups = self.recompute_with(answers=k, layered=1)  # the drawn group has all k answers: no room
        self.assertEqual(result.drew, 1)  # main waited for a round's worth of answers, which went to undrawn groups
        new = groups.drawn_round == 1
        self.assertTrue(new.any())
        available = np.arange(len(groups.rows)) != 0
        # every group considered carries its probability (known, positive), and the round's target is their sum
        self.assertTrue((groups.probability[available] > 0).all())
        round_1 = AllocationRound.objects.get(study=self.study, number=1)
        self.assertAlmostEqual(round_1.target, float(groups.probability[available].sum()))
        cost = 1 + service.FULL * (k - 1)
        self.assertGreaterEqual(round_1.target, min(self.per_round / cost, available.sum()) - 1e-9)  # not a tenth: raised
        self.assertAlmostEqual(groups.probability[0], 0.5)  # round 0's group keeps its round's probability
        room = float((groups.slots - groups.answers)[groups.drawn_round >= 0].sum())
        self.assertTrue(room >= service.RESERVE * self.per_round or (groups.drawn_round >= 0).all())
        # in expectation too: the undrawn groups' room times their chance covers the reserve
        self.assertGreaterEqual(float((groups.probability * groups.slots)[available].sum()), service.RESERVE * self.per_round)

    def test_the_small_round_waits_while_the_drawn_groups_have_room(self) -> None:
        # a first-layer group with its one answer: open slots none, room k - 1 = 2 = RESERVE x per_round
        result, groups = self.recompute_with(answers=1, layered=1)
        self.assertEqual(service.RESERVE * self.per_round, 2)
        self.assertIsNone(result.drew)
        self.assertFalse((groups.drawn_round == 1).any())
