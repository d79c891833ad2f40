"""Rank-Biased Utility (docs/metrics.md#rbu-eu-and-ct; Amigó, Spina & Carrillo-de-Albornoz, SIGIR 2018), reference jar
conventions by default, and the per-document relevance probabilities the utility metrics share."""

from __future__ import annotations

import numpy as np

from evaluation._types import FloatArray
from evaluation.arrays import Ranking, TopicTable
from evaluation.metrics._common import cascade, cutoff_or_depth, per_doc, shown_sum
from evaluation.metrics.base import Param, register

AMIGO = "Amigó, Spina & Carrillo-de-Albornoz, An axiomatic analysis of diversity evaluation metrics, SIGIR 2018"


def relevance_probability(ranking: Ranking, mapping: str, depth: int, *, out: np.ndarray | None = None) -> np.ndarray:
    """Per-rank relevance probabilities ``r(d,t)`` ``(I, depth, R, T)``, computed per document:

    ``linear`` g/G_t (G_t = the aspect's top grade), ``jar`` (2^g - 1)/2^{G_t} (RBU jar),
    ``ntcir_linear`` g/(G+1) with G the scale maximum. Gathered into ``out`` when given (``depth`` the
    ranking's).
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

    return per_doc(ranking, ("relevance", mapping), build, depth, out=out)


@register(
    "RBU",
    params={
        "p": Param(
            float,
            0.8,
            "persistence, 0 < p < 1 (p = 1 makes every list 0 on the jar scale)",
            low=0.0,
            high=1.0,
            low_open=True,
            high_open=True,
        ),
        "e": Param(float, 0.03, "effort per inspected document", low=0.0),
        "rbu_scale": Param(str, "jar", "jar: (1-p) p^(i-1); paper: p^i (Eq. 11)", ("jar", "paper")),
        "rbu_relevance": Param(str, "jar", "jar: (2^g - 1)/2^gmax_t; ntcir_linear: g/(G+1), G = scale maximum", ("jar", "ntcir_linear")),
    },
    cutoff="optional",
    tags={"graded", "intent_aware", "effort", "tool:rbu", "whole_list"},
    citation=AMIGO + "; RBU reference jar",
)
def rbu(ranking: Ranking, k: int | None, *, p: float, e: float, rbu_scale: str, rbu_relevance: str) -> FloatArray:
    """Rank-Biased Utility: (1-p) sum_t w_t sum_i p^(i-1) r_it prod_{j<i}(1-r_jt) - e (1-p) sum_i p^(i-1).

    Whole list unless a cutoff is given (then RBU@k scores the top k; docs/metrics.md#rbu-eu-and-ct).
    Weights are used as given; every listed aspect counts.

    Slow reference: ``reference.rbu``.
    """
    depth = min(cutoff_or_depth(ranking, k), ranking.depth)
    table = ranking.table
    r = _rbu_terms(ranking, rbu_relevance)[:, :depth]
    disc = p ** np.arange(depth, dtype=np.float64)
    utility = table.topic_sum(np.einsum("pkr,k->pr", r, disc) * table.per_pair(table.W)[:, None])
    effort = e * shown_sum(ranking, disc)
    value = (1.0 - p) * (utility - effort)
    return value * (p / (1.0 - p)) if rbu_scale == "paper" else value


def _rbu_terms(ranking: Ranking, mapping: str) -> np.ndarray:
    """``r_it prod_{j<i} (1 - r_jt)`` over the whole depth ``(P, K, R)``, built once for every cutoff
    (a cutoff's terms are this array's leading ranks: every step runs along the ranks)."""

    def build() -> np.ndarray:
        return cascade(ranking, relevance_probability(ranking, mapping, ranking.depth))  # r_it prod_{j<i} (1 - r_jt)

    return ranking.memo(("rbu_terms", mapping), build)
