"""The numbers of the staff dashboard (docs/studyapp.md#staff-dashboard): progress per level and run pair,
annotators, decision times, side balance and inter-annotator agreement per level.

Everything here reads the database; the pages (views/staff.py) only lay it out, and the figures
are drawn from these numbers by services.analysis.figures. "Valid" answers are those of annotators not
excluded by quality control, as in services.analysis.status.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter, defaultdict
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.models import Count, Q, QuerySet

from evaluation.meta.reliability import PREFERENCE_DOMAIN, direction_agreement, krippendorff_alpha
from studyapp.models import Annotator, Assignment, Preference, Presentation, Study
from studyapp.services import platforms
from studyapp.services.analysis.status import study_status
from studyapp.services.clock import now_or
from studyapp.services.quality import rules
from studyapp.services.quality.control import AnnotatorSignals, annotator_signals

HISTOGRAM_BIN_SECONDS = 2
HISTOGRAM_MAX_SECONDS = 60  # answers slower than this share the last bin
ANNOTATOR_ROWS = 500  # at most this many annotators are listed (the search narrows them down)


@dataclass(frozen=True)
class StudySummary:
    study: Study
    presentations: int
    answers: int
    needed: int
    filled: int
    annotators: dict[str, int]

    @property
    def progress(self) -> float:
        return self.filled / self.needed if self.needed else 1.0


def study_summaries(studies: QuerySet[Study] | None = None) -> list[StudySummary]:
    """One line per study of ``studies`` (default all) for the study list: answer slots filled, answers and annotators by status."""
    studies = list((Study.objects.all() if studies is None else studies).select_related("collection").order_by("-created_at"))
    ids = [s.pk for s in studies]
    regular = Presentation.objects.filter(kind=Presentation.Kind.PAIR, study__in=ids)
    counts = dict(regular.order_by().values_list("study").annotate(n=Count("id")))
    valid = Assignment.objects.filter(
        preference__isnull=False, presentation__kind=Presentation.Kind.PAIR, presentation__study__in=ids
    ).valid()
    per_presentation = valid.order_by().values_list("presentation__study", "presentation").annotate(n=Count("id"))
    filled: Counter = Counter()
    answers: Counter = Counter()
    ks = {s.pk: s.annotators_per_presentation for s in studies}
    for study_id, _, n in per_presentation:
        filled[study_id] += min(n, ks[study_id])
        answers[study_id] += n
    people: dict[int, Counter] = defaultdict(Counter)
    for study_id, status, n in Annotator.objects.filter(study__in=ids).order_by().values_list("study", "status").annotate(n=Count("id")):
        people[study_id][status] = n
    return [
        StudySummary(
            study=s,
            presentations=counts.get(s.pk, 0),
            answers=answers[s.pk],
            needed=counts.get(s.pk, 0) * s.annotators_per_presentation,
            filled=filled[s.pk],
            annotators={status.value: people[s.pk][status] for status in Annotator.Status},
        )
        for s in studies
    ]


@dataclass(frozen=True)
class Completion:
    """Presentations of one level (and run pair): how many are complete and how many answers are still needed."""

    level: str
    run_a: str
    run_b: str
    presentations: int
    complete: int
    answers: int
    still_needed: int

    @property
    def share(self) -> float:
        return self.complete / self.presentations if self.presentations else 1.0


def _valid_answers(study: Study):
    return Preference.objects.filter(assignment__presentation__study=study).exclude(assignment__annotator__status=Annotator.Status.EXCLUDED)


def completion(study: Study) -> tuple[list[Completion], list[Completion]]:
    """Per level and per (level, run pair): complete presentations (>= k valid answers) and answers still needed."""
    k = study.annotators_per_presentation
    rows = Presentation.objects.filter(study=study, kind=Presentation.Kind.PAIR).values_list("id", "level", "run_a__name", "run_b__name")
    answered = Counter(dict(_valid_answers(study).order_by().values_list("assignment__presentation").annotate(n=Count("id"))))
    groups: dict[tuple[str, str, str], list[int]] = defaultdict(list)
    for pid, level, run_a, run_b in rows:
        groups[(level, run_a, run_b)].append(pid)

    def summarise(level: str, run_a: str, run_b: str, ids: list[int]) -> Completion:
        return Completion(
            level=level,
            run_a=run_a,
            run_b=run_b,
            presentations=len(ids),
            complete=sum(answered[p] >= k for p in ids),
            answers=sum(answered[p] for p in ids),
            still_needed=sum(max(0, k - answered[p]) for p in ids),
        )

    pairs = [summarise(level, a, b, ids) for (level, a, b), ids in sorted(groups.items())]
    levels = []
    for level in study.level_list:
        ids = [p for (lv, _, _), group in groups.items() if lv == level for p in group]
        levels.append(summarise(level, "", "", ids))
    return levels, pairs


@dataclass(frozen=True)
class Histogram:
    """Decision times in bins of ``width`` seconds from 0; the last bin holds everything from ``limit`` on."""

    counts: list[int]
    width: float
    limit: float
    threshold: float
    total: int
    fast: int
    median: float | None

    @property
    def edges(self) -> list[float]:
        return [i * self.width for i in range(len(self.counts) + 1)]


def decision_time_histogram(study: Study) -> Histogram:
    """Server-side decision times of every answer (all annotators, check items included), with the study's fast threshold."""
    seconds = [s for s in Preference.objects.filter(assignment__presentation__study=study).values_list("server_seconds", flat=True)
               if s is not None]  # fmt: skip
    bins = int(HISTOGRAM_MAX_SECONDS // HISTOGRAM_BIN_SECONDS) + 1
    counts = [0] * bins
    for s in seconds:
        counts[min(int(s // HISTOGRAM_BIN_SECONDS), bins - 1)] += 1
    threshold = study.fast_threshold_seconds
    return Histogram(
        counts=counts,
        width=HISTOGRAM_BIN_SECONDS,
        limit=HISTOGRAM_MAX_SECONDS,
        threshold=threshold,
        total=len(seconds),
        fast=sum(s < threshold for s in seconds),
        median=statistics.median(seconds) if seconds else None,
    )


@dataclass(frozen=True)
class SideBalance:
    """Valid answers to regular items by the side they preferred, and how often run_a was shown on the left."""

    left: int
    tie: int
    right: int
    a_left: int
    a_right: int

    @property
    def answers(self) -> int:
        return self.left + self.tie + self.right

    def share(self, part: int) -> float:
        return part / self.answers if self.answers else 0.0


def side_balance(study: Study) -> SideBalance:
    answers = _valid_answers(study).filter(assignment__presentation__kind=Presentation.Kind.PAIR)
    sums = answers.aggregate(
        left=Count("id", filter=Q(value__lt=0)),
        tie=Count("id", filter=Q(value=0)),
        right=Count("id", filter=Q(value__gt=0)),
        a_left=Count("id", filter=Q(assignment__a_on_left=True)),
        a_right=Count("id", filter=Q(assignment__a_on_left=False)),
    )
    return SideBalance(**sums)


@dataclass(frozen=True)
class Agreement:
    """Inter-annotator agreement of one level (docs/metrics.md#inter-annotator-agreement)."""

    level: str
    units: int
    answers: int
    alpha_interval: float | None  # None where undefined (NaN)
    alpha_ordinal: float | None
    direction: float | None
    pairs: int


def _defined(x: float) -> float | None:
    return None if math.isnan(x) else x


def agreement(study: Study) -> list[Agreement]:
    """Krippendorff's alpha (interval and ordinal, domain -4..4) and direction agreement per level, on valid canonical answers."""
    answers = _valid_answers(study).filter(assignment__presentation__kind=Presentation.Kind.PAIR)
    units: dict[str, dict[int, list[int]]] = {level: defaultdict(list) for level in study.level_list}
    for level, presentation, value in answers.values_list("assignment__presentation__level", "assignment__presentation", "canonical"):
        units[level][presentation].append(value)
    result = []
    for level, by_unit in units.items():
        values = list(by_unit.values())
        share, pairs = direction_agreement(values)
        result.append(
            Agreement(
                level=level,
                units=sum(len(v) >= 2 for v in values),
                answers=sum(len(v) for v in values),
                alpha_interval=_defined(krippendorff_alpha(values, level="interval", domain=PREFERENCE_DOMAIN)),
                alpha_ordinal=_defined(krippendorff_alpha(values, level="ordinal", domain=PREFERENCE_DOMAIN)),
                direction=_defined(share),
                pairs=pairs,
            )
        )
    return result


@dataclass(frozen=True)
class AnnotatorRow:
    """An annotator with their quality signals (services.quality.control) and the number of items they were given."""

    annotator: Annotator
    items: int
    signals: AnnotatorSignals

    @property
    def rule_cells(self) -> list[str]:
        """One cell per quality rule (``services.quality.rules``), in the order of :func:`rule_columns`."""
        return self.signals.cells()

    @property
    def platform_label(self) -> str:
        return platforms.by_key(self.annotator.platform).label

    @property
    def notes(self) -> str:
        """The rules broken under the current settings, and the exclusion reason when it says something else."""
        parts = [b.detail for b in self.signals.breaches]
        reason = self.annotator.exclusion_reason
        if reason and reason not in parts:
            parts.append(reason)
        return "; ".join(parts)


def rule_columns(study: Study) -> list[str]:
    """The headers of the annotator table's quality columns: one per registered rule."""
    return [rule.column(study) for rule in rules.RULES.values()]


def annotator_rows(study: Study, query: str = "", *, platform_ids: bool = True) -> tuple[list[AnnotatorRow], int]:
    """Annotators (newest first), optionally those whose platform id (or, without ``platform_ids``, whose
    internal code) contains ``query``; returns (rows, number matching)."""
    people = Annotator.objects.filter(study=study).annotate(items=Count("assignments")).order_by("-created_at", "-pk")
    if query:
        people = people.filter(**{"external_id__icontains" if platform_ids else "pseudonym__icontains": query})
    matching = people.count()
    listed = list(people[:ANNOTATOR_ROWS])
    signals = annotator_signals(study, listed)
    return [AnnotatorRow(annotator=a, items=a.items, signals=s) for a, s in zip(listed, signals, strict=True)], matching


def live_numbers(study: Study, *, now: datetime | None = None) -> dict[str, Any]:
    """Everything the refreshing part of the study page shows."""
    now = now_or(now)
    levels, pairs = completion(study)
    return {
        "status": study_status(study, now=now),
        "levels": levels,
        "pairs": pairs,
        "histogram": decision_time_histogram(study),
        "sides": side_balance(study),
        "agreement": agreement(study),
    }
