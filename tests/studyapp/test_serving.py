"""What serving a real study costs per request: no session rows, and the query budgets of the hot paths."""

from __future__ import annotations

from django.conf import settings
from django.contrib.sessions.models import Session

from studyapp.services.sessions import ARRIVALS
from tests.studyapp.annotator_base import AnnotatorTestCase


class SessionStorageTest(AnnotatorTestCase):
    def test_an_anonymous_visit_stores_no_session_row(self) -> None:
        client = self.fresh_client()
        response = client.get(self.entry(PROLIFIC_PID="carol", STUDY_ID="toy", SESSION_ID="s-carol"))
        self.assertRedirects(response, self.url("study_consent"), fetch_redirect_response=False)
        self.assertIn(settings.SESSION_COOKIE_NAME, response.cookies)  # the pending arrival is in the cookie
        self.assertEqual(client.session[ARRIVALS][str(self.study.pk)]["external_id"], "carol")
        self.assertEqual(Session.objects.count(), 0)

    def test_a_tampered_session_cookie_is_an_empty_session(self) -> None:
        client = self.fresh_client()
        client.get(self.entry(PROLIFIC_PID="carol", STUDY_ID="toy", SESSION_ID="s-carol"))
        value = client.cookies[settings.SESSION_COOKIE_NAME].value
        client.cookies[settings.SESSION_COOKIE_NAME] = value[:-3] + ("AAA" if not value.endswith("AAA") else "BBB")
        response = client.get(self.url("study_consent"))
        self.assertRedirects(response, self.url("study_entry"), fetch_redirect_response=False)  # no pending arrival
