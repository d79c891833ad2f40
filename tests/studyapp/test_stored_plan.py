"""The stored plan (``StoredPlan``): ``plan_study`` stores its table for the set-up page, ``plan_study --from-data``
stores the projection from the answers so far for the dashboard; neither page simulates."""

from __future__ import annotations

import io
from datetime import timedelta
from unittest import mock

from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse
from django.utils import timezone
from django.utils.html import escape

from studyapp.models import StoredPlan
from studyapp.services.analysis import stored_plan as stored
from tests.studyapp import test_staff_dashboard as dashboard_tests
from tests.studyapp.base import BaseTestCase
from tests.studyapp.test_preview import fill_by_truth, synthetic_study

FAST = ["--n-sim", "2", "--B", "50"]


def run(*argv: str) -> str:
    out = io.StringIO()
    call_command("plan_study", *argv, stdout=out, stderr=io.StringIO())
    return out.getvalue()


class SetupPagePlanTests(BaseTestCase):
    def page(self) -> str:
        response = dashboard_tests.staff_client().get(reverse("staff_study_setup", args=[self.study.slug]))
        self.assertEqual(response.status_code, 200)
        return response.content.decode()

    def test_without_a_plan_the_page_gives_the_command(self) -> None:
        html = self.page()
        self.assertIn("No plan stored yet.", html)
        self.assertIn(f"<code>python manage.py plan_study {self.study.slug}</code>", html)
        self.assertNotIn("plan-table", html)

    def test_the_command_stores_the_table_the_page_shows(self) -> None:
        out = run(self.study.slug, *FAST, "--participants", "1", "3", "--signal", "1.5")
        self.assertIn("Stored for the set-up page (design).", out)
        plan = StoredPlan.objects.get(study=self.study)
        self.assertEqual(plan.kind, StoredPlan.Kind.DESIGN)
        self.assertEqual([r["participants"] for r in plan.table], [1, 3])
        self.assertEqual(plan.assumptions["signal"], 1.5)
        self.assertEqual(plan.assumptions["truth"], "D#-nDCG@10")
        self.assertEqual(plan.assumptions["n_sim"], 2)
        self.assertTrue(plan.summary.startswith("Recommended: none in the grid"), plan.summary)  # 2 topics: no claim
        self.assertIsNone(plan.table[0]["best_set_size"])  # NaN (no claim) is stored as null, not as invalid JSON
        html = self.page()
        self.assertNotIn("No plan stored yet.", html)
        self.assertEqual(html.count('<tr><td class="num">'), 2)  # one row per participant count
        self.assertIn("assumed users follow D#-nDCG@10 (signal 1.50", html)
        self.assertIn(escape(plan.summary), html)
        self.assertNotIn("nan", html.lower().replace("nanoseconds", ""))
        # a second run replaces the first (one row per study and kind)
        run(self.study.slug, *FAST, "--participants", "2")
        self.assertEqual(StoredPlan.objects.filter(study=self.study).count(), 1)
        self.assertEqual([r["participants"] for r in StoredPlan.objects.get(study=self.study).table], [2])

    def test_the_page_never_simulates(self) -> None:
        run(self.study.slug, *FAST, "--participants", "1")
        with mock.patch("studyapp.services.analysis.planning.plan", side_effect=AssertionError("simulated in the request")):
            self.assertIn("plan-table", self.page())

    def test_bad_input(self) -> None:
        with self.assertRaisesMessage(ValueError, "plan kind must be one of"):
            stored.store_plan(mock.Mock(), "later", "x")
        with self.assertRaisesMessage(CommandError, "--from-data estimates the users from the answers: drop --truth, --noise"):
            run(self.study.slug, "--from-data", "--truth", "nERR-IA@10", "--noise", "2")
        with self.assertRaisesMessage(CommandError, "cannot estimate the users from the answers so far: No valid answers yet."):
            run(self.study.slug, "--from-data", *FAST)
        self.assertFalse(StoredPlan.objects.exists())  # nothing half-written


class DashboardProjectionTests(BaseTestCase):
    def test_projection_from_the_answers_is_stored_and_shown_with_its_age(self) -> None:
        study = synthetic_study("projection")
        fill_by_truth(study, [f"proj-{n}" for n in range(6)], noise=0.3, seed=3)
        client = dashboard_tests.staff_client()
        html = client.get(reverse("staff_study", args=[study.slug])).content.decode()
        self.assertIn(f"<code>python manage.py plan_study {study.slug} --from-data</code>", html)
        out = run(study.slug, "--from-data", *FAST, "--participants", "3", "6", "9", "12")
        found = StoredPlan.objects.get(study=study, kind=StoredPlan.Kind.DATA)
        self.assertIn(found.summary, out)
        self.assertEqual(found.answers, 6 * 24)  # 6 participants x 24 regular answers
        self.assertEqual(found.assumptions["random_share"], 0.0)  # fitted noise absorbs random answers
        self.assertNotEqual(found.assumptions["signal"], 2.0)  # fitted, not the design's default
        self.assertRegex(
            found.summary, r"^(About \d+ more participants \(\d+ in all\) to separate |The 6 participants so far |No size in the grid)"
        )
        self.assertIn(f"users following {found.assumptions['truth']} (the leader by MUP so far)", found.summary)
        StoredPlan.objects.filter(pk=found.pk).update(computed_at=timezone.now() - timedelta(hours=3))
        html = client.get(reverse("staff_study", args=[study.slug])).content.decode()
        self.assertIn(escape(found.summary), html)
        self.assertIn("Computed 3\xa0hours ago", html)
        self.assertIn("from 144 valid answers,", html)  # as many as now: no note
        StoredPlan.objects.filter(pk=found.pk).update(answers=100)
        html = client.get(reverse("staff_study", args=[study.slug])).content.decode()
        self.assertIn("from 100 valid answers (144 now)", html)  # answers arrived since: the page says so


class ProjectionSentenceTests(BaseTestCase):
    def sentence(self, single: list[float], now: int) -> str:
        import pandas as pd

        table = pd.DataFrame({"participants": [4, 8, 16], "single_entry": single})
        rec = next((i for i, s in enumerate(single) if s >= 0.8), None)
        plan = mock.Mock(table=table, recommended=rec, level="topic", model=mock.Mock(signal=1.234, noise=0.5))
        return stored.Projection(plan, 40, 30, "topic", now, "A@10", "B@10").sentence

    def test_more_enough_and_none(self) -> None:
        self.assertEqual(
            self.sentence([0.1, 0.9, 1.0], now=3),
            "About 5 more participants (8 in all) to separate A@10 from B@10, assuming users following A@10 (the leader by MUP so far) "
            "with signal 1.23 and noise 0.50 fitted to the 30 topic-level answers.",
        )
        self.assertTrue(
            self.sentence([0.1, 0.9, 1.0], now=8).startswith("The 8 participants so far should be enough to separate A@10 from B@10")
        )
        self.assertTrue(
            self.sentence([0.1, 0.2, 0.5], now=3).startswith(
                "No size in the grid (up to 16 participants) separates A@10 from B@10: the best set is a single entry in at most 50%"
            )
        )
