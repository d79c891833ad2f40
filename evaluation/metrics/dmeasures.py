"""D-, D#-, DIN-, DIN#-measures and P+Q/P+Q# (docs/metrics.md#d-measures; Sakai & Song 2011, Sakai 2012, NTCIREVAL).

All of them work on gain vectors and the Q-measure's blended ratio::

    BR(r) = (beta CG(r) + C(r)) / (beta CG*(r) + r),   Q@l = sum_{r<=l} I(r) BR(r) / min(l, R)
"""

from __future__ import annotations

import numpy as np

from evaluation._types import FloatArray
from evaluation.arrays import Ranking
from evaluation.metrics._common import (
    INTENT_RANK_AXIS,
    RANK_AXIS,
    along,
    at,
    din_gain,
    discount,
    global_gain,
    ntcir_round,
    ranks,
    relevant,
    relevant_count,
    safe_divide,
    scan,
)
from evaluation.metrics.base import Param, register
from evaluation.metrics.coverage import intent_recall

SAKAI_SONG = "Sakai & Song, Evaluating diversified search results using per-intent graded relevance, SIGIR 2011"
SAKAI_DIN = "Sakai, Evaluation with informational and navigational intents, WWW 2012"
SAKAI_Q = "Sakai, On the reliability of information retrieval metrics based on graded relevance, IPM 2007 (Q-measure)"

GAMMA = Param(float, 0.5, "weight of I-rec in the # combination", low=0.0, high=1.0)
BETA_Q = Param(float, 1.0, "Q-measure's beta (gain vs. rank blending)", low=0.0)
INT32_SUMS = 2**31  # P+Q's running sums of g + I are taken in int32 while every one of them stays below this
ROUND = Param(bool, False, "combine 4-decimal components like NTCIREVAL's scripts (docs/metrics.md#means-and-precision quirk)")


def blended_ratio(
    cum_gain: np.ndarray,
    count: np.ndarray,
    relevant: np.ndarray,
    cum_ideal: np.ndarray,
    beta: float,
    rank_axis: int,
    *,
    in_place: bool = False,
) -> np.ndarray:
    """``I(r) BR(r)`` along ``rank_axis``, ``BR(r) = (beta CG(r) + C(r)) / (beta CG*(r) + r)``.

    ``cum_gain`` and ``count`` (``CG``, ``C``) are running sums of the gains and of ``relevant``
    (``I``), ``(K, R, T)`` or ``(P, K, R)``; ``cum_ideal`` runs over the ideal gains (sorted
    descending, zero padded, so it stays flat after ``R``) and broadcasts against them. With
    ``in_place``, a float64 ``cum_gain`` (a temporary of the caller's) is overwritten by the result.
    """
    if cum_gain.dtype == np.float64 and in_place:  # the caller's float CG becomes the ratio: no fresh block
        ratio = cum_gain
        if beta != 1.0:
            ratio *= beta
        ratio += count
    elif beta == 1.0:  # 1.0 * CG is CG exactly: one pass instead of two
        ratio = np.add(cum_gain, count, dtype=np.float64)
    else:
        ratio = np.multiply(beta, cum_gain, dtype=np.float64)
        ratio += count
    return blend(ratio, relevant, cum_ideal, beta, rank_axis)


def blend(numerator: np.ndarray, relevant: np.ndarray, cum_ideal: np.ndarray, beta: float, rank_axis: int) -> np.ndarray:
    """``I(r) BR(r)`` from ``numerator = beta CG(r) + C(r)`` (float64, overwritten): divided by
    ``beta CG*(r) + r`` and masked by ``relevant`` in place (:func:`blended_ratio`)."""
    numerator /= beta * cum_ideal + along(ranks(numerator.shape[rank_axis]), rank_axis, numerator.ndim)
    numerator *= relevant
    return numerator


def blended_ratio_sums(
    cum_gain: np.ndarray, count: np.ndarray, relevant: np.ndarray, cum_ideal: np.ndarray, beta: float, rank_axis: int
) -> np.ndarray:
    """Running ``sum I(r) BR(r)`` along ``rank_axis`` (:func:`blended_ratio`; a float64 ``cum_gain`` is overwritten)."""
    ratio = blended_ratio(cum_gain, count, relevant, cum_ideal, beta, rank_axis, in_place=True)
    return scan(np.add, ratio, rank_axis, in_place=True)


def ideal_cumulative(ranking: Ranking, ideal: str) -> np.ndarray:
    """``CG*(r)`` of a per-document gain's ideal (``GG``: the global ideal), shaped ``(K, 1, T)``."""
    table = ranking.table
    return table.memo(("gain_ideal_cum", ideal, ranking.depth), lambda: scan(np.add, table.gain_ideal(ideal, ranking.depth).T[:, None, :]))


def ranked_blended_ratio(ranking: Ranking, gains_of, beta: float, ideal: str) -> np.ndarray:
    """``I(r) BR(r)`` ``(K, R, T)`` of the gains ``gains_of()`` against the ideal of the per-document gain ``ideal``."""
    gains = gains_of()
    relevant = gains > 0
    cum_gain = scan(np.add, gains)  # a fresh float64 temporary (the gains are float): the ratio takes its memory
    return blended_ratio(
        cum_gain, scan(np.add, relevant.astype(np.int32)), relevant, ideal_cumulative(ranking, ideal), beta, RANK_AXIS, in_place=True
    )


def q_at(ranking: Ranking, key: str, gains_of, k: int, beta: float, ideal: str = "GG") -> FloatArray:
    """Q@l of the gains ``gains_of()`` (memo key ``key``) against the ideal of the per-document gain ``ideal``."""
    table = ranking.table
    sums = ranking.memo(
        ("Q", key, beta, ideal), lambda: scan(np.add, ranked_blended_ratio(ranking, gains_of, beta, ideal), RANK_AXIS, in_place=True)
    )
    return safe_divide(at(sums, k), np.minimum(k, table.n_positive(ideal)))


def ndcg_at(ranking: Ranking, key: str, gains_of, k: int, ideal: str = "GG") -> FloatArray:
    """MSnDCG@l of the gains ``gains_of()`` (memo key ``key``) against the ideal of the per-document gain ``ideal``."""
    disc = discount("log", ranking.depth)
    table = ranking.table
    dcg = ranking.memo(("gdcg", key), lambda: scan(np.add, gains_of() * disc[:, None, None]))
    best = table.memo(
        ("gdcg_ideal", ideal, ranking.depth), lambda: np.cumsum(table.gain_ideal(ideal, ranking.depth) * disc[None, :], axis=1)
    )
    return safe_divide(at(dcg, k), at(best, k, axis=1))


def _memo_kernel(ranking: Ranking, name: str, k: int, *args, compute) -> FloatArray:
    """Memoise a base metric's per-topic values so its # combination does not recompute it."""
    return ranking.memo(("kernel", name, k, args), compute)


def _sharp(ranking: Ranking, base: FloatArray, k: int, gamma: float, rounded: bool) -> FloatArray:
    """``gamma I-rec@l + (1 - gamma) base`` (the # combination)."""
    irec = intent_recall(ranking, k)
    if rounded:
        irec, base = ntcir_round(irec), ntcir_round(base)
    return gamma * irec + (1.0 - gamma) * base


D_TAGS = {"normalised", "graded", "tool:ntcireval"}


@register("D-nDCG", tags=D_TAGS | {"ideal_global"}, citation=SAKAI_SONG)
def d_ndcg(ranking: Ranking, k: int) -> FloatArray:
    """MSnDCG@l on global gains GG = sum_i w_i g_i with the global ideal (docs/metrics.md#d-measures).

    Slow reference: ``reference.d_ndcg``.
    """
    return _memo_kernel(ranking, "d_ndcg", k, compute=lambda: ndcg_at(ranking, "GG", lambda: global_gain(ranking), k))


@register("D-Q", params={"beta": BETA_Q}, tags=D_TAGS | {"ideal_global"}, citation=SAKAI_SONG + "; " + SAKAI_Q)
def d_q(ranking: Ranking, k: int, *, beta: float) -> FloatArray:
    """Q@l on global gains with the global ideal (docs/metrics.md#d-measures).

    Slow reference: ``reference.d_q``.
    """
    return _memo_kernel(ranking, "d_q", k, beta, compute=lambda: q_at(ranking, "GG", lambda: global_gain(ranking), k, beta))


@register("D#-nDCG", params={"gamma": GAMMA, "ntcir_round_components": ROUND}, tags=D_TAGS | {"ideal_global"}, citation=SAKAI_SONG)
def d_sharp_ndcg(ranking: Ranking, k: int, *, gamma: float, ntcir_round_components: bool) -> FloatArray:
    """gamma I-rec@l + (1 - gamma) D-nDCG@l (docs/metrics.md#d-measures).

    Slow reference: ``reference.d_sharp_ndcg``.
    """
    return _sharp(ranking, d_ndcg(ranking, k), k, gamma, ntcir_round_components)


@register(
    "D#-Q", params={"gamma": GAMMA, "beta": BETA_Q, "ntcir_round_components": ROUND}, tags=D_TAGS | {"ideal_global"}, citation=SAKAI_SONG
)
def d_sharp_q(ranking: Ranking, k: int, *, gamma: float, beta: float, ntcir_round_components: bool) -> FloatArray:
    """gamma I-rec@l + (1 - gamma) D-Q@l (docs/metrics.md#d-measures).

    Slow reference: ``reference.sharp` over ``reference.d_q``.
    """
    return _sharp(ranking, d_q(ranking, k, beta=beta), k, gamma, ntcir_round_components)


def _din_key(ranking: Ranking) -> str:
    """Memo key of the DIN gains: those of the global gains when no intent is navigational (they are equal)."""
    return "DG" if ranking.table.nav.any() else "GG"


DIN_TAGS = {"normalised", "graded", "type_sensitive", "tool:ntcireval"}


@register("DIN-nDCG", tags=DIN_TAGS, citation=SAKAI_DIN)
def din_ndcg(ranking: Ranking, k: int) -> FloatArray:
    """MSnDCG@l on DIN gains over the global ideal of D-nDCG (docs/metrics.md#din-measures-and-pq).

    Slow reference: ``reference.din_ndcg``.
    """
    return _memo_kernel(ranking, "din_ndcg", k, compute=lambda: ndcg_at(ranking, _din_key(ranking), lambda: din_gain(ranking), k))


@register("DIN-Q", params={"beta": BETA_Q}, tags=DIN_TAGS, citation=SAKAI_DIN)
def din_q(ranking: Ranking, k: int, *, beta: float) -> FloatArray:
    """Q@l on DIN gains over the global ideal (docs/metrics.md#din-measures-and-pq).

    Slow reference: ``reference.din_q``.
    """
    return _memo_kernel(ranking, "din_q", k, beta, compute=lambda: q_at(ranking, _din_key(ranking), lambda: din_gain(ranking), k, beta))


@register("DIN#-nDCG", params={"gamma": GAMMA, "ntcir_round_components": ROUND}, tags=DIN_TAGS, citation=SAKAI_DIN)
def din_sharp_ndcg(ranking: Ranking, k: int, *, gamma: float, ntcir_round_components: bool) -> FloatArray:
    """gamma I-rec@l + (1 - gamma) DIN-nDCG@l (docs/metrics.md#din-measures-and-pq).

    Slow reference: ``reference.sharp` over ``reference.din_ndcg``.
    """
    return _sharp(ranking, din_ndcg(ranking, k), k, gamma, ntcir_round_components)


@register("DIN#-Q", params={"gamma": GAMMA, "beta": BETA_Q, "ntcir_round_components": ROUND}, tags=DIN_TAGS, citation=SAKAI_DIN)
def din_sharp_q(ranking: Ranking, k: int, *, gamma: float, beta: float, ntcir_round_components: bool) -> FloatArray:
    """gamma I-rec@l + (1 - gamma) DIN-Q@l (docs/metrics.md#din-measures-and-pq).

    Slow reference: ``reference.sharp` over ``reference.din_q``.
    """
    return _sharp(ranking, din_q(ranking, k, beta=beta), k, gamma, ntcir_round_components)


def _per_intent_sums(ranking: Ranking, beta: float) -> tuple[np.ndarray, np.ndarray]:
    """Cumulative ``I·BR`` and ``C`` per intent, ``(P, K, R)``, with per-intent ideals."""

    table = ranking.table

    def build() -> tuple[np.ndarray, np.ndarray]:
        ideal = table.intent_ideal(ranking.depth)[table.pair_topic, table.pair_intent][:, :, None]  # (P, K, 1)
        cum_ideal = table.memo(("intent_ideal_cum", ranking.depth), lambda: scan(np.add, ideal, INTENT_RANK_AXIS))
        # integer grades summed in float64 are exact: the running sums become the ratio in place
        cum_gain, rel = ranking.block(), relevant(ranking)
        if beta == 1.0:
            # CG(r) + C(r) is the running sum of g + I: integers, exact in float64 in any grouping, so
            # one pass over the block fewer (no copy of the grades, no separate addition of C)
            # g + I added and summed along the ranks as integers (in the scratch buffer's memory), then widened: a
            # mixed-type addition straight into float64 casts in buffered chunks, about twice as slow, and an int32 scan
            # moves half the bytes; the same integers either way (at most depth x (top grade + 1), checked to fit)
            with ranking.scratch() as scratch:
                exact = scratch.reshape(-1).view(np.int32)[: cum_gain.size].reshape(cum_gain.shape)
                np.add(ranking.grades, rel, out=exact, dtype=np.int32)
                if ranking.depth * (max(table.max_grade, 0) + 1) < INT32_SUMS:
                    scan(np.add, exact, INTENT_RANK_AXIS, in_place=True)
                    np.copyto(cum_gain, exact)
                else:
                    np.copyto(cum_gain, exact)
                    scan(np.add, cum_gain, INTENT_RANK_AXIS, in_place=True)
            return scan(np.add, blend(cum_gain, rel, cum_ideal, beta, INTENT_RANK_AXIS), INTENT_RANK_AXIS, in_place=True)
        np.copyto(cum_gain, ranking.grades)
        scan(np.add, cum_gain, INTENT_RANK_AXIS, in_place=True)
        return blended_ratio_sums(cum_gain, relevant_count(ranking), rel, cum_ideal, beta, INTENT_RANK_AXIS)

    return ranking.memo(("Q_i", beta), build), relevant_count(ranking)


def p_plus(ranking: Ranking, k: int, beta: float = 1.0) -> FloatArray:
    """P+ per intent on the list cut at l (docs/metrics.md#din-measures-and-pq): BR averaged over relevant ranks up to the
    first occurrence of the largest gain present in the list. ``(R, T, I)``.

    For every prefix length the preferred rank is the first position of the running maximum, so
    one pass serves every cutoff.
    """

    def build() -> np.ndarray:
        sums, count = _per_intent_sums(ranking, beta)
        g = ranking.grades
        running = scan(np.maximum, g, INTENT_RANK_AXIS)
        previous = np.concatenate([np.zeros_like(running[:, :1]), running[:, :-1]], axis=1)
        position = along(np.arange(ranking.depth), INTENT_RANK_AXIS, 3)
        preferred = scan(np.maximum, np.where(g > previous, position, 0), INTENT_RANK_AXIS)
        value = np.take_along_axis(safe_divide(sums, count), preferred, axis=INTENT_RANK_AXIS)
        return np.where(running > 0, value, 0.0)

    value = ranking.memo(("P+", beta), build)
    return ranking.table.by_topic_and_intent(at(value, k, INTENT_RANK_AXIS))


@register(
    "P+Q",
    params={"beta": BETA_Q},
    tags={"normalised", "graded", "type_sensitive", "intent_aware", "tool:ntcireval"},
    citation=SAKAI_DIN + "; NTCIREVAL DIN-NTCIR-PQeval",
)
def pplus_q(ranking: Ranking, k: int, *, beta: float) -> FloatArray:
    """sum_{nav} w_i P+_i + sum_{inf} w_i Q_i@l over I_q^+ (docs/metrics.md#din-measures-and-pq).

    Slow reference: ``reference.pplus_q``.
    """
    table = ranking.table

    def compute() -> FloatArray:
        sums, _ = _per_intent_sums(ranking, beta)
        q = safe_divide(at(sums, k, INTENT_RANK_AXIS), table.per_pair(np.minimum(k, table.n_rel))[:, None])  # Q_i (P, R)
        if table.nav.any():
            nav = table.per_pair(table.nav)[:, None]
            q = np.where(nav, p_plus(ranking, k, beta)[:, table.pair_topic, table.pair_intent].T, q)
        return table.topic_sum(q * table.per_pair(table.W)[:, None])

    return _memo_kernel(ranking, "pplus_q", k, beta, compute=compute)


@register(
    "P+Q#",
    params={"gamma": GAMMA, "beta": BETA_Q, "ntcir_round_components": ROUND},
    tags={"normalised", "graded", "type_sensitive", "intent_aware", "tool:ntcireval"},
    citation=SAKAI_DIN + "; NTCIREVAL NEVIAPQ2sharpnev",
)
def pplus_q_sharp(ranking: Ranking, k: int, *, gamma: float, beta: float, ntcir_round_components: bool) -> FloatArray:
    """gamma I-rec@l + (1 - gamma) P+Q@l (docs/metrics.md#din-measures-and-pq).

    Slow reference: ``reference.sharp` over ``reference.pplus_q``.
    """
    return _sharp(ranking, pplus_q(ranking, k, beta=beta), k, gamma, ntcir_round_components)
