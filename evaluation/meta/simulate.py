"""Planted-truth simulator: does the agreement analysis find the metric users actually follow?

User model (ours; documented in ``docs/meta.md``). A "truth" metric ``T`` is planted. For every run
pair ``c`` (every topic x every unordered run pair of the score table) the latent preference is

    mu_c = signal * d_T(c) / sd(d_T)          (sd over all pairs, ddof 0)

so a difference of one standard deviation moves the latent preference by ``signal`` scale points.
Each of ``annotators`` answers per pair is ``clip(round(mu_c + e), -4, 4)`` with ``e ~ N(0, noise^2)``;
with probability ``cheaters`` an answer instead comes from a fast random clicker, uniform on
{-4, ..., 4}. The simulated study then runs the agreement analysis (docs/metrics.md#agreement-with-users) on every candidate
metric (all pairs, or a random subset of ``topics`` topics per simulation) and records whether
``T`` comes out first by MUP and by tau_b (strictly: a tie for first is not a recovery).

Candidates whose preference sign equals ``T``'s on every pair are exact duplicates for this
analysis (they get the same MUP and tau_b by construction): they are excluded and reported with
the reason. A candidate that differs from ``T`` only on topics a simulation did not draw is left
out of that simulation only. This is also a power analysis: how many topics and annotators a
study needs before it can tell the metrics apart.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from evaluation._types import FloatArray
from evaluation.exceptions import EvaluationError
from evaluation.io.preferences import SCALE, VOTE_COLUMNS
from evaluation.meta._matrix import ScoreCube
from evaluation.meta._resampling import RngLike, resolve_rng
from evaluation.meta.agreement import pair_statistics, signs
from evaluation.meta.significance import run_pairs
from evaluation.wording import named

COLUMNS = [
    "truth",
    "noise",
    "annotators",
    "topics",
    "signal",
    "cheaters",
    "n_sim",
    "first_by_MUP",
    "first_by_tau_b",
    "mean_rank_MUP",
    "mean_rank_tau_b",
    "candidates",
    "seed",
]
RANKED = ("MUP", "tau_b")
CONVENTIONS = {
    "user_model": "answer = clip(round(signal d_T / sd(d_T) + N(0, noise^2)), -4, 4); uniform on -4..4 with probability cheaters",
    "recovery": "the truth is strictly first among the candidates by MUP / tau_b (a tie for first is not a recovery)",
    "duplicates": "candidates with the truth's sign on every pair are excluded and reported",
    "topics": "a random subset of that many topics per simulated study (never more than the scores hold)",
}


@dataclass(frozen=True)
class UserModel:
    """Simulated annotators: ``signal`` scale points per sd of the truth difference, Gaussian
    ``noise`` (sd, scale points), ``annotators`` answers per pair, ``cheaters`` = probability that an
    answer is uniform random."""

    noise: float = 0.5
    signal: float = 2.0
    annotators: int = 3
    cheaters: float = 0.0

    def __post_init__(self) -> None:
        if self.noise < 0 or self.signal <= 0:
            raise ValueError(f"need noise >= 0 and signal > 0, got noise={self.noise}, signal={self.signal}")
        if self.annotators < 1:
            raise ValueError(f"annotators must be >= 1, got {self.annotators}")
        if not 0 <= self.cheaters <= 1:
            raise ValueError(f"cheaters must be a probability, got {self.cheaters}")


@dataclass(frozen=True)
class StudyPairs:
    """Every (topic, run_a, run_b) of a score table with each measure's difference ``d`` (G, P)."""

    topic: np.ndarray
    run_a: np.ndarray
    run_b: np.ndarray
    topic_index: np.ndarray
    d: FloatArray
    measures: tuple[str, ...]

    @classmethod
    def from_cube(cls, cube: ScoreCube) -> StudyPairs:
        a, b = run_pairs(len(cube.runs))
        n = len(cube.topics)
        d = (cube.values[:, :, b] - cube.values[:, :, a]).reshape(len(cube.measures), -1)
        topics = np.array(cube.topics, dtype=object)
        runs = np.array(cube.runs, dtype=object)
        return cls(np.repeat(topics, a.size), np.tile(runs[a], n), np.tile(runs[b], n), np.repeat(np.arange(n), a.size), d, cube.measures)


def latent_preference(d_truth: FloatArray, signal: float) -> FloatArray:
    """``mu = signal * d / sd(d)``; all zeros when the truth never distinguishes two runs."""
    d_truth = np.asarray(d_truth, dtype=np.float64)
    sd = d_truth.std()
    return np.zeros_like(d_truth) if sd == 0 else signal * d_truth / sd


def simulate_answers(mu: FloatArray, model: UserModel, n_sim: int, rng: RngLike = None) -> np.ndarray:
    """Integer answers of shape (n_sim, P, annotators) on the 9-point scale."""
    rng, _ = resolve_rng(rng)
    shape = (n_sim, mu.size, model.annotators)
    answers = (
        np.rint(mu[None, :, None] + rng.normal(0.0, model.noise, size=shape))
        if model.noise > 0
        else np.broadcast_to(np.rint(mu)[None, :, None], shape)
    )
    answers = np.clip(answers, -SCALE, SCALE).astype(np.int64)
    if model.cheaters > 0:
        cheat = rng.random(shape) < model.cheaters
        answers = np.where(cheat, rng.integers(-SCALE, SCALE + 1, size=shape), answers)
    return answers


def duplicates_of(pairs: StudyPairs, truth: str) -> list[tuple[str, str]]:
    """Candidates with the truth's preference sign on every pair, with the reason."""
    s = signs(pairs.d)
    t = pairs.measures.index(truth)
    return [
        (m, f"same preference sign as {truth} on all {pairs.d.shape[1]} run pairs")
        for g, m in enumerate(pairs.measures)
        if g != t and np.array_equal(s[g], s[t])
    ]


def recovery(
    pairs: StudyPairs,
    truth: str,
    model: UserModel,
    *,
    n_sim: int = 200,
    topics: int | None = None,
    rng: RngLike = None,
    drop_identical_on_draw: bool = True,
) -> dict[str, FloatArray]:
    """Simulate ``n_sim`` studies and rank the truth among the candidates by MUP and tau_b.

    Returns ``first_<stat>`` (bool, n_sim) and ``rank_<stat>`` (1 = best; competition rank).
    ``drop_identical_on_draw=False`` keeps a candidate that equals the truth's signs on every drawn
    pair (but not on every pair of the scores) as a rival: it ties, so the truth is not strictly
    first; what "has the study told them apart?" asks (``evaluation.meta.separation``).
    """
    rng, _ = resolve_rng(rng)
    g_truth = pairs.measures.index(truth)
    excluded = {m for m, _ in duplicates_of(pairs, truth)}
    keep = np.array([m not in excluded for m in pairs.measures])
    n_topics = int(pairs.topic_index.max()) + 1
    check_topics(topics, n_topics)
    answers = simulate_answers(latent_preference(pairs.d[g_truth], model.signal), model, n_sim, rng)
    total = answers.sum(axis=2)
    p = total / model.annotators
    if topics is None or topics == n_topics:
        w = np.ones_like(p)
    else:
        drawn = np.argsort(rng.random((n_sim, n_topics)), axis=1)[:, :topics]
        chosen = np.zeros((n_sim, n_topics), dtype=bool)
        np.put_along_axis(chosen, drawn, True, axis=1)
        w = chosen[:, pairs.topic_index].astype(np.float64)
    stats = pair_statistics(pairs.d, p, user_sign=np.sign(total), w=w)
    s = signs(pairs.d)
    # A candidate identical to the truth on every drawn pair cannot be told apart in that study.
    differs = (w @ (s != s[g_truth]).T.astype(np.float64)) > 0 if drop_identical_on_draw else np.ones((n_sim, s.shape[0]), dtype=bool)
    rivals = differs & keep[None, :]
    rivals[:, g_truth] = False
    out: dict[str, FloatArray] = {}
    for name in RANKED:
        value = stats[name]
        own = value[:, g_truth][:, None]
        better = np.where(rivals, np.nan_to_num(value, nan=-np.inf) >= own, False)
        strictly = np.where(rivals, np.nan_to_num(value, nan=-np.inf) > own, False)
        valid = np.isfinite(own[:, 0])
        out[f"first_{name}"] = valid & ~better.any(axis=1)
        out[f"rank_{name}"] = np.where(valid, 1 + strictly.sum(axis=1), np.nan)
    out["candidates"] = rivals.sum(axis=1) + 1
    return out


def check_truth_defined(cube: ScoreCube, truths: Sequence[str]) -> None:
    """A planted truth must be defined on every topic (it makes every answer); candidates may not be
    (they are left out on their undefined topics, evaluation.meta.agreement)."""
    for truth in truths:
        undefined = [t for t, ok in zip(cube.topics, cube.defined[cube.measure_index(truth)]) if not ok]
        if undefined:
            raise EvaluationError(
                f"truth {truth} is undefined on {named('topic', undefined[:5])}{' ...' if len(undefined) > 5 else ''}: "
                "a planted truth must be defined on every topic (choose another truth or leave those topics out)"
            )


def check_topics(topics: int | None, available: int) -> None:
    """A study draws ``topics`` distinct topics: between 1 and the ``available`` ones (None: all)."""
    if topics is None:
        return
    if topics < 1:
        raise ValueError(f"topics must be >= 1, got {topics}")
    if topics > available:
        raise EvaluationError(f"cannot draw {topics} topics per simulated study: the scores have only {available} topics")


@dataclass(frozen=True)
class SimulationResult:
    """Recovery table (columns ``COLUMNS``) and, per truth, the excluded duplicates with reasons."""

    table: pd.DataFrame
    excluded: dict[str, list[tuple[str, str]]]
    seed: int | None


def planted_truth(
    cube: ScoreCube,
    truths: Sequence[str],
    *,
    noise: Sequence[float] = (0.25, 0.5, 1.0, 2.0, 4.0),
    annotators: Sequence[int] = (3,),
    topics: Sequence[int | None] = (None,),
    n_sim: int = 200,
    signal: float = 2.0,
    cheaters: float = 0.0,
    rng: RngLike = None,
) -> SimulationResult:
    """Recovery of each planted truth metric versus noise, annotators per pair and number of topics.

    ``topics=None`` uses every topic; an integer draws that many topics per simulation (more than
    the cube holds is an error, never silently all of them).
    """
    if n_sim < 1:
        raise ValueError(f"n_sim must be >= 1, got {n_sim}")
    unknown = [t for t in truths if t not in cube.measures]
    if unknown:
        raise EvaluationError(f"truth {named('measure', unknown)} not in the scores ({', '.join(cube.measures)})")
    if len(cube.measures) < 2:
        raise EvaluationError("the simulation needs at least 2 candidate measures")
    if len(cube.runs) < 2:
        raise EvaluationError("the simulation needs at least 2 runs")
    for n_topics in topics:
        check_topics(n_topics, len(cube.topics))
    check_truth_defined(cube, truths)
    generator, seed = resolve_rng(rng)
    pairs = StudyPairs.from_cube(cube)
    rows = []
    excluded = {t: duplicates_of(pairs, t) for t in truths}
    for truth, sigma, k, n_topics in itertools.product(truths, noise, annotators, topics):
        model = UserModel(noise=float(sigma), signal=signal, annotators=int(k), cheaters=cheaters)
        r = recovery(pairs, truth, model, n_sim=n_sim, topics=n_topics, rng=generator)
        rows.append(
            (
                truth,
                float(sigma),
                int(k),
                int(n_topics) if n_topics else len(cube.topics),
                signal,
                cheaters,
                n_sim,
                float(r["first_MUP"].mean()),
                float(r["first_tau_b"].mean()),
                float(np.nanmean(r["rank_MUP"])),
                float(np.nanmean(r["rank_tau_b"])),
                int(r["candidates"].max()),
                seed,
            )
        )
    return SimulationResult(pd.DataFrame.from_records(rows, columns=COLUMNS), excluded, seed)


def simulate_preferences(cube: ScoreCube, truth: str, model: UserModel, rng: RngLike = None) -> pd.DataFrame:
    """One simulated study as canonical votes (the frame :func:`read_preferences` returns)."""
    generator, _ = resolve_rng(rng)
    pairs = StudyPairs.from_cube(cube)
    g = pairs.measures.index(truth) if truth in pairs.measures else None
    if g is None:
        raise EvaluationError(f"truth measure {truth} not in the scores")
    answers = simulate_answers(latent_preference(pairs.d[g], model.signal), model, 1, generator)[0]
    P, k = answers.shape
    frame = pd.DataFrame(
        {
            "level": "topic",
            "topic": np.repeat(pairs.topic, k),
            "subtopic": "",
            "run_a": np.repeat(pairs.run_a, k),
            "run_b": np.repeat(pairs.run_b, k),
            "annotator": np.tile([f"sim{j + 1}" for j in range(k)], P),
            "value": answers.ravel(),
            "line": np.arange(P * k) + 2,
        },
        columns=list(VOTE_COLUMNS),
    )
    return frame
