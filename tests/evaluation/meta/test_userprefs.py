"""Preference levels (docs/metrics.md#run-pairs-and-signs, docs/metrics.md#weighted-topic-preference) and the Chen et al. Table 1 summary."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from evaluation.exceptions import EvaluationError, EvaluationWarning
from evaluation.io.preferences import VOTE_COLUMNS
from evaluation.meta.levels import preference_items
from evaluation.meta.userprefs import one_sample_test, preference_summary

# FIXTURES =====================================================================================
# Topic 1 keeps subtopics 1 and 2 (weights 0.4 and 0.2 in the file -> 2/3 and 1/3); subtopic 3
# (weight 0.4) was not shown. Topic 2 keeps subtopics 1-3 but pair (a, c) lacks subtopic 3.
WEIGHTS = {"1": {"1": 0.4, "2": 0.2, "3": 0.4}, "2": {"1": 0.5, "2": 0.25, "3": 0.25}}


def votes(*rows) -> pd.DataFrame:
    """rows: (level, topic, subtopic, run_a, run_b, value), canonical already."""
    records = [(lv, t, s, a, b, f"u{i}", v, i + 2) for i, (lv, t, s, a, b, v) in enumerate(rows)]
    frame = pd.DataFrame(records, columns=list(VOTE_COLUMNS))
    frame["value"] = frame["value"].astype(np.int64)
    return frame


STUDY = votes(
    ("subtopic", "1", "1", "a", "b", 3),
    ("subtopic", "1", "1", "a", "b", 2),
    ("subtopic", "1", "2", "a", "b", -3),
    ("subtopic", "2", "1", "a", "b", 1),
    ("subtopic", "2", "2", "a", "b", 1),
    ("subtopic", "2", "3", "a", "b", -2),
    ("subtopic", "2", "1", "a", "c", 4),
    ("subtopic", "2", "2", "a", "c", 4),
    ("topic", "1", "", "a", "b", 1),
    ("topic", "1", "", "a", "b", -1),
    ("topic", "1", "", "a", "b", 0),
    ("topic", "2", "", "a", "b", 2),
    ("topic", "2", "", "a", "c", -1),
)


# TESTS ========================================================================================
def test_topic_level_items_and_exact_ties() -> None:
    items = preference_items(STUDY, "topic")
    assert items[["key", "run_a", "run_b", "n", "p", "sign"]].values.tolist() == [
        ["1", "a", "b", 3, 0.0, 0],
        ["2", "a", "b", 1, 2.0, 1],
        ["2", "a", "c", 1, -1.0, -1],
    ]


def test_subtopic_items_are_keyed_topic_slash_subtopic() -> None:
    items = preference_items(STUDY, "subtopic")
    assert items["key"].tolist()[:3] == ["1/1", "1/2", "2/1"]
    assert items["p"].tolist()[0] == 2.5


def test_weighted_preference_renormalises_over_kept_subtopics() -> None:
    items = preference_items(STUDY, "weighted", WEIGHTS).set_index(["topic", "run_a", "run_b"])
    # topic 1: kept {1, 2}: (2/3) * 2.5 + (1/3) * (-3) = 2/3
    assert items.loc[("1", "a", "b"), "p"] == pytest.approx(2 / 3)
    # topic 2, (a, b): 0.5 * 1 + 0.25 * 1 + 0.25 * (-2) = 0.25
    assert items.loc[("2", "a", "b"), "p"] == pytest.approx(0.25)
    # topic 2, (a, c): subtopic 3 kept but unanswered -> NaN, no renormalisation (docs/metrics.md#weighted-topic-preference)
    assert np.isnan(items.loc[("2", "a", "c"), "p"]) and items.loc[("2", "a", "c"), "sign"] == 0


def test_weighted_level_needs_weights_for_every_kept_subtopic() -> None:
    with pytest.raises(EvaluationError, match="needs intent weights"):
        preference_items(STUDY, "weighted")
    with pytest.raises(EvaluationError, match="subtopic 3 has no weight"):
        preference_items(STUDY, "weighted", {"1": {"1": 0.5, "2": 0.5}, "2": {"1": 0.5, "2": 0.5}})
    with pytest.raises(EvaluationError, match="no topic-level rows"):
        preference_items(votes(("subtopic", "1", "1", "a", "b", 1)), "topic")


def test_summary_levels_means_and_preferred_side() -> None:
    with pytest.warns(EvaluationWarning, match="1 run pair lacks answers"):
        table = preference_summary(STUDY, WEIGHTS).set_index(["run_a", "run_b", "level"])
    assert table.loc[("a", "b", "subtopic"), "n"] == 5  # (1,1) (1,2) (2,1) (2,2) (2,3)
    # the mean of the per-topic means (topic 1: (2.5 - 3) / 2; topic 2: (1 + 1 - 2) / 3), the tested quantity
    assert table.loc[("a", "b", "subtopic"), "mean"] == pytest.approx(((2.5 - 3) / 2 + 0) / 2)
    assert table.loc[("a", "b", "subtopic"), "item_mean"] == pytest.approx((2.5 - 3 + 1 + 1 - 2) / 5)
    assert table.loc[("a", "b", "weighted"), "mean"] == pytest.approx((2 / 3 + 0.25) / 2)
    assert table.loc[("a", "b", "topic"), "mean"] == pytest.approx(1.0)
    assert table.loc[("a", "b", "topic"), "preferred"] == "b"
    assert table.loc[("a", "c", "topic"), "preferred"] == "a"
    assert ("a", "c", "weighted") not in table.index  # its only weighted value is NaN


def test_summary_t_test_matches_scipy() -> None:
    rows = [("topic", str(t), "", "a", "b", v) for t, v in enumerate([1, 2, 0, 3, 2, -1, 2, 1])]
    table = preference_summary(votes(*rows), test="t")
    expected = sps.ttest_1samp([1, 2, 0, 3, 2, -1, 2, 1], 0.0)
    assert table["statistic"].iloc[0] == pytest.approx(expected.statistic)
    assert table["p"].iloc[0] == pytest.approx(expected.pvalue)
    assert bool(table["significant"].iloc[0]) == (expected.pvalue < 0.05)


def test_other_tests_and_degenerate_samples() -> None:
    assert one_sample_test([1, 1, 2, 3, -1, 2], "sign") == (5.0, pytest.approx(sps.binomtest(5, 6).pvalue))
    assert one_sample_test([1.0, 2.0, 0.0, 3.0, 4.0, -1.0], "wilcoxon")[1] == pytest.approx(sps.wilcoxon([1.0, 2.0, 3.0, 4.0, -1.0]).pvalue)
    assert one_sample_test([2, 2, 2], "t") == (np.inf, 0.25)  # no spread: exact sign-flip p = 2 / 2^3
    assert one_sample_test([0, 0], "t") == (0.0, 1.0)
    assert np.isnan(one_sample_test([1], "t")[1])
    assert one_sample_test([0, 0], "sign") == (0.0, 1.0)
    with pytest.raises(ValueError, match="test must be"):
        one_sample_test([1, 2], "z")


# -- Table 1 tests a reviewer accepts (docs/metrics.md#preference-significance) ---------------------------


def test_four_identical_answers_are_not_significant() -> None:
    """n = 4 topics all answering +2: no spread, so no t distribution; the exact sign-flip test gives
    2 / 2^4 = 0.125 (the exact sign test's value), never p = 0."""
    rows = [("topic", str(t), "", "a", "b", 2) for t in range(4)]
    table = preference_summary(votes(*rows))
    row = table.iloc[0]
    assert row["test"] == "sign-flip" and row["p"] == 0.125 and not row["significant"]
    assert row["p"] == pytest.approx(sps.binomtest(4, 4).pvalue)


def test_sign_flip_p_enumerates_every_sign_pattern() -> None:
    from itertools import product

    from evaluation.meta.userprefs import sign_flip_p

    x = [1.0, 2.0, 0.5, -1.0, 3.0]
    observed = abs(sum(x))
    want = np.mean([abs(sum(s * v for s, v in zip(signs, x))) >= observed - 1e-12 for signs in product((1, -1), repeat=5)])
    assert sign_flip_p(x) == pytest.approx(want)
    assert sign_flip_p([0.0, 0.0]) == 1.0 and sign_flip_p([3.0] * 30) == pytest.approx(2 / 2**30)
    with pytest.raises(ValueError, match="20 values"):
        sign_flip_p(list(range(1, 23)))


def test_holm_bonferroni_and_bh_adjust_within_each_level_and_keep_raw_p() -> None:
    from evaluation.meta.userprefs import adjust_p

    p = np.array([0.01, 0.04, 0.03, np.nan, 0.005])
    np.testing.assert_allclose(adjust_p(p, "holm"), [0.03, 0.06, 0.06, np.nan, 0.02])  # 4 tests: 4p, 3p, 2p, p, monotone
    np.testing.assert_allclose(adjust_p(p, "bonferroni"), [0.04, 0.16, 0.12, np.nan, 0.02])
    np.testing.assert_allclose(adjust_p(p, "bh"), [0.02, 0.04, 0.04, np.nan, 0.02])
    np.testing.assert_allclose(adjust_p(p, "none"), p)
    with pytest.raises(ValueError, match="correction must be"):
        adjust_p(p, "sidak")
    # three run pairs at topic level with raw p below 0.05: Holm keeps only the strongest
    rng = np.random.default_rng(3)
    rows = []
    for pair, shift in (("b", 1.2), ("c", 0.9), ("d", 0.8)):
        rows += [("topic", str(t), "", "a", pair, int(np.clip(round(shift + rng.normal(0, 1.5)), -4, 4))) for t in range(12)]
    raw = preference_summary(votes(*rows), correction="none")
    holm = preference_summary(votes(*rows))
    np.testing.assert_allclose(holm["p"], raw["p"])  # the raw p stays in the table
    np.testing.assert_allclose(holm["p_adjusted"], adjust_p(raw["p"].to_numpy(), "holm"))
    assert (holm["p_adjusted"] >= holm["p"]).all() and set(holm["correction"]) == {"holm"}
    assert holm["significant"].sum() <= raw["significant"].sum()
    with pytest.raises(ValueError, match="correction must be"):
        preference_summary(votes(*rows), correction="sidak")


def test_subtopic_level_tests_topic_means_not_subtopics() -> None:
    """Three subtopics of one topic prefer b, one subtopic each of two other topics prefers a: as six
    independent items a t-test would count 5 units, but the units are the 3 topics (means +3, -1, -1)."""
    rows = [("subtopic", "1", s, "a", "b", 3) for s in ("1", "2", "3")]
    rows += [("subtopic", "2", "1", "a", "b", -1), ("subtopic", "3", "1", "a", "b", -1)]
    row = preference_summary(votes(*rows)).iloc[0]
    assert row["n"] == 5 and row["topics"] == 3
    assert row["item_mean"] == pytest.approx((9 - 2) / 5)  # the item mean, kept beside
    assert row["mean"] == pytest.approx((3 - 1 - 1) / 3)  # the tested quantity: mean of the topic means
    expected = sps.ttest_1samp([3.0, -1.0, -1.0], 0.0)
    assert row["statistic"] == pytest.approx(expected.statistic) and row["p"] == pytest.approx(expected.pvalue)


def test_mean_preferred_side_and_test_never_disagree() -> None:
    """The audit's case: many subtopics of few topics prefer b weakly, single subtopics of many topics prefer a
    strongly: the item mean favours b, the topic means (what is tested) favour a; the row says a throughout."""
    rows = [("subtopic", "1", str(s), "a", "b", 4) for s in range(12)]
    rows += [("subtopic", str(t), "1", "a", "b", -2 - t % 2) for t in range(2, 9)]
    row = preference_summary(votes(*rows)).iloc[0]
    assert row["item_mean"] > 0 and row["mean"] < 0 and row["statistic"] < 0
    assert row["preferred"] == "a" and np.sign(row["statistic"]) == np.sign(row["mean"])
