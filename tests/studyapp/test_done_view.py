"""``/s/<slug>/done/``: the completion code and redirect, only after the server stored the last answer."""

from __future__ import annotations

from studyapp.models import Annotator, Study
from tests.studyapp.annotator_base import AnnotatorTestCase

PROLIFIC = "https://app.prolific.com/submissions/complete?cc={code}"


class DoneTestCase(AnnotatorTestCase):
    def test_it_is_closed_until_every_item_is_answered(self) -> None:
        self.assertRedirects(self.client.get(self.url("study_done")), self.url("study_next_item"), fetch_redirect_response=False)
        item = self.serve(self.client)
        self.answer(self.client, item)
        response = self.client.get(self.url("study_done"), follow=True)
        self.assertNotContains(response, "TOYDONE")

    def test_it_shows_the_code_after_the_last_answer(self) -> None:
        self.answer_everything(self.client)
        response = self.client.get(self.url("study_done"))
        self.assertContains(response, "TOYDONE")
        self.assertContains(response, "All your answers are saved")
        self.assertNotContains(response, 'http-equiv="refresh"')

    def test_a_prolific_study_redirects_with_the_code(self) -> None:
        Study.objects.filter(pk=self.study.pk).update(redirect_url=PROLIFIC)
        self.answer_everything(self.client)
        response = self.client.get(self.url("study_done"))
        target = "https://app.prolific.com/submissions/complete?cc=TOYDONE"
        self.assertContains(response, f'<meta http-equiv="refresh" content="3;url={target}">')
        self.assertContains(response, f'href="{target}"')
        self.assertContains(response, "Return to Prolific now")

    def test_mturk_workers_get_the_submit_form_only_even_in_a_prolific_study(self) -> None:
        Study.objects.filter(pk=self.study.pk).update(redirect_url=PROLIFIC)
        client = self.finish(workerId="W1", assignmentId="ASG1", hitId="H1", turkSubmitTo="https://www.mturk.com")
        response = client.get(self.url("study_done"))
        self.assertContains(response, 'action="https://www.mturk.com/mturk/externalSubmit"')
        self.assertContains(response, 'name="assignmentId" value="ASG1"')
        self.assertContains(response, 'name="completionCode" value="TOYDONE"')
        self.assertContains(response, "<button", count=1)
        for absent in ("prolific", 'http-equiv="refresh"'):
            self.assertNotContains(response, absent)
        self.assertContains(response, "<a ", count=1)  # the only link: withdrawing (docs/annotator.md#withdrawing)
        self.assertContains(response, f'<a class="withdraw-link" href="{self.url("study_withdraw")}">')

    def test_an_mturk_worker_without_the_submit_parameters_gets_the_code_for_mturk(self) -> None:
        Study.objects.filter(pk=self.study.pk).update(redirect_url=PROLIFIC)
        response = self.finish(workerId="W2").get(self.url("study_done"))
        self.assertContains(response, "TOYDONE")
        self.assertContains(response, "Please enter this code on MTurk")
        self.assertNotContains(response, "prolific")
        self.assertNotContains(response, "<form")

    def test_an_anonymous_participant_sees_the_code_and_is_not_sent_to_prolific(self) -> None:
        Study.objects.filter(pk=self.study.pk).update(redirect_url=PROLIFIC)
        response = self.finish().get(self.url("study_done"))
        self.assertContains(response, 'id="completion-code">TOYDONE<')
        self.assertContains(response, "Please keep this code")
        self.assertNotContains(response, "prolific")
        self.assertNotContains(response, 'http-equiv="refresh"')

    def test_a_prolific_participant_without_a_redirect_url_gets_the_code_for_prolific(self) -> None:
        self.answer_everything(self.client)
        response = self.client.get(self.url("study_done"))
        self.assertContains(response, "Please enter this code on Prolific")

    def test_a_finished_annotator_keeps_the_code_when_the_study_closes(self) -> None:
        self.answer_everything(self.client)
        Study.objects.filter(pk=self.study.pk).update(status=Study.Status.CLOSED)
        self.assertContains(self.client.get(self.url("study_done")), "TOYDONE")
        self.assertEqual(Annotator.objects.get(pk=self.alice.pk).status, Annotator.Status.FINISHED)

    def test_it_needs_the_session(self) -> None:
        self.assertContains(self.fresh_client().get(self.url("study_done")), "Your session has ended", status_code=403)
