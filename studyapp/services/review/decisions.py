"""Reviewing a study's submissions on the recruitment platform: per annotator the decision the rules
suggest (:mod:`.suggest`), staff overrides kept with who made them, and the final decision.

:func:`review_rows` is the table (the staff page ``/staff/<slug>/review/`` and ``manage.py
platform_review`` show it); :func:`set_decision` / :func:`use_rules` change one row;
:mod:`.sending` says what would be sent and sends it through the platform's client, recording
every call (models.PlatformCall). Raw platform ids appear only in the API calls; pages show them to
team members with the id permission only (:func:`mask_ids` for the others).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from django.db import transaction
from django.utils import timezone

from studyapp.exceptions import StudyError
from studyapp.models import Annotator, PlatformCall, ReviewDecision, Study
from studyapp.models.study_settings import BY_NAME, CENT
from studyapp.services.access import platform_ids
from studyapp.services.data.payments import latest_exclusions, speed_norm
from studyapp.services.platforms import registry
from studyapp.services.platforms.base import Platform
from studyapp.services.platforms.review_api import SubmissionRef
from studyapp.services.quality.control import annotator_signals
from studyapp.services.review.suggest import APPROVE, REJECT, SKIP, ZERO, Decision, suggest

ACTIONS = (APPROVE, REJECT, SKIP)
DONE = {APPROVE: "approved", REJECT: "rejected"}  # applied_action in words
MAX_BONUS = Decimal(str(BY_NAME["bonus_amount"].high))


@dataclass
class Row:
    """One annotator's submission under review."""

    annotator: Annotator
    platform: Platform
    ref: SubmissionRef | None
    suggested: Decision
    final: Decision
    record: ReviewDecision | None

    @property
    def pseudonym(self) -> str:
        return self.annotator.pseudonym

    @property
    def overridden(self) -> bool:
        return self.record is not None and self.record.source == ReviewDecision.Source.STAFF

    @property
    def decided_by(self) -> str:
        """``rules``, or the staff member who changed the decision (``manage.py`` without a user)."""
        if not self.overridden:
            return "rules"
        staff = self.record.staff  # type: ignore[union-attr]
        return f"staff {staff.get_username()}" if staff else "staff (manage.py)"

    @property
    def applied(self) -> bool:
        """Has the platform approved or rejected the submission (our call or by hand there)? Then it cannot change."""
        return bool(self.record is not None and self.record.applied_action)

    @property
    def transition_due(self) -> bool:
        """Is an approve/reject still to be sent?"""
        done = self.record.applied_action if self.record else ""
        return self.ref is not None and self.final.action in (APPROVE, REJECT) and not done

    @property
    def bonus_due(self) -> bool:
        """Is a bonus still to be paid (never after a payment whose outcome is unknown)?"""
        rec = self.record
        paid = rec is not None and (rec.bonus_paid_at is not None or rec.bonus_unknown)
        return self.ref is not None and self.final.action == APPROVE and self.final.bonus > 0 and not paid

    def state(self) -> str:
        """Where the submission stands on the platform, as far as our calls know."""
        rec = self.record
        if self.ref is None:
            return "no platform submission" if not self.annotator.platform else f"no {self.platform.name} submission id in the link"
        parts = []
        if rec is not None and rec.applied_action:
            parts.append(f"{DONE[rec.applied_action]} on {self.platform.name}")
        elif rec is not None and rec.applied_at:
            parts.append(f"not sent ({rec.applied_note})" if rec.applied_note else "not sent")
        else:
            parts.append("not sent yet")
        if rec is not None and rec.bonus_paid_at:
            parts.append(f"bonus {rec.bonus_paid} paid")
        elif rec is not None and rec.bonus_unknown:
            parts.append("bonus payment outcome unknown: check the platform")
        elif rec is not None and rec.bonus_batch:
            parts.append("bonus set up, not paid yet")
        return "; ".join(parts)


def was_sent(rec: ReviewDecision | None) -> bool:
    """Has anything of this decision reached the platform (so the rules no longer change it)?"""
    return rec is not None and bool(rec.applied_action or rec.bonus_batch or rec.bonus_paid_at or rec.bonus_unknown)


def review_rows(study: Study) -> list[Row]:
    """One row per annotator of ``study`` (arrival order): the rules' suggestion and the final decision."""
    annotators = list(Annotator.objects.filter(study=study).order_by("created_at", "pk"))
    signals = {s.annotator_id: s for s in annotator_signals(study, annotators)}
    norm = speed_norm(annotators)
    exclusions = latest_exclusions(study)
    records = {d.annotator_id: d for d in ReviewDecision.objects.filter(study=study).select_related("staff")}
    rows = []
    for a in annotators:
        platform = registry.by_key(a.platform)
        suggested = suggest(study, a, platform, signals.get(a.pk), exclusions.get(a.pk), norm)
        rec = records.get(a.pk)
        final = suggested
        if rec is not None and (rec.source == ReviewDecision.Source.STAFF or was_sent(rec)):
            final = Decision(
                rec.action, rec.category, rec.message, rec.bonus, suggested.note if rec.source == "rules" else "changed by staff"
            )
        rows.append(Row(a, platform, platform.submission_ref(a), suggested, final, rec))
    return rows


def row_of(rows: list[Row], pseudonym: str) -> Row:
    """The row of ``pseudonym``; StudyError naming the study's pseudonyms' form when there is none."""
    for row in rows:
        if row.pseudonym == pseudonym.strip():
            return row
    raise StudyError(f"no annotator with the pseudonym {pseudonym!r} in this study (pseudonyms are shown in the review table)")


# -- changing a decision ------------------------------------------------------------------------------


def parse_amount(text: str | Decimal | None) -> Decimal:
    """A bonus amount (``"1.50"``): at least 0, at most the bonus setting's maximum, two decimal places."""
    try:
        amount = text if isinstance(text, Decimal) else Decimal(str(text).strip())
    except (InvalidOperation, ValueError):
        raise StudyError(f"bonus {text!r}: not an amount (write it like 1.50)") from None
    if not amount.is_finite() or amount != amount.quantize(CENT):
        raise StudyError(f"bonus {text!r}: at most two decimal places")
    if not ZERO <= amount <= MAX_BONUS:
        raise StudyError(f"bonus {text!r}: must be between 0 and {MAX_BONUS}")
    return amount.quantize(CENT)


def check_decision(row: Row, action: str, category: str = "", message: str = "", bonus: Decimal = ZERO) -> Decision:
    """The decision staff asked for ``row``, checked against the platform's rules; StudyError says what is wrong."""
    platform, who = row.platform, row.pseudonym
    category, message = category.strip(), message.strip()
    if action not in ACTIONS:
        raise StudyError(f"{who}: unknown action {action!r} (approve, reject or skip)")
    if row.ref is None and action != SKIP:
        raise StudyError(f"{who}: {row.state()}: nothing can be sent")
    applied = row.record.applied_action if row.record else ""
    if applied and applied != action:
        raise StudyError(f"{who}: already {DONE[applied]} on {platform.name}; the platform does not allow changing it")
    if bonus and action != APPROVE:
        raise StudyError(f"{who}: a bonus goes with an approved submission only")
    if row.record is not None and (row.record.bonus_paid_at or row.record.bonus_batch) and bonus != row.record.bonus:
        raise StudyError(f"{who}: the bonus {row.record.bonus} is set up or paid already on {platform.name}; it cannot change")
    if action != REJECT:
        return Decision(action, bonus=bonus, note="changed by staff")
    codes = [code for code, _ in platform.rejection_categories]
    if codes and category not in codes:
        raise StudyError(f"{who}: unknown rejection category {category!r} for {platform.label} (one of {', '.join(codes)})")
    if not codes and category:
        raise StudyError(f"{who}: {platform.label} takes no rejection category (the message carries the reason)")
    if not platform.message_min <= len(message) <= platform.message_max:
        low = max(platform.message_min, 1)
        raise StudyError(f"{who}: the message must have {low}-{platform.message_max} characters for {platform.name}, it has {len(message)}")
    return Decision(REJECT, category, message, note="changed by staff")


def set_decision(study: Study, row: Row, decision: Decision, staff=None) -> ReviewDecision:
    """Store ``decision`` (from :func:`check_decision`) as staff's for ``row``, with who made it."""
    with transaction.atomic():
        rec, _ = ReviewDecision.objects.select_for_update().get_or_create(
            annotator=row.annotator, defaults={"study": study, "action": decision.action, "decided_at": timezone.now()}
        )
        rec.action, rec.category, rec.message, rec.bonus = decision.action, decision.category, decision.message, decision.bonus
        rec.source, rec.staff, rec.decided_at = ReviewDecision.Source.STAFF, staff, timezone.now()
        rec.save()
    row.record, row.final = rec, decision
    return rec


def use_rules(row: Row) -> None:
    """Drop staff's decision on ``row``: the rules decide again (not after something was sent)."""
    rec = row.record
    if rec is None or rec.source != ReviewDecision.Source.STAFF:
        return
    if was_sent(rec):
        raise StudyError(f"{row.pseudonym}: already sent to {row.platform.name}; the decision cannot go back to the rules")
    rec.delete()
    row.record, row.final = None, row.suggested


# -- showing what was sent ----------------------------------------------------------------------------


def raw_ids(study: Study) -> set[str]:
    """Every raw platform id of ``study``'s annotators (participant, submission, assignment ids)."""
    return platform_ids.study_ids(study)


def mask_ids(study: Study, text: str, ids: set[str] | None = None) -> str:
    """``text`` with every raw platform id replaced by ``(hidden)`` (services.access.platform_ids.mask)."""
    return platform_ids.mask(study, text, ids)


def request_text(request: dict) -> str:
    """A recorded request in one line: ``POST /api/v1/... {"action": "APPROVE"}``."""
    line = f"{request.get('method', '')} {request.get('path', request.get('operation', ''))}".strip()
    if "body" in request:
        line += " " + json.dumps(request["body"], ensure_ascii=False, sort_keys=True, default=str)
    return line


# -- staff's changes, all checked before any is stored ----------------------------------------------------


def parse_override(spec: str) -> tuple[str, str, str, str]:
    """``PSEUDONYM=approve|skip|reject:CATEGORY:message`` -> ``(pseudonym, action, category, message)``
    (the message may contain ':'; a platform without categories takes ``reject::message``)."""
    pseudonym, sep, decision = spec.partition("=")
    if not sep or not pseudonym.strip() or not decision.strip():
        raise StudyError(f"--override {spec!r}: write PSEUDONYM=approve, PSEUDONYM=skip or PSEUDONYM=reject:CATEGORY:message")
    action, _, rest = decision.strip().partition(":")
    if action != REJECT:
        if rest or action not in ACTIONS:
            raise StudyError(f"--override {spec!r}: the decision must be approve, skip or reject:CATEGORY:message")
        return pseudonym.strip(), action, "", ""
    category, sep, message = rest.partition(":")
    if not sep:
        raise StudyError(f"--override {spec!r}: a rejection needs a category and a message: reject:CATEGORY:message")
    return pseudonym.strip(), REJECT, category.strip(), message.strip()


def parse_bonus(spec: str) -> tuple[str, Decimal]:
    """``PSEUDONYM=AMOUNT`` -> ``(pseudonym, amount)``."""
    pseudonym, sep, amount = spec.partition("=")
    if not sep or not pseudonym.strip():
        raise StudyError(f"--bonus {spec!r}: write PSEUDONYM=AMOUNT, e.g. A1B2C3D4E5F=1.50")
    try:
        return pseudonym.strip(), parse_amount(amount)
    except StudyError as exc:
        raise StudyError(f"--bonus {spec!r}: {exc}") from None


def changes(rows: list[Row], overrides: list[tuple[str, str, str, str]], bonuses: list[tuple[str, Decimal]]) -> list[tuple[Row, Decision]]:
    """Staff's decisions for ``rows`` (a bonus alone keeps the row's decision), every one checked; StudyError
    lists every problem, and then nothing may be stored."""
    problems: list[str] = []
    wanted: dict[str, tuple[Row, str, str, str, Decimal | None]] = {}
    for pseudonym, action, category, message in overrides:
        try:
            row = row_of(rows, pseudonym)
        except StudyError as exc:
            problems.append(str(exc))
            continue
        wanted[row.pseudonym] = (row, action, category, message, None)
    for pseudonym, amount in bonuses:
        try:
            row = row_of(rows, pseudonym)
        except StudyError as exc:
            problems.append(str(exc))
            continue
        _, action, category, message, _ = wanted.get(row.pseudonym, (row, row.final.action, row.final.category, row.final.message, None))
        wanted[row.pseudonym] = (row, action, category, message, amount)
    decided = []
    for row, action, category, message, amount in wanted.values():
        if amount is None:  # an approval keeps the bonus it had (the study's, or staff's)
            amount = (
                row.final.bonus
                if action == APPROVE and row.final.action == APPROVE
                else (row.suggested.bonus if action == APPROVE else ZERO)
            )
        try:
            decided.append((row, check_decision(row, action, category, message, amount)))
        except StudyError as exc:
            problems.append(str(exc))
    if problems:
        raise StudyError("; ".join(problems))
    return decided


def store(study: Study, decided: list[tuple[Row, Decision]], staff=None) -> None:
    """Store every checked decision of :func:`changes` (all or none)."""
    with transaction.atomic():
        for row, decision in decided:
            set_decision(study, row, decision, staff)


def audit_log(study: Study, *, platform_ids: bool, limit: int = 300) -> list[dict[str, str]]:
    """The newest ``limit`` API calls of ``study`` for a page: time, staff, pseudonym, operation, result, request
    (raw platform ids masked without ``platform_ids``)."""
    ids = None if platform_ids else raw_ids(study)
    entries = []
    calls = PlatformCall.objects.filter(study=study).select_related("annotator", "staff").order_by("-created_at", "-id")[:limit]
    for call in calls:
        body = call.request.get("body") if isinstance(call.request, dict) else None
        lines = len(str(body.get("csv_bonuses", "")).strip().splitlines()) if isinstance(body, dict) else 0
        who = call.annotator.pseudonym if call.annotator else (f"{lines} submissions" if lines else "-")
        result = ("ok" if call.ok else "failed") + (f" {call.status}" if call.status else " (no answer)")
        if not call.ok and call.response:
            result += f": {call.response}"
        text = request_text(call.request)
        entries.append({
            "time": call.created_at, "staff": call.staff.get_username() if call.staff else "manage.py", "pseudonym": who,
            "operation": call.operation, "ok": call.ok, "sent": call.status is None and call.operation == "pay_bonus" and call.response.startswith("sent;"),
            "result": result if ids is None else mask_ids(study, result, ids), "request": text if ids is None else mask_ids(study, text, ids),
        })  # fmt: skip
    return entries
