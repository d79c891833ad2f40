"""Paying bonuses so that none is ever paid twice, whatever ends the process.

Before a call that moves money goes out, its intent is committed in its own transaction
(:class:`Intent`): the platform's id of the payment (Prolific's bulk bonus id, kept as soon as it is set
up; MTurk's UniqueRequestToken is the decision's ``bonus_token``, made with the decision) and the "pay
sent" marker (``bonus_unknown`` with ``bonus_sent_at``), with a row in the audit log. Only a clean
answer from the platform clears the marker: paid, or an answer saying the request was not carried out
(then the next apply pays through the same id). Every other end (a timeout, a dropped connection, a
500, the worker killed, Ctrl-C, SystemExit) leaves the payment "outcome unknown", never sent again by
itself. The next apply first asks the platform what happened (:func:`ask_unknown`: Prolific lists a
submission's bonus payments, MTurk's ListBonusPayments an assignment's); only what the platform cannot
tell is left to staff (:func:`resolve_unknown_bonus`, on the review page or ``--bonus-settled``).

The marker is set only by the apply that holds the decisions' claims, and only while no payment of theirs is
pending or paid (one conditional update: :meth:`Intent.sending`): an apply whose claims were taken over (it
fell silent, :mod:`.leases`) sends nothing more, so two applies never both send the same bonus.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone

from studyapp.exceptions import StudyError
from studyapp.models import PlatformCall, ReviewDecision, Study
from studyapp.services.platforms.review_api import ApiError, CallRecord, ReviewClient
from studyapp.services.review.audit import record_answers, record_calls, record_sending, settle_sent, with_failure
from studyapp.services.review.decisions import Row

SAVED = ["action", "category", "message", "bonus", "source", "applied_action", "applied_at", "applied_note",
         "bonus_batch", "bonus_paid", "bonus_paid_at", "bonus_unknown", "bonus_sent_at"]  # fmt: skip


@dataclass(frozen=True)
class Step:
    """One line of a plan or of an apply's outcome: ``operation`` for ``pseudonym`` and what it did or would do."""

    pseudonym: str
    operation: str  # approve, reject, bonus, nothing
    text: str
    ok: bool = True


class ClaimLost(Exception):
    """The decisions about to be paid are no longer this apply's (taken over after it fell silent): nothing sent."""


class Intent:
    """What the client is about to do, committed before it does it (review_api.PaymentIntent), by ``worker`` (the
    holder of the decisions' claims)."""

    def __init__(self, study: Study, group: list[tuple[Row, ReviewDecision]], staff, worker: str) -> None:
        self.study, self.staff, self.worker = study, staff, worker
        self.rows = {str(rec.bonus_token): (row, rec) for row, rec in group}
        self.sent: list[PlatformCall] = []  # the audit rows of the pay calls sent, completed by their answers

    def payment_id(self, token: str) -> str:
        """The platform's id of the payment set up before for ``token`` ('' if none)."""
        return self.rows[token][1].bonus_batch if token in self.rows else ""

    def set_up(self, tokens: list[str], payment_id: str, records: list[CallRecord]) -> None:
        """The platform set up a payment (nothing paid yet) under ``payment_id``: a retry pays that one."""
        with transaction.atomic():
            ReviewDecision.objects.filter(bonus_token__in=tokens).update(bonus_batch=payment_id)
            row = self.rows[tokens[0]][0]
            record_answers(self.sent, self.study, row.annotator if len(tokens) == 1 else None, row.platform.key, records, self.staff)
        for token in tokens:
            self.rows[token][1].bonus_batch = payment_id

    def setting_up(self, tokens: list[str], request: dict) -> None:
        """The call setting up a payment for ``tokens`` goes out next: logged first (its answer completes the row)."""
        row = self.rows[tokens[0]][0]
        single = row.annotator if len(tokens) == 1 else None
        self.sent.append(record_sending(self.study, single, row.platform.key, request, self.staff, operation="bonus"))

    def sending(self, tokens: list[str], request: dict) -> None:
        """The call paying ``tokens`` goes out next: mark them "pay sent" (outcome unknown until a clean answer), if they
        are still this apply's and none is pending or paid; else :class:`ClaimLost` (nothing marked, nothing sent)."""
        now = timezone.now()
        with transaction.atomic():
            mine = ReviewDecision.objects.filter(
                bonus_token__in=tokens, claimed_by=self.worker, bonus_unknown=False, bonus_paid_at__isnull=True
            )
            if mine.update(bonus_unknown=True, bonus_sent_at=now, claimed_at=now) != len(tokens):
                raise ClaimLost(f"{len(tokens)} bonus(es) taken over by another apply: not sent by this one")
            single = self.rows[tokens[0]][0].annotator if len(tokens) == 1 else None
            self.sent.append(record_sending(self.study, single, self.rows[tokens[0]][0].platform.key, request, self.staff))
        for token in tokens:
            self.rows[token][1].bonus_unknown, self.rows[token][1].bonus_sent_at = True, now


def pay_group(study: Study, group: list[tuple[Row, ReviewDecision]], client: ReviewClient, staff, worker: str) -> list[Step]:
    """Pay the bonuses of ``group`` (one platform, one platform study) in one call of the client, as ``worker`` (the
    holder of their claims). A payment set up before (its id on the decision) is paid, never set up again."""
    items = [(row.ref, rec.bonus, str(rec.bonus_token)) for row, rec in group if row.ref is not None]
    failure: ApiError | None = None
    intent = Intent(study, group, staff, worker)
    try:
        records = client.pay_bonuses(items, reason=study.bonus_reason, intent=intent)
        paid = {token for _, _, token in items}
    except ClaimLost as exc:  # the apply that took them over pays them (or asks the platform first)
        return [Step(row.pseudonym, "bonus", f"bonus {rec.bonus} not paid here: {exc}", ok=False) for row, rec in group]
    except ApiError as exc:
        failure, records = exc, with_failure(exc, "pay_bonus")
        paid = {token for r in records if r.ok for token in r.tokens}
    single = group[0][0].annotator if len(group) == 1 else None
    record_answers(intent.sent, study, single, group[0][0].platform.key, records, staff)
    steps, now = [], timezone.now()
    for row, rec in group:
        token = str(rec.bonus_token)
        if token in paid:
            rec.bonus_paid, rec.bonus_paid_at, rec.bonus_unknown = rec.bonus, now, False
            steps.append(Step(row.pseudonym, "bonus", f"bonus {rec.bonus} paid on {row.platform.name}"))
        else:
            assert failure is not None
            rec.bonus_unknown = rec.bonus_unknown and failure.outcome_unknown  # a clean "not carried out" frees it again
            rec.bonus_sent_at = rec.bonus_sent_at if rec.bonus_unknown else None
            later = "check the platform before paying again" if rec.bonus_unknown else "tried again on the next apply"
            steps.append(Step(row.pseudonym, "bonus", f"bonus {rec.bonus} not paid: {failure.message} ({later})", ok=False))
        rec.save(update_fields=SAVED)
    return steps


def ask_unknown(study: Study, rows: list[Row], clients: dict[str, ReviewClient], staff) -> list[Step]:
    """Ask the platform about every bonus whose payment's outcome is unknown: found paid -> recorded paid; the
    platform says it was not paid -> free to pay again (same id); the platform cannot tell -> left to staff."""
    steps = []
    for row in rows:
        rec, client = row.record, clients.get(row.platform.key)
        if rec is None or not rec.bonus_unknown or row.ref is None or client is None:
            continue
        try:
            paid, records = client.bonus_outcome(row.ref, rec.bonus, str(rec.bonus_token), rec.bonus_batch)
        except ApiError as exc:
            paid, records = None, with_failure(exc, "bonus_check")
        record_calls(study, row.annotator, row.platform.key, records, staff)
        name = row.platform.name
        with transaction.atomic():
            rec = ReviewDecision.objects.select_for_update().get(pk=rec.pk)
            if not rec.bonus_unknown:  # settled meanwhile (staff, another apply)
                continue
            if paid is True:
                rec.bonus_unknown, rec.bonus_paid, rec.bonus_paid_at = False, rec.bonus, timezone.now()
                rec.applied_note = text = f"bonus {rec.bonus} found paid on {name} (its payment's answer had been lost)"
            elif paid is False:
                rec.bonus_unknown, rec.bonus_sent_at = False, None
                rec.applied_note = text = f"{name} has no bonus {rec.bonus} for it: paid again through the same payment id"
            else:
                text = f"bonus {rec.bonus}: {name} does not show whether it was paid; check there and settle it here"
            rec.save(update_fields=SAVED)
            if paid is not None:  # the pay call's row, left "sent" by the process that died waiting
                settle_sent(study, ("pay_bonus",), rec.applied_note, mentions=(rec.bonus_batch, str(rec.bonus_token)))
        row.record = rec
        steps.append(Step(row.pseudonym, "bonus", text, ok=paid is not None))
    return steps


def resolve_unknown_bonus(row: Row, *, paid: bool, staff=None) -> None:
    """After staff looked at the platform: the bonus whose payment's outcome was unknown was ``paid``, or was not (then the
    next apply pays it, through the same set-up payment)."""
    rec = row.record
    if rec is None or not rec.bonus_unknown:
        raise StudyError(f"{row.pseudonym}: no bonus payment with an unknown outcome")
    rec.bonus_unknown = False
    rec.bonus_sent_at = rec.bonus_sent_at if paid else None
    if paid:
        rec.bonus_paid, rec.bonus_paid_at = rec.bonus, timezone.now()
    rec.applied_note = (
        f"bonus outcome settled by {'staff ' + staff.get_username() if staff else 'manage.py'}: {'paid' if paid else 'not paid'}"
    )
    rec.save(update_fields=SAVED)
    settle_sent(rec.study, ("pay_bonus",), rec.applied_note, mentions=(rec.bonus_batch, str(rec.bonus_token)))
