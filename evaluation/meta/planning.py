"""Plan before recruiting: how large must a study be for its best set to name few metrics? (docs/meta.md#planning)

For a study design (its run pairs, the topic of each, every candidate metric's difference on each)
and an assumed user model (``evaluation.meta.simulate``: a planted truth metric, signal, noise,
share of random answers), :func:`plan` simulates the study at a grid of answer counts and runs the
best set (:mod:`evaluation.meta.bestset`) on each simulated study. Answers are spent as the study
spends them under uniform allocation: layer by layer, every presentation gets its ``j``-th answer
before any gets its ``j + 1``-th, in a random order of presentations within a layer; so a study with
fewer answers than presentations leaves some run pairs unanswered. Per grid point it reports the
expected best-set size (entries), the chance that the set is a single entry, the chance that it
holds the planted truth, and the share of studies large enough for a claim (5 topics answered).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from evaluation._types import FloatArray, IntArray
from evaluation.exceptions import EvaluationError
from evaluation.io.preferences import SCALE
from evaluation.meta._resampling import RngLike, resolve_rng
from evaluation.meta.bestset import best_set
from evaluation.meta.simulate import UserModel, latent_preference

COLUMNS = ["answers", "answers_per_pair", "best_set_size", "single_entry", "truth_in_set", "claim", "n_sim"]
SINGLE_TARGET = 0.8  # a recommended size: the set is a single entry in at least this share of studies


@dataclass(frozen=True)
class Design:
    """The pairs a study analyses: ``d`` (G, P) differences, ``clusters`` (P,) topic of each pair, and
    the number of ``presentations`` its answers are spread over (at least P: other levels compete)."""

    d: FloatArray
    clusters: IntArray
    measures: tuple[str, ...]
    presentations: int

    def __post_init__(self) -> None:
        if self.d.ndim != 2 or self.d.shape[1] != self.clusters.size or self.d.shape[1] == 0:
            raise EvaluationError(f"differences of shape {self.d.shape} do not match {self.clusters.size} pairs")
        if self.presentations < self.d.shape[1]:
            raise EvaluationError(f"{self.presentations} presentations cannot hold the {self.d.shape[1]} analysed pairs")


def answer_counts(pairs: int, presentations: int, answers: int, rng: np.random.Generator) -> IntArray:
    """Answers received by each analysed pair when ``answers`` are spent layer by layer over ``presentations``."""
    layers, rest = divmod(answers, presentations)
    counts = np.full(pairs, layers, dtype=np.int64)
    extra = rng.choice(presentations, size=rest, replace=False) if rest else np.zeros(0, dtype=np.int64)
    counts[extra[extra < pairs]] += 1  # the first ``pairs`` presentations are the analysed ones
    return counts


def simulate_sums(mu: FloatArray, counts: IntArray, model: UserModel, rng: np.random.Generator) -> IntArray:
    """Sum of ``counts[c]`` simulated answers on pair ``c`` (0 where there is none)."""
    return simulate_each(mu, counts, model, rng).sum(axis=1)


def simulate_each(mu: FloatArray, counts: IntArray, model: UserModel, rng: np.random.Generator) -> IntArray:
    """The answers themselves: (P, max count), 0 beyond each pair's ``counts[c]`` answers."""
    top = int(counts.max()) if counts.size else 0
    if top == 0:
        return np.zeros((mu.size, 0), dtype=np.int64)
    noise = rng.normal(0.0, model.noise, size=(mu.size, top)) if model.noise > 0 else np.zeros((mu.size, top))
    answers = np.clip(np.rint(mu[:, None] + noise), -SCALE, SCALE)
    if model.cheaters > 0:
        cheat = rng.random(answers.shape) < model.cheaters
        answers = np.where(cheat, rng.integers(-SCALE, SCALE + 1, size=answers.shape), answers)
    given = np.arange(top)[None, :] < counts[:, None]
    return (answers * given).astype(np.int64)


def simulate_point(design: Design, truth: str, model: UserModel, answers: int, n_sim: int, B: int, rng: np.random.Generator) -> dict:
    """One grid point: ``n_sim`` simulated studies with ``answers`` answers, each through the best set."""
    g = design.measures.index(truth)
    mu = latent_preference(design.d[g], model.signal)
    sizes, single, held, claims = [], [], [], []
    for _ in range(n_sim):
        counts = answer_counts(design.d.shape[1], design.presentations, answers, rng)
        total = simulate_sums(mu, counts, model, rng)
        asked = counts > 0
        if not asked.any():
            claims.append(False)
            continue
        p = total[asked] / counts[asked]
        chosen = best_set(
            design.d[:, asked], p, design.measures, user_sign=np.sign(total[asked]), clusters=design.clusters[asked], B=B, rng=rng
        )
        claims.append(chosen.claim)
        if chosen.claim:
            sizes.append(chosen.size)
            single.append(chosen.size == 1)
            held.append(truth in chosen.measures)
    mean = lambda x: float(np.mean(x)) if x else float("nan")  # noqa: E731
    return {"best_set_size": mean(sizes), "single_entry": mean(single), "truth_in_set": mean(held), "claim": mean(claims)}


def plan(
    design: Design,
    truth: str,
    model: UserModel,
    grid: Sequence[int],
    *,
    n_sim: int = 40,
    B: int = 500,
    rng: RngLike = None,
    progress: Callable[[int, int], None] | None = None,
) -> pd.DataFrame:
    """The planning table: one row per answer count of ``grid`` (columns ``COLUMNS``; ``answers_per_pair`` is
    answers / presentations). ``progress(done, total)`` is called after every grid point."""
    if truth not in design.measures:
        raise EvaluationError(f"truth measure {truth} is not among the study's metrics")
    if not np.isfinite(design.d[design.measures.index(truth)]).all():
        raise EvaluationError(f"truth measure {truth} is undefined on some pairs: choose another truth")
    if n_sim < 1 or B < 1 or not grid or min(grid) < 1:
        raise ValueError(f"need n_sim >= 1, B >= 1 and a grid of positive answer counts, got {n_sim}, {B}, {list(grid)}")
    generator, _ = resolve_rng(rng)
    rows = []
    for done, answers in enumerate(grid, start=1):
        point = simulate_point(design, truth, model, int(answers), n_sim, B, generator)
        rows.append((int(answers), answers / design.presentations, *point.values(), n_sim))
        if progress is not None:
            progress(done, len(grid))
    return pd.DataFrame.from_records(rows, columns=COLUMNS)


def recommended(table: pd.DataFrame, target: float = SINGLE_TARGET) -> int | None:
    """The row index of the smallest answer count whose best set is a single entry in at least ``target``
    of the simulated studies; None when no count of the grid reaches it."""
    ok = table.index[table["single_entry"] >= target]
    return int(ok[0]) if len(ok) else None
