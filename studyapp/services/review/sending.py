"""Sending a study's review to the platforms: what would be sent (:func:`plan`) and sending it (:func:`apply`).

Per submission the platform's own state is asked first: a submission approved or rejected there
already is not sent again, one returned or timed out is left alone. Then the approve/reject, then the
bonuses of the approved (one stable token per bonus, made once: MTurk's UniqueRequestToken; Prolific's
bulk bonus id remembered on the decision, so a retry pays that one instead of setting up another; a payment
whose answer was lost is never sent again by itself: :mod:`.paying`).
Every call, answered or failed, becomes a :class:`~studyapp.models.PlatformCall` at once (the audit
log; credentials never reach it); an error stops that submission only, shown in its row. Two applies
never send the same decision: each claims it first (:func:`_claim`), and keeps its claims alive with a heartbeat
while it works; the claims of an apply that died are free again at once on the same host, else after
``STUDYAPP_JOB_STALE_SECONDS`` (:mod:`.leases`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from django.db.models import Q
from django.utils import timezone

from studyapp.exceptions import StudyError
from studyapp.models import ReviewDecision, Study
from studyapp.services.platforms.review_api import APPROVED, AWAITING, REJECTED, ApiError, ReviewClient
from studyapp.services.review.audit import record_answers, record_calls, record_sending, settle_sent, with_failure
from studyapp.services.review.decisions import DONE, Row, review_rows, was_sent
from studyapp.services.review.leases import Heartbeat, lost, worker_name
from studyapp.services.review.paying import SAVED, Step, ask_unknown, pay_group, resolve_unknown_bonus
from studyapp.services.review.suggest import APPROVE


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
        unknown = row.record is not None and row.record.bonus_unknown and row.ref is not None
        if (row.transition_due or row.bonus_due or unknown) and row.platform.key not in clients:
            client = row.platform.review_client()
            if client is None:
                raise StudyError(f"{row.platform.label} has no API for review here: decide its submissions on the platform")
            clients[row.platform.key] = client
    return clients


def apply(study: Study, *, staff=None, clients: Mapping[str, ReviewClient] | None = None,
          progress: Callable[[Step], None] | None = None, limit: int | None = None) -> list[Step]:  # fmt: skip
    """Send every due decision of ``study`` (the first ``limit`` of them, in the table's order, when given: the
    caller wants a batch); returns what happened per submission (errors included). Its claims are kept alive by a
    heartbeat while it runs (:mod:`.leases`)."""
    worker = worker_name()
    claimed = ReviewDecision.objects.filter(study=study, claimed_by=worker, claimed_at__isnull=False)
    with Heartbeat(lambda: claimed.update(claimed_at=timezone.now())):
        return _apply(study, worker, staff, clients, progress, limit)


def _apply(study: Study, worker: str, staff, clients: Mapping[str, ReviewClient] | None,
           progress: Callable[[Step], None] | None, limit: int | None) -> list[Step]:  # fmt: skip
    _release_lost(study)
    every = review_rows(study)
    unknown = [row for row in every if row.record is not None and row.record.bonus_unknown and row.ref is not None]
    rows = [row for row in every if row.transition_due or row.bonus_due]
    clients = dict(clients) if clients is not None else clients_for(unknown + rows)
    steps: list[Step] = []

    def report(step: Step) -> None:
        steps.append(step)
        if progress is not None:
            progress(step)

    if unknown:  # first ask the platform about payments whose answer was lost; one found unpaid is due again
        for step in ask_unknown(study, unknown, clients, staff):
            report(step)
        rows = [row for row in review_rows(study) if row.transition_due or row.bonus_due]
    if limit is not None:
        rows = rows[:limit]

    bonuses: dict[tuple[str, str], list[tuple[Row, ReviewDecision]]] = {}
    for row in rows:
        client = clients.get(row.platform.key)
        if client is None:
            raise StudyError(f"no review client for {row.platform.label}")
        rec = _materialise(study, row)
        if not _claim(rec, worker):
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
                _release(rec, worker)
    for (key, _), group in bonuses.items():
        try:
            for step in pay_group(study, group, clients[key], staff, worker):
                report(step)
        finally:
            for _, rec in group:
                _release(rec, worker)
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


def _claim(rec: ReviewDecision, worker: str) -> bool:
    """Take ``rec`` for ``worker``: unclaimed, or claimed by an apply that fell silent or ended (:func:`.leases.lost`)."""
    now = timezone.now()
    free = Q(claimed_at__isnull=True) | lost("claimed_at", "claimed_by", [rec.claimed_by], now)
    return ReviewDecision.objects.filter(pk=rec.pk).filter(free).update(claimed_at=now, claimed_by=worker) == 1


def _release_lost(study: Study) -> None:
    """Free the claims of applies that fell silent or ended (their payments' markers stay: asked about first)."""
    claimed = ReviewDecision.objects.filter(study=study, claimed_at__isnull=False)
    holders = list(claimed.values_list("claimed_by", flat=True).distinct())
    if holders:
        claimed.filter(lost("claimed_at", "claimed_by", holders, timezone.now())).update(claimed_at=None, claimed_by="")


def _release(rec: ReviewDecision, worker: str) -> None:
    """Give ``rec`` back, unless another apply took it over meanwhile (then it is that one's)."""
    ReviewDecision.objects.filter(pk=rec.pk, claimed_by=worker).update(claimed_at=None, claimed_by="")


def _transition(study: Study, row: Row, rec: ReviewDecision, client: ReviewClient, staff) -> Step:
    """Ask the submission's state, then approve or reject it if it awaits review."""
    ref, name, action = row.ref, row.platform.name, rec.action
    assert ref is not None
    ok, note, logged = True, "", []

    def sending(request: dict) -> None:  # logged before it goes out; completed by its answer (audit.record_answers)
        logged.append(record_sending(study, row.annotator, row.platform.key, request, staff, operation=action))

    try:
        state, records = client.state(ref)
        record_calls(study, row.annotator, row.platform.key, records, staff)
        settle_sent(study, ("approve", "reject"), f"{state} on {name}", annotator=row.annotator)  # a call whose answer was lost
        if state == AWAITING:
            if action == APPROVE:
                sent = client.approve(ref, sending=sending)
            else:
                sent = client.reject(ref, rec.category, rec.message, sending=sending)
            record_answers(logged, study, row.annotator, row.platform.key, sent, staff)
            rec.applied_action, text = action, f"{DONE[action]} on {name}" + (f" ({rec.category})" if rec.category else "")
        elif state in (APPROVED, REJECTED):
            rec.applied_action = APPROVE if state == APPROVED else "reject"
            text = note = f"already {state} on {name}: nothing sent"
            if rec.applied_action != action:
                text = note = f"{note} (the decision was {action})"
        else:
            text = note = f"{state} on {name}: nothing sent"
    except ApiError as exc:
        record_answers(logged, study, row.annotator, row.platform.key, with_failure(exc, action), staff)
        ok, text = False, f"{action} not sent: {exc.message}"
        note = text
    rec.applied_at, rec.applied_note = timezone.now(), note
    rec.save(update_fields=SAVED)
    return Step(row.pseudonym, action, text, ok)


__all__ = ["SAVED", "Step", "apply", "clients_for", "plan", "record_calls", "resolve_unknown_bonus", "still_due", "with_failure"]
