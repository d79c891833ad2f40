"""``manage.py study_status``: progress per level, completeness, annotators and annotators still needed."""

from __future__ import annotations

import io
import json

from django.core.management import call_command
from django.core.management.base import CommandError

from studyapp.services import assignment as engine
from studyapp.services.status import study_status
from tests.studyapp.base import BaseTestCase

KEYS = {
    "study", "slug", "status", "collection", "now", "annotators_per_presentation", "items_per_annotator",
    "check_items_per_annotator", "presentations", "answers", "complete", "over_covered", "slots", "live_leases",
    "annotators", "annotators_needed", "progress",
}  # fmt: skip


class StudyStatusTestCase(BaseTestCase):
    def test_a_fresh_study(self) -> None:
        report = study_status(self.study, now=self.now)
        self.assertEqual(set(report), KEYS)
        self.assertEqual(report["presentations"], {"topic": 6, "subtopic": 12, "check": 0, "total": 18})
        self.assertEqual(report["slots"], {"needed": 36, "filled": 0, "leased": 0, "open": 36})
        self.assertEqual(report["annotators_needed"], 6)
        self.assertEqual(report["progress"], 0.0)

    def test_progress_after_work(self) -> None:
        alice, bob = self.arrive("alice"), self.arrive("bob")
        self.answer_all(alice)
        engine.current_assignment(bob, now=self.now, rng=self.rng)
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

    def test_an_unknown_study_is_an_error(self) -> None:
        with self.assertRaisesMessage(CommandError, "no study named 'nope' (known: Toy study)"):
            call_command("study_status", "nope")
