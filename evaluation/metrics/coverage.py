"""Coverage and set metrics (docs/metrics.md#coverage-and-set-metrics): I-rec, Prec, PMP, Ef-P, P-IA, S-RR@100%."""

from __future__ import annotations

import numpy as np

from evaluation._types import FloatArray
from evaluation.arrays import Ranking, TopicTable
from evaluation.metrics._common import covered, din_gain, relevant_count, safe_divide, top_total
from evaluation.metrics.base import Param, register

SAKAI_SONG = "Sakai & Song, Evaluating diversified search results using per-intent graded relevance, SIGIR 2011"


def intent_recall(ranking: Ranking, k: int | None) -> FloatArray:
    """Share of ``I_q^+`` covered by the top ``k`` (whole list when ``k`` is None)."""
    table = ranking.table
    limit = ranking.depth if k is None else k

    def compute() -> FloatArray:
        return safe_divide(table.topic_sum(covered(ranking, limit)), table.n_rel_intents)

    return ranking.memo(("I-rec", limit), compute, shared=True)  # read by the # measures


@register(
    "I-rec",
    tags={"normalised", "set", "binary", "tool:ntcireval", "tool:ndeval"},
    citation="Zhai, Cohen & Lafferty, SIGIR 2003 (subtopic recall); Sakai & Song, SIGIR 2011",
    aliases=("strec", "S-recall", "StRecall"),
)
def i_rec(ranking: Ranking, k: int) -> FloatArray:
    """Intent recall: |{i in I_q^+ covered in the top l}| / M+ (docs/metrics.md#coverage-and-set-metrics; ndeval strec).

    Slow reference: ``reference.i_rec``.
    """
    return intent_recall(ranking, k)


@register("Prec", tags={"normalised", "set", "binary", "gold"}, citation=SAKAI_SONG + " (gold standard)")
def prec(ranking: Ranking, k: int) -> FloatArray:
    """Precision: documents relevant to at least one intent in the top l, divided by l (docs/metrics.md#coverage-and-set-metrics).

    Slow reference: ``reference.prec``.
    """
    return top_total(ranking, "relT", lambda table: table.relevant_doc.astype(np.float64), k) / k


def _pmp_undefined(params: dict) -> str:
    """Why PMP can be NaN on a topic with relevant documents (docs/metrics.md#coverage-and-set-metrics)."""
    if params.get("pmp_equal") == "tie":
        return ""
    return (
        "the topic's kept intent weights are all equal, so there is no most popular intent "
        "(pmp_equal=nan; pmp_equal=tie applies pmp_tie instead, docs/metrics.md#coverage-and-set-metrics)"
    )


@register(
    "PMP",
    params={
        "pmp_tie": Param(str, "lowest", "tie for the most popular intent: lowest id or union", ("lowest", "union")),
        "pmp_equal": Param(str, "nan", "all weights over I+ equal: NaN (left out per measure) or apply pmp_tie", ("nan", "tie")),
    },
    tags={"normalised", "set", "binary", "gold"},
    citation=SAKAI_SONG + " (precision for the most popular intent)",
    undefined=_pmp_undefined,
)
def pmp(ranking: Ranking, k: int, *, pmp_tie: str, pmp_equal: str) -> FloatArray:
    """Precision for the most popular intent i* = argmax_{I_q^+} w_i (docs/metrics.md#coverage-and-set-metrics).

    Where all weights over ``I_q^+`` are equal and ``M+ > 1`` there is no most popular intent:
    NaN with ``pmp_equal=nan`` (default; analyses leave the topic out for PMP only), else
    (``pmp_equal=tie``) every intent of ``I_q^+`` is tied for the top and ``pmp_tie`` decides
    (lowest id: precision for that intent; union: for any intent of ``I_q^+``).

    Slow reference: ``reference.pmp``.
    """
    table = ranking.table

    def hits(table: TopicTable) -> np.ndarray:
        w = np.where(table.rel, table.W, -np.inf)
        best = w.max(axis=1, keepdims=True)
        chosen = table.rel & (w == best)
        if pmp_tie == "lowest":
            first = np.argmax(chosen, axis=1)
            chosen = np.zeros_like(chosen)
            chosen[np.arange(table.n_topics), first] = table.rel.any(axis=1)
        return table.relevant_to(chosen).astype(np.float64)

    value = top_total(ranking, ("pmp", pmp_tie), hits, k) / k
    if pmp_equal == "tie":
        return value
    meaningless = table.uniform_weights & (table.n_rel_intents > 1)
    return np.where(meaningless, np.nan, value)


@register(
    "Ef-P",
    tags={"normalised", "set", "gold", "type_sensitive", "reconstructed"},
    citation="Sakai, WWW 2012 (effective precision); definition reconstructed in docs/metrics.md#coverage-and-set-metrics",
)
def ef_p(ranking: Ranking, k: int) -> FloatArray:
    """Effective precision: documents with positive DIN gain in the top l, divided by l (docs/metrics.md#coverage-and-set-metrics).

    Slow reference: ``reference.ef_p``.
    """
    return (din_gain(ranking)[:k] > 0).sum(axis=0) / k


@register(
    "P-IA", tags={"normalised", "intent_aware", "binary", "tool:ndeval"}, citation="Agrawal et al., WSDM 2009; ndeval", aliases=("P_IA",)
)
def p_ia(ranking: Ranking, k: int) -> FloatArray:
    """Intent-aware precision: (1/W+) sum_i w_i |{r <= k : J_i(r) = 1}| / k (docs/metrics.md#coverage-and-set-metrics).

    Slow reference: ``reference.p_ia``.
    """
    return top_total(ranking, "pia", lambda table: table.doc_sum(table.grades >= 1, table.W_hat), k) / k


@register(
    "S-RR@100%",
    cutoff="optional",
    tags={"normalised", "set", "binary"},
    citation="Zhai, Cohen & Lafferty, SIGIR 2003 (as described by Amigó et al., SIGIR 2018)",
)
def s_rr(ranking: Ranking, k: int | None) -> FloatArray:
    """1 / (first rank at which every intent of I_q^+ is covered); 0 if never (docs/metrics.md#coverage-and-set-metrics).

    Slow reference: ``reference.s_rr``.
    """
    table = ranking.table
    limit = min(ranking.depth if k is None else k, ranking.depth)

    def first_complete() -> np.ndarray:
        """0-based rank at which every intent of I_q^+ is covered; ``depth`` when never (or M+ = 0)."""
        first = (relevant_count(ranking) == 0).sum(axis=1)  # per pair: ranks before its first relevant document
        return table.per_topic(np.maximum, first, ranking.depth)

    last = ranking.memo(("S-RR",), first_complete)
    return np.where(last < limit, 1.0 / (last + 1.0), 0.0)
