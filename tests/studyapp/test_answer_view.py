"""``POST /s/<slug>/item/<id>/answer/``: stored as shown and re-oriented, timings, idempotency, permissions, CSRF."""

from __future__ import annotations

import json

from studyapp.models import Annotator, Preference, Study
from tests.studyapp.annotator_base import JSON, AnnotatorTestCase


class AnswerTestCase(AnnotatorTestCase):
    def setUp(self) -> None:
        super().setUp()
        self.item = self.serve(self.client)

    def test_it_stores_the_answer_as_shown_and_re_oriented_with_all_timings(self) -> None:
        response = self.answer(
            self.client, self.item, -3, request_id="abc-12345", client_ms=4321, visible_ms=4000, first_interaction_ms=800
        )
        reply = json.loads(response.content)
        self.assertEqual((reply["stored"], reply["created"], reply["value"], reply["finished"]), (True, True, -3, False))
        self.assertEqual((reply["answered"], reply["quota"]), (1, 6))
        preference = Preference.objects.get(assignment=self.item)
        self.assertEqual(preference.value, -3)
        self.assertEqual(preference.canonical, -3 if self.item.a_on_left else 3)
        self.assertEqual((preference.client_ms, preference.visible_ms, preference.first_interaction_ms), (4321, 4000, 800))
        self.assertEqual(preference.request_id, "abc-12345")
        self.assertGreaterEqual(preference.server_seconds, 0)
        self.assertLess(preference.server_seconds, 60)
        following = self.alice.assignments.filter(preference__isnull=True).order_by("position").first()
        self.assertEqual(reply["next"], self.url("study_item", following.pk))

    def test_a_repeated_or_double_submission_stores_one_answer(self) -> None:
        first = json.loads(self.answer(self.client, self.item, 2, request_id="same-request").content)
        again = json.loads(self.answer(self.client, self.item, 2, request_id="same-request").content)
        other = json.loads(self.answer(self.client, self.item, -4, request_id="other-click").content)
        self.assertEqual((first["created"], again["created"], other["created"]), (True, False, False))
        self.assertEqual(other["value"], 2)
        self.assertEqual(first["next"], other["next"])
        self.assertEqual(Preference.objects.filter(assignment__annotator=self.alice).count(), 1)

    def test_another_annotators_assignment_is_a_404_and_nothing_is_stored(self) -> None:
        bobs = self.serve(self.bob_client)
        response = self.answer(self.client, bobs, 4)
        self.assertEqual(response.status_code, 404)
        self.assertFalse(Preference.objects.filter(assignment=bobs).exists())

    def test_an_item_never_shown_cannot_be_answered(self) -> None:
        later = self.alice.assignments.order_by("-position").first()
        self.assertEqual(self.answer(self.client, later).status_code, 409)
        self.assertFalse(Preference.objects.filter(assignment=later).exists())

    def test_bad_values_are_refused(self) -> None:
        for data in ({"value": 5}, {"value": "x"}, {"value": 1, "request_id": "short"}, {"value": 1, "client_ms": -1}):
            with self.subTest(data=data):
                response = self.client.post(self.url("study_answer", self.item.pk), {"request_id": "req-12345", **data}, **JSON)
                self.assertEqual(response.status_code, 400)
        self.assertFalse(Preference.objects.exists())

    def test_it_requires_a_csrf_token(self) -> None:
        client = self.fresh_client(enforce_csrf_checks=True)
        client.get(self.entry(PROLIFIC_PID="alice"))
        response = client.post(self.url("study_answer", self.item.pk), {"value": 1, "request_id": "req-12345"}, **JSON)
        self.assertEqual(response.status_code, 403)
        self.assertEqual(json.loads(response.content)["error"], "csrf")
        self.assertFalse(Preference.objects.exists())

    def test_it_requires_the_annotator_session(self) -> None:
        response = self.answer(self.fresh_client(), self.item)
        self.assertEqual(response.status_code, 403)
        self.assertFalse(Preference.objects.exists())

    def test_it_only_takes_post(self) -> None:
        self.assertEqual(self.client.get(self.url("study_answer", self.item.pk)).status_code, 405)

    def test_a_plain_form_post_redirects_to_the_next_item(self) -> None:
        response = self.client.post(self.url("study_answer", self.item.pk), {"value": 0, "request_id": "req-12345"})
        following = self.alice.assignments.filter(preference__isnull=True).order_by("position").first()
        self.assertRedirects(response, self.url("study_item", following.pk), fetch_redirect_response=False)

    def test_the_last_answer_finishes_and_a_retry_of_it_is_still_acknowledged(self) -> None:
        self.answer(self.client, self.item)
        reply = self.answer_everything(self.client)
        self.assertTrue(reply["finished"])
        self.assertEqual(reply["next"], self.url("study_done"))
        self.alice.refresh_from_db()
        self.assertEqual(self.alice.status, Annotator.FINISHED)
        last = self.alice.assignments.order_by("-position").first()
        retry = self.answer(self.client, last, request_id="req-0005")
        self.assertEqual(retry.status_code, 200)
        self.assertEqual(json.loads(retry.content)["next"], self.url("study_done"))

    def test_a_closed_study_takes_no_more_answers(self) -> None:
        Study.objects.filter(pk=self.study.pk).update(status=Study.CLOSED)
        self.assertEqual(self.answer(self.client, self.item).status_code, 409)
        self.assertFalse(Preference.objects.exists())
