"""How many answers would separate the leading metric from the others, *if it is the truth*? A planted-truth estimate.

The estimate assumes what it cannot check: that the metric leading by MUP so far is the one the
users follow. It answers "had the leader been the truth, how large a study would find it?", not
"is the leader the truth?"; for the latter, see the best set (:mod:`evaluation.meta.bestset`),
which may hold several metrics the data cannot tell apart from the leader.

While a study runs, the metric that agrees best with the answers so far (by MUP) is planted as the
truth of the simulator (:mod:`evaluation.meta.simulate`, its user model in ``docs/meta.md``), with
the user model fitted to the answers so far (:func:`fit_user_model`), and simulated studies of
growing size ask how often the leader comes out strictly first by MUP (:func:`separation`).

Fitting (ours). With the leader's difference ``d`` on the pair of each answer and ``z = d / sd(d)``
(sd over every pair of the full study, as the simulator's latent preference), the simulator says an
answer ``k`` means the latent ``s z + e``, ``e ~ N(0, noise^2)``, fell in ``[k - 1/2, k + 1/2)``
(below -3.5 for -4, from 3.5 on for 4: rounding, then clipping). Signal ``s`` and noise are the
maximum-likelihood fit of that model to the answers so far (an ordered probit with the cut points
fixed at the half points), so a study simulated with them looks like the answers at hand as far as
the leader can explain them. Answers that follow another metric than the leader scatter more
around the leader's prediction: they read as more noise and ask for more answers.

Sizes. A simulated study draws ``t`` of the study's units (topics, or subtopics at subtopic level)
with every run pair of each and ``annotators`` answers per pair: ``t x pairs per unit x annotators``
answers. Every size is simulated with the same seed, so the studies of ``t + 1`` units are those of
``t`` units plus one unit (common random numbers) and the recovery rate grows nearly monotonically;
the smallest size reaching the target is found by bisection between the current size and the full
study. Candidates with the leader's sign on every pair of the full study can never be told apart
from it: they are reported (:func:`evaluation.meta.simulate.duplicates_of`) and left out, as in
``meta simulate``. Unlike ``meta simulate``, a candidate that equals the leader only on the units a
smaller simulated study drew stays a rival there (it ties, so the leader is not strictly first):
a small study has not told them apart.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize
from scipy.stats import norm

from evaluation._types import FloatArray
from evaluation.io.preferences import SCALE
from evaluation.meta.simulate import StudyPairs, UserModel, duplicates_of, recovery

TARGET = 0.8  # share of simulated studies in which the leader must come out strictly first by MUP
N_SIM = 200
MIN_SIGNAL, MAX_SIGNAL = 1e-3, 4.0 * SCALE  # scale points per sd of the truth's difference
MIN_NOISE, MAX_NOISE = 0.05, 4.0 * SCALE  # the likelihood degenerates at noise 0


@dataclass(frozen=True)
class FittedModel:
    """The simulator's user model fitted to ``answers`` answers (module docstring)."""

    signal: float
    noise: float
    answers: int

    def user_model(self, annotators: int) -> UserModel:
        return UserModel(noise=self.noise, signal=self.signal, annotators=annotators)


def fit_user_model(d_all: FloatArray, d_answers: FloatArray, values: FloatArray) -> FittedModel | None:
    """Maximum-likelihood signal and noise of the user model for answers ``values`` on pairs whose truth
    differences are ``d_answers`` (module docstring).

    ``d_all``: the truth's difference on every pair of the full study (its sd scales ``z``). None when
    the truth distinguishes none of the answered pairs or the answers do not follow it (best signal 0).
    """
    d_all = np.asarray(d_all, dtype=np.float64)
    values = np.asarray(values, dtype=np.float64)
    sd = d_all.std()
    if sd == 0 or values.size == 0:
        return None
    z = np.asarray(d_answers, dtype=np.float64) / sd
    if not np.any(z):
        return None
    # answer k <=> latent in [k - 1/2, k + 1/2), the end points open to -inf / +inf (clip after rounding)
    lower = np.where(values <= -SCALE, -np.inf, values - 0.5)
    upper = np.where(values >= SCALE, np.inf, values + 0.5)

    def negative_log_likelihood(theta: FloatArray) -> float:
        signal, noise = theta
        mu = signal * z
        p = norm.cdf((upper - mu) / noise) - norm.cdf((lower - mu) / noise)
        return float(-np.log(np.maximum(p, 1e-300)).sum())

    start_signal = float(np.clip((z @ values) / (z @ z), MIN_SIGNAL, MAX_SIGNAL))
    start_noise = float(np.clip(np.std(values - start_signal * z), MIN_NOISE, MAX_NOISE))
    best = minimize(
        negative_log_likelihood,
        x0=[start_signal, start_noise],
        method="L-BFGS-B",
        bounds=[(MIN_SIGNAL, MAX_SIGNAL), (MIN_NOISE, MAX_NOISE)],
    )
    signal, noise = (float(x) for x in best.x)
    if signal <= 2 * MIN_SIGNAL:
        return None
    return FittedModel(signal=signal, noise=noise, answers=int(values.size))


@dataclass(frozen=True)
class Separation:
    """How often the planted ``leader`` comes out strictly first by MUP, now and with more answers,
    assuming the leader is the metric the users follow (:attr:`assumption`)."""

    leader: str
    model: UserModel
    units: int  # topics (or subtopics) of the full study
    pairs_per_unit: int
    answers_now: int
    units_now: int  # the simulated size closest to the answers so far, in units
    rate_now: float
    rate_full: float
    units_needed: int | None  # smallest simulated size reaching the target; None: not even the full study
    target: float
    n_sim: int
    seed: int
    candidates: int  # metrics compared, the leader included (duplicates left out)
    duplicates: list[tuple[str, str]]

    @property
    def assumption(self) -> str:
        return f"{self.leader}, the leader by MUP so far, is the metric the users follow (planted as the simulator's truth)"

    def answers_at(self, units: int) -> int:
        return units * self.pairs_per_unit * self.model.annotators

    @property
    def answers_full(self) -> int:
        return self.answers_at(self.units)

    @property
    def separated_now(self) -> bool:
        return self.rate_now >= self.target

    @property
    def answers_needed(self) -> int | None:
        """Answers of the smallest simulated study that separates the leader (the answers so far when they do)."""
        if self.separated_now:
            return self.answers_now
        return None if self.units_needed is None else self.answers_at(self.units_needed)

    @property
    def more_answers(self) -> int | None:
        needed = self.answers_needed
        return None if needed is None else max(0, needed - self.answers_now)


def separation(
    pairs: StudyPairs,
    leader: str,
    model: UserModel,
    *,
    answers_now: int,
    target: float = TARGET,
    n_sim: int = N_SIM,
    seed: int = 1,
) -> Separation:
    """Recovery of ``leader`` planted with ``model`` at the current size, at the full size and, in
    between, the smallest size whose recovery rate reaches ``target`` (module docstring)."""
    if not 0 < target <= 1:
        raise ValueError(f"target must be in (0, 1], got {target}")
    units = int(pairs.topic_index.max()) + 1
    per_unit = pairs.d.shape[1] // units
    units_now = min(units, max(1, round(answers_now / (per_unit * model.annotators))))
    rates: dict[int, float] = {}

    def rate(t: int) -> float:
        if t not in rates:
            found = recovery(pairs, leader, model, n_sim=n_sim, topics=t, rng=seed, drop_identical_on_draw=False)  # one seed: nested
            rates[t] = float(found["first_MUP"].mean())
        return rates[t]

    rate_now, rate_full = rate(units_now), rate(units)
    needed: int | None = None
    if rate_now >= target:
        needed = units_now
    elif rate_full >= target:
        low, high = units_now, units  # rate(low) < target <= rate(high)
        while high - low > 1:
            middle = (low + high) // 2
            low, high = (low, middle) if rate(middle) >= target else (middle, high)
        needed = high
    duplicates = duplicates_of(pairs, leader)
    return Separation(
        leader=leader,
        model=model,
        units=units,
        pairs_per_unit=per_unit,
        answers_now=answers_now,
        units_now=units_now,
        rate_now=rate_now,
        rate_full=rate_full,
        units_needed=needed,
        target=target,
        n_sim=n_sim,
        seed=seed,
        candidates=len(pairs.measures) - len(duplicates),
        duplicates=duplicates,
    )
