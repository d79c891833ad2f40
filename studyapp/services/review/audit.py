"""The audit log of calls to the platforms' APIs (models.PlatformCall): every call, answered or failed, stored at
once, without credentials. A call that changes state on the platform (approve, reject, a bonus's set-up and payment) is
logged *before* it goes out (:func:`record_sending`: "sent, outcome unknown") and that row is completed with its answer
(:func:`record_answers`); a process killed in between leaves the row saying the call was sent with its outcome
unknown, and the next apply that learns the outcome from the platform annotates it (:func:`settle_sent`)."""

from __future__ import annotations

import json

from django.utils import timezone

from studyapp.models import Annotator, PlatformCall, Study
from studyapp.services.platforms.review_api import ApiError, CallRecord, short

SECRET_KEYS = {"authorization", "headers", "auth", "token_header", "aws_secret_access_key", "aws_access_key_id"}
SENT = "sent; outcome unknown until the platform answers (its answer completes this row)"


def with_failure(exc: ApiError, operation: str) -> list[CallRecord]:
    """The records of a failed client call, with the failure itself when the client did not record it."""
    records = list(exc.records)
    if not any(not r.ok for r in records):
        records.append(CallRecord(operation, {}, False, exc.status, short(exc.message)))
    return records


def record_calls(study: Study, annotator: Annotator | None, platform: str, records: list[CallRecord], staff=None) -> None:
    """Store ``records`` in the audit log at once (a later failure keeps them); requests without credentials."""
    now = timezone.now()
    PlatformCall.objects.bulk_create(
        PlatformCall(
            study=study,
            annotator=annotator,
            platform=platform,
            operation=r.operation,
            request=_clean(r.request),
            ok=r.ok,
            status=r.status,
            response=short(r.response),
            staff=staff,
            created_at=now,
        )  # fmt: skip
        for r in records
    )


def record_sending(study: Study, annotator: Annotator | None, platform: str, request: dict, staff=None,
                   operation: str = "pay_bonus") -> PlatformCall:  # fmt: skip
    """Log a call about to go out (ok=False, no status until :func:`record_answers` completes it): if the process dies
    waiting, the log still shows that it was sent."""
    return PlatformCall.objects.create(study=study, annotator=annotator, platform=platform, operation=operation,
                                       request=_clean(request), ok=False, status=None, response=SENT, staff=staff,
                                       created_at=timezone.now())  # fmt: skip


def record_answers(sent: list[PlatformCall], study: Study, annotator: Annotator | None, platform: str,
                   records: list[CallRecord], staff=None) -> None:  # fmt: skip
    """Store ``records``: the first record of each request announced in ``sent`` completes that row (one row per
    request, never a second) and leaves ``sent``; the others (retries, other calls) are added."""
    rest = []
    for record in records:
        row = next((r for r in sent if r.request == _clean(record.request)), None)
        if row is None:
            rest.append(record)
            continue
        sent.remove(row)
        row.operation, row.ok, row.status, row.response = record.operation, record.ok, record.status, short(record.response)
        row.save(update_fields=["operation", "ok", "status", "response"])
    record_calls(study, annotator, platform, rest, staff)


def settle_sent(study: Study, operations: tuple[str, ...], found: str, *, annotator: Annotator | None = None,
                mentions: tuple[str, ...] = ()) -> int:  # fmt: skip
    """The rows among ``operations`` still "sent, outcome unknown" (their process died waiting) of ``annotator``'s calls,
    or of the calls whose request names one of ``mentions`` (a payment's id or token): annotated with what the platform
    showed afterwards (``found``); how many."""
    unknown = PlatformCall.objects.filter(study=study, operation__in=operations, response=SENT)
    if annotator is not None:
        unknown = unknown.filter(annotator=annotator)
    if mentions:
        named = [c.pk for c in unknown.only("pk", "request") if _names(c.request, mentions)]
        unknown = unknown.filter(pk__in=named)
    return unknown.update(response=short(f"sent; its answer was lost (the process ended); afterwards: {found}"))


def _names(request: dict, ids: tuple[str, ...]) -> bool:
    """Whether ``request`` names one of ``ids`` whole: as a value (MTurk's token) or a path segment (Prolific's bulk id)."""
    text = json.dumps(request)
    return any(i and (json.dumps(i) in text or f"/{i}/" in text) for i in ids)


def _clean(request: dict) -> dict:
    """``request`` without anything that could be a credential (clients never put one there; belt and braces)."""
    return {k: (_clean(v) if isinstance(v, dict) else v) for k, v in request.items() if str(k).lower() not in SECRET_KEYS}
