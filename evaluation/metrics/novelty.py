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

from evaluation._types import FloatArray, IntArray
from evaluation.arrays import Ranking, TopicTable, _descending_by_group, _fit
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


def greedy_ideal_gains(table: TopicTable, alpha: float, length: int, graded: bool = False) -> FloatArray:
    """Novelty gains ``n*(r)`` of ndeval's greedy ideal list, ``(T, length)`` (docs/metrics.md#ideal-lists).

    Each step takes the document maximising ``sum_i a_i J_i (1-alpha)^{c_i}`` (``a_i = 1`` when
    the topic's weights are uniform, as in ndeval, else ``ŵ_i``), ties going to the greatest
    docid; all topics advance together. The list only covers relevant documents: every later
    (judged, nonrelevant) document has gain 0.

    Documents with the same grades score the same at every step, so the search runs over such
    groups, each offering its greatest remaining docid.
    """
    key = ("greedy", alpha, graded)
    N = max(int(table.n_rel_docs.max(initial=0)), 1)
    cached = table._cache.get(key)
    if cached is not None and cached.shape[1] >= min(length, N):
        return _fit(cached, length)
    steps = min(max(length, GREEDY_MIN_STEPS), N)  # one pass serves every cutoff and NRBP's tail
    gains = np.zeros((table.n_topics, max(length, steps, 1)))
    powers = (1.0 - alpha) ** np.arange(steps + 1, dtype=np.float64)  # (1 - alpha)^c, c = 0..steps
    single = np.flatnonzero(table.n_rel_intents == 1)
    gains[single, :steps] = _single_intent_gains(table, single, powers[:steps], graded)
    several = np.flatnonzero(table.n_rel_intents > 1)
    if several.size and steps:
        gains[several, :steps] = _greedy_search(table, several, powers, steps, graded)
    table._cache[key] = gains[:, : max(steps, 1)]
    return _fit(gains, length)


def _single_intent_gains(table: TopicTable, topics: IntArray, powers: FloatArray, graded: bool) -> FloatArray:
    """The greedy's gains on topics with one relevant intent ``i``: every relevant document is relevant to
    ``i``, so the ``r``-th pick (the ``r``-th largest value) earns ``value * (1-alpha)^(r-1) * ŵ_i``
    whatever the ties; ``(len(topics), len(powers))``."""
    intent = np.argmax(table.rel[topics], axis=1)
    chosen = np.zeros(table.n_topics, dtype=bool)
    chosen[topics] = True
    row = np.flatnonzero(chosen[table.topic_of_row[: table.n_docs]])
    topic = table.topic_of_row[row]
    at = np.zeros(table.n_topics, dtype=np.int64)
    at[topics] = intent
    grade = table.grades[row, at[topic]]
    relevant = grade >= 1
    row, topic, grade = row[relevant], topic[relevant], grade[relevant]
    values = _relevance(grade, table.gmax[topic, at[topic]], graded)
    where = np.zeros(table.n_topics, dtype=np.int64)
    where[topics] = np.arange(topics.size)
    ordered = _descending_by_group(values, where[topic], topics.size, powers.size)  # zero padded past the last document
    return ordered * powers * table.W_hat[topics, intent][:, None]


def _greedy_search(table: TopicTable, topics: IntArray, powers: FloatArray, steps: int, graded: bool) -> FloatArray:
    """The greedy's gains ``(len(topics), steps)`` on ``topics``, all searched together step by step."""
    groups = _candidate_groups(table, topics)
    T, I = topics.size, table.n_intents
    group_grades = groups.grades[topics]
    values = _relevance(group_grades, table.gmax[topics][:, None, :], graded)  # (T, G, I)
    G = groups.start.shape[1]
    # (I + 1, T, G): the intents' values, then a row of offsets that keep exhausted groups from
    # winning (0 or -inf, weight 1). The sum over the leading axis runs in intent order, as ndeval
    # adds subtopic by subtopic, and the offset comes last (x + 0.0 == x).
    terms = np.zeros((I + 1, T, G))
    terms[:I] = np.moveaxis(values, 2, 0)
    coef = np.where(table.uniform_weights[topics, None], table.rel[topics].astype(np.float64), table.W_hat[topics])
    # flat (T * G) views: a step touches one cell per topic, at ``rows + pick``
    taken = groups.start[topics].ravel()
    head = groups.members[taken]  # each group's next candidate (its greatest remaining docid rank)
    member_offset = np.where(groups.members >= 0, 0.0, -np.inf)  # a group whose next member is its sentinel is exhausted
    offset = terms[I].reshape(T * G)
    offset[:] = member_offset[taken]
    values_flat = values.reshape(T * G, -1)
    hits_flat = (group_grades >= 1).reshape(T * G, -1)
    # a topic has a live group as long as it has relevant documents left; once exhausted, its
    # picks and counts no longer matter (their gains are masked)
    live_at = table.n_rel_docs[topics][None, :] > np.arange(steps)[:, None]
    counts = np.zeros((T, I), dtype=np.int64)
    weight = np.ones((T, I + 1))  # coef * decay per intent, then 1 for the offsets
    weight_by_intent = weight.T[:, :, None]  # a view: (I + 1, T, 1)
    rows = np.arange(T) * G
    product = np.empty_like(terms)
    score = np.empty((T, G))
    top = np.empty((T, 1))
    head_2d = head.reshape(T, G)
    decays, cells = [], []  # each step's decay and picked cell; gains follow in one pass
    for step in range(steps):
        decay = np.take(powers, counts)
        np.multiply(coef, decay, out=weight[:, :I])
        np.multiply(terms, weight_by_intent, out=product)
        np.add.reduce(product, axis=0, out=score)
        np.max(score, axis=1, keepdims=True, out=top)
        cell = rows + np.argmax(np.where(score == top, head_2d, -1), axis=1)
        before = np.take(taken, cell)
        decays.append(decay)
        cells.append(cell)
        counts += np.take(hits_flat, cell, axis=0)
        moved = before + live_at[step]
        taken[cell] = moved
        head[cell] = np.take(groups.members, moved)
        offset[cell] = np.take(member_offset, moved)
    # n*(r) = sum_i values_i decay_i ŵ_i at the pick, over the intent axis (last, as per step)
    picked = (values_flat[np.stack(cells)] * np.stack(decays) * table.W_hat[topics]).sum(axis=2)  # (steps, T, I) -> (steps, T)
    return np.where(live_at, picked, 0.0).T


@dataclass(frozen=True)
class _Groups:
    """Relevant documents of every topic grouped by their grade vector (the greedy's candidates).

    ``grades[t, g]`` is group ``g``'s grade vector; its documents are ``members[start[t, g]:end[t, g]]``,
    as docid ranks (string order), descending, followed by a sentinel ``-1`` at ``end[t, g]`` (empty
    groups: ``start == end``).
    """

    grades: np.ndarray
    members: IntArray
    start: IntArray
    end: IntArray


def _candidate_groups(table: TopicTable, topics: IntArray) -> _Groups:
    """The groups of ``topics`` (every other topic gets none)."""
    chosen = np.zeros(table.n_topics, dtype=bool)
    chosen[topics] = True
    relevant = np.flatnonzero((table.grades[: table.n_docs] >= 1).any(axis=1) & chosen[table.topic_of_row[: table.n_docs]])
    topic = table.topic_of_row[relevant]
    rows = np.column_stack([topic, table.grades[relevant]])
    low = int(rows[:, 1:].min(initial=0))
    base = int(rows[:, 1:].max(initial=0)) - low + 1
    if table.n_topics * base**table.n_intents < 2**62:  # (topic, grade vector) as one integer in the same order
        code = topic.astype(np.int64)
        for i in range(table.n_intents):
            code = code * base + (rows[:, 1 + i] - low)
        by_key = np.argsort(code, kind="stable")
        ordered = code[by_key]
        fresh = np.ones(relevant.size, dtype=bool)
        fresh[1:] = ordered[1:] != ordered[:-1]
    else:
        by_key = np.lexsort(rows.T[::-1])  # topic, then the grade vector
        fresh = np.ones(relevant.size, dtype=bool)
        fresh[1:] = (np.diff(rows[by_key], axis=0) != 0).any(axis=1)
    keys = rows[by_key][fresh]
    group = np.empty(relevant.size, dtype=np.int64)
    group[by_key] = np.cumsum(fresh) - 1
    first = np.searchsorted(keys[:, 0], np.arange(table.n_topics))
    local = group - first[topic]
    G = int(local.max(initial=0)) + 1
    grades = np.zeros((table.n_topics, G, table.n_intents), dtype=table.grades.dtype)
    grades[keys[:, 0], np.arange(len(keys)) - first[keys[:, 0]]] = keys[:, 1:]
    names = table.docids[relevant].tolist()
    docid_rank = np.empty(len(names), dtype=np.int64)  # string order of the docids (a topic's are distinct)
    docid_rank[sorted(range(len(names)), key=names.__getitem__)] = np.arange(len(names))
    n = max(len(names), 1)
    # by (topic, group), then docid descending: one integer key (distinct: a topic's docids are distinct)
    if table.n_topics * G * n < 2**62:
        packed = (topic * G + local) * n + (n - 1 - docid_rank)
        order = np.argsort(packed)
        cell = packed[order] // n
    else:
        order = np.lexsort((-docid_rank, local, topic))
        cell = topic[order] * G + local[order]
    cells = np.arange(table.n_topics * G)
    end = np.searchsorted(cell, cells, side="right") + cells  # each cell's members, then its sentinel at ``end``
    members = np.full(end[-1] + 1 if end.size else 0, -1, dtype=np.int64)
    members[np.arange(cell.size) + cell] = docid_rank[order]
    start = np.searchsorted(cell, cells) + cells
    return _Groups(grades, members, start.reshape(table.n_topics, G), end.reshape(table.n_topics, G))


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
    aliases=("α-DCG",),
)
def alpha_dcg(ranking: Ranking, k: int, *, alpha: float, graded: bool, ndeval_rank1_quirk: bool) -> FloatArray:
    """sum_{r<=k} n(r)/log2(r+1) over the ideal-ideal list (ndeval's "alpha-DCG"; docs/metrics.md#cascade-metrics)."""
    return _collection_normalised(ranking, k, alpha, graded, ndeval_rank1_quirk, "log")


@register("alpha-nDCG", params={"alpha": ALPHA, "graded": GRADED}, tags=CASCADE_TAGS, citation=CLARKE, aliases=("α-nDCG",))
def alpha_ndcg(ranking: Ranking, k: int, *, alpha: float, graded: bool) -> FloatArray:
    """sum_{r<=k} n(r)/log2(r+1) over the same sum on the greedy ideal (docs/metrics.md#cascade-metrics)."""
    return _ideal_normalised(ranking, k, alpha, graded, "log")


@register(
    "ERR-IA",
    params={"alpha": ALPHA, "graded": GRADED, "ndeval_rank1_quirk": QUIRK},
    tags=CASCADE_TAGS | {"normalised"},
    citation=CHAPELLE_IA,
)
def err_ia(ranking: Ranking, k: int, *, alpha: float, graded: bool, ndeval_rank1_quirk: bool) -> FloatArray:
    """TREC's ERR-IA: sum_{r<=k} n(r)/r over the ideal-ideal list (ndeval; docs/metrics.md#cascade-metrics)."""
    return _collection_normalised(ranking, k, alpha, graded, ndeval_rank1_quirk, "rr")


@register("nERR-IA", params={"alpha": ALPHA, "graded": GRADED}, tags=CASCADE_TAGS, citation=CHAPELLE_IA)
def nerr_ia(ranking: Ranking, k: int, *, alpha: float, graded: bool) -> FloatArray:
    """sum_{r<=k} n(r)/r over the same sum on the greedy ideal (ndeval; docs/metrics.md#cascade-metrics)."""
    return _ideal_normalised(ranking, k, alpha, graded, "rr")


def _nrbp_length(table: TopicTable, beta: float, depth: int) -> int:
    """Length of the ideal list for nNRBP: every relevant document (later gains are 0), cut where ``beta^r``
    becomes negligible when ``beta < 1``; never shorter than the runs."""
    relevant = int(table.n_rel_docs.max()) if table.n_topics else 0
    if beta < 1.0:
        relevant = min(relevant, math.ceil(math.log(NEGLIGIBLE) / math.log(beta)))
    return max(depth, relevant, 1)


def _nrbp_sum(ranking: Ranking, k: int | None, alpha: float, beta: float, graded: bool) -> FloatArray:
    depth = cutoff_or_depth(ranking, k)
    n = novelty_gain(ranking, alpha, graded)[:depth]
    return (n * discount("rbp", n.shape[0], beta=beta)[:, None, None]).sum(axis=0)


@register(
    "NRBP",
    params={"alpha": ALPHA, "beta": BETA, "graded": GRADED},
    cutoff="optional",
    tags=CASCADE_TAGS | {"normalised", "whole_list"},
    citation=CLARKE_NRBP,
)
def nrbp(ranking: Ranking, k: int | None, *, alpha: float, beta: float, graded: bool) -> FloatArray:
    """(1 - (1-alpha) beta) sum_r beta^(r-1) n(r) over the whole list (docs/metrics.md#cascade-metrics)."""
    return (1.0 - (1.0 - alpha) * beta) * _nrbp_sum(ranking, k, alpha, beta, graded)


@register(
    "nNRBP",
    params={"alpha": ALPHA, "beta": BETA, "graded": GRADED},
    cutoff="optional",
    tags=CASCADE_TAGS | {"whole_list"},
    citation=CLARKE_NRBP + "; ndeval",
)
def nnrbp(ranking: Ranking, k: int | None, *, alpha: float, beta: float, graded: bool) -> FloatArray:
    """NRBP divided by NRBP of the greedy ideal over all judged documents (docs/metrics.md#cascade-metrics)."""
    length = _nrbp_length(ranking.table, beta, ranking.depth)  # the ideal always runs over all judged documents
    ideal = greedy_ideal_gains(ranking.table, alpha, length, graded)
    ideal_sum = (ideal * discount("rbp", length, beta=beta)[None, :]).sum(axis=1)
    return safe_divide(_nrbp_sum(ranking, k, alpha, beta, graded), ideal_sum)
