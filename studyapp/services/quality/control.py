"""Quality control: per-annotator signals, the exclusion rules, and every decision logged.

Signals (:class:`AnnotatorSignals`, computed from the stored answers; one answer per (annotator,
presentation) by the database constraints, so saves, retries and double submits count once):

* **fast decisions**: answers under ``fast_threshold_seconds``, timed by the server (item first
  served -> answer arrived) or, with ``fast_time = "visible"``, by the browser's visible time
  (the server time where the browser sent none). More than ``fast_limit`` of them excludes.
* **check items**: an ``identical`` check fails with a non-zero answer, a ``degraded`` one with an
  answer on the wrong side (the degraded copy preferred). Excludes above ``check_fail_limit``.
* **straight-lining**: the longest run of the same answer (as shown) in the annotator's sequence.
  Excludes above ``straightline_limit``.
* **left/right bias**: the share of non-zero answers preferring the left page. Excludes when the
  share on either side exceeds ``side_bias_limit``, judged from :data:`MIN_DECISIONS` non-zero answers.
* **median decision time** (the fast rule's clock). Excludes under ``median_seconds_min``, judged
  from :data:`MIN_DECISIONS` decisions.

The fast rule is on by default, and the check rule (``check_fail_limit`` 1: two failed check items exclude, Prolific's
rule for attention checks) where a study has check items; the other limits are empty (signals reported, nobody excluded).

Decisions. :func:`exclude` flags an annotator excluded (answers kept; they stop counting through
``AssignmentQuerySet.valid``, so their presentations are open again for newcomers), frees their
unanswered leases and logs a :class:`~studyapp.models.QualityDecision`. :func:`apply_live` runs
inside the answer's transaction, :func:`quality_check` re-evaluates a whole study with the current
settings: a rule that became stricter excludes, one that became looser reinstates those it had
excluded automatically. Staff decisions (:func:`exclude` / :func:`reinstate` with ``staff``) win:
the rules never reinstate an annotator staff excluded, nor exclude one staff reinstated.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.db import transaction

from studyapp.models import Annotator, Assignment, Preference, QualityDecision, Study
from studyapp.services.clock import now_or
from studyapp.services.quality import rules
from studyapp.services.quality.rules import Answer

Rule = QualityDecision.Rule
EVALUATED = (Annotator.Status.ACTIVE, Annotator.Status.FINISHED, Annotator.Status.EXCLUDED)


@dataclass(frozen=True)
class Breach:
    """A rule an annotator breaks under the study's settings; ``excludes`` when the settings make it exclude."""

    rule: str
    detail: str
    counts: dict
    excludes: bool


@dataclass(frozen=True)
class AnnotatorSignals:
    """Quality signals of one annotator: every registered rule's (:mod:`.rules`), and ``breaches`` under the current settings."""

    annotator_id: int
    pseudonym: str
    status: str
    decisions: int
    signals: dict[str, dict[str, Any]]  # rule key -> its signal
    breaches: tuple[Breach, ...] = field(default=())

    @property
    def excluding(self) -> tuple[Breach, ...]:
        return tuple(b for b in self.breaches if b.excludes)

    def cells(self) -> list[str]:
        """The dashboard's cell of every rule, in :data:`rules.RULES` order."""
        return [rule.cell(self.signals[key]) for key, rule in rules.RULES.items()]

    # The built-in rules' signals by name (the admin, the payments export and the report read them).
    fast = property(lambda self: self.signals["fast"]["fast"])
    fast_threshold_seconds = property(lambda self: self.signals["fast"]["threshold"])
    checks = property(lambda self: self.signals["checks"]["checks"])
    checks_failed = property(lambda self: self.signals["checks"]["failed"])
    longest_run = property(lambda self: self.signals["straightline"]["run"])
    longest_run_value = property(lambda self: self.signals["straightline"]["value"])
    left_share = property(lambda self: self.signals["side_bias"]["left_share"])
    median_seconds = property(lambda self: self.signals["median_time"]["median"])


def _num(x: float) -> str:
    return f"{x:g}"


def signals_of(study: Study, annotator: Annotator, answers: list[Answer]) -> AnnotatorSignals:
    """The signals and breaches of one annotator from their answers (in any order), rule by rule."""
    read = rules.Answers(study, answers)
    signals, breaches = {}, []
    for key, rule in rules.RULES.items():
        signals[key] = signal = rule.signal(read)
        broken = rule.breach(study, signal)
        if broken is not None:
            breaches.append(Breach(key, *broken, True))
    return AnnotatorSignals(annotator.pk, annotator.pseudonym, annotator.status, len(read.items), signals, tuple(breaches))


_ANSWER_FIELDS = ("assignment__annotator_id", "assignment__position", "value", "canonical", "server_seconds", "visible_ms",
                  "assignment__presentation__kind", "assignment__presentation__expected_sign")  # fmt: skip


def _answers(preferences) -> dict[int, list[Answer]]:
    by_annotator: dict[int, list[Answer]] = defaultdict(list)
    for annotator_id, *row in preferences.order_by().values_list(*_ANSWER_FIELDS):
        by_annotator[annotator_id].append(Answer(*row))
    return by_annotator


def annotator_signals(study: Study, annotators: Iterable[Annotator] | None = None) -> list[AnnotatorSignals]:
    """Signals of every annotator of ``study`` who has answered or is being judged (or of ``annotators``).

    One entry per annotator who is active, finished or excluded, in arrival order; two queries in
    all. The dashboard, the report and the payments export read this.
    """
    if annotators is None:
        annotators = Annotator.objects.filter(study=study, status__in=EVALUATED).order_by("created_at", "pk")
    annotators = list(annotators)
    answers = _answers(Preference.objects.filter(assignment__annotator__in=[a.pk for a in annotators]))
    return [signals_of(study, a, answers.get(a.pk, [])) for a in annotators]


def staff_decided(annotator: Annotator) -> bool:
    """Did staff make the latest decision on ``annotator`` (then the rules leave them alone)?"""
    last = annotator.quality_decisions.order_by("-decided_at", "-id").first()
    return last is not None and not last.automatic


def last_exclusion(annotator: Annotator) -> QualityDecision | None:
    return annotator.quality_decisions.filter(action=QualityDecision.Action.EXCLUDE).order_by("-decided_at", "-id").first()


def exclude(
    annotator: Annotator,
    *,
    rule: str,
    detail: str = "",
    counts: dict | None = None,
    staff=None,
    reason: str = "",
    now: datetime | None = None,
) -> QualityDecision | None:
    """Exclude ``annotator`` and log it; None when they were excluded already or never got items to
    answer (new, refused or screened out: there is nothing to exclude).

    Answers are kept (they stop counting); unanswered leases are freed at once. An annotator with
    nothing left to answer counts as finished: they keep their completion page.
    """
    now = now_or(now)
    with transaction.atomic():
        me = Annotator.objects.select_for_update().get(pk=annotator.pk)
        if me.status not in (Annotator.Status.ACTIVE, Annotator.Status.FINISHED):
            return None
        open_items = me.assignments.open()
        released = list(open_items.values_list("pk", flat=True))
        if released:
            Assignment.objects.filter(pk__in=released).update(released_at=now)
        elif me.finished_at is None:
            me.finished_at = now  # excluded on their last answer: they did finish
        me.status = Annotator.Status.EXCLUDED
        me.exclusion_reason = reason or detail
        me.save(update_fields=["status", "exclusion_reason", "finished_at"])
        decision = QualityDecision.objects.create(
            study_id=me.study_id, annotator=me, action=QualityDecision.Action.EXCLUDE, rule=Rule.STAFF if staff else rule,
            detail=detail, counts=counts or {}, staff=staff, reason=reason, released=released, decided_at=now,
        )  # fmt: skip
    annotator.status, annotator.exclusion_reason, annotator.finished_at = me.status, me.exclusion_reason, me.finished_at
    return decision


def reinstate(
    annotator: Annotator, *, rule: str = Rule.RULES, detail: str = "", staff=None, reason: str = "", now: datetime | None = None
) -> QualityDecision | None:
    """Count ``annotator``'s answers again and log it; None when they were not excluded.

    Leases the exclusion freed come back expired: when the annotator returns, the engine renews
    those that still have room and replaces the others (as after a long pause).
    """
    now = now_or(now)
    with transaction.atomic():
        me = Annotator.objects.select_for_update().get(pk=annotator.pk)
        if me.status != Annotator.Status.EXCLUDED:
            return None
        last = last_exclusion(me)
        if last is not None and last.released:
            me.assignments.filter(pk__in=last.released, preference__isnull=True).update(released_at=None, lease_expires_at=now)
        me.status = Annotator.Status.FINISHED if me.finished_at is not None else Annotator.Status.ACTIVE
        me.exclusion_reason = ""
        me.save(update_fields=["status", "exclusion_reason", "finished_at"])
        decision = QualityDecision.objects.create(
            study_id=me.study_id, annotator=me, action=QualityDecision.Action.REINSTATE, rule=Rule.STAFF if staff else rule,
            detail=detail, staff=staff, reason=reason, decided_at=now,
        )  # fmt: skip
    annotator.status, annotator.exclusion_reason, annotator.finished_at = me.status, me.exclusion_reason, me.finished_at
    return decision


def _exclude_for(annotator: Annotator, breaches: tuple[Breach, ...], now: datetime) -> QualityDecision | None:
    first = breaches[0]
    detail = "; ".join(b.detail for b in breaches)
    counts = {b.rule: b.counts for b in breaches}
    return exclude(annotator, rule=first.rule, detail=detail, counts=counts, now=now)


def apply_live(
    annotator: Annotator, answer: Preference | None = None, *, answers_given: int | None = None, now: datetime | None = None
) -> QualityDecision | None:
    """After a stored ``answer`` (inside its transaction): exclude the annotator the moment a rule excludes them.

    When the fast rule is the only excluding rule (the default), an answer that is not fast cannot
    change the verdict, and neither can any answer while the annotator has given at most
    ``fast_limit`` answers (``answers_given``, this one included, as the caller counted them): then
    nothing is read (no query on the answer's hot path).
    """
    if annotator.status != Annotator.Status.ACTIVE:
        return None
    study = annotator.study
    if answer is not None and not _other_limits(study):
        seconds = Answer(0, answer.value, answer.canonical, answer.server_seconds, answer.visible_ms, "", None).seconds(study.fast_time)
        if seconds is None or seconds >= study.fast_threshold_seconds:
            return None
        if answers_given is not None and answers_given <= study.fast_limit:
            return None  # more than fast_limit fast decisions take more than fast_limit answers
    answers = _answers(Preference.objects.filter(assignment__annotator=annotator)).get(annotator.pk, [])
    breaches = signals_of(study, annotator, answers).excluding
    if not breaches or staff_decided(annotator):
        return None
    return _exclude_for(annotator, breaches, now_or(now))


def _other_limits(study: Study) -> bool:
    """Does any rule besides the fast one exclude in ``study``? (The check rule only where there are check items.)"""
    no_checks = study.check_items_per_annotator == 0
    return any(
        getattr(study, rule.limit) is not None
        for key, rule in rules.RULES.items()
        if key != Rule.FAST and not (key == Rule.CHECKS and no_checks)
    )


@dataclass
class QualityReport:
    """What :func:`quality_check` did (or would do with ``dry_run``)."""

    study: Study
    dry_run: bool
    evaluated: int = 0
    excluded: list[tuple[AnnotatorSignals, str]] = field(default_factory=list)  # newly excluded, with the detail
    reinstated: list[AnnotatorSignals] = field(default_factory=list)
    still_excluded: int = 0
    left_to_staff: int = 0  # rules would change them, but staff decided last

    def lines(self) -> list[str]:
        verb = ("would exclude", "would reinstate") if self.dry_run else ("excluded", "reinstated")
        rules = (f"fast: more than {self.study.fast_limit} decisions under {_num(self.study.fast_threshold_seconds)} s "
                 f"({self.study.fast_time} time)")  # fmt: skip
        out = [
            f"Study {self.study.name!r}{' (dry run: nothing written)' if self.dry_run else ''}: {self.evaluated} annotators evaluated; rule {rules}",
            f"  {verb[0]}: {len(self.excluded)}",
        ]
        out += [f"    {s.pseudonym}: {detail}" for s, detail in self.excluded]
        out.append(f"  {verb[1]}: {len(self.reinstated)}")
        out += [f"    {s.pseudonym}: no excluding rule broken now" for s in self.reinstated]
        out.append(f"  excluded before and still: {self.still_excluded}")
        if self.left_to_staff:
            out.append(f"  left alone because staff decided on them: {self.left_to_staff}")
        return out


def quality_check(study: Study, *, dry_run: bool = False, now: datetime | None = None) -> QualityReport:
    """Re-evaluate every annotator of ``study`` with its current settings (one transaction; ``dry_run`` writes nothing)."""
    now = now_or(now)
    report = QualityReport(study, dry_run)
    with transaction.atomic():
        annotators = list(Annotator.objects.select_for_update().filter(study=study, status__in=EVALUATED).order_by("created_at", "pk"))
        by_id = {a.pk: a for a in annotators}
        staff_last = _staff_last(annotators)
        for signals in annotator_signals(study, annotators):
            report.evaluated += 1
            annotator = by_id[signals.annotator_id]
            breaches = signals.excluding
            excluded = annotator.status == Annotator.Status.EXCLUDED
            if annotator.pk in staff_last:
                report.left_to_staff += excluded != bool(breaches)
                report.still_excluded += excluded
            elif breaches and not excluded:
                report.excluded.append((signals, "; ".join(b.detail for b in breaches)))
                if not dry_run:
                    _exclude_for(annotator, breaches, now)
            elif excluded and not breaches and last_exclusion(annotator) is not None:
                report.reinstated.append(signals)
                if not dry_run:
                    reinstate(annotator, detail="no excluding rule broken under the current settings", now=now)
            else:
                report.still_excluded += excluded
    return report


def _staff_last(annotators: list[Annotator]) -> set[int]:
    """Annotators whose latest decision was made by staff."""
    latest: dict[int, QualityDecision] = {}
    for d in QualityDecision.objects.filter(annotator__in=[a.pk for a in annotators]).order_by("decided_at", "id"):
        latest[d.annotator_id] = d
    return {pk for pk, d in latest.items() if not d.automatic}


def submission_seconds(annotator: Annotator) -> float | None:
    """A finished annotator's whole submission time: consent -> finished."""
    if annotator.finished_at is None or annotator.consented_at is None:
        return None
    return max(timedelta(0), annotator.finished_at - annotator.consented_at).total_seconds()
