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


@pytest.mark.parametrize("graded", [False, True])
@pytest.mark.parametrize("alpha", [0.0, 0.5, 1.0])
def test_single_intent_greedy_gains_equal_the_search(alpha: float, graded: bool) -> None:
    """Topics with one relevant intent skip the greedy search (closed form): same gains, bit for bit."""
    from evaluation import load_collection
    from evaluation.arrays import table_for
    from evaluation.metrics.novelty import _greedy_search, _single_intent_gains
    from tests.evaluation.golden import REFERENCE

    table = table_for(load_collection(REFERENCE / "trec2014" / "qrels.diversity.tsv", REFERENCE / "trec2014" / "intent_probs_din.tsv"))
    single = np.flatnonzero(table.n_rel_intents == 1)
    assert single.size > 5
    steps = int(table.n_rel_docs[single].max()) + 3  # past the last relevant document too
    powers = (1.0 - alpha) ** np.arange(steps + 1, dtype=np.float64)
    closed = _single_intent_gains(table, single, powers[:steps], graded)
    np.testing.assert_array_equal(closed, _greedy_search(table, single, powers, steps, graded))
