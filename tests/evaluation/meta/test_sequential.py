"""Nominal levels for a fixed number of looks (evaluation.meta.sequential)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import norm

from evaluation.meta import sequential


@pytest.mark.parametrize(("looks", "expected"), [(2, 2.178), (5, 2.413), (10, 2.555), (20, 2.672)])
def test_pocock_constants_match_the_published_table(looks: int, expected: float) -> None:
    """Two-sided alpha 0.05 (Jennison & Turnbull 2000, Table 2.1; Pocock 1977)."""
    assert sequential.pocock_critical(0.05, looks, two_sided=True) == pytest.approx(expected, abs=2e-3)


def test_one_look_is_the_plain_test() -> None:
    assert sequential.crossing_probability(1.645, 1) == pytest.approx(norm.sf(1.645))
    assert sequential.nominal_alpha(0.05, 1) == pytest.approx(0.05)
    assert sequential.nominal_alpha(0.05, 1, two_sided=True) == pytest.approx(0.05)


def test_the_boundary_keeps_the_family_wise_level_of_a_simulated_cumulative_sum() -> None:
    """200,000 random walks with 20 looks: the share crossing Pocock's one-sided boundary anywhere is alpha (within 3
    standard errors), Bonferroni's is below it, and a look at Pocock's level alone is more than alpha / 20."""
    rng = np.random.default_rng(7)
    looks, alpha = 20, 0.05
    z = rng.standard_normal((200_000, looks)).cumsum(axis=1) / np.sqrt(np.arange(1, looks + 1))
    pocock = sequential.nominal_alpha(alpha, looks)
    crossed = (z >= norm.isf(pocock)).any(axis=1).mean()
    assert abs(crossed - alpha) < 3 * np.sqrt(alpha * (1 - alpha) / z.shape[0])
    assert (z >= norm.isf(sequential.nominal_alpha(alpha, looks, "bonferroni"))).any(axis=1).mean() < alpha - 0.01
    assert pocock > 2 * alpha / looks
    two = sequential.nominal_alpha(alpha, looks, two_sided=True)
    assert abs((np.abs(z) >= norm.isf(two / 2)).any(axis=1).mean() - alpha) < 3 * np.sqrt(alpha * (1 - alpha) / z.shape[0])


def test_bad_input_is_refused() -> None:
    assert sequential.nominal_alpha(0.05, 20, "bonferroni") == pytest.approx(0.0025)
    for args in ((0.05, 0), (1.5, 3), (0.0, 3)):
        with pytest.raises(ValueError):
            sequential.nominal_alpha(*args)
    with pytest.raises(ValueError, match="boundary"):
        sequential.nominal_alpha(0.05, 3, "obrien")
    with pytest.raises(ValueError):
        sequential.crossing_probability(2.0, 0)
