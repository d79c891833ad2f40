"""A resumed identity is bound to what only the participant has (issue 12): knowing a PROLIFIC_PID
or an MTurk workerId must not hand over the participant's session.

The rules (``flow.may_resume``): a known platform id resumes in the browser that holds the
annotator's token, or with the platform session the annotator arrived with (Prolific's SESSION_ID,
MTurk's assignmentId). Anyone else gets "This participant id is already taking part" (409), sees
nothing of the participant's state and changes nothing.
"""

from __future__ import annotations

from studyapp.models import Annotator
from tests.studyapp.annotator_base import RIGHT_ANSWERS, WRONG_ANSWERS, AnnotatorTestCase

TAKEN = "This participant id is already taking part"


class BoundIdentityTestCase(AnnotatorTestCase):
    def assert_taken(self, response) -> None:
        self.assertContains(response, TAKEN, status_code=409)

    def test_someone_with_only_the_pid_is_refused_and_sees_nothing(self) -> None:
        before = Annotator.objects.get(pk=self.alice.pk)
        for params in ({}, {"STUDY_ID": "toy"}, {"STUDY_ID": "toy", "SESSION_ID": "guessed"}):
            with self.subTest(params=params):
                stranger = self.fresh_client()
                with self.assertLogs("studyapp.security", "WARNING") as logs:
                    response = stranger.get(self.entry(PROLIFIC_PID="alice", **params))
                self.assert_taken(response)
                self.assertIn(f"the platform id of {self.alice.pseudonym} was refused", logs.output[0])
                self.assertEqual(self.session_token(stranger), "")
                for name in ("study_next_item", "study_done", "study_instructions"):
                    self.assertEqual(stranger.get(self.url(name)).status_code, 403)  # "your session has ended"
        after = Annotator.objects.get(pk=self.alice.pk)
        self.assertEqual((after.external_ids, after.last_seen_at), (before.external_ids, before.last_seen_at))

    def test_the_participant_resumes_with_their_session_id_or_in_their_browser(self) -> None:
        elsewhere = self.fresh_client()
        response = elsewhere.get(self.entry(PROLIFIC_PID="alice", STUDY_ID="toy", SESSION_ID="s-alice"))
        self.assertRedirects(response, self.url("study_next_item"), fetch_redirect_response=False)
        self.assertEqual(self.session_token(elsewhere), self.alice.token)
        for params in ({}, {"SESSION_ID": "s-alice"}, {"SESSION_ID": "a-new-session"}):  # a reload, or the link again
            with self.subTest(params=params):
                response = self.client.get(self.entry(PROLIFIC_PID="alice", **params))
                self.assertRedirects(response, self.url("study_next_item"), fetch_redirect_response=False)

    def test_a_browser_holding_one_participant_cannot_take_up_another(self) -> None:
        self.assert_taken(self.client.get(self.entry(PROLIFIC_PID="bob")))  # alice's browser, bob's id
        self.assertEqual(self.session_token(self.client), self.alice.token)

    def test_a_stranger_cannot_screen_a_participant_out(self) -> None:
        carol_client = self.fresh_client()
        carol = self.consent(carol_client, "carol")
        carol_client.post(self.url("study_instructions"))
        carol_client.post(self.url("study_practice"), {"value": 2})
        stranger = self.fresh_client()
        self.assert_taken(stranger.get(self.entry(PROLIFIC_PID="carol", STUDY_ID="toy")))
        for _ in range(2):
            self.assertEqual(stranger.post(self.url("study_comprehension"), WRONG_ANSWERS).status_code, 403)
        carol.refresh_from_db()
        self.assertEqual((carol.status, carol.comprehension_attempts), (Annotator.Status.ACTIVE, 0))
        response = carol_client.post(self.url("study_comprehension"), RIGHT_ANSWERS)
        self.assertRedirects(response, self.url("study_next_item"), fetch_redirect_response=False)

    def test_mturk_binds_to_the_assignment_id(self) -> None:
        worker = self.fresh_client()
        worker.get(self.entry(workerId="W7", assignmentId="ASG1", hitId="H1"))
        worker.post(self.url("study_consent"), {"agree": "on", "version": self.study.consent_version})
        self.assert_taken(self.fresh_client().get(self.entry(workerId="W7", assignmentId="ASG2", hitId="H1")))
        self.assert_taken(self.fresh_client().get(self.entry(workerId="W7")))
        response = self.fresh_client().get(self.entry(workerId="W7", assignmentId="ASG1", hitId="H1"))
        self.assertRedirects(response, self.url("study_instructions"), fetch_redirect_response=False)

    def test_without_a_session_id_in_the_link_only_the_first_browser_resumes(self) -> None:
        first = self.fresh_client()
        first.get(self.entry(PROLIFIC_PID="dora"))
        first.post(self.url("study_consent"), {"agree": "on", "version": self.study.consent_version})
        self.assert_taken(self.fresh_client().get(self.entry(PROLIFIC_PID="dora")))
        self.assertRedirects(first.get(self.entry(PROLIFIC_PID="dora")), self.url("study_instructions"), fetch_redirect_response=False)

    def test_a_pid_consented_by_its_participant_meanwhile_is_refused_at_the_strangers_consent(self) -> None:
        participant, stranger = self.fresh_client(), self.fresh_client()
        participant.get(self.entry(PROLIFIC_PID="erin", STUDY_ID="toy", SESSION_ID="s-erin"))
        stranger.get(self.entry(PROLIFIC_PID="erin"))  # both at the consent page; the participant accepts first
        participant.post(self.url("study_consent"), {"agree": "on", "version": self.study.consent_version})
        with self.assertLogs("studyapp.security", "WARNING"):
            response = stranger.post(self.url("study_consent"), {"agree": "on", "version": self.study.consent_version})
        self.assert_taken(response)
        self.assertEqual(self.session_token(stranger), "")
        erin = Annotator.objects.get(external_id="erin")
        self.assertEqual(self.session_token(participant), erin.token)
        self.assertEqual(erin.external_ids["SESSION_ID"], "s-erin")

    def test_the_same_participant_consenting_in_two_browsers_is_one_annotator(self) -> None:
        browsers = [self.fresh_client(), self.fresh_client()]
        for browser in browsers:
            browser.get(self.entry(PROLIFIC_PID="finn", STUDY_ID="toy", SESSION_ID="s-finn"))
        for browser in browsers:
            response = browser.post(self.url("study_consent"), {"agree": "on", "version": self.study.consent_version})
            self.assertRedirects(response, self.url("study_instructions"), fetch_redirect_response=False)
        finn = Annotator.objects.get(external_id="finn")
        self.assertEqual([self.session_token(b) for b in browsers], [finn.token, finn.token])
