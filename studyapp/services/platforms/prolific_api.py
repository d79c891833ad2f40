"""Prolific's API for reviewing submissions (services.platforms.review_api.ReviewClient), stdlib HTTP only.

Calls (Prolific API reference, "Submissions" and "Bonuses"; token auth: ``Authorization: Token <token>``):

* ``GET /api/v1/submissions/{id}/``: the submission's ``status`` (the id is the study link's SESSION_ID);
* ``POST /api/v1/submissions/{id}/transition/`` with ``{"action": "APPROVE"}`` or ``{"action": "REJECT",
  "rejection_category": ..., "message": ...}`` (the message at least 100 characters; Prolific ignores a
  repeated identical transition);
* ``POST /api/v1/submissions/bonus-payments/`` with ``{"study_id", "csv_bonuses": "<submission id>,<amount>\\n..."}``
  sets up a bulk bonus (nothing paid yet) and answers its ``id``; ``POST /api/v1/bulk-bonus-payments/{id}/pay/``
  pays it. Prolific documents the pay call as **not idempotent**: every request pays again.

So a created bulk bonus's id is remembered (:attr:`ProlificReviewClient.bonus_batches`, committed on the
decision by the review service as soon as it is set up and handed back by it: ``intent.payment_id``) and a retry
pays that one instead of setting up a second; the pay request is announced to the service before it goes out (``intent``: services.review.paying).
After a lost answer, ``GET /api/v1/submissions/{id}/`` lists the bonuses paid (``bonus_payments``). The pay call
is retried only when the answer says it was not carried out (429, 502, 503, 504); a 500 or a network
error after the request went out leaves its outcome unknown: :class:`ApiError` with ``outcome_unknown``,
and the service never pays that bonus again by itself.

Configuration from the environment only: ``PROLIFIC_API_TOKEN`` (never logged, stored or recorded) and
``PROLIFIC_API_URL`` (default https://api.prolific.com; a test points it at a local server).
"""

from __future__ import annotations

import http.client
import json
import os
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from datetime import UTC, datetime
from decimal import Decimal
from email.utils import parsedate_to_datetime
from http import HTTPStatus

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

DEFAULT_URL = "https://api.prolific.com"
TIMEOUT = 20.0  # seconds per request
ATTEMPTS = 3  # per call, the first included
MAX_WAIT = 30.0  # a Retry-After longer than this is not waited for (the error is shown instead)
BACKOFF = 1.0  # seconds before the second attempt when the answer gives no Retry-After; doubled after
# The submission's status -> our normalised state (Prolific API reference, "Submission object").
STATES = {
    "AWAITING REVIEW": AWAITING,
    "APPROVED": APPROVED,
    "PARTIALLY APPROVED": APPROVED,
    "REJECTED": REJECTED,
    "RETURNED": RETURNED,
    "TIMED-OUT": RETURNED,
    "SCREENED OUT": RETURNED,
}
NOT_CARRIED_OUT = (429, 502, 503, 504)  # answers that say the request was not acted on


def client_from_env(*, sleep: Callable[[float], None] | None = None) -> ProlificReviewClient:
    """The client configured by ``PROLIFIC_API_TOKEN`` and ``PROLIFIC_API_URL``; ApiError without a token."""
    token = os.environ.get("PROLIFIC_API_TOKEN", "").strip()
    if not token:
        raise ApiError(
            "PROLIFIC_API_TOKEN is not set: create an API token in Prolific (Settings > Go to API token page) "
            "and set it in the environment of this process"
        )
    return ProlificReviewClient(token, os.environ.get("PROLIFIC_API_URL", "").strip() or DEFAULT_URL, sleep=sleep)


class ProlificReviewClient:
    """Prolific's review calls with bounded retries (honouring Retry-After) and timeouts; ``sleep`` injectable."""

    def __init__(self, token: str, base_url: str = DEFAULT_URL, *, sleep: Callable[[float], None] | None = None,
                 timeout: float = TIMEOUT, attempts: int = ATTEMPTS) -> None:  # fmt: skip
        self._token = token  # only ever put in the Authorization header
        self.base_url = base_url.rstrip("/")
        self.sleep = sleep or time.sleep
        self.timeout = timeout
        self.attempts = attempts
        # token of a bonus -> id of the bulk bonus payment set up for it (by this client, or by an earlier apply:
        # the intent's payment_id): a retry pays the same bulk bonus.
        self.bonus_batches: dict[str, str] = {}

    def __repr__(self) -> str:  # never the token
        return f"ProlificReviewClient({self.base_url!r})"

    # -- ReviewClient ----------------------------------------------------------------------------

    def state(self, ref: SubmissionRef) -> tuple[str, list[CallRecord]]:
        try:
            answer, records = self._call("state", "GET", f"/api/v1/submissions/{ref.submission_id}/")
        except ApiError as exc:
            if exc.status == HTTPStatus.NOT_FOUND:  # no such submission (any more): nothing to review
                return RETURNED, exc.records
            raise
        status = str(answer.get("status", "")) if isinstance(answer, dict) else ""
        return STATES.get(status, UNKNOWN), records

    def approve(self, ref: SubmissionRef, *, sending: Announce | None = None) -> list[CallRecord]:
        return self._transition("approve", ref, {"action": "APPROVE"}, sending)

    def reject(self, ref: SubmissionRef, category: str, message: str, *, sending: Announce | None = None) -> list[CallRecord]:
        body = {"action": "REJECT", "rejection_category": category, "message": message}
        return self._transition("reject", ref, body, sending)

    def pay_bonuses(self, bonuses: list[tuple[SubmissionRef, Decimal, str]], *, reason: str = "",
                    intent: PaymentIntent | None = None) -> list[CallRecord]:  # fmt: skip
        """Set up one bulk bonus per Prolific study (unless one was set up for these tokens before) and pay it
        (Prolific's bonuses carry no reason: ``reason`` is not sent). ``intent`` hears of each bulk bonus set up
        and of each pay request before it goes out."""
        records: list[CallRecord] = []
        for batch, tokens in self._batches(bonuses, records, intent).items():
            path = f"/api/v1/bulk-bonus-payments/{batch}/pay/"
            if intent is not None:
                intent.sending(tokens, {"method": "POST", "path": path, "body": {}})
            try:
                _, done = self._call("pay_bonus", "POST", path, {}, safe=False)
            except ApiError as exc:
                exc.records[:0] = records
                raise
            records += [_paid(r, tokens) for r in done]
        return records

    def bonus_outcome(self, ref: SubmissionRef, amount: Decimal, token: str, payment_id: str) -> tuple[bool | None, list[CallRecord]]:
        """Prolific's submission lists the bonuses paid for it (``bonus_payments``, in the currency's cents): one of
        ``amount`` there -> paid. Prolific pays asynchronously ("in the following minutes"), so a missing one
        proves nothing: None (staff look at the platform), never False."""
        answer, records = self._call("bonus_check", "GET", f"/api/v1/submissions/{ref.submission_id}/")
        listed = answer.get("bonus_payments") if isinstance(answer, dict) else None
        cents = int((amount * 100).to_integral_value())
        paid = isinstance(listed, list) and any(isinstance(c, int | float) and round(c) == cents for c in listed)
        return (True if paid else None), records

    def create_draft(self, body: dict) -> tuple[str, list[CallRecord]]:
        """Prolific's "Create a draft study" (``POST /api/v1/studies/``, :meth:`.prolific.Prolific.draft`): unpublished
        until the researcher publishes it. Not repeated after a lost answer (that could make two drafts)."""
        answer, records = self._call("create_draft", "POST", "/api/v1/studies/", body, safe=False)
        study_id = answer.get("id", "") if isinstance(answer, dict) else ""
        return f"draft study {study_id or '(no id in the answer)'} created on Prolific: check it and publish it there", records

    # -- helpers ---------------------------------------------------------------------------------

    def _transition(self, operation: str, ref: SubmissionRef, body: dict, sending: Announce | None) -> list[CallRecord]:
        # Prolific ignores a repeated identical transition, so retrying one is safe.
        path = f"/api/v1/submissions/{ref.submission_id}/transition/"
        if sending is not None:
            sending({"method": "POST", "path": path, "body": body})
        return self._call(operation, "POST", path, body)[1]

    def _batches(self, bonuses: list[tuple[SubmissionRef, Decimal, str]], records: list[CallRecord],
                 intent: PaymentIntent | None = None) -> dict[str, list[str]]:  # fmt: skip
        """Bulk bonus id -> the tokens it pays: known ones reused, one new per Prolific study for the rest."""
        batches: dict[str, list[str]] = {}
        new: dict[str, list[tuple[SubmissionRef, Decimal, str]]] = {}
        for ref, amount, token in bonuses:
            if amount <= 0:
                raise ApiError(f"bonus {amount} for submission {ref.submission_id}: must be more than 0")
            if not ref.study_ref:
                raise ApiError(f"submission {ref.submission_id}: the link had no STUDY_ID, so the bonus cannot be set up")
            if intent is not None and not self.bonus_batches.get(token):  # set up by an earlier apply: pay that one
                self.bonus_batches[token] = intent.payment_id(token)
            if self.bonus_batches.get(token):
                batches.setdefault(self.bonus_batches[token], []).append(token)
            else:
                new.setdefault(ref.study_ref, []).append((ref, amount, token))
        for study_id, group in new.items():
            csv = "".join(f"{ref.submission_id},{amount:.2f}\n" for ref, amount, _ in group)
            path, body = "/api/v1/submissions/bonus-payments/", {"study_id": study_id, "csv_bonuses": csv}
            if intent is not None:
                intent.setting_up([token for _, _, token in group], {"method": "POST", "path": path, "body": body})
            try:
                answer, done = self._call("bonus", "POST", path, body)
            except ApiError as exc:
                exc.records[:0] = records
                raise
            batch = str(answer.get("id", "")) if isinstance(answer, dict) else ""
            if not batch:
                raise ApiError("Prolific set up the bonus but answered no id", status=done[-1].status, records=records + done)
            for _, _, token in group:
                self.bonus_batches[token] = batch
            if intent is not None:  # kept (with its calls) before anything is paid: a retry pays this one
                intent.set_up([token for _, _, token in group], batch, done)
            else:
                records += done
            batches.setdefault(batch, []).extend(token for _, _, token in group)
        return batches

    def _call(
        self, operation: str, method: str, path: str, body: dict | None = None, *, safe: bool = True
    ) -> tuple[object, list[CallRecord]]:
        """One API call with retries; returns the decoded answer and the records of every attempt.

        ``safe``: the call may be repeated after any retryable failure; otherwise only after answers
        saying it was not carried out (:data:`NOT_CARRIED_OUT`)."""
        request_info = {"method": method, "path": path, **({"body": body} if body is not None else {})}
        records: list[CallRecord] = []
        for attempt in range(1, self.attempts + 1):
            try:
                status, text, retry_after = self._send(method, path, body)
            except ApiError as exc:  # network error: the request may or may not have arrived
                records.append(CallRecord(operation, request_info, False, None, exc.message))
                if safe and attempt < self.attempts:
                    self.sleep(BACKOFF * 2 ** (attempt - 1))
                    continue
                raise ApiError(exc.message if safe else f"{exc.message}; outcome unknown", retryable=True, records=records,
                               outcome_unknown=not safe) from None  # fmt: skip
            ok = 200 <= status < 300
            records.append(CallRecord(operation, request_info, ok, status, short(text)))
            if ok:
                return _decode(text), records
            error = _http_error(status, text, retry_after)
            retry = error.retryable and (safe or status in NOT_CARRIED_OUT)
            if retry and attempt < self.attempts and (error.retry_after or 0) <= MAX_WAIT:
                self.sleep(error.retry_after if error.retry_after is not None else BACKOFF * 2 ** (attempt - 1))
                continue
            error.records = records
            error.outcome_unknown = not safe and status not in NOT_CARRIED_OUT and status >= 500
            if error.outcome_unknown:
                error.message += "; outcome unknown"
            raise error
        raise AssertionError("unreachable")  # pragma: no cover

    def _send(self, method: str, path: str, body: dict | None) -> tuple[int, str, float | None]:
        """``(status, text, Retry-After seconds)`` of one HTTP request; ApiError on a network error."""
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.base_url + path, data=data, method=method)
        request.add_header("Authorization", f"Token {self._token}")
        request.add_header("Accept", "application/json")
        if data is not None:
            request.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as answer:  # noqa: S310 (https or a test's 127.0.0.1)
                return answer.status, answer.read().decode("utf-8", "replace"), None
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read().decode("utf-8", "replace"), _seconds(exc.headers.get("Retry-After"))
        except (OSError, http.client.HTTPException) as exc:  # URLError, timeouts, refused or dropped connections
            reason = getattr(exc, "reason", exc)
            raise ApiError(f"network error: {reason}", retryable=True) from None


def _paid(record: CallRecord, tokens: list[str]) -> CallRecord:
    """``record`` of a successful pay call, naming the bonus tokens it paid."""
    return CallRecord(record.operation, record.request, record.ok, record.status, record.response, tokens=tuple(tokens))


def _decode(text: str) -> object:
    try:
        return json.loads(text) if text.strip() else {}
    except ValueError:
        return text


def _seconds(value: str | None, now: datetime | None = None) -> float | None:
    """Retry-After in seconds: a number of seconds (what Prolific sends) or an HTTP date (RFC 9110, 10.2.3); None if unreadable."""
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:  # "-0000": UTC as well
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


def _http_error(status: int, text: str, retry_after: float | None) -> ApiError:
    """The short error of an HTTP answer: ``"429 Too Many Requests: retry after 2 s"``, ``"400 Bad Request: <detail>"``."""
    try:
        phrase = HTTPStatus(status).phrase
    except ValueError:
        phrase = "error"
    message = f"{status} {phrase}"
    if status == HTTPStatus.TOO_MANY_REQUESTS and retry_after is not None:
        message += f": retry after {retry_after:g} s"
    elif status in (HTTPStatus.UNAUTHORIZED, HTTPStatus.FORBIDDEN):
        message += ": check PROLIFIC_API_TOKEN (a valid token of the workspace that runs the study)"
    elif 400 <= status < 500 and text.strip():
        message += f": {short(_detail(text), 300)}"
    return ApiError(message, status=status, retry_after=retry_after, retryable=status == 429 or status >= 500)


def _detail(text: str) -> str:
    """Prolific's error detail (``{"error": {"detail": ...}}`` or ``{"detail": ...}``), else the text."""
    answer = _decode(text)
    if isinstance(answer, dict):
        inner = answer.get("error", answer)
        if isinstance(inner, dict) and "detail" in inner:
            return json.dumps(inner["detail"]) if not isinstance(inner["detail"], str) else inner["detail"]
    return text.strip()
