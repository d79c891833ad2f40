"""Must-show 2 of issue 26 for MTurk: a finished simulated study whose annotators came from an MTurk HIT (workerId,
assignmentId, hitId), reviewed and applied through the review service (services.review.sending) with the
MTurk client (services.platforms.mturk_api) inside botocore's Stubber: MTurk's documented operations with their exact
parameters, no network. Every valid finisher approved, the excluded rejected with the rule's message as feedback,
each bonus sent once under its stable UniqueRequestToken even when the first attempt fails, a second apply sends
nothing (the Stubber fails any call it was not given)."""

from __future__ import annotations

import io
import os
from decimal import Decimal
from unittest import mock

from botocore.stub import ANY, Stubber
from django.core.management import call_command

from studyapp.models import Annotator, PlatformCall, ReviewDecision
from studyapp.services.platforms.mturk import MTurk
from studyapp.services.platforms.mturk_api import MTurkReviewClient, build_client
from studyapp.services.quality.control import quality_check
from studyapp.services.rehearsal.simulation import Plan, simulate_annotators
from studyapp.services.review import decisions, sending
from tests.studyapp.base import BaseTestCase, import_toy, make_toy_study
from tests.studyapp.test_mturk_api import AWS_ENV

BONUS = Decimal("0.75")
REASON = "Thank you for your careful comparisons."
HIT = "3HITSIMULATED"
OK = {"ResponseMetadata": {"HTTPStatusCode": 200}}


def worker(n: int) -> dict[str, str]:
    return {"workerId": f"A{n:02d}WORKER", "assignmentId": f"3ASSIGNMENT{n:02d}", "hitId": HIT, "turkSubmitTo": "https://www.mturk.com"}


class MTurkReviewTestCase(BaseTestCase):
    """The toy study with two check items per annotator, taken by 9 simulated annotators (3 fast cheaters), who
    are then MTurk workers of one HIT; staff make the check rule strict and re-run quality control, which excludes
    the cheaters who failed a check, and the study pays a bonus to every approved worker."""

    @classmethod
    def setUpTestData(cls) -> None:
        cls.collection = import_toy()
        cls.study = make_toy_study(name="MTurk review study", check_share=0.34, fast_limit=1000, check_fail_limit=None)
        simulate_annotators(cls.study, Plan(truth="D#-nDCG@10", noise=0.5, fast_share=0.4, seed=4))
        for n, a in enumerate(Annotator.objects.filter(study=cls.study).order_by("created_at", "pk"), 1):
            ids = worker(n)
            a.platform, a.external_id, a.external_ids = "mturk", ids["workerId"], ids
            a.save(update_fields=["platform", "external_id", "external_ids"])
        cls.study.check_fail_limit, cls.study.bonus_amount, cls.study.bonus_reason = 0, BONUS, REASON
        cls.study.save()
        quality_check(cls.study)

    def setUp(self) -> None:
        super().setUp()
        env = mock.patch.dict(os.environ, AWS_ENV)
        env.start()
        self.addCleanup(env.stop)
        self.boto = build_client(sandbox=False)
        self.stub = Stubber(self.boto)
        self.stub.activate()
        self.addCleanup(self.stub.deactivate)
        self.pauses: list[float] = []
        self.annotators = list(Annotator.objects.filter(study=self.study).order_by("created_at", "pk"))

    def clients(self) -> dict:
        return {"mturk": MTurkReviewClient(self.boto, sleep=self.pauses.append)}

    def of(self, status: str) -> list[Annotator]:
        return [a for a in self.annotators if a.status == status]

    def expect_decisions(self) -> dict[str, str]:
        """Queue MTurk's answers in the order the service asks (arrival order): GetAssignment says Submitted, then
        ApproveAssignment or RejectAssignment with the rule's message; returns assignment -> message of each rejection."""
        messages = {}
        for row in decisions.review_rows(self.study):
            if not row.transition_due:
                continue
            assignment = row.ref.submission_id
            status = {
                "Assignment": {
                    "AssignmentId": assignment,
                    "WorkerId": row.ref.participant_id,
                    "HITId": HIT,
                    "AssignmentStatus": "Submitted",
                }
            }
            self.stub.add_response("get_assignment", {**status, **OK}, {"AssignmentId": assignment})
            if row.final.action == "approve":
                self.stub.add_response("approve_assignment", OK, {"AssignmentId": assignment})
            else:
                messages[assignment] = row.final.message
                self.stub.add_response("reject_assignment", OK, {"AssignmentId": assignment, "RequesterFeedback": row.final.message})
        return messages

    def bonus_params(self, a: Annotator) -> dict:
        ids = a.external_ids
        return {
            "WorkerId": ids["workerId"],
            "BonusAmount": "0.75",
            "AssignmentId": ids["assignmentId"],
            "Reason": REASON,
            "UniqueRequestToken": ANY,
        }

    def bonus_calls(self) -> list[PlatformCall]:
        return list(PlatformCall.objects.filter(study=self.study, operation="bonus").order_by("created_at", "pk"))


class MTurkApplyTests(MTurkReviewTestCase):
    def test_the_study_has_both_kinds(self) -> None:
        self.assertEqual((len(self.of(Annotator.Status.FINISHED)), len(self.of(Annotator.Status.EXCLUDED))), (6, 3))
        self.assertEqual(decisions.review_rows(self.study)[0].platform.key, "mturk")

    def test_apply_approves_rejects_and_pays_once(self) -> None:
        finished, excluded = self.of(Annotator.Status.FINISHED), self.of(Annotator.Status.EXCLUDED)
        messages = self.expect_decisions()
        first, *others = finished
        self.stub.add_client_error("send_bonus", "ServiceFault", "Please try again.", 500, expected_params=self.bonus_params(first))
        for a in finished:  # the first again (its retry), then the others, each once
            self.stub.add_response("send_bonus", OK, self.bonus_params(a))
        steps = sending.apply(self.study, clients=self.clients())
        self.stub.assert_no_pending_responses()
        self.assertTrue(all(s.ok for s in steps), steps)

        # rejected: exactly the excluded, each with the broken rule in the feedback the worker sees
        self.assertEqual(set(messages), {a.external_ids["assignmentId"] for a in excluded})
        for a in excluded:
            failed = a.quality_decisions.get().counts["checks"]["failed"]
            message = messages[a.external_ids["assignmentId"]]
            self.assertIn(f"you failed {failed} of the 2 attention-check items", message)
            self.assertIn("allowed at most 0 failed checks", message)
            self.assertLessEqual(len(message), 1024)
        stored = ReviewDecision.objects.filter(study=self.study)
        self.assertEqual(
            set(stored.filter(applied_action="approve").values_list("annotator__external_id", flat=True)),
            {a.external_id for a in finished},
        )
        self.assertEqual(stored.filter(applied_action="reject").count(), 3)

        # bonuses: one SendBonus per finisher, the first retried after the 500 with the same token: paid once
        calls = self.bonus_calls()  # each bonus's first call logged before it went out, its retry when answered
        tokens = [c.request["body"]["UniqueRequestToken"] for c in calls]
        per_token: dict[str, list[tuple]] = {}
        for token, c in zip(tokens, calls, strict=True):
            per_token.setdefault(token, []).append((c.ok, c.status))
        self.assertEqual(sorted(per_token.values()), [[(False, 500), (True, 200)]] + [[(True, 200)]] * 5)
        self.assertEqual(len(set(tokens)), 6)
        paid = {str(d.bonus_token): d for d in stored.filter(bonus_paid_at__isnull=False)}
        self.assertEqual(set(paid), set(tokens))
        self.assertTrue(all(d.bonus_paid == BONUS for d in paid.values()))
        self.assertEqual(self.pauses, [1.0])

        # the audit log: every call (state, decision, bonus) without credentials
        self.assertEqual(PlatformCall.objects.filter(study=self.study, operation="state").count(), 9)
        audit = " ".join(f"{c.request} {c.response}" for c in PlatformCall.objects.all())
        self.assertNotIn(AWS_ENV["AWS_SECRET_ACCESS_KEY"], audit)
        self.assertNotIn(AWS_ENV["AWS_ACCESS_KEY_ID"], audit)

        # a second apply: nothing due, nothing sent (the Stubber has nothing queued and would fail any call)
        before = PlatformCall.objects.count()
        self.assertEqual(sending.apply(self.study, clients=self.clients()), [])
        self.assertEqual(PlatformCall.objects.count(), before)

    def test_a_bonus_paid_before_its_answer_was_lost_is_not_paid_twice(self) -> None:
        """The first SendBonus is carried out but its answer is a 503; the retry under the same token meets MTurk's
        'already been processed': the bonus counts as paid, and no third call is made."""
        finished = self.of(Annotator.Status.FINISHED)
        self.expect_decisions()
        first, *others = finished
        self.stub.add_client_error("send_bonus", "ServiceUnavailable", "", 503, expected_params=self.bonus_params(first))
        self.stub.add_client_error(
            "send_bonus",
            "RequestError",
            'The idempotency token "x" has already been processed. (1626172412406)',
            400,
            expected_params=self.bonus_params(first),
        )
        for a in others:
            self.stub.add_response("send_bonus", OK, self.bonus_params(a))
        steps = sending.apply(self.study, clients=self.clients())
        self.stub.assert_no_pending_responses()
        self.assertTrue(all(s.ok for s in steps), steps)
        self.assertEqual(ReviewDecision.objects.filter(study=self.study, bonus_paid_at__isnull=False).count(), 6)
        assignment = first.external_ids["assignmentId"]
        calls = [c for c in self.bonus_calls() if c.request["body"]["AssignmentId"] == assignment]
        self.assertEqual([(c.ok, c.status) for c in calls], [(False, 503), (True, 400)])  # the first was logged before it went out

    def test_an_interrupted_send_bonus_is_asked_about_with_list_bonus_payments(self) -> None:
        """Ctrl-C (or a killed worker) while SendBonus waits: the bonus stays "outcome unknown"; the next apply asks
        ListBonusPayments first: listed -> recorded paid and not sent again; not listed -> sent again under its token."""
        finished = self.of(Annotator.Status.FINISHED)
        self.expect_decisions()
        original = MTurkReviewClient._call

        def interrupted(client, operation, method, params, **kwargs):
            if method == "send_bonus":
                raise KeyboardInterrupt
            return original(client, operation, method, params, **kwargs)

        with mock.patch.object(MTurkReviewClient, "_call", interrupted), self.assertRaises(KeyboardInterrupt):
            sending.apply(self.study, clients=self.clients())
        unknown = ReviewDecision.objects.get(study=self.study, bonus_unknown=True)  # the one whose call was out
        self.assertEqual(unknown.annotator, finished[0])
        self.assertIsNotNone(unknown.bonus_sent_at)
        first, second = finished[0].external_ids["assignmentId"], finished[1].external_ids["assignmentId"]
        listed = {"BonusPayments": [{"WorkerId": finished[0].external_id, "BonusAmount": "0.75", "AssignmentId": first}], **OK}
        self.stub.add_response("list_bonus_payments", listed, {"AssignmentId": first, "MaxResults": 100})
        for a in finished[1:]:
            self.stub.add_response("send_bonus", OK, self.bonus_params(a))
        steps = sending.apply(self.study, clients=self.clients())
        self.stub.assert_no_pending_responses()
        self.assertIn("found paid on MTurk", steps[0].text)
        self.assertEqual(ReviewDecision.objects.filter(study=self.study, bonus_paid_at__isnull=False).count(), 6)
        # not listed: MTurk did not pay it, so it is paid again, under the same UniqueRequestToken
        rec = ReviewDecision.objects.get(annotator=finished[1])
        ReviewDecision.objects.filter(pk=rec.pk).update(bonus_paid_at=None, bonus_paid=None, bonus_unknown=True)
        self.stub.add_response("list_bonus_payments", {"BonusPayments": [], **OK}, {"AssignmentId": second, "MaxResults": 100})
        self.stub.add_response("send_bonus", OK, {**self.bonus_params(finished[1]), "UniqueRequestToken": str(rec.bonus_token)})
        steps = sending.apply(self.study, clients=self.clients())
        self.stub.assert_no_pending_responses()
        self.assertIn("has no bonus 0.75 for it", steps[0].text)
        self.assertIsNotNone(ReviewDecision.objects.get(pk=rec.pk).bonus_paid_at)

    def test_an_outage_leaves_the_bonuses_for_the_next_apply_under_the_same_tokens(self) -> None:
        finished = self.of(Annotator.Status.FINISHED)
        self.expect_decisions()
        for _ in range(3):
            self.stub.add_client_error(
                "send_bonus", "ServiceFault", "Please try again.", 500, expected_params=self.bonus_params(finished[0])
            )
        steps = sending.apply(self.study, clients=self.clients())
        self.stub.assert_no_pending_responses()
        failed = [s for s in steps if not s.ok]
        self.assertEqual(len(failed), 6)
        self.assertTrue(all("not paid" in s.text and "tried again on the next apply" in s.text for s in failed), failed)
        self.assertNotIn("Traceback", " ".join(s.text for s in steps))
        tokens = {str(d.bonus_token) for d in ReviewDecision.objects.filter(study=self.study, applied_action="approve")}

        for a in finished:  # the next apply pays each once, under the tokens made the first time
            self.stub.add_response("send_bonus", OK, self.bonus_params(a))
        steps = sending.apply(self.study, clients=self.clients())
        self.stub.assert_no_pending_responses()
        self.assertTrue(all(s.ok for s in steps), steps)
        later = {c.request["body"]["UniqueRequestToken"] for c in self.bonus_calls() if c.ok}
        self.assertEqual(later, tokens)

    def test_assignments_decided_on_mturk_are_not_sent_again(self) -> None:
        """A worker approved by hand on MTurk, one whose assignment MTurk no longer knows: only state calls for them."""
        rows = [r for r in decisions.review_rows(self.study) if r.transition_due]
        for n, row in enumerate(rows):
            assignment = row.ref.submission_id
            if n == 0:
                status = {"Assignment": {"AssignmentId": assignment, "AssignmentStatus": "Approved"}}
                self.stub.add_response("get_assignment", {**status, **OK}, {"AssignmentId": assignment})
            elif n == 1:
                self.stub.add_client_error(
                    "get_assignment",
                    "RequestError",
                    f"Assignment {assignment} does not exist.",
                    400,
                    expected_params={"AssignmentId": assignment},
                )
            else:
                self.stub.add_client_error(
                    "get_assignment", "RequestError", "You are not authorized.", 400, expected_params={"AssignmentId": assignment}
                )
        if rows[0].final.action == "approve":  # approved on MTurk as decided: its bonus is still ours to pay
            self.stub.add_response("send_bonus", OK, self.bonus_params(rows[0].annotator))
        steps = sending.apply(self.study, clients=self.clients())
        self.stub.assert_no_pending_responses()
        texts = {s.pseudonym: s.text for s in steps if s.operation in ("approve", "reject")}
        self.assertIn("already approved on MTurk: nothing sent", texts[rows[0].pseudonym])
        self.assertIn("returned on MTurk: nothing sent", texts[rows[1].pseudonym])
        self.assertIn("not sent: 400 RequestError: You are not authorized.", texts[rows[2].pseudonym])

    def test_the_command_applies_through_the_adapters_client(self) -> None:
        """``manage.py platform_review --apply`` builds the client with MTurk.review_client (here the stubbed one)."""
        finished = self.of(Annotator.Status.FINISHED)
        self.expect_decisions()
        for a in finished:
            self.stub.add_response("send_bonus", OK, self.bonus_params(a))
        out = io.StringIO()
        with mock.patch.object(MTurk, "review_client", return_value=self.clients()["mturk"]):
            call_command("platform_review", self.study.slug, "--apply", stdout=out)
        self.stub.assert_no_pending_responses()
        self.assertEqual(ReviewDecision.objects.filter(study=self.study, bonus_paid_at__isnull=False).count(), 6)
        self.assertIn("approved on MTurk", out.getvalue())
