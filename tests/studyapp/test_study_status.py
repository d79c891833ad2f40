"""``manage.py study_status``: progress per level, completeness, annotators and annotators still needed."""

from __future__ import annotations

import io
import json

from django.core.management import call_command
from django.core.management.base import CommandError

from studyapp.exceptions import StudyFull
from studyapp.models import Study
from studyapp.services.analysis.status import study_status
from studyapp.services.participation import allocation, flow
from tests.studyapp.base import BaseTestCase, make_toy_study

KEYS = {
    "study", "slug", "status", "collection", "now", "annotators_per_presentation", "items_per_annotator",
    "check_items_per_annotator", "presentations", "answers", "complete", "over_covered", "slots", "live_leases",
    "annotators", "annotators_needed", "unfillable_slots", "unfillable_reason", "progress", "allocation",
}  # fmt: skip


class StudyStatusTestCase(BaseTestCase):
    def test_a_fresh_study(self) -> None:
        report = study_status(self.study, now=self.now)
        self.assertEqual(set(report), KEYS)
        self.assertEqual(report["presentations"], {"topic": 6, "subtopic": 12, "check": 0, "total": 18})
        self.assertEqual(report["slots"], {"needed": 36, "filled": 0, "leased": 0, "open": 36})
        self.assertEqual(report["annotators_needed"], 6)
        self.assertEqual(report["unfillable_slots"], {"topic": 0, "subtopic": 0, "total": 0, "presentations": 0})
        self.assertEqual(report["unfillable_reason"], "")
        self.assertEqual(report["progress"], 0.0)

    def test_progress_after_work(self) -> None:
        alice, bob = self.arrive("alice"), self.arrive("bob")
        self.answer_all(alice)
        allocation.current_assignment(bob, now=self.now, rng=self.rng)
        report = study_status(self.study, now=self.later(minutes=1))
        self.assertEqual(report["answers"]["total"], 6)
        self.assertEqual(report["answers"]["topic"] + report["answers"]["subtopic"], 6)
        self.assertEqual(report["slots"], {"needed": 36, "filled": 6, "leased": 6, "open": 24})
        self.assertEqual(report["annotators"]["finished"], 1)
        self.assertEqual(report["annotators"]["active"], 1)
        self.assertEqual(report["annotators"]["active_now"], 1)
        self.assertEqual(report["annotators_needed"], 4)
        # an hour later bob's leases have expired: his items count as open again
        later = study_status(self.study, now=self.later(hours=1))
        self.assertEqual((later["slots"]["leased"], later["slots"]["open"], later["annotators"]["active_now"]), (0, 30, 0))

    def test_complete_presentations(self) -> None:
        for name in ("alice", "bob", "carol", "erin", "frank", "grace"):
            self.answer_all(self.arrive(name))
        report = study_status(self.study, now=self.later(hours=1))
        self.assertEqual(report["complete"], {"topic": 6, "subtopic": 12, "total": 18})
        self.assertEqual((report["progress"], report["annotators_needed"], report["over_covered"]), (1.0, 0, 0))

    def fill(self, study: Study, prefix: str = "tail") -> int:
        """Admit and finish annotators until admission refuses one; returns how many were admitted."""
        for n in range(100):
            try:
                annotator = self.arrive(f"{prefix}-{n}", study=study)
            except StudyFull:
                return n
            self.answer_all(annotator)
        raise AssertionError("the study never filled")

    def test_the_tail_that_no_full_quota_can_hold_is_reported(self) -> None:
        # 36 answer slots, 9 items each: ceil(36 / 9) = 4 would be the naive estimate, but with one level
        # per (topic, pair) only 3 newcomers get a full quota and 9 slots stay open for good.
        tail = make_toy_study("Tail study", items_per_annotator=9)
        before = study_status(tail, now=self.now)
        self.assertEqual(before["annotators_needed"], 3)
        self.assertEqual(before["unfillable_slots"]["total"], 9)
        self.assertEqual(self.fill(tail), before["annotators_needed"])  # a simulation of admission: right here
        report = study_status(tail, now=self.later(hours=1))
        self.assertEqual(report["annotators_needed"], 0)
        unfillable = report["unfillable_slots"]
        self.assertEqual(unfillable["total"], report["slots"]["open"])
        self.assertEqual(unfillable["topic"] + unfillable["subtopic"], 9)
        self.assertLessEqual(unfillable["presentations"], 9)
        self.assertIn(
            f"after 0 more annotators, 9 open answer slots on {unfillable['presentations']} presentations fit no full quota",
            report["unfillable_reason"],
        )
        self.assertIn("of the 9 regular items a newcomer needs (never the same presentation twice, one level per topic and run pair)",
                      report["unfillable_reason"])  # fmt: skip
        with self.assertRaises(StudyFull):  # the entry page agrees: refused before consent
            flow.check_room(tail, now=self.later(hours=1))
        out = io.StringIO()
        call_command("study_status", "tail-study", stdout=out)
        self.assertIn("still needed         0 annotators who get a full quota", out.getvalue())
        self.assertIn(f"unfillable           topic {unfillable['topic']}, subtopic {unfillable['subtopic']}, total 9:", out.getvalue())

    def test_lowering_the_quota_lets_newcomers_take_the_tail(self) -> None:
        tail = make_toy_study("Tail study", items_per_annotator=9)
        self.fill(tail)
        Study.objects.filter(pk=tail.pk).update(items_per_annotator=1)
        tail.refresh_from_db()
        report = study_status(tail, now=self.later(hours=1))
        self.assertEqual((report["annotators_needed"], report["unfillable_slots"]["total"], report["unfillable_reason"]), (9, 0, ""))
        self.assertEqual(self.fill(tail, prefix="short"), 9)
        self.assertEqual(study_status(tail, now=self.later(hours=2))["progress"], 1.0)

    def test_the_command_prints_text_and_json(self) -> None:
        self.arrive("alice")
        out = io.StringIO()
        call_command("study_status", "toy-study", stdout=out)
        self.assertIn("presentations        topic 6, subtopic 12, check 0, total 18", out.getvalue())
        self.assertIn("/s/toy-study/", out.getvalue())
        out = io.StringIO()
        call_command("study_status", "Toy study", "--format", "json", stdout=out)
        report = json.loads(out.getvalue())
        self.assertEqual(set(report), KEYS)
        self.assertEqual(report["annotators"]["active"], 1)

    def test_it_says_which_allocation_runs_and_what_an_adaptive_one_needs(self) -> None:
        self.assertEqual(study_status(self.study, now=self.now)["allocation"], {"kind": "uniform"})
        adaptive = make_toy_study(name="Adaptive status", allocation="adaptive", levels=["topic"], items_per_annotator=3)
        self.assertEqual(study_status(adaptive, now=self.now)["allocation"], {"kind": "adaptive", "rounds": 0, "decided": False})
        out = io.StringIO()
        call_command("study_status", adaptive.slug, stdout=out)
        self.assertIn(
            f"adaptive: 0 rounds drawn, not decided; run manage.py allocation_priorities {adaptive.slug} --every 30", out.getvalue()
        )
        call_command("allocation_priorities", adaptive.slug, stdout=io.StringIO())
        self.assertEqual(study_status(adaptive, now=self.now)["allocation"], {"kind": "adaptive", "rounds": 1, "decided": False})
        out = io.StringIO()
        call_command("study_status", adaptive.slug, stdout=out)
        self.assertIn("allocation           adaptive: 1 round drawn, not decided\n", out.getvalue() + "\n")

    def test_an_unknown_study_is_an_error(self) -> None:
        with self.assertRaisesMessage(CommandError, "no study named 'nope' (known: Toy study)"):
            call_command("study_status", "nope")
