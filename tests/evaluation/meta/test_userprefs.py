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
    with pytest.raises(EvaluationError, match="subtopic\\(s\\) 3 have no weight"):
        preference_items(STUDY, "weighted", {"1": {"1": 0.5, "2": 0.5}, "2": {"1": 0.5, "2": 0.5}})
    with pytest.raises(EvaluationError, match="no topic-level rows"):
        preference_items(votes(("subtopic", "1", "1", "a", "b", 1)), "topic")


def test_summary_levels_means_and_preferred_side() -> None:
    with pytest.warns(EvaluationWarning, match="1 run pair\\(s\\) lack answers"):
        table = preference_summary(STUDY, WEIGHTS).set_index(["run_a", "run_b", "level"])
    assert table.loc[("a", "b", "subtopic"), "n"] == 5  # (1,1) (1,2) (2,1) (2,2) (2,3)
    assert table.loc[("a", "b", "subtopic"), "mean"] == pytest.approx((2.5 - 3 + 1 + 1 - 2) / 5)
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
    assert one_sample_test([2, 2, 2], "t") == (np.inf, 0.0)
    assert one_sample_test([0, 0], "t") == (0.0, 1.0)
    assert np.isnan(one_sample_test([1], "t")[1])
    assert one_sample_test([0, 0], "sign") == (0.0, 1.0)
    with pytest.raises(ValueError, match="test must be"):
        one_sample_test([1, 2], "z")
