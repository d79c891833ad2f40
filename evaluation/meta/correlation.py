"""Correlation between system rankings: Kendall's tau (scipy) and symmetric tau_ap (docs/metrics.md#rank-correlation).

tau_ap (Yilmaz, Aslam & Robertson, SIGIR 2008) of an estimated order E against a reference T,
both strict and best first over the same m items::

    tau_ap(E | T) = 2 / (m - 1) * sum_{i=2..m} C(i) / (i - 1) - 1

where C(i) counts the items above position i in E that T also ranks above E's i-th item. The
symmetric form (Sakai 2013; Sakai & Song 2013) averages ``tau_ap(A|B)`` and ``tau_ap(B|A)``.

Ties between run means (docs/metrics.md#rank-correlation): means are compared on the precision of
the scores, not bit for bit. Two runs with the same mean in exact arithmetic (49/75 and 49/75 from
different per-topic values) can get float means one ulp apart; :func:`tie_means` therefore sorts
the means and ties every chain of neighbours within ``1e-12 * max(1, max |mean|)`` (the metric-tie
tolerance of docs/metrics.md#run-pairs-and-signs, scaled for measures above 1), and every
statistic here (tau, tau_a, tau_ap and the tie warning) reads the tied means.
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from evaluation.exceptions import EvaluationError, EvaluationWarning
from evaluation.meta._matrix import ScoreCube
from evaluation.meta.agreement import TIE, kendall_taus
from evaluation.meta.significance import discriminative_power

COLUMNS = ["measure_a", "measure_b", "runs", "topics_a", "topics_b", "tau", "tau_a", "tau_ap"]


def tie_means(values: Mapping[str, float] | pd.Series) -> pd.Series:
    """The means with float-noise ties made exact: sorted, each chain of neighbours within
    ``1e-12 * max(1, max |mean|)`` takes the chain's smallest value (NaN stays NaN)."""
    series = pd.Series(values, dtype=np.float64)
    finite = series.dropna()
    if finite.size < 2:
        return series
    order = np.argsort(finite.to_numpy(), kind="stable")
    sorted_values = finite.to_numpy()[order]
    tol = TIE * max(1.0, float(np.abs(sorted_values).max()))
    starts = np.concatenate([[True], np.diff(sorted_values) > tol])
    representative = sorted_values[np.flatnonzero(starts)[np.cumsum(starts) - 1]]
    tied = np.empty_like(representative)
    tied[order] = representative
    out = series.copy()
    out[finite.index] = tied
    return out


def tau_ap(estimated: Sequence[str], reference: Sequence[str]) -> float:
    """AP correlation ``tau_ap(E | T)`` of two strict orders (best first) of the same items."""
    if sorted(estimated) != sorted(reference) or len(set(estimated)) != len(estimated):
        raise ValueError("tau_ap needs two orders of the same distinct items")
    m = len(estimated)
    if m < 2:
        raise ValueError("tau_ap needs at least 2 items")
    position = {item: k for k, item in enumerate(reference)}
    ref = np.array([position[item] for item in estimated])
    # C(i): items above position i in E that T ranks above E's i-th item.
    above = (ref[None, :] < ref[:, None]) & np.tri(m, k=-1, dtype=bool)
    c = above.sum(axis=1)[1:]
    return float(2.0 / (m - 1) * (c / np.arange(1, m)).sum() - 1.0)


def symmetric_tau_ap(a: Sequence[str], b: Sequence[str]) -> float:
    """``(tau_ap(a | b) + tau_ap(b | a)) / 2``."""
    return (tau_ap(a, b) + tau_ap(b, a)) / 2.0


def ranking(scores: Mapping[str, float] | pd.Series, *, what: str = "") -> list[str]:
    """Items by score descending; tied scores (:func:`tie_means`) are ordered by id ascending, with a
    warning (docs/metrics.md#rank-correlation)."""
    series = tie_means(scores)
    if series.isna().any():
        raise EvaluationError(f"cannot rank NaN scores ({', '.join(map(str, series.index[series.isna()]))})")
    if series.duplicated().any():
        tied = sorted(map(str, series.index[series.duplicated(keep=False)]))
        warnings.warn(
            f"tied means{f' for {what}' if what else ''} ({', '.join(tied)}) are ordered by run id for tau_ap",
            EvaluationWarning,
            stacklevel=2,
        )
    return sorted(series.index, key=lambda item: (-series[item], str(item)))


@dataclass(frozen=True)
class RankCorrelation:
    """Kendall tau_b (scipy), tau_a and symmetric tau_ap of two system rankings of ``runs`` systems."""

    tau: float
    tau_a: float
    tau_ap: float
    runs: int


def rank_correlation(x: Mapping[str, float] | pd.Series, y: Mapping[str, float] | pd.Series, *, what: str = "") -> RankCorrelation:
    """Correlation of the run orders given by two sets of mean scores (same runs); means within float
    noise of each other are tied (:func:`tie_means`). NaN when either set has an undefined mean."""
    x = tie_means(x)
    y = tie_means(y)
    if set(x.index) != set(y.index):
        raise EvaluationError("the two rankings do not cover the same runs")
    y = y.reindex(x.index)
    if x.isna().any() or y.isna().any():
        return RankCorrelation(np.nan, np.nan, np.nan, len(x))
    tau_b, tau_a = kendall_taus(x.to_numpy(), y.to_numpy())
    return RankCorrelation(tau_b, tau_a, symmetric_tau_ap(ranking(x, what=what), ranking(y, what=what)), len(x))


def rankcorr_table(cube: ScoreCube, other: ScoreCube | None = None) -> pd.DataFrame:
    """Run-ranking correlations: every pair of measures of ``cube``, or each measure against ``other``.

    Returns columns ``measure_a measure_b runs topics_a topics_b tau tau_a tau_ap`` (``tau`` is
    scipy's tau_b; ``topics_*`` the topics each mean is taken over: a measure undefined on some
    topics is averaged over the others). With ``other``, ``measure_b`` is the same measure in the
    other score table (runs must match).
    """
    means = cube.means()
    topics = dict(zip(cube.measures, cube.topic_counts().tolist()))
    rows = []
    if other is None:
        if len(cube.measures) < 2:
            raise EvaluationError("rank correlation between measures needs at least 2 measures")
        for a, b in itertools.combinations(cube.measures, 2):
            r = rank_correlation(means[a], means[b], what=f"{a} vs {b}")
            rows.append((a, b, r.runs, topics[a], topics[b], r.tau, r.tau_a, r.tau_ap))
    else:
        if set(cube.runs) != set(other.runs):
            raise EvaluationError("the two score tables do not have the same runs")
        other_means = other.means()
        other_topics = dict(zip(other.measures, other.topic_counts().tolist()))
        for m in cube.measures:
            if m not in other.measures:
                raise EvaluationError(f"measure {m} is not in the other score table")
            r = rank_correlation(means[m], other_means[m], what=m)
            rows.append((m, m, r.runs, topics[m], other_topics[m], r.tau, r.tau_a, r.tau_ap))
    return pd.DataFrame.from_records(rows, columns=COLUMNS)


def power_and_correlation_rows(
    key: object,
    cube: ScoreCube,
    base_means: Mapping[str, pd.Series] | pd.DataFrame,
    *,
    test: str,
    B: int,
    alpha: float,
    rng,
    seed: int | None,
    label: str = "",
) -> list[tuple]:
    """Rows ``key measure pairs significant power tau tau_ap test B alpha seed`` comparing ``cube``
    with a base condition: its discriminative power (docs/metrics.md#discriminative-power) and the Kendall tau / symmetric
    tau_ap of its run ranking against ``base_means`` (docs/metrics.md#rank-correlation). Shared by the topic-set
    reduction (docs/metrics.md#topic-set-reduction) and the simplified-collection comparison (docs/metrics.md#simplified-collections)."""
    power = discriminative_power(cube, test=test, B=B, alpha=alpha, rng=rng).summary
    means = cube.means()
    rows = []
    for i, measure in enumerate(cube.measures):
        r = rank_correlation(base_means[measure], means[measure], what=f"{measure}{label}")
        rows.append(
            (
                key,
                measure,
                int(power["pairs"][i]),
                int(power["significant"][i]),
                float(power["power"][i]),
                r.tau,
                r.tau_ap,
                test,
                B,
                alpha,
                seed,
            )
        )
    return rows
