"""Utility metrics with user effort (docs/metrics.md#rbu-eu-and-ct; Amigó, Spina & Carrillo-de-Albornoz, SIGIR 2018):
EU and CT (reconstructed forms); RBU lives in :mod:`evaluation.metrics.rbu`."""

from __future__ import annotations

import numpy as np

from evaluation._types import FloatArray
from evaluation.arrays import Ranking
from evaluation.metrics._common import INTENT_RANK_AXIS, at, cutoff_or_depth, decayed, ranks, scan, shown_sum
from evaluation.metrics.base import Param, register
from evaluation.metrics.rbu import AMIGO, relevance_probability


def _linear_relevance(ranking: Ranking) -> np.ndarray:
    """``r(d_i,t) = g/G_t`` per intent and rank ``(P, K, R)``, gathered once for EU and CT (a block of the family's:
    read, never written)."""
    return ranking.memo(("r",), lambda: relevance_probability(ranking, "linear", ranking.depth, out=ranking.block()))


def _novel_relevance(ranking: Ranking, alpha: float) -> np.ndarray:
    """``r(d_i,t) (1-alpha)^{c_t(i)}`` per intent and rank ``(P, K, R)``, ``r = g/G_t``."""

    def build() -> np.ndarray:
        novel = decayed(ranking, alpha)
        novel *= _linear_relevance(ranking)
        return novel

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
def eu(ranking: Ranking, k: int | None, *, alpha: float, e: float, eu_discount: str) -> FloatArray:
    """sum_i disc(i) [sum_t w_t r(d_i,t) (1-alpha)^{c_t(i)} - e] over the shown list (docs/metrics.md#rbu-eu-and-ct, reconstructed).

    Slow reference: ``reference.eu``.
    """
    depth = min(cutoff_or_depth(ranking, k), ranking.depth)
    i = ranks(depth)
    disc = 1.0 / (1.0 + np.log2(i)) if eu_discount == "1+log2(i)" else 1.0 / np.log2(i + 1.0)
    table = ranking.table
    gained = table.topic_sum(np.einsum("pkr,k->pr", _novel_relevance(ranking, alpha)[:, :depth], disc) * table.per_pair(table.W)[:, None])
    return gained - e * shown_sum(ranking, disc)  # no gain past the end of a list


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
def ct(ranking: Ranking, k: int, *, alpha: float, h_max: float, ct_time: str) -> FloatArray:
    """Cube Test: sum_{i<=k} (1/i) sum_t w_t r(d_i,t) (1-alpha)^{c_t(i)} 1[sum_{j<i} r(d_j,t) < H] (docs/metrics.md#rbu-eu-and-ct).

    Slow reference: ``reference.ct``.
    """

    def build() -> np.ndarray:
        table = ranking.table
        novel = _novel_relevance(ranking, alpha)
        with ranking.scratch() as block:
            filled = scan(np.add, _linear_relevance(ranking), INTENT_RANK_AXIS, out=block)  # sum_{j<=i} r(d_j,t)
            still_open = filled[:, :-1] < h_max  # the tank was still open before rank i (always open at rank 1)
            gains = np.multiply(
                novel, table.per_pair(table.W)[:, None, None], out=block
            )  # the levels are read: the gains take their memory
            gains[:, 1:] *= still_open
            value = table.topic_sum(gains)
        if ct_time == "per_rank":
            value = value / ranks(ranking.depth)[:, None, None]
        return scan(np.add, value)

    total = at(ranking.memo(("ct", alpha, h_max, ct_time), build), k)
    if ct_time == "per_rank":
        return total
    return total / np.maximum(np.minimum(ranking.lengths, k), 1)
