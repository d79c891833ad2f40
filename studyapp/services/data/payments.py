"""The payments export: per annotator, what a staff member needs to approve or reject a submission.

Paying is a separate decision from using the answers. Exclusion by quality control never withholds
the completion code by itself; this export only says which rule each annotator broke, so staff can
apply the platform's own rules. Prolific, for example, allows rejecting for speed only an
"exceptionally fast" whole submission, which we take as a submission time (consent -> last answer)
more than :data:`FAST_SD` standard deviations under the mean of all finished annotators, and for
failed attention checks under its own conditions. Contains raw platform ids: staff only.
"""

from __future__ import annotations

import csv
import io
import statistics
from dataclasses import dataclass

from studyapp.models import Annotator, QualityDecision, Study
from studyapp.services.quality.control import AnnotatorSignals, annotator_signals, submission_seconds

FAST_SD = 3.0
COLUMNS = (
    "platform", "platform_id", "pseudonym", "status", "completion_shown", "code_shown", "rules_broken", "excluded_by",
    "failed_checks", "submission_seconds", "exceptionally_fast",
)  # fmt: skip


@dataclass(frozen=True)
class SpeedNorm:
    """Mean and standard deviation of the finished annotators' submission times; ``cutoff`` = mean - 3 SD."""

    finished: int
    mean: float | None
    sd: float | None

    @property
    def cutoff(self) -> float | None:
        return None if self.mean is None or self.sd is None else self.mean - FAST_SD * self.sd

    def exceptionally_fast(self, seconds: float | None) -> bool:
        cutoff = self.cutoff
        return seconds is not None and cutoff is not None and seconds < cutoff


def speed_norm(annotators: list[Annotator]) -> SpeedNorm:
    """The norm over every annotator who finished (excluded or not); no SD below two of them."""
    times = [t for a in annotators if (t := submission_seconds(a)) is not None]
    mean = statistics.fmean(times) if times else None
    sd = statistics.stdev(times) if len(times) >= 2 else None
    return SpeedNorm(len(times), mean, sd)


def latest_exclusions(study: Study) -> dict[int, QualityDecision]:
    """Annotator id -> the exclusion that stands (their latest quality decision, when it excluded)."""
    latest: dict[int, QualityDecision] = {}
    for d in QualityDecision.objects.filter(study=study).select_related("staff").order_by("decided_at", "id"):
        latest[d.annotator_id] = d
    return {pk: d for pk, d in latest.items() if d.action == QualityDecision.Action.EXCLUDE}


def _excluded_by(decision: QualityDecision | None) -> str:
    if decision is None:
        return ""
    if decision.automatic:
        return f"rule {decision.rule}"
    return f"staff {decision.staff.get_username() if decision.staff else '(deleted user)'}: {decision.reason}"


def payment_rows(study: Study) -> list[dict[str, str]]:
    """One row per annotator of ``study`` (arrival order) with the :data:`COLUMNS`, all as text (raw platform ids included)."""
    annotators = list(Annotator.objects.filter(study=study).order_by("created_at", "pk"))
    signals: dict[int, AnnotatorSignals] = {s.annotator_id: s for s in annotator_signals(study, annotators)}
    norm = speed_norm(annotators)
    exclusions = latest_exclusions(study)
    rows = []
    for a in annotators:
        s = signals[a.pk]
        finished = a.finished_at is not None
        seconds = submission_seconds(a)
        code = study.completion_code if finished else (study.screenout_code if a.status == Annotator.Status.REFUSED else "")
        broken = [b.detail for b in s.breaches]
        if a.status == Annotator.Status.SCREENED:
            broken.append(f"comprehension check: {a.exclusion_reason}")
        rows.append(
            {
                "platform": a.platform or "anonymous",
                "platform_id": a.external_id,
                "pseudonym": a.pseudonym,
                "status": a.status,
                "completion_shown": "yes" if finished else "no",
                "code_shown": code,
                "rules_broken": "; ".join(broken),
                "excluded_by": _excluded_by(exclusions.get(a.pk)) if a.status == Annotator.Status.EXCLUDED else "",
                "failed_checks": f"{s.checks_failed} of {s.checks}" if s.checks else "",
                "submission_seconds": f"{seconds:.0f}" if seconds is not None else "",
                "exceptionally_fast": "yes" if norm.exceptionally_fast(seconds) else "no",
            }
        )
    return rows


def payments_csv(study: Study, *, platform_ids: bool = True) -> str:
    """The payments export as CSV text (header + :func:`payment_rows`); without ``platform_ids`` the
    ``platform_id`` column is left out (team members without the id permission, services.access.teams)."""
    columns = COLUMNS if platform_ids else tuple(c for c in COLUMNS if c != "platform_id")
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=columns, lineterminator="\n", extrasaction="ignore")
    writer.writeheader()
    # imported here, not at start: docs/contributing.md#lazy-evaluation-imports
    from evaluation.io.spreadsheet import escape_cell

    writer.writerows({key: escape_cell(value) for key, value in row.items()} for row in payment_rows(study))
    return out.getvalue()
