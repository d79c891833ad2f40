"""A round whose Poisson draw comes up empty (small rounds once nothing undrawn is disputed: a target of about 2
groups draws none with chance e^-2) stays a round, and the next recomputation draws the round after it instead of
failing on the stored round's number (seen on the demo collection: every later ``allocation_priorities`` raised
IntegrityError and the study drew no round again)."""

from __future__ import annotations

from io import StringIO
from unittest import mock

import numpy as np
from django.core.management import call_command

from studyapp.models import AllocationGroup
from studyapp.services.analysis.adaptive import analysis_round, groups_of, recompute
from tests.studyapp.base import NOW, BaseTestCase, import_toy, make_toy_study


def draw_nothing(q, rng):
    return np.zeros(np.shape(q), dtype=bool)


class EmptyRoundTests(BaseTestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.collection = import_toy()
        cls.study = make_toy_study(allocation="adaptive", name="Empty round", levels=["topic"], items_per_annotator=3)

    def test_the_round_after_an_empty_one_is_drawn(self) -> None:
        with mock.patch("studyapp.services.analysis.adaptive.adaptive.draw", side_effect=draw_nothing):
            empty = recompute(self.study, now=NOW, rng=np.random.default_rng(1))
        self.assertEqual((empty.drew, empty.drawn_groups), (0, 0))
        self.assertEqual(list(self.study.allocation_rounds.values_list("number", "drawn")), [(0, 0)])
        self.assertFalse(AllocationGroup.objects.filter(study=self.study, drawn_round__gte=0).exists())

        out = StringIO()
        call_command("allocation_priorities", self.study.slug, stdout=out)  # raised IntegrityError before
        self.assertIn("drew round 1 (", out.getvalue())
        self.assertEqual(list(self.study.allocation_rounds.values_list("number", flat=True)), [0, 1])
        groups = groups_of(self.study)
        self.assertTrue((groups.drawn_round == 1).any())
        self.assertFalse((groups.drawn_round == 0).any())
        self.assertEqual(analysis_round(groups), 0)  # the empty round is complete by itself; round 1 has no answers yet
        again = recompute(self.study, now=NOW, rng=np.random.default_rng(2))  # nothing to weigh yet: every metric contends
        self.assertEqual(again.analysis_round, 0)
