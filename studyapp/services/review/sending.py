"""Sending a study's review to the platforms: what would be sent (:func:`plan`) and sending it (:func:`apply`).

Per submission the platform's own state is asked first: a submission approved or rejected there
already is not sent again, one returned or timed out is left alone. Then the approve/reject, then the
bonuses of the approved (one stable token per bonus, made once: MTurk's UniqueRequestToken; Prolific's
bulk bonus id remembered on the decision, so a retry pays that one instead of setting up another).
Every call, answered or failed, becomes a :class:`~studyapp.models.PlatformCall` at once (the audit
log; credentials never reach it); an error stops that submission only, shown in its row. Two applies
never send the same decision: each claims it first (:func:`_claim`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import timedelta

from django.db.models import Q
from django.utils import timezone

from studyapp.exceptions import StudyError
from studyapp.models import Annotator, PlatformCall, ReviewDecision, Study
from studyapp.services.platforms.review_api import APPROVED, AWAITING, REJECTED, ApiError, CallRecord, ReviewClient, short
from studyapp.services.review.decisions import DONE, Row, review_rows, was_sent
from studyapp.services.review.suggest import APPROVE

CLAIM_MINUTES = 15  # a claim older than this is from an apply that died: the decision is free again
SECRET_KEYS = {"authorization", "headers", "auth", "token_header", "aws_secret_access_key", "aws_access_key_id"}
SAVED = ["action", "category", "message", "bonus", "source", "applied_action", "applied_at", "applied_note",
         "bonus_batch", "bonus_paid", "bonus_paid_at", "bonus_unknown"]  # fmt: skip


@dataclass(frozen=True)
class Step:
    """One line of a plan or of an apply's outcome: ``operation`` for ``pseudonym`` and what it did or would do."""

    pseudonym: str
    operation: str  # approve, reject, bonus, nothing
    text: str
    ok: bool = True


def plan(rows: list[Row]) -> list[Step]:
    """What :func:`apply` would send for ``rows`` (nothing is sent)."""
    steps = []
    for row in rows:
        name, final, rec = row.platform.name, row.final, row.record
        if row.transition_due:
            what = (
                f"approve on {name}"
                if final.action == APPROVE
                else f"reject on {name} ({final.category or 'no category'}): {final.message}"
            )
            steps.append(Step(row.pseudonym, final.action, f"ask the submission's state; if awaiting review, {what}"))
        if row.bonus_due:
            again = " (set up before: pay that one)" if rec is not None and rec.bonus_batch else ""
            steps.append(Step(row.pseudonym, "bonus", f"pay a bonus of {final.bonus}{again} once the submission is approved"))
        if not (row.transition_due or row.bonus_due):
            steps.append(Step(row.pseudonym, "nothing", row.state() if row.ref is None or rec is not None else final.note))
    return steps


def clients_for(rows: list[Row]) -> dict[str, ReviewClient]:
    """The review client of every platform with something to send; ApiError/StudyError before anything is sent."""
    clients: dict[str, ReviewClient] = {}
    for row in rows:
        if (row.transition_due or row.bonus_due) and row.platform.key not in clients:
            client = row.platform.review_client()
            if client is None:
                raise StudyError(f"{row.platform.label} has no API for review here: decide its submissions on the platform")
            clients[row.platform.key] = client
    return clients


def apply(study: Study, *, staff=None, clients: Mapping[str, ReviewClient] | None = None,
          progress: Callable[[Step], None] | None = None, limit: int | None = None) -> list[Step]:  # fmt: skip
    """Send every due decision of ``study`` (the first ``limit`` of them, in the table's order, when given: the
    review page sends a batch per request); returns what happened per submission (errors included)."""
    rows = [row for row in review_rows(study) if row.transition_due or row.bonus_due]
    if limit is not None:
        rows = rows[:limit]
    clients = dict(clients) if clients is not None else clients_for(rows)
    steps: list[Step] = []

    def report(step: Step) -> None:
        steps.append(step)
        if progress is not None:
            progress(step)

    bonuses: dict[tuple[str, str], list[tuple[Row, ReviewDecision]]] = {}
    for row in rows:
        client = clients.get(row.platform.key)
        if client is None:
            raise StudyError(f"no review client for {row.platform.label}")
        rec = _materialise(study, row)
        if not _claim(rec):
            report(Step(row.pseudonym, "claim", "another apply is sending this decision now: left to it", ok=False))
            continue
        keep = False
        try:
            rec.refresh_from_db()
            if row.ref is not None and row.final.action in ("approve", "reject") and not rec.applied_action:
                report(_transition(study, row, rec, client, staff))
            if rec.applied_action == APPROVE and row.bonus_due and rec.bonus > 0 and not (rec.bonus_paid_at or rec.bonus_unknown):
                bonuses.setdefault((row.platform.key, row.ref.study_ref if row.ref else ""), []).append((row, rec))
                keep = True
            elif row.bonus_due and not rec.applied_action:
                report(Step(row.pseudonym, "bonus", "not paid: the submission is not approved on the platform", ok=False))
        finally:
            if not keep:
                _release(rec)
    for (key, _), group in bonuses.items():
        try:
            for step in _pay(study, group, clients[key], staff):
                report(step)
        finally:
            for _, rec in group:
                _release(rec)
    return steps


def still_due(study: Study) -> int:
    """How many submissions of ``study`` still have a decision or a bonus to send (failed ones included)."""
    return sum(1 for row in review_rows(study) if row.transition_due or row.bonus_due)


# -- one submission ---------------------------------------------------------------------------------


def _materialise(study: Study, row: Row) -> ReviewDecision:
    """The decision row about to be sent: created from the rules' suggestion, or brought up to it while nothing was sent."""
    rec, final = row.record, row.final
    values = {"action": final.action, "category": final.category, "message": final.message, "bonus": final.bonus}
    if rec is None:
        rec, _ = ReviewDecision.objects.get_or_create(
            annotator=row.annotator,
            defaults={"study": study, **values, "source": ReviewDecision.Source.RULES, "decided_at": timezone.now()},
        )
    elif rec.source == ReviewDecision.Source.RULES and not was_sent(rec):
        for name, value in values.items():
            setattr(rec, name, value)
        rec.save(update_fields=list(values))
    row.record = rec
    return rec


def _claim(rec: ReviewDecision) -> bool:
    now = timezone.now()
    free = Q(claimed_at__isnull=True) | Q(claimed_at__lt=now - timedelta(minutes=CLAIM_MINUTES))
    return ReviewDecision.objects.filter(pk=rec.pk).filter(free).update(claimed_at=now) == 1


def _release(rec: ReviewDecision) -> None:
    ReviewDecision.objects.filter(pk=rec.pk).update(claimed_at=None)


def _transition(study: Study, row: Row, rec: ReviewDecision, client: ReviewClient, staff) -> Step:
    """Ask the submission's state, then approve or reject it if it awaits review."""
    ref, name, action = row.ref, row.platform.name, rec.action
    assert ref is not None
    ok, note = True, ""
    try:
        state, records = client.state(ref)
        record_calls(study, row.annotator, row.platform.key, records, staff)
        if state == AWAITING:
            sent = client.approve(ref) if action == APPROVE else client.reject(ref, rec.category, rec.message)
            record_calls(study, row.annotator, row.platform.key, sent, staff)
            rec.applied_action, text = action, f"{DONE[action]} on {name}" + (f" ({rec.category})" if rec.category else "")
        elif state in (APPROVED, REJECTED):
            rec.applied_action = APPROVE if state == APPROVED else "reject"
            text = note = f"already {state} on {name}: nothing sent"
            if rec.applied_action != action:
                text = note = f"{note} (the decision was {action})"
        else:
            text = note = f"{state} on {name}: nothing sent"
    except ApiError as exc:
        record_calls(study, row.annotator, row.platform.key, with_failure(exc, action), staff)
        ok, text = False, f"{action} not sent: {exc.message}"
        note = text
    rec.applied_at, rec.applied_note = timezone.now(), note
    rec.save(update_fields=SAVED)
    return Step(row.pseudonym, action, text, ok)


def _pay(study: Study, group: list[tuple[Row, ReviewDecision]], client: ReviewClient, staff) -> list[Step]:
    """Pay the bonuses of ``group`` (one platform, one platform study) in one call of the client."""
    batches = getattr(client, "bonus_batches", None)
    if isinstance(batches, dict):  # Prolific: the bulk bonuses set up before are paid, never set up again
        batches.update({str(rec.bonus_token): rec.bonus_batch for _, rec in group if rec.bonus_batch})
    items = [(row.ref, rec.bonus, str(rec.bonus_token)) for row, rec in group if row.ref is not None]
    failure: ApiError | None = None
    try:
        records = client.pay_bonuses(items, reason=study.bonus_reason)
        paid = {token for _, _, token in items}
    except ApiError as exc:
        failure, records = exc, with_failure(exc, "pay_bonus")
        paid = {token for r in records if r.ok for token in r.tokens}
    single = group[0][0].annotator if len(group) == 1 else None
    record_calls(study, single, group[0][0].platform.key, records, staff)
    steps, now = [], timezone.now()
    for row, rec in group:
        token = str(rec.bonus_token)
        if isinstance(batches, dict) and token in batches:
            rec.bonus_batch = batches[token]
        if token in paid:
            rec.bonus_paid, rec.bonus_paid_at = rec.bonus, now
            steps.append(Step(row.pseudonym, "bonus", f"bonus {rec.bonus} paid on {row.platform.name}"))
        else:
            assert failure is not None
            rec.bonus_unknown = failure.outcome_unknown
            later = "check the platform before paying again" if failure.outcome_unknown else "tried again on the next apply"
            steps.append(Step(row.pseudonym, "bonus", f"bonus {rec.bonus} not paid: {failure.message} ({later})", ok=False))
        rec.save(update_fields=SAVED)
    return steps


# -- the audit log ----------------------------------------------------------------------------------


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


def _clean(request: dict) -> dict:
    """``request`` without anything that could be a credential (clients never put one there; belt and braces)."""
    return {k: (_clean(v) if isinstance(v, dict) else v) for k, v in request.items() if str(k).lower() not in SECRET_KEYS}


def resolve_unknown_bonus(row: Row, *, paid: bool, staff=None) -> None:
    """After staff looked at the platform: the bonus whose payment's outcome was unknown was ``paid``, or was not (then the
    next apply pays it, through the same set-up payment)."""
    rec = row.record
    if rec is None or not rec.bonus_unknown:
        raise StudyError(f"{row.pseudonym}: no bonus payment with an unknown outcome")
    rec.bonus_unknown = False
    if paid:
        rec.bonus_paid, rec.bonus_paid_at = rec.bonus, timezone.now()
    rec.applied_note = (
        f"bonus outcome settled by {'staff ' + staff.get_username() if staff else 'manage.py'}: {'paid' if paid else 'not paid'}"
    )
    rec.save(update_fields=SAVED)
