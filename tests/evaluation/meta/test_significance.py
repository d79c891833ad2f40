"""Paired bootstrap and randomised Tukey HSD: exact enumerations (docs/metrics.md#paired-bootstrap, docs/metrics.md#randomised-tukey-hsd), a slow
reference implementation, determinism and the rejection rate under the null."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest

from evaluation.exceptions import EvaluationError
from evaluation.meta._matrix import ScoreCube
from evaluation.meta._resampling import bootstrap_counts, indices_to_counts, row_permutations
from evaluation.meta.significance import bootstrap_asl, discriminative_power, run_pairs, tukey_asl


# FIXTURES =====================================================================================
def bootstrap_asl_slow(z: np.ndarray, idx: np.ndarray, tol: float = 1e-12) -> float:
    """docs/metrics.md#paired-bootstrap written out: one resample at a time, straight from the index vectors."""
    n = z.size
    z_bar, s = z.mean(), z.std(ddof=1)
    if s <= tol:
        t0 = 0.0 if abs(z_bar) <= tol else math.inf
    else:
        t0 = z_bar / (s / math.sqrt(n))
    w = z - z_bar if s > tol else np.zeros(n)
    hits = 0
    for row in idx:
        ws = w[row]
        m, sd = ws.mean(), ws.std(ddof=1)
        if sd <= 1e-9 * max(abs(m), 1e-300) or sd == 0:
            t = 0.0 if abs(m) <= tol else math.inf
        else:
            t = abs(m / (sd / math.sqrt(n)))
        hits += t >= abs(t0) - tol
    return hits / len(idx)


def cube(values: np.ndarray, measures: int = 1) -> ScoreCube:
    values = np.asarray(values, dtype=float).reshape(measures, *np.shape(values)[-2:])
    n, m = values.shape[1:]
    return ScoreCube(values, tuple(f"M{g}" for g in range(measures)), tuple(str(t) for t in range(n)), tuple(f"r{j}" for j in range(m)))


ALL_27 = np.array(list(itertools.product(range(3), repeat=3)))
TUKEY_X = np.array([[0.9, 0.5, 0.1], [0.8, 0.4, 0.3]])
ALL_36 = np.array([[p1, p2] for p1 in itertools.permutations(range(3)) for p2 in itertools.permutations(range(3))])


# TESTS: exact enumerations ====================================================================
def test_bootstrap_exact_enumeration_default_is_the_exact_arithmetic_reading() -> None:
    """docs/metrics.md#paired-bootstrap exact check by default (``tol=1e-12``): 14 of 27, ASL 0.5185, not the printed 0.5556.

    Why we deviate from the printed value: t0 = 0.866025 and, in exact arithmetic,
    w = z - mean(z) = (0, 0.2, -0.2). The resample drawing topic 1 three times is all zeros, so the
    zero-spread rule of docs/metrics.md#paired-bootstrap gives it t* = 0 (it does not reach t0); 14 resamples do. A naive
    count of 15 takes that resample as t* = inf because 0.1 - mean(z) = -1.4e-17 in floating point, noise
    that the 1e-12 tolerance is meant to absorb (docs/meta.md, "Where the sources are silent").
    """
    z = np.array([[0.1, 0.3, -0.1]])
    asl, _ = bootstrap_asl(z, indices_to_counts(ALL_27, 3))
    assert asl[0] * 27 == pytest.approx(14)
    assert round(float(asl[0]), 4) == 0.5185
    assert bootstrap_asl_slow(z[0], ALL_27) == pytest.approx(14 / 27)
    all_first = indices_to_counts(np.zeros((1, 3), dtype=int), 3)  # topic 1 drawn three times
    assert bootstrap_asl(z, all_first)[0][0] == 0.0  # t* = 0 < t0


def test_bootstrap_exact_enumeration_reproduces_the_naive_count_with_tol_0() -> None:
    """The commonly printed figure is 15/27 = 0.5556: floating 0.1 - mean(z) = -1.4e-17 read as a non-zero mean."""
    z = np.array([[0.1, 0.3, -0.1]])
    assert z[0, 0] - z[0].mean() != 0.0
    asl, _ = bootstrap_asl(z, indices_to_counts(ALL_27, 3), tol=0.0)
    assert asl[0] * 27 == pytest.approx(15)
    assert round(float(asl[0]), 4) == 0.5556
    assert round(float(np.mean(z) / (np.std(z, ddof=1) / math.sqrt(3))), 6) == 0.866025
    all_first = indices_to_counts(np.zeros((1, 3), dtype=int), 3)
    assert bootstrap_asl(z, all_first, tol=0.0)[0][0] == 1.0  # t* = inf >= t0: the 15th


def test_tukey_exact_enumeration() -> None:
    asl, d = tukey_asl(TUKEY_X, ALL_36)
    assert asl[0, 1] * 36 == pytest.approx(24)
    assert asl[0, 2] * 36 == pytest.approx(6)
    assert asl[1, 2] * 36 == pytest.approx(30)
    assert np.allclose(asl, asl.T) and np.all(np.diag(asl) == 1)
    assert np.all(np.diff(d) >= 0)


def test_tukey_needs_the_tolerance() -> None:
    """Without the 1e-12 tolerance floating noise changes the counts (docs/metrics.md#randomised-tukey-hsd)."""
    permuted = TUKEY_X[np.arange(2)[None, :, None], ALL_36].mean(axis=1)
    d = permuted.max(axis=1) - permuted.min(axis=1)
    means = TUKEY_X.mean(axis=0)
    strict = [(d >= abs(means[j] - means[k])).sum() for j, k in ((0, 1), (0, 2), (1, 2))]
    assert strict != [24, 6, 30]


# TESTS: against the slow reference ============================================================
@pytest.mark.parametrize("seed", range(4))
def test_vectorised_bootstrap_matches_slow_reference(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n, B = 12, 200
    z = np.round(rng.normal(0.02, 0.1, size=(6, n)), 2)
    z[0] = 0.0  # identical runs
    z[1] = 0.05  # constant difference
    z[2, :9] = 0.0  # mostly tied topics: many zero-spread resamples
    idx = rng.integers(0, n, size=(B, n))
    asl, delta = bootstrap_asl(z, indices_to_counts(idx, n))
    expected = [bootstrap_asl_slow(row, idx) for row in z]
    np.testing.assert_allclose(asl, expected)
    assert asl[0] == 1.0 and asl[1] == 0.0
    assert np.isnan(bootstrap_asl(z[:, :1], np.ones((3, 1)))[0]).all()


def test_required_difference_is_the_alpha_quantile() -> None:
    rng = np.random.default_rng(5)
    n, B = 20, 400
    z = rng.normal(0.0, 0.1, size=(1, n))
    idx = rng.integers(0, n, size=(B, n))
    _, delta = bootstrap_asl(z, indices_to_counts(idx, n), alpha=0.05)
    w = z[0] - z[0].mean()
    ws = w[idx]
    t = np.sort(np.abs(ws.mean(1) / (ws.std(1, ddof=1) / math.sqrt(n))))[::-1]
    assert delta[0] == pytest.approx(t[math.ceil(B * 0.05) - 1] * z[0].std(ddof=1) / math.sqrt(n))


# TESTS: discriminative power ==================================================================
def test_discriminative_power_is_deterministic_and_shares_resamples() -> None:
    rng = np.random.default_rng(0)
    values = rng.random((3, 15, 5))
    values[1] = values[0] * 2  # a rescaled copy: same t statistics on the same resamples
    c = cube(values, measures=3)
    one = discriminative_power(c, B=300, rng=9)
    two = discriminative_power(c, B=300, rng=9)
    assert one.summary.equals(two.summary) and one.pairs.equals(two.pairs)
    assert one.seed == 9 and set(one.summary["seed"]) == {9}
    asl = one.pairs.pivot_table(index=["run_a", "run_b"], columns="measure", values="asl")
    np.testing.assert_allclose(asl["M0"], asl["M1"])
    assert len(one.pairs) == 3 * 10 and set(one.summary["pairs"]) == {10}
    assert one.summary["power"].tolist() == (one.summary["significant"] / 10).tolist()


def test_discriminative_power_per_run_sums_equal_the_per_pair_products() -> None:
    """discriminative_power gets resample sums as differences of per-run sums; the ASLs and required
    differences equal bootstrap_asl's own per-pair matrix products, flat pairs and ties included."""
    rng = np.random.default_rng(3)
    values = np.round(rng.random((4, 20, 6)), 2)
    values[:, :, 5] = values[:, :, 4]  # identical runs: s = 0, t0 = 0
    values[:, :, 3] = values[:, :, 2] + 0.25  # constant shift: s = 0, t0 = inf
    c = cube(values, measures=4)
    result = discriminative_power(c, B=400, rng=11)
    a, b = run_pairs(6)
    z = (values[:, :, b] - values[:, :, a]).transpose(0, 2, 1).reshape(-1, 20)
    counts = bootstrap_counts(np.random.default_rng(11), 20, 400)
    asl, delta = bootstrap_asl(z, counts)
    np.testing.assert_array_equal(result.pairs["asl"].to_numpy(), asl)
    np.testing.assert_allclose(result.summary["delta_required"], np.nanmax(delta.reshape(4, -1), axis=1), rtol=1e-12)


def test_tukey_hsd_is_deterministic_for_a_seed() -> None:
    """Same seed: identical tables, and exactly the ASLs of the permutations ``default_rng(seed)``
    draws; another seed draws other permutations."""
    values = np.round(np.random.default_rng(4).random((2, 12, 5)), 1)  # coarse: ties across runs
    c = cube(values, measures=2)
    one = discriminative_power(c, test="tukey", B=250, rng=31)
    two = discriminative_power(c, test="tukey", B=250, rng=31)
    pd.testing.assert_frame_equal(one.summary, two.summary)
    pd.testing.assert_frame_equal(one.pairs, two.pairs)
    assert one.seed == 31 and set(one.summary["seed"]) == {31} and set(one.summary["test"]) == {"tukey"}
    perms = row_permutations(np.random.default_rng(31), 250, 12, 5)
    a, b = run_pairs(5)
    for g in range(2):
        asl, d = tukey_asl(values[g], perms)
        np.testing.assert_array_equal(one.pairs[one.pairs["measure"] == f"M{g}"]["asl"], asl[a, b])
        assert one.summary["delta_required"].iloc[g] == d[250 - math.ceil(250 * 0.05)]
    other = discriminative_power(c, test="tukey", B=250, rng=32)
    assert not np.array_equal(other.pairs["asl"], one.pairs["asl"])


@pytest.mark.parametrize("test", ["bootstrap", "tukey"])
def test_clear_differences_are_significant(test: str) -> None:
    rng = np.random.default_rng(3)
    values = rng.normal(0.5, 0.05, size=(30, 3)) + np.array([0.0, 0.0, 0.3])
    result = discriminative_power(cube(values), test=test, B=500, rng=1)
    pairs = result.pairs.set_index(["run_a", "run_b"])
    assert pairs.loc[("r0", "r2"), "asl"] < 0.01 and pairs.loc[("r1", "r2"), "asl"] < 0.01
    assert pairs.loc[("r0", "r2"), "diff"] == pytest.approx(values[:, 2].mean() - values[:, 0].mean())
    assert result.summary["delta_required"].iloc[0] > 0
    assert len(result.asl_curves()["M0"]) == 3


def test_tukey_required_difference_is_the_alpha_quantile_of_the_ranges() -> None:
    rng = np.random.default_rng(8)
    values = rng.random((10, 4))
    c = cube(values)
    result = discriminative_power(c, test="tukey", B=200, alpha=0.05, rng=2)
    perms = row_permutations(np.random.default_rng(2), 200, 10, 4)
    _, d = tukey_asl(values, perms)
    assert result.summary["delta_required"].iloc[0] == pytest.approx(d[200 - 10])


def test_bad_arguments_and_degenerate_inputs() -> None:
    c = cube(np.random.default_rng(0).random((5, 3)))
    with pytest.raises(ValueError, match="test must be"):
        discriminative_power(c, test="anova")
    with pytest.raises(ValueError, match="B must be"):
        discriminative_power(c, B=0)
    with pytest.raises(ValueError, match="alpha"):
        discriminative_power(c, alpha=1.5)
    with pytest.raises(EvaluationError, match="at least 2 runs"):
        discriminative_power(cube(np.ones((5, 1))))
    with pytest.raises(EvaluationError, match="at least 2 topics"):
        discriminative_power(cube(np.ones((1, 3))))


# TESTS: statistical behaviour under the null ==================================================
def test_paired_bootstrap_rejects_at_about_alpha_under_the_null() -> None:
    """2000 null run pairs (i.i.d. differences, 25 topics) over 20 seeds: rate ~ 0.05."""
    rates = []
    for seed in range(20):
        rng = np.random.default_rng(1000 + seed)
        z = rng.normal(0.0, 0.1, size=(100, 25))
        asl, _ = bootstrap_asl(z, bootstrap_counts(rng, 25, 1000))
        rates.append(np.mean(asl < 0.05))
    assert 0.035 <= np.mean(rates) <= 0.075


def test_tukey_hsd_family_wise_error_is_about_alpha_under_the_null() -> None:
    """Randomised Tukey HSD controls the family-wise error: P(any pair significant) ~ alpha."""
    any_significant = []
    per_pair = []
    for seed in range(300):
        rng = np.random.default_rng(5000 + seed)
        x = rng.normal(0.5, 0.1, size=(20, 5)) + rng.normal(0, 0.1, size=(20, 1))  # topic effects only
        asl, _ = tukey_asl(x, row_permutations(rng, 400, 20, 5))
        a, b = run_pairs(5)
        any_significant.append((asl[a, b] < 0.05).any())
        per_pair.append((asl[a, b] < 0.05).mean())
    assert 0.02 <= np.mean(any_significant) <= 0.09
    assert np.mean(per_pair) < np.mean(any_significant)  # more conservative than pairwise tests
