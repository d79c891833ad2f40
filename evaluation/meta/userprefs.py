"""Summary of user preferences per run pair (Chen et al., Table 1; docs/metrics.md#weighted-topic-preference).

For each run pair (canonical order ``run_a < run_b``) and each available level -- subtopic (one
value per judged (topic, subtopic)), weighted and topic (one value per topic) -- the mean
preference (positive: ``run_b`` preferred), the preferred side and a two-sided test of the item
preferences against 0. Chen et al. do not name their test; the default one-sample t-test is our
choice (docs/metrics.md#weighted-topic-preference); options: Wilcoxon signed-rank, exact sign test.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from scipy import stats as sps

from evaluation._types import FloatArray
from evaluation.exceptions import EvaluationError
from evaluation.meta.levels import Weights, drop_undefined, preference_items

TESTS = ("t", "wilcoxon", "sign")
TIE = 1e-12
COLUMNS = ["run_a", "run_b", "level", "n", "mean", "preferred", "test", "statistic", "p", "significant"]


def one_sample_test(values: FloatArray, test: str = "t") -> tuple[float, float]:
    """``(statistic, p)`` of a two-sided test of ``values`` against 0.

    ``t``: one-sample t-test (zero spread: ``t = 0, p = 1`` if the mean is 0, else ``+-inf, p = 0``);
    ``wilcoxon``: signed-rank test on the non-zero values; ``sign``: exact binomial test of the
    number of positive among non-zero values. Fewer than 2 values (1 non-zero for the others)
    give NaN.
    """
    x = np.asarray(values, dtype=np.float64)
    if test not in TESTS:
        raise ValueError(f"test must be one of {', '.join(TESTS)}, got {test!r}")
    if test == "t":
        if x.size < 2:
            return np.nan, np.nan
        if np.ptp(x) == 0:
            return (0.0, 1.0) if x[0] == 0 else (float(np.copysign(np.inf, x[0])), 0.0)
        r = sps.ttest_1samp(x, 0.0)
        return float(r.statistic), float(r.pvalue)
    nonzero = x[x != 0]
    if nonzero.size == 0:
        return (0.0, 1.0) if x.size else (np.nan, np.nan)
    if test == "sign":
        positive = int((nonzero > 0).sum())
        return float(positive), float(sps.binomtest(positive, nonzero.size, 0.5).pvalue)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # scipy warns about small samples (exact p is used)
        r = sps.wilcoxon(nonzero)
    return float(r.statistic), float(r.pvalue)


def preference_summary(votes: pd.DataFrame, weights: Weights | None = None, *, test: str = "t", alpha: float = 0.05) -> pd.DataFrame:
    """Chen et al. Table 1: per run pair and level, mean preference, preferred side and significance.

    Levels without data are skipped (the weighted level needs ``weights`` and subtopic answers).
    Returns columns ``run_a run_b level n mean preferred test statistic p significant``.
    """
    if test not in TESTS:
        raise ValueError(f"test must be one of {', '.join(TESTS)}, got {test!r}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    levels = set(votes["level"])
    frames = []
    if "subtopic" in levels:
        frames.append(("subtopic", preference_items(votes, "subtopic")))
        if weights is not None:
            frames.append(("weighted", drop_undefined(preference_items(votes, "weighted", weights))))
    if "topic" in levels:
        frames.append(("topic", preference_items(votes, "topic")))
    if not frames:
        raise EvaluationError("no preferences to summarise")
    rows = []
    for level, items in frames:
        for (run_a, run_b), group in items.groupby(["run_a", "run_b"], sort=True):
            values = group["p"].to_numpy(dtype=np.float64)
            mean = float(values.mean())
            statistic, p = one_sample_test(values, test)
            preferred = "tie" if abs(mean) <= TIE else run_b if mean > 0 else run_a
            rows.append((run_a, run_b, level, values.size, mean, preferred, test, statistic, p, bool(p < alpha)))
    return pd.DataFrame.from_records(rows, columns=COLUMNS)
