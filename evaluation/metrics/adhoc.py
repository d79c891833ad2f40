"""Ad hoc baselines (docs/metrics.md#ad-hoc-baselines): nDCG, Q, AP, ERR, nERR, RBP, EBR and iRBU on one
gain per document, with NTCIREVAL's conventions; and trec_eval's P, R, RR, Success and Judged
(docs/metrics.md#trec_eval-measures), with nDCG and AP over the whole list as trec_eval's ndcg and map.

The per-document gain comes from the per-intent grades: ``gain=max`` (default) takes the document's
highest grade over the topic's intents, ``gain=global`` the D-measures' global gain ``sum_i w_i g_i``
(then nDCG equals D-nDCG and Q equals D-Q). The ideal list holds the topic's documents with a positive
gain, gain descending. These metrics ignore intents: they are the baselines a diversity metric has to
beat, scored on the same run pairs as every other metric.
"""

from __future__ import annotations

import numpy as np

from evaluation._types import FloatArray
from evaluation.arrays import Ranking, TopicTable
from evaluation.metrics._common import RANK_AXIS, at, discount, document_gain, per_doc, ranks, safe_divide, scan, stop_terms
from evaluation.metrics.base import Param, register
from evaluation.metrics.dmeasures import BETA_Q, SAKAI_Q, ndcg_at, q_at, ranked_blended_ratio

NTCIREVAL = "NTCIREVAL (Sakai) ad hoc measures"
SAKAI_ZENG = "Sakai & Zeng, Which diversity evaluation measures are 'good'?, SIGIR 2019"
CHAPELLE = "Chapelle, Metzler, Zhang & Grinspan, Expected reciprocal rank, CIKM 2009"
TAGS = {"adhoc", "graded", "tool:ntcireval"}
TREC_EVAL = "trec_eval (NIST), as ir_measures names it"
TREC_TAGS = {"adhoc", "binary", "tool:trec_eval"}

GAIN_KEYS = {"max": "max", "global": "GG"}  # parameter value -> TopicTable.doc_gain key
GAIN = Param(str, "max", "per-document gain: highest grade over the intents (max) or sum_i w_i g_i (global)", ("max", "global"))
AP_NORM = Param(str, "min", "AP@l's denominator: min(l, R) (NTCIREVAL) or R (trec_eval's map_cut, ir_measures' AP@l)", ("min", "R"))
REL = Param(int, 1, "lowest relevant grade (ir_measures' rel, trec_eval's -l)", low=1)
ERR_GMAX = Param(str, "topic", "G in p = g/(G+1) and RBP's g/G: the topic's highest gain or the grade scale's maximum", ("topic", "scale"))


def persistence(default: float) -> Param:
    return Param(float, default, "persistence, 0 < p < 1", low=0.0, high=1.0, low_open=True, high_open=True)


def _gains(ranking: Ranking, gain: str) -> np.ndarray:
    """The per-document gains at every rank ``(K, R, T)``."""
    return document_gain(ranking, GAIN_KEYS[gain])


def top_gain(table: TopicTable, gain: str, err_gmax: str) -> FloatArray:
    """``G`` per topic: the largest gain of the topic's ideal list, or the largest gain the scale allows
    (``max(4, highest grade)``; times the topic's weight sum for the global gain)."""
    if err_gmax == "topic":
        return table.gain_ideal(GAIN_KEYS[gain], 1)[:, 0]
    scale = float(max(4, table.max_grade))
    return scale * table.W.sum(axis=1) if gain == "global" else np.full(table.n_topics, scale)


def _stops(ranking: Ranking, gain: str, err_gmax: str) -> np.ndarray:
    """``p(r) prod_{k<r} (1 - p(k))``, ``p = g/(G+1)``: where a cascade user stops ``(K, R, T)``."""
    divisor = top_gain(ranking.table, gain, err_gmax) + 1.0
    return ranking.memo(("adhoc_stop", gain, err_gmax), lambda: stop_terms(_gains(ranking, gain), divisor[None, None, :], RANK_AXIS))


def _rank_column(depth: int) -> np.ndarray:
    return ranks(depth)[:, None, None]


def _top_sum(terms: np.ndarray, k: int) -> np.ndarray:
    """``sum_{r<=k}`` of per-rank terms ``(K, R, T)``: one sum per cutoff is cheaper than a running sum
    over every rank when a metric is asked at a few cutoffs."""
    return terms[:k].sum(axis=0)


@register(
    "nDCG",
    params={"gain": GAIN},
    cutoff="either",
    tags=TAGS | {"normalised"},
    citation="Järvelin & Kekäläinen, TOIS 2002; " + NTCIREVAL + " (MSnDCG); " + TREC_EVAL + " (ndcg, ndcg_cut)",
)
def ndcg(ranking: Ranking, k: int | None, *, gain: str) -> FloatArray:
    """sum_{r<=l} g(r)/log2(r+1) over the same sum on the ideal list (NTCIREVAL MSnDCG; docs/metrics.md#ad-hoc-baselines).

    Without a cutoff, the whole list over the whole ideal list (trec_eval's ndcg; docs/metrics.md#trec_eval-measures).

    Slow reference: ``reference_adhoc.adhoc_ndcg``.
    """
    key = GAIN_KEYS[gain]
    if k is not None:
        return ndcg_at(ranking, key, lambda: _gains(ranking, gain), k, ideal=key)
    table = ranking.table

    def whole_ideal() -> FloatArray:
        length = max(int(table.n_positive(key).max(initial=0)), 1)
        return (table.gain_ideal(key, length) * discount("log", length)[None, :]).sum(axis=1)

    dcg = (_gains(ranking, gain) * discount("log", ranking.depth)[:, None, None]).sum(axis=RANK_AXIS)
    return safe_divide(dcg, table.memo(("adhoc_whole_ideal_dcg", key), whole_ideal))


@register(
    "Q", params={"gain": GAIN, "beta": BETA_Q}, tags=TAGS | {"normalised"}, citation=SAKAI_Q + "; " + NTCIREVAL, aliases=("Q-measure",)
)
def q_measure(ranking: Ranking, k: int, *, gain: str, beta: float) -> FloatArray:
    """Q@l = sum_{r<=l} I(r) BR(r) / min(l, R) on the per-document gains (docs/metrics.md#ad-hoc-baselines).

    Slow reference: ``reference_adhoc.adhoc_q``.
    """
    key = GAIN_KEYS[gain]
    return q_at(ranking, key, lambda: _gains(ranking, gain), k, beta, ideal=key)


@register(
    "AP",
    params={"gain": GAIN, "ap_norm": AP_NORM, "rel": REL},
    cutoff="either",
    tags=TAGS | {"normalised", "binary"},
    citation=NTCIREVAL + " (AP@l divides by min(l, R)); " + TREC_EVAL + " (map, map_cut divide by R)",
    aliases=("MAP",),
)
def average_precision(ranking: Ranking, k: int | None, *, gain: str, ap_norm: str, rel: int) -> FloatArray:
    """AP@l = sum_{r<=l} I(r) C(r)/r / min(l, R), relevant = positive gain (docs/metrics.md#ad-hoc-baselines).

    ``ap_norm=R`` divides by R (trec_eval's map_cut); without a cutoff, the whole list over R (trec_eval's map);
    ``rel`` > 1 also asks a grade >= rel (trec_eval's -l; docs/metrics.md#trec_eval-measures).

    Slow reference: ``reference_adhoc.adhoc_ap``.
    """

    def build() -> np.ndarray:
        relevant = _gains(ranking, gain) > 0
        if rel > 1:
            relevant &= _relevant(ranking, rel, None)
        return scan(np.add, relevant.astype(np.int32)) * relevant / _rank_column(ranking.depth)  # I(r) C(r) / r

    terms = ranking.memo(("adhoc_ap", gain, rel), build)
    big_r = ranking.table.n_positive(GAIN_KEYS[gain]) if rel == 1 else n_relevant(ranking.table, rel, GAIN_KEYS[gain])
    if k is None:
        return safe_divide(_top_sum(terms, ranking.depth), big_r)
    return safe_divide(_top_sum(terms, k), big_r if ap_norm == "R" else np.minimum(k, big_r))


def _err_at(ranking: Ranking, k: int, gain: str, err_gmax: str) -> np.ndarray:
    terms = ranking.memo(("adhoc_err", gain, err_gmax), lambda: _stops(ranking, gain, err_gmax) / _rank_column(ranking.depth))
    return _top_sum(terms, k)


@register("ERR", params={"gain": GAIN, "err_gmax": ERR_GMAX}, tags=TAGS, citation=CHAPELLE + "; " + NTCIREVAL)
def err(ranking: Ranking, k: int, *, gain: str, err_gmax: str) -> FloatArray:
    """ERR@l = sum_{r<=l} p(r)/r prod_{k<r} (1 - p(k)), p = g/(G+1) (docs/metrics.md#ad-hoc-baselines).

    Slow reference: ``reference_adhoc.adhoc_err``.
    """
    return _err_at(ranking, k, gain, err_gmax)


@register("nERR", params={"gain": GAIN, "err_gmax": ERR_GMAX}, tags=TAGS | {"normalised"}, citation=CHAPELLE + "; " + NTCIREVAL)
def nerr(ranking: Ranking, k: int, *, gain: str, err_gmax: str) -> FloatArray:
    """ERR@l over ERR@l of the ideal list (docs/metrics.md#ad-hoc-baselines).

    Slow reference: ``reference_adhoc.adhoc_nerr``.
    """
    table = ranking.table
    depth = ranking.depth

    def ideal() -> np.ndarray:
        gains = table.gain_ideal(GAIN_KEYS[gain], depth)
        divisor = top_gain(table, gain, err_gmax)[:, None] + 1.0
        return np.cumsum(stop_terms(gains, divisor, 1) / ranks(depth)[None, :], axis=1)

    best = table.memo(("adhoc_ideal_err", gain, err_gmax, depth), ideal)
    return safe_divide(_err_at(ranking, k, gain, err_gmax), at(best, k, axis=1))


@register(
    "RBP",
    params={"gain": GAIN, "err_gmax": ERR_GMAX, "p": persistence(0.95)},
    tags=TAGS,
    citation="Moffat & Zobel, TOIS 2008; " + NTCIREVAL,
)
def rbp(ranking: Ranking, k: int, *, gain: str, err_gmax: str, p: float) -> FloatArray:
    """RBP@l = (1-p) sum_{r<=l} p^(r-1) g(r)/G (docs/metrics.md#ad-hoc-baselines).

    Slow reference: ``reference_adhoc.adhoc_rbp``.
    """
    disc = p ** np.arange(ranking.depth, dtype=np.float64)
    terms = ranking.memo(("adhoc_rbp", gain, p), lambda: _gains(ranking, gain) * disc[:, None, None])
    return (1.0 - p) * safe_divide(_top_sum(terms, k), top_gain(ranking.table, gain, err_gmax))


@register(
    "EBR",
    params={"gain": GAIN, "err_gmax": ERR_GMAX, "beta": BETA_Q},
    tags=TAGS,
    citation=SAKAI_ZENG + " (expected blended ratio); " + NTCIREVAL,
)
def ebr(ranking: Ranking, k: int, *, gain: str, err_gmax: str, beta: float) -> FloatArray:
    """EBR@l = sum_{r<=l} BR(r) p(r) prod_{k<r} (1 - p(k)) (docs/metrics.md#ad-hoc-baselines).

    ERR's stopping user with Q's blended ratio as the utility at the stopping rank.

    Slow reference: ``reference_adhoc.adhoc_ebr``.
    """
    key = GAIN_KEYS[gain]

    def build() -> np.ndarray:
        terms = ranked_blended_ratio(ranking, lambda: _gains(ranking, gain), beta, key)
        terms *= _stops(ranking, gain, err_gmax)
        return terms

    return _top_sum(ranking.memo(("adhoc_ebr", gain, err_gmax, beta), build), k)


@register(
    "iRBU",
    params={"gain": GAIN, "err_gmax": ERR_GMAX, "p": persistence(0.8)},
    tags=TAGS,
    citation=SAKAI_ZENG + " (intentwise RBU); " + NTCIREVAL,
)
def irbu(ranking: Ranking, k: int, *, gain: str, err_gmax: str, p: float) -> FloatArray:
    """iRBU@l = sum_{r<=l} p^r p(r) prod_{k<r} (1 - p(k)) (docs/metrics.md#ad-hoc-baselines).

    RBU of a single intent without the effort term, on the paper's p^r scale.

    Slow reference: ``reference_adhoc.adhoc_irbu``.
    """
    disc = p ** ranks(ranking.depth)
    terms = ranking.memo(("adhoc_irbu", gain, err_gmax, p), lambda: _stops(ranking, gain, err_gmax) * disc[:, None, None])
    return _top_sum(terms, k)


# trec_eval's binary measures (docs/metrics.md#trec_eval-measures): relevant = highest grade over the intents >= rel
def _relevant(ranking: Ranking, rel: int, k: int | None) -> np.ndarray:
    """``(min(k, K), R, T)`` booleans: the document at each rank has a grade >= ``rel`` for some intent."""
    return per_doc(ranking, ("grade_at_least", rel), lambda table: table.doc_max_grade >= rel, k)


def n_relevant(table: TopicTable, rel: int, gain: str = "max") -> np.ndarray:
    """Judged documents with a grade >= ``rel`` (for some intent) and a positive per-document ``gain`` per
    topic: trec_eval's ``num_rel``."""

    def build() -> np.ndarray:
        n = table.n_docs
        kept = (table.doc_max_grade[:n] >= rel) & (table.doc_gain(gain)[:n] > 0)
        return np.bincount(table.topic_of_row[:n][kept], minlength=table.n_topics).astype(np.float64)

    return table.memo(("n_relevant", rel, gain), build)


@register("P", params={"rel": REL}, tags=TREC_TAGS, citation=TREC_EVAL + " (P_k)", aliases=("Precision",))
def precision(ranking: Ranking, k: int, *, rel: int) -> FloatArray:
    """P@k = |{r <= k : g(r) >= rel}| / k, k even past the list's end (trec_eval's P_k; docs/metrics.md#trec_eval-measures).

    Slow reference: ``reference_adhoc.trec_p``.
    """
    return _relevant(ranking, rel, k).sum(axis=RANK_AXIS) / float(k)


@register("R", params={"rel": REL}, tags=TREC_TAGS | {"normalised"}, citation=TREC_EVAL + " (recall_k)", aliases=("Recall",))
def recall(ranking: Ranking, k: int, *, rel: int) -> FloatArray:
    """R@k = |{r <= k : g(r) >= rel}| / |{judged d : g(d) >= rel}| (trec_eval's recall_k; docs/metrics.md#trec_eval-measures).

    Slow reference: ``reference_adhoc.trec_recall``.
    """
    return safe_divide(_relevant(ranking, rel, k).sum(axis=RANK_AXIS), n_relevant(ranking.table, rel))


@register("Success", params={"rel": REL}, tags=TREC_TAGS, citation=TREC_EVAL + " (success_k)")
def success(ranking: Ranking, k: int, *, rel: int) -> FloatArray:
    """Success@k = 1 if some r <= k has g(r) >= rel, else 0 (trec_eval's success_k; docs/metrics.md#trec_eval-measures).

    Slow reference: ``reference_adhoc.trec_success``.
    """
    return _relevant(ranking, rel, k).any(axis=RANK_AXIS).astype(np.float64)


@register("RR", params={"rel": REL}, cutoff="optional", tags=TREC_TAGS, citation=TREC_EVAL + " (recip_rank)", aliases=("MRR",))
def reciprocal_rank(ranking: Ranking, k: int | None, *, rel: int) -> FloatArray:
    """RR@k = 1 / (rank of the first document with g >= rel), 0 if none in the top k (trec_eval's recip_rank;
    docs/metrics.md#trec_eval-measures).

    Slow reference: ``reference_adhoc.trec_rr``.
    """
    found = _relevant(ranking, rel, k)
    first = np.argmax(found, axis=RANK_AXIS) + 1.0
    return np.where(found.any(axis=RANK_AXIS), 1.0 / first, 0.0)


@register("Judged", cutoff="either", tags={"adhoc", "judging", "tool:ir_measures"}, citation="ir_measures' Judged@k (MacAvaney et al.)")
def judged(ranking: Ranking, k: int | None) -> FloatArray:
    """Judged@k = judged documents (any grade, 0 included) in the top k / min(k, list length); the whole list
    without a cutoff (ir_measures' Judged; docs/metrics.md#trec_eval-measures).

    Slow reference: ``reference_adhoc.judged``.
    """
    count = per_doc(ranking, ("judged",), lambda table: table.judged_row, k).sum(axis=RANK_AXIS)
    shown = ranking.lengths if k is None else np.minimum(ranking.lengths, k)
    return safe_divide(count, shown)
