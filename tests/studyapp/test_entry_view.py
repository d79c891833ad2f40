"""``/s/<slug>/``: platform parameters, resuming, MTurk preview, capacity before consent, friendly pages."""

from __future__ import annotations

from studyapp.models import Annotator, Study
from tests.studyapp.annotator_base import AnnotatorTestCase


class StudyEntryTestCase(AnnotatorTestCase):
    def test_a_newcomer_goes_to_the_consent_and_nothing_is_stored_yet(self) -> None:
        client = self.fresh_client()
        before = Annotator.objects.count()
        response = client.get(self.entry(PROLIFIC_PID="carol", STUDY_ID="toy", SESSION_ID="s1"))
        self.assertRedirects(response, self.url("study_consent"), fetch_redirect_response=False)
        self.assertEqual(Annotator.objects.count(), before)

    def test_prolific_ids_are_stored_with_the_consent(self) -> None:
        self.assertEqual(self.alice.platform, "prolific")
        self.assertEqual(self.alice.external_id, "alice")
        self.assertEqual(self.alice.external_ids, {"PROLIFIC_PID": "alice", "STUDY_ID": "toy", "SESSION_ID": "s-alice"})

    def test_mturk_ids_make_an_mturk_annotator(self) -> None:
        client = self.fresh_client()
        client.get(self.entry(workerId="W123", assignmentId="A9", hitId="H1", turkSubmitTo="https://workersandbox.mturk.com"))
        client.post(self.url("study_consent"), {"agree": "on", "version": self.study.consent_version})
        carol = Annotator.objects.get(platform="mturk", external_id="W123")
        self.assertEqual(carol.external_ids["turkSubmitTo"], "https://workersandbox.mturk.com")
        self.assertEqual(carol.external_ids["assignmentId"], "A9")

    def test_no_parameters_make_an_anonymous_annotator(self) -> None:
        client = self.fresh_client()
        client.get(self.entry())
        client.post(self.url("study_consent"), {"agree": "on", "version": self.study.consent_version})
        newest = Annotator.objects.latest("created_at")
        self.assertEqual((newest.platform, newest.external_id), ("", ""))

    def test_the_same_participant_resumes_in_another_browser(self) -> None:
        elsewhere = self.fresh_client()
        response = elsewhere.get(self.entry(PROLIFIC_PID="alice", STUDY_ID="toy", SESSION_ID="s-alice"))
        self.assertRedirects(response, self.url("study_next_item"), fetch_redirect_response=False)
        self.assertEqual(self.session_token(elsewhere), self.alice.token)
        self.assertEqual(Annotator.objects.filter(external_id="alice").count(), 1)

    def test_a_participant_half_way_through_the_onboarding_resumes_there(self) -> None:
        client = self.fresh_client()
        self.consent(client, "carol")
        response = self.fresh_client().get(self.entry(PROLIFIC_PID="carol", SESSION_ID="s-carol"))
        self.assertRedirects(response, self.url("study_instructions"), fetch_redirect_response=False)

    def test_the_same_id_on_another_platform_is_another_person(self) -> None:
        client = self.fresh_client()
        client.get(self.entry(workerId="alice", assignmentId="A1", hitId="H1"))
        client.post(self.url("study_consent"), {"agree": "on", "version": self.study.consent_version})
        self.assertEqual(Annotator.objects.filter(external_id="alice").count(), 2)

    def test_a_new_id_in_a_browser_used_before_starts_afresh(self) -> None:
        response = self.client.get(self.entry(PROLIFIC_PID="carol"))
        self.assertRedirects(response, self.url("study_consent"), fetch_redirect_response=False)
        self.assertEqual(self.session_token(self.client), "")

    def test_mturk_preview_shows_the_task_only(self) -> None:
        client = self.fresh_client()
        before = Annotator.objects.count()
        response = client.get(self.entry(assignmentId="ASSIGNMENT_ID_NOT_AVAILABLE", hitId="H1"))
        self.assertContains(response, "This is a preview")
        self.assertContains(response, "You will judge 6 pairs")
        self.assertNotContains(response, "<form")
        self.assertNotContains(response, "csrfmiddlewaretoken")
        self.assertEqual(Annotator.objects.count(), before)
        self.assertEqual(self.session_token(client), "")

    def test_a_full_study_refuses_politely_before_consent_with_the_screenout_code(self) -> None:
        for name in ("carol", "dave", "erin", "frank"):  # alice, bob and these four fill the 6 places
            self.consent(self.fresh_client(), name)
        before = Annotator.objects.count()
        response = self.fresh_client().get(self.entry(PROLIFIC_PID="grace"))
        self.assertContains(response, "This study is full")
        self.assertContains(response, "TOYFULL")
        self.assertEqual(Annotator.objects.count(), before)

    def test_only_a_prolific_newcomer_of_a_full_study_is_sent_to_prolific(self) -> None:
        Study.objects.filter(pk=self.study.pk).update(redirect_url="https://app.prolific.com/submissions/complete?cc={code}")
        for name in ("carol", "dave", "erin", "frank"):
            self.consent(self.fresh_client(), name)
        link = 'href="https://app.prolific.com/submissions/complete?cc=TOYFULL"'
        self.assertContains(self.fresh_client().get(self.entry(PROLIFIC_PID="grace")), link)
        for params in ({"workerId": "W9", "assignmentId": "A9", "hitId": "H9"}, {}):
            with self.subTest(params=params):
                response = self.fresh_client().get(self.entry(**params))
                self.assertContains(response, "This study is full")
                self.assertContains(response, "TOYFULL")
                self.assertNotContains(response, "prolific")

    def test_closed_and_paused_studies_take_no_newcomers(self) -> None:
        for status, text in ((Study.Status.CLOSED, "This study is closed"), (Study.Status.PAUSED, "This study is paused")):
            with self.subTest(status=status):
                Study.objects.filter(pk=self.study.pk).update(status=status)
                response = self.fresh_client().get(self.entry(PROLIFIC_PID="carol"))
                self.assertContains(response, text)
                self.assertFalse(Annotator.objects.filter(external_id="carol").exists())

    def test_a_paused_study_lets_its_annotators_go_on_and_a_closed_one_does_not(self) -> None:
        Study.objects.filter(pk=self.study.pk).update(status=Study.Status.PAUSED)
        self.assertRedirects(self.client.get(self.entry()), self.url("study_next_item"), fetch_redirect_response=False)
        Study.objects.filter(pk=self.study.pk).update(status=Study.Status.CLOSED)
        self.assertContains(self.client.get(self.entry()), "This study is closed")
        self.assertContains(self.client.get(self.url("study_next_item")), "This study is closed")

    def test_an_unknown_study_is_a_friendly_404(self) -> None:
        for url in ("/s/no-such-study/", "/s/no-such-study/consent/", "/s/no-such-study/item/1/"):
            with self.subTest(url=url):
                response = self.client.get(url)
                self.assertContains(response, "Study not found", status_code=404)
                self.assertNotContains(response, "Traceback", status_code=404)

    def test_a_malformed_link_is_a_friendly_400(self) -> None:
        response = self.fresh_client().get(self.entry(PROLIFIC_PID="<script>"))
        self.assertContains(response, "This link is not valid", status_code=400)
        response = self.fresh_client().get(self.entry(workerId="W1", assignmentId="A1", turkSubmitTo="https://evil.example"))
        self.assertContains(response, "This link is not valid", status_code=400)

    def test_an_empty_platform_id_is_a_bad_link_not_an_anonymous_participant(self) -> None:
        cases = [
            ("PROLIFIC_PID=&STUDY_ID=s1&SESSION_ID=x1", "no Prolific participant id (PROLIFIC_PID is empty)"),
            ("PROLIFIC_PID=", "no Prolific participant id"),
            ("STUDY_ID=s1&SESSION_ID=x1", "no Prolific participant id"),
            ("workerId=&assignmentId=A1&hitId=H1&turkSubmitTo=https://www.mturk.com", "no MTurk worker id (workerId is empty)"),
        ]
        before = Annotator.objects.count()
        for query, problem in cases:
            with self.subTest(query=query):
                client = self.fresh_client()
                response = client.get(self.url("study_entry") + "?" + query)
                self.assertContains(response, "This link is not valid", status_code=400)
                self.assertContains(response, problem, status_code=400)
                self.assertContains(response, "Please open the study again from your platform.", status_code=400)
                self.assertRedirects(client.get(self.url("study_consent")), self.url("study_entry"), fetch_redirect_response=False)
        self.assertEqual(Annotator.objects.count(), before)
        # the MTurk preview has no worker id, and a link without any platform parameter stays anonymous
        self.assertContains(self.fresh_client().get(self.entry(assignmentId="ASSIGNMENT_ID_NOT_AVAILABLE", hitId="H1")), "preview")
        self.assertRedirects(self.fresh_client().get(self.entry()), self.url("study_consent"), fetch_redirect_response=False)

    def test_a_finished_annotator_returning_sees_the_completion_page(self) -> None:
        self.answer_everything(self.client)
        response = self.fresh_client().get(self.entry(PROLIFIC_PID="alice", SESSION_ID="s-alice"))
        self.assertRedirects(response, self.url("study_done"), fetch_redirect_response=False)
