"""The contenders ``allocation_priorities`` prints and steers by are a function of the answers: two recomputations on the
same answers resample the best set from the same seed (the study and the analysis round) and name the same contenders.
Before, each call drew a fresh seed, and on a finished study (no new answer between calls) the contenders flipped
between 2 and 3 metrics from one run of the command to the next."""

from __future__ import annotations

from types import SimpleNamespace
from unittest import mock

import numpy as np

from studyapp.models import AllocationGroup
from studyapp.services.analysis.adaptive import recompute
from tests.studyapp.base import NOW, BaseTestCase, import_toy, make_toy_study

SERVICE = "studyapp.services.analysis.adaptive"


class RepeatableContendersTests(BaseTestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.collection = import_toy()
        cls.study = make_toy_study(allocation="adaptive", name="Repeatable", levels=["topic"], items_per_annotator=3)

    def test_the_same_answers_give_the_same_best_set_resampling(self) -> None:
        recompute(self.study, now=NOW, rng=np.random.default_rng(1))  # draws round 0
        AllocationGroup.objects.filter(study=self.study).update(drawn_round=0, probability=0.5)
        seen: list[float] = []

        def record(d, p, measures, *, rng, **options):  # the first number the best set's resampling would draw
            seen.append(float(rng.random()))
            return SimpleNamespace(members=tuple(measures), entries=tuple(measures), decided=False, chosen=SimpleNamespace(leaders=()))

        with mock.patch(f"{SERVICE}.adaptive.contenders", side_effect=record), mock.patch(f"{SERVICE}.analysis_round", return_value=0):
            recompute(self.study, now=NOW)  # as the command calls it: no rng given
            recompute(self.study, now=NOW)
            with mock.patch(f"{SERVICE}.analysis_round", return_value=1):
                recompute(self.study, now=NOW)  # another analysis round: another seed
            given = np.random.default_rng(7)
            recompute(self.study, now=NOW, rng=given)  # a caller's generator is used as given
        self.assertEqual(seen[0], seen[1])
        self.assertNotEqual(seen[0], seen[2])
        self.assertEqual(seen[3], float(np.random.default_rng(7).random()))


class RecomputeLogTests(BaseTestCase):
    """The line ``recompute`` logs (shown beside simulate_annotators' and allocation_priorities' output) says what the
    command says: before, a fresh study logged "0 contenders, drew round None" beside "contenders: the candidate metrics"."""

    @classmethod
    def setUpTestData(cls) -> None:
        cls.collection = import_toy()
        cls.study = make_toy_study(allocation="adaptive", name="Logged", levels=["topic"], items_per_annotator=3)

    def test_the_log_names_the_contenders_and_the_draw(self) -> None:
        with self.assertLogs(SERVICE, level="INFO") as logs:
            first = recompute(self.study, now=NOW, rng=np.random.default_rng(1))
            recompute(self.study, now=NOW, rng=np.random.default_rng(2))
        self.assertIn(
            f"study 'Logged': analysis round None, contenders: every metric (no complete round yet); drew round 0 ({first.drawn_groups} groups)",
            logs.output[0],
        )
        self.assertTrue(logs.output[1].endswith("; no new round"), logs.output[1])
