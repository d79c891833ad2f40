"""System-ranking correlation: tau_ap worked example (docs/metrics.md#rank-correlation) and Kendall's tau vs scipy."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from evaluation.exceptions import EvaluationError, EvaluationWarning
from evaluation.meta._matrix import ScoreCube
from evaluation.meta.correlation import rank_correlation, rankcorr_table, ranking, symmetric_tau_ap, tau_ap


def test_tau_ap_worked_example() -> None:
    truth, estimate = list("ABCDE"), list("BCADE")
    assert tau_ap(estimate, truth) == pytest.approx(0.5)
    assert tau_ap(truth, estimate) == pytest.approx(0.25)
    assert symmetric_tau_ap(estimate, truth) == pytest.approx(0.375)
    means_t = dict(zip(truth, [5, 4, 3, 2, 1]))
    means_e = dict(zip(estimate, [5, 4, 3, 2, 1]))
    r = rank_correlation(means_e, means_t)
    assert r.tau == pytest.approx(0.6) and r.tau_a == pytest.approx(0.6) and r.tau_ap == pytest.approx(0.375)


@settings(max_examples=50, deadline=None)
@given(st.permutations(list("ABCDEFG")))
def test_tau_ap_bounds_and_identity(order) -> None:
    reference = list("ABCDEFG")
    assert -1.0 - 1e-12 <= tau_ap(order, reference) <= 1.0 + 1e-12
    assert tau_ap(reference, reference) == pytest.approx(1.0)
    assert tau_ap(reference[::-1], reference) == pytest.approx(-1.0)
    # without ties, Kendall's tau from scores equals scipy
    x = {k: float(7 - i) for i, k in enumerate(order)}
    y = {k: float(7 - i) for i, k in enumerate(reference)}
    xs = [x[k] for k in reference]
    assert rank_correlation(x, y).tau == pytest.approx(sps.kendalltau(xs, [y[k] for k in reference]).statistic)


def test_tied_means_are_broken_by_run_id_with_a_warning() -> None:
    with pytest.warns(EvaluationWarning, match="tied means"):
        assert ranking({"b": 0.5, "a": 0.5, "c": 0.9}) == ["c", "a", "b"]
    with pytest.raises(ValueError, match="same distinct items"):
        tau_ap(["a", "b"], ["a", "c"])


def make_cube(values: np.ndarray, measures=("M1", "M2")) -> ScoreCube:
    G, n, m = values.shape
    return ScoreCube(values, tuple(measures), tuple(str(t) for t in range(n)), tuple(f"r{j}" for j in range(m)))


def test_rankcorr_table_between_measures_and_against_another_table() -> None:
    rng = np.random.default_rng(2)
    values = rng.random((2, 10, 6))
    c = make_cube(values)
    table = rankcorr_table(c)
    assert table[["measure_a", "measure_b", "runs"]].values.tolist() == [["M1", "M2", 6]]
    means = values.mean(axis=1)
    assert table["tau"].iloc[0] == pytest.approx(sps.kendalltau(means[0], means[1]).statistic)
    same = rankcorr_table(c, c)
    np.testing.assert_allclose(same[["tau", "tau_a", "tau_ap"]].to_numpy(), 1.0)
    with pytest.raises(EvaluationError, match="at least 2 measures"):
        rankcorr_table(c.restrict(measures=["M1"]))
