"""Must-show 2 of issue 26: a finished simulated study reviewed and applied against a local server playing
Prolific's API (tests/studyapp/prolific_server.py): every valid finisher approved, the excluded rejected
with the right category and message, bonuses paid exactly once (also when the first pay call answers 503,
and a 429 with Retry-After is waited for), a second apply sends nothing, a dry run sends nothing, a
missing token stops before anything is stored, and the audit log holds every call without the token."""

from __future__ import annotations

import io
import os
from decimal import Decimal
from unittest import mock

from django.core.management import CommandError, call_command

from studyapp.models import Annotator, PlatformCall, ReviewDecision
from studyapp.services.platforms.prolific_api import ProlificReviewClient
from studyapp.services.quality.control import quality_check
from studyapp.services.rehearsal.simulation import Plan, simulate_annotators
from studyapp.services.review import audit, decisions, sending
from tests.studyapp.base import BaseTestCase, import_toy, make_toy_study
from tests.studyapp.prolific_server import FakeProlific

TOKEN = "secret-test-token-5f2e"
BONUS = Decimal("0.75")
TRANSITION = r"^/api/v1/submissions/[^/]+/transition/$"
PAY = r"^/api/v1/bulk-bonus-payments/[^/]+/pay/$"
SETUP = r"^/api/v1/submissions/bonus-payments/$"


class PlatformReviewTestCase(BaseTestCase):
    """A toy study with two check items per annotator, taken by 9 simulated Prolific participants (3 of them
    fast cheaters answering at random); afterwards staff make the check rule strict (no failed check
    allowed) and re-run quality control, which excludes the cheaters who failed a check."""

    @classmethod
    def setUpTestData(cls) -> None:
        cls.collection = import_toy()
        cls.study = make_toy_study(name="Review study", check_share=0.34, fast_limit=1000, check_fail_limit=None)
        simulate_annotators(cls.study, Plan(truth="D#-nDCG@10", noise=0.5, fast_share=0.4, seed=4))
        cls.study.check_fail_limit, cls.study.bonus_amount = 0, BONUS
        cls.study.save()
        quality_check(cls.study)

    def setUp(self) -> None:
        super().setUp()
        self.api = FakeProlific(TOKEN).__enter__()
        self.addCleanup(self.api.__exit__, None, None, None)
        self.annotators = list(Annotator.objects.filter(study=self.study).order_by("created_at"))
        for a in self.annotators:
            self.api.add(a.external_ids["SESSION_ID"], a.external_id, a.external_ids["STUDY_ID"])
        self.sleeps: list[float] = []
        env = mock.patch.dict(os.environ, {"PROLIFIC_API_TOKEN": TOKEN, "PROLIFIC_API_URL": self.api.url})
        env.start()
        self.addCleanup(env.stop)

    def clients(self) -> dict:
        return {"prolific": ProlificReviewClient(TOKEN, self.api.url, sleep=self.sleeps.append)}

    def sessions(self, status: str) -> set[str]:
        return {a.external_ids["SESSION_ID"] for a in self.annotators if a.status == status}

    def transitions(self, action: str) -> dict[str, dict]:
        """Submission id -> body of the last answered transition request of ``action``."""
        return {r.path.split("/")[4]: r.body for r in self.api.calls("POST", TRANSITION) if r.body["action"] == action}

    def audit_text(self) -> str:
        return " ".join(f"{c.request} {c.response}" for c in PlatformCall.objects.all())


class ApplyTests(PlatformReviewTestCase):
    def test_the_study_has_both_kinds(self) -> None:
        self.assertEqual(len(self.sessions(Annotator.Status.FINISHED)), 6)
        self.assertEqual(len(self.sessions(Annotator.Status.EXCLUDED)), 3)

    def test_apply_approves_rejects_and_pays_once(self) -> None:
        self.api.fail("POST", TRANSITION, 429, retry_after=2)  # the first transition is rate-limited, then retried
        self.api.fail("POST", PAY, 503)  # the first pay attempt meets a 503, then retried
        steps = sending.apply(self.study, clients=self.clients())
        self.assertTrue(all(s.ok for s in steps), steps)

        finished, excluded = self.sessions(Annotator.Status.FINISHED), self.sessions(Annotator.Status.EXCLUDED)
        self.assertEqual(set(self.transitions("APPROVE")), finished)
        rejected = self.transitions("REJECT")
        self.assertEqual(set(rejected), excluded)
        for a in self.annotators:
            if a.status == Annotator.Status.EXCLUDED:
                body = rejected[a.external_ids["SESSION_ID"]]
                failed = a.quality_decisions.get().counts["checks"]["failed"]
                self.assertEqual(body["rejection_category"], "FAILED_CHECK")
                self.assertIn(f"you failed {failed} of the 2 attention-check items", body["message"])
                self.assertIn("allowed at most 0 failed checks", body["message"])
                self.assertGreaterEqual(len(body["message"]), 100)
        statuses = {sid: s["status"] for sid, s in self.api.submissions.items()}
        self.assertEqual(statuses, {**dict.fromkeys(finished, "APPROVED"), **dict.fromkeys(excluded, "REJECTED")})

        # bonuses: one bulk bonus for the Prolific study, paid once despite the 503; each finisher exactly once
        self.assertEqual(len(self.api.calls("POST", SETUP)), 1)
        self.assertEqual(self.api.calls("POST", SETUP)[0].body["study_id"], "simulated")
        self.assertEqual(len(self.api.calls("POST", PAY)), 2)
        self.assertEqual(sorted(self.api.paid), sorted((sid, BONUS) for sid in finished))
        self.assertEqual(self.sleeps[0], 2.0)  # Retry-After honoured
        self.assertEqual(len(self.sleeps), 2)

        # the audit log: every request, answered or failed, without the token
        # each call that changes state is logged before it goes out, and that row is completed by its answer: one row
        # per request, none left "sent, outcome unknown"
        answered = PlatformCall.objects.all()
        self.assertEqual(answered.count(), len(self.api.requests))
        self.assertFalse(PlatformCall.objects.filter(response=audit.SENT).exists())
        self.assertEqual(sorted(answered.filter(ok=False).values_list("status", flat=True)), [429, 503])
        self.assertNotIn(TOKEN, self.audit_text())
        self.assertTrue(all(r.headers["Authorization"] == f"Token {TOKEN}" for r in self.api.requests))
        stored = ReviewDecision.objects.filter(study=self.study)
        self.assertEqual(stored.filter(bonus_paid_at__isnull=False).count(), 6)
        self.assertEqual(stored.filter(applied_action="reject").count(), 3)

        # a second apply: nothing is due, nothing is sent, nothing paid again
        before = len(self.api.requests)
        self.assertEqual(sending.apply(self.study, clients=self.clients()), [])
        self.assertEqual(len(self.api.requests), before)
        self.assertEqual(len(self.api.paid), 6)

    def test_a_failed_pay_is_paid_later_through_the_same_bulk_bonus(self) -> None:
        self.api.fail("POST", PAY, 503, times=3)  # every attempt of the first apply
        steps = sending.apply(self.study, clients=self.clients())
        bonus_steps = [s for s in steps if s.operation == "bonus"]
        self.assertEqual(len(bonus_steps), 6)
        self.assertTrue(all(not s.ok and "503 Service Unavailable" in s.text for s in bonus_steps))
        self.assertEqual(self.api.paid, [])
        batch = self.api.calls("POST", PAY)[0].path.split("/")[4]
        self.assertEqual(set(ReviewDecision.objects.exclude(bonus_batch="").values_list("bonus_batch", flat=True)), {batch})

        steps = sending.apply(self.study, clients=self.clients())
        self.assertTrue(all(s.ok for s in steps), steps)
        self.assertEqual(len(self.api.calls("POST", SETUP)), 1)  # not set up a second time
        self.assertEqual(self.api.calls("POST", PAY)[-1].path.split("/")[4], batch)
        self.assertEqual(len(self.api.paid), 6)
        self.assertEqual(len(self.api.calls("POST", TRANSITION)), 9)  # the transitions were not sent again

    def test_a_pay_with_unknown_outcome_is_never_repeated_by_itself(self) -> None:
        self.api.fail("POST", PAY, 500, carried_out=True)  # paid, but the answer is an error
        self.api.lists_bonuses = False  # and Prolific has not processed the payment yet: asking tells nothing
        steps = sending.apply(self.study, clients=self.clients())
        self.assertTrue(any("outcome unknown" in s.text and "check the platform" in s.text for s in steps), steps)
        self.assertEqual(len(self.api.paid), 6)
        self.assertEqual(len(self.api.calls("POST", PAY)), 1)
        sending.apply(self.study, clients=self.clients())
        self.assertEqual(len(self.api.calls("POST", PAY)), 1)
        self.assertEqual(len(self.api.paid), 6)
        rows = decisions.review_rows(self.study)
        approved = [r for r in rows if r.final.action == "approve"]
        self.assertIn("outcome unknown", approved[0].state())
        sending.resolve_unknown_bonus(approved[0], paid=True)
        self.assertIsNotNone(ReviewDecision.objects.get(annotator=approved[0].annotator).bonus_paid_at)
        with self.assertRaisesMessage(Exception, "no bonus payment with an unknown outcome"):
            sending.resolve_unknown_bonus(approved[0], paid=True)

    def test_the_platforms_state_wins(self) -> None:
        finished = sorted(self.sessions(Annotator.Status.FINISHED))
        excluded = sorted(self.sessions(Annotator.Status.EXCLUDED))
        self.api.submissions[finished[0]]["status"] = "APPROVED"  # approved by hand on Prolific
        self.api.submissions[finished[1]]["status"] = "RETURNED"
        self.api.submissions[excluded[0]]["status"] = "APPROVED"  # staff approved it on Prolific: not rejected now
        del self.api.submissions[finished[2]]
        steps = sending.apply(self.study, clients=self.clients())
        sent = {r.path.split("/")[4] for r in self.api.calls("POST", TRANSITION)}
        self.assertEqual(sent & {finished[0], finished[1], finished[2], excluded[0]}, set())
        texts = " | ".join(s.text for s in steps)
        self.assertIn("already approved on Prolific: nothing sent (the decision was reject)", texts)
        self.assertIn("returned on Prolific: nothing sent", texts)
        # bonuses: for the submissions approved on Prolific (by us or by hand), not for the returned ones
        paid = {sid for sid, _ in self.api.paid}
        self.assertEqual(paid, set(finished) - {finished[1], finished[2]})

    def test_errors_are_shown_per_submission_and_the_others_go_on(self) -> None:
        finished = sorted(self.sessions(Annotator.Status.FINISHED))
        self.api.fail("GET", rf"/{finished[0]}/$", 503, times=3)
        self.api.fail("POST", rf"/{finished[1]}/transition/$", 400)
        steps = sending.apply(self.study, clients=self.clients())
        failed = [s for s in steps if not s.ok]
        self.assertEqual(len(failed), 4, failed)  # two transitions, and the bonuses of those two (not approved)
        texts = sorted(s.text for s in failed)
        self.assertEqual(texts[0], "approve not sent: 400 Bad Request: simulated failure")
        self.assertEqual(texts[1], "approve not sent: 503 Service Unavailable")
        self.assertEqual(texts[2:], ["not paid: the submission is not approved on the platform"] * 2)
        self.assertEqual(len(self.transitions("APPROVE")), 5)  # the 400 one was refused, the others went
        self.assertEqual(len(self.api.paid), 4)
        # the next apply retries exactly those two
        steps = sending.apply(self.study, clients=self.clients())
        self.assertTrue(all(s.ok for s in steps))
        self.assertEqual({s.pseudonym for s in steps if s.operation == "approve"}, {s.pseudonym for s in failed})
        self.assertEqual(len(self.api.paid), 6)

    def test_a_wrong_token_and_no_server_are_errors_not_tracebacks(self) -> None:
        steps = sending.apply(self.study, clients={"prolific": ProlificReviewClient("wrong", self.api.url, sleep=self.sleeps.append)})
        self.assertTrue(steps and all(not s.ok for s in steps))
        self.assertIn("401 Unauthorized: check PROLIFIC_API_TOKEN", steps[0].text)
        self.assertEqual(self.sleeps, [])  # an auth error is not retried
        closed = ProlificReviewClient(TOKEN, "http://127.0.0.1:9", sleep=self.sleeps.append, timeout=2)
        steps = sending.apply(self.study, clients={"prolific": closed})
        self.assertIn("network error", steps[0].text)
        self.assertEqual(len(self.sleeps), 2 * 9)  # two retries per submission, then the next one
        self.assertFalse(ReviewDecision.objects.exclude(applied_action="").exists())
        self.assertNotIn(TOKEN, self.audit_text())
        self.assertNotIn("wrong", self.audit_text())


class CommandTests(PlatformReviewTestCase):
    def run_command(self, *args: str) -> str:
        out = io.StringIO()
        call_command("platform_review", self.study.slug, *args, stdout=out)
        return out.getvalue()

    def test_without_apply_nothing_is_sent(self) -> None:
        pseudonym = self.annotators[0].pseudonym
        for args in ((), ("--dry-run",), ("--dry-run", "--apply"), ("--override", f"{pseudonym}=skip")):
            out = self.run_command(*args)
            self.assertIn("pseudonym", out)
            self.assertIn("FAILED_CHECK", out)
            self.assertIn("would send", out.lower())
            self.assertIn("ask the submission's state; if awaiting review, approve on Prolific", out)
            self.assertIn(f"pay a bonus of {BONUS}", out)
        self.assertEqual(self.api.requests, [])
        self.assertFalse(ReviewDecision.objects.exists())
        self.assertFalse(PlatformCall.objects.exists())

    def test_apply_with_overrides(self) -> None:
        first, second, excluded = (self.annotators[0], self.annotators[3],
                                   next(a for a in self.annotators if a.status == Annotator.Status.EXCLUDED))  # fmt: skip
        message = (
            "Your submission was rejected because the answers did not follow the instructions given before the first item of the study."
        )
        with mock.patch("time.sleep"):
            out = self.run_command("--apply", "--override", f"{first.pseudonym}=reject:LOW_EFFORT:{message}",
                                   "--override", f"{excluded.pseudonym}=approve", "--bonus", f"{second.pseudonym}=2.50")  # fmt: skip
        self.assertIn("0 failed", out)
        self.assertEqual(self.transitions("REJECT")[first.external_ids["SESSION_ID"]]["rejection_category"], "LOW_EFFORT")
        self.assertEqual(self.transitions("REJECT")[first.external_ids["SESSION_ID"]]["message"], message)
        self.assertIn(excluded.external_ids["SESSION_ID"], self.transitions("APPROVE"))
        paid = dict(self.api.paid)
        self.assertEqual(paid[second.external_ids["SESSION_ID"]], Decimal("2.50"))
        self.assertNotIn(excluded.external_ids["SESSION_ID"], paid)  # the study's bonus is for valid finishers only
        self.assertNotIn(first.external_ids["SESSION_ID"], paid)
        rec = ReviewDecision.objects.get(annotator=first)
        self.assertEqual((rec.source, rec.staff), ("staff", None))
        self.assertIn(TOKEN, os.environ["PROLIFIC_API_TOKEN"])
        self.assertNotIn(TOKEN, out)
        # already rejected: the decision cannot change any more
        with self.assertRaisesMessage(CommandError, "already rejected on Prolific"):
            self.run_command("--apply", "--override", f"{first.pseudonym}=approve")

    def test_bad_input_is_refused_and_nothing_is_written(self) -> None:
        p = self.annotators[0].pseudonym
        cases = (
            (("--override", "NOBODY=approve"), "no annotator with the pseudonym 'NOBODY'"),
            (("--override", f"{p}=reject:SLOW:" + "x" * 120), "unknown rejection category 'SLOW' for Prolific"),
            (("--override", f"{p}=reject:OTHER:too short"), "the message must have 100-1000 characters for Prolific, it has 9"),
            (("--override", f"{p}=reject"), "a rejection needs a category and a message"),
            (("--override", f"{p}=pay"), "the decision must be approve, skip or reject"),
            (("--override", "approve"), "write PSEUDONYM=approve"),
            (("--bonus", f"{p}=1.505"), "at most two decimal places"),
            (("--bonus", f"{p}=lots"), "not an amount"),
            (("--bonus", f"{p}=-1"), "must be between 0 and 100"),
            (("--override", f"{p}=skip", "--bonus", f"{p}=1.00"), "a bonus goes with an approved submission only"),
            (("--bonus-settled", f"{p}=maybe"), "write PSEUDONYM=paid or PSEUDONYM=unpaid"),
            (("--bonus-settled", f"{p}=paid", "--apply"), "no bonus payment with an unknown outcome"),
            (("--user", "nobody", "--apply"), "--user 'nobody': no staff user"),
        )
        for args, message in cases:
            with self.subTest(args=args), self.assertRaisesMessage(CommandError, message):
                self.run_command(*args)
        with self.assertRaisesMessage(CommandError, "no study named 'nope'"):
            call_command("platform_review", "nope")
        self.assertEqual(self.api.requests, [])
        self.assertFalse(ReviewDecision.objects.exists())

    def test_missing_token(self) -> None:
        p = self.annotators[0].pseudonym
        with (
            mock.patch.dict(os.environ, {"PROLIFIC_API_TOKEN": ""}),
            self.assertRaisesMessage(CommandError, "PROLIFIC_API_TOKEN is not set"),
        ):
            self.run_command("--apply", "--bonus", f"{p}=1.00")
        self.assertEqual(self.api.requests, [])
        self.assertFalse(ReviewDecision.objects.exists())  # the bonus change was not stored either
        self.assertFalse(PlatformCall.objects.exists())
