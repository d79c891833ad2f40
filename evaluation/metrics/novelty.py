"""Novelty-biased cascade metrics of ndeval (docs/metrics.md#cascade-metrics): alpha-DCG, alpha-nDCG, ERR-IA, nERR-IA,
NRBP, nNRBP, and the greedy ideal list they share (docs/metrics.md#ideal-lists).

Novelty gain with intent weights renormalised over ``I_q^+`` (``ŵ_i = w_i / W+``)::

    n(r) = sum_i ŵ_i J_i(r) (1 - alpha)^{c_i(r)}

which is ndeval's ``sum_i J_i (1-alpha)^c_i / M+`` when the weights are uniform.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from evaluation._grouped import fit
from evaluation._types import BoolArray, FloatArray, IntArray
from evaluation.arrays import Ranking, TopicTable
from evaluation.metrics._common import at, cutoff_or_depth, discount, novelty_decay, per_doc, relevant, safe_divide, scan
from evaluation.metrics.base import Param, register

CLARKE = "Clarke et al., Novelty and diversity in information retrieval evaluation, SIGIR 2008"
CLARKE_NRBP = "Clarke, Kolla & Vechtomova, An effectiveness measure for ambiguous and underspecified queries, ICTIR 2009"
CHAPELLE_IA = "Chapelle et al., Intent-based diversification of web search results, IRJ 2011; ndeval"

ALPHA = Param(float, 0.5, "novelty penalty: each earlier document of the intent multiplies its gain by (1 - alpha)", low=0.0, high=1.0)
BETA = Param(float, 0.5, "NRBP patience", low=0.0, high=1.0, low_open=True)
GRADED = Param(bool, False, "use g_i/G_i instead of binary J_i (Amigó et al.; not ndeval)")
QUIRK = Param(bool, False, "reproduce pyndeval's unnormalised @1 values (docs/metrics.md#cascade-metrics tool quirk)")
NEGLIGIBLE = 1e-17
GREEDY_MIN_STEPS = (
    57  # the ideal length nNRBP asks for at the default beta 0.5 (0.5^57 < NEGLIGIBLE), so one pass serves it and every cutoff
)


def _relevance(table_or_grades: np.ndarray, gmax: np.ndarray, graded: bool) -> np.ndarray:
    if not graded:
        return (table_or_grades >= 1).astype(np.float64)
    return np.divide(table_or_grades, gmax, out=np.zeros(table_or_grades.shape), where=gmax > 0)


def novelty_gain(ranking: Ranking, alpha: float, graded: bool = False) -> np.ndarray:
    """``n(r)`` for every rank, run and topic: ``(K, R, T)``."""

    def weighted(table: TopicTable) -> np.ndarray:
        topic = table.topic_of_row
        return _relevance(table.grades, table.gmax[topic], True) * table.W_hat[topic]

    table = ranking.table

    def build() -> np.ndarray:
        decay = novelty_decay(ranking, alpha)  # J_i (1 - alpha)^{c_i}
        with ranking.scratch() as weighted_decay:
            if not graded:
                np.multiply(decay, table.per_pair(table.W_hat)[:, None, None], out=weighted_decay)
            else:
                np.multiply(per_doc(ranking, "graded_novelty_value", weighted), decay, out=weighted_decay)
            return table.topic_sum(weighted_decay)

    return ranking.memo(("novelty", alpha, graded), build, shared=True)  # read by alpha#-IA


# THE GREEDY IDEAL ===================================================================================
#
# docs/metrics.md#ideal-lists; its loop version is ``reference.greedy_ideal``. Three pieces:
# ``greedy_ideal_gains`` (the entry point, cached per table), ``_candidate_groups`` (what each step
# chooses among) and ``_greedy_search`` (the steps, all topics at once).


def greedy_ideal_gains(table: TopicTable, alpha: float, length: int, graded: bool = False) -> FloatArray:
    """Novelty gains ``n*(r)`` of the greedy ideal list, ``(T, length)`` (docs/metrics.md#ideal-lists).

    The list only covers relevant documents: every later (judged, nonrelevant) document has gain 0.
    One search of at least :data:`GREEDY_MIN_STEPS` steps is cached per ``(alpha, graded)`` and
    serves every shorter length.
    """
    key = ("greedy", alpha, graded)
    longest = max(int(table.n_rel_docs.max(initial=0)), 1)  # no list has more relevant documents
    gains = table._cache.get(key)
    if gains is None or gains.shape[1] < min(length, longest):
        gains = table._cache[key] = _greedy_search(table, alpha, graded, steps=min(max(length, GREEDY_MIN_STEPS), longest))
    return fit(gains, length)


@dataclass(frozen=True)
class _Groups:
    """The relevant documents of every topic, grouped by what the search reads of them (``G`` groups a
    topic): their ``J_i`` vector, or their grade vector when graded.

    Documents of a group score the same at every step, and a tie goes to the greatest docid, so a
    step only compares each group's greatest remaining docid: its *head*.
    """

    values: FloatArray  # (T, G, I): each group's v_i (J_i, or g_i/G_i when graded); 0 for padding groups
    hits: BoolArray  # (T, G, I): each group's J_i, what a pick adds to the counts c_i
    members: IntArray  # each group's documents as docid ranks (string order), greatest first, then -1
    start: IntArray  # (T, G): where each group's documents begin in ``members`` (padding groups: at a -1)


def _candidate_groups(table: TopicTable, graded: bool) -> _Groups:
    """The :class:`_Groups` of every topic (a topic without relevant documents has padding groups only)."""
    T, I = table.n_topics, table.n_intents
    row = np.flatnonzero(table.relevant_doc[: table.n_docs])  # the relevant documents
    topic = table.topic_of_row[row]
    levels = table.grades[row] if graded else table.grades[row] >= 1  # all that s(d) reads of a document
    descending = _by_docid_descending(table, row)
    docid_rank = np.empty(row.size, dtype=np.int64)  # string order of the docids
    docid_rank[descending] = np.arange(row.size)[::-1]
    code = _row_codes(topic, levels)
    order = descending[np.argsort(code[descending], kind="stable")]  # group by group, greatest docid first
    code, topic, levels, docid_rank = code[order], topic[order], levels[order], docid_rank[order]
    fresh = np.ones(row.size, dtype=bool)  # the document opens a group
    fresh[1:] = code[1:] != code[:-1]
    group = np.cumsum(fresh) - 1
    local = group - group[np.searchsorted(topic, topic)]  # the group's number within its topic
    G = int(local.max(initial=0)) + 1
    group_levels = np.zeros((T, G, I), dtype=table.grades.dtype)
    group_levels[topic, local] = levels
    # every group's members followed by one -1, groups in (topic, group) order: the j-th document
    # lands at j + cell, after one -1 for each group before its own
    cell = topic * G + local
    members = np.full(row.size + T * G, -1, dtype=np.int64)
    members[np.arange(row.size) + cell] = docid_rank
    start = np.searchsorted(cell, np.arange(T * G)) + np.arange(T * G)
    values = _relevance(group_levels, table.gmax[:, None, :], graded)
    return _Groups(values, group_levels >= 1, members, start.reshape(T, G))


def _by_docid_descending(table: TopicTable, row: IntArray) -> IntArray:
    """Positions of ``row`` ordered by docid, greatest first, equal docids (of different topics) in row
    order: ``sorted(..., reverse=True)`` of the names, done by pyarrow's stable sort of the strings when the
    collection's look-up holds them (:meth:`~evaluation._factorize.Lookup.descending`), else by Python."""
    found = table.docid_lookup.descending(table.row_keys[row] % table.n_docids)
    if found is not None:
        return found
    names = table.docids[row].tolist()
    return np.array(sorted(range(row.size), key=names.__getitem__, reverse=True), dtype=np.int64)


def _row_codes(first: IntArray, rest: np.ndarray) -> IntArray:
    """One integer per row of ``[first, rest]`` (non-negative integers), equal for equal rows and ordered like them."""
    code = first.astype(np.int64)
    for column in rest.T.astype(np.int64):
        base = int(column.max(initial=0)) + 1
        if int(code.max(initial=0)) >= 2**62 // base:  # renumber the codes so far before they would overflow
            code = np.unique(code, return_inverse=True)[1].reshape(-1)
        code = code * base + column
    return code


def _greedy_search(table: TopicTable, alpha: float, graded: bool, *, steps: int) -> FloatArray:
    """The first ``steps`` gains ``n*(r)`` of the greedy ideal of every topic, ``(T, steps)``.

    Each step places, in every topic, the document maximising ``s(d) = sum_i a_i v_i(d) (1-alpha)^{c_i}``
    (``a_i = 1`` when the topic's weights over ``I+`` are equal, as in ndeval, else ``ŵ_i``), summed
    intent by intent in intent order as ndeval does; ties go to the greatest docid. The placed
    document earns ``n*(r) = sum_i v_i ŵ_i (1-alpha)^{c_i}`` (docs/metrics.md#cascade-metrics).
    """
    groups = _candidate_groups(table, graded)
    T, G, I = groups.values.shape
    powers = (1.0 - alpha) ** np.arange(steps + 1, dtype=np.float64)  # (1-alpha)^c for c = 0..steps
    a = np.where(table.uniform_weights[:, None], table.rel.astype(np.float64), table.W_hat)  # (T, I)
    values_by_intent = np.moveaxis(groups.values, 2, 0).copy()  # (I, T, G): summing over the first axis goes intent by intent
    placed = table.n_rel_docs[:, None] > np.arange(steps)  # (T, steps): a relevant document is left to place
    # groups flat, topic after topic: a topic's pick is ``first + best``
    first = np.arange(T) * G
    values, hits = groups.values.reshape(T * G, I), groups.hits.reshape(T * G, I).astype(np.int64)
    next_member = groups.start.reshape(-1).copy()  # each group's head in ``groups.members``
    members = groups.members + 1  # docid ranks + 1: 0 past a group's last document
    head = members[next_member]  # each group's head, docid rank + 1 (0: the group is used up)
    penalty = np.where(members == 0, -np.inf, 0.0)  # at each member position: added to the score of a group headed there
    used_up = penalty[next_member]  # added to a used-up group's score
    counts = np.zeros((T, I), dtype=np.int64)  # c_i
    decays = np.empty((steps, T, I))  # (1-alpha)^{c_i} before each step
    picks = np.empty((steps, T), dtype=np.int64)
    weighted = np.empty((I, T, G))
    score = np.empty((T, G))
    top = np.empty((T, 1))
    tied = np.empty((T, G), dtype=bool)
    tied_heads = np.empty((T, G), dtype=np.int64)
    a_decay = np.empty((T, I))
    a_decay_by_intent = a_decay.T[:, :, None]  # a view: (I, T, 1), refreshed in place every step
    heads, used_ups = head.reshape(T, G), used_up.reshape(T, G)  # views of the flat arrays
    for step in range(steps):
        decay = np.take(powers, counts, out=decays[step])
        np.multiply(a, decay, out=a_decay)
        np.multiply(values_by_intent, a_decay_by_intent, out=weighted)
        np.add.reduce(weighted, axis=0, out=score)  # s(d) of every head, (T, G)
        score += used_ups
        np.equal(score, np.maximum.reduce(score, axis=1, keepdims=True, out=top), out=tied)
        best = np.multiply(tied, heads, out=tied_heads).argmax(axis=1)  # ties: greatest docid (used-up heads are 0)
        pick = np.add(first, best, out=picks[step])
        counts += hits[pick]
        moved = next_member[pick] + placed[:, step]  # a topic with nothing left to place keeps its (ignored) pick
        next_member[pick] = moved
        head[pick] = members[moved]
        used_up[pick] = penalty[moved]
    gains = (values[picks] * decays * table.W_hat).sum(axis=2).T  # n*(r) of each placed document
    return np.where(placed, gains, 0.0)


def _ideal_cumulative(ranking: Ranking, alpha: float, graded: bool, disc: str, k: int) -> FloatArray:
    table = ranking.table
    ideal = greedy_ideal_gains(table, alpha, k, graded)
    return np.cumsum(ideal * discount(disc, k)[None, :], axis=1)[:, k - 1]


def _cumulative_gain(ranking: Ranking, alpha: float, graded: bool, disc: str) -> np.ndarray:
    n = novelty_gain(ranking, alpha, graded)
    return ranking.memo(("novelty_cum", alpha, graded, disc), lambda: scan(np.add, n * discount(disc, ranking.depth)[:, None, None]))


def _ideal_ideal(alpha: float, disc: str, k: int) -> float:
    """Normaliser of a list whose every document is relevant to every intent (weights sum to 1)."""
    return float((((1.0 - alpha) ** np.arange(k)) * discount(disc, k)).sum())


def _rank1_count(ranking: Ranking) -> FloatArray:
    return ranking.table.topic_sum(relevant(ranking)[:, 0]).astype(np.float64)


def _collection_normalised(ranking: Ranking, k: int, alpha: float, graded: bool, quirk: bool, disc: str) -> FloatArray:
    if quirk and k == 1:
        return _rank1_count(ranking)
    value = at(_cumulative_gain(ranking, alpha, graded, disc), k) / _ideal_ideal(alpha, disc, k)
    return np.where(ranking.table.W_plus > 0, value, 0.0)


def _ideal_normalised(ranking: Ranking, k: int, alpha: float, graded: bool, disc: str) -> FloatArray:
    return safe_divide(at(_cumulative_gain(ranking, alpha, graded, disc), k), _ideal_cumulative(ranking, alpha, graded, disc, k))


CASCADE_TAGS = {"intent_aware", "binary", "cascade", "tool:ndeval"}


@register(
    "alpha-DCG",
    params={"alpha": ALPHA, "graded": GRADED, "ndeval_rank1_quirk": QUIRK},
    tags=CASCADE_TAGS | {"normalised"},
    citation=CLARKE + "; ndeval normalisation",
    aliases=("α-DCG", "alpha_DCG", "α_DCG"),
)
def alpha_dcg(ranking: Ranking, k: int, *, alpha: float, graded: bool, ndeval_rank1_quirk: bool) -> FloatArray:
    """sum_{r<=k} n(r)/log2(r+1) over the ideal-ideal list (ndeval's "alpha-DCG"; docs/metrics.md#cascade-metrics).

    Slow reference: ``reference.alpha_dcg``.
    """
    return _collection_normalised(ranking, k, alpha, graded, ndeval_rank1_quirk, "log")


@register(
    "alpha-nDCG", params={"alpha": ALPHA, "graded": GRADED}, tags=CASCADE_TAGS, citation=CLARKE, aliases=("α-nDCG", "alpha_nDCG", "α_nDCG")
)
def alpha_ndcg(ranking: Ranking, k: int, *, alpha: float, graded: bool) -> FloatArray:
    """sum_{r<=k} n(r)/log2(r+1) over the same sum on the greedy ideal (docs/metrics.md#cascade-metrics).

    Slow reference: ``reference.alpha_ndcg``.
    """
    return _ideal_normalised(ranking, k, alpha, graded, "log")


@register(
    "ERR-IA",
    params={"alpha": ALPHA, "graded": GRADED, "ndeval_rank1_quirk": QUIRK},
    tags=CASCADE_TAGS | {"normalised"},
    citation=CHAPELLE_IA,
    aliases=("ERR_IA",),
)
def err_ia(ranking: Ranking, k: int, *, alpha: float, graded: bool, ndeval_rank1_quirk: bool) -> FloatArray:
    """TREC's ERR-IA: sum_{r<=k} n(r)/r over the ideal-ideal list (ndeval; docs/metrics.md#cascade-metrics).

    Slow reference: ``reference.err_ia``.
    """
    return _collection_normalised(ranking, k, alpha, graded, ndeval_rank1_quirk, "rr")


@register("nERR-IA", params={"alpha": ALPHA, "graded": GRADED}, tags=CASCADE_TAGS, citation=CHAPELLE_IA, aliases=("nERR_IA",))
def nerr_ia(ranking: Ranking, k: int, *, alpha: float, graded: bool) -> FloatArray:
    """sum_{r<=k} n(r)/r over the same sum on the greedy ideal (ndeval; docs/metrics.md#cascade-metrics).

    Slow reference: ``reference.nerr_ia``.
    """
    return _ideal_normalised(ranking, k, alpha, graded, "rr")


def _nrbp_length(table: TopicTable, beta: float, depth: int) -> int:
    """Length of the ideal list for nNRBP: every relevant document (later gains are 0), cut where ``beta^r``
    becomes negligible when ``beta < 1``; never shorter than the runs."""
    relevant = int(table.n_rel_docs.max()) if table.n_topics else 0
    if beta < 1.0:
        relevant = min(relevant, math.ceil(math.log(NEGLIGIBLE) / math.log(beta)))
    return max(depth, relevant, 1)


def _nrbp_sum(ranking: Ranking, k: int | None, alpha: float, beta: float, graded: bool) -> FloatArray:
    """``sum_r beta^(r-1) n(r)`` down to ``k`` (the whole list when None), ``(R, T)``: computed once for NRBP
    and nNRBP (the caller must not write to it)."""
    depth = cutoff_or_depth(ranking, k)

    def build() -> FloatArray:
        n = novelty_gain(ranking, alpha, graded)[:depth]
        return (n * discount("rbp", n.shape[0], beta=beta)[:, None, None]).sum(axis=0)

    return ranking.memo(("nrbp_sum", min(depth, ranking.depth), alpha, beta, graded), build)


@register(
    "NRBP",
    params={"alpha": ALPHA, "beta": BETA, "graded": GRADED},
    cutoff="optional",
    tags=CASCADE_TAGS | {"normalised", "whole_list"},
    citation=CLARKE_NRBP,
)
def nrbp(ranking: Ranking, k: int | None, *, alpha: float, beta: float, graded: bool) -> FloatArray:
    """(1 - (1-alpha) beta) sum_r beta^(r-1) n(r) over the whole list (docs/metrics.md#cascade-metrics).

    Slow reference: ``reference.nrbp``.
    """
    return (1.0 - (1.0 - alpha) * beta) * _nrbp_sum(ranking, k, alpha, beta, graded)


@register(
    "nNRBP",
    params={"alpha": ALPHA, "beta": BETA, "graded": GRADED},
    cutoff="optional",
    tags=CASCADE_TAGS | {"whole_list"},
    citation=CLARKE_NRBP + "; ndeval",
)
def nnrbp(ranking: Ranking, k: int | None, *, alpha: float, beta: float, graded: bool) -> FloatArray:
    """NRBP divided by NRBP of the greedy ideal over all judged documents (docs/metrics.md#cascade-metrics).

    Slow reference: ``reference.nnrbp``.
    """
    length = _nrbp_length(ranking.table, beta, ranking.depth)  # the ideal always runs over all judged documents
    ideal = greedy_ideal_gains(ranking.table, alpha, length, graded)
    ideal_sum = (ideal * discount("rbp", length, beta=beta)[None, :]).sum(axis=1)
    return safe_divide(_nrbp_sum(ranking, k, alpha, beta, graded), ideal_sum)
