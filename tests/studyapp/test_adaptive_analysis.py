"""The analysis of an adaptive study: the report's design-weighted estimates equal a brute-force computation of
the weighted estimator from the stored draws, the report names the allocation, the dashboard shows each run
pair's answers and why (docs/meta.md#adaptive-allocation)."""

from __future__ import annotations

import random
from datetime import timedelta

import numpy as np
from django.urls import reverse

from studyapp.exceptions import StudyFull
from studyapp.models import AllocationGroup
from studyapp.services.analysis.adaptive import dashboard_view, design_weights_by_group, groups_of, recompute
from studyapp.services.analysis.report import build_report
from studyapp.services.analysis.study_analysis import study_votes
from studyapp.services.participation import allocation
from studyapp.services.participation.answers import record_answer
from tests.studyapp.base import NOW, BaseTestCase, import_toy, make_toy_study
from tests.studyapp.test_staff_dashboard import staff_client

# (round, probability, full, chance of being full) of the first four groups; the rest not drawn
DRAWS = [(0, 0.5, True, 1.0), (0, 0.8, True, 0.5), (1, 0.25, True, 0.5), (1, 0.4, False, 0.5)]


def fill_adaptive(study, seed: int = 3) -> None:
    """Annotators until the study is full, answering at random (seeded)."""
    rng, n = random.Random(seed), 0
    while True:
        annotator = allocation.register(study, external_id=f"w{n}", now=NOW)
        try:
            allocation.admit(annotator, now=NOW, rng=rng)
        except StudyFull:
            return
        at = NOW
        while (item := allocation.current_assignment(annotator, now=at, rng=rng)) is not None:
            record_answer(item, rng.randint(-4, 4), client_ms=900, request_id=f"a{item.pk}", now=at + timedelta(seconds=1))
            at += timedelta(seconds=3)
        n += 1


class AdaptiveAnalysisTests(BaseTestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.collection = import_toy()
        cls.study = make_toy_study(allocation="adaptive", name="Adaptive analysis", levels=["topic"], items_per_annotator=3)
        groups = groups_of(cls.study).rows
        for group, (number, probability, full, chance) in zip(groups, DRAWS):
            AllocationGroup.objects.filter(pk=group.pk).update(
                drawn_round=number, probability=probability, full=full, full_probability=chance
            )
        fill_adaptive(cls.study)
        cls.report = build_report(cls.study, B=50)

    def test_the_design_weighted_estimates_equal_the_brute_force_weighted_estimator(self) -> None:
        weights, r_star = design_weights_by_group(self.study)
        self.assertEqual(r_star, 1)  # both rounds complete once the study is full
        names = [(g.topic.topic_id, g.run_a.name, g.run_b.name) for g in groups_of(self.study).rows]
        # two-phase weights: entry (1 before the analysis round, 1 / q in it) over the chance of being full; a
        # first-layer group is left out of the k-answer estimates
        expected_weights = {
            names[i]: (1.0 if number < 1 else 1 / probability) / chance
            for i, (number, probability, full, chance) in enumerate(DRAWS)
            if full
        }
        self.assertEqual(weights, expected_weights)
        self.assertEqual(sorted(expected_weights.values()), [1.0, 2.0, 8.0])
        votes = study_votes(self.study)
        p = votes.groupby(["topic", "run_a", "run_b"])["value"].mean()
        scores = self.report.analysis.scores.set_index(["run", "topic", "measure"])["value"]
        table = self.report.tables["agreement-design-weighted"]
        mup = table[(table["statistic"] == "MUP") & (table["level"] == "topic")].set_index("measure")["value"]
        checked = 0
        for measure, value in mup.items():
            uj = u = 0.0
            for (topic, a, b), w in weights.items():
                d = scores[b, topic, measure] - scores[a, topic, measure]
                pref = p[topic, a, b]
                s_m = 0.0 if abs(d) <= 1e-12 else np.sign(d)
                uj += w * abs(pref) * s_m * np.sign(pref)
                u += w * abs(pref)
            if u > 0:
                self.assertAlmostEqual(value, uj / u, places=12, msg=measure)
                checked += 1
        self.assertGreater(checked, 10)
        self.assertEqual(set(table["statistic"]), {"MUP", "MUP_b", "tau_b"})

    def test_the_report_says_which_allocation_ran(self) -> None:
        allocation_summary = self.report.summary["allocation"]
        self.assertEqual(allocation_summary["kind"], "adaptive")
        self.assertEqual(allocation_summary["analysis_round"], 1)
        self.assertEqual(allocation_summary["groups"], 3)  # the full groups
        client = staff_client()
        page = client.get(reverse("study_report", args=[self.study.slug])).content.decode()
        self.assertIn("Design-weighted MUP, MUP_b and tau_b", page)
        # the intervals hold at whichever of the 20 looks the study stops: each at 1 - 0.05 / 20
        self.assertAlmostEqual(allocation_summary["level"], 0.9975)
        self.assertIn("its intervals at level 0.9975", page)
        uniform = make_toy_study(name="Uniform report")
        self.assertEqual(build_report(uniform, B=20).summary["allocation"], {"kind": "uniform"})

    def test_the_dashboard_shows_each_pairs_answers_and_why(self) -> None:
        view = dashboard_view(self.study)
        self.assertEqual(view["groups"], 6)
        self.assertEqual((view["drawn"], view["full"]), (4, 3))
        layer = next(r for r in view["rows"] if r["round"] is not None and not r["full"])
        self.assertEqual(layer["wanted"] * self.study.annotators_per_presentation, layer["slots"])  # one answer per presentation
        self.assertEqual(view["answers"], sum(r["answers"] for r in view["rows"]))
        self.assertEqual(view["answers"] - view["outside_draw"], sum(r["answers"] for r in view["rows"] if r["round"] is not None))
        self.assertIsNone(view["decided_at"])  # no recomputation ran, so no look was taken
        self.assertEqual((view["on_disputed"], view["disputed_slots"]), (0.0, 0.0))  # no priorities computed yet
        recompute(self.study, now=NOW, rng=np.random.default_rng(1))
        view = dashboard_view(self.study)
        disputed = [r for r in view["rows"] if r["priority"] > 0]
        self.assertTrue(disputed)
        self.assertAlmostEqual(view["on_disputed"], sum(r["answers"] for r in disputed) / view["answers"])
        self.assertAlmostEqual(view["disputed_slots"], sum(r["slots"] for r in disputed) / view["complete_study"])
        page = staff_client().get(reverse("staff_study", args=[self.study.slug])).content.decode()
        self.assertIn("Adaptive allocation", page)
        self.assertIn("answers received and why they were offered", page)
        self.assertIn("not drawn", page)
        self.assertIn("(first layer)", page)
        self.assertIn("(full)", page)
        self.assertIn("of the answers are on the run pairs the contenders dispute", page)
        self.assertIsNone(dashboard_view(make_toy_study(name="Uniform dashboard")))
