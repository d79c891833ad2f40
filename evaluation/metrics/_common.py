"""Building blocks shared by the metric families: discounts, safe division, cumulative sums,
and the memoised per-rank arrays of a :class:`~evaluation.arrays.Ranking`."""
from __future__ import annotations

import numpy as np

from evaluation._types import FloatArray
from evaluation.arrays import Ranking

RANK_AXIS = 2  # (R, T, K[, I])


def ranks(length: int) -> FloatArray:
    """``1, 2, ..., length`` as float64."""
    return np.arange(1, length + 1, dtype=np.float64)


def discount(kind: str, length: int, beta: float = 0.8) -> FloatArray:
    """Per-rank discounts: ``log`` = 1/log2(r+1), ``rr`` = 1/r, ``rbp`` = beta^(r-1)."""
    r = ranks(length)
    if kind == "log":
        return 1.0 / np.log2(r + 1.0)
    if kind == "rr":
        return 1.0 / r
    if kind == "rbp":
        return beta ** (r - 1.0)
    raise ValueError(f"unknown discount {kind!r}")


def safe_divide(num: np.ndarray, den: np.ndarray) -> FloatArray:
    """``num / den`` with 0 where ``den == 0`` (an ideal of zero means nothing to find)."""
    num, den = np.broadcast_arrays(np.asarray(num, dtype=np.float64), np.asarray(den, dtype=np.float64))
    return np.divide(num, den, out=np.zeros(num.shape), where=den != 0)


def at(cumulative: np.ndarray, k: int, axis: int = RANK_AXIS) -> np.ndarray:
    """Value of a cumulative array at cutoff ``k`` (1-based) along ``axis``; 0 for ``k = 0``."""
    if k <= 0:
        shape = list(cumulative.shape)
        del shape[axis]
        return np.zeros(shape)
    k = min(k, cumulative.shape[axis])
    return np.take(cumulative, k - 1, axis=axis)


def exclusive_cumsum(x: np.ndarray, axis: int = RANK_AXIS) -> np.ndarray:
    """Sum of the entries strictly before each position along ``axis``."""
    c = np.cumsum(x, axis=axis)
    return c - x


def exclusive_cumprod(x: np.ndarray, axis: int = RANK_AXIS) -> np.ndarray:
    """Product of the entries strictly before each position along ``axis`` (1 at the first)."""
    c = np.cumprod(x, axis=axis)
    head = np.ones_like(np.take(c, [0], axis=axis))
    return np.concatenate([head, np.delete(c, -1, axis=axis)], axis=axis)


def cutoff_or_depth(ranking: Ranking, k: int | None) -> int:
    return ranking.depth if k is None else k


# ------------------------------------------------------------------ memoised blocks
def binary(ranking: Ranking, rel_level: int = 1) -> np.ndarray:
    """``J[r, t, k, i] = 1[g >= rel_level]`` as float64."""
    return ranking.memo(("J", rel_level), lambda: (ranking.grades >= rel_level).astype(np.float64))


def seen_before(ranking: Ranking, rel_level: int = 1) -> np.ndarray:
    """``c_i(r)``: documents relevant to ``i`` strictly above rank ``r`` (spec §2 symbols)."""
    return ranking.memo(("c", rel_level), lambda: exclusive_cumsum(binary(ranking, rel_level)))


def first_relevant_rank(ranking: Ranking) -> np.ndarray:
    """0-based rank of the first document relevant to each intent, ``depth`` when none: ``(R, T, I)``."""

    def build() -> np.ndarray:
        J = binary(ranking) > 0
        first = np.argmax(J, axis=RANK_AXIS)
        return np.where(J.any(axis=RANK_AXIS), first, ranking.depth)

    return ranking.memo(("first_rel",), build)


def global_gain(ranking: Ranking) -> np.ndarray:
    """``GG(r) = sum_i w_i g_i(d_r)``: ``(R, T, K)`` (spec §1.2)."""
    return ranking.memo(("GG",), lambda: ranking.table.doc_global_gain[ranking.rows])


def din_gain(ranking: Ranking) -> np.ndarray:
    """DIN gain ``DG(r)`` (spec §2.5): navigational intents earn only at their first relevant doc."""

    def build() -> np.ndarray:
        g = ranking.grades
        found_before = exclusive_cumsum((g > 0).astype(np.int32))
        counts = ~ranking.table.nav[None, :, None, :] | (found_before == 0)
        return (g * counts * ranking.table.W[None, :, None, :]).sum(axis=3)

    return ranking.memo(("DG",), build)


def cumulative(ranking: Ranking, key: str, per_rank: np.ndarray) -> np.ndarray:
    """Memoised cumulative sum along ranks of an already-memoised per-rank array."""
    return ranking.memo(("cum", key), lambda: np.cumsum(per_rank, axis=RANK_AXIS))


def ntcir_round(x: np.ndarray) -> np.ndarray:
    """Round like C ``printf("%.4f")`` (correct rounding of the binary double; spec §1.7)."""
    flat = [float("%.4f" % v) if np.isfinite(v) else v for v in np.asarray(x, dtype=np.float64).ravel()]
    return np.asarray(flat, dtype=np.float64).reshape(np.shape(x))
