"""The annotator view layer's building blocks: the step decorator and the session protocol."""

from __future__ import annotations

import dataclasses
from unittest import mock

from django.contrib.sessions.middleware import SessionMiddleware
from django.http import HttpResponse
from django.test import RequestFactory

from studyapp.models import Annotator
from studyapp.services.participation import flow, sessions
from studyapp.views.participant import annotator_at
from tests.studyapp.annotator_base import AnnotatorTestCase
from tests.studyapp.base import make_toy_study


class StepDecoratorTest(AnnotatorTestCase):
    def setUp(self) -> None:
        super().setUp()
        self.calls: list[tuple] = []

        @annotator_at(flow.ITEMS, flow.DONE)
        def view(request, study, annotator, *args, **kwargs):
            self.calls.append((study, annotator, args, kwargs))
            return HttpResponse("ok")

        self.view = view

    def request(self, annotator: Annotator | None = None):
        request = RequestFactory().get("/")
        SessionMiddleware(lambda r: HttpResponse()).process_request(request)
        if annotator is not None:
            sessions.bind(request, self.study, annotator)
        return request

    def test_annotator_at_a_listed_step_reaches_the_view_with_the_arguments(self) -> None:
        response = self.view(self.request(self.alice), self.study, pk=5)
        self.assertEqual(response.content, b"ok")
        self.assertEqual(self.calls, [(self.study, self.alice, (), {"pk": 5})])

    def test_without_a_session_annotator_the_session_has_ended(self) -> None:
        response = self.view(self.request(), self.study)
        self.assertEqual(response.status_code, 403)
        self.assertIn(b"Your session has ended", response.content)
        self.assertEqual(self.calls, [])

    def test_an_annotator_elsewhere_is_sent_to_their_step(self) -> None:
        newcomer = flow.give_consent(self.study, None, flow.Arrival("prolific", "carol"), self.study.consent_version)
        response = self.view(self.request(newcomer), self.study)
        self.assertEqual((response.status_code, response.url), (302, self.url("study_instructions")))
        self.assertEqual(self.calls, [])

    def test_a_terminal_step_is_shown_as_its_message(self) -> None:
        Annotator.objects.filter(pk=self.alice.pk).update(status=Annotator.Status.SCREENED)
        self.alice.refresh_from_db()  # binding keeps the bound annotator for the rest of the request (sessions.bind)
        response = self.view(self.request(self.alice), self.study)
        self.assertEqual(response.status_code, 200)
        self.assertIn(b"did not match the instructions twice", response.content)
        self.assertEqual(self.calls, [])


class SessionProtocolTest(AnnotatorTestCase):
    def request(self):
        request = RequestFactory().get("/")
        SessionMiddleware(lambda r: HttpResponse()).process_request(request)
        request.session.save()
        return request

    def test_pending_arrival_round_trips_and_binding_ends_it(self) -> None:
        request = self.request()
        self.assertIsNone(sessions.pending(request, self.study))
        arrival = flow.Arrival("prolific", "carol", {"PROLIFIC_PID": "carol"})
        stored = sessions.set_pending(request, self.study, arrival)
        self.assertEqual(sessions.pending(request, self.study), stored)
        self.assertEqual(stored, dataclasses.replace(arrival, key=stored.key))
        self.assertGreaterEqual(len(stored.key), 16)  # the arrival's random key
        again = sessions.set_pending(request, self.study, flow.Arrival("prolific", "carol", {"PROLIFIC_PID": "carol", "SESSION_ID": "s2"}))
        self.assertEqual((again.key, again.external_ids["SESSION_ID"]), (stored.key, "s2"))  # the same participant: the same key
        other = sessions.set_pending(request, self.study, flow.Arrival("prolific", "dave", {"PROLIFIC_PID": "dave"}))
        self.assertNotEqual(other.key, stored.key)
        sessions.bind(request, self.study, self.alice)
        self.assertIsNone(sessions.pending(request, self.study))
        self.assertEqual(sessions.session_annotator(request, self.study), self.alice)

    def test_a_new_identity_gets_a_new_session_key_the_same_one_does_not(self) -> None:
        request = self.request()
        with mock.patch.object(request.session, "cycle_key", wraps=request.session.cycle_key) as cycle:
            sessions.bind(request, self.study, self.alice)
            sessions.bind(request, self.study, self.alice)
            self.assertEqual(cycle.call_count, 1)
            sessions.bind(request, self.study, self.bob)
            self.assertEqual(cycle.call_count, 2)

    def test_unbind_forgets_only_this_study(self) -> None:
        request = self.request()
        sessions.bind(request, self.study, self.alice)
        request.session[sessions.TOKENS] = {**request.session[sessions.TOKENS], "999": "other"}
        sessions.unbind(request, self.study)
        self.assertIsNone(sessions.session_annotator(request, self.study))
        self.assertEqual(request.session[sessions.TOKENS], {"999": "other"})

    def test_resolve_reads_the_slugs_study_and_the_sessions_annotator_in_it_only(self) -> None:
        other = make_toy_study(name="Other study")
        for slug, expected in ((self.study.slug, (self.study, self.alice)), (other.slug, (other, None)), ("nope", (None, None))):
            with self.subTest(slug=slug):
                request = self.request()
                request.session[sessions.TOKENS] = {str(self.study.pk): self.alice.token}
                self.assertEqual(sessions.resolve(request, slug), expected)

    def test_a_token_of_another_study_is_nobody_here(self) -> None:
        request = self.request()
        request.session[sessions.TOKENS] = {"999": self.alice.token}
        self.assertIsNone(sessions.session_annotator(request, self.study))
