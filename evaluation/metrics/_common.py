"""Building blocks shared by the metric families: discounts, safe division, running sums along
ranks, and the memoised per-rank arrays of a :class:`~evaluation.arrays.Ranking`.

Layout (see :mod:`evaluation.arrays`): per-rank arrays ``(K, R, T)``, per-intent per-rank arrays
``(P, K, R)`` over the relevant (topic, intent) pairs; per-(topic, intent) tables enter through
``table.per_pair`` and leave through ``table.topic_sum``.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable

import numpy as np

from evaluation._types import FloatArray
from evaluation.arrays import Ranking, TopicTable

RANK_AXIS = 0  # of per-rank arrays (K, R, T)
TAKE_CELLS = 1 << 15  # positions looked up per np.take call when they must be widened first (a 256 kB temporary)
INTENT_RANK_AXIS = 1  # of per-intent arrays (P, K, R)


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


def along(values: np.ndarray, axis: int, ndim: int) -> np.ndarray:
    """View of the 1-d ``values`` lying along ``axis`` of an ``ndim``-d array (for broadcasting)."""
    shape = [1] * ndim
    shape[axis] = values.size
    return values.reshape(shape)


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


def scan(
    ufunc: np.ufunc, x: np.ndarray, axis: int = RANK_AXIS, *, exclusive: bool = False, in_place: bool = False, out: np.ndarray | None = None
) -> np.ndarray:
    """Running ``ufunc`` (add, multiply, maximum) along ``axis``: ``ufunc.accumulate``, bit for bit.

    ``exclusive`` gives the value strictly before each position (the identity at the first), as a
    shifted scan, never ``cumsum - x``: the difference is not exactly the sum of the earlier
    entries in floating point (a tank filled to exactly ``H`` must read full). ``in_place``
    (inclusive scans only) overwrites ``x``, a temporary of the caller's: no fresh memory; ``out``
    receives the result instead of fresh memory (same shape and dtype as ``x``).

    ``accumulate`` walks every line along ``axis`` separately; when there are many more lines than
    positions (the usual short rank axis over many runs and topics), the same operations in the
    same order run as one whole-slice step per position instead.
    """
    if in_place and exclusive:
        raise ValueError("an exclusive scan cannot run in place")
    result = x if in_place else out if out is not None else np.empty(x.shape, dtype=x.dtype)  # C order in the caller's axes
    x, out = np.moveaxis(x, axis, 0), np.moveaxis(result, axis, 0)
    if exclusive:
        if x.shape[0]:
            out[0] = ufunc.identity
        source, target = x[:-1], out[1:]
    else:
        source, target = x, out
    n = source.shape[0]
    if n and x[0].size >= 16 * n:
        target[0] = source[0]
        for k in range(1, n):
            ufunc(target[k - 1], source[k], out=target[k])
    elif n:
        ufunc.accumulate(source, axis=0, out=target)
    return result


def cascade(ranking: Ranking, p: np.ndarray, divisor: np.ndarray | None = None) -> np.ndarray:
    """``p(r) prod_{j<r} (1 - p(j))`` along the ranks of a per-intent ``p`` ``(P, K, R)``, in place
    (after dividing ``p`` by ``divisor`` when given): the stopping cascade of ERR and RBU."""
    with ranking.scratch() as kept:
        np.subtract(1.0, p, out=kept)
        scan(np.multiply, kept, INTENT_RANK_AXIS, in_place=True)  # prod_{j<=r} (1 - p(j))
        if divisor is not None:
            p /= divisor
        p[:, 1:] *= kept[:, :-1]
    return p


def stop_terms(g: np.ndarray, divisor: np.ndarray, rank_axis: int) -> np.ndarray:
    """``p(r) prod_{k<r} (1 - p(k))`` along ``rank_axis`` with ``p = g / divisor``: the probability that
    a cascade user stops at rank ``r`` (ERR, EBR, iRBU)."""
    p = g / divisor
    before = scan(np.multiply, 1.0 - p, rank_axis, exclusive=True)
    return p * before


def cutoff_or_depth(ranking: Ranking, k: int | None) -> int:
    return ranking.depth if k is None else k


def shown_sum(ranking: Ranking, per_rank: np.ndarray) -> FloatArray:
    """``sum_{r <= min(len, depth)} per_rank[r]`` for every list ``(R, T)`` (``depth = per_rank.size``): a per-rank
    value (a discount) summed over the ranks a document occupies, as ``(present[:depth] * per_rank).sum(axis=0)``
    adds them, bit for bit (rank after rank; a rank without a document adds an exact 0), read from the running
    sum of ``per_rank`` at each list's length instead of a ``(K, R, T)`` product and its sum."""
    running = np.zeros(per_rank.size + 1)
    np.cumsum(per_rank, out=running[1:])
    return running[np.minimum(ranking.lengths, per_rank.size)]


# ------------------------------------------------------------------ memoised blocks
def per_doc(
    ranking: Ranking, key: Hashable, build: Callable[[TopicTable], np.ndarray], depth: int | None = None, *, out: np.ndarray | None = None
) -> np.ndarray:
    """Gather a per-document table at the ranked rows, down to ``depth``.

    ``build(table)`` gives ``(n_docs + 2,)`` values, gathered to ``(K, R, T)``, or ``(n_docs + 2, I)``
    values, gathered to ``(P, K, R)``. Values that depend on the document alone (binary relevance,
    relevance probabilities, ...) are computed once per judged document, memoised for the metric family
    (freed with its blocks: a batch's families need them once); the gathered copy is the caller's (not
    memoised: gathering is cheap, holding every copy is not), written to ``out`` when given (e.g. the
    ranking's scratch buffer: no fresh memory).
    """

    def intent_major() -> np.ndarray:
        values = build(ranking.table)
        return values if values.ndim == 1 else np.ascontiguousarray(values.T)

    values = ranking.memo(("per_doc", key), intent_major)
    if values.ndim == 1:
        return np.take(values, ranking.rows[:depth], mode="clip")  # every cell is a valid position: clip checks nothing
    if out is None and (depth is None or depth >= ranking.depth):
        out = ranking.block()  # a whole per-intent block: one a finished family released, when there is one
    return np.take(values, ranking.pair_cells[:, :depth], out=out, mode="clip")


def top_total(ranking: Ranking, key: Hashable, build: Callable[[TopicTable], np.ndarray], k: int) -> np.ndarray:
    """``sum_{r <= k}`` of a per-document value ``(n_docs + 2,)`` over each list: ``(R, T)``."""
    return per_doc(ranking, key, build, k).sum(axis=0)


def relevant(ranking: Ranking, rel_level: int = 1) -> np.ndarray:
    """``J[p, k, r] = g >= rel_level`` as booleans."""
    return ranking.memo(("J?", rel_level), lambda: ranking.grades >= rel_level, shared=True)


def count_dtype(depth: int) -> np.dtype:
    """The narrowest integer type holding counts up to ``depth`` (a quarter of the memory of int64 on
    usual depths: the per-intent arrays are the engine's largest)."""
    return np.dtype(np.int16 if depth < 2**15 else np.int32 if depth < 2**31 else np.int64)


def relevant_count(ranking: Ranking) -> np.ndarray:
    """``C_i(r)``: documents relevant to ``i`` at or above rank ``r`` (``(P, K, R)``)."""
    return ranking.memo(
        ("C",), lambda: scan(np.add, relevant(ranking).astype(count_dtype(ranking.depth)), INTENT_RANK_AXIS, in_place=True), shared=True
    )


def relevant_position(ranking: Ranking) -> np.ndarray:
    """``J_i(r) C_i(r)``: where the document is relevant to ``i``, how many relevant to ``i`` the list
    holds up to it (1 for the first); 0 elsewhere."""
    return ranking.memo(("J·C",), lambda: relevant_count(ranking) * relevant(ranking), shared=True)


def seen_before(ranking: Ranking) -> np.ndarray:
    """``c_i(r)``: documents relevant to ``i`` strictly above rank ``r`` (docs/metrics.md#metrics symbols)."""
    return ranking.memo(("c",), lambda: relevant_count(ranking) - relevant(ranking), shared=True)


def novelty_decay(ranking: Ranking, alpha: float) -> np.ndarray:
    """``J_i(r) (1 - alpha)^{c_i(r)}``: the novelty discount where the document is relevant to ``i``,
    0 elsewhere (:func:`decayed`), memoised for the metric family that reads it: a family's own block,
    freed with the family's other blocks (several MB each), not kept for the whole evaluation."""
    return ranking.memo(("decay", alpha), lambda: decayed(ranking, alpha))


def decayed(ranking: Ranking, alpha: float) -> np.ndarray:
    """A new ``(P, K, R)`` array (:meth:`~evaluation.arrays.Ranking.block`) of ``J_i(r) (1 - alpha)^{c_i(r)}`` (the caller's to overwrite),
    looked up from exact powers (no elementwise ``pow``)."""
    table = np.concatenate([[0.0], (1.0 - alpha) ** np.arange(ranking.depth, dtype=np.float64)])
    position, out = relevant_position(ranking), ranking.block()
    # positions 0..depth, all valid (clip checks nothing); a few pairs at a time, as np.take copies the
    # narrow positions into platform integers first: a small temporary each time, not one of the block's size
    step = max(1, TAKE_CELLS // max(1, int(np.prod(position.shape[1:]))))  # cells per pair; no pair at all is fine
    for a in range(0, position.shape[0], step):
        np.take(table, position[a : a + step], out=out[a : a + step], mode="clip")
    return out


def covered(ranking: Ranking, k: int) -> np.ndarray:
    """``(P, R)``: some document in the top ``k`` is relevant to the pair's intent."""
    if k <= 0:
        return np.zeros((ranking.table.n_pairs, ranking.n_runs), dtype=bool)
    return at(relevant_count(ranking), k, INTENT_RANK_AXIS) > 0


def global_gain(ranking: Ranking) -> np.ndarray:
    """``GG(r) = sum_i w_i g_i(d_r)``: ``(K, R, T)`` (docs/metrics.md#grades-and-gains)."""
    return ranking.memo(("GG",), lambda: np.take(ranking.table.doc_global_gain, ranking.rows), shared=True)


def document_gain(ranking: Ranking, key: str) -> np.ndarray:
    """A per-document gain of the table (``GG``, ``max``; :meth:`TopicTable.doc_gain`) at every rank: ``(K, R, T)``."""
    if key == "GG":
        return global_gain(ranking)
    return ranking.memo(("doc_gain", key), lambda: np.take(ranking.table.doc_gain(key), ranking.rows), shared=True)


def din_gain(ranking: Ranking) -> np.ndarray:
    """DIN gain ``DG(r)`` (docs/metrics.md#din-measures-and-pq): navigational intents earn only at their first relevant doc."""
    table = ranking.table
    if not table.nav.any():
        return global_gain(ranking)  # every intent informational: DG = GG

    def build() -> np.ndarray:
        counts = ~table.per_pair(table.nav)[:, None, None] | (seen_before(ranking) == 0)
        return table.topic_sum(ranking.grades * counts * table.per_pair(table.W)[:, None, None])

    return ranking.memo(("DG",), build, shared=True)


def ntcir_round(x: np.ndarray) -> np.ndarray:
    """Round like C ``printf("%.4f")`` (correct rounding of the binary double; docs/metrics.md#means-and-precision)."""
    flat = [float("%.4f" % v) if np.isfinite(v) else v for v in np.asarray(x, dtype=np.float64).ravel()]
    return np.asarray(flat, dtype=np.float64).reshape(np.shape(x))
