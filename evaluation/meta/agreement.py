"""Agreement of metrics with user preferences over run pairs (docs/metrics.md#agreement-with-users; Chen et al.).

For every metric ``M`` and run pair ``c``: ``d_M(c) = M(run_b) - M(run_a)``, metric sign
``s_M = sign(d_M)`` (``|d| <= 1e-12`` is a tie), user preference ``p_c`` with ``u_c = |p_c|`` and
sign ``s_U``, agreement ``J = s_M s_U``. Over a set ``C'`` of pairs (docs/metrics.md#tau-and-tau_b)::

    tau   = (A - D) / N
    tau_b = (A - D) / sqrt((N - n_M) (N - n_U))
    MUP   = sum u J / sum u                                    (Formula 1)
    MUP_b = sum u J / sqrt(sum u (1 - T0) * sum u)             (default, tau_b-consistent)
    MUP_b_published = sum u J / sqrt(sum u (1 + T0) * sum u)   (Formula 3 as printed)

Subsets (docs/metrics.md#delta-bins): ``all``; Delta bins ``small``/``large`` (``|d_M| > mean |d_M|`` is large);
preference subranges ``(0-1]`` ... ``(3-4]`` of ``u``; and their cells ``small:(0-1]`` ... .
Every statistic is a ratio of weighted sums over pairs, so one kernel serves the point estimate
(weights 1), the cluster bootstrap over topics (weights = topic multiplicities of a resample) and
the planted-truth simulator (many preference vectors at once), all as matrix products.

A metric undefined on a pair (``d`` NaN: PMP on a topic with equal kept weights) leaves that pair
out of its own sums only: every per-pair term of that metric is multiplied by 0, so its ``n`` and
its statistics rest on the pairs where it is defined and the other metrics are unaffected.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats as sps

from evaluation._types import FloatArray, IntArray
from evaluation.meta._resampling import RngLike, bootstrap_counts, percentile_interval, resolve_rng
from evaluation.meta.intervals import CONVENTION as INTERVAL_CONVENTION
from evaluation.meta.intervals import MIN_TOPICS, check_method, score_interval
from evaluation.meta.pairs import TIE, checked_pairs, on_items, signs

STATISTICS = ("tau", "tau_b", "MUP", "MUP_b", "MUP_b_published")
BINS = ("small", "large")
SUBRANGES = ("(0-1]", "(1-2]", "(2-3]", "(3-4]")
SUBRANGE_BOUNDS = ((0.0, 1.0), (1.0, 2.0), (2.0, 3.0), (3.0, 4.0))
SUBSETS = ("all", *BINS, *SUBRANGES, *(f"{b}:{s}" for b in BINS for s in SUBRANGES))
TABLE_COLUMNS = ["measure", "statistic", "subset", "n", "value", "ci_low", "ci_high"]
TAU_MODES = ("pairs", "scipy")
CONVENTIONS = {
    "metric_tie": "|d_M(c)| <= 1e-12 is a metric tie (docs/metrics.md#run-pairs-and-signs)",
    "user_tie": "integer sum of answers == 0; weighted level |p| <= 1e-12 (docs/metrics.md#run-pairs-and-signs, docs/metrics.md#weighted-topic-preference)",
    "J_on_ties": "J(c) = 0 when the metric or the users tie (docs/metrics.md#run-pairs-and-signs)",
    "MUP_b": "tau_b-consistent: sum u J / sqrt(sum u (1 - T0) * sum u) (docs/metrics.md#mup_b default, docs/metrics.md#mup_b)",
    "MUP_b_published": "Formula 3 as printed: sum u J / sqrt(sum u (1 + T0) * sum u)",
    "delta_bins": "large iff |d_M| > mean |d_M| over the pairs, per metric; recomputed on each resample (docs/metrics.md#delta-bins)",
    "subranges": "(0-1], (1-2], (2-3], (3-4] of |p|, a |p| within 1e-12 of a bound k counting as k; |p| <= 1e-12 in none (docs/metrics.md#preference-subranges)",
    "interval": INTERVAL_CONVENTION["score"],
    "undefined": "a metric undefined on a topic (NaN) leaves that topic's pairs out of its own statistics only; n counts its pairs",
}


def subrange_masks(u: FloatArray, tol: float = TIE) -> FloatArray:
    """(4, P) masks of the preference subranges ``(k-1, k]`` of ``u = |p|`` (docs/metrics.md#preference-subranges).

    A weighted preference equal to ``k`` in exact arithmetic can come out of its float sum as ``k``
    plus an ulp; every bound is therefore shifted by ``tol`` (the user-tie tolerance): ``u`` is in
    ``(k-1, k]`` iff ``k - 1 + tol < u <= k + tol``, so ``u <= tol`` (a tie) is in none.
    """
    return np.stack([(u > lo + tol) & (u <= hi + tol) for lo, hi in SUBRANGE_BOUNDS])


def weighted_sums(s_m: FloatArray, s_u: FloatArray, u: FloatArray, w: FloatArray) -> dict[str, FloatArray]:
    """Sufficient sums of every statistic for ``R`` weightings of the pairs.

    Parameters
    ----------
    s_m : (G, P) metric signs of G metrics on P pairs.
    s_u, u : (P,) or (R, P) user signs and preference strengths ``|p|``.
    w : (R, P) non-negative pair weights (subset masks times resampling multiplicities).

    Returns
    -------
    dict of (R, G) arrays: ``AD`` = A - D, ``N``, ``NM`` = N - n_M, ``NU`` = N - n_U, ``U`` = sum u,
    ``UJ`` = sum u J, ``UT`` = sum of u over metric-only ties.
    """
    wu = w * u
    ones = np.ones((1, s_m.shape[0]))
    return {
        "AD": (w * s_u) @ s_m.T,
        "N": w.sum(axis=1, keepdims=True) @ ones,
        "NM": w @ np.abs(s_m).T,
        "NU": (w * np.abs(s_u)).sum(axis=1, keepdims=True) @ ones,
        "U": wu.sum(axis=1, keepdims=True) @ ones,
        "UJ": (wu * s_u) @ s_m.T,
        "UT": wu @ (s_m == 0).T.astype(np.float64),
    }


def statistics_from_sums(s: dict[str, FloatArray]) -> dict[str, FloatArray]:
    """tau, tau_b, MUP, MUP_b (tau_b-consistent) and MUP_b_published; NaN where undefined."""
    nan = np.nan
    with np.errstate(divide="ignore", invalid="ignore"):
        U, UT = s["U"], s["UT"]
        untied = U - UT
        return {
            "tau": np.where(s["N"] > 0, s["AD"] / s["N"], nan),
            "tau_b": np.where((s["NM"] > 0) & (s["NU"] > 0), s["AD"] / np.sqrt(s["NM"] * s["NU"]), nan),
            "MUP": np.where(U > 0, s["UJ"] / U, nan),
            "MUP_b": np.where((U > 0) & (untied > TIE * U), s["UJ"] / np.sqrt(untied * U), nan),
            "MUP_b_published": np.where(U > 0, s["UJ"] / np.sqrt((U + UT) * U), nan),
        }


def pair_statistics(
    d: FloatArray, p: FloatArray, *, user_sign: FloatArray | None = None, w: FloatArray | None = None
) -> dict[str, FloatArray]:
    """All five statistics over all pairs, for R preference vectors and/or R weightings at once
    (:func:`statistics_from_sums` of :func:`pair_sums`; parameters there)."""
    return statistics_from_sums(pair_sums(d, p, user_sign=user_sign, w=w))


def pair_sums(d: FloatArray, p: FloatArray, *, user_sign: FloatArray | None = None, w: FloatArray | None = None) -> dict[str, FloatArray]:
    """The sufficient sums of :func:`weighted_sums` over all pairs, a metric's only over the pairs where it is defined.

    Parameters
    ----------
    d : (G, P) metric differences ``d_M(c)``.
    p : (P,) or (R, P) user preferences.
    user_sign : like ``p``; exact user signs (default ``sign(p)`` with the 1e-12 tie rule).
    w : (R, P) weights (default 1 for every pair).

    Returns
    -------
    dict sum -> (R, G) array (linear in ``w``).
    """
    p = np.atleast_2d(np.asarray(p, dtype=np.float64))
    s_u = signs(p) if user_sign is None else np.atleast_2d(np.asarray(user_sign, dtype=np.float64))
    w = np.ones_like(p) if w is None else np.atleast_2d(np.asarray(w, dtype=np.float64))
    d = np.asarray(d, dtype=np.float64)
    valid = ~np.isnan(d)
    if valid.all():
        return weighted_sums(signs(d), s_u, np.abs(p), w)
    sums = weighted_sums(signs(np.where(valid, d, 0.0)), s_u, np.abs(p), w)
    ok = valid.T.astype(np.float64)  # (P, G): a metric's counts and strengths only over its defined pairs
    wu = w * np.abs(p)
    sums["N"] = w @ ok
    sums["NU"] = (w * np.abs(s_u)) @ ok
    sums["U"] = wu @ ok
    sums["UT"] = wu @ ((signs(np.where(valid, d, 0.0)) == 0) & valid).T.astype(np.float64)
    return sums


@dataclass(frozen=True)
class AgreementResult:
    """Tidy agreement table plus the settings that produced it.

    ``table`` has columns ``measure statistic subset n value ci_low ci_high``; ``n`` is the number
    of run pairs in the subset; the interval is the ``interval`` method's
    (:mod:`evaluation.meta.intervals`; NaN where there is too little data). ``seed`` is that of the
    bootstrap (None without one, or when a Generator was passed).
    """

    table: pd.DataFrame
    n_pairs: int
    n_topics: int
    B: int
    seed: int | None
    confidence: float
    tau_mode: str
    interval: str = "score"


def agreement(
    d: FloatArray,
    p: FloatArray,
    measures: Sequence[str],
    *,
    user_sign: FloatArray | None = None,
    clusters: IntArray | None = None,
    B: int = 0,
    rng: RngLike = None,
    confidence: float = 0.95,
    tau_mode: str = "pairs",
    subsets: Sequence[str] = SUBSETS,
    interval: str = "score",
) -> AgreementResult:
    """Agreement statistics of G metrics with user preferences on P run pairs (docs/metrics.md#agreement-with-users).

    Parameters
    ----------
    d : (G, P) metric differences ``M(run_b) - M(run_a)`` on each pair.
    p : (P,) mean user preferences (positive: run_b preferred); finite.
        ``d`` may be NaN where a metric is undefined: that pair is left out for that metric only.
    measures : G metric names.
    user_sign : (P,) exact user signs (default ``sign(p)`` with ``|p| <= 1e-12`` a tie).
    clusters : (P,) topic index of each pair for the cluster bootstrap (default: each pair its own).
    B : bootstrap resamples of topics for ``interval="percentile"`` (0: no intervals there).
    rng : seed or Generator for the bootstrap.
    confidence : level of the intervals.
    tau_mode : ``pairs`` (default, per-pair signs) or ``scipy`` (``scipy.stats.kendalltau(d, p)``
        over the pairs of each subset; docs/metrics.md#tau-and-tau_b; no bootstrap intervals for tau, tau_b).
    subsets : the subsets to report (default all of ``SUBSETS``, in that order). Fewer subsets cost
        less (``("all",)`` skips the per-metric Delta bins); the bootstrap draws the same resamples
        whatever is asked, so a subset's interval does not depend on the others.
    interval : ``score`` (default: topic-jackknife score interval), ``percentile`` (cluster
        bootstrap, needs B) or ``none``; docs/meta.md#confidence-intervals. No interval for a
        subset whose pairs come from fewer than ``intervals.MIN_TOPICS`` topics.
    """
    x = checked_pairs(d, p, measures, user_sign, clusters)
    d, p, s_u, clusters, measures = x.d, x.p, x.user_sign, x.clusters, x.measures
    G, P = d.shape
    if tau_mode not in TAU_MODES:
        raise ValueError(f"tau_mode must be one of {', '.join(TAU_MODES)}, got {tau_mode!r}")
    if B < 0:
        raise ValueError(f"B must be >= 0, got {B}")
    check_method(interval)
    unknown = [subset for subset in subsets if subset not in SUBSETS]
    if unknown or not subsets:
        raise ValueError(f"subsets must be among {', '.join(SUBSETS)}, got {', '.join(map(str, subsets)) or 'none'}")
    subsets = [subset for subset in SUBSETS if subset in subsets]
    generator, seed = resolve_rng(rng)

    valid = ~np.isnan(d)
    if valid.all():
        valid = None
    else:
        d = np.where(valid, d, 0.0)
    point, n = _subset_statistics(d, s_u, np.abs(p), np.ones((1, P)), subsets, valid)
    if tau_mode == "scipy":
        _scipy_taus(point, d, p, subsets, valid)
    keys = [key for key in point if key[1] in STATISTICS]
    low = {k: np.full(G, np.nan) for k in keys}
    high = {k: np.full(G, np.nan) for k in keys}
    no_interval = {"tau", "tau_b"} if tau_mode == "scipy" else set()
    _, cluster_index = np.unique(clusters, return_inverse=True)
    T = int(cluster_index.max()) + 1
    if interval != "none" and T > 1:
        member = np.zeros((T, P))
        member[cluster_index, np.arange(P)] = 1.0
        loo, _ = _subset_statistics(d, s_u, np.abs(p), 1.0 - member, subsets, valid)  # each topic left out in turn
        topics = _subset_topics(d, np.abs(p), member, subsets, valid)
    if interval == "score" and T > 1:
        for key in keys:
            if key[1] not in no_interval:
                low[key], high[key] = score_interval(point[key][0], loo[key], n[key[0]], topics[key[0]], confidence)
    elif interval == "percentile" and B > 0 and T > 1:
        counts = bootstrap_counts(generator, T, B)
        boot, _ = _subset_statistics(d, s_u, np.abs(p), counts[:, cluster_index].astype(np.float64), subsets, valid)
        for key in keys:
            if key[1] not in no_interval:
                enough = np.isfinite(point[key][0]) & (topics[key[0]] >= MIN_TOPICS)
                lo, hi = percentile_interval(boot[key], confidence, axis=0)
                low[key], high[key] = np.where(enough, lo, np.nan), np.where(enough, hi, np.nan)
    rows = [
        (
            measure,
            statistic,
            subset,
            int(n[subset][g]),
            float(point[subset, statistic][0, g]),
            float(low[subset, statistic][g]),
            float(high[subset, statistic][g]),
        )
        for g, measure in enumerate(measures)
        for statistic in STATISTICS
        for subset in subsets
    ]
    table = pd.DataFrame.from_records(rows, columns=TABLE_COLUMNS)
    return AgreementResult(table, P, T, B, seed if B > 0 else None, confidence, tau_mode, interval)


SUMS = ("AD", "N", "NM", "NU", "U", "UJ", "UT")


def pair_features(s_m: FloatArray, s_u: FloatArray, u: FloatArray) -> FloatArray:
    """Per-pair terms of the sums of :func:`weighted_sums` (in ``SUMS`` order): (G, P, 7).

    For fixed user preferences every sum over a weighting ``w`` is ``w @ features``.
    """
    G, P = s_m.shape
    user = np.broadcast_to(s_u, (G, P))
    strength = np.broadcast_to(u, (G, P))
    return np.stack(
        [user * s_m, np.ones((G, P)), np.abs(s_m), np.abs(user), strength, strength * user * s_m, strength * (s_m == 0)],
        axis=-1,
    )


def _as_statistics(sums: FloatArray) -> dict[str, FloatArray]:
    """``sums[..., k]`` in ``SUMS`` order -> the five statistics and ``_N`` (pairs; same leading shape)."""
    return {**statistics_from_sums({name: sums[..., k] for k, name in enumerate(SUMS)}), "_N": sums[..., 1]}


def _subset_statistics(
    d: FloatArray, s_u: FloatArray, u: FloatArray, w: FloatArray, subsets: Sequence[str] = SUBSETS, valid: np.ndarray | None = None
) -> tuple[dict[tuple[str, str], FloatArray], dict[str, IntArray]]:
    """Statistics of the ``subsets`` for R weightings ``w`` (R, P): {(subset, statistic): (R, G)}.

    All sums are matrix products of the weights with per-pair features: one product for ``all``
    and the subranges (masks folded into the features), and per metric one product for each
    Delta bin and its cells (the bin depends on the metric and on the weighting's mean |d|); the
    bins are computed only when a bin or cell is asked for. ``valid`` (G, P), when given, marks the
    pairs each metric is defined on (its ``d`` is 0 elsewhere); every term of an undefined pair is 0.
    """
    s_m = signs(d)
    abs_d = np.abs(d)
    G, P = d.shape
    R = w.shape[0]
    features = pair_features(s_m, s_u, u)  # (G, P, 7)
    if valid is not None:
        features *= valid[:, :, None]
    ranges = subrange_masks(u).astype(np.float64)  # (4, P)
    all_masks = np.vstack([np.ones((1, P)), ranges])  # all + subranges
    flat = [k for k, subset in enumerate(("all", *SUBRANGES)) if subset in subsets]
    masks = all_masks[flat]
    masked = masks[:, None, :, None] * features[None]  # (len(flat), G, P, 7)
    sums = (w @ masked.transpose(2, 0, 1, 3).reshape(P, -1)).reshape(R, len(flat), G, 7)
    out: dict[tuple[str, str], FloatArray] = {}
    n: dict[str, IntArray] = {}
    for j, k in enumerate(flat):
        subset = ("all", *SUBRANGES)[k]
        for statistic, value in _as_statistics(sums[:, j]).items():
            out[subset, statistic] = value
        n[subset] = np.full(G, int(all_masks[k].sum())) if valid is None else (valid @ all_masks[k]).astype(np.int64)
    if not any(subset.split(":")[0] in BINS for subset in subsets):
        return out, n
    # Delta bins depend on the metric and, in a resample, on the resample's mean |d| (docs/metrics.md#delta-bins).
    with np.errstate(invalid="ignore", divide="ignore"):
        if valid is None:
            delta_bar = (w @ abs_d.T) / w.sum(axis=1, keepdims=True)  # (R, G)
            observed_large = abs_d > abs_d.mean(axis=1, keepdims=True)  # (G, P)
        else:  # means over each metric's defined pairs (abs_d is 0 elsewhere)
            delta_bar = (w @ abs_d.T) / (w @ valid.T.astype(np.float64))
            observed_large = (abs_d > abs_d.sum(axis=1, keepdims=True) / valid.sum(axis=1, keepdims=True)) & valid
    bin_sums = np.empty((2, R, 5, G, 7))
    for g in range(G):
        large = abs_d[g][None, :] > delta_bar[:, g : g + 1]  # (R, P)
        cells = (all_masks[:, :, None] * features[g][None]).transpose(1, 0, 2).reshape(P, -1)  # (P, 5 * 7)
        bin_sums[1, :, :, g] = ((w * large) @ cells).reshape(R, 5, 7)
        bin_sums[0, :, :, g] = ((w * ~large) @ cells).reshape(R, 5, 7)
    for b, bin_name in enumerate(BINS):
        observed = observed_large if bin_name == "large" else ~observed_large if valid is None else ~observed_large & valid
        for k, part in enumerate(("", *SUBRANGES)):
            subset = f"{bin_name}:{part}" if part else bin_name
            if subset not in subsets:
                continue
            for statistic, value in _as_statistics(bin_sums[b, :, k]).items():
                out[subset, statistic] = value
            n[subset] = (observed * all_masks[k][None, :]).sum(axis=1).astype(np.int64)
    return out, n


def _subset_topics(
    d: FloatArray, u: FloatArray, member: FloatArray, subsets: Sequence[str], valid: np.ndarray | None = None
) -> dict[str, IntArray]:
    """Per subset, the number of topics (rows of ``member``, (T, P)) holding at least one of its pairs, per metric (G,).

    The subsets are those of the point estimate (:func:`_subset_statistics` with weights 1): the
    observed Delta bins over each metric's defined pairs (``valid``; its ``d`` is 0 elsewhere).
    """
    ok = np.ones(d.shape, dtype=bool) if valid is None else valid
    abs_d = np.abs(d)
    with np.errstate(invalid="ignore", divide="ignore"):
        large = (abs_d > abs_d.sum(axis=1, keepdims=True) / ok.sum(axis=1, keepdims=True)) & ok
    small = ~large & ok
    ranges = dict(zip(SUBRANGES, subrange_masks(u)))
    out = {}
    for subset in subsets:
        bin_name, _, part = subset.partition(":")
        mask = large if bin_name == "large" else small if bin_name == "small" else ok
        user = ranges.get(part if bin_name in BINS else subset)
        if user is not None:
            mask = mask & user[None, :]
        out[subset] = ((mask.astype(np.float64) @ member.T) > 0).sum(axis=1)
    return out


def _scipy_taus(
    point: dict[tuple[str, str], FloatArray],
    d: FloatArray,
    p: FloatArray,
    subsets: Sequence[str] = SUBSETS,
    valid: np.ndarray | None = None,
) -> None:
    """Replace tau/tau_b by scipy's Kendall statistics over the pairs of each subset (docs/metrics.md#tau-and-tau_b)."""
    u = np.abs(p)
    for g in range(d.shape[0]):
        ok = np.ones(d.shape[1], dtype=bool) if valid is None else valid[g]
        ranges = {name: mask & ok for name, mask in zip(SUBRANGES, subrange_masks(u))}
        large = (np.abs(d[g]) > np.abs(d[g][ok]).mean()) & ok if ok.any() else ok
        small = ~large & ok
        masks = {"all": ok, "small": small, "large": large, **ranges}
        for b_name, b_mask in (("small", small), ("large", large)):
            for r_name, r_mask in ranges.items():
                masks[f"{b_name}:{r_name}"] = b_mask & r_mask
        for subset, mask in masks.items():
            if subset not in subsets:
                continue
            tau_b, tau_a = kendall_taus(d[g][mask], p[mask])
            point[subset, "tau_b"][0, g] = tau_b
            point[subset, "tau"][0, g] = tau_a


def kendall_taus(x: FloatArray, y: FloatArray) -> tuple[float, float]:
    """``(tau_b, tau_a)`` of two samples: scipy's tau_b and ``tau_a = (C - D) / (n (n - 1) / 2)``.

    NaN when fewer than two observations or when either sample is constant.
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    n = x.size
    if n < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return np.nan, np.nan
    tau_b = float(sps.kendalltau(x, y).statistic)
    n0 = n * (n - 1) / 2
    ties_x = _tied_pairs(x)
    ties_y = _tied_pairs(y)
    return tau_b, tau_b * np.sqrt((n0 - ties_x) * (n0 - ties_y)) / n0


def _tied_pairs(values: FloatArray) -> float:
    _, counts = np.unique(values, return_counts=True)
    return float((counts * (counts - 1) / 2).sum())


def agreement_with_users(
    items: pd.DataFrame, scores: pd.DataFrame, measures: Sequence[str] | None = None, **options: Any
) -> AgreementResult:
    """Agreement of every measure of a per-topic score table with preference items: :func:`agreement` through
    :func:`~evaluation.meta.pairs.on_items` (which says what ``items``, ``scores`` and ``measures`` are), with
    :func:`agreement`'s options (``B``, ``rng``, ``confidence``, ``tau_mode``, ``subsets``, ``interval``);
    intervals treat topics as clusters."""
    return on_items(agreement, items, scores, measures, **options)
