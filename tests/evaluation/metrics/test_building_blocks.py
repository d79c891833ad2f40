"""Shared building blocks: ``scan`` is ``ufunc.accumulate`` bit for bit, in both of its strategies."""

from __future__ import annotations

import numpy as np
import pytest

from evaluation.metrics._common import scan


@pytest.mark.parametrize(
    "shape", [(20, 100, 50), (3, 4, 20, 6), (40, 2), (1, 5), (0, 3)], ids=["slices", "intent-major", "few-lines", "one", "empty"]
)
@pytest.mark.parametrize("ufunc", [np.add, np.multiply, np.maximum])
def test_scan_equals_accumulate_bit_for_bit(shape: tuple[int, ...], ufunc: np.ufunc) -> None:
    rng = np.random.default_rng(7)
    x = rng.random(shape) * 1.7
    axis = 1 if len(shape) == 4 else 0
    np.testing.assert_array_equal(scan(ufunc, x, axis), ufunc.accumulate(x, axis=axis))
    ints = rng.integers(0, 5, shape).astype(np.int32)
    np.testing.assert_array_equal(scan(ufunc, ints, axis), ufunc.accumulate(ints, axis=axis))


@pytest.mark.parametrize("shape", [(20, 100, 50), (6, 3)])
@pytest.mark.parametrize("ufunc", [np.add, np.multiply])
def test_exclusive_scan_is_the_shifted_accumulate(shape: tuple[int, ...], ufunc: np.ufunc) -> None:
    x = np.random.default_rng(3).random(shape)
    expected = np.full(shape, float(ufunc.identity))
    expected[1:] = ufunc.accumulate(x[:-1], axis=0)
    np.testing.assert_array_equal(scan(ufunc, x, 0, exclusive=True), expected)
