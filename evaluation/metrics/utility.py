"""Utility metrics with user effort (spec §2.6; Amigó, Spina & Carrillo-de-Albornoz, SIGIR 2018):
RBU (reference jar conventions by default), EU and CT (reconstructed forms)."""
from __future__ import annotations

import numpy as np

from evaluation._types import FloatArray
from evaluation.arrays import Ranking
from evaluation.metrics._common import cutoff_or_depth, exclusive_cumprod, exclusive_cumsum, seen_before
from evaluation.metrics.base import Param, register

AMIGO = "Amigó, Spina & Carrillo-de-Albornoz, An axiomatic analysis of diversity evaluation metrics, SIGIR 2018"


def _cut(ranking: Ranking, k: int | None) -> tuple[np.ndarray, np.ndarray]:
    depth = cutoff_or_depth(ranking, k)
    return ranking.grades[:, :, :depth].astype(np.float64), ranking.present[:, :, :depth]


def _linear_relevance(ranking: Ranking, g: np.ndarray) -> np.ndarray:
    """``r(d,t) = g_t(d) / G_t`` with ``G_t`` the aspect's top grade."""
    gmax = ranking.table.gmax[None, :, None, :].astype(np.float64)
    return np.divide(g, gmax, out=np.zeros(g.shape), where=gmax > 0)


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
    g, present = _cut(ranking, k)
    table = ranking.table
    if rbu_relevance == "jar":
        gmax = table.gmax[None, :, None, :].astype(np.float64)
        r = (2.0**g - 1.0) / 2.0**gmax
    else:
        r = g / (max(4, table.max_grade) + 1.0)
    survive = exclusive_cumprod(1.0 - r)
    disc = p ** np.arange(g.shape[2], dtype=np.float64)[None, None, :]
    utility = (r * survive * disc[..., None] * table.W[None, :, None, :]).sum(axis=(2, 3))
    effort = e * (disc * present).sum(axis=2)
    value = (1.0 - p) * (utility - effort)
    return value * (p / (1.0 - p)) if rbu_scale == "paper" else value


def _novel_value(ranking: Ranking, g: np.ndarray, alpha: float) -> np.ndarray:
    """``sum_t w_t r(d_i,t) (1-alpha)^{c_t(i)}`` per rank."""
    c = seen_before(ranking)[:, :, : g.shape[2]]
    return (_linear_relevance(ranking, g) * (1.0 - alpha) ** c * ranking.table.W[None, :, None, :]).sum(axis=3)


@register(
    "EU",
    params={
        "alpha": Param(float, 0.5, "novelty penalty", low=0.0, high=1.0),
        "e": Param(float, 0.03, "effort per inspected document", low=0.0),
        "eu_discount": Param(str, "1/(1+log2(i))", "rank discount", ("1/(1+log2(i))", "log2(i+1)")),
    },
    cutoff="optional",
    tags={"graded", "intent_aware", "effort", "reconstructed", "whole_list"},
    citation="Yang & Lad, ICTIR 2009 (expected utility), in the form of " + AMIGO,
)
def eu(ranking: Ranking, k: int | None, alpha: float = 0.5, e: float = 0.03, eu_discount: str = "1/(1+log2(i))") -> FloatArray:
    """sum_i disc(i) [sum_t w_t r(d_i,t) (1-alpha)^{c_t(i)} - e] over the shown list (spec §2.6, reconstructed)."""
    g, present = _cut(ranking, k)
    i = np.arange(1, g.shape[2] + 1, dtype=np.float64)
    disc = 1.0 / (1.0 + np.log2(i)) if eu_discount == "1/(1+log2(i))" else 1.0 / np.log2(i + 1.0)
    return ((_novel_value(ranking, g, alpha) - e) * present * disc[None, None, :]).sum(axis=2)


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
    g, present = _cut(ranking, k)
    r = _linear_relevance(ranking, g)
    c = seen_before(ranking)[:, :, : g.shape[2]]
    open_tank = exclusive_cumsum(r) < h_max
    value = (r * (1.0 - alpha) ** c * open_tank * ranking.table.W[None, :, None, :]).sum(axis=3)
    if ct_time == "per_rank":
        return (value / np.arange(1, g.shape[2] + 1, dtype=np.float64)[None, None, :]).sum(axis=2)
    shown = np.maximum(np.minimum(ranking.lengths, g.shape[2]), 1)
    return value.sum(axis=2) / shown
