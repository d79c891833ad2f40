"""Planted ties: is the best set calibrated? (docs/meta.md#best-set-calibration)

Studies are drawn from a population in which two metrics ``A`` and ``B`` are tied for the best MUP
by construction (they are exchangeable), and the best set must keep each of them in at least
``1 - alpha`` of the studies. Every study draws ``topics`` fresh topics with ``runs`` runs each; a
topic's runs have latent qualities ``v ~ N(0, 1)``, users answer every run pair as the simulator's
user model does (``evaluation.meta.simulate``: ``clip(round(signal d / sd(d) + N(0, noise^2)), -4,
4)`` with ``d = v_b - v_a``, ``annotators`` answers, many user ties at low signal). Candidates:

* ``sparse`` (the hard regime: diversity metrics that agree with the users except on a few pairs):
  ``A`` and ``B`` have the sign of ``d`` on every pair except that, independently per topic and per
  metric, with probability ``swap`` one run pair (uniform) has its sign swapped;
* ``dense``: ``A`` and ``B`` are ``d`` plus independent Gaussian noise (sd 0.6);
* in both, rivals that are worse (``d`` plus noise sd 1.5; every pair flipped with probability
  0.3), a twin of ``A`` with the same signs (merged into the entry ``A = A2``) and a metric that
  ties on every pair (undefined, never a contender).

``tied_best_dropped`` is, per tied metric, the share of studies whose best set leaves it out; the
target is ``alpha`` plus Monte Carlo error (``3 sqrt(alpha (1 - alpha) / n_sim)``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from evaluation._types import FloatArray, IntArray
from evaluation.meta._resampling import RngLike, resolve_rng
from evaluation.meta.bestset import best_set
from evaluation.meta.significance import run_pairs
from evaluation.meta.simulate import UserModel, simulate_answers

REGIMES = ("sparse", "dense")
TIED = ("A = A2", "B")
NAMES = ("A", "B", "A2", "noisy", "flipped", "flat")


@dataclass(frozen=True)
class Study:
    """One simulated study: differences (G, P), mean preferences and exact signs (P,), topic of each pair."""

    d: FloatArray
    p: FloatArray
    sign: FloatArray
    clusters: IntArray
    measures: tuple[str, ...] = NAMES


def tied_study(regime: str, topics: int, model: UserModel, rng: np.random.Generator, *, runs: int = 5, swap: float = 0.5) -> Study:
    """A study whose population ties ``A`` and ``B`` for the best MUP (module docstring)."""
    if regime not in REGIMES:
        raise ValueError(f"regime must be one of {', '.join(REGIMES)}, got {regime!r}")
    if topics < 1 or runs < 2:
        raise ValueError(f"need topics >= 1 and runs >= 2, got {topics} and {runs}")
    a, b = run_pairs(runs)
    v = rng.normal(size=(topics, runs))
    d = (v[:, b] - v[:, a]).ravel()  # (P,) truth differences, topic-major
    per = a.size
    P = d.size
    answers = simulate_answers(model.signal * d / np.sqrt(2.0), model, 1, rng)[0]
    total = answers.sum(axis=1)
    if regime == "sparse":
        tied = []
        for _ in range(2):
            s = np.sign(d)
            hit = np.flatnonzero(rng.random(topics) < swap)
            s[hit * per + rng.integers(0, per, size=hit.size)] *= -1
            tied.append(s * np.abs(d))
    else:
        tied = [d + rng.normal(scale=0.6, size=P) for _ in range(2)]
    noisy = d + rng.normal(scale=1.5, size=P)
    flipped = np.where(rng.random(P) < 0.3, -d, d)
    rows = np.vstack([tied[0], tied[1], 2 * tied[0], noisy, flipped, np.zeros(P)])
    return Study(rows, total / model.annotators, np.sign(total).astype(np.float64), np.repeat(np.arange(topics), per))


@dataclass(frozen=True)
class Calibration:
    """Per tied entry the share of studies that dropped it; also any-dropped, mean size, merges and undefined seen."""

    regime: str
    topics: int
    n_sim: int
    dropped: dict[str, float]
    any_dropped: float
    mean_size: float
    merged: float  # share of studies where A and its twin were one entry
    flat_out: float  # share of studies where the flat metric was undefined (never in the set)

    @property
    def dropped_max(self) -> float:
        return max(self.dropped.values())

    @property
    def tolerance(self) -> float:
        """``alpha + 3`` Monte Carlo standard errors at alpha = 0.05."""
        return 0.05 + 3 * np.sqrt(0.05 * 0.95 / self.n_sim)


def calibrate(
    regime: str,
    topics: int,
    n_sim: int,
    *,
    annotators: int = 3,
    noise: float = 1.0,
    signal: float = 1.0,
    runs: int = 5,
    swap: float = 0.5,
    B: int = 500,
    alpha: float = 0.05,
    rng: RngLike = None,
) -> Calibration:
    """Draw ``n_sim`` tied studies and tally how often the best set drops each tied entry."""
    if n_sim < 1:
        raise ValueError(f"n_sim must be >= 1, got {n_sim}")
    generator, _ = resolve_rng(rng)
    model = UserModel(noise=noise, signal=signal, annotators=annotators)
    dropped = dict.fromkeys(TIED, 0)
    any_dropped = sizes = merged = flat_out = 0
    for _ in range(n_sim):
        study = tied_study(regime, topics, model, generator, runs=runs, swap=swap)
        chosen = best_set(study.d, study.p, study.measures, user_sign=study.sign, clusters=study.clusters, B=B, rng=generator, alpha=alpha)
        lost = [entry for entry in TIED if not set(chosen.groups.get(entry, entry.split(" = "))) <= set(chosen.measures)]
        for entry in lost:
            dropped[entry] += 1
        any_dropped += bool(lost)
        sizes += chosen.size
        merged += "A = A2" in chosen.groups
        flat_out += "flat" in chosen.undefined
    return Calibration(
        regime,
        topics,
        n_sim,
        {k: v / n_sim for k, v in dropped.items()},
        any_dropped / n_sim,
        sizes / n_sim,
        merged / n_sim,
        flat_out / n_sim,
    )
