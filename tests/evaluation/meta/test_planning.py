"""Planning a study (docs/meta.md#planning): answers spent layer by layer, the best set at a grid of sizes."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evaluation.exceptions import EvaluationError
from evaluation.meta.planning import COLUMNS, Design, answer_counts, plan, recommended, simulate_each
from evaluation.meta.simulate import UserModel


def design(topics: int = 20, per: int = 10, seed: int = 0) -> Design:
    """Metric m0 (what the users follow) and three rivals close to it."""
    rng = np.random.default_rng(seed)
    truth = rng.normal(size=topics * per)
    d = np.vstack([truth] + [truth + rng.normal(scale=s, size=truth.size) for s in (0.4, 0.7, 1.0)])
    return Design(d, np.repeat(np.arange(topics), per), ("m0", "m1", "m2", "m3"), presentations=topics * per)


def test_answers_are_spent_layer_by_layer() -> None:
    rng = np.random.default_rng(1)
    counts = answer_counts(100, 100, 250, rng)
    assert counts.sum() == 250 and set(counts) == {2, 3}  # two full layers, half a third
    few = answer_counts(100, 100, 30, rng)
    assert few.sum() == 30 and set(few) == {0, 1}  # fewer answers than pairs: 70 pairs unanswered
    shared = answer_counts(50, 100, 100, rng)  # 50 analysed pairs among 100 presentations
    assert (shared == 1).all()
    partial = answer_counts(50, 100, 150, rng)
    assert set(partial) <= {1, 2} and partial.sum() < 150  # the other presentations took their share


def test_each_answer_is_on_the_scale_and_only_where_given() -> None:
    rng = np.random.default_rng(2)
    counts = np.array([0, 1, 3])
    each = simulate_each(np.array([10.0, -10.0, 0.0]), counts, UserModel(noise=0.5, cheaters=0.0), rng)
    assert each.shape == (3, 3) and (each[0] == 0).all() and (each[1, 1:] == 0).all()
    assert each[1, 0] == -4 and np.abs(each).max() <= 4


def test_more_answers_make_the_set_smaller_and_the_truth_stays() -> None:
    table = plan(design(), "m0", UserModel(noise=1.0, signal=2.0, annotators=3), [60, 600], n_sim=20, B=200, rng=3)
    assert list(table.columns) == COLUMNS and list(table["answers"]) == [60, 600]
    assert table["answers_per_pair"].tolist() == [0.3, 3.0]
    assert table["best_set_size"].iloc[1] < table["best_set_size"].iloc[0]
    assert table["single_entry"].iloc[1] >= 0.8 and (table["truth_in_set"] >= 0.9).all()
    assert recommended(table) == 1


def test_too_few_answers_make_no_claim_and_no_recommendation() -> None:
    table = plan(design(topics=4), "m0", UserModel(), [5, 40], n_sim=5, B=50, rng=1)
    assert (table["claim"] == 0).all() and table["best_set_size"].isna().all()
    assert recommended(table) is None


def test_bad_input() -> None:
    with pytest.raises(EvaluationError, match="not among"):
        plan(design(), "nope", UserModel(), [10])
    with pytest.raises(ValueError, match="positive answer counts"):
        plan(design(), "m0", UserModel(), [0])
    with pytest.raises(EvaluationError, match="presentations cannot hold"):
        Design(np.zeros((2, 10)), np.arange(10), ("a", "b"), presentations=5)
    undefined = design()
    d = undefined.d.copy()
    d[0, 0] = np.nan
    with pytest.raises(EvaluationError, match="undefined"):
        plan(Design(d, undefined.clusters, undefined.measures, undefined.presentations), "m0", UserModel(), [10])
    assert recommended(pd.DataFrame({"single_entry": [0.2, 0.9, 1.0]})) == 1
