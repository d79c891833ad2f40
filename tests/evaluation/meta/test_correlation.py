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


# -- exact ties of run means (docs/metrics.md#rank-correlation) -----------------------------------------------

# Per-topic values j/15 on 5 topics: runs r0 and r1 both have mean 37/75 in exact arithmetic, but
# their float means differ in the last bit (0.49333333333333335 vs 0.4933333333333333).
TIED = {"r0": [0, 7, 14, 14, 2], "r1": [5, 10, 0, 9, 13], "r2": [15, 15, 15, 15, 0], "r3": [1, 1, 1, 1, 1]}
OTHER = {"r0": [3, 3, 3, 3, 3], "r1": [1, 2, 3, 4, 5], "r2": [0, 0, 0, 0, 1], "r3": [9, 9, 9, 9, 9]}


def _exact_cube() -> ScoreCube:
    runs = list(TIED)
    values = np.array([[[TIED[r][t] / 15 for r in runs] for t in range(5)], [[OTHER[r][t] / 15 for r in runs] for t in range(5)]])
    return ScoreCube(values, ("TIED", "OTHER"), tuple(str(t) for t in range(5)), tuple(runs))


def test_float_means_of_exactly_tied_runs_differ_but_tie() -> None:
    from fractions import Fraction

    from evaluation.meta.correlation import tie_means

    cube = _exact_cube()
    means = cube.means()["TIED"]
    assert means["r0"] != means["r1"]  # the float noise this rule is about
    exact = {r: sum(Fraction(v, 15) for v in TIED[r]) / 5 for r in TIED}
    assert exact["r0"] == exact["r1"] == Fraction(37, 75)
    tied = tie_means(means)
    assert tied["r0"] == tied["r1"] and tied["r2"] != tied["r0"] != tied["r3"]


def test_rankcorr_tau_b_equals_the_exact_mean_result_and_warns_of_the_tie() -> None:
    from fractions import Fraction

    cube = _exact_cube()
    with pytest.warns(EvaluationWarning, match=r"tied means for TIED vs OTHER \(r0, r1\)"):
        table = rankcorr_table(cube)
    # Kendall's tau_b on the exact means: Fractions ranked exactly (equal fractions, equal ranks)
    exact = {m: [sum(Fraction(v, 15) for v in src[r]) / 5 for r in src] for m, src in (("TIED", TIED), ("OTHER", OTHER))}
    ranks = {m: [sorted(set(v)).index(x) for x in v] for m, v in exact.items()}  # equal fractions, equal ranks
    want = sps.kendalltau(ranks["TIED"], ranks["OTHER"]).statistic
    assert table["tau"].iloc[0] == pytest.approx(want, abs=1e-15)
    untied = sps.kendalltau(cube.means()["TIED"], cube.means()["OTHER"]).statistic
    assert untied != pytest.approx(want)  # comparing the float means orders r0 and r1
    assert table[["topics_a", "topics_b"]].values.tolist() == [[5, 5]]


def test_tie_chains_scale_with_the_measure() -> None:
    from evaluation.meta.correlation import tie_means

    big = tie_means({"a": 100.0, "b": 100.0 + 5e-11, "c": 100.0 + 2e-9})
    assert big["a"] == big["b"] != big["c"]  # 5e-11 is within 1e-12 * 100
    small = tie_means({"a": 0.5, "b": 0.5 + 5e-11})
    assert small["a"] != small["b"]
