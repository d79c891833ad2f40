"""Adaptive allocation of preference judgments, and the design-based analysis that stays honest under it
(docs/meta.md#adaptive-allocation).

Unit: the *group* ``c`` = (topic, run_a, run_b), every presentation of a run pair (its topic-level and
subtopic-level ones). For two metrics g and h, ``MUP_g - MUP_h`` moves only on the groups where their
signs differ, so the groups worth judging are those *disputed* among the metrics still in the best set.

Design (sequential Poisson sampling in rounds, two phases inside a group). Round ``r`` draws, independently
per group not drawn before (``A_r``), group ``c`` with probability ``q_rc`` computed from the data before the
draw (:func:`round_probabilities`): proportional to the group's dispute weight (:func:`dispute_weights`), never
below the exploration floor ``floor``, scaled so that about ``target`` groups are drawn (:func:`round_target`: a tenth
of a round once no undrawn group is disputed, the rest of the answers going to the drawn groups' further answers, the
most disputed now first). At the same draw, and independently of everything else, a drawn group is made *full* with
probability ``f_c`` (:func:`draw_full`; :func:`full_shares`: :data:`FULL` where the contenders dispute it, 1 where they
do not; ``f = 1`` is the one-phase design where every drawn group gets its k answers): a full
group is offered first until every presentation has its k answers, any other drawn group until every
presentation has *one* answer (its first layer). Uniform allocation is the special case ``q = target / |A_r|``,
``f = 1``.

Estimators (design-based, Horvitz & Thompson 1952). For any round ``r`` the total of a per-group quantity
``y`` over every group of the design is estimated without bias, whatever the adaptive rule, by::

    Y_r = sum over full groups drawn before r of y_c / f  +  sum over full groups drawn in r of y_c / (q_rc f)

Given everything known at the draw of round ``r`` (when ``q_r`` was fixed) the groups drawn in ``r``, weighted
``1 / q_rc``, are the Horvitz-Thompson estimator of the total over ``A_r`` (the groups drawn before are
certain); the full sub-sample is a second phase drawn independently with known probability ``f``, so the
weight is the product of the phases' inverse probabilities (two-phase sampling: Saerndal, Swensson & Wretman
1992, ch. 9). This holds for *any* ``y`` of the k answers, also the non-linear ones (a group's ``u = |p|``, its
user sign). The reported k-answer estimates (MUP, MUP_b, tau_b: :func:`weighted_estimates`) are better than that
full-only estimator: with every drawn group's *first layer* (its first answer on each presentation; a full group
has one too, which of its k answers arrives first being exchangeable) each sum is estimated by the two-phase
difference estimator (:func:`two_phase_sums`): the first layer's terms with the entry weights
(:func:`pooled_weights`: the mean of every round's Horvitz-Thompson weights up to ``r``, each round's estimator
being unbiased given the rounds before it), plus the full groups' k-answer terms minus their first-layer terms with the entry weight
over ``f`` (:func:`full_weights`), unbiased, resting on every drawn group and correcting only residuals (Saerndal,
Swensson & Wretman 1992, sec. 9.4). A stopping rule decided before a round's draw
keeps this (the draw is independent of the decision), so the analysis uses the *last round whose drawn groups
are complete*; every agreement statistic, a ratio of weighted sums
(:func:`evaluation.meta.agreement.weighted_sums`), becomes its ratio estimator. Intervals: the score interval
of :mod:`evaluation.meta.intervals` with the Taylor linearisation variance over the topics (topics are the clusters
of every phase, the ultimate-cluster variance: Wolter 2007 ch. 4 and 6; :func:`topic_influence`) rather than the
delete-one-topic jackknife, whose delete-one ratios scale a heavy topic's term by ``(B / (B - b_t))^2`` (measured:
docs/benchmarks.md#adaptive-allocation), and its t quantile at that variance's effective degrees of freedom
(:func:`evaluation.meta.intervals.linearisation_df`: a group drawn by the exploration floor weighs up to ~50, so early in a
study one or two topics can be most of the variance, and ``T - 1`` degrees of freedom then under-cover).

The decision (the best set the allocation steers by, :func:`contenders`) also uses the first layer of the
other drawn groups: each drawn group's preference is the mean of the answers it received, ``p_c``, with its
entry weight (:func:`design_weights`). How many answers a group receives is fixed at its draw, before any of
its answers, and which of its k potential answers arrive first is exchangeable (annotators get presentations
by need order, not by what they answer), so the mean of its ``n_c`` answers is unbiased for the mean of its k:
every group-level quantity *linear* in ``p`` keeps its Horvitz-Thompson unbiasedness. What separates two
metrics g and h is linear in ``p``: on a group where their signs are opposite and non-zero,
``u J_g - u J_h = s_g p`` (``J`` the agreement with the user sign), so the numerator of ``MUP_g - MUP_h`` (a sum
over those groups of ``s_g p_c``) is estimated without bias; the positive denominator (``sum u``, non-linear)
is not, which does not change the sign the best set tests (groups where one metric ties are the exception:
there ``u J`` is not linear). The best set is a test; its level under the looks is measured
(benchmarks/bench_adaptive.py ``--tie``), not assumed from this argument.

Optional stopping: the "decided" signal (a claim with at most 3 entries) looks at most ``max_looks`` times, each at level
``alpha / max_looks`` (Bonferroni over a fixed number of looks; :data:`BOUNDARY`), so the chance that the truth is
dropped at any look stays at most ``alpha`` (:func:`look_alpha`; measured by benchmarks/bench_adaptive.py). Pocock's
boundary (:mod:`evaluation.meta.sequential`) tests each look at a larger level by counting the looks' shared data;
it is measured there, not the default. The look-corrected intervals (:func:`look_level`: repeated confidence
intervals, each look's at ``1 - (1 - level) / max_looks``) cover together at all the looks with probability at least
``level``, so also the one read at whichever look the study stopped; the nominal intervals a report shows beside them
are not corrected, and their coverage at a data-chosen stop is measured (docs/meta.md#adaptive-allocation).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from evaluation._types import FloatArray, IntArray
from evaluation.meta._resampling import RngLike
from evaluation.meta.agreement import pair_sums, signs, statistics_from_sums
from evaluation.meta.bestset import EXACT_TOPICS, SELECTION, BestSet, best_set
from evaluation.meta.intervals import linearisation_df, linearisation_variance, score_interval
from evaluation.meta.sequential import nominal_alpha

FULL = 0.2  # default share of drawn groups that get all k answers (the others get one answer per presentation)
EXPLORE = 0.1  # default exploration floor: every undrawn group keeps this share of the uniform chance in every round
UNDISPUTED = 0.1  # a round drawn when no undrawn group is disputed targets this share of a round (round_target)
RESERVE = 0.5  # ... unless the drawn groups' room up to k answers is below this share of a round: then it restores a round's worth
NOT_DRAWN = -1
OTHERS = 0.25  # weight of a disagreement between two contenders neither of which leads (leader_closeness)
DECIDED_SIZE = 3  # the "decided" signal: at most this many entries left in the best set
ESTIMATED = ("MUP", "MUP_b", "tau_b")
BOUNDARY = "bonferroni"  # the looks' correction (evaluation.meta.sequential); "pocock" measured, not the default

# The seam: the best-set procedure adaptive allocation steers by. Any function with best_set's signature.
BestSetFunction = Callable[..., BestSet]
BEST_SET: BestSetFunction = best_set


def look_alpha(alpha: float, max_looks: int, boundary: str | None = None) -> float:
    """Level of each of at most ``max_looks`` looks of the one-sided best-set test so that the family keeps ``alpha``:
    Bonferroni's ``alpha / max_looks`` (default :data:`BOUNDARY`) or Pocock's boundary
    (:func:`evaluation.meta.sequential.nominal_alpha`)."""
    return nominal_alpha(alpha, max_looks, boundary or BOUNDARY)


def look_level(level: float, max_looks: int, boundary: str | None = None) -> float:
    """Confidence level of each of at most ``max_looks`` looks' two-sided intervals so that they hold together (hence
    at a data-chosen stop) with probability at least ``level``: repeated confidence intervals (Jennison & Turnbull
    2000, ch. 9) at Bonferroni's ``1 - (1 - level) / max_looks`` (default :data:`BOUNDARY`) or Pocock's two-sided
    boundary."""
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level}")
    return 1.0 - nominal_alpha(1.0 - level, max_looks, boundary or BOUNDARY, two_sided=True)


def fewest_flips(alpha: float) -> int:
    """The fewest random sign flips with which the Monte Carlo best set (more than ``EXACT_TOPICS`` topics) can leave
    an entry out at level ``alpha`` at all: its ``p_best`` is at least ``1 / (B + 1) + SELECTION alpha`` (the identity
    flip always reaches the observed maximum; :func:`evaluation.meta.bestset.best_set`), so ``B`` must make that at most
    ``alpha``. At a look's level (``alpha / 20`` = 0.0025) that is 444: fewer, and no entry is ever dropped. Enough to
    *reach* the level is not enough for power (an entry is then dropped only when no random flip reaches it): use
    several times more (the study app and benchmarks/bench_adaptive.py use 2,000)."""
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    return max(1, int(np.ceil(1.0 / ((1.0 - SELECTION) * alpha) - 1.0 - 1e-9)))


@dataclass(frozen=True)
class Contenders:
    """The best set on the weighted sample (metrics identical on every judged pair are one entry). Without a
    claim (fewer than 5 topics judged) every defined metric is still a contender and nothing is decided."""

    chosen: BestSet
    members: tuple[str, ...]  # metrics in the set
    entries: tuple[str, ...]  # their entries

    @property
    def size(self) -> int:
        return len(self.entries)

    @property
    def decided(self) -> bool:
        """The "decided" signal: a claim with at most :data:`DECIDED_SIZE` entries."""
        return self.chosen.claim and self.size <= DECIDED_SIZE

    def holds(self, measure: str) -> bool:
        return measure in self.members


def contenders(
    d: FloatArray,
    p: FloatArray,
    measures: Sequence[str],
    *,
    weights: FloatArray,
    user_sign: FloatArray | None = None,
    clusters: IntArray | None = None,
    alpha: float = 0.05,
    B: int = 500,
    rng: RngLike = None,
) -> Contenders:
    """ "Metrics still in the best set": :data:`BEST_SET` on the groups with positive weight, each group's
    preference strength multiplied by its design weight (module docstring). Above ``EXACT_TOPICS`` topics ``B`` must be
    at least :func:`fewest_flips` of ``alpha`` (a ValueError otherwise: with fewer the set could never shrink)."""
    d = np.asarray(d, dtype=np.float64)
    weights = np.asarray(weights, dtype=np.float64)
    p = np.asarray(p, dtype=np.float64)
    keep = weights > 0
    if not keep.any():
        raise ValueError("no judged group has a positive design weight: nothing to compute a best set from")
    sign = signs(p) if user_sign is None else np.asarray(user_sign, dtype=np.float64)
    topics = np.arange(p.size) if clusters is None else np.asarray(clusters)
    if np.unique(topics[keep]).size > EXACT_TOPICS and B < fewest_flips(alpha):
        raise ValueError(f"B={B} random sign flips can never leave an entry out at alpha={alpha:g}: at least {fewest_flips(alpha)} needed")
    chosen = BEST_SET(d[:, keep], p[keep] * weights[keep], measures, user_sign=sign[keep], clusters=topics[keep], B=B, rng=rng, alpha=alpha)
    if chosen.claim:
        return Contenders(chosen, tuple(chosen.measures), tuple(chosen.entries))
    return Contenders(chosen, tuple(m for m in measures if m not in chosen.undefined), tuple(chosen.groups))


def dispute_weights(d: FloatArray, in_set: Sequence[bool], closeness: FloatArray | None = None) -> FloatArray:
    """How much an answer on each group could move the decision among the metrics still in the set.

    ``w_c = sum over pairs g < h of the set with different signs on c of closeness[g, h]``; ``closeness``
    (G, G) in [0, 1] says how open each comparison still is (default 1: every pair counts alike;
    :func:`closeness_from_t` for the studentised differences). A group every contender orders alike has 0.
    """
    s = signs(np.nan_to_num(np.asarray(d, dtype=np.float64), nan=0.0))
    idx = np.flatnonzero(np.asarray(in_set, dtype=bool))
    if idx.size < 2:
        return np.zeros(s.shape[1])
    s = s[idx]
    c = np.ones((idx.size, idx.size)) if closeness is None else np.asarray(closeness, dtype=np.float64)[np.ix_(idx, idx)]
    c = np.triu(c, 1)
    weights = np.zeros(s.shape[1])
    for value in (-1.0, 0.0, 1.0):  # pairs (g, h) differ unless both have the same sign
        same = (s == value).astype(np.float64)  # (G', P)
        weights += np.einsum("gp,gh,hp->p", same, c, same)
    return c.sum() - weights


def closeness_from_t(t: FloatArray) -> FloatArray:
    """``1 / (1 + t^2)`` of studentised differences (G, G): a close comparison counts fully, a clear one little."""
    t = np.nan_to_num(np.asarray(t, dtype=np.float64), nan=0.0, posinf=1e6, neginf=-1e6)
    return 1.0 / (1.0 + t**2)


def leader_closeness(measures: Sequence[str], leaders: Sequence[str], others: float = OTHERS) -> FloatArray:
    """(G, G) closeness that counts a disagreement with a leader fully and one between two other contenders
    ``others``: the comparisons with the leader are the ones that drop a contender from the set."""
    lead = np.isin(np.asarray(measures, dtype=object), list(leaders))
    return np.where(lead[:, None] | lead[None, :], 1.0, others)


def challenger_closeness(measures: Sequence[str], chosen: BestSet, others: float = OTHERS, decided: int = DECIDED_SIZE) -> FloatArray:
    """(G, G) closeness that counts fully only the disagreements between a leader and the *nearest challengers*: the
    ``entries - decided`` members (not leaders) with the smallest ``p_best``, the ones the decided signal needs out
    of the set and the test is closest to dropping; every other pair of contenders counts ``others``. Without a claim,
    or with the set already at most ``decided`` entries, :func:`leader_closeness`."""
    need = len(chosen.entries) - decided
    if not chosen.claim or need <= 0:
        return leader_closeness(measures, chosen.leaders, others)
    table = chosen.table
    members = table[table["measure"].isin(chosen.measures) & ~table["measure"].isin(chosen.leaders)]
    by_entry = members.groupby("entry", sort=False)["p_best"].min().sort_values(kind="stable")
    near = set(members[members["entry"].isin(by_entry.index[:need])]["measure"])
    names = np.asarray(measures, dtype=object)
    lead, challenger = np.isin(names, list(chosen.leaders)), np.isin(names, list(near))
    return np.where((lead[:, None] & challenger[None, :]) | (challenger[:, None] & lead[None, :]), 1.0, others)


def disputed_by(d: FloatArray, measures: Sequence[str], in_set: Sequence[bool]) -> list[str]:
    """Per group, which contenders order it against the others' majority (empty when undisputed): the dashboard's "why"."""
    s = signs(np.nan_to_num(np.asarray(d, dtype=np.float64), nan=0.0))
    idx = np.flatnonzero(np.asarray(in_set, dtype=bool))
    out = []
    for col in s[idx].T:
        values, counts = np.unique(col, return_counts=True)
        majority = values[np.argmax(counts)]
        out.append(", ".join(measures[idx[i]] for i in np.flatnonzero(col != majority)))
    return out


def _round_inputs(weights: FloatArray, available: Sequence[bool], target: float, share: float, name: str) -> tuple[FloatArray, np.ndarray]:
    """A round's checked inputs: ``share`` (called ``name`` in the error) in (0, 1], ``target`` positive; the weights
    as floats and the available groups as a mask."""
    if not 0 < share <= 1:
        raise ValueError(f"{name} must be in (0, 1], got {share}")
    if not target > 0:
        raise ValueError(f"a round must target a positive number of groups, got {target}")
    return np.asarray(weights, dtype=np.float64), np.asarray(available, dtype=bool)


def round_probabilities(weights: FloatArray, available: Sequence[bool], target: float, explore: float = EXPLORE) -> FloatArray:
    """Selection probabilities of one round: ``q_c = clip(lam w_c / max w, floor, 1)`` on the ``n`` available
    groups (0 elsewhere), with the exploration floor ``floor = explore * target / n`` (that share of the
    chance uniform allocation gives) and ``lam`` found by bisection so that ``sum q`` is about ``target``.

    Without any dispute (all weights 0) every available group gets ``target / n``: uniform.
    """
    w, avail = _round_inputs(weights, available, target, explore, "the exploration share")
    q = np.zeros_like(w)
    n = int(avail.sum())
    if n == 0:
        return q
    target = float(min(target, n))
    floor = explore * target / n
    top = w[avail].max()
    if top <= 0:
        q[avail] = target / n
        return q
    scaled = np.where(avail, w / top, 0.0)

    def total(lam: float) -> float:
        return float(np.clip(lam * scaled[avail], floor, 1.0).sum())

    lo, hi = 0.0, 1.0
    while total(hi) < target and hi < 1e12:
        hi *= 2
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if total(mid) < target else (lo, mid)
    q[avail] = np.clip(hi * scaled[avail], floor, 1.0)
    return q


def round_target(
    weights: FloatArray, available: Sequence[bool], target: float, undisputed: float = UNDISPUTED, room: float = float("inf")
) -> float:
    """Groups the next round targets: ``target`` while some available (undrawn) group is disputed among the contenders
    (positive dispute weight), else ``undisputed x target``: undisputed groups cancel in every contenders' difference, so
    the rest of the answers go to the drawn groups' further answers, the most disputed now first; the small round keeps
    every group's chance known and positive. But if the drawn groups' ``room`` up to k answers (in expected answers per
    drawn group) is below ``RESERVE x target``, ``target - room``: the answers till the next draw land on drawn groups."""
    w, avail = _round_inputs(weights, available, target, undisputed, "the undisputed round's share")
    if not room >= 0:
        raise ValueError(f"the drawn groups' room must not be negative, got {room}")
    small = undisputed * target
    return float(target if (w[avail] > 0).any() else max(small, target - room) if room < RESERVE * target else small)


def draw(probabilities: FloatArray, rng: np.random.Generator) -> np.ndarray:
    """Independent Bernoulli draws with the given probabilities (Poisson sampling)."""
    q = np.asarray(probabilities, dtype=np.float64)
    return rng.random(q.shape) < q


def design_weights(drawn_round: IntArray, probability: FloatArray, analysis_round: int) -> FloatArray:
    """Weight of every group in the estimator of round ``analysis_round`` (module docstring):
    1 if drawn in an earlier round, ``1 / q`` if drawn in that round, 0 otherwise (later or never)."""
    r = np.asarray(drawn_round)
    q = np.asarray(probability, dtype=np.float64)
    in_round = r == analysis_round
    if (in_round & ~(q > 0)).any():
        raise ValueError("a group drawn in the analysis round has no positive selection probability")
    with np.errstate(divide="ignore"):
        return np.where((r >= 0) & (r < analysis_round), 1.0, np.where(in_round, 1.0 / np.where(q > 0, q, 1.0), 0.0))


def pooled_weights(drawn_round: IntArray, probability: FloatArray, analysis_round: int) -> FloatArray:
    """Entry weights of the reported estimates: the mean over the rounds ``r = 0 .. R`` (``R = analysis_round``) of
    :func:`design_weights` at ``r``, i.e. ``((R - s) + 1 / q_s) / (R + 1)`` for a group drawn in round ``s <= R``, 0
    otherwise. Each round's estimator is unbiased given the rounds before it, so their mean is too, and it rests the
    total over the groups drawn late (mostly undisputed ones, drawn by the exploration floor) on every round's draw
    instead of the last one's (module docstring)."""
    r = np.asarray(drawn_round)
    q = np.asarray(probability, dtype=np.float64)
    counted = (r >= 0) & (r <= analysis_round)
    if (counted & ~(q > 0)).any():
        raise ValueError("a group drawn by the analysis round has no positive selection probability")
    return np.where(counted, ((analysis_round - r) + 1.0 / np.where(q > 0, q, 1.0)) / (analysis_round + 1), 0.0)


def full_weights(entry: FloatArray, full: Sequence[bool], share: float | FloatArray) -> FloatArray:
    """Weights of the k-answer estimates: the entry weight over the second phase's probability ``share`` (one
    number, or one per group) on the full groups, 0 on the others (module docstring: two-phase Horvitz-Thompson)."""
    full = np.asarray(full, dtype=bool)
    f = np.broadcast_to(np.asarray(share, dtype=np.float64), full.shape)
    if not ((f[full] > 0) & (f[full] <= 1)).all():
        raise ValueError(f"the share of full groups must be in (0, 1], got {share}")
    return np.where(full, np.asarray(entry, dtype=np.float64) / np.where(full, f, 1.0), 0.0)


def draw_full(drawn: Sequence[bool], share: float | FloatArray, rng: np.random.Generator) -> np.ndarray:
    """The second phase: each drawn group is full (gets its k answers) independently with probability ``share`` (one
    number, or one per group: :func:`full_shares`)."""
    drawn = np.asarray(drawn, dtype=bool)
    f = np.broadcast_to(np.asarray(share, dtype=np.float64), drawn.shape)
    if not ((f[drawn] > 0) & (f[drawn] <= 1)).all():
        raise ValueError(f"the share of full groups must be in (0, 1], got {share}")
    return drawn & (rng.random(drawn.shape) < f)


def full_shares(weights: FloatArray, share: float = FULL) -> FloatArray:
    """Each group's chance of being full if drawn now: ``share`` where the contenders dispute it (positive dispute
    weight), 1 where they do not. An undisputed group is drawn by the exploration floor with a heavy entry weight
    (``1 / q``, up to ~150); full with probability ``share`` its k-answer terms would weigh ``1 / share`` times more in
    the reported estimates, so it gets its k answers for sure (it costs a few answers: the floor draws few)."""
    if not 0 < share <= 1:
        raise ValueError(f"the share of full groups must be in (0, 1], got {share}")
    return np.where(np.asarray(weights, dtype=np.float64) > 0, share, 1.0)


def two_phase_sums(
    d: FloatArray,
    p: FloatArray,
    sign: FloatArray,
    weights: FloatArray,
    layer: FloatArray,
    layer_sign: FloatArray,
    layer_weights: FloatArray,
) -> dict[str, FloatArray]:
    """The two-phase difference estimator of every sum of :func:`evaluation.meta.agreement.pair_sums` for ``R``
    weightings at once (:func:`weighted_estimates`): the sums on the first ``layer`` with the entry ``layer_weights``,
    plus those on the k-answer ``p`` minus those on the first layer, both with the full groups' ``weights`` (R, P)."""
    first = pair_sums(d, layer, user_sign=layer_sign, w=layer_weights)
    full = pair_sums(d, p, user_sign=sign, w=weights)
    error = pair_sums(d, layer, user_sign=layer_sign, w=weights)
    return {name: first[name] + full[name] - error[name] for name in full}


@dataclass(frozen=True)
class WeightedEstimates:
    """Design-weighted statistics per metric: ``value[statistic]`` (G,), their intervals at ``level`` and the pairs
    used; :meth:`interval` gives the intervals at another level from the same leave-one-topic-out values."""

    value: dict[str, FloatArray]
    low: dict[str, FloatArray]
    high: dict[str, FloatArray]
    pairs: int
    topics: int
    loo: dict[str, FloatArray]  # (T, G) each topic left out
    n: FloatArray  # (G,) pairs each metric is defined on
    holds: FloatArray  # (G,) topics holding them
    influence: dict[str, FloatArray]  # (T, G) each topic's influence value (topic_influence)

    def variance(self, statistic: str) -> FloatArray:
        """(G,) the Taylor linearisation variance of ``statistic`` over the topics
        (:func:`evaluation.meta.intervals.linearisation_variance` of :attr:`influence`)."""
        return linearisation_variance(self.influence[statistic])

    def df(self, statistic: str) -> FloatArray:
        """(G,) degrees of freedom of the intervals: the moment-corrected Satterthwaite df of :meth:`variance`
        (:func:`evaluation.meta.intervals.linearisation_df`), 1 where one topic's heavy design weight is the whole variance."""
        return linearisation_df(self.influence[statistic])

    def interval(self, statistic: str, level: float) -> tuple[FloatArray, FloatArray]:
        """The score interval of ``statistic`` at ``level`` with :meth:`variance` and :meth:`df` degrees of freedom."""
        return score_interval(
            self.value[statistic], self.loo[statistic], self.n, self.holds, level, df=self.df(statistic), var=self.variance(statistic)
        )


INFLUENCE_STEP = 1e-6  # relative step of topic_influence's central differences (error ~1e-10 of the value)


def topic_influence(sums: dict[str, FloatArray]) -> dict[str, FloatArray]:
    """Each topic's influence value on every statistic of :func:`evaluation.meta.agreement.statistics_from_sums`.

    ``sums`` (T + 1, G): the whole study's sums, then those with each topic left out (linear in the weights, so topic
    ``t``'s own totals are ``s_t = S - S_(t)``). The influence value is the derivative ``d/de f(S + e s_t)`` at 0 (the
    infinitesimal jackknife, Jaeckel 1972; Efron 1982 ch. 6; for MUP ``= UJ / U``: ``(uj_t - MUP u_t) / U``), by central
    differences of step :data:`INFLUENCE_STEP`: returns statistic -> (T, G).
    """
    whole = {name: value[:1] for name, value in sums.items()}
    own = {name: value[:1] - value[1:] for name, value in sums.items()}
    up = statistics_from_sums({name: whole[name] + INFLUENCE_STEP * own[name] for name in sums})
    down = statistics_from_sums({name: whole[name] - INFLUENCE_STEP * own[name] for name in sums})
    return {name: (up[name] - down[name]) / (2 * INFLUENCE_STEP) for name in up}


def weighted_estimates(
    d: FloatArray,
    p: FloatArray,
    *,
    weights: FloatArray,
    clusters: IntArray,
    user_sign: FloatArray | None = None,
    level: float = 0.95,
    statistics: Sequence[str] = ESTIMATED,
    layer: FloatArray | None = None,
    layer_weights: FloatArray | None = None,
    layer_sign: FloatArray | None = None,
) -> WeightedEstimates:
    """Ratio estimators of ``statistics`` over all pairs with design ``weights`` and topic-linearisation score intervals.

    Without ``layer``: every sum of :func:`evaluation.meta.agreement.pair_sums` on the k-answer preferences ``p``
    with ``weights`` (the full groups' two-phase weights, :func:`full_weights`). With ``layer`` (every drawn group's
    first-layer preference, its first answer on each presentation, and ``layer_weights`` its entry weight,
    :func:`design_weights`): the two-phase difference estimator (Saerndal, Swensson & Wretman 1992, sec. 9.4) of
    every sum ``Y = sum_c y_c``::

        Y = sum over drawn c of e_c x_c  +  sum over full c of (e_c / f_c) (y_c - x_c)

    with ``x_c`` the sum's term on the first layer and ``y_c`` on the k answers: which answer of a group arrives
    first is exchangeable and the full flag is drawn independently, so the second term estimates the first's
    error without bias, and the estimate of every sum stays unbiased; the first term rests on every drawn group
    and the second only on a residual. The leave-one-topic-out values drop a topic from both terms (they decide where
    there is an interval, as in the unweighted report); the interval is
    :func:`evaluation.meta.intervals.score_interval` with the linearisation variance of each topic's
    :func:`topic_influence` on both terms (topics are the clusters of both phases: Wolter 2007 ch. 4 and 6).
    """
    w = np.asarray(weights, dtype=np.float64)
    d = np.asarray(d, dtype=np.float64)
    p = np.asarray(p, dtype=np.float64)
    sign = signs(np.nan_to_num(p)) if user_sign is None else np.asarray(user_sign, dtype=np.float64)
    if layer is None:
        e, x, x_sign = np.zeros_like(w), np.zeros_like(p), np.zeros_like(p)
    else:
        if layer_weights is None:
            raise ValueError("a first layer needs its entry weights (layer_weights)")
        e = np.asarray(layer_weights, dtype=np.float64)
        x = np.asarray(layer, dtype=np.float64)
        x_sign = signs(np.nan_to_num(x)) if layer_sign is None else np.asarray(layer_sign, dtype=np.float64)
        if ((w > 0) & ~(e > 0)).any():
            raise ValueError("a full group must also be in the first layer (positive entry weight)")
    keep = (w > 0) | (e > 0)
    d, w, e = d[:, keep], w[keep], e[keep]
    p, sign = np.where(w > 0, p[keep], 0.0), np.where(w > 0, sign[keep], 0.0)
    x, x_sign = np.where(e > 0, x[keep], 0.0), np.where(e > 0, x_sign[keep], 0.0)
    _, topic = np.unique(np.asarray(clusters)[keep], return_inverse=True)
    T = int(topic.max()) + 1 if topic.size else 0
    out = np.vstack([np.ones((1, topic.size)), topic[None, :] != np.arange(T)[:, None]])  # all, then each topic left out

    if layer is None:
        sums = pair_sums(d, p, user_sign=sign, w=out * w[None, :])
    else:
        sums = two_phase_sums(d, p, sign, out * w[None, :], x, x_sign, out * e[None, :])
    every, influence = statistics_from_sums(sums), topic_influence(sums)
    defined = ~np.isnan(d)
    n = defined.sum(axis=1).astype(np.float64)
    holds = np.stack([np.bincount(topic[defined[g]], minlength=T) > 0 for g in range(d.shape[0])]).sum(axis=1).astype(np.float64)
    value, low, high, loo, z = {}, {}, {}, {}, {}
    for name in statistics:
        value[name], loo[name], z[name] = every[name][0], every[name][1:], influence[name]
        low[name], high[name] = score_interval(
            value[name], loo[name], n, holds, level, df=linearisation_df(z[name]), var=linearisation_variance(z[name])
        )
    return WeightedEstimates(value, low, high, int(keep.sum()), T, loo, n, holds, z)
