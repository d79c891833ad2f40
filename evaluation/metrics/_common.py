"""Building blocks shared by the metric families: discounts, safe division, cumulative sums,
and the memoised per-rank arrays of a :class:`~evaluation.arrays.Ranking`."""

from __future__ import annotations

from collections.abc import Callable, Hashable

import numpy as np

from evaluation._types import FloatArray
from evaluation.arrays import Ranking, TopicTable

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
    """Sum of the entries strictly before each position along ``axis`` (0 at the first).

    Computed as a shifted cumulative sum, never ``cumsum - x``: the difference is not exactly the
    sum of the earlier entries in floating point (a tank filled to exactly ``H`` must read full).
    """
    x = np.moveaxis(x, axis, -1)
    out = np.zeros(x.shape, dtype=np.result_type(x.dtype, np.int64) if x.dtype.kind in "biu" else x.dtype)
    np.cumsum(x[..., :-1], axis=-1, out=out[..., 1:])
    return np.moveaxis(out, -1, axis)


def exclusive_cumprod(x: np.ndarray, axis: int = RANK_AXIS) -> np.ndarray:
    """Product of the entries strictly before each position along ``axis`` (1 at the first)."""
    x = np.moveaxis(x, axis, -1)
    out = np.empty(x.shape)
    out[..., 0] = 1.0
    np.cumprod(x[..., :-1], axis=-1, out=out[..., 1:])
    return np.moveaxis(out, -1, axis)


def cutoff_or_depth(ranking: Ranking, k: int | None) -> int:
    return ranking.depth if k is None else k


# ------------------------------------------------------------------ memoised blocks
def per_doc(ranking: Ranking, key: Hashable, build: Callable[[TopicTable], np.ndarray]) -> np.ndarray:
    """Gather a per-document table ``(n_docs + 2, ...)`` (memoised on the topic table) into ranks.

    Values that depend on the document alone (binary relevance, relevance probabilities, ...) are
    computed once per judged document and then fancy-indexed to ``(R, T, K, ...)``.
    """
    table = ranking.table
    values = table.memo(("per_doc", key), lambda: build(table))
    return ranking.memo(("per_doc", key), lambda: values[ranking.rows])


def topic_of_row(table: TopicTable) -> np.ndarray:
    """Topic index of every document row (sentinel rows map to topic 0, their grades are 0)."""
    return table.topic_of_row


def binary(ranking: Ranking, rel_level: int = 1) -> np.ndarray:
    """``J[r, t, k, i] = 1[g >= rel_level]`` as float64."""
    return per_doc(ranking, ("J", rel_level), lambda table: (table.grades >= rel_level).astype(np.float64))


def seen_before(ranking: Ranking, rel_level: int = 1) -> np.ndarray:
    """``c_i(r)``: documents relevant to ``i`` strictly above rank ``r`` (int32; spec §2 symbols)."""

    def build() -> np.ndarray:
        hits = (ranking.grades >= rel_level).astype(np.int32)
        return np.cumsum(hits, axis=RANK_AXIS, dtype=np.int32) - hits

    return ranking.memo(("c", rel_level), build)


def novelty_decay(ranking: Ranking, alpha: float) -> np.ndarray:
    """``(1 - alpha)^{c_i(r)}`` via a lookup table (exact powers, no elementwise ``pow``)."""
    powers = (1.0 - alpha) ** np.arange(ranking.depth + 1, dtype=np.float64)
    return ranking.memo(("decay", alpha), lambda: powers[seen_before(ranking)])


def first_relevant_rank(ranking: Ranking) -> np.ndarray:
    """0-based rank of the first document relevant to each intent, ``depth`` when none: ``(R, T, I)``."""

    def build() -> np.ndarray:
        J = ranking.grades >= 1
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
        return np.einsum("rtki,rtki,ti->rtk", g, counts, ranking.table.W, optimize=False)

    return ranking.memo(("DG",), build)


def cumulative(ranking: Ranking, key: str, per_rank: np.ndarray) -> np.ndarray:
    """Memoised cumulative sum along ranks of an already-memoised per-rank array."""
    return ranking.memo(("cum", key), lambda: np.cumsum(per_rank, axis=RANK_AXIS))


def ntcir_round(x: np.ndarray) -> np.ndarray:
    """Round like C ``printf("%.4f")`` (correct rounding of the binary double; spec §1.7)."""
    flat = [float("%.4f" % v) if np.isfinite(v) else v for v in np.asarray(x, dtype=np.float64).ravel()]
    return np.asarray(flat, dtype=np.float64).reshape(np.shape(x))
