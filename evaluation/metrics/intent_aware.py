"""Intent-aware metrics, NTCIREVAL conventions (spec §2.2): ``M-IA = sum_{I_q^+} w_i M_i``.

Per-intent metrics use local gains ``g_i`` and the per-intent ideal list; weights are not
renormalised (NTCIREVAL prints their sum as ``SUMp``). MAP-IA follows ndeval (divides by ``W+``).
"""

from __future__ import annotations

import numpy as np

from evaluation._types import FloatArray
from evaluation.arrays import Ranking
from evaluation.metrics._common import at, binary, cutoff_or_depth, discount, exclusive_cumprod, per_doc, safe_divide, topic_of_row
from evaluation.metrics.base import Param, register

AGRAWAL = "Agrawal, Gollapudi, Halverson & Ieong, Diversifying search results, WSDM 2009"
CHAPELLE = "Chapelle, Metzler, Zhang & Grinspan, Expected reciprocal rank, CIKM 2009"


def _gains(ranking: Ranking) -> np.ndarray:
    return ranking.memo(("g",), lambda: ranking.grades.astype(np.float64))


def _weighted_sum(ranking: Ranking, per_intent: np.ndarray) -> FloatArray:
    """``sum_{i in I_q^+} w_i x_i`` over the last axis of ``(R, T, I)``."""
    table = ranking.table
    return (per_intent * np.where(table.rel, table.W, 0.0)[None]).sum(axis=2)


def _ideal_cumulative(ranking: Ranking, key: str, per_rank_of: callable) -> np.ndarray:
    """Cumulative ideal per-intent values ``(T, I, L)`` (memoised on the table)."""
    L = ranking.depth
    table = ranking.table
    return table.memo(("ideal_cum", key, L), lambda: np.cumsum(per_rank_of(table.intent_ideal(L)), axis=2))


@register(
    "nDCG-IA",
    tags={"normalised", "intent_aware", "graded", "tool:ntcireval"},
    citation=AGRAWAL + "; NTCIREVAL IA-MSnDCG",
    aliases=("IA-nDCG", "IA-MSnDCG"),
)
def ndcg_ia(ranking: Ranking, k: int) -> FloatArray:
    """sum_i w_i nDCG_i@l with linear gains and discount 1/log(r+1) (NTCIREVAL MSnDCG; spec §2.2)."""
    disc = discount("log", ranking.depth)
    dcg = ranking.memo(("dcg_i",), lambda: np.cumsum(_gains(ranking) * disc[None, None, :, None], axis=2))
    ideal = _ideal_cumulative(ranking, "dcg", lambda g: g * disc[None, None, :])
    return _weighted_sum(ranking, safe_divide(at(dcg, k), at(ideal, k, axis=2)[None]))


def _stop_probability_scale(ranking: Ranking, err_gmax: str) -> np.ndarray:
    """``G_i + 1`` per (topic, intent): the intent's own top grade, or the scale maximum (register #12)."""
    table = ranking.table
    if err_gmax == "per_intent":
        return table.gmax + 1.0
    return np.full(table.gmax.shape, max(4, table.max_grade) + 1.0)


def _err_terms(g: np.ndarray, scale: np.ndarray, rank_axis: int) -> np.ndarray:
    """ERR per-rank terms ``p(r)/r * prod_{k<r} (1 - p(k))`` with ``p = g/(G+1)``."""
    p = g / scale
    before = exclusive_cumprod(1.0 - p, axis=rank_axis)
    shape = [1] * g.ndim
    shape[rank_axis] = g.shape[rank_axis]
    r = np.arange(1, g.shape[rank_axis] + 1, dtype=np.float64).reshape(shape)
    return p / r * before


ERR_GMAX = Param(str, "per_intent", "G in p = g/(G+1): the intent's top grade (NTCIREVAL) or the scale maximum", ("per_intent", "scale"))


def _ia_err_parts(ranking: Ranking, k: int, err_gmax: str) -> tuple[np.ndarray, np.ndarray]:
    scale = _stop_probability_scale(ranking, err_gmax)

    def build() -> np.ndarray:
        p = per_doc(ranking, ("err_p", err_gmax), lambda table: table.grades / scale[topic_of_row(table)])
        terms = p / np.arange(1, ranking.depth + 1, dtype=np.float64)[None, None, :, None] * exclusive_cumprod(1.0 - p)
        return np.cumsum(terms, axis=2)

    err = ranking.memo(("err_i", err_gmax), build)
    ideal = _ideal_cumulative(ranking, f"err:{err_gmax}", lambda g: _err_terms(g, scale[:, :, None], rank_axis=2))
    return at(err, k), at(ideal, k, axis=2)[None]


@register("IA-ERR", params={"err_gmax": ERR_GMAX}, tags={"intent_aware", "graded", "tool:ntcireval"}, citation=CHAPELLE + "; NTCIREVAL")
def ia_err(ranking: Ranking, k: int, err_gmax: str = "per_intent") -> FloatArray:
    """sum_i w_i ERR_i@l with p = g/(G_i+1) (NTCIREVAL IA-ERR; spec §2.2, register #12)."""
    err, _ = _ia_err_parts(ranking, k, err_gmax)
    return _weighted_sum(ranking, err)


@register(
    "IA-nERR",
    params={"err_gmax": ERR_GMAX},
    tags={"normalised", "intent_aware", "graded", "tool:ntcireval"},
    citation=CHAPELLE + "; Sakai & Song, SIGIR 2011; NTCIREVAL",
)
def ia_nerr(ranking: Ranking, k: int, err_gmax: str = "per_intent") -> FloatArray:
    """sum_i w_i ERR_i@l / ERR*_i@l on the per-intent ideal (spec §2.2)."""
    err, ideal = _ia_err_parts(ranking, k, err_gmax)
    return _weighted_sum(ranking, safe_divide(err, ideal))


@register(
    "RBP-IA",
    params={"p": Param(float, 0.95, "persistence", low=0.0, high=1.0, low_open=True)},
    tags={"intent_aware", "graded"},
    citation="Moffat & Zobel, TOIS 2008 (RBP); NTCIREVAL RBP with per-intent G_i",
)
def rbp_ia(ranking: Ranking, k: int, p: float = 0.95) -> FloatArray:
    """sum_i w_i (1-p) sum_{r<=l} p^(r-1) g_i(r)/G_i (spec §2.2)."""
    table = ranking.table
    disc = discount("rbp", ranking.depth, beta=p)
    scale = np.maximum(table.gmax, 1)[None, :, None, :]
    rbp = ranking.memo(("rbp_i", p), lambda: np.cumsum(_gains(ranking) / scale * disc[None, None, :, None], axis=2))
    return _weighted_sum(ranking, (1.0 - p) * at(rbp, k))


@register(
    "MAP-IA", cutoff="optional", tags={"normalised", "intent_aware", "binary", "tool:ndeval", "whole_list"}, citation=AGRAWAL + "; ndeval"
)
def map_ia(ranking: Ranking, k: int | None) -> FloatArray:
    """(1/W+) sum_i w_i AP_i over the whole list (or the top k): AP_i = sum_{J_i(r)=1} (C_i(r)/r) / |R_i|."""
    depth = cutoff_or_depth(ranking, k)
    J = binary(ranking)[:, :, :depth]
    precision = np.cumsum(J, axis=2) / np.arange(1, J.shape[2] + 1)[None, None, :, None]
    table = ranking.table
    ap = safe_divide((J * precision).sum(axis=2), table.n_rel[None].astype(np.float64))
    return (ap * table.W_hat[None]).sum(axis=2)
