"""The interface every platform's review client implements (approve, reject, bonus through its API).

The review service (:mod:`studyapp.services.review`) talks to a platform only through :class:`ReviewClient`; one client
per platform (:mod:`.prolific_api`, :mod:`.mturk_api`), built by the adapter's ``review_client()``
from the environment. A failed call raises :class:`ApiError` (shown per submission, never a
traceback); every call made is returned as a :class:`CallRecord` for the audit log, which never holds
credentials.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Protocol

# Normalised states of a submission on a platform (ReviewClient.state).
AWAITING, APPROVED, REJECTED, RETURNED, UNKNOWN = "awaiting", "approved", "rejected", "returned", "unknown"
STATES = (AWAITING, APPROVED, REJECTED, RETURNED, UNKNOWN)
# Operations recorded in the audit log.
OPERATIONS = ("state", "approve", "reject", "bonus", "pay_bonus", "bonus_check", "create_draft")
RESPONSE_LIMIT = 500


def short(text: str, limit: int = RESPONSE_LIMIT) -> str:
    """``text`` cut to ``limit`` characters (an answer or error kept in the audit log)."""
    text = str(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


class ApiError(Exception):
    """A platform call failed. Shown per submission, never a traceback.

    ``message`` is short human text ("429 Too Many Requests: retry after 2 s", "503 Service
    Unavailable", "network error: timed out"); ``status`` the HTTP status or None; ``retryable`` for
    429, 5xx and network errors; ``records`` the calls made up to the failure (for the audit log; a
    client may include the failed attempts, else the review service records the failure itself);
    ``outcome_unknown``: a call that is not safe to repeat (a payment) may have been carried out (a
    timeout, a 500), so it must not be sent again without a look at the platform.
    """

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        retry_after: float | None = None,
        retryable: bool = False,
        records: list[CallRecord] | None = None,
        outcome_unknown: bool = False,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.retry_after = retry_after
        self.retryable = retryable
        self.records: list[CallRecord] = list(records or [])
        self.outcome_unknown = outcome_unknown

    def __str__(self) -> str:
        return self.message


@dataclass(frozen=True)
class SubmissionRef:
    """What the platform needs to act on one participant's submission (from ``Annotator.external_ids``)."""

    participant_id: str  # Prolific PROLIFIC_PID / MTurk workerId (raw id: never shown without the id permission)
    submission_id: str  # Prolific SESSION_ID (= submission id) / MTurk assignmentId
    study_ref: str = ""  # Prolific STUDY_ID / MTurk hitId


@dataclass(frozen=True)
class CallRecord:
    """One API call and its result, for the audit log (never credentials)."""

    operation: str  # one of OPERATIONS
    request: dict = field(default_factory=dict)  # method, path/operation name, body (no auth header/keys)
    ok: bool = True
    status: int | None = None  # HTTP status (MTurk: ResponseMetadata.HTTPStatusCode), None on a network error
    response: str = ""  # short text of the answer or the error (at most RESPONSE_LIMIT characters)
    tokens: tuple[str, ...] = ()  # optional: the bonus tokens a successful payment call paid (partial failures)


Announce = Callable[[dict], object]  # told of a request that changes state, right before it goes out


class PaymentIntent(Protocol):
    """Told by a client what it is about to do with money, so the caller can commit it first
    (services.review.paying.Intent)."""

    def set_up(self, tokens: list[str], payment_id: str, records: list[CallRecord]) -> None:
        """The platform set up a payment for ``tokens`` under ``payment_id`` (nothing paid yet: Prolific's bulk bonus)
        with the calls of ``records`` (logged now, not returned again)."""
        ...

    def setting_up(self, tokens: list[str], request: dict) -> None:
        """The request setting up a payment for ``tokens`` (nothing paid yet) goes out right after this returns."""
        ...

    def sending(self, tokens: list[str], request: dict) -> None:
        """The request paying ``tokens`` (``request``: method, path or operation, body) goes out right after this returns;
        it raises (and nothing is sent) when the caller may no longer pay them."""
        ...

    def payment_id(self, token: str) -> str:
        """The platform's id of a payment set up before for ``token`` ('' if none): a platform that sets a payment up
        before paying it (Prolific's bulk bonus) pays that one instead of setting up another."""
        ...


class ReviewClient(Protocol):
    """One platform's API for review. Every method raises :class:`ApiError` on failure and returns the
    records of the calls it made (for the audit log). Implementations retry a retryable error a bounded
    number of times (honouring Retry-After, capped; sleep injectable for tests)."""

    def state(self, ref: SubmissionRef) -> tuple[str, list[CallRecord]]:
        """The submission's state on the platform, one of :data:`STATES`: "awaiting" (can be approved or
        rejected), "approved", "rejected", "returned" (or gone/abandoned), "unknown"."""
        ...

    def approve(self, ref: SubmissionRef, *, sending: Announce | None = None) -> list[CallRecord]:
        """Approve the submission; ``sending`` hears of the request (method, path or operation, body) right before it
        goes out (the caller logs it first: services.review.audit.record_sending)."""
        ...

    def reject(self, ref: SubmissionRef, category: str, message: str, *, sending: Announce | None = None) -> list[CallRecord]:
        """Reject the submission; ``sending`` as for :meth:`approve`."""
        ...

    def pay_bonuses(self, bonuses: list[tuple[SubmissionRef, Decimal, str]], *, reason: str = "",
                    intent: PaymentIntent | None = None) -> list[CallRecord]:  # fmt: skip
        """Pay each ``(ref, amount, token)`` exactly once; ``token`` is our unique, stable id of that
        bonus (the same on a retry); ``reason``: the study's ``bonus_reason`` for a platform that shows
        one (MTurk's ``Reason``; the client's default when empty). MTurk: ``send_bonus`` with ``UniqueRequestToken=token``; Prolific:
        bulk create then pay, grouped by ``study_ref``. When it raises, the bonuses whose tokens appear
        in a successful record's ``tokens`` count as paid (the others are tried again next time). ``intent``
        hears of each payment set up and, right before it goes out, of each request that moves money."""
        ...

    def bonus_outcome(self, ref: SubmissionRef, amount: Decimal, token: str, payment_id: str) -> tuple[bool | None, list[CallRecord]]:
        """After a payment's answer was lost: was the bonus ``token`` of ``amount`` paid? True (the platform lists it),
        False (the platform says it was not: safe to pay again under the same token), None (it cannot tell)."""
        ...
