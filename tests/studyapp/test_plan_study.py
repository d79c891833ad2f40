"""``manage.py plan_study`` (docs/studyapp.md#planning-a-study): the planning table of a study before recruiting."""

from __future__ import annotations

import io
from decimal import Decimal

from django.core.management import call_command
from django.core.management.base import CommandError

from studyapp.services.analysis.planning import check_plan, plan_study
from tests.studyapp.base import BaseTestCase


class PlanStudyTestCase(BaseTestCase):
    def test_table_costs_and_no_claim_on_two_topics(self) -> None:
        self.study.bonus_amount = Decimal("0.50")
        self.study.save(update_fields=["bonus_amount"])
        result = plan_study(self.study, participants=[1, 4], reward=Decimal("2"), n_sim=3, B=50)
        table = result.table
        self.assertEqual(list(table["participants"]), [1, 4])
        self.assertEqual(list(table["cost"]), [Decimal("2.50"), Decimal("10.00")])  # reward + bonus, per participant
        self.assertEqual(list(table["answers"]), [result.per_participant, 4 * result.per_participant])
        self.assertTrue((table["claim"] == 0).all())  # the toy study has 2 topics: too few for any claim
        self.assertIsNone(result.recommended)
        text = "\n".join(result.lines())
        self.assertIn("Recommended: none in the grid", text)
        self.assertIn("they follow D#-nDCG@10 (signal 2, noise 1, 10% random answers)", text)
        self.assertEqual(check_plan(result, 4, n_sim=2, B=50)["n_sim"], 2)

    def test_command_prints_the_grid_with_a_progress_bar(self) -> None:
        out, err = io.StringIO(), io.StringIO()
        call_command(
            "plan_study",
            self.study.slug,
            "--n-sim",
            "2",
            "--B",
            "50",
            "--reward",
            "1.5",
            "--check",
            "--check-n-sim",
            "2",
            stdout=out,
            stderr=err,
        )
        lines = out.getvalue().splitlines()
        self.assertTrue(lines[0].startswith(f"Plan for {self.study.name!r}: "))
        header = next(i for i, line in enumerate(lines) if line.split()[:1] == ["participants"])
        rows = [line.split() for line in lines[header + 1 :] if line.split() and line.split()[0].isdigit()]
        self.assertGreaterEqual(len(rows), 3)  # fractions of the complete study, deduplicated
        self.assertEqual([int(r[0]) for r in rows], sorted({int(r[0]) for r in rows}))
        self.assertIn("simulating [", err.getvalue())
        self.assertIn("Check at ", out.getvalue())  # no recommendation on 2 topics: the complete study is checked
        self.assertIn("sizes", err.getvalue())

    def test_bad_input(self) -> None:
        for argv, message in (
            (["nope"], "no study named 'nope'"),
            ([self.study.slug, "--reward", "x"], "--reward must be a number"),
            ([self.study.slug, "--n-sim", "0"], "--n-sim and --B >= 1"),
            ([self.study.slug, "--truth", "nope@10", "--n-sim", "1"], "truth measure nope@10 is not among"),
        ):
            with self.assertRaisesMessage(CommandError, message):
                call_command("plan_study", *argv, stdout=io.StringIO(), stderr=io.StringIO())
