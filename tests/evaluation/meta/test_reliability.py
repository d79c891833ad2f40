"""Krippendorff's alpha and direction agreement (docs/metrics.md#inter-annotator-agreement).

The ``krippendorff`` package is the test-only oracle: on generated reliability data (missing
answers, unused scale points, units with a single answer) both levels must match it to 1e-10.
"""

from __future__ import annotations

import math

import krippendorff
import numpy as np
import pytest

from evaluation.meta.reliability import PREFERENCE_DOMAIN, direction_agreement, krippendorff_alpha


def units_of(matrix: np.ndarray) -> list[list[float]]:
    """Coders x units matrix with NaN for missing -> the values of each unit."""
    return [[v for v in matrix[:, j] if not np.isnan(v)] for j in range(matrix.shape[1])]


def generated(seed: int, coders: int, units: int, missing: float, used: list[int]) -> np.ndarray:
    rng = np.random.default_rng(seed)
    truth = rng.choice(used, size=units)
    noise = rng.integers(-1, 2, size=(coders, units))
    data = np.clip(truth[None, :] + noise, min(used), max(used)).astype(float)
    data[~np.isin(data, used)] = used[0]
    data[rng.random((coders, units)) < missing] = np.nan
    return data


CASES = [
    (1, 3, 40, 0.0, list(range(-4, 5))),
    (2, 5, 60, 0.4, list(range(-4, 5))),
    (3, 8, 25, 0.7, [-3, -1, 0, 2, 4]),  # unused scale points
    (4, 4, 30, 0.3, [-2, 2]),  # two of nine values used
    (5, 6, 50, 0.5, [0, 1, 2, 3, 4]),  # one side of the scale only
]


@pytest.mark.parametrize("level", ["interval", "ordinal"])
@pytest.mark.parametrize("case", CASES, ids=[f"seed{c[0]}" for c in CASES])
def test_alpha_equals_the_krippendorff_package(case, level: str) -> None:
    data = generated(*case)
    ours = krippendorff_alpha(units_of(data), level=level, domain=PREFERENCE_DOMAIN)
    oracle = krippendorff.alpha(reliability_data=data, value_domain=list(PREFERENCE_DOMAIN), level_of_measurement=level)
    assert ours == pytest.approx(float(oracle), abs=1e-10)


def test_interval_alpha_does_not_depend_on_unused_scale_points() -> None:
    data = generated(3, 8, 25, 0.7, [-3, -1, 0, 2, 4])
    units = units_of(data)
    assert krippendorff_alpha(units, domain=range(-4, 5)) == pytest.approx(krippendorff_alpha(units, domain=range(-10, 11)))


def test_known_values_of_krippendorff_2011() -> None:
    # Krippendorff (2011), section C: 4 coders, 12 units, values 1..5 with missing data; interval alpha 0.849.
    nan = np.nan
    data = np.array(
        [
            [1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
            [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
            [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
            [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan],
        ]
    )
    assert round(krippendorff_alpha(units_of(data), level="interval", domain=range(1, 6)), 3) == 0.849
    assert round(krippendorff_alpha(units_of(data), level="ordinal", domain=range(1, 6)), 3) == 0.815


def test_perfect_agreement_is_one_and_undefined_cases_are_nan() -> None:
    assert krippendorff_alpha([[1, 1], [-2, -2, -2], [4, 4]]) == 1.0
    assert math.isnan(krippendorff_alpha([[2, 2], [2, 2]]))  # no variation at all: D_e = 0
    assert math.isnan(krippendorff_alpha([[1], [3]]))  # no unit with two answers
    assert math.isnan(krippendorff_alpha([]))


def test_bad_input_is_refused() -> None:
    with pytest.raises(ValueError, match="not in the value domain"):
        krippendorff_alpha([[1, 5]])
    with pytest.raises(ValueError, match="level must be"):
        krippendorff_alpha([[1, 2]], level="nominal")
    with pytest.raises(ValueError, match="increasing order"):
        krippendorff_alpha([[1, 2]], domain=[2, 1])


def test_direction_agreement_counts_pairs_within_units() -> None:
    # unit 1: signs +,+,- -> 1 of 3 pairs agree; unit 2: 0,0 -> 1 of 1; unit 3: one answer, no pair
    share, pairs = direction_agreement([[3, 1, -2], [0, 0], [4]])
    assert pairs == 4
    assert share == pytest.approx(2 / 4)
    share, pairs = direction_agreement([[1]])
    assert pairs == 0 and math.isnan(share)
