"""``POST /s/<slug>/item/<id>/answer/``: stored as shown and re-oriented, timings, idempotency, permissions, CSRF."""

from __future__ import annotations

import json
from datetime import timedelta

from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from studyapp.models import Annotator, Assignment, Preference, Study
from studyapp.services.analysis.status import study_status
from studyapp.services.participation.answers import record_answer
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

    def test_an_answer_soon_after_the_last_renewal_rewrites_no_lease(self) -> None:
        assignment = self.serve(self.client)  # the leases were renewed moments ago
        with CaptureQueriesContext(connection) as queries:
            self.assertEqual(self.answer(self.client, assignment).status_code, 200)
        self.assertFalse([q for q in queries.captured_queries if q["sql"].startswith('UPDATE "studyapp_assignment"')])
        Assignment.objects.filter(annotator=self.alice).update(lease_expires_at=timezone.now() + timedelta(minutes=5))
        following = self.serve(self.client)
        self.answer(self.client, following, request_id="req-0002")
        live = Assignment.objects.filter(annotator=self.alice, released_at__isnull=True).exclude(pk=following.pk)
        self.assertTrue(all(a.lease_expires_at > timezone.now() + timedelta(minutes=self.study.lease_minutes - 1) for a in live))

    def test_a_repeated_or_double_submission_stores_one_answer(self) -> None:
        first = json.loads(self.answer(self.client, self.item, 2, request_id="same-request").content)
        again = json.loads(self.answer(self.client, self.item, 2, request_id="same-request").content)
        other = json.loads(self.answer(self.client, self.item, 2, request_id="other-click").content)  # e.g. a second tab
        self.assertEqual((first["created"], again["created"], other["created"]), (True, False, False))
        self.assertEqual((again["value"], other["value"]), (2, 2))
        self.assertEqual(first["next"], other["next"])
        self.assertEqual(Preference.objects.filter(assignment__annotator=self.alice).count(), 1)

    def test_a_different_answer_for_an_answered_item_is_refused_never_reported_stored(self) -> None:
        first = json.loads(self.answer(self.client, self.item, 2, request_id="first-tab").content)
        for request_id in ("second-tab", "first-tab"):
            with self.subTest(request_id=request_id):
                response = self.answer(self.client, self.item, -4, request_id=request_id)
                self.assertEqual(response.status_code, 409)
                reply = json.loads(response.content)
                self.assertEqual(reply["error"], "conflict")
                self.assertNotIn("stored", reply)
                self.assertIn("already answered with a different choice", reply["message"])
                self.assertEqual(reply["next"], first["next"])
        self.assertEqual(Preference.objects.get(assignment=self.item).value, 2)
        form = self.client.post(self.url("study_answer", self.item.pk), {"value": 3, "request_id": "plain-form"})
        self.assertContains(form, "an answer cannot be changed", status_code=409)
        self.assertEqual(Preference.objects.get(assignment=self.item).value, 2)

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
        bad = (
            {"value": 5},
            {"value": "x"},
            {"value": 1, "request_id": "short"},
            {"value": 1, "client_ms": -1},
            {"value": 1, "visible_ms": "NaN"},
        )
        for data in bad:
            with self.subTest(data=data):
                response = self.client.post(self.url("study_answer", self.item.pk), {"request_id": "req-12345", **data}, **JSON)
                self.assertEqual(response.status_code, 400)
        self.assertFalse(Preference.objects.exists())

    def test_timings_too_large_for_their_column_are_clamped_not_refused(self) -> None:
        # A 400 here would be sent again by the page forever: the answer is stored, the timing clamped.
        response = self.answer(self.client, self.item, 1, client_ms="1e+23", visible_ms=str(2**40), first_interaction_ms="12.6")
        self.assertEqual(response.status_code, 200, response.content)
        preference = Preference.objects.get(assignment=self.item)
        self.assertEqual((preference.client_ms, preference.visible_ms, preference.first_interaction_ms), (2**31 - 1, 2**31 - 1, 13))
        preference.refresh_from_db()  # the database holds the clamped value (PostgreSQL would refuse a larger one)
        self.assertEqual(preference.client_ms, 2**31 - 1)

    def test_it_requires_a_csrf_token(self) -> None:
        client = self.fresh_client(enforce_csrf_checks=True)
        client.get(self.entry(PROLIFIC_PID="alice", SESSION_ID="s-alice"))
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
        self.assertEqual(self.alice.status, Annotator.Status.FINISHED)
        last = self.alice.assignments.order_by("-position").first()
        retry = self.answer(self.client, last, request_id="req-0005")
        self.assertEqual(retry.status_code, 200)
        self.assertEqual(json.loads(retry.content)["next"], self.url("study_done"))

    # -- answers are never refused for the annotator's step (nothing the page holds is thrown away) --

    def test_an_answer_given_while_the_study_was_closed_is_stored_and_leads_to_the_closed_page(self) -> None:
        Study.objects.filter(pk=self.study.pk).update(status=Study.Status.CLOSED)
        response = self.answer(self.client, self.item, -2)
        self.assertEqual(response.status_code, 200)
        reply = json.loads(response.content)
        self.assertEqual((reply["stored"], reply["created"], reply["step"], reply["finished"]), (True, True, "closed", False))
        self.assertEqual(reply["next"], self.url("study_entry"))
        self.assertEqual(Preference.objects.get(assignment=self.item).value, -2)
        self.assertContains(self.client.get(reply["next"]), "This study is closed")

    def test_an_answer_given_while_the_consent_text_changed_is_stored_and_asks_for_consent_again(self) -> None:
        Study.objects.filter(pk=self.study.pk).update(consent_version="2", consent_text="Version two.")
        reply = json.loads(self.answer(self.client, self.item, 3).content)
        self.assertEqual((reply["stored"], reply["step"], reply["next"]), (True, "consent", self.url("study_consent")))
        preference = Preference.objects.get(assignment=self.item)
        self.assertEqual((preference.value, preference.late), (3, False))
        self.assertContains(self.client.get(reply["next"]), "The consent information has changed")
        # after consenting again the annotator goes on with the next item; the stored answer stays
        response = self.client.post(self.url("study_consent"), {"agree": "on", "version": "2"})
        self.assertRedirects(response, self.url("study_next_item"), fetch_redirect_response=False)
        self.assertNotEqual(self.serve(self.client).pk, self.item.pk)

    def test_a_plain_form_post_after_a_change_redirects_to_the_right_page(self) -> None:
        Study.objects.filter(pk=self.study.pk).update(consent_version="2")
        response = self.client.post(self.url("study_answer", self.item.pk), {"value": 0, "request_id": "req-12345"})
        self.assertRedirects(response, self.url("study_consent"), fetch_redirect_response=False)
        self.assertTrue(Preference.objects.filter(assignment=self.item).exists())

    def test_an_excluded_annotators_answer_is_stored_and_counted_as_such(self) -> None:
        Annotator.objects.filter(pk=self.alice.pk).update(status=Annotator.Status.EXCLUDED, exclusion_reason="too fast")
        reply = json.loads(self.answer(self.client, self.item).content)
        self.assertEqual((reply["stored"], reply["step"], reply["next"]), (True, "excluded", self.url("study_entry")))
        self.assertEqual(study_status(self.study)["answers"]["from_excluded"], 1)

    def test_a_late_answer_in_a_closed_study_is_stored_and_flagged_late(self) -> None:
        Assignment.objects.filter(pk=self.item.pk).update(lease_expires_at=timezone.now() - timedelta(minutes=1))
        Study.objects.filter(pk=self.study.pk).update(status=Study.Status.CLOSED)
        self.assertEqual(self.answer(self.client, self.item).status_code, 200)
        self.assertTrue(Preference.objects.get(assignment=self.item).late)

    def test_the_last_answer_after_closing_still_earns_the_completion_page(self) -> None:
        for assignment in self.alice.assignments.exclude(pk=self.item.pk):
            record_answer(assignment, 1, request_id=f"pre-{assignment.pk}")
        Study.objects.filter(pk=self.study.pk).update(status=Study.Status.CLOSED)
        reply = json.loads(self.answer(self.client, self.item).content)
        self.assertEqual((reply["finished"], reply["step"], reply["next"]), (True, "done", self.url("study_done")))
        self.assertContains(self.client.get(reply["next"]), "TOYDONE")
