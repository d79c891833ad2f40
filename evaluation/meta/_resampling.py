"""Random-number plumbing shared by every stochastic meta-evaluation (docs/metrics.md#meta-evaluation preamble).

Every public stochastic function accepts ``rng: np.random.Generator | int | None``: an ``int`` is a
seed for :func:`numpy.random.default_rng`; ``None`` draws a fresh seed from the operating system
*and records it*, so any result can be reproduced from its ``seed`` field; a ``Generator`` is used
as given (its seed is then unknown and recorded as ``None``).
"""

from __future__ import annotations

import numpy as np

from evaluation._types import FloatArray, IntArray

RngLike = np.random.Generator | int | None


def resolve_rng(rng: RngLike) -> tuple[np.random.Generator, int | None]:
    """Return ``(generator, seed)``; ``seed`` is None only when a Generator was passed in."""
    if isinstance(rng, np.random.Generator):
        return rng, None
    if rng is None:
        seed = int(np.random.SeedSequence().entropy % (2**63))
    elif isinstance(rng, (int, np.integer)) and not isinstance(rng, bool):
        seed = int(rng)
        if seed < 0:
            raise ValueError(f"seed must be non-negative, got {seed}")
    else:
        raise TypeError(f"rng must be a numpy Generator, an int seed or None, got {type(rng).__name__}")
    return np.random.default_rng(seed), seed


def bootstrap_counts(rng: np.random.Generator, n: int, B: int) -> IntArray:
    """Multiplicities of ``B`` bootstrap resamples of ``n`` items, shape ``(B, n)``.

    Row ``b`` counts how often each item occurs among ``n`` indices drawn uniformly with
    replacement. Sums and sums of squares over a resample are then matrix products (one set of
    resamples serves every pair and metric: common random numbers, docs/metrics.md#paired-bootstrap).
    """
    if n < 1 or B < 1:
        raise ValueError(f"need n >= 1 and B >= 1, got n={n}, B={B}")
    idx = rng.integers(0, n, size=(B, n))
    return indices_to_counts(idx, n)


def indices_to_counts(idx: IntArray, n: int) -> IntArray:
    """Turn index vectors ``(B, k)`` with values in ``[0, n)`` into multiplicities ``(B, n)``."""
    idx = np.asarray(idx, dtype=np.int64)
    B = idx.shape[0]
    flat = (idx + n * np.arange(B, dtype=np.int64)[:, None]).ravel()
    return np.bincount(flat, minlength=B * n).reshape(B, n)


def row_permutations(rng: np.random.Generator, B: int, n: int, m: int) -> IntArray:
    """``B`` independent uniform permutations of ``m`` items for each of ``n`` rows, ``(B, n, m)``."""
    if B < 1 or n < 1 or m < 1:
        raise ValueError(f"need B, n, m >= 1, got B={B}, n={n}, m={m}")
    return np.argsort(rng.random((B, n, m)), axis=-1)


def percentile_interval(samples: FloatArray, level: float = 0.95, axis: int = 0) -> tuple[FloatArray, FloatArray]:
    """Percentile interval of bootstrap ``samples`` along ``axis``, ignoring NaN resamples.

    Returns NaN where every resample is NaN.
    """
    if not 0 < level < 1:
        raise ValueError(f"confidence level must be in (0, 1), got {level}")
    tail = (1 - level) / 2 * 100
    samples = np.asarray(samples, dtype=np.float64)
    missing = np.isnan(samples)
    if not missing.any():  # the usual case: one vectorised call (nanpercentile loops over the columns)
        low, high = np.percentile(samples, [tail, 100 - tail], axis=axis)
        return low, high
    has = ~missing.all(axis=axis)
    low = np.full(has.shape, np.nan)
    high = low.copy()
    if has.any():
        moved = np.moveaxis(samples, axis, -1)[has]
        low[has] = np.nanpercentile(moved, tail, axis=-1)
        high[has] = np.nanpercentile(moved, 100 - tail, axis=-1)
    return low, high
