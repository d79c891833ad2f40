"""Record an annotator's answer: stored as shown and re-oriented to the canonical run order.

Never loses data: an answer on an expired or released lease is stored (``late=True``) and counts.
Idempotent: repeating a request (same client request id, a double click, a resubmitted form)
returns the stored answer; one assignment never gets two. A second answer with a different value
(e.g. from a second tab) is refused (:class:`AnswerConflict`): an answer is never changed, and never
reported as stored when it was not. Browser timings past the column's range are clamped.
Quality control runs live in the same transaction (``quality.apply_live``): the answer that makes
an annotator break an excluding rule excludes them at once.
"""

from __future__ import annotations

from datetime import datetime

from django.db import IntegrityError, transaction

from studyapp import compiled_queries
from studyapp.exceptions import AnswerConflict, InvalidAnswer
from studyapp.models import Assignment, Preference
from studyapp.models.annotation import PREFERENCE_MAX, PREFERENCE_MIN
from studyapp.services.clock import now_or
from studyapp.services.participation.allocation import touch
from studyapp.services.quality.control import apply_live

CLIENT_MS_MAX = 2**31 - 1  # the largest value of the PositiveIntegerField columns on every backend


def _clamp(ms: int | None) -> int | None:
    return min(ms, CLIENT_MS_MAX) if ms is not None else None


def _same(stored: Preference, value: int) -> Preference:
    """``stored`` when it holds ``value`` (a repeat), else :class:`AnswerConflict`."""
    if stored.value != value:
        raise AnswerConflict(stored, value)
    return stored


def canonical_value(value: int, a_on_left: bool) -> int:
    """Re-orient a shown answer (positive = right better) to (run_a, run_b) (positive = run_b better)."""
    return value if a_on_left else -value


def record_answer(
    assignment: Assignment,
    value: int,
    *,
    client_ms: int | None = None,
    visible_ms: int | None = None,
    first_interaction_ms: int | None = None,
    request_id: str = "",
    answered_before: int | None = None,
    leases: list[datetime] | None = None,
    now: datetime | None = None,
) -> tuple[Preference, bool]:
    """Store the answer of ``assignment``; returns (preference, created).

    A repeat with the same value returns the stored answer (``created`` False); a different value
    raises :class:`AnswerConflict` and stores nothing.

    ``client_ms``, ``visible_ms`` and ``first_interaction_ms`` are the browser's own measurements
    (see :class:`~studyapp.models.Preference`); the server's decision time is computed here from
    ``assignment`` as the caller read it (its serve time and lease; one query less per answer).
    ``answered_before``, the annotator's answers before this one as the caller read them (its
    ``Sequence``), spares quality control reading them while no rule can exclude yet; ``leases``, the
    lease ends it read (``Sequence.lease_ends``), spare renewing leases that are not due (:func:`touch`).
    """
    if isinstance(value, bool) or not isinstance(value, int) or not PREFERENCE_MIN <= value <= PREFERENCE_MAX:
        raise InvalidAnswer(f"the answer must be an integer from {PREFERENCE_MIN} to {PREFERENCE_MAX}, got {value!r}")
    for name, ms in (("client_ms", client_ms), ("visible_ms", visible_ms), ("first_interaction_ms", first_interaction_ms)):
        if ms is not None and (isinstance(ms, bool) or not isinstance(ms, int) or ms < 0):
            raise InvalidAnswer(f"{name} must be a non-negative integer, got {ms!r}")
    now = now_or(now)
    served = assignment.served_at or assignment.assigned_at
    try:
        with transaction.atomic():  # the answer and the activity it records, or neither
            preference = compiled_queries.create(  # Preference.objects.create, its INSERT compiled once per connection
                Preference,
                assignment=assignment,
                value=value,
                canonical=canonical_value(value, assignment.a_on_left),
                server_seconds=max(0.0, (now - served).total_seconds()),
                client_ms=_clamp(client_ms),
                visible_ms=_clamp(visible_ms),
                first_interaction_ms=_clamp(first_interaction_ms),
                request_id=(request_id or "")[:64],
                answered_at=now,
                late=not assignment.lease_live(now),
            )
            given = answered_before + 1 if answered_before is not None else None
            # apply_live locks the annotator before their leases, as current_assignment does
            apply_live(assignment.annotator, preference, answers_given=given, now=now)
            touch(assignment.annotator, now, leases=leases)
    except IntegrityError:  # answered before (a repeat, a double click) or the same answer raced in through another request
        existing = Preference.objects.filter(assignment_id=assignment.pk).first()
        if existing is None:
            raise
        return _same(existing, value), False
    return preference, True
