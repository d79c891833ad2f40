"""The audit log of calls to the platforms' APIs (models.PlatformCall): every call, answered or failed, stored at
once, without credentials; a call that moves money is logged *before* it goes out (:func:`record_sending`)."""

from __future__ import annotations

from django.utils import timezone

from studyapp.models import Annotator, PlatformCall, Study
from studyapp.services.platforms.review_api import ApiError, CallRecord, short

SECRET_KEYS = {"authorization", "headers", "auth", "token_header", "aws_secret_access_key", "aws_access_key_id"}
SENT = "sent; outcome unknown until the platform answers (the answer is logged next)"


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


def record_sending(study: Study, annotator: Annotator | None, platform: str, request: dict, staff=None) -> None:
    """Log a payment call about to go out (ok=False, no status until its answer is logged): if the process dies
    waiting, the log still shows that it was sent."""
    record_calls(study, annotator, platform, [CallRecord("pay_bonus", request, False, None, SENT)], staff)


def _clean(request: dict) -> dict:
    """``request`` without anything that could be a credential (clients never put one there; belt and braces)."""
    return {k: (_clean(v) if isinstance(v, dict) else v) for k, v in request.items() if str(k).lower() not in SECRET_KEYS}
