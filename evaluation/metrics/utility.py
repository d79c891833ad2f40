"""Utility metrics with user effort (spec §2.6; Amigó, Spina & Carrillo-de-Albornoz, SIGIR 2018):
RBU (reference jar conventions by default), EU and CT (reconstructed forms)."""

from __future__ import annotations

import numpy as np

from evaluation._types import FloatArray
from evaluation.arrays import Ranking, TopicTable
from evaluation.metrics._common import INTENT_RANK_AXIS, at, cutoff_or_depth, novelty_decay, per_doc, ranks, scan
from evaluation.metrics.base import Param, register

AMIGO = "Amigó, Spina & Carrillo-de-Albornoz, An axiomatic analysis of diversity evaluation metrics, SIGIR 2018"


def _relevance(ranking: Ranking, mapping: str, depth: int) -> np.ndarray:
    """Per-rank relevance probabilities ``r(d,t)`` ``(I, depth, R, T)``, computed per document:

    ``linear`` g/G_t (G_t = the aspect's top grade), ``jar`` (2^g - 1)/2^{G_t} (RBU jar),
    ``ntcir_linear`` g/(G+1) with G the scale maximum.
    """

    def build(table: TopicTable) -> np.ndarray:
        if mapping == "jar" and table.grades.size and 0 <= table.grades.min() and table.max_grade < 1000:
            two = np.ldexp(1.0, np.arange(table.max_grade + 1))  # 2^g looked up: the same exact powers, no pow
            return (np.take(two, table.grades) - 1.0) / np.take(two[table.gmax], table.topic_of_row, axis=0)
        g = table.grades.astype(np.float64)
        gmax = np.take(table.gmax, table.topic_of_row, axis=0)
        if mapping == "linear":
            return np.divide(g, gmax, out=np.zeros(g.shape), where=gmax > 0)
        if mapping == "jar":
            return (np.ldexp(1.0, table.grades) - 1.0) / np.ldexp(1.0, gmax)  # exact powers of 2, no pow
        return g / (max(4, table.max_grade) + 1.0)

    return per_doc(ranking, ("relevance", mapping), build)[:, :depth]


@register(
    "RBU",
    params={
        "p": Param(float, 0.8, "persistence", low=0.0, high=1.0, low_open=True),
        "e": Param(float, 0.03, "effort per inspected document", low=0.0),
        "rbu_scale": Param(str, "jar", "jar: (1-p) p^(i-1); paper: p^i (Eq. 11)", ("jar", "paper")),
        "rbu_relevance": Param(str, "jar", "jar: (2^g - 1)/2^gmax_t; ntcir_linear: g/(G+1), G = scale maximum", ("jar", "ntcir_linear")),
    },
    cutoff="optional",
    tags={"graded", "intent_aware", "effort", "tool:rbu", "whole_list"},
    citation=AMIGO + "; RBU reference jar",
)
def rbu(ranking: Ranking, k: int | None, p: float = 0.8, e: float = 0.03, rbu_scale: str = "jar", rbu_relevance: str = "jar") -> FloatArray:
    """Rank-Biased Utility: (1-p) sum_t w_t sum_i p^(i-1) r_it prod_{j<i}(1-r_jt) - e (1-p) sum_i p^(i-1).

    Whole list unless a cutoff is given (then RBU@k scores the top k; spec §2.6, register #16).
    Weights are used as given; every listed aspect counts.
    """
    depth = min(cutoff_or_depth(ranking, k), ranking.depth)
    present = ranking.present[:depth]
    table = ranking.table
    r = _rbu_terms(ranking, rbu_relevance)[:, :depth]
    disc = p ** np.arange(depth, dtype=np.float64)
    utility = table.topic_sum(np.einsum("pkr,k->pr", r, disc) * table.per_pair(table.W)[:, None])
    effort = e * (disc[:, None, None] * present).sum(axis=0)
    value = (1.0 - p) * (utility - effort)
    return value * (p / (1.0 - p)) if rbu_scale == "paper" else value


def _rbu_terms(ranking: Ranking, mapping: str) -> np.ndarray:
    """``r_it prod_{j<i} (1 - r_jt)`` over the whole depth ``(P, K, R)``, built once for every cutoff
    (a cutoff's terms are this array's leading ranks: every step runs along the ranks)."""

    def build() -> np.ndarray:
        r = _relevance(ranking, mapping, ranking.depth)
        kept = scan(np.multiply, 1.0 - r, INTENT_RANK_AXIS, in_place=True)  # prod_{j<=i} (1 - r_jt)
        r[:, 1:] *= kept[:, :-1]  # r_it prod_{j<i} (1 - r_jt)
        return r

    return ranking.memo(("rbu_terms", mapping), build)


def _linear_relevance(ranking: Ranking) -> np.ndarray:
    """``r = g/G_t`` per intent and rank ``(P, K, R)``, gathered once for EU and CT (read only)."""
    return ranking.memo(("relevance", "linear"), lambda: _relevance(ranking, "linear", ranking.depth))


def _novel_relevance(ranking: Ranking, alpha: float) -> np.ndarray:
    """``r(d_i,t) (1-alpha)^{c_t(i)}`` per intent and rank ``(P, K, R)``, ``r = g/G_t``."""

    def build() -> np.ndarray:
        return _linear_relevance(ranking) * novelty_decay(ranking, alpha)

    return ranking.memo(("r·decay", alpha), build)


@register(
    "EU",
    params={
        "alpha": Param(float, 0.5, "novelty penalty", low=0.0, high=1.0),
        "e": Param(float, 0.03, "effort per inspected document", low=0.0),
        "eu_discount": Param(str, "1+log2(i)", "denominator of the rank discount 1/d(i)", ("1+log2(i)", "log2(i+1)")),
    },
    cutoff="optional",
    tags={"graded", "intent_aware", "effort", "reconstructed", "whole_list"},
    citation="Yang & Lad, ICTIR 2009 (expected utility), in the form of " + AMIGO,
)
def eu(ranking: Ranking, k: int | None, alpha: float = 0.5, e: float = 0.03, eu_discount: str = "1+log2(i)") -> FloatArray:
    """sum_i disc(i) [sum_t w_t r(d_i,t) (1-alpha)^{c_t(i)} - e] over the shown list (spec §2.6, reconstructed)."""
    depth = min(cutoff_or_depth(ranking, k), ranking.depth)
    i = ranks(depth)
    disc = 1.0 / (1.0 + np.log2(i)) if eu_discount == "1+log2(i)" else 1.0 / np.log2(i + 1.0)
    table = ranking.table
    gained = table.topic_sum(np.einsum("pkr,k->pr", _novel_relevance(ranking, alpha)[:, :depth], disc) * table.per_pair(table.W)[:, None])
    return gained - e * (ranking.present[:depth] * disc[:, None, None]).sum(axis=0)  # no gain past the end of a list


@register(
    "CT",
    params={
        "alpha": Param(float, 0.5, "novelty penalty", low=0.0, high=1.0),
        "h_max": Param(float, 1.0, "height of each aspect's water tank", low=0.0, low_open=True),
        "ct_time": Param(str, "per_rank", "per_rank: 1/i inside the sum (Amigó); total: divide by min(k, n) (Luo)", ("per_rank", "total")),
    },
    tags={"graded", "intent_aware", "reconstructed"},
    citation="Luo, Wing, Yang & Hearst, The water filling model and the cube test, CIKM 2013, in the form of " + AMIGO,
)
def ct(ranking: Ranking, k: int, alpha: float = 0.5, h_max: float = 1.0, ct_time: str = "per_rank") -> FloatArray:
    """Cube Test: sum_{i<=k} (1/i) sum_t w_t r(d_i,t) (1-alpha)^{c_t(i)} 1[sum_{j<i} r(d_j,t) < H] (spec §2.6)."""

    def build() -> np.ndarray:
        filled = scan(np.add, _linear_relevance(ranking), INTENT_RANK_AXIS)  # sum_{j<=i} r(d_j,t)
        table = ranking.table
        gains = _novel_relevance(ranking, alpha) * table.per_pair(table.W)[:, None, None]
        gains[:, 1:] *= filled[:, :-1] < h_max  # the tank was still open before rank i (always open at rank 1)
        value = table.topic_sum(gains)
        if ct_time == "per_rank":
            value = value / ranks(ranking.depth)[:, None, None]
        return scan(np.add, value)

    total = at(ranking.memo(("ct", alpha, h_max, ct_time), build), k)
    if ct_time == "per_rank":
        return total
    return total / np.maximum(np.minimum(ranking.lengths, k), 1)
