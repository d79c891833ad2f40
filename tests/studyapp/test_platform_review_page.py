"""The staff page /staff/<slug>/review/: the table of decisions, changing one, a dry run, Apply against the local
Prolific server, and the audit log; raw platform ids only for members with the id permission."""

from __future__ import annotations

import io
from datetime import timedelta
from unittest import mock

from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.urls import reverse
from django.utils import timezone

from studyapp.models import PlatformCall, ReviewDecision, ReviewJob
from studyapp.services.access.teams import set_team
from studyapp.services.platforms import prolific_api
from studyapp.services.review import audit, jobs
from tests.studyapp.test_payment_faults import audit_misses
from tests.studyapp.test_platform_review import PAY, PlatformReviewTestCase

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
        response = self.client.post(self.url, {"apply": "", "confirm": "on"}, follow=True)
        self.assertContains(response, "Apply queued: a job worker sends it")
        self.assertContains(response, "Apply queued</strong>")
        self.assertContains(response, '<meta http-equiv="refresh" content="3">')  # the page follows the job
        self.assertEqual(self.api.requests, [])  # nothing is sent by the request itself
        self.run_jobs()
        response = self.client.get(self.url)
        self.assertContains(response, "Apply done</strong> (asked by member)")
        self.assertContains(response, "15 steps done, 0 failed.")
        self.assertNotContains(response, 'http-equiv="refresh"')
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
        self.client.post(self.url, {"apply": "", "confirm": "on"})
        self.run_jobs()
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

    def test_apply_is_queued_once_and_run_by_the_worker(self) -> None:
        transitions = r"/transition/$"
        for _ in range(3):  # a double click, another tab: one job
            self.client.post(self.url, {"apply": "", "confirm": "on"}, follow=True)
        self.assertEqual(ReviewJob.objects.count(), 1)
        self.assertContains(self.client.get(self.url), "Apply queued")
        self.assertEqual(self.api.requests, [])
        out = self.run_jobs()
        self.assertIn("done, 15 steps done, 0 failed", out)
        self.assertEqual(len(self.api.calls("POST", transitions)), len(self.annotators))  # each decision sent once
        self.assertEqual(len(self.api.paid), 6)
        self.assertEqual(sorted(self.api.paid), sorted(set(self.api.paid)))
        self.assertNotIn("job", self.run_jobs().split("waiting for jobs")[1])  # nothing left to run
        job = ReviewJob.objects.get()
        self.assertEqual((job.status, job.attempts, job.staff), ("done", 1, self.member))
        self.assertEqual(len(job.log.splitlines()), 15)
        page = self.client.get(self.url).content.decode()
        self.assertNotIn("sim-0000", page)  # the steps shown are masked like the rest
        self.client.post(self.url, {"apply": "", "confirm": "on"})  # a new Apply after the last ended: a new job
        self.assertEqual(ReviewJob.objects.count(), 2)

    def test_a_slow_platform_holds_no_request_and_pays_once(self) -> None:
        """Issue 30: Prolific answering the pay call after 25 s (beyond the client's 20 s) made Apply answer 500 after 30 s
        with nothing in the audit log. Now the page answers at once without calling the platform; the worker's pay
        call times out ("outcome unknown"), and the next Apply finds the bonuses paid: once each, every call logged.
        The workers' client gives up after 1 s here instead of its 20 s (as in test_payment_faults.FaultTests), the answer
        coming 2.5 s after the call: the same real waits, scaled down."""
        self.assertLess(prolific_api.client_from_env().timeout, 25)  # the production client gives up on a 25 s answer too
        self.api.fail("POST", PAY, delay=2.5)  # carried out at once, answered after 2.5 s
        page = self.client.post(self.url, {"apply": "", "confirm": "on"}, follow=True)
        self.assertEqual(page.status_code, 200)
        self.assertEqual(self.api.requests, [])  # the request sent nothing and waited for nothing
        from_env = prolific_api.client_from_env

        def impatient_client(**options) -> prolific_api.ProlificReviewClient:  # noqa: ANN003 (client_from_env's options)
            client = from_env(**options)
            client.timeout = 1.0
            return client

        self.enterContext(mock.patch.object(prolific_api, "client_from_env", impatient_client))
        first = io.StringIO()
        call_command("run_jobs", "--once", stdout=first)  # real waits: the client's own timeout
        self.assertIn("done, 9 steps done, 6 failed", first.getvalue())
        self.assertEqual(ReviewDecision.objects.filter(bonus_unknown=True).count(), 6)
        self.assertContains(self.client.get(self.url), "outcome unknown")
        self.client.post(self.url, {"apply": "", "confirm": "on"})
        second = io.StringIO()
        call_command("run_jobs", "--once", stdout=second)
        self.assertIn("done, 6 steps done, 0 failed", second.getvalue())
        self.assertEqual(len(self.api.calls("POST", PAY)), 1)
        self.assertEqual(len(self.api.paid), 6)
        self.assertEqual(sorted(self.api.paid), sorted(set(self.api.paid)))
        self.assertEqual(audit_misses(self.api.requests, PlatformCall.objects.values_list("request", flat=True)), [])

    def test_a_stale_job_is_taken_over(self) -> None:
        job, _ = jobs.enqueue(self.study, self.member)
        ReviewJob.objects.filter(pk=job.pk).update(
            status="running", worker="gone:1", attempts=1, heartbeat_at=timezone.now() - timedelta(hours=1)
        )
        self.assertIsNone(jobs.claim("w:2", stale_seconds=7200))  # not silent long enough
        taken = jobs.claim("w:2", stale_seconds=60)
        self.assertEqual((taken.pk, taken.worker, taken.attempts), (job.pk, "w:2", 2))
        self.assertIn("the worker gone:1 fell silent; taken over by w:2", taken.log)
        with mock.patch("time.sleep"):
            done = jobs.run(taken)
        self.assertEqual(done.status, "done")
        self.assertEqual(len(self.api.paid), 6)

    def test_a_job_without_a_token_fails_with_the_reason(self) -> None:
        job, _ = jobs.enqueue(self.study, self.member)
        with mock.patch.dict("os.environ", {"PROLIFIC_API_TOKEN": ""}):
            job = jobs.run(jobs.claim("w:1"))
        self.assertEqual(job.status, "failed")
        self.assertIn("PROLIFIC_API_TOKEN is not set", job.error)
        self.assertContains(self.client.get(self.url), "PROLIFIC_API_TOKEN is not set")

    def run_jobs(self) -> str:
        out = io.StringIO()
        with mock.patch("time.sleep"):
            call_command("run_jobs", "--once", stdout=out)
        return out.getvalue()
