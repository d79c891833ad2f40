"""The MTurk review client (``services.platforms.mturk_api``) against botocore's Stubber: MTurk's documented
operations and parameters, no network. Each stubbed response checks the exact parameters sent; the
Stubber fails a call it does not expect, so "nothing else was sent" is asserted by ``assert_no_pending_responses``."""

from __future__ import annotations

import os
from decimal import Decimal
from unittest import mock

from botocore.exceptions import EndpointConnectionError
from botocore.stub import Stubber
from django.test import SimpleTestCase

from studyapp.models import Annotator
from studyapp.services.platforms import mturk_api
from studyapp.services.platforms.mturk import MTURK
from studyapp.services.platforms.mturk_api import MTurkReviewClient, build_client
from studyapp.services.platforms.review_api import ApiError, SubmissionRef

# Dummy credentials, and nothing read from a real AWS configuration of the machine.
AWS_ENV = {
    "AWS_ACCESS_KEY_ID": "AKIDTESTONLY",
    "AWS_SECRET_ACCESS_KEY": "test-secret-not-real",
    "AWS_CONFIG_FILE": "/nonexistent/aws-config",
    "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent/aws-credentials",
    "AWS_EC2_METADATA_DISABLED": "true",
}
NO_AWS = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_DEFAULT_PROFILE")
REF = SubmissionRef("A1WORKER", "3ASSIGNMENT1", "3HIT1")
OK = {"ResponseMetadata": {"HTTPStatusCode": 200, "RequestId": "req-1"}}


def assignment(status: str, ref: SubmissionRef = REF) -> dict:
    return {
        "Assignment": {
            "AssignmentId": ref.submission_id,
            "WorkerId": ref.participant_id,
            "HITId": ref.study_ref,
            "AssignmentStatus": status,
        }
    }


class StubbedTestCase(SimpleTestCase):
    """A boto3 client built by :func:`build_client` (dummy credentials, the sandbox) inside a Stubber."""

    def setUp(self) -> None:
        patcher = mock.patch.dict(os.environ, {**AWS_ENV, "STUDYAPP_MTURK_SANDBOX": "1"})
        patcher.start()
        self.addCleanup(patcher.stop)
        self.boto = build_client()
        self.stub = Stubber(self.boto)
        self.stub.activate()
        self.addCleanup(self.stub.deactivate)
        self.pauses: list[float] = []
        self.client = MTurkReviewClient(self.boto, sleep=self.pauses.append)

    def error(self, method: str, code: str, message: str, status: int, params: dict) -> None:
        self.stub.add_client_error(
            method, service_error_code=code, service_message=message, http_status_code=status, expected_params=params
        )


class ClientFromEnvironmentTest(SimpleTestCase):
    def test_sandbox_endpoint_and_region(self) -> None:
        with mock.patch.dict(os.environ, {**AWS_ENV, "STUDYAPP_MTURK_SANDBOX": "1"}):
            client = build_client()
        self.assertEqual(client.meta.endpoint_url, "https://mturk-requester-sandbox.us-east-1.amazonaws.com")
        self.assertEqual(client.meta.region_name, "us-east-1")
        self.assertTrue(MTurkReviewClient(client).sandbox)

    def test_production_by_default(self) -> None:
        with mock.patch.dict(os.environ, {**AWS_ENV, "STUDYAPP_MTURK_SANDBOX": "0"}):
            client = build_client()
        self.assertEqual(client.meta.endpoint_url, "https://mturk-requester.us-east-1.amazonaws.com")
        self.assertFalse(MTurkReviewClient(client).sandbox)

    def test_missing_credentials_is_a_clear_error(self) -> None:
        with mock.patch.dict(os.environ, AWS_ENV):
            for key in NO_AWS:
                os.environ.pop(key, None)
            with mock.patch("botocore.credentials.InstanceMetadataFetcher.retrieve_iam_role_credentials", return_value={}):
                with self.assertRaises(ApiError) as caught:
                    MTURK.review_client()
                self.assertIn("AWS_ACCESS_KEY_ID", str(caught.exception))
                os.environ["AWS_PROFILE"] = "no-such-profile"
                with self.assertRaises(ApiError) as caught:
                    MTURK.review_client()
                self.assertIn("no-such-profile", str(caught.exception))

    def test_adapter_builds_the_client(self) -> None:
        with mock.patch.dict(os.environ, AWS_ENV):
            client = MTURK.review_client()
        self.assertIsInstance(client, MTurkReviewClient)
        self.assertEqual(MTURK.rejection_categories, ())


class SubmissionRefTest(SimpleTestCase):
    def test_ref_from_the_workers_link(self) -> None:
        annotator = Annotator(
            platform="mturk",
            external_ids={"workerId": "A1W", "assignmentId": "3AS", "hitId": "3H", "turkSubmitTo": "https://www.mturk.com"},
        )
        self.assertEqual(MTURK.submission_ref(annotator), SubmissionRef("A1W", "3AS", "3H"))

    def test_no_ref_without_an_assignment(self) -> None:
        for ids in ({"workerId": "A1W"}, {"assignmentId": "3AS"}, {"workerId": "A1W", "assignmentId": "ASSIGNMENT_ID_NOT_AVAILABLE"}, {}):
            with self.subTest(ids=ids):
                self.assertIsNone(MTURK.submission_ref(Annotator(platform="mturk", external_ids=ids)))


class StateTest(StubbedTestCase):
    def test_states(self) -> None:
        for status, expected in (("Submitted", "awaiting"), ("Approved", "approved"), ("Rejected", "rejected")):
            self.stub.add_response("get_assignment", {**assignment(status), **OK}, {"AssignmentId": "3ASSIGNMENT1"})
            state, records = self.client.state(REF)
            self.assertEqual(state, expected)
            self.assertEqual(len(records), 1)
            self.assertEqual(records[0].request, {"operation": "GetAssignment", "body": {"AssignmentId": "3ASSIGNMENT1"}, "sandbox": True})
            self.assertTrue(records[0].ok)
            self.assertEqual(records[0].status, 200)
            self.assertIn(f"AssignmentStatus {status}", records[0].response)
        self.stub.assert_no_pending_responses()

    def test_unknown_assignment_is_returned(self) -> None:
        self.error(
            "get_assignment",
            "RequestError",
            "Assignment 3ASSIGNMENT1 does not exist. (1698330947012 s)",
            400,
            {"AssignmentId": "3ASSIGNMENT1"},
        )
        state, records = self.client.state(REF)
        self.assertEqual(state, "returned")
        self.assertEqual([(r.ok, r.status) for r in records], [(True, 400)])
        self.assertIn("does not exist", records[0].response)

    def test_other_request_error_raises_with_mturks_message(self) -> None:
        self.error(
            "get_assignment", "RequestError", "You are not authorized to view this assignment.", 400, {"AssignmentId": "3ASSIGNMENT1"}
        )
        with self.assertRaises(ApiError) as caught:
            self.client.state(REF)
        error = caught.exception
        self.assertEqual(str(error), "400 RequestError: You are not authorized to view this assignment.")
        self.assertFalse(error.retryable)
        self.assertEqual(self.pauses, [])
        self.assertEqual([r.ok for r in error.records], [False])
        self.assertNotIn("Traceback", str(error))
        self.assertNotIn(AWS_ENV["AWS_SECRET_ACCESS_KEY"], repr(error.records))


class DecisionTest(StubbedTestCase):
    def test_approve_sends_the_assignment(self) -> None:
        self.stub.add_response("approve_assignment", OK, {"AssignmentId": "3ASSIGNMENT1"})
        records = self.client.approve(REF)
        self.stub.assert_no_pending_responses()
        self.assertEqual([(r.operation, r.ok, r.status) for r in records], [("approve", True, 200)])
        self.assertEqual(records[0].request["operation"], "ApproveAssignment")

    def test_approve_with_feedback(self) -> None:
        client = MTurkReviewClient(self.boto, sleep=self.pauses.append, approve_feedback="Thank you!")
        self.stub.add_response("approve_assignment", OK, {"AssignmentId": "3ASSIGNMENT1", "RequesterFeedback": "Thank you!"})
        client.approve(REF)
        self.stub.assert_no_pending_responses()

    def test_reject_sends_the_message_as_feedback(self) -> None:
        message = "You answered 3 of 4 attention checks wrongly.\nThe study needs at least 3 right."
        self.stub.add_response("reject_assignment", OK, {"AssignmentId": "3ASSIGNMENT1", "RequesterFeedback": message})
        records = self.client.reject(REF, "", message)
        self.stub.assert_no_pending_responses()
        self.assertEqual(records[0].request["body"]["RequesterFeedback"], message)

    def test_reject_drops_control_characters(self) -> None:
        self.stub.add_response("reject_assignment", OK, {"AssignmentId": "3ASSIGNMENT1", "RequesterFeedback": "Too fast.\tSorry."})
        self.client.reject(REF, "TOO_QUICKLY", "Too fast.\x07\tSorry.\x1b")
        self.stub.assert_no_pending_responses()

    def test_reject_refuses_bad_messages_before_sending(self) -> None:
        for message, problem in (("", "needs a message"), (" \x01 ", "needs a message"), ("x" * 1025, "at most 1024")):
            with self.subTest(length=len(message)), self.assertRaises(ApiError) as caught:
                self.client.reject(REF, "", message)
            self.assertIn(problem, str(caught.exception))
        self.stub.assert_no_pending_responses()

    def test_reject_at_the_limit_is_sent(self) -> None:
        message = "é" * 1024
        self.stub.add_response("reject_assignment", OK, {"AssignmentId": "3ASSIGNMENT1", "RequesterFeedback": message})
        self.client.reject(REF, "", message)
        self.stub.assert_no_pending_responses()

    def test_throttling_then_success_is_retried(self) -> None:
        params = {"AssignmentId": "3ASSIGNMENT1"}
        self.error("approve_assignment", "ThrottlingException", "Rate exceeded", 400, params)
        self.error("approve_assignment", "ServiceFault", "Try your call again.", 500, params)
        self.stub.add_response("approve_assignment", OK, params)
        records = self.client.approve(REF)
        self.stub.assert_no_pending_responses()
        self.assertEqual([(r.ok, r.status) for r in records], [(False, 400), (False, 500), (True, 200)])
        self.assertEqual(records[0].response, "400 ThrottlingException: Rate exceeded")
        self.assertEqual(self.pauses, [1.0, 2.0])

    def test_retries_are_bounded(self) -> None:
        params = {"AssignmentId": "3ASSIGNMENT1"}
        for _ in range(3):
            self.error("approve_assignment", "ThrottlingException", "Rate exceeded", 400, params)
        with self.assertRaises(ApiError) as caught:
            self.client.approve(REF)
        self.stub.assert_no_pending_responses()
        self.assertTrue(caught.exception.retryable)
        self.assertIn("after 3 attempts", str(caught.exception))
        self.assertEqual(len(caught.exception.records), 3)
        self.assertEqual(self.pauses, [1.0, 2.0])

    def test_refused_retry_after_an_unanswered_attempt_asks_the_state(self) -> None:
        """A 503 whose approval went through: the retry is refused (not Submitted any more); MTurk's state says approved."""
        params = {"AssignmentId": "3ASSIGNMENT1"}
        self.error("approve_assignment", "ServiceUnavailable", "", 503, params)
        self.error("approve_assignment", "RequestError", "This operation can be called with a status of: Submitted", 400, params)
        self.stub.add_response("get_assignment", {**assignment("Approved"), **OK}, params)
        records = self.client.approve(REF)
        self.stub.assert_no_pending_responses()
        self.assertEqual([(r.operation, r.ok) for r in records], [("approve", False), ("approve", False), ("state", True)])

    def test_refused_retry_with_another_state_raises(self) -> None:
        params = {"AssignmentId": "3ASSIGNMENT1"}
        self.error("reject_assignment", "ServiceFault", "Try again.", 500, {**params, "RequesterFeedback": "No."})
        self.error(
            "reject_assignment",
            "RequestError",
            "This operation can be called with a status of: Submitted",
            400,
            {**params, "RequesterFeedback": "No."},
        )
        self.stub.add_response("get_assignment", {**assignment("Approved"), **OK}, params)
        with self.assertRaises(ApiError) as caught:
            self.client.reject(REF, "", "No.")
        self.assertEqual(len(caught.exception.records), 3)

    def test_network_error_is_retried(self) -> None:
        calls = []

        class Flaky:
            """The stubbed client, but the first call never reaches MTurk."""

            meta = self.boto.meta

            def approve_assignment(inner, **params):  # noqa: N805
                calls.append(params)
                if len(calls) == 1:
                    raise EndpointConnectionError(endpoint_url=mturk_api.SANDBOX_ENDPOINT)
                return self.boto.approve_assignment(**params)

        self.stub.add_response("approve_assignment", OK, {"AssignmentId": "3ASSIGNMENT1"})
        records = MTurkReviewClient(Flaky(), sleep=self.pauses.append).approve(REF)
        self.assertEqual([(r.ok, r.status) for r in records], [(False, None), (True, 200)])
        self.assertIn("network error: Could not connect", records[0].response)
        self.assertEqual(len(calls), 2)


class BonusTest(StubbedTestCase):
    def bonus_params(self, ref: SubmissionRef, amount: str, token: str) -> dict:
        return {
            "WorkerId": ref.participant_id,
            "BonusAmount": amount,
            "AssignmentId": ref.submission_id,
            "Reason": mturk_api.DEFAULT_BONUS_REASON,
            "UniqueRequestToken": token,
        }

    def test_one_call_per_bonus_with_two_decimals(self) -> None:
        other = SubmissionRef("A2WORKER", "3ASSIGNMENT2", "3HIT1")
        self.stub.add_response("send_bonus", OK, self.bonus_params(REF, "1.50", "bonus-token-1"))
        self.stub.add_response("send_bonus", OK, self.bonus_params(other, "2.00", "bonus-token-2"))
        records = self.client.pay_bonuses([(REF, Decimal("1.5"), "bonus-token-1"), (other, Decimal(2), "bonus-token-2")])
        self.stub.assert_no_pending_responses()
        self.assertEqual([(r.operation, r.ok, r.request["operation"]) for r in records], [("bonus", True, "SendBonus")] * 2)

    def test_5xx_then_retry_with_the_same_token(self) -> None:
        params = self.bonus_params(REF, "0.25", "bonus-token-1")
        self.error("send_bonus", "ServiceFault", "Amazon Mechanical Turk is temporarily unable to process your request.", 500, params)
        self.stub.add_response("send_bonus", OK, params)  # expected_params: the very same token
        records = self.client.pay_bonuses([(REF, Decimal("0.25"), "bonus-token-1")])
        self.stub.assert_no_pending_responses()
        self.assertEqual([(r.ok, r.status) for r in records], [(False, 500), (True, 200)])
        self.assertEqual({r.request["body"]["UniqueRequestToken"] for r in records}, {"bonus-token-1"})
        self.assertEqual(self.pauses, [1.0])

    def test_token_already_processed_counts_as_paid(self) -> None:
        """The first call paid but its answer was lost (503); the retry meets the processed token: paid, once."""
        params = self.bonus_params(REF, "1.00", "bonus-token-1")
        self.error("send_bonus", "ServiceUnavailable", "", 503, params)
        self.error(
            "send_bonus", "RequestError", 'The idempotency token "bonus-token-1" has already been processed. (1626172412406)', 400, params
        )
        records = self.client.pay_bonuses([(REF, Decimal(1), "bonus-token-1")])
        self.stub.assert_no_pending_responses()
        self.assertEqual([(r.ok, r.status) for r in records], [(False, 503), (True, 400)])
        self.assertIn("already been processed", records[-1].response)
        self.assertEqual([r.tokens for r in records], [(), ("bonus-token-1",)])

    def test_a_refused_bonus_does_not_stop_the_others(self) -> None:
        other = SubmissionRef("A2WORKER", "3ASSIGNMENT2", "3HIT1")
        self.error("send_bonus", "RequestError", "Assignment 3ASSIGNMENT1 does not exist.", 400, self.bonus_params(REF, "1.00", "t1"))
        self.stub.add_response("send_bonus", OK, self.bonus_params(other, "1.00", "t2"))
        with self.assertRaises(ApiError) as caught:
            self.client.pay_bonuses([(REF, Decimal(1), "t1"), (other, Decimal(1), "t2")])
        self.stub.assert_no_pending_responses()
        self.assertEqual(str(caught.exception), "1 of 2 bonuses not paid: t1: 400 RequestError: Assignment 3ASSIGNMENT1 does not exist.")
        self.assertEqual([(r.ok, r.tokens) for r in caught.exception.records], [(False, ()), (True, ("t2",))])
        self.assertFalse(caught.exception.outcome_unknown)

    def test_an_outage_stops_the_rest(self) -> None:
        other = SubmissionRef("A2WORKER", "3ASSIGNMENT2", "3HIT1")
        for _ in range(3):
            self.error("send_bonus", "ServiceFault", "Try again.", 500, self.bonus_params(REF, "1.00", "t1"))
        with self.assertRaises(ApiError) as caught:
            self.client.pay_bonuses([(REF, Decimal(1), "t1"), (other, Decimal(1), "t2")])
        self.stub.assert_no_pending_responses()
        self.assertIn("2 of 2 bonuses not paid", str(caught.exception))
        self.assertIn("t2: not sent", str(caught.exception))
        self.assertEqual(len(caught.exception.records), 3)

    def test_bad_bonus_input(self) -> None:
        for amount, token, problem in (
            (Decimal(0), "t1", "positive"),
            (Decimal("-1"), "t1", "positive"),
            (Decimal(1), "", "1 to 64"),
            (Decimal(1), "x" * 65, "1 to 64"),
        ):
            with self.subTest(amount=amount, token=token), self.assertRaises(ApiError) as caught:
                self.client.pay_bonuses([(REF, amount, token)])
            self.assertIn(problem, str(caught.exception))
        self.stub.assert_no_pending_responses()

    def test_the_studys_reason_is_sent(self) -> None:
        self.stub.add_response("send_bonus", OK, {**self.bonus_params(REF, "1.00", "t1"), "Reason": "For finding the check items."})
        self.client.pay_bonuses([(REF, Decimal(1), "t1")], reason="For finding the check items.")
        self.stub.assert_no_pending_responses()

    def test_amount_rounds_to_cents(self) -> None:
        self.stub.add_response("send_bonus", OK, self.bonus_params(REF, "0.13", "t1"))
        self.client.pay_bonuses([(REF, Decimal("0.125"), "t1")])
        self.stub.assert_no_pending_responses()

    def test_no_bonuses_no_calls(self) -> None:
        self.assertEqual(self.client.pay_bonuses([]), [])
