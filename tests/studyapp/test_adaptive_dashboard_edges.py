"""An adaptive study as a new user meets it: created without a round, then one answer, then recomputed; the
dashboard and ``create_study`` say what to run beside the server (docs/studyapp.md#how-annotators-get-items)."""

from __future__ import annotations

import json
import random
import tempfile
from io import StringIO
from pathlib import Path

import numpy as np
from django.core.management import call_command
from django.urls import reverse

from evaluation.meta import adaptive
from studyapp.models import Preference, Study
from studyapp.services.analysis import decided_signal
from studyapp.services.analysis.adaptive import dashboard_view, recompute
from studyapp.services.participation import allocation
from studyapp.services.participation.answers import record_answer
from tests.studyapp.base import NOW, BaseTestCase, import_toy, make_toy_study
from tests.studyapp.test_staff_dashboard import staff_client

NO_ROUND = "No round drawn yet."


def page_of(study: Study) -> str:
    return staff_client().get(reverse("staff_study", args=[study.slug])).content.decode()


class AdaptiveDashboardEdgesTests(BaseTestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.collection = import_toy()

    def test_a_study_never_recomputed_says_what_to_run_and_weighs_nothing(self) -> None:
        study = make_toy_study(allocation="adaptive", name="Never recomputed", levels=["topic"], items_per_annotator=3)
        view = dashboard_view(study)
        self.assertFalse(view["recomputed"])
        page = page_of(study)
        self.assertIn(NO_ROUND, page)
        self.assertIn(f"manage.py allocation_priorities {study.slug} --every 30", page)
        self.assertIn("0 valid answers so far", page)
        self.assertIn("not weighed yet", page)
        self.assertNotIn("undisputed", page)  # nothing was weighed: no pair is known to be undisputed
        self.assertNotIn("Recomputed by", page)

        # one answer, before any recomputation: admission's fallback, counted outside the draw
        annotator = allocation.register(study, external_id="first", now=NOW)
        allocation.admit(annotator, now=NOW, rng=random.Random(1))
        item = allocation.current_assignment(annotator, now=NOW, rng=random.Random(1))
        record_answer(item, 2, client_ms=900, request_id="one", now=NOW)
        self.assertEqual(Preference.objects.filter(assignment__annotator=annotator).count(), 1)
        view = dashboard_view(study)
        self.assertEqual((view["answers"], view["outside_draw"]), (1, 1))
        page = page_of(study)
        self.assertIn("1 valid answer so far", page)
        self.assertIn("(1 answer on pairs not drawn", page)
        self.assertIn(NO_ROUND, page)

        recompute(study, now=NOW, rng=np.random.default_rng(1))
        self.assertTrue(dashboard_view(study)["recomputed"])
        page = page_of(study)
        self.assertNotIn(NO_ROUND, page)
        self.assertNotIn("not weighed yet", page)
        self.assertIn("Recomputed by", page)

    def test_a_uniform_study_shows_nothing_adaptive(self) -> None:
        study = make_toy_study(name="Uniform edges", levels=["topic"], items_per_annotator=3)
        self.assertIsNone(dashboard_view(study))
        page = page_of(study)
        self.assertNotIn("Adaptive allocation", page)
        self.assertNotIn(NO_ROUND, page)

    def create_study(self, name: str, config: Path) -> StringIO:
        """``create_study`` of this collection from ``config``; its printed output."""
        out = StringIO()
        call_command(
            "create_study", "--collection", self.collection.name, "--name", name, "--config", str(config),
            "--allow-bare-documents", stdout=out,
        )  # fmt: skip
        return out

    def test_create_study_says_what_an_adaptive_study_needs_beside_the_server(self) -> None:
        folder = Path(self.enterContext(tempfile.TemporaryDirectory()))
        for name, allocation_name in (("Made adaptive", "adaptive"), ("Made uniform", None)):
            config = {"runs": ["alpha", "bravo"], "levels": ["topic"], "items_per_annotator": 2}
            if allocation_name:
                config["allocation"] = allocation_name
            path = folder / f"{name}.json"
            path.write_text(json.dumps(config))
            out = self.create_study(name, path)
            study = Study.objects.get(name=name)
            self.assertEqual(study.allocation, allocation_name or "uniform")
            line = f"Allocation: adaptive. Run manage.py allocation_priorities {study.slug} --every 30 beside the server"
            (self.assertIn if allocation_name else self.assertNotIn)(line, out.getvalue())
            topics = study.study_topics.count()
            warning = f"Warning: with {topics} topics the best set can never leave a metric out"
            (self.assertIn if allocation_name else self.assertNotIn)(warning, out.getvalue())
            # an adaptive study without candidate_metrics (fixed once it exists) is told at once what that costs
            (self.assertIn if allocation_name else self.assertNotIn)("Note: no candidate_metrics, so every metric", out.getvalue())
        path.write_text(json.dumps({**config, "allocation": "adaptive", "candidate_metrics": "alpha-nDCG@10,nERR-IA@10"}))
        out = self.create_study("Named", path)
        self.assertIn("It decides among 2 candidate metrics (candidate_metrics): alpha-nDCG@10, nERR-IA@10.", out.getvalue())
        self.assertNotIn("Note: no candidate_metrics", out.getvalue())

    def test_too_few_topics_for_the_best_set_to_leave_a_metric_out_is_said(self) -> None:
        # measured on the best set the signal tests at each look (alpha 0.05 / 20): a metric wrong on every pair is
        # left out with 9 topics and never with 8 (2^8 exact sign flips: smallest p_best 1/256 + 0.1 alpha > alpha)
        rng = np.random.default_rng(0)
        for topics, entries in ((8, ("good", "bad")), (9, ("good",))):
            p = rng.choice([1.0, 2.0, 3.0], size=topics * 10)
            chosen = adaptive.contenders(
                np.vstack([np.ones(p.size), -np.ones(p.size)]),
                p,
                ["good", "bad"],
                weights=np.ones(p.size),
                clusters=np.repeat(np.arange(topics), 10),
                alpha=decided_signal.LOOK_ALPHA,
                B=2000,
                rng=1,
            )
            self.assertEqual(chosen.entries, entries)
        self.assertEqual(decided_signal.fewest_topics(), 9)
        self.assertIsNone(decided_signal.too_few_topics(9))
        self.assertIn("needs at least 9 topics (its exact test has 256 sign flips)", decided_signal.too_few_topics(8))
        study = make_toy_study(allocation="adaptive", name="Two topics", levels=["topic"], items_per_annotator=3)
        self.assertIn(
            "Too few topics to decide by the best set:</strong> with 2 topics the best set can never leave a metric out", page_of(study)
        )

    def test_a_decided_study_shows_when_and_the_saving_against_a_complete_uniform_study(self) -> None:
        study = make_toy_study(allocation="adaptive", name="Decided", levels=["topic"], items_per_annotator=3)
        recompute(study, now=NOW, rng=np.random.default_rng(1))
        complete = dashboard_view(study)["complete_study"]
        decided_set = ["alpha-nDCG@10", "ERR-IA@10 = nERR-IA@10"]
        study.allocation_rounds.filter(number=0).update(decided=True, decided_answers=complete // 4, contenders=decided_set)
        view = dashboard_view(study)
        self.assertEqual(view["decided_at"], complete // 4)
        self.assertAlmostEqual(view["saving"], complete / (complete // 4))
        page = page_of(study)
        self.assertIn("<strong>Decided</strong>", page)
        said = f"after {complete // 4} answers, when the best set was alpha-nDCG@10; ERR-IA@10 = nERR-IA@10"
        self.assertIn(f"{said}: saved so far against uniform allocation", page)
        self.assertIn(f"{view['saving']:.2f}× the answers", page)
        self.assertNotIn("Too few topics to decide", page)  # said only while not decided
        # the best set grew back at a later round: the dashboard listed 3 contenders under "at most 3 entries left"
        # beside "Decided" without saying which set was decided on
        later = study.allocation_rounds.get(number=0)
        later.pk, later.number, later.decided, later.decided_answers = None, 1, False, None
        later.contenders = [*decided_set, "P-IA@10"]
        later.save()
        page = page_of(study)
        self.assertIn("Contenders the last round steered by: alpha-nDCG@10; ERR-IA@10 = nERR-IA@10; P-IA@10.", page)
        self.assertIn(f"{said}\n    (the contenders above are the best set at the last round: it has changed since;", page)
