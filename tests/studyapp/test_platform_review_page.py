"""The staff page /staff/<slug>/review/: the table of decisions, changing one, a dry run, Apply against the local
Prolific server, and the audit log; raw platform ids only for members with the id permission."""

from __future__ import annotations

from unittest import mock

from django.contrib.auth import get_user_model
from django.urls import reverse

from studyapp.models import PlatformCall, ReviewDecision
from studyapp.services.access.teams import set_team
from studyapp.services.review import audit
from tests.studyapp.test_platform_review import PlatformReviewTestCase

LONG = "Your submission was rejected because the answers did not follow the instructions that were shown before the first item."


class ReviewPageTests(PlatformReviewTestCase):
    def setUp(self) -> None:
        super().setUp()
        User = get_user_model()
        self.member = User.objects.create_user("member", password="pw-membermember", is_staff=True)
        self.idmember = User.objects.create_user("idmember", password="pw-idmemberidmember", is_staff=True)
        set_team(self.study, "idmember", ["member"], platform_ids=["idmember"])
        self.client.force_login(self.member)
        self.url = reverse("staff_study_review", args=[self.study.slug])
        self.first = self.annotators[0]

    def test_the_table_shows_suggestions_without_raw_ids(self) -> None:
        page = self.client.get(self.url).content.decode()
        for a in self.annotators:
            self.assertIn(a.pseudonym, page)
        self.assertIn("FAILED_CHECK", page)
        self.assertIn("finished, valid; bonus 0.75", page)
        self.assertNotIn("sim-0000", page)  # the simulated participants' raw ids (PROLIFIC_PID, SESSION_ID)
        self.client.force_login(self.idmember)
        self.assertIn("Prolific: sim-00001", self.client.get(self.url).content.decode())
        outsider = get_user_model().objects.create_user("outsider", password="pw-outsideroutsider", is_staff=True)
        self.client.force_login(outsider)
        self.assertEqual(self.client.get(self.url).status_code, 403)
        self.assertEqual(self.client.post(self.url, {"apply": "1", "confirm": "on"}).status_code, 403)
        self.assertEqual(self.api.requests, [])

    def test_changing_a_decision(self) -> None:
        p = self.first.pseudonym
        response = self.client.post(
            self.url, {"pseudonym": p, "action": "reject", "category": "OTHER", "message": "too short", "decide": ""}
        )
        self.assertEqual(response.status_code, 400)
        self.assertContains(response, "the message must have 100-1000 characters for Prolific, it has 9", status_code=400)
        self.assertContains(response, ">too short</textarea>", status_code=400)  # what staff typed is kept
        self.assertFalse(ReviewDecision.objects.exists())
        response = self.client.post(self.url, {"pseudonym": p, "action": "reject", "category": "LOW_EFFORT", "message": LONG, "decide": ""})
        self.assertRedirects(response, self.url)
        rec = ReviewDecision.objects.get(annotator=self.first)
        self.assertEqual((rec.action, rec.category, rec.message, rec.staff), ("reject", "LOW_EFFORT", LONG, self.member))
        self.assertContains(self.client.get(self.url), "staff member")
        self.assertRedirects(self.client.post(self.url, {"pseudonym": p, "rules": ""}), self.url)
        self.assertFalse(ReviewDecision.objects.exists())
        response = self.client.post(self.url, {"pseudonym": "NOBODY", "action": "approve", "decide": ""})
        self.assertContains(response, "no annotator with the pseudonym", status_code=400)

    def test_dry_run_then_apply(self) -> None:
        page = self.client.get(self.url + "?dry_run=1").content.decode()
        self.assertIn("if awaiting review, approve on Prolific", page)
        self.assertIn("pay a bonus of 0.75", page)
        self.assertEqual(self.api.requests, [])
        response = self.client.post(self.url, {"apply": ""}, follow=True)  # not confirmed
        self.assertContains(response, "Nothing sent: tick the box to confirm")
        self.assertEqual(self.api.requests, [])
        with mock.patch("time.sleep"):
            response = self.client.post(self.url, {"apply": "", "confirm": "on"}, follow=True)
        self.assertContains(response, "Applied: 15 step(s) done, 0 failed.")
        self.assertEqual(len(self.api.paid), 6)
        self.assertEqual(PlatformCall.objects.filter(staff=self.member).exclude(response=audit.SENT).count(), len(self.api.requests))
        self.assertContains(response, "approved on Prolific; bonus 0.75 paid")
        self.assertContains(response, "pay_bonus")
        self.assertNotContains(response, "sim-0000")
        self.assertNotContains(response, "secret-test-token")

    def test_missing_token_sends_nothing(self) -> None:
        with mock.patch.dict("os.environ", {"PROLIFIC_API_TOKEN": ""}):
            response = self.client.post(self.url, {"apply": "", "confirm": "on"}, follow=True)
        self.assertContains(response, "Nothing sent: PROLIFIC_API_TOKEN is not set")
        self.assertEqual(self.api.requests, [])
        self.assertFalse(ReviewDecision.objects.exists())

    def test_a_bonus_with_unknown_outcome_is_settled_on_the_page(self) -> None:
        self.api.fail("POST", r"/pay/$", 500, carried_out=True)  # paid, but the answer is an error: outcome unknown
        self.api.lists_bonuses = False  # and Prolific does not list the bonuses yet: staff settle
        with mock.patch("time.sleep"):
            self.client.post(self.url, {"apply": "", "confirm": "on"})
        unknown = ReviewDecision.objects.filter(bonus_unknown=True)
        self.assertEqual(unknown.count(), 6)
        page = self.client.get(self.url)
        self.assertContains(page, "it was paid", count=6)
        first, second = (d.annotator.pseudonym for d in unknown.order_by("pk")[:2])
        response = self.client.post(self.url, {"pseudonym": first, "settle": "paid"}, follow=True)
        self.assertContains(response, f"{first}: bonus recorded as paid.")
        settled = ReviewDecision.objects.get(annotator__pseudonym=first)
        self.assertFalse(settled.bonus_unknown)
        self.assertIsNotNone(settled.bonus_paid_at)
        self.assertIn("settled by staff member", settled.applied_note)
        response = self.client.post(self.url, {"pseudonym": second, "settle": "unpaid"}, follow=True)
        self.assertContains(response, "not paid (the next Apply pays it)")
        self.assertIsNone(ReviewDecision.objects.get(annotator__pseudonym=second).bonus_paid_at)
        again = self.client.post(self.url, {"pseudonym": first, "settle": "paid"}, follow=True)
        self.assertContains(again, f"{first}: no bonus payment with an unknown outcome")

    def test_apply_sends_a_batch_per_request_and_says_what_is_left(self) -> None:
        transitions = r"/transition/$"
        with self.settings(STUDYAPP_REVIEW_PAGE_BATCH=4), mock.patch("time.sleep"):
            response = self.client.post(self.url, {"apply": "", "confirm": "on"}, follow=True)
            self.assertEqual(len(self.api.calls("POST", transitions)), 4)
            self.assertContains(response, "5 submission(s) still have something to send (at most 4 are sent per Apply")
            for _ in range(2):
                response = self.client.post(self.url, {"apply": "", "confirm": "on"}, follow=True)
        self.assertNotContains(response, "still have something to send")
        self.assertEqual(len(self.api.calls("POST", transitions)), len(self.annotators))  # each decision sent once
        self.assertEqual(len(self.api.paid), 6)  # every valid finisher's bonus, once, over the batches
        self.assertEqual(sorted(self.api.paid), sorted(set(self.api.paid)))
