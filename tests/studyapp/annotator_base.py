"""The toy study seen through the annotator pages (one test module per view imports this).

The cast, on the toy study of ``base.py`` (6 items per annotator, room for exactly 6 annotators):

* alice arrived from Prolific (``PROLIFIC_PID=alice``), consented and went through the onboarding
  (instructions, practice, comprehension check): she is on her items, signed in in ``self.client``;
* bob, another Prolific participant, did the same and is signed in in ``self.bob_client``: his
  assignment ids must look like missing pages to alice;
* newcomers arrive through :meth:`fresh_client` with an empty browser.

The views run on the real clock, so these tests never use ``base.NOW``.
"""

from __future__ import annotations

import json

from django.conf import settings
from django.test import Client
from django.urls import reverse

from studyapp.models import Annotator, Assignment
from studyapp.services.participation import flow
from studyapp.services.participation.onboarding import COMPREHENSION
from studyapp.services.participation.sessions import TOKENS
from tests.studyapp.base import BaseTestCase

RIGHT_ANSWERS = {q.key: q.correct for q in COMPREHENSION}
WRONG_ANSWERS = {q.key: next(v for v, _ in q.options if v != q.correct) for q in COMPREHENSION}
JSON = {"HTTP_ACCEPT": "application/json"}


class AnnotatorTestCase(BaseTestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        super().setUpTestData()
        cls.alice = cls.onboarded("alice")
        cls.bob = cls.onboarded("bob")

    @classmethod
    def onboarded(cls, pid: str) -> Annotator:
        """What :meth:`onboard` does through the pages, done by the services once per class (fast)."""
        ids = {"PROLIFIC_PID": pid, "STUDY_ID": "toy", "SESSION_ID": f"s-{pid}"}
        annotator = flow.give_consent(cls.study, None, flow.Arrival("prolific", pid, ids), cls.study.consent_version)
        flow.read_instructions(annotator)
        flow.answer_practice(annotator, -3)
        flow.check_comprehension(annotator, RIGHT_ANSWERS)
        return annotator

    def setUp(self) -> None:
        super().setUp()
        self.slug = self.study.slug
        self.sign_in(self.client, self.alice)
        self.bob_client = self.fresh_client()
        self.sign_in(self.bob_client, self.bob)

    def sign_in(self, client: Client, annotator: Annotator) -> None:
        """Put the annotator's secret token into the client's session, as the entry page does."""
        session = client.session
        session[TOKENS] = {str(self.study.pk): annotator.token}
        session.save()
        client.cookies[settings.SESSION_COOKIE_NAME] = session.session_key

    # -- urls and clients ----------------------------------------------------------------------------

    def url(self, name: str, *args) -> str:
        return reverse(name, args=[self.slug, *args])

    def entry(self, **params: str) -> str:
        query = "&".join(f"{k}={v}" for k, v in params.items())
        return self.url("study_entry") + (f"?{query}" if query else "")

    def fresh_client(self, **kwargs) -> Client:
        return Client(**kwargs)

    # -- going through the flow ----------------------------------------------------------------------

    def consent(self, client: Client, pid: str) -> Annotator:
        """Arrive from Prolific as ``pid`` and accept the consent."""
        client.get(self.entry(PROLIFIC_PID=pid, STUDY_ID="toy", SESSION_ID=f"s-{pid}"))
        response = client.post(self.url("study_consent"), {"agree": "on", "version": self.study.consent_version})
        self.assertEqual(response.status_code, 302, response.content[:500])
        return Annotator.objects.get(study=self.study, platform="prolific", external_id=pid)

    def onboard(self, client: Client, pid: str) -> Annotator:
        """Consent, read the instructions, do the practice item and pass the comprehension check."""
        annotator = self.consent(client, pid)
        client.post(self.url("study_instructions"))
        client.post(self.url("study_practice"), {"value": -3})
        response = client.post(self.url("study_comprehension"), RIGHT_ANSWERS)
        self.assertRedirects(response, self.url("study_next_item"), fetch_redirect_response=False)
        annotator.refresh_from_db()
        return annotator

    def finish(self, **params: str) -> Client:
        """A newcomer arriving with the link ``params`` goes through the whole study; their client."""
        client = self.fresh_client()
        client.get(self.entry(**params))
        client.post(self.url("study_consent"), {"agree": "on", "version": "1"})
        client.post(self.url("study_instructions"))
        client.post(self.url("study_practice"), {"value": 0})
        client.post(self.url("study_comprehension"), RIGHT_ANSWERS)
        self.answer_everything(client)
        return client

    def serve(self, client: Client) -> Assignment:
        """Open the annotator's current item page (the first serve); returns its assignment."""
        response = client.get(self.url("study_next_item"))
        self.assertEqual(response.status_code, 302)
        pk = int(response.url.rstrip("/").split("/")[-1])
        self.assertEqual(client.get(response.url).status_code, 200)
        return Assignment.objects.select_related("presentation").get(pk=pk)

    def answer(self, client: Client, assignment: Assignment, value: int = 1, request_id: str = "req-0001", **extra):
        data = {"value": value, "request_id": request_id, "client_ms": 1234, "visible_ms": 1000, "first_interaction_ms": 200, **extra}
        return client.post(self.url("study_answer", assignment.pk), data, **JSON)

    def answer_everything(self, client: Client, value: int = 1) -> dict:
        """Serve and answer every item in turn; returns the last JSON reply."""
        reply: dict = {}
        for n in range(100):
            response = client.get(self.url("study_next_item"))
            if response.url == self.url("study_done"):
                return reply
            assignment = self.serve(client)
            reply = json.loads(self.answer(client, assignment, value, request_id=f"req-{n:04d}").content)
        raise AssertionError("never finished")

    def session_token(self, client: Client) -> str:
        return client.session.get(TOKENS, {}).get(str(self.study.pk), "")
