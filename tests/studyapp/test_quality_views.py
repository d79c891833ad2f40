"""What excluded annotators see: the "excluded" page mid-study, their completion page once finished."""

from __future__ import annotations

import json

from studyapp.models import Annotator, QualityDecision, Study
from studyapp.services.quality import control
from tests.studyapp.annotator_base import AnnotatorTestCase


class ExcludedPagesTestCase(AnnotatorTestCase):
    def setUp(self) -> None:
        super().setUp()
        # The test client answers within milliseconds: every decision is fast.
        Study.objects.filter(pk=self.study.pk).update(fast_limit=2)

    def test_the_answer_that_crosses_the_limit_leads_to_the_excluded_page(self) -> None:
        replies = [json.loads(self.answer(self.client, self.serve(self.client), request_id=f"req-{n:04d}").content) for n in range(2)]
        self.assertEqual(replies[1]["step"], "items")
        crossing = json.loads(self.answer(self.client, self.serve(self.client), request_id="req-0003").content)
        self.assertEqual((crossing["stored"], crossing["step"], crossing["finished"]), (True, "excluded", False))
        page = self.client.get(crossing["next"])
        # Why (the rule with the study's numbers) and what to do (by default: return the study).
        reason = "more than 2 of your answers took less than 10 seconds each"
        self.assertContains(page, reason)
        self.assertContains(page, 'data-reason="fast"')
        self.assertContains(page, "Please return the study on your platform")
        self.assertNotContains(page, "TOYDONE")
        for name in ("study_next_item", "study_done"):  # every other page leads there too
            self.assertContains(self.client.get(self.url(name), follow=True), reason)
        self.assertEqual(Annotator.objects.get(pk=self.alice.pk).status, Annotator.Status.EXCLUDED)
        self.assertEqual(QualityDecision.objects.get().rule, "fast")

    def test_an_annotator_excluded_after_finishing_keeps_the_completion_code(self) -> None:
        Study.objects.filter(pk=self.study.pk).update(fast_limit=30)
        self.answer_everything(self.client)
        Study.objects.filter(pk=self.study.pk).update(fast_limit=2)
        report = control.quality_check(Study.objects.get(pk=self.study.pk))
        self.assertIn(self.alice.pk, [s.annotator_id for s, _ in report.excluded])
        for name in ("study_done", "study_next_item", "study_entry"):
            page = self.client.get(self.url(name), follow=True)
            self.assertContains(page, "TOYDONE")
            self.assertNotContains(page, "return the study")

    def test_excluded_on_the_last_answer_the_reply_leads_to_the_completion_page(self) -> None:
        Study.objects.filter(pk=self.study.pk).update(fast_limit=5)
        reply = self.answer_everything(self.client)
        self.assertEqual((reply["step"], reply["finished"]), ("done", True))
        self.assertEqual(Annotator.objects.get(pk=self.alice.pk).status, Annotator.Status.EXCLUDED)
        self.assertContains(self.client.get(reply["next"]), "TOYDONE")
