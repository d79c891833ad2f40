"""Agreement intervals (docs/meta.md#confidence-intervals): none without data, none from one topic,
honest near +-1, the jackknife in the middle, and coverage close to nominal in a small simulation."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import t as student_t

from evaluation.meta.agreement import agreement
from evaluation.meta.intervals import (
    MIN_TOPICS,
    jackknife_df,
    jackknife_variance,
    linearisation_df,
    linearisation_variance,
    score_interval,
)


def rows(table, statistic="MUP", subset="all", measure="M"):
    return table[(table["measure"] == measure) & (table["statistic"] == statistic) & (table["subset"] == subset)].iloc[0]


def clustered(topics: int, per: int, seed: int = 0, agree: float = 0.8):
    """Pairs of ``topics`` topics: the metric agrees with the user on a share ``agree`` of them."""
    rng = np.random.default_rng(seed)
    p = rng.choice([-3.0, -2.0, -1.0, 1.0, 2.0, 3.0], size=topics * per)
    d = np.sign(p) * np.where(rng.random(p.size) < agree, 1.0, -1.0) * rng.uniform(0.1, 1, p.size)
    return d[None, :], p, np.repeat(np.arange(topics), per)


def test_a_subset_without_pairs_or_with_too_few_topics_gets_no_interval() -> None:
    d, p, clusters = clustered(10, 6)
    p = np.where(np.abs(p) == 2, 3 * np.sign(p), p)  # no pair in (1-2]
    p = np.where(clusters < 2, 3.5 * np.sign(p), p)  # (3-4] only in topics 0 and 1
    t = agreement(d, p, ["M"], clusters=clusters).table
    few = rows(t, subset="(3-4]")
    assert few["n"] == 12 and np.isfinite(few["value"]) and np.isnan(few["ci_low"]) and np.isnan(few["ci_high"])
    empty = t[t["subset"].str.endswith("(1-2]")]
    assert len(empty) == 15 and (empty["n"] == 0).all()
    assert empty["value"].isna().all() and empty["ci_low"].isna().all() and empty["ci_high"].isna().all()
    full = rows(t)
    assert full["ci_low"] < full["value"] < full["ci_high"]


def test_too_few_topics_means_no_interval_at_all() -> None:
    d, p, clusters = clustered(MIN_TOPICS - 1, 8)
    t = agreement(d, p, ["M"], clusters=clusters).table
    assert t["ci_low"].isna().all() and t["value"].notna().any()
    d, p, clusters = clustered(MIN_TOPICS, 8)
    assert np.isfinite(rows(agreement(d, p, ["M"], clusters=clusters).table)["ci_low"])


def test_every_pair_agreeing_gives_a_one_sided_interval_that_narrows_with_more_pairs() -> None:
    widths = []
    for topics in (5, 20, 80):
        d, p, clusters = clustered(topics, 5, agree=1.0)
        row = rows(agreement(d, p, ["M"], clusters=clusters).table)
        assert row["value"] == 1.0 and row["ci_high"] == 1.0 and row["ci_low"] < 1.0  # never [1, 1]
        widths.append(1 - row["ci_low"])
    assert widths[0] > widths[1] > widths[2] > 0


def test_near_the_edge_the_interval_is_asymmetric_and_inside_the_range() -> None:
    d, p, clusters = clustered(12, 5, agree=0.97, seed=3)
    t = agreement(d, p, ["M"], clusters=clusters).table
    for statistic in ("tau", "tau_b", "MUP", "MUP_b", "MUP_b_published"):
        row = rows(t, statistic)
        assert -1 <= row["ci_low"] < row["value"] < row["ci_high"] <= 1, statistic
        assert row["ci_high"] - row["value"] < row["value"] - row["ci_low"], statistic  # more room below


def test_in_the_middle_it_is_the_jackknife_t_interval() -> None:
    d, p, clusters = clustered(40, 6, agree=0.6, seed=4)
    row = rows(agreement(d, p, ["M"], clusters=clusters, confidence=0.9).table, "tau")
    s_m, s_u = np.sign(d[0]), np.sign(p)
    loo = np.array([(s_m * s_u)[clusters != k].mean() for k in range(40)])
    half = student_t.ppf(0.95, 39) * np.sqrt(jackknife_variance(loo))
    assert row["value"] == pytest.approx((s_m * s_u).mean())
    # the Wilson form shifts the centre a little towards 0 and widens a little: within 3% of the t interval
    assert row["ci_high"] - row["ci_low"] == pytest.approx(2 * half, rel=0.03)
    assert (row["ci_low"] + row["ci_high"]) / 2 == pytest.approx(row["value"], abs=0.02)


def test_jackknife_df_is_about_the_topics_when_they_weigh_alike_and_one_when_one_topic_is_the_variance() -> None:
    rng = np.random.default_rng(3)
    alike = 0.5 + rng.normal(0, 0.01, (40, 200))  # 200 statistics, 40 topics each weighing alike
    df = jackknife_df(alike)
    assert df.shape == (200,) and np.all((df >= 1) & (df <= 39))
    assert 30 < np.median(df) <= 39  # moment-corrected: about T (the plug-in (sum a)^2 / sum a^2 is about T / 3)
    one = np.full((40, 2), 0.5)
    one[7] = [0.9, 0.1]  # one topic's leave-one-out value is the whole variance
    assert np.all(jackknife_df(one) < 1.2)  # the other topics move a little with the mean
    np.testing.assert_allclose(jackknife_df(np.full((40, 3), 0.2)), 39.0)  # no variance: the usual T - 1
    np.testing.assert_allclose(jackknife_df(np.array([[0.1], [0.3]])), 1.0)
    # fewer degrees of freedom widen the interval (the t quantile grows); T - 1 is the default
    theta, n, topics = np.array([0.4]), np.array([400.0]), np.array([40.0])
    loo = 0.4 + rng.normal(0, 0.02, (40, 1))
    default = score_interval(theta, loo, n, topics)
    np.testing.assert_allclose(score_interval(theta, loo, n, topics, df=np.array([39.0])), default)
    low, high = score_interval(theta, loo, n, topics, df=np.array([2.0]))
    assert low[0] < default[0][0] and default[1][0] < high[0]


def test_coverage_of_a_clustered_agreement_share_is_close_to_nominal() -> None:
    """Topics with their own agreement rate (beta-distributed around 0.85): MUP's population value is known."""
    rng = np.random.default_rng(11)
    hits = given = 0
    for _ in range(300):
        rate = rng.beta(8.5, 1.5, size=15)  # mean 0.85
        per = 6
        p = np.full(15 * per, 2.0)
        agree = rng.random(p.size) < np.repeat(rate, per)
        d = np.where(agree, 1.0, -1.0)[None, :]
        row = rows(agreement(d, p, ["M"], clusters=np.repeat(np.arange(15), per)).table, "tau")
        if np.isfinite(row["ci_low"]):
            given += 1
            hits += row["ci_low"] <= 0.7 <= row["ci_high"]  # population tau = 2 * 0.85 - 1
    assert given == 300 and 0.91 <= hits / given <= 0.99


def test_score_interval_checks_and_missing_leave_one_out_values() -> None:
    with pytest.raises(ValueError, match="confidence level"):
        score_interval(np.array([0.5]), np.zeros((4, 1)), np.array([10]), np.array([4]), level=1.0)
    low, high = score_interval(np.array([0.5, 0.5]), np.array([[0.4, np.nan], [0.6, 0.5], [0.5, 0.5]]), np.array([9, 9]), np.array([3, 3]))
    assert np.isfinite(low[0]) and np.isnan(low[1]) and np.isnan(high[1])


def test_an_estimate_at_or_beyond_the_edge_gets_the_linearised_interval_cut_to_the_range() -> None:
    """A design-weighted estimate can leave [-1, 1]; Wilson's form would give it the whole range (n* = 0)."""
    rng = np.random.default_rng(5)
    T = 12
    theta = np.array([1.07, 1.0, -1.04, 1.4, 0.6])
    loo = theta[None, :] + rng.normal(0, 0.03, (T, theta.size))
    loo[:, 3] = 1.4 + rng.normal(0, 0.001, T)  # far beyond the edge with a tiny variance
    df = np.array([11.0, 11.0, 11.0, 11.0, 11.0])
    low, high = score_interval(theta, loo, np.full(5, 60), np.full(5, T), level=0.95, df=df)
    spread = student_t.ppf(0.975, 11) * np.sqrt(jackknife_variance(loo))
    for g in (0, 1):  # at or above +1: [1 - t se, 1], the linearised interval around the estimate moved to the edge
        assert low[g] == pytest.approx(1 - spread[g]) and high[g] == 1.0 and 0.5 < low[g] < 1.0
    assert low[2] == -1.0 and high[2] == pytest.approx(-1 + spread[2]) and -1.0 < high[2] < -0.5
    assert low[3] == pytest.approx(1 - spread[3]) and high[3] == 1.0 and low[3] < 1.0  # never a point, however far beyond
    inside_low, inside_high = score_interval(theta[4:], loo[:, 4:], np.full(1, 60), np.full(1, T), level=0.95, df=df[4:])
    assert (low[4], high[4]) == (inside_low[0], inside_high[0]) and low[4] < 0.6 < high[4]  # inside: Wilson, as before
    same_low, same_high = score_interval(np.array([1.0]), np.ones((T, 1)), np.array([60]), np.array([T]))
    assert same_high[0] == 1.0 and 0.8 < same_low[0] < 1.0  # no variance at the edge: Wilson with n = pairs, as before


def test_linearisation_variance_of_a_ratio_by_hand_and_against_the_jackknife() -> None:
    """MUP = sum a / sum b over topic totals (a = UJ, b = U): influence values (a_t - theta b_t) / B, variance
    T / (T - 1) sum z^2; the jackknife's delete-one deviations are the same terms scaled by B / (B - b_t)."""
    a, b = np.array([1.0, 2.0, 3.0]), np.array([2.0, 2.0, 4.0])
    theta = a.sum() / b.sum()  # 0.75
    z = (a - theta * b) / b.sum()  # -0.0625, 0.0625, 0
    np.testing.assert_allclose(z, [-0.0625, 0.0625, 0.0])
    assert linearisation_variance(z[:, None])[0] == pytest.approx(1.5 * 2 * 0.0625**2)  # 0.01171875
    loo = (a.sum() - a) / (b.sum() - b)
    np.testing.assert_allclose(theta - loo, z * b.sum() / (b.sum() - b))  # the heavy topic (b = 4 of 8) counts twice
    # topics that weigh alike: the two agree to O(1 / T)
    rng = np.random.default_rng(2)
    a, b = rng.uniform(0.5, 1.0, 60), np.ones(60)
    theta = a.sum() / b.sum()
    lin = linearisation_variance(((a - theta * b) / b.sum())[:, None])[0]
    jack = jackknife_variance(((a.sum() - a) / (b.sum() - b))[:, None])[0]
    assert lin == pytest.approx(jack, rel=1e-12)  # equal b: (B / (B - b))^2 (T - 1) / T = T / (T - 1) exactly
    # degrees of freedom: those of jackknife_df on the same terms; one topic the whole variance -> 1; none -> T - 1
    one = np.zeros((40, 1))
    one[3] = 0.2
    assert linearisation_df(one)[0] < 1.2 and linearisation_df(np.zeros((40, 2)))[1] == 39.0
    assert np.isnan(linearisation_variance(np.array([[0.1]]))[0])  # one topic: no variance


def test_score_interval_with_a_given_variance_edges_zero_and_bad_input() -> None:
    T, n, topics = 12, np.full(4, 60.0), np.full(4, 12.0)
    theta = np.array([0.6, 1.05, -1.0, 1.0])
    loo = theta[None, :] + np.random.default_rng(1).normal(0, 0.03, (T, 4))
    var = np.array([0.01, 0.0004, 0.0009, 0.0])
    df = np.full(4, 11.0)
    low, high = score_interval(theta, loo, n, topics, df=df, var=var)
    # inside: the Wilson interval with n* = q (1 - q) / (var / 4), the same as the jackknife's at an equal variance
    loo_same = 0.6 + np.array([1.0, -1.0] * 6)[:, None] * np.sqrt(0.01 * T / (T - 1) / T)
    assert jackknife_variance(loo_same)[0] == pytest.approx(0.01)
    inside = score_interval(theta[:1], loo_same, n[:1], topics[:1], df=df[:1])
    assert (low[0], high[0]) == pytest.approx((inside[0][0], inside[1][0]), rel=1e-12)
    spread = student_t.ppf(0.975, 11) * np.sqrt(var)
    assert (low[1], high[1]) == pytest.approx((1 - spread[1], 1.0))  # beyond +1: moved to the edge, linearised, cut
    assert (low[2], high[2]) == pytest.approx((-1.0, -1 + spread[2]))  # at -1
    assert high[3] == 1.0 and 0.8 < low[3] < 1.0  # no variance at the edge: Wilson with n = pairs, never a point
    # an estimate a rounding error beyond 1 with a rounding-level variance (every topic agrees): not the point [1, 1]
    noisy = np.ones((T, 4)) + np.where(np.arange(T)[:, None] % 2 == 1, 2.2e-16, 0.0)  # a jackknife variance of ~1e-32
    for edge_loo, given in ((np.ones((T, 4)), np.full(4, 1e-20)), (noisy, None)):
        low_r, high_r = score_interval(np.full(4, 1 + 7e-16), edge_loo, n, topics, df=df, var=given)
        assert np.allclose(high_r, 1.0) and np.all((0.8 < low_r) & (low_r < 0.99)), (low_r, high_r)
    nan_var = score_interval(theta, loo, n, topics, df=df, var=np.array([np.nan, 0.01, 0.01, 0.01]))
    assert np.isnan(nan_var[0][0]) and np.isnan(nan_var[1][0]) and np.isfinite(nan_var[0][1:]).all()
    with pytest.raises(ValueError, match="negative"):
        score_interval(theta, loo, n, topics, var=np.array([0.01, -0.01, 0.01, 0.01]))


def test_percentile_interval_and_none() -> None:
    d, p, clusters = clustered(12, 5)
    percentile = agreement(d, p, ["M"], clusters=clusters, B=200, rng=1, interval="percentile")
    assert percentile.interval == "percentile" and percentile.seed == 1 and np.isfinite(rows(percentile.table)["ci_low"])
    assert agreement(d, p, ["M"], clusters=clusters, interval="none").table["ci_low"].isna().all()
    assert agreement(d, p, ["M"], clusters=clusters, interval="percentile").table["ci_low"].isna().all()  # B = 0
    with pytest.raises(ValueError, match="interval must be one of"):
        agreement(d, p, ["M"], clusters=clusters, interval="bca")
