"""Amazon Mechanical Turk's Requester API for review (:class:`MTurkReviewClient`, through boto3).

What is sent, per the MTurk API reference (API version 2017-01-17):

- state: ``GetAssignment(AssignmentId)``; ``AssignmentStatus`` Submitted, Approved or Rejected. An
  assignment MTurk does not know (returned, abandoned, never submitted) is "returned".
- approve: ``ApproveAssignment(AssignmentId[, RequesterFeedback])``.
- reject: ``RejectAssignment(AssignmentId, RequesterFeedback)``. MTurk has no rejection categories:
  the feedback (required, at most 1,024 characters, no ASCII control characters but tab, line feed
  and carriage return) carries the reason.
- bonus: ``SendBonus(WorkerId, BonusAmount, AssignmentId, Reason, UniqueRequestToken)``, one call per
  bonus, the amount in US dollars as a string with two decimals ("1.50"). The token is ours, stable
  across retries (at most 64 characters): MTurk refuses a second payment under the same token for 24
  hours with an error saying the token "has already been processed", which counts as paid.

Throttling (``ThrottlingException``), MTurk's ``ServiceFault``, any 5xx and network errors are retried
a bounded number of times with a growing pause (``sleep`` injectable); every other error becomes an
:class:`~.review_api.ApiError` with MTurk's own message (never a traceback, never credentials).

The boto3 client is built from the environment only (:func:`build_client`): credentials the boto3
way (``AWS_ACCESS_KEY_ID``/``AWS_SECRET_ACCESS_KEY``, ``AWS_PROFILE``, an instance role...), region
us-east-1 (MTurk's only one), and ``STUDYAPP_MTURK_SANDBOX=1`` for the requester sandbox
(:data:`SANDBOX_ENDPOINT`). Tests pass their own client (a botocore ``Stubber`` around it).
"""

from __future__ import annotations

import os
import re
import time
import uuid
from collections.abc import Callable
from dataclasses import replace
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError, HTTPClientError
from botocore.exceptions import ConnectionError as BotoConnectionError

from studyapp.services.platforms.mturk import FEEDBACK_LIMIT
from studyapp.services.platforms.review_api import (
    APPROVED,
    AWAITING,
    REJECTED,
    RETURNED,
    UNKNOWN,
    Announce,
    ApiError,
    CallRecord,
    PaymentIntent,
    SubmissionRef,
    short,
)

REGION = "us-east-1"
SANDBOX_ENDPOINT = "https://mturk-requester-sandbox.us-east-1.amazonaws.com"
PRODUCTION_ENDPOINT = "https://mturk-requester.us-east-1.amazonaws.com"
SANDBOX_ENV = "STUDYAPP_MTURK_SANDBOX"
TOKEN_LIMIT = 64  # UniqueRequestToken: "must not be longer than 64 characters"
MAX_ATTEMPTS = 3
FIRST_PAUSE, PAUSE_CAP = 1.0, 8.0  # seconds before the 2nd attempt, doubling, at most PAUSE_CAP
DEFAULT_BONUS_REASON = "A bonus for your work in our study. Thank you!"
STATES = {"Submitted": AWAITING, "Approved": APPROVED, "Rejected": REJECTED}
THROTTLING = {"ThrottlingException", "Throttling", "TooManyRequestsException", "RequestLimitExceeded"}
# ASCII control characters RequesterFeedback may not contain (0-8, 11, 12, 14-31): InvalidParameterValue.
FORBIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f]")


def sandbox_enabled() -> bool:
    """``STUDYAPP_MTURK_SANDBOX`` set to 1/true/yes: talk to the requester sandbox, where nothing is paid."""
    return os.environ.get(SANDBOX_ENV, "").strip().lower() in {"1", "true", "yes", "on"}


def build_client(sandbox: bool | None = None) -> Any:
    """A boto3 MTurk client configured from the environment only; :class:`ApiError` without credentials.

    botocore's own retries are off (one attempt per call): :class:`MTurkReviewClient` retries itself,
    bounded, and records every attempt.
    """
    import boto3
    from botocore.config import Config

    try:
        session = boto3.session.Session()
        credentials = session.get_credentials()
    except BotoCoreError as exc:  # e.g. AWS_PROFILE naming a profile that does not exist
        raise ApiError(f"AWS configuration for MTurk: {exc}") from None
    if credentials is None:
        raise ApiError(
            "AWS credentials for MTurk are not set: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY "
            "(or AWS_PROFILE) in the environment of this process"
        )
    sandbox = sandbox_enabled() if sandbox is None else sandbox
    config = Config(retries={"total_max_attempts": 1, "mode": "standard"}, connect_timeout=10, read_timeout=30)
    endpoint = SANDBOX_ENDPOINT if sandbox else PRODUCTION_ENDPOINT
    return session.client("mturk", region_name=REGION, endpoint_url=endpoint, config=config)


def bonus_amount(amount: Decimal) -> str:
    """MTurk's ``BonusAmount``: US dollars with two decimals ("1.50"); positive."""
    value = Decimal(amount).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
    if value <= 0:
        raise ApiError(f"a bonus must be a positive amount, not {amount}")
    return str(value)


def feedback(message: str, *, required: bool) -> str:
    """``message`` as MTurk's ``RequesterFeedback``: control characters dropped; too long or (when
    required) empty is an :class:`ApiError` before anything is sent."""
    text = FORBIDDEN.sub("", message or "").strip()
    if required and not text:
        raise ApiError("MTurk needs a message for a rejection (RequesterFeedback): it carries the reason")
    if len(text) > FEEDBACK_LIMIT:
        raise ApiError(f"the message has {len(text)} characters; MTurk accepts at most {FEEDBACK_LIMIT}")
    return text


def token_already_used(error: ApiError, token: str) -> bool:
    """Is ``error`` MTurk refusing a repeated ``UniqueRequestToken`` (the bonus was paid by an earlier call)?

    MTurk answers a RequestError whose message names the token: 'The idempotency token "..." has
    already been processed.'
    """
    text = error.message.lower()
    return "already" in text and (token.lower() in text or "idempotency" in text)


def not_found(error: ApiError) -> bool:
    """Is ``error`` MTurk saying the assignment does not exist (returned, abandoned, never submitted)?"""
    return error.status == 400 and "does not exist" in error.message.lower()


def api_error(exc: Exception) -> ApiError:
    """The :class:`ApiError` for one failed attempt: MTurk's code and message, retryable or not."""
    if isinstance(exc, ClientError):
        err = exc.response.get("Error", {})
        status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
        code, message = err.get("Code", "Error"), err.get("Message", "")
        retryable = code in THROTTLING or code == "ServiceFault" or status == 429 or (status or 0) >= 500
        prefix = f"{status} {code}" if status else code
        if exc.response.get("TurkErrorCode"):  # MTurk's finer code, e.g. AWS.MechanicalTurk.HitAlreadyExists
            prefix += f" ({exc.response['TurkErrorCode']})"
        return ApiError(f"{prefix}: {message}" if message else prefix, status=status, retryable=retryable)
    if isinstance(exc, BotoConnectionError | HTTPClientError):
        return ApiError(f"network error: {exc}", retryable=True)
    return ApiError(f"{type(exc).__name__}: {exc}")  # parameter validation, missing credentials


class MTurkReviewClient:
    """:class:`~.review_api.ReviewClient` for MTurk. ``client``: a boto3 MTurk client (default: from
    the environment, :func:`build_client`); ``sleep``: the pause between attempts (tests pass a
    recorder); ``bonus_reason``: the ``Reason`` workers see with a bonus (MTurk requires one)."""

    def __init__(
        self,
        client: Any = None,
        *,
        sleep: Callable[[float], None] = time.sleep,
        attempts: int = MAX_ATTEMPTS,
        bonus_reason: str = DEFAULT_BONUS_REASON,
        approve_feedback: str = "",
    ) -> None:
        self.client = client if client is not None else build_client()
        self.sleep = sleep
        self.attempts = max(1, attempts)
        self.bonus_reason = bonus_reason
        self.approve_feedback = approve_feedback
        endpoint = str(getattr(getattr(self.client, "meta", None), "endpoint_url", "") or "")
        self.sandbox = "sandbox" in endpoint

    # -- one call, retried ----------------------------------------------------------------------

    def _call(
        self,
        operation: str,
        method: str,
        params: dict[str, Any],
        *,
        settled: Callable[[ApiError], bool] = lambda error: False,
    ) -> tuple[dict, list[CallRecord]]:
        """``client.<method>(**params)``, retried while the error is retryable, at most ``attempts``
        times. Returns the response ({} when ``settled(error)`` says an error is the answer wanted)
        and one record per attempt; raises :class:`ApiError` carrying those records."""
        request = {"operation": self._api_name(method), "body": dict(params), "sandbox": self.sandbox}
        records: list[CallRecord] = []
        for attempt in range(1, self.attempts + 1):
            try:
                response = getattr(self.client, method)(**params)
            except AssertionError:
                raise  # a broken expectation (botocore's Stubber in tests), never an answer of MTurk
            except (ClientError, BotoCoreError) as exc:
                error = api_error(exc)
            else:
                meta = response.get("ResponseMetadata", {})
                records.append(CallRecord(operation, request, True, meta.get("HTTPStatusCode"), short(summary(response))))
                return response, records
            if settled(error):
                records.append(CallRecord(operation, request, True, error.status, short(error.message)))
                return {}, records
            records.append(CallRecord(operation, request, False, error.status, short(error.message)))
            if not error.retryable or attempt == self.attempts:
                if attempt > 1:
                    error.message = f"{error.message} (after {attempt} attempts)"
                error.records = records
                raise error
            self.sleep(min(PAUSE_CAP, FIRST_PAUSE * 2 ** (attempt - 1)))
        raise AssertionError("unreachable")  # pragma: no cover

    def _api_name(self, method: str) -> str:
        """MTurk's name of a boto3 method ("send_bonus" -> "SendBonus"), for the audit log."""
        mapping = getattr(getattr(self.client, "meta", None), "method_to_api_mapping", None) or {}
        return mapping.get(method) or "".join(part.title() for part in method.split("_"))

    # -- ReviewClient -----------------------------------------------------------------------------

    def state(self, ref: SubmissionRef) -> tuple[str, list[CallRecord]]:
        response, records = self._call("state", "get_assignment", {"AssignmentId": ref.submission_id}, settled=not_found)
        if not response:
            return RETURNED, records
        status = response.get("Assignment", {}).get("AssignmentStatus", "")
        return STATES.get(status, UNKNOWN), records

    def approve(self, ref: SubmissionRef, *, sending: Announce | None = None) -> list[CallRecord]:
        params = {"AssignmentId": ref.submission_id}
        text = feedback(self.approve_feedback, required=False)
        if text:
            params["RequesterFeedback"] = text
        return self._decide("approve", "approve_assignment", params, ref, APPROVED, sending)

    def reject(self, ref: SubmissionRef, category: str, message: str, *, sending: Announce | None = None) -> list[CallRecord]:
        """Reject with ``message`` as the feedback; ``category`` is not sent (MTurk has none)."""
        params = {"AssignmentId": ref.submission_id, "RequesterFeedback": feedback(message, required=True)}
        return self._decide("reject", "reject_assignment", params, ref, REJECTED, sending)

    def _decide(self, operation: str, method: str, params: dict, ref: SubmissionRef, target: str,
                sending: Announce | None = None) -> list[CallRecord]:  # fmt: skip
        """Approve or reject (``sending`` hears of the request first). When an attempt failed without an answer (a
        network error, a 5xx) and the retry is refused, MTurk may have acted on the first one: its state decides."""
        if sending is not None:
            sending({"operation": self._api_name(method), "body": dict(params), "sandbox": self.sandbox})
        try:
            return self._call(operation, method, params)[1]
        except ApiError as error:
            earlier = error.records[:-1]
            if error.retryable or not earlier:
                raise
            try:
                now, more = self.state(ref)
            except ApiError as unknown:
                error.records = error.records + unknown.records
                raise error from None
            if now == target:
                return error.records + more
            error.records = error.records + more
            raise

    def pay_bonuses(self, bonuses: list[tuple[SubmissionRef, Decimal, str]], *, reason: str = "",
                    intent: PaymentIntent | None = None) -> list[CallRecord]:  # fmt: skip
        """``SendBonus`` once per bonus under its token; a token MTurk has already processed is paid. The
        worker sees ``reason`` (the study's ``bonus_reason``; empty: the client's ``bonus_reason``).

        A bonus MTurk refuses does not stop the others; throttling or an outage that outlasts the
        retries does (the rest would meet it too). Raises :class:`ApiError` naming the failed bonuses
        (by token), with the records of every call made."""
        records: list[CallRecord] = []
        failed: list[str] = []
        for index, (ref, amount, token) in enumerate(bonuses):
            try:
                records += self._pay_one(ref, amount, token, reason or self.bonus_reason, intent)
            except ApiError as error:
                records += error.records
                failed.append(f"{token}: {error.message}")
                if error.retryable:
                    failed += [f"{later}: not sent" for _, _, later in bonuses[index + 1 :]]
                    break
        if failed:
            raise ApiError(f"{len(failed)} of {len(bonuses)} bonuses not paid: " + "; ".join(failed), records=records)
        return records

    def _pay_one(
        self, ref: SubmissionRef, amount: Decimal, token: str, reason: str, intent: PaymentIntent | None = None
    ) -> list[CallRecord]:
        if not token or len(token) > TOKEN_LIMIT:
            raise ApiError(f"a bonus token must have 1 to {TOKEN_LIMIT} characters, not {len(token)}")
        params = {
            "WorkerId": ref.participant_id,
            "BonusAmount": bonus_amount(amount),
            "AssignmentId": ref.submission_id,
            "Reason": feedback(reason, required=True),
            "UniqueRequestToken": token,
        }
        if intent is not None:
            intent.sending([token], {"operation": self._api_name("send_bonus"), "body": dict(params), "sandbox": self.sandbox})
        try:
            records = self._call("bonus", "send_bonus", params, settled=lambda error: token_already_used(error, token))[1]
        except ApiError as error:  # not paid (MTurk keeps the token 24 hours: the next apply may retry it safely)
            error.outcome_unknown = False
            raise
        return [replace(r, tokens=(token,)) if r.ok else r for r in records]

    def bonus_outcome(self, ref: SubmissionRef, amount: Decimal, token: str, payment_id: str) -> tuple[bool | None, list[CallRecord]]:
        """``ListBonusPayments`` of the assignment: a bonus of ``amount`` there -> paid; none -> not paid (SendBonus
        answers once the bonus is granted, and the same token within 24 hours is refused as a duplicate anyway)."""
        response, records = self._call("bonus_check", "list_bonus_payments", {"AssignmentId": ref.submission_id, "MaxResults": 100})
        listed = response.get("BonusPayments") or []
        paid = any(b.get("AssignmentId") == ref.submission_id and _amount(b.get("BonusAmount")) == amount for b in listed)
        return paid, records

    # -- opening the study (manage.py platform_draft) ------------------------------------------------

    def create_draft(self, body: dict) -> tuple[str, list[CallRecord]]:
        """``CreateHIT`` with ``body`` (:meth:`.mturk.MTurk.draft`) under a fresh ``UniqueRequestToken``,
        so a retry after a lost answer cannot open a second HIT. Returns what was created, in words."""
        token = uuid.uuid4().hex
        response, records = self._call(
            "create_draft", "create_hit", {**body, "UniqueRequestToken": token}, settled=lambda error: "HitAlreadyExists" in error.message
        )
        hit = response.get("HIT") or {}
        if not hit:
            return "the HIT was created by an earlier attempt (MTurk: HitAlreadyExists)", records
        site = "https://workersandbox.mturk.com" if self.sandbox else "https://worker.mturk.com"
        where = "in the sandbox" if self.sandbox else "in production"
        return f"HIT {hit.get('HITId', '?')} created {where}; workers see it at {site}/projects/{hit.get('HITGroupId', '?')}/tasks", records


def summary(response: dict) -> str:
    """The audit log's text of a successful answer: the assignment's or HIT's status, MTurk's request id."""
    parts = []
    assignment, hit = response.get("Assignment") or {}, response.get("HIT") or {}
    if assignment.get("AssignmentStatus"):
        parts.append(f"AssignmentStatus {assignment['AssignmentStatus']}")
    if hit.get("HITStatus"):
        parts.append(f"HITStatus {hit['HITStatus']}")
    request_id = response.get("ResponseMetadata", {}).get("RequestId")
    if request_id:
        parts.append(f"RequestId {request_id}")
    return "OK" + (": " + ", ".join(parts) if parts else "")


def _amount(text: object) -> Decimal | None:
    """MTurk's amount string ("0.75") as a Decimal; None when unreadable."""
    try:
        return Decimal(str(text))
    except (ArithmeticError, ValueError):
        return None
