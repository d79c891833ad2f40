"""``/s/<slug>/instructions/``: the study's instructions with an annotated example; reading them leads to the practice."""

from __future__ import annotations

from studyapp.models import Study
from tests.studyapp.annotator_base import AnnotatorTestCase


class InstructionsTestCase(AnnotatorTestCase):
    def setUp(self) -> None:
        super().setUp()
        self.carol_client = self.fresh_client()
        self.carol = self.consent(self.carol_client, "carol")

    def test_it_shows_the_instructions_and_an_annotated_example(self) -> None:
        Study.objects.filter(pk=self.study.pk).update(instructions="Imagine you typed the query <i>yourself</i>.")
        response = self.carol_client.get(self.url("study_instructions"))
        self.assertContains(response, "Imagine you typed the query &lt;i&gt;yourself&lt;/i&gt;.")
        self.assertContains(response, "An example, explained")
        self.assertContains(response, 'class="callouts"')
        self.assertContains(response, "Left / A")
        self.assertContains(response, "Right / B")
        self.assertContains(response, f'data-heartbeat-url="{self.url("study_heartbeat")}"')

    def test_reading_them_leads_to_the_practice(self) -> None:
        response = self.carol_client.post(self.url("study_instructions"))
        self.assertRedirects(response, self.url("study_practice"))
        self.carol.refresh_from_db()
        self.assertIsNotNone(self.carol.instructions_read_at)

    def test_the_items_wait_until_the_onboarding_is_done(self) -> None:
        for name in ("study_next_item", "study_practice", "study_comprehension", "study_done"):
            with self.subTest(page=name):
                self.assertRedirects(self.carol_client.get(self.url(name)), self.url("study_instructions"), fetch_redirect_response=False)

    def test_it_needs_the_annotator_session(self) -> None:
        response = self.fresh_client().get(self.url("study_instructions"))
        self.assertContains(response, "Your session has ended", status_code=403)

    def test_later_annotators_are_sent_on(self) -> None:
        self.assertRedirects(self.client.get(self.url("study_instructions")), self.url("study_next_item"), fetch_redirect_response=False)

    def test_it_requires_a_csrf_token(self) -> None:
        client = self.fresh_client(enforce_csrf_checks=True)
        client.get(self.entry(PROLIFIC_PID="carol", SESSION_ID="s-carol"))  # resumes carol in a browser without the form's token
        response = client.post(self.url("study_instructions"))
        self.assertEqual(response.status_code, 403)
        self.carol.refresh_from_db()
        self.assertIsNone(self.carol.instructions_read_at)
