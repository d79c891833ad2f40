"""Correlation between system rankings: Kendall's tau (scipy) and symmetric tau_ap (docs/metrics.md#rank-correlation).

tau_ap (Yilmaz, Aslam & Robertson, SIGIR 2008) of an estimated order E against a reference T,
both strict and best first over the same m items::

    tau_ap(E | T) = 2 / (m - 1) * sum_{i=2..m} C(i) / (i - 1) - 1

where C(i) counts the items above position i in E that T also ranks above E's i-th item. The
symmetric form (Sakai 2013; Sakai & Song 2013) averages ``tau_ap(A|B)`` and ``tau_ap(B|A)``.
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
from evaluation.meta.agreement import kendall_taus
from evaluation.meta.significance import discriminative_power

COLUMNS = ["measure_a", "measure_b", "runs", "tau", "tau_a", "tau_ap"]


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
    """Items by score descending; tied scores are ordered by id ascending, with a warning (docs/metrics.md#rank-correlation)."""
    series = pd.Series(scores, dtype=np.float64)
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
    """Correlation of the run orders given by two sets of mean scores (same runs)."""
    x = pd.Series(x, dtype=np.float64)
    y = pd.Series(y, dtype=np.float64)
    if set(x.index) != set(y.index):
        raise EvaluationError("the two rankings do not cover the same runs")
    y = y.reindex(x.index)
    tau_b, tau_a = kendall_taus(x.to_numpy(), y.to_numpy())
    return RankCorrelation(tau_b, tau_a, symmetric_tau_ap(ranking(x, what=what), ranking(y, what=what)), len(x))


def rankcorr_table(cube: ScoreCube, other: ScoreCube | None = None) -> pd.DataFrame:
    """Run-ranking correlations: every pair of measures of ``cube``, or each measure against ``other``.

    Returns columns ``measure_a measure_b runs tau tau_a tau_ap`` (``tau`` is scipy's tau_b). With
    ``other``, ``measure_b`` is the same measure in the other score table (runs must match).
    """
    means = cube.means()
    rows = []
    if other is None:
        if len(cube.measures) < 2:
            raise EvaluationError("rank correlation between measures needs at least 2 measures")
        for a, b in itertools.combinations(cube.measures, 2):
            r = rank_correlation(means[a], means[b], what=f"{a} vs {b}")
            rows.append((a, b, r.runs, r.tau, r.tau_a, r.tau_ap))
    else:
        if set(cube.runs) != set(other.runs):
            raise EvaluationError("the two score tables do not have the same runs")
        other_means = other.means()
        for m in cube.measures:
            if m not in other.measures:
                raise EvaluationError(f"measure {m} is not in the other score table")
            r = rank_correlation(means[m], other_means[m], what=m)
            rows.append((m, m, r.runs, r.tau, r.tau_a, r.tau_ap))
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
