"""``/s/<slug>/check/``: the comprehension check, two attempts (Prolific's rule), then screened out."""

from __future__ import annotations

import re

from studyapp.models import Annotator
from studyapp.services.participation import allocation
from tests.studyapp.annotator_base import RIGHT_ANSWERS, WRONG_ANSWERS, AnnotatorTestCase


class ComprehensionTestCase(AnnotatorTestCase):
    def setUp(self) -> None:
        super().setUp()
        self.carol_client = self.fresh_client()
        self.carol = self.consent(self.carol_client, "carol")
        self.carol_client.post(self.url("study_instructions"))
        self.carol_client.post(self.url("study_practice"), {"value": 2})

    def check(self, answers: dict):
        return self.carol_client.post(self.url("study_comprehension"), answers)

    def drawn(self, response) -> bool:
        return "studyapp/annotator/_questions.html" in [t.name for t in response.templates]

    def test_unanswered_questions_are_drawn_once_and_answered_ones_each_time(self) -> None:
        first = self.carol_client.get(self.url("study_comprehension"))
        again = self.carol_client.get(self.url("study_comprehension"))  # (no settings change here: it would reset the templates)
        self.assertFalse(self.drawn(again))  # the drawing of an earlier page, repeated
        questions = re.compile(r'<fieldset class="question.*</fieldset>', re.S)
        self.assertEqual(questions.search(again.content.decode()).group(0), questions.search(first.content.decode()).group(0))
        failed = self.check({**RIGHT_ANSWERS, "answer": "same"})
        self.assertTrue(self.drawn(failed))  # the right answers kept and the wrong one marked: this participant's
        self.assertContains(failed, 'class="question wrong"', count=1)
        self.assertContains(failed, "checked", count=len(RIGHT_ANSWERS) - 1)

    def test_it_shows_the_questions(self) -> None:
        response = self.carol_client.get(self.url("study_comprehension"))
        self.assertContains(response, "Attempt 1 of 2")
        self.assertContains(response, "What do you compare on each page")
        self.assertContains(response, 'type="radio"', count=9)

    def test_passing_at_once_leads_to_the_items(self) -> None:
        self.assertRedirects(self.check(RIGHT_ANSWERS), self.url("study_next_item"), fetch_redirect_response=False)
        self.carol.refresh_from_db()
        self.assertEqual(self.carol.comprehension_attempts, 1)
        self.assertIsNotNone(self.carol.comprehension_passed_at)

    def test_a_failed_first_attempt_gets_a_second_one(self) -> None:
        response = self.check({**RIGHT_ANSWERS, "answer": "same"})
        self.assertContains(response, "Your answer to question 2 was not right (marked below); your other answers are kept.")
        self.assertContains(response, "(1 attempt left)")
        self.assertContains(response, "Summary of the instructions")
        self.assertContains(response, "Attempt 2 of 2")
        html = response.content.decode()
        self.assertEqual(re.findall(r'value="(\w+)"[^>]*checked', html), ["lists", "equal"])  # the right answers stay chosen
        self.assertEqual(re.findall(r'data-question="(\w+)"[^>]*aria-describedby', html), ["answer"])  # the wrong one is marked
        self.assertContains(response, "This answer was not right. Please choose again.", count=1)
        self.assertRedirects(self.check(RIGHT_ANSWERS), self.url("study_next_item"), fetch_redirect_response=False)
        self.carol.refresh_from_db()
        self.assertEqual((self.carol.comprehension_attempts, self.carol.status), (2, Annotator.Status.ACTIVE))

    def test_every_wrong_answer_is_named_and_cleared(self) -> None:
        response = self.check(WRONG_ANSWERS)
        self.assertContains(response, "None of your answers was right: questions 1, 2 and 3 are marked below.")
        self.assertNotContains(response, "other answers are kept")  # there are none
        self.assertNotContains(response, "checked")
        self.assertContains(response, "This answer was not right. Please choose again.", count=3)

    def test_failing_twice_screens_out_and_frees_the_items(self) -> None:
        room = allocation.capacity(self.study).open_slots
        self.check(WRONG_ANSWERS)
        response = self.check(WRONG_ANSWERS)
        self.assertContains(response, "did not match the instructions twice")
        self.assertContains(response, "return the study")
        self.assertNotContains(response, "TOYDONE")
        self.carol.refresh_from_db()
        self.assertEqual(self.carol.status, Annotator.Status.SCREENED)
        self.assertEqual(self.carol.exclusion_reason, "failed the comprehension check twice")
        self.assertEqual(allocation.capacity(self.study).open_slots, room + self.study.regular_items_per_annotator)
        for name in ("study_next_item", "study_comprehension", "study_done"):
            with self.subTest(page=name):
                self.assertContains(self.carol_client.get(self.url(name), follow=True), "did not match the instructions twice")
        self.assertContains(
            self.fresh_client().get(self.entry(PROLIFIC_PID="carol", SESSION_ID="s-carol")), "did not match the instructions twice"
        )

    def test_an_incomplete_form_uses_no_attempt(self) -> None:
        response = self.check({"compare": "lists"})
        self.assertContains(response, "Please answer every question", status_code=400)
        self.carol.refresh_from_db()
        self.assertEqual(self.carol.comprehension_attempts, 0)

    def test_the_items_stay_closed_until_it_is_passed(self) -> None:
        self.assertRedirects(
            self.carol_client.get(self.url("study_next_item")), self.url("study_comprehension"), fetch_redirect_response=False
        )

    def test_it_requires_a_csrf_token(self) -> None:
        client = self.fresh_client(enforce_csrf_checks=True)
        client.get(self.entry(PROLIFIC_PID="carol", SESSION_ID="s-carol"))
        self.assertEqual(client.post(self.url("study_comprehension"), RIGHT_ANSWERS).status_code, 403)
        self.carol.refresh_from_db()
        self.assertEqual(self.carol.comprehension_attempts, 0)
