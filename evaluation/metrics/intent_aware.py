"""Intent-aware metrics, NTCIREVAL conventions (docs/metrics.md#intent-aware-metrics): ``M-IA = sum_{I_q^+} w_i M_i``.

Per-intent metrics use local gains ``g_i`` and the per-intent ideal list; weights are not
renormalised (NTCIREVAL prints their sum as ``SUMp``). MAP-IA follows ndeval (divides by ``W+``).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable

import numpy as np

from evaluation._types import FloatArray
from evaluation.arrays import Ranking, TopicTable
from evaluation.metrics._common import (
    INTENT_RANK_AXIS,
    along,
    at,
    cascade,
    cutoff_or_depth,
    discount,
    per_doc,
    ranks,
    relevant_position,
    safe_divide,
    stop_terms,
)
from evaluation.metrics.base import Param, register

AGRAWAL = "Agrawal, Gollapudi, Halverson & Ieong, Diversifying search results, WSDM 2009"
CHAPELLE = "Chapelle, Metzler, Zhang & Grinspan, Expected reciprocal rank, CIKM 2009"


def _weighted(table: TopicTable) -> np.ndarray:
    """``w_i`` over ``I_q^+``, 0 elsewhere ``(T, I)``."""
    return np.where(table.rel, table.W, 0.0)


def _ideal_cumulative(ranking: Ranking, key: str, per_rank_of: callable) -> np.ndarray:
    """Cumulative ideal per-intent values ``(T, I, L)`` (memoised on the table)."""
    L = ranking.depth
    table = ranking.table
    return table.memo(("ideal_cum", key, L), lambda: np.cumsum(per_rank_of(table.intent_ideal(L)), axis=2))


def _per_doc_sum(ranking: Ranking, key: Hashable, coefficients: Callable[[TopicTable], np.ndarray], k: int) -> np.ndarray:
    """``sum_i coef[t, i] g_i(d)`` for the top ``k`` documents ``(k, R, T)``, computed per judged document."""

    def build(table: TopicTable) -> np.ndarray:
        return table.doc_sum(table.grades, coefficients(table))

    return per_doc(ranking, key, build, k)


@register(
    "nDCG-IA",
    tags={"normalised", "intent_aware", "graded", "tool:ntcireval"},
    citation=AGRAWAL + "; NTCIREVAL IA-MSnDCG",
    aliases=("IA-nDCG", "IA-MSnDCG"),
)
def ndcg_ia(ranking: Ranking, k: int) -> FloatArray:
    """sum_i w_i nDCG_i@l with linear gains and discount 1/log(r+1) (NTCIREVAL MSnDCG; docs/metrics.md#intent-aware-metrics).

    Each intent's ideal at ``l`` is a constant, so ``sum_i w_i DCG_i@l / IDCG_i@l`` is the DCG of
    the per-document gain ``sum_i (w_i / IDCG_i@l) g_i``.

    Slow reference: ``reference.ndcg_ia``.
    """
    k = min(k, ranking.depth)
    disc = discount("log", ranking.depth)
    ideal = at(_ideal_cumulative(ranking, "dcg", lambda g: g * disc[None, None, :]), k, axis=2)
    gain = _per_doc_sum(ranking, ("ndcg_ia", k), lambda table: safe_divide(_weighted(table), ideal), k)
    return (gain[:k] * disc[:k, None, None]).sum(axis=0)


def _stop_probability_scale(ranking: Ranking, err_gmax: str) -> np.ndarray:
    """``G_i + 1`` per (topic, intent): the intent's own top grade, or the scale maximum (docs/metrics.md#intent-aware-metrics)."""
    table = ranking.table
    if err_gmax == "per_intent":
        return table.gmax + 1.0
    return np.full(table.gmax.shape, max(4, table.max_grade) + 1.0)


def _err_terms(g: np.ndarray, scale: np.ndarray, rank_axis: int) -> np.ndarray:
    """ERR per-rank terms ``p(r)/r * prod_{k<r} (1 - p(k))`` with ``p = g/(G+1)``."""
    return stop_terms(g, scale, rank_axis) / along(ranks(g.shape[rank_axis]), rank_axis, g.ndim)


ERR_GMAX = Param(str, "per_intent", "G in p = g/(G+1): the intent's top grade (NTCIREVAL) or the scale maximum", ("per_intent", "scale"))


def _err_at(ranking: Ranking, k: int, err_gmax: str) -> np.ndarray:
    """``ERR_i@l`` of every pair's intent ``(P, R)``; the per-rank terms are built once for all cutoffs."""
    scale = _stop_probability_scale(ranking, err_gmax)

    def terms() -> np.ndarray:
        p = per_doc(ranking, ("err_p", err_gmax), lambda table: table.grades / np.take(scale, table.topic_of_row, axis=0))
        return cascade(ranking, p, along(ranks(ranking.depth), INTENT_RANK_AXIS, 3))  # p(r)/r prod_{j<r} (1 - p(j))

    return ranking.memo(("err@", err_gmax, k), lambda: ranking.memo(("err_terms", err_gmax), terms)[:, :k].sum(axis=1))


def _ideal_err(ranking: Ranking, k: int, err_gmax: str) -> np.ndarray:
    """``ERR*_i@l`` per (topic, intent) on the per-intent ideal list."""
    scale = _stop_probability_scale(ranking, err_gmax)
    return at(_ideal_cumulative(ranking, f"err:{err_gmax}", lambda g: _err_terms(g, scale[:, :, None], rank_axis=2)), k, axis=2)


@register("IA-ERR", params={"err_gmax": ERR_GMAX}, tags={"intent_aware", "graded", "tool:ntcireval"}, citation=CHAPELLE + "; NTCIREVAL")
def ia_err(ranking: Ranking, k: int, *, err_gmax: str) -> FloatArray:
    """sum_i w_i ERR_i@l with p = g/(G_i+1) (NTCIREVAL IA-ERR; docs/metrics.md#intent-aware-metrics).

    Slow reference: ``reference.ia_err``.
    """
    table = ranking.table
    return table.topic_sum(_err_at(ranking, k, err_gmax) * table.per_pair(table.W)[:, None])


@register(
    "IA-nERR",
    params={"err_gmax": ERR_GMAX},
    tags={"normalised", "intent_aware", "graded", "tool:ntcireval"},
    citation=CHAPELLE + "; Sakai & Song, SIGIR 2011; NTCIREVAL",
)
def ia_nerr(ranking: Ranking, k: int, *, err_gmax: str) -> FloatArray:
    """sum_i w_i ERR_i@l / ERR*_i@l on the per-intent ideal (docs/metrics.md#intent-aware-metrics).

    Slow reference: ``reference.ia_nerr``.
    """
    table = ranking.table
    coef = safe_divide(_weighted(table), _ideal_err(ranking, k, err_gmax))
    return table.topic_sum(_err_at(ranking, k, err_gmax) * table.per_pair(coef)[:, None])


@register(
    "RBP-IA",
    params={"p": Param(float, 0.95, "persistence, 0 < p < 1 (p = 1 makes every list 0)", low=0.0, high=1.0, low_open=True, high_open=True)},
    tags={"intent_aware", "graded"},
    citation="Moffat & Zobel, TOIS 2008 (RBP); NTCIREVAL RBP with per-intent G_i",
)
def rbp_ia(ranking: Ranking, k: int, *, p: float) -> FloatArray:
    """sum_i w_i (1-p) sum_{r<=l} p^(r-1) g_i(r)/G_i (docs/metrics.md#intent-aware-metrics).

    Slow reference: ``reference.rbp_ia``.
    """
    gain = _per_doc_sum(ranking, "rbp_ia", lambda table: _weighted(table) / np.maximum(table.gmax, 1), k)
    disc = discount("rbp", gain.shape[0], beta=p)
    return (1.0 - p) * (gain * disc[:, None, None]).sum(axis=0)


@register(
    "MAP-IA",
    cutoff="optional",
    tags={"normalised", "intent_aware", "binary", "tool:ndeval", "whole_list"},
    citation=AGRAWAL + "; ndeval",
    aliases=("AP_IA", "MAP_IA"),
)
def map_ia(ranking: Ranking, k: int | None) -> FloatArray:
    """(1/W+) sum_i w_i AP_i over the whole list (or the top k): AP_i = sum_{J_i(r)=1} (C_i(r)/r) / |R_i|
    (docs/metrics.md#intent-aware-metrics).

    Slow reference: ``reference.map_ia``.
    """
    depth = min(cutoff_or_depth(ranking, k), ranking.depth)
    table = ranking.table
    precision_sums = np.einsum("pkr,k->pr", relevant_position(ranking)[:, :depth], 1.0 / ranks(depth))  # sum_r J_i(r) C_i(r) / r
    return table.topic_sum(precision_sums * table.per_pair(safe_divide(table.W_hat, table.n_rel))[:, None])
