"""Agreement with user preferences: docs/metrics.md#agreement-with-users worked example, scipy cross-checks, bootstrap."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from evaluation.exceptions import EvaluationError, EvaluationWarning
from evaluation.meta.agreement import SUBSETS, agreement, agreement_with_users, kendall_taus, pair_statistics
from evaluation.meta.intervals import MIN_TOPICS

from .conftest import tidy

# FIXTURES =====================================================================================
# docs/metrics.md#mup_b: six run pairs, p_c and d_M(c).
P6 = np.array([3.0, -1.0, 2 / 3, 0.0, -7 / 3, 4.0])
D6 = np.array([[0.10, 0.05, 0.0, 0.20, -0.30, 0.0]])


def value(table: pd.DataFrame, statistic: str, subset: str = "all", measure: str = "M") -> float:
    row = table[(table["measure"] == measure) & (table["statistic"] == statistic) & (table["subset"] == subset)]
    assert len(row) == 1
    return float(row["value"].iloc[0])


def count(table: pd.DataFrame, subset: str, measure: str = "M") -> int:
    return int(table[(table["measure"] == measure) & (table["subset"] == subset)]["n"].iloc[0])


# TESTS ========================================================================================
def test_six_pair_example_matches_spec() -> None:
    t = agreement(D6, P6, ["M"]).table
    assert value(t, "tau") == pytest.approx(1 / 6)
    assert round(value(t, "tau"), 4) == 0.1667
    assert value(t, "tau_b") == pytest.approx(1 / np.sqrt(20))
    assert round(value(t, "tau_b"), 4) == 0.2236
    assert value(t, "MUP") == pytest.approx((13 / 3) / 11)
    assert round(value(t, "MUP"), 4) == 0.3939
    assert value(t, "MUP_b") == pytest.approx((13 / 3) / np.sqrt((11 - 14 / 3) * 11))
    assert round(value(t, "MUP_b"), 4) == 0.5192
    assert value(t, "MUP_b_published") == pytest.approx((13 / 3) / np.sqrt((11 + 14 / 3) * 11))
    assert round(value(t, "MUP_b_published"), 4) == 0.3301


def test_six_pair_example_bins_and_subranges() -> None:
    t = agreement(D6, P6, ["M"]).table
    # mean |d| = 0.65/6 = 0.1083: large = {4, 5}, small = {1, 2, 3, 6}
    assert count(t, "all") == 6 and count(t, "large") == 2 and count(t, "small") == 4
    # large: pair 4 is a user tie, pair 5 agrees -> tau = 1/2, tau_b = 1/sqrt(2*1)
    assert value(t, "tau", "large") == pytest.approx(0.5)
    assert value(t, "tau_b", "large") == pytest.approx(1 / np.sqrt(2))
    # small: pair 1 agrees, 2 disagrees, 3 and 6 are metric ties -> A - D = 0
    assert value(t, "tau_b", "small") == 0.0
    # subranges by u: (0,1] = {2, 3}, (1,2] = {}, (2,3] = {1, 5}, (3,4] = {6}
    assert [count(t, s) for s in ("(0-1]", "(1-2]", "(2-3]", "(3-4]")] == [2, 0, 2, 1]
    assert value(t, "tau_b", "(0-1]") == pytest.approx(-1 / np.sqrt(1 * 2))
    assert value(t, "tau_b", "(2-3]") == pytest.approx(1.0)
    assert np.isnan(value(t, "tau_b", "(1-2]"))
    assert np.isnan(value(t, "tau_b", "(3-4]"))  # the only pair is a metric tie
    # cells: small:(0-1] = {2, 3}; large:(2-3] = {5}; large:(0-1] = {} (pair 4 has u = 0)
    assert count(t, "small:(0-1]") == 2 and count(t, "large:(2-3]") == 1 and count(t, "large:(0-1]") == 0
    assert count(t, "small:(2-3]") == 1 and count(t, "small:(3-4]") == 1


def test_table_has_every_statistic_and_subset_once() -> None:
    t = agreement(np.vstack([D6, -D6]), P6, ["M", "N"]).table
    assert list(t.columns) == ["measure", "statistic", "subset", "n", "value", "ci_low", "ci_high"]
    assert len(t) == 2 * 5 * len(SUBSETS)
    assert not t.duplicated(["measure", "statistic", "subset"]).any()
    assert value(t, "MUP", measure="N") == pytest.approx(-value(t, "MUP"))  # reversing the metric flips signs


def test_user_tie_is_exact_from_integer_totals() -> None:
    # p = 1e-13 is a tie for the 1e-12 rule but not when the exact sign says otherwise
    d = np.array([[0.1, 0.1]])
    p = np.array([1.0, 0.0])
    t = agreement(d, p, ["M"], user_sign=np.array([1.0, 0.0])).table
    assert value(t, "tau_b") == pytest.approx(1 / np.sqrt(2 * 1))


@st.composite
def one_topic(draw):
    """Metric scores x and latent user scores y for m runs of one topic (ties allowed)."""
    m = draw(st.integers(3, 9))
    x = draw(st.lists(st.sampled_from([0.0, 0.1, 0.25, 0.5, 0.75, 1.0]), min_size=m, max_size=m))
    y = draw(st.lists(st.integers(-2, 2), min_size=m, max_size=m))
    return np.array(x), np.array(y, dtype=float)


@settings(max_examples=60, deadline=None)
@given(one_topic())
def test_tau_b_over_all_run_pairs_of_a_topic_equals_scipy(data) -> None:
    """With p(a, b) = y_b - y_a on every run pair of one topic, the per-pair statistic IS Kendall's."""
    x, y = data
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        return
    a, b = np.triu_indices(x.size, k=1)
    stats = pair_statistics((x[b] - x[a])[None, :], y[b] - y[a])
    assert stats["tau_b"][0, 0] == pytest.approx(sps.kendalltau(x, y).statistic, abs=1e-12)
    if np.unique(x).size == x.size and np.unique(y).size == y.size:  # no ties: tau = tau_b
        assert stats["tau"][0, 0] == pytest.approx(sps.kendalltau(x, y).statistic, abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(-12, 12), st.sampled_from([-0.2, -0.05, 0.0, 0.05, 0.3])), min_size=1, max_size=30))
def test_mup_b_forms_bracket_mup(rows) -> None:
    """docs/metrics.md#mup_b: |MUP_b published| <= |MUP| <= |MUP_b (tau_b-consistent)|."""
    p = np.array([r[0] / 3 for r in rows])
    d = np.array([[r[1] for r in rows]])
    s = pair_statistics(d, p)
    if np.isnan(s["MUP"][0, 0]):
        return
    assert abs(s["MUP_b_published"][0, 0]) <= abs(s["MUP"][0, 0]) + 1e-12
    if not np.isnan(s["MUP_b"][0, 0]):
        assert abs(s["MUP"][0, 0]) <= abs(s["MUP_b"][0, 0]) + 1e-12


def test_scipy_tau_mode_uses_kendalltau_of_d_and_p() -> None:
    rng = np.random.default_rng(4)
    d = rng.normal(size=(1, 40)).round(1)
    p = rng.integers(-4, 5, size=40) / 1.0
    t = agreement(d, p, ["M"], tau_mode="scipy").table
    assert value(t, "tau_b") == pytest.approx(sps.kendalltau(d[0], p).statistic)
    tau_b, tau_a = kendall_taus(d[0], p)
    assert value(t, "tau") == pytest.approx(tau_a)
    assert abs(tau_a) <= abs(tau_b)


def test_many_preference_vectors_at_once_equal_one_at_a_time() -> None:
    rng = np.random.default_rng(7)
    d = rng.normal(size=(3, 25)) * (rng.random((3, 25)) > 0.2)
    p = rng.integers(-4, 5, size=(6, 25)) / 1.0
    w = (rng.random((6, 25)) > 0.3).astype(float)
    batch = pair_statistics(d, p, w=w)
    for r in range(6):
        keep = w[r] > 0
        single = pair_statistics(d[:, keep], p[r, keep])
        for name, values in single.items():
            np.testing.assert_allclose(batch[name][r], values[0], equal_nan=True)


def test_bootstrap_is_deterministic_for_a_seed_and_records_it() -> None:
    rng = np.random.default_rng(1)
    d = rng.normal(size=(2, 60))
    p = np.clip(np.rint(d[0] * 3 + rng.normal(size=60)), -4, 4)
    clusters = np.repeat(np.arange(12), 5)
    one = agreement(d, p, ["A", "B"], clusters=clusters, B=300, rng=11, interval="percentile")
    two = agreement(d, p, ["A", "B"], clusters=clusters, B=300, rng=11, interval="percentile")
    other = agreement(d, p, ["A", "B"], clusters=clusters, B=300, rng=12, interval="percentile")
    pd.testing.assert_frame_equal(one.table, two.table)
    assert one.seed == 11 and one.B == 300 and one.n_topics == 12
    assert not one.table["ci_low"].equals(other.table["ci_low"])
    rows = one.table[one.table["subset"] == "all"]
    assert (rows["ci_low"] <= rows["value"] + 1e-12).all() and (rows["value"] <= rows["ci_high"] + 1e-12).all()


def reference_members(d: np.ndarray, p: np.ndarray) -> dict[str, list[int]]:
    """The pairs of every subset of one metric, by the definitions (docs/metrics.md#delta-bins)."""
    mean_abs = sum(abs(x) for x in d) / len(d)
    members: dict[str, list[int]] = {"all": list(range(len(d)))}
    members["large"] = [c for c in members["all"] if abs(d[c]) > mean_abs]
    members["small"] = [c for c in members["all"] if abs(d[c]) <= mean_abs]
    for lo in range(4):
        name = f"({lo}-{lo + 1}]"
        members[name] = [c for c in members["all"] if lo < abs(p[c]) <= lo + 1]
        for b in ("small", "large"):
            members[f"{b}:{name}"] = [c for c in members[b] if c in members[name]]
    return members


def reference_statistics(d: np.ndarray, p: np.ndarray) -> dict[tuple[str, str], float]:
    """docs/metrics.md#tau-and-tau_b for one metric, written out pair by pair: {(subset, statistic): value}."""
    sign = lambda x: 0 if abs(x) <= 1e-12 else (1 if x > 0 else -1)  # noqa: E731
    out = {}
    for subset, pairs in reference_members(d, p).items():
        J = [sign(d[c]) * sign(p[c]) for c in pairs]
        u = [abs(p[c]) for c in pairs]
        A, D, N = J.count(1), J.count(-1), len(pairs)
        n_m = sum(sign(d[c]) == 0 for c in pairs)
        n_u = sum(sign(p[c]) == 0 for c in pairs)
        U, UJ = sum(u), sum(x * j for x, j in zip(u, J))
        UT = sum(abs(p[c]) for c in pairs if sign(d[c]) == 0)
        nan = float("nan")
        out[subset, "tau"] = (A - D) / N if N else nan
        out[subset, "tau_b"] = (A - D) / math.sqrt((N - n_m) * (N - n_u)) if N > n_m and N > n_u else nan
        out[subset, "MUP"] = UJ / U if U > 0 else nan
        out[subset, "MUP_b"] = UJ / math.sqrt((U - UT) * U) if U - UT > 1e-12 * U and U > 0 else nan
        out[subset, "MUP_b_published"] = UJ / math.sqrt((U + UT) * U) if U > 0 else nan
    return out


def reference_intervals(d: np.ndarray, p: np.ndarray, clusters: np.ndarray, B: int, seed: int, level: float) -> dict:
    """Slow cluster bootstrap: per resample, draw k topics with replacement (the same draws as
    ``bootstrap_counts``: ``default_rng(seed).integers(0, k, (B, k))``), list every pair of every
    drawn topic (repeats included) and recompute everything, bins too, from that list."""
    k = int(clusters.max()) + 1
    draws = np.random.default_rng(seed).integers(0, k, size=(B, k))
    samples: dict[tuple[str, str], list[float]] = {}
    for row in draws:
        pairs = [c for topic in row for c in np.flatnonzero(clusters == topic)]
        for key, value in reference_statistics(d[pairs], p[pairs]).items():
            samples.setdefault(key, []).append(value)
    tail = (1 - level) / 2 * 100
    out = {}
    point = reference_statistics(d, p)
    for key, values in samples.items():
        finite = np.array([v for v in values if not math.isnan(v)])
        # no interval for a subset whose pairs come from fewer than MIN_TOPICS topics, or undefined
        topics = len({int(clusters[c]) for c in reference_members(d, p)[key[0]]})
        enough = finite.size and topics >= MIN_TOPICS and not math.isnan(point[key])
        out[key] = (np.percentile(finite, tail), np.percentile(finite, 100 - tail)) if enough else (np.nan, np.nan)
    return out


def test_cluster_bootstrap_intervals_match_a_slow_reference() -> None:
    """Every statistic x subset interval of two metrics equals the one-resample-at-a-time reference
    (10 topics x 6 pairs, metric ties, user ties, preferences in thirds)."""
    rng = np.random.default_rng(21)
    clusters = np.repeat(np.arange(10), 6)
    d = rng.normal(0, 0.2, size=(2, 60)) * (rng.random((2, 60)) > 0.25)
    p = rng.integers(-12, 13, size=60) / 3.0
    result = agreement(d, p, ["A", "B"], clusters=clusters, B=150, rng=77, confidence=0.9, interval="percentile")
    for g, measure in enumerate(["A", "B"]):
        point = reference_statistics(d[g], p)
        expected = reference_intervals(d[g], p, clusters, B=150, seed=77, level=0.9)
        rows = result.table[result.table["measure"] == measure].set_index(["subset", "statistic"])
        assert len(rows) == len(expected) == 5 * len(SUBSETS)
        for key, (low, high) in expected.items():
            np.testing.assert_allclose(
                rows.loc[key, ["value", "ci_low", "ci_high"]].to_numpy(float),
                [point[key], low, high],
                rtol=1e-10,
                atol=1e-12,
                err_msg=str(key),
            )
    assert result.table["ci_low"].notna().sum() > 100  # most intervals are defined


@pytest.mark.parametrize("interval", ["score", "percentile"])
def test_one_topic_gets_no_interval_rather_than_a_zero_width_one(interval) -> None:
    """With a single topic every bootstrap resample is the original data: no interval, not [value, value]."""
    d = np.array([[0.1, -0.2, 0.3, 0.0]])
    p = np.array([1.0, 2.0, -1.0, 3.0])
    t = agreement(d, p, ["M"], clusters=np.zeros(4, dtype=int), B=50, rng=0, interval=interval).table
    assert t["value"].notna().any() and t["ci_low"].isna().all() and t["ci_high"].isna().all()


def test_no_seed_draws_one_and_reports_it() -> None:
    r = agreement(D6, P6, ["M"], B=20)
    assert isinstance(r.seed, int)
    again = agreement(D6, P6, ["M"], B=20, rng=r.seed)
    pd.testing.assert_frame_equal(r.table, again.table)


@pytest.mark.parametrize(
    "kwargs, message",
    [({"tau_mode": "magic"}, "tau_mode"), ({"B": -1}, "B must be")],
)
def test_bad_arguments(kwargs, message) -> None:
    with pytest.raises(ValueError, match=message):
        agreement(D6, P6, ["M"], **kwargs)


# FROM SCORE TABLES ============================================================================
def items(*rows) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=["topic", "run_a", "run_b", "p"])
    frame["key"] = frame["topic"]
    frame["sign"] = np.sign(frame["p"].fillna(0.0)).astype(int)
    return frame


def scores_two_topics() -> pd.DataFrame:
    return tidy(
        {
            ("A", "1", "M"): 0.2,
            ("B", "1", "M"): 0.5,
            ("C", "1", "M"): 0.1,
            ("A", "2", "M"): 0.7,
            ("B", "2", "M"): 0.3,
            ("C", "2", "M"): 0.3,
            ("A", "all", "M"): 0.45,
            ("B", "all", "M"): 0.4,
            ("C", "all", "M"): 0.2,
        }
    )


def test_agreement_with_users_looks_up_metric_differences() -> None:
    prefs = items(("1", "A", "B", 2.0), ("1", "A", "C", -1.0), ("2", "A", "B", 1.0), ("2", "B", "C", 0.0))
    t = agreement_with_users(prefs, scores_two_topics()).table
    # d = +0.3 (agree), -0.1 (agree), -0.4 (disagree), 0 (metric tie, user tie)
    assert value(t, "tau") == pytest.approx((2 - 1) / 4)
    assert value(t, "MUP") == pytest.approx((2 + 1 - 1) / 4)


def test_missing_score_is_an_error_naming_it() -> None:
    scores = scores_two_topics()
    scores = scores[~((scores["run"] == "C") & (scores["topic"] == "2"))]
    prefs = items(("2", "B", "C", 1.0))
    with pytest.raises(EvaluationError, match="run=C topic=2 measure=M"):
        agreement_with_users(prefs, scores)


def test_unknown_measure_and_unknown_run_are_errors() -> None:
    prefs = items(("1", "A", "B", 1.0))
    with pytest.raises(EvaluationError, match="X@10 not in the scores"):
        agreement_with_users(prefs, scores_two_topics(), ["X@10"])
    with pytest.raises(EvaluationError, match="no scores at all for run"):
        agreement_with_users(items(("1", "A", "Z", 1.0)), scores_two_topics())


def test_topic_without_relevant_documents_is_left_out_with_a_warning() -> None:
    scores = scores_two_topics()
    scores.loc[scores["topic"] == "2", "value"] = np.nan
    prefs = items(("1", "A", "B", 2.0), ("2", "A", "B", 1.0))
    with pytest.warns(EvaluationWarning, match="NaN scores for every run"):
        t = agreement_with_users(prefs, scores).table
    assert count(t, "all") == 1


def test_nan_for_some_runs_only_is_an_error() -> None:
    scores = scores_two_topics()
    scores.loc[(scores["topic"] == "2") & (scores["run"] == "A"), "value"] = np.nan
    with pytest.raises(EvaluationError, match="NaN for run"):
        agreement_with_users(items(("2", "A", "B", 1.0)), scores)


def test_only_mean_rows_is_an_error() -> None:
    scores = scores_two_topics()
    with pytest.raises(EvaluationError, match="per-topic"):
        agreement_with_users(items(("1", "A", "B", 1.0)), scores[scores["topic"] == "all"])


def test_undefined_weighted_preferences_are_reported() -> None:
    prefs = items(("1", "A", "B", 2.0), ("2", "A", "B", np.nan))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t = agreement_with_users(prefs, scores_two_topics()).table
    assert any("left out" in str(w.message) for w in caught)
    assert count(t, "all") == 1
