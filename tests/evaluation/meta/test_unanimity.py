"""Metric unanimity MU (docs/metrics.md#metric-unanimity; Amigó et al. 2018)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from evaluation.exceptions import EvaluationError
from evaluation.meta._matrix import ScoreCube
from evaluation.meta.unanimity import metric_unanimity

EXAMPLE = ScoreCube(np.array([[[1.0, 0.5, 0.2]], [[0.8, 0.3, 0.4]], [[1.0, 0.2, 0.5]]]), ("m1", "m2", "m3"), ("q",), ("1", "2", "3"))


def test_worked_example_and_asymmetry() -> None:
    table = metric_unanimity(EXAMPLE).set_index("measure")
    assert table.loc["m1", "MU"] == pytest.approx(math.log2(4 / 3))
    assert round(table.loc["m1", "MU"], 3) == 0.415
    assert table.loc["m2", "MU"] == pytest.approx(1.0) and table.loc["m3", "MU"] == pytest.approx(1.0)
    assert table.loc["m1", "P_m"] == 0.5 and table.loc["m1", "pairs"] == 6
    assert table.loc["m1", "P_M"] == pytest.approx(0.5) and table.loc["m1", "P_mM"] == pytest.approx(2 / 6)


def test_ties_add_one_half_and_strict_option() -> None:
    tied = ScoreCube(np.array([[[0.5, 0.5, 0.1]], [[0.5, 0.5, 0.2]]]), ("a", "b"), ("q",), ("1", "2", "3"))
    loose = metric_unanimity(tied).set_index("measure")
    strict = metric_unanimity(tied, strict=True).set_index("measure")
    assert loose.loc["a", "P_m"] == pytest.approx(0.5)
    # >=: M prefers (1,2), (2,1), (1,3), (2,3) -> P(M) = 4/6; joint = 0.5 + 0.5 + 1 + 1 = 3 -> 3/6
    assert loose.loc["a", "P_M"] == pytest.approx(4 / 6) and loose.loc["a", "P_mM"] == pytest.approx(3 / 6)
    assert strict.loc["a", "P_M"] == pytest.approx(2 / 6)


def test_undefined_cases() -> None:
    opposite = ScoreCube(np.array([[[1.0, 0.0]], [[0.0, 1.0]]]), ("a", "b"), ("q",), ("1", "2"))
    table = metric_unanimity(opposite).set_index("measure")
    assert table.loc["a", "MU"] == -math.inf  # never agrees with the other metric
    with pytest.raises(EvaluationError, match="at least 2 measures"):
        metric_unanimity(EXAMPLE, ["m1"])
