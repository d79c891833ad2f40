"""Store the last plan of a study, and the projection from its answers so far (docs/studyapp.md#planning-a-study).

``manage.py plan_study`` simulates for minutes, so pages never do: :func:`store_plan` keeps the last
table (``StoredPlan``), the set-up page and the dashboard read it with :func:`stored_plan`.
:func:`projection` is the same plan with the planner's assumptions estimated from the answers so
far: the truth is the metric leading by MUP at the analysed level (``services.analysis.preview``),
signal and noise are the user model's maximum-likelihood fit to the answers
(``evaluation.meta.separation.fit_user_model``; random answers read as noise there, so no separate
random share). The answers already given count as ``ceil(valid answers / answers per participant)``
participants; "more participants" is the recommended count minus those.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import numpy as np
from django.utils import timezone

from studyapp.models import StoredPlan, Study
from studyapp.services.analysis.planning import SINGLE_TARGET, StudyPlan, plan_study


def plan_command(study: Study, *, from_data: bool = False) -> str:
    """The command that computes and stores the plan the pages show."""
    return f"python manage.py plan_study {study.slug}" + (" --from-data" if from_data else "")


def _json_value(value: Any) -> Any:
    if isinstance(value, float | np.floating):
        return None if not np.isfinite(value) else float(value)
    if isinstance(value, np.integer):
        return int(value)
    return str(value) if not isinstance(value, int | str | None) else value


def store_plan(result: StudyPlan, kind: str, summary: str, *, answers: int = 0, seconds: float = 0.0) -> StoredPlan:
    """Replace ``result.study``'s stored plan of ``kind`` (``StoredPlan.Kind``) with ``result``."""
    if kind not in StoredPlan.Kind.values:
        raise ValueError(f"plan kind must be one of {StoredPlan.Kind.values}, got {kind!r}")
    m = result.model
    assumptions = {
        "truth": result.truth,
        "signal": m.signal,
        "noise": m.noise,
        "random_share": m.cheaters,
        "n_sim": int(result.table["n_sim"].iloc[0]),
        "reward": str(result.reward),
        "level": result.level,
        "complete": result.complete,
    }
    table = [{k: _json_value(v) for k, v in row.items()} for row in result.table.to_dict("records")]
    row, _ = StoredPlan.objects.update_or_create(
        study=result.study,
        kind=kind,
        defaults={
            "computed_at": timezone.now(),
            "assumptions": assumptions,
            "table": table,
            "lines": "\n".join(result.lines()),
            "summary": summary,
            "answers": answers,
            "seconds": seconds,
        },
    )
    return row


def stored_plan(study: Study, kind: str) -> StoredPlan | None:
    """The last stored plan of ``kind``, or None when ``plan_study`` has not stored one."""
    return StoredPlan.objects.filter(study=study, kind=kind).first()


def design_summary(result: StudyPlan) -> str:
    """The plan's recommendation sentence (its last printed line)."""
    return result.lines()[-1]


@dataclass(frozen=True)
class Projection:
    """The plan from the answers so far, with what it rests on."""

    plan: StudyPlan
    answers: int  # valid answers to regular items
    level_answers: int  # valid answers at the level the users were fitted to
    fit_level: str
    participants_now: int  # answers so far in participants (rounded up)
    leader: str
    rival: str | None  # second by MUP so far

    @property
    def sentence(self) -> str:
        """ "About N more participants to separate A from B", or that no size in the grid does."""
        table, rec = self.plan.table, self.plan.recommended
        versus = f"{self.leader} from {self.rival}" if self.rival else self.leader
        fitted = (
            f"users following {self.leader} (the leader by MUP so far) with signal {self.plan.model.signal:.2f} and noise "
            f"{self.plan.model.noise:.2f} fitted to the {self.level_answers:,} {self.fit_level}-level answers"
        )
        if rec is None:
            top = int(table["participants"].max())
            share = table["single_entry"].max()
            share_text = "never" if not np.isfinite(share) else f"in at most {share:.0%} of simulated studies"
            return (
                f"No size in the grid (up to {top} participants) separates {versus}: the best set is a single entry {share_text} "
                f"(target {SINGLE_TARGET:.0%}), assuming {fitted}."
            )
        needed = int(table.loc[rec, "participants"])
        more = needed - self.participants_now
        if more <= 0:
            return (
                f"The {self.participants_now} participants so far should be enough to separate {versus}: "
                f"{needed} suffice in the simulation, assuming {fitted}."
            )
        return f"About {more} more participants ({needed} in all) to separate {versus}, assuming {fitted}."


def projection(
    study: Study, *, participants: list[int] | None = None, reward: Decimal = Decimal("0"), n_sim: int = 40, B: int = 500, seed: int = 1,
    progress: Callable[[int, int], None] | None = None,
) -> Projection:  # fmt: skip
    """``plan_study`` with the truth, signal and noise estimated from the answers so far (module docstring).

    Raises ValueError when the answers are too few to fit the user model or rank the metrics."""
    from studyapp.services.analysis.preview import study_preview

    preview = study_preview(study, B=B, seed=seed, n_sim=n_sim)
    if preview.signal is None or preview.noise is None or preview.separation_level is None:
        raise ValueError(f"cannot estimate the users from the answers so far: {preview.separation_note}")
    level = next(lv for lv in preview.levels if lv.level == preview.separation_level)
    ranked = [r.measure for r in level.ranking if r.mup is not None]
    leader = ranked[0]
    result = plan_study(
        study, participants=participants, reward=reward, truth=leader, signal=preview.signal, noise=preview.noise, random_share=0.0,
        n_sim=n_sim, B=B, seed=seed, progress=progress,
    )  # fmt: skip
    now = math.ceil(preview.answers / result.per_participant)
    return Projection(result, preview.answers, level.answers, level.level, now, leader, ranked[1] if len(ranked) > 1 else None)


def store_projection(found: Projection, seconds: float) -> StoredPlan:
    return store_plan(found.plan, StoredPlan.Kind.DATA, found.sentence, answers=found.answers, seconds=seconds)
