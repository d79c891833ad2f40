"""Summary of user preferences per run pair (Chen et al., Table 1; docs/metrics.md#preference-significance).

For each run pair (canonical order ``run_a < run_b``) and each available level -- subtopic (one
value per judged (topic, subtopic)), weighted and topic (one value per topic) -- the mean
preference over the topics (positive: ``run_b`` preferred), the preferred side and a two-sided
test against 0, all three from the same per-topic values (the subtopic level averages a topic's
subtopics first; ``item_mean`` keeps the mean over the items, which can have the other sign). Chen et al. do not name their test; our choices (docs/metrics.md#preference-significance):

* the unit of the test is the topic: subtopics of one topic share its documents and runs and are
  not independent, so the subtopic level tests the per-topic means of its subtopic preferences
  (the cluster-summary approach to clustered data, Donner & Klar 2000); column ``topics``;
* default one-sample t-test; a sample without spread (all values equal) has no t distribution,
  and there the exact two-sided sign-flip permutation test is used instead (Fisher 1935: every
  assignment of signs to the values is equally likely under a symmetric null; with n equal
  non-zero values only the two all-equal-sign assignments reach the observed |mean|, p = 2 / 2^n,
  which for n = 4 is 0.125 like the exact sign test); options Wilcoxon signed-rank, exact sign test;
* the run pairs of one level form a family: ``p_adjusted`` by Holm's step-down method (Holm 1979,
  family-wise error under any dependence; default), Bonferroni, Benjamini-Hochberg (FDR, 1995) or
  none; ``p`` keeps the raw value and ``significant`` is ``p_adjusted < alpha``.
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
CORRECTIONS = ("holm", "bonferroni", "bh", "none")
TIE = 1e-12
COLUMNS = [
    "run_a",
    "run_b",
    "level",
    "n",
    "topics",
    "mean",
    "preferred",
    "test",
    "statistic",
    "p",
    "p_adjusted",
    "correction",
    "significant",
]
SIGN_FLIP = "sign-flip"  # the test column of a t-test row without spread (exact permutation test)


def one_sample_test(values: FloatArray, test: str = "t") -> tuple[float, float]:
    """``(statistic, p)`` of a two-sided test of ``values`` against 0.

    ``t``: one-sample t-test; zero spread: ``t = 0, p = 1`` if the mean is 0, else ``+-inf`` with the
    exact sign-flip p-value ``2 / 2^n`` (:func:`sign_flip_p`; a t-test would claim p = 0);
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
            return (0.0, 1.0) if x[0] == 0 else (float(np.copysign(np.inf, x[0])), sign_flip_p(x))
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


def sign_flip_p(values: FloatArray) -> float:
    """Exact two-sided sign-flip permutation p-value of the mean against 0 (Fisher 1935).

    Under the null each value's sign is + or - with probability 1/2 independently; p is the share of
    the ``2^n`` sign assignments whose ``|sum|`` reaches the observed one (with a 1e-12 tolerance).
    Enumerated exactly for up to 20 values; larger samples without spread use the closed form
    ``2 / 2^n`` (only the two all-equal-sign assignments reach ``|n x|``).
    """
    x = np.abs(np.asarray(values, dtype=np.float64))
    n = x.size
    if n == 0:
        return float("nan")
    observed = abs(float(np.asarray(values, dtype=np.float64).sum()))
    if np.ptp(x) == 0 and x[0] > 0:
        return float(2.0 / 2.0**n) if n > 1 else 1.0
    if n > 20:
        raise ValueError("exact sign-flip enumeration is limited to 20 values")
    signs = 1 - 2 * ((np.arange(2**n)[:, None] >> np.arange(n)[None, :]) & 1)  # (2^n, n) all sign patterns
    sums = np.abs(signs @ x)
    return float(np.mean(sums >= observed - 1e-12))


def adjust_p(p: FloatArray, correction: str = "holm") -> FloatArray:
    """Multiplicity-adjusted p-values of one family (NaN entries are not tests and stay NaN).

    ``holm``: step-down ``max_{j <= i} min(1, (m - j + 1) p_(j))`` (Holm 1979); ``bonferroni``:
    ``min(1, m p)``; ``bh``: Benjamini-Hochberg step-up (1995; ``scipy.stats.false_discovery_control``);
    ``none``: the raw values.
    """
    if correction not in CORRECTIONS:
        raise ValueError(f"correction must be one of {', '.join(CORRECTIONS)}, got {correction!r}")
    p = np.asarray(p, dtype=np.float64)
    out = p.copy()
    tested = np.flatnonzero(~np.isnan(p))
    m = tested.size
    if m == 0 or correction == "none":
        return out
    q = p[tested]
    if correction == "bonferroni":
        out[tested] = np.minimum(1.0, m * q)
    elif correction == "bh":
        out[tested] = sps.false_discovery_control(q, method="bh")
    else:
        order = np.argsort(q, kind="stable")
        stepped = np.maximum.accumulate(np.minimum(1.0, (m - np.arange(m)) * q[order]))
        out[tested[order]] = stepped
    return out


def preference_summary(
    votes: pd.DataFrame, weights: Weights | None = None, *, test: str = "t", alpha: float = 0.05, correction: str = "holm"
) -> pd.DataFrame:
    """Chen et al. Table 1: per run pair and level, mean preference, preferred side and significance.

    Levels without data are skipped (the weighted level needs ``weights`` and subtopic answers).
    Returns columns ``run_a run_b level n topics mean preferred test statistic p p_adjusted
    correction significant item_mean``: ``n`` items, ``topics`` the independent units tested (the
    subtopic level tests per-topic means), ``mean`` and ``preferred`` from those same per-topic
    values, ``p`` raw, ``p_adjusted`` corrected over the run pairs of the level, ``item_mean`` the
    mean over the items.
    """
    if test not in TESTS:
        raise ValueError(f"test must be one of {', '.join(TESTS)}, got {test!r}")
    if correction not in CORRECTIONS:
        raise ValueError(f"correction must be one of {', '.join(CORRECTIONS)}, got {correction!r}")
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
    blocks = []
    for level, items in frames:
        rows = []
        for (run_a, run_b), group in items.groupby(["run_a", "run_b"], sort=True):
            values = group["p"].to_numpy(dtype=np.float64)
            units = group.groupby("topic", sort=True)["p"].mean().to_numpy(dtype=np.float64)  # one value per topic
            mean = float(units.mean())  # the tested quantity: mean, side and test agree (t has the sign of this mean)
            statistic, p = one_sample_test(units, test)
            used = SIGN_FLIP if test == "t" and units.size >= 2 and np.ptp(units) == 0 and units[0] != 0 else test
            preferred = "tie" if abs(mean) <= TIE else run_b if mean > 0 else run_a
            rows.append((run_a, run_b, level, values.size, units.size, mean, preferred, used, statistic, p, float(values.mean())))
        block = pd.DataFrame.from_records(rows, columns=[*COLUMNS[:10], "item_mean"])
        block["p_adjusted"] = adjust_p(block["p"].to_numpy(), correction)
        block["correction"] = correction
        block["significant"] = block["p_adjusted"] < alpha
        blocks.append(block)
    return pd.concat(blocks, ignore_index=True)[[*COLUMNS, "item_mean"]]
