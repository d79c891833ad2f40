"""Dense arrays for vectorised evaluation (docs/design.md).

:class:`TopicTable` is built once per collection: intent weights ``W[t, i]`` (zero padded),
types, judged documents as rows of a grade matrix, and the ideal lists of docs/metrics.md#ideal-lists.
:class:`Ranking` holds the ranked lists of several runs as ``rows[rank, run, topic]`` into that
grade matrix, so ``grades[intent, rank, run, topic]`` is one gathering step. A Ranking also
memoises per-rank intermediates (cumulative gains, cascade products, ...) so that a metric at
several cutoffs, and metrics sharing a building block, cost one pass.

Axis conventions: ``R`` runs, ``T`` topics, ``K`` ranks, ``I`` intents (max over topics).
Per-rank arrays are ``(K, R, T)``. Per-intent ones are ``(P, K, R)`` over the ``P`` pairs
``(topic, intent)`` with the intent in ``I_q^+`` (every other intent has no relevant document,
so contributes nothing to any metric), a topic's pairs contiguous: no padding for topics with
fewer intents. Leading rank and pair axes make every step along them (running sums over ranks,
sums over a topic's intents) work on whole contiguous blocks.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Hashable, Iterator, Sequence
from contextlib import contextmanager
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd

from evaluation._factorize import Lookup, as_objects
from evaluation._grouped import descending_by_group, fit, per_topic_reduce
from evaluation._types import BoolArray, FloatArray, IntArray
from evaluation.collection import Collection, QrelsColumns
from evaluation.io.runs import ListBatch, RankedLists, Run


class Memoised:
    """Holds derived arrays under keys that include every parameter they depend on."""

    _cache: dict[Hashable, Any]
    _shared: set[Hashable]

    def memo(self, key: Hashable, build: Callable[[], Any], *, shared: bool = False) -> Any:
        """The value stored under ``key``, built by ``build()`` the first time. ``shared`` marks a
        building block that several metric families read (kept by :meth:`release`)."""
        if key not in self._cache:
            self._cache[key] = build()
        if shared:
            self._shared.add(key)
        return self._cache[key]

    def release(self) -> None:
        """Forget every memoised value but the shared blocks: the engine calls it when a metric
        family is done, so that the family's own intermediates (per-intent blocks of several MB
        each) do not pile up over the whole evaluation."""
        dropped = [value for key, value in self._cache.items() if key not in self._shared]
        self._cache = {key: value for key, value in self._cache.items() if key in self._shared}
        self._recycle(dropped)

    def _recycle(self, dropped: list[Any]) -> None:
        """What :meth:`release` does with the values it forgot (nothing here; see :class:`Ranking`)."""


class TopicTable(Memoised):
    """Per-collection arrays: weights, types, grades of judged documents and ideal lists."""

    def __init__(self, collection: Collection) -> None:
        self.collection = collection
        self.topic_ids: list[str] = collection.topic_ids
        self.topic_index = {t: n for n, t in enumerate(self.topic_ids)}
        self.intent_ids: list[list[str]] = [collection.topics[t].intent_ids for t in self.topic_ids]
        T = len(self.topic_ids)
        I = max([len(ids) for ids in self.intent_ids] + [1])
        self.n_topics, self.n_intents = T, I
        self.W = np.zeros((T, I))
        self.nav = np.zeros((T, I), dtype=bool)
        self.listed = np.zeros((T, I), dtype=bool)
        for t, tid in enumerate(self.topic_ids):
            weights = collection.weights(tid)
            for n, intent in enumerate(collection.topics[tid].intents):
                self.W[t, n] = weights[intent.id]
                self.nav[t, n] = intent.type == "nav"
                self.listed[t, n] = True
        self._lay_out_documents(collection.qrels_columns)
        self.rel = self.n_rel > 0  # I_q^+
        self.pair_topic, self.pair_intent = np.nonzero(self.rel)  # per-intent arrays run over these pairs
        self.pair_bounds = np.searchsorted(self.pair_topic, np.arange(T + 1))  # topic t: pairs [b[t], b[t+1])
        self.n_rel_intents = self.rel.sum(axis=1)  # M+
        self.W_plus = np.where(self.rel, self.W, 0.0).sum(axis=1)  # W+
        self.max_grade = int(self.gmax.max()) if self.gmax.size else 0
        self._cache: dict[Hashable, Any] = {}
        self._shared: set[Hashable] = set()

    def _lay_out_documents(self, qrels: QrelsColumns) -> None:
        """Judged documents as rows grouped by topic (docids in order of first appearance in the
        qrels), a grade matrix, and per-topic counts.

        Two sentinel rows follow the judged ones: ``UNJUDGED`` and ``PAD`` (grades 0).
        """
        T, I = self.n_topics, self.n_intents
        topic = np.array([self.topic_index.get(t, -1) for t in qrels.topics] + [-1], dtype=np.int64)[qrels.topic]
        column = np.full((T + 1, len(qrels.intents) + 1), -1, dtype=np.int64)  # last row / column: absent topic / no intent
        where = {iid: n for n, iid in enumerate(qrels.intents)}
        for t, ids in enumerate(self.intent_ids):
            for n, iid in enumerate(ids):
                if iid in where:
                    column[t, where[iid]] = n
        self.docid_values = as_objects(qrels.docids)  # distinct docids: (topic, position) keys the rows
        V = self.n_docids = max(len(self.docid_values), 1)
        judged = topic >= 0
        judged = slice(None) if judged.all() else judged  # every entry's topic is the table's (the usual case): no copies
        keys = topic[judged] * V + qrels.docid[judged]
        # (topic, docid) key -> row, rows in key order: a stable sort (qrels come grouped by topic, so
        # the keys are nearly sorted already) and a pass over equal neighbours
        order = np.argsort(keys, kind="stable")
        ordered = keys[order]
        fresh = np.ones(ordered.size, dtype=bool)
        np.not_equal(ordered[1:], ordered[:-1], out=fresh[1:])
        self.row_keys = ordered[fresh]
        row = np.empty(keys.size, dtype=np.int64)
        row[order] = np.cumsum(fresh) - 1
        n_docs = self.n_docs = self.row_keys.size
        self.UNJUDGED, self.PAD = n_docs, n_docs + 1
        self.topic_of_row = np.append(self.row_keys // V, [0, 0])  # sentinel rows: topic 0, grades 0
        bounds = np.searchsorted(self.row_keys // V, np.arange(T + 1)).tolist()
        self.topic_rows: list[tuple[int, int]] = list(zip(bounds[:-1], bounds[1:]))
        col = column[topic[judged], qrels.intent[judged]]
        graded = col >= 0
        self.grades = np.zeros((n_docs + 2, I), dtype=np.int16)
        self.grades[row[graded], col[graded]] = qrels.grade[judged][graded]
        self.judged_row = np.ones(n_docs + 2, dtype=bool)
        self.judged_row[n_docs:] = False
        starts = np.array(bounds[:-1], dtype=np.int64)
        self.gmax = per_topic_reduce(np.maximum, self.grades[:n_docs], starts)
        relevant = self.grades[:n_docs] >= 1
        self.n_rel, self.n_rel_docs = (
            per_topic_reduce(np.add, relevant, starts),
            per_topic_reduce(np.add, self.relevant_doc[:n_docs], starts),
        )

    def rows_of(self, topic: IntArray, doc_code: IntArray) -> IntArray:
        """Rows of ``(topic, docid)`` pairs, docids given as ``docid_values`` positions (-1: unknown);
        ``UNJUDGED`` for pairs the qrels do not judge.

        A docid judged under one topic only (nearly all) has one row: its row, kept if the topic
        matches, is two array look-ups (an unknown docid, position -1, reads the sentinel at the end of
        :attr:`_single_row`); only docids judged under several topics are looked for among the sorted
        ``(topic, docid)`` keys (a binary search)."""
        single = self._single_row[doc_code]
        row = np.where(self.topic_of_row[single] == topic, single, self.UNJUDGED)
        several = np.flatnonzero(single < 0)
        if several.size:  # row_keys are sorted: a binary search, the key found or not
            key = topic[several] * self.n_docids + doc_code[several]
            found = np.minimum(np.searchsorted(self.row_keys, key), self.row_keys.size - 1)
            row[several] = np.where(self.row_keys[found] == key, found, self.UNJUDGED)
        return row

    @cached_property
    def _single_row(self) -> IntArray:
        """Per ``docid_values`` position: the docid's row if it is judged under one topic only, -1 if
        under several, ``UNJUDGED`` if under none; one more entry, ``UNJUDGED``, for position -1 (an
        unknown docid). Where the entry is ``UNJUDGED``, :meth:`rows_of` gives ``UNJUDGED`` whatever the topic."""
        doc = self.row_keys % self.n_docids
        count = np.bincount(doc, minlength=self.n_docids + 1)
        out = np.where(count > 1, -1, self.UNJUDGED).astype(np.int64)
        once = count[doc] == 1
        out[doc[once]] = np.flatnonzero(once)
        return out

    @cached_property
    def docids(self) -> np.ndarray:
        """Each document row's docid (object array; ``""`` for the two sentinel rows), made when first read."""
        return np.append(self.docid_values[self.row_keys % self.n_docids], np.array(["", ""], dtype=object))

    @cached_property
    def docid_lookup(self) -> Lookup:
        """Positions in ``docid_values``: what a batch's docids are looked up in."""
        return Lookup(self.docid_values)

    @cached_property
    def W_hat(self) -> FloatArray:
        """Weights renormalised over ``I_q^+`` (ndeval family, docs/metrics.md#cascade-metrics): ``w_i / W+``."""
        w = np.where(self.rel, self.W, 0.0)
        return np.divide(w, self.W_plus[:, None], out=np.zeros_like(w), where=self.W_plus[:, None] > 0)

    @cached_property
    def uniform_weights(self) -> BoolArray:
        """Per topic: all weights over ``I_q^+`` are exactly equal (ndeval's unweighted case)."""
        first = np.take_along_axis(self.W, np.argmax(self.rel, axis=1)[:, None], axis=1)  # each topic's first weight over I_q^+
        return ((self.W == first) | ~self.rel).all(axis=1)

    @cached_property
    def grades_by_intent(self) -> np.ndarray:
        """``grades`` transposed to ``(I, n_docs + 2)`` (what :meth:`Ranking.gather` reads)."""
        return np.ascontiguousarray(self.grades.T)

    @cached_property
    def relevant_doc(self) -> BoolArray:
        """Per document row: relevant (grade >= 1) to some intent of its topic (``(grades >= 1).any(axis=1)``; False for
        the sentinel rows), intent by intent over the rows of :attr:`grades_by_intent` (``any`` along the short intent
        axis of :attr:`grades` walks it row by row, three times slower)."""
        return self.relevant_to(None)

    def relevant_to(self, chosen: BoolArray | None) -> BoolArray:
        """Per document row: relevant to an intent that ``chosen[t, i]`` marks for the row's topic ``t`` (every intent
        when None): ``((grades >= 1) & chosen[topic_of_row]).any(axis=1)``, intent by intent."""
        out = np.zeros(self.n_docs + 2, dtype=bool)
        for i, grades in enumerate(self.grades_by_intent):
            hit = grades >= 1
            if chosen is not None:
                hit &= np.take(chosen[:, i], self.topic_of_row)
            out |= hit
        return out

    @property
    def n_pairs(self) -> int:
        return self.pair_topic.size

    def per_pair(self, values: np.ndarray) -> np.ndarray:
        """A per-(topic, intent) table ``(T, I)`` at the pairs: ``(P,)``."""
        return values[self.pair_topic, self.pair_intent]

    def topic_sum(self, values: np.ndarray) -> np.ndarray:
        """Sum per-pair values ``(P, ...)`` over each topic's pairs, in intent order: ``(..., T)``, 0 for
        topics without pairs."""
        return self.per_topic(np.add, values, 0)

    def per_topic(self, ufunc: np.ufunc, values: np.ndarray, empty: Any) -> np.ndarray:
        """Reduce per-pair values ``(P, ...)`` with ``ufunc`` over each topic's pairs, in intent order:
        ``(..., T)``; ``empty`` for topics without pairs."""
        dtype = np.result_type(values.dtype, np.int64)
        order, counts, pairs = self._pair_plan
        # the order of ``ufunc.reduceat``, bit for bit: first pair, then the running result of the
        # others; one whole-block step per intent position. Topics are laid out by pair count,
        # descending, so the topics with a j-th pair are a leading slice (views, no scatter).
        out = np.empty(values.shape[1:] + (self.n_topics,), dtype=dtype)
        by_topic = np.moveaxis(out, -1, 0)  # topics first: a view of the result, topics last
        filled = counts[0] if counts else 0
        if filled < self.n_topics:
            by_topic[order[filled:]] = empty
        if counts:
            rest = None
            for n, taken in zip(counts[1:], pairs[1:]):
                block = np.take(values, taken, axis=0).astype(dtype, copy=False)
                if rest is None:
                    rest = block
                else:
                    ufunc(rest[:n], block, out=rest[:n])
            head = np.take(values, pairs[0], axis=0).astype(dtype, copy=False)
            if rest is not None:
                ufunc(head[: counts[1]], rest, out=head[: counts[1]])
            by_topic[order[:filled]] = head  # back to topic order, topics last, in one pass
        return out

    @cached_property
    def _pair_plan(self) -> tuple[IntArray, list[int], list[IntArray]]:
        """Topics by pair count (descending, stable), and for intent position ``j``: how many of them
        have a ``j``-th pair, and those pairs (what :meth:`per_topic` walks)."""
        count = np.diff(self.pair_bounds)
        order = np.argsort(-count, kind="stable")
        ranked = count[order]
        counts, pairs = [], []
        for j in range(int(count.max(initial=0))):
            n = int((ranked > j).sum())
            counts.append(n)
            pairs.append(self.pair_bounds[order[:n]] + j)
        return order, counts, pairs

    def by_topic_and_intent(self, values: np.ndarray) -> np.ndarray:
        """Per-pair values ``(P, R)`` laid out as ``(R, T, I)``, 0 outside the pairs."""
        out = np.zeros((values.shape[1], self.n_topics, self.n_intents), dtype=values.dtype)
        out[:, self.pair_topic, self.pair_intent] = values.T
        return out

    # ------------------------------------------------------------ ideal lists
    def intent_ideal(self, length: int) -> FloatArray:
        """Per-intent ideal gains ``(T, I, length)``: ``R_i`` sorted by grade descending (docs/metrics.md#ideal-lists).

        The longest ideal asked for so far is kept, and a shorter one is its head: at depth 20, 20 ranks per
        (topic, intent), not every relevant document's."""
        full = self._cache.get(("intent_ideal",))
        if full is None or full.shape[2] < length:
            L = max(length, 1)
            row, intent = np.nonzero(self.grades[: self.n_docs] > 0)
            grade = self.grades[row, intent].astype(np.int64)
            group = self.topic_of_row[row] * self.n_intents + intent
            top = int(grade.max(initial=0))  # positive integer grades: one key orders by group, then grade descending
            order = np.argsort(group * (top + 1) + (top - grade))  # equal keys hold equal grades: any order of them will do
            ideal = descending_by_group(grade.astype(np.float64), group, self.n_topics * self.n_intents, L, order=order)
            full = self._cache[("intent_ideal",)] = ideal.reshape(self.n_topics, self.n_intents, L)
        return fit(full, length)

    def doc_sum(self, values: np.ndarray, coef: np.ndarray) -> FloatArray:
        """``sum_i coef[t, i] values[d, i]`` for every document row ``d`` (of topic ``t``): ``(n_docs + 2,)``."""
        return np.einsum("di,di->d", values, np.take(coef, self.topic_of_row, axis=0))

    @cached_property
    def doc_global_gain(self) -> FloatArray:
        """``GG(d) = sum_i w_i g_i(d)`` for every document row (docs/metrics.md#grades-and-gains)."""
        gg = np.zeros(self.n_docs + 2)
        gg[: self.n_docs] = (self.grades[: self.n_docs] * self.W[self.topic_of_row[: self.n_docs]]).sum(axis=1)
        return gg

    @cached_property
    def doc_max_grade(self) -> FloatArray:
        """``max_i g_i(d)`` over the topic's intents for every document row: the per-document grade of
        the ad hoc baselines (docs/metrics.md#ad-hoc-baselines)."""
        return self.grades.max(axis=1, initial=0).astype(np.float64)

    def doc_gain(self, key: str) -> FloatArray:
        """A per-document gain ``(n_docs + 2,)`` by name: ``GG`` (global gain) or ``max`` (highest grade)."""
        if key == "GG":
            return self.doc_global_gain
        if key == "max":
            return self.doc_max_grade
        raise ValueError(f"unknown per-document gain {key!r}")

    def gain_ideal(self, key: str, length: int) -> FloatArray:
        """Ideal gains ``(T, length)`` of a per-document gain: documents with a positive gain, gain
        descending (docs/metrics.md#ideal-lists)."""

        def build() -> FloatArray:
            gains = self.doc_gain(key)[: self.n_docs]
            L = max(length, int(self.n_positive(key).max()) if self.n_topics else 0, 1)
            row = np.flatnonzero(gains > 0)
            return descending_by_group(gains[row], self.topic_of_row[row], self.n_topics, L)

        return fit(self.memo(("gain_ideal", key), build), length)

    def n_positive(self, key: str) -> IntArray:
        """Documents with a positive per-document gain per topic (``R`` of Q and AP)."""

        def build() -> IntArray:
            positive = self.doc_gain(key)[: self.n_docs] > 0
            return np.bincount(self.topic_of_row[: self.n_docs][positive], minlength=self.n_topics).astype(np.int64)

        return self.memo(("n_positive", key), build)

    def global_ideal(self, length: int) -> FloatArray:
        """Global ideal gains ``(T, length)``: documents with ``GG > 0`` by ``GG`` descending (docs/metrics.md#ideal-lists)."""
        return self.gain_ideal("GG", length)

    @property
    def n_global_rel(self) -> IntArray:
        """``R`` of the D-measures: documents with ``GG > 0`` per topic."""
        return self.n_positive("GG")


def table_for(collection: Collection) -> TopicTable:
    """The (cached) :class:`TopicTable` of a collection."""
    cache = collection._cache
    if "table" not in cache:
        cache["table"] = TopicTable(collection)
    return cache["table"]


class Ranking(Memoised):
    """Ranked lists of ``R`` runs over the ``T`` topics of a table, as rows into its grade matrix.

    Parameters
    ----------
    table : the collection's :class:`TopicTable`.
    rows : int array ``(K, R, T)``; ``table.UNJUDGED`` for unjudged docs, ``table.PAD`` past the end.
    lengths : int array ``(R, T)``, the list lengths (before padding).
    condensed : whether unjudged documents were removed (docs/metrics.md#condensed-lists).
    """

    def __init__(self, table: TopicTable, rows: IntArray, lengths: IntArray, *, condensed: bool = False) -> None:
        self.table = table
        self.rows = rows
        self.lengths = lengths
        self.condensed = condensed
        self.depth, self.n_runs, self.n_topics = rows.shape
        self._cache: dict[Hashable, Any] = {}
        self._shared: set[Hashable] = set()
        self._scratch: FloatArray | None = None
        self._scratch_busy = False
        self._pool: list[FloatArray] = []  # per-intent float blocks released by finished families

    def block(self) -> FloatArray:
        """A ``(P, K, R)`` float64 array for a family's per-intent block (content undefined): one an earlier
        family released (:meth:`release`), else fresh memory (each fresh page costs a fault of microseconds)."""
        return self._pool.pop() if self._pool else np.empty((self.table.n_pairs, self.depth, self.n_runs))

    def _recycle(self, dropped: list[Any]) -> None:
        """Keep the released per-intent float blocks for :meth:`block`: arrays of that shape that own
        their memory and that nothing else refers to any more (no view of them, no caller holds them)."""
        shape = (self.table.n_pairs, self.depth, self.n_runs)
        while dropped:
            value = dropped.pop()
            if type(value) is np.ndarray and value.base is None and value.shape == shape and value.dtype == np.float64:
                if sys.getrefcount(value) == 2:  # this name and the call's argument: no other reference
                    self._pool.append(value)

    @contextmanager
    def scratch(self) -> Iterator[FloatArray]:
        """A ``(P, K, R)`` float buffer for a temporary that dies within the ``with`` block (content
        undefined on entry). One buffer serves every metric family in turn: per-intent blocks are the
        engine's largest, and fresh ones cost page faults as well as memory."""
        if self._scratch_busy:
            raise RuntimeError("the scratch buffer is already in use")
        if self._scratch is None:
            self._scratch = np.empty((self.table.n_pairs, self.depth, self.n_runs))
        self._scratch_busy = True
        try:
            yield self._scratch
        finally:
            self._scratch_busy = False

    @cached_property
    def pair_cells(self) -> IntArray:
        """``(P, K, R)`` positions, in an intent-major per-document table ``(I, n_docs + 2)`` flattened,
        of each pair's intent at the document ranked ``k`` for the pair's topic."""
        t = self.table
        rows = np.take(np.moveaxis(self.rows, 2, 0), t.pair_topic, axis=0)
        rows += (t.pair_intent * (t.n_docs + 2))[:, None, None]
        return rows

    def gather(self, per_document: np.ndarray) -> np.ndarray:
        """Gather an intent-major per-document table ``(I, n_docs + 2)`` to ``(P, K, R)``."""
        return np.take(per_document, self.pair_cells)

    @cached_property
    def grades(self) -> np.ndarray:
        """``(P, K, R)`` int16 grades; 0 for unjudged documents and padding."""
        return self.gather(self.table.grades_by_intent)

    @cached_property
    def present(self) -> BoolArray:
        """``(K, R, T)``: a document occupies this rank."""
        return self.rows != self.table.PAD

    @cached_property
    def judged(self) -> BoolArray:
        return self.table.judged_row[self.rows]

    def condense(self) -> Ranking:
        """The condensed lists (docs/metrics.md#condensed-lists): unjudged documents removed, order kept, then padded."""
        keep = self.judged
        order = np.argsort(~keep, axis=0, kind="stable")
        rows = np.take_along_axis(self.rows, order, axis=0)
        kept = np.take_along_axis(keep, order, axis=0)
        rows = np.where(kept, rows, self.table.PAD)
        return Ranking(self.table, rows, keep.sum(axis=0), condensed=True)


def build_ranking(table: TopicTable, runs: Sequence[Run], depth: int | None = None) -> Ranking:
    """Lay out ``runs`` over the table's topics; depth = longest list (at least ``depth``).

    Topics absent from a run get an empty list (score 0, docs/metrics.md#runs); topics absent from the
    collection are ignored. Every distinct docid of a vocabulary is looked up once.
    """
    R, T = len(runs), table.n_topics
    list_topic, list_run, list_length, doc_code = _flat_lists(table, runs)
    in_table = list_topic >= 0
    if not in_table.all():  # lists of topics the collection lacks: dropped
        doc_code = doc_code[np.repeat(in_table, list_length)]
        list_topic, list_run, list_length = list_topic[in_table], list_run[in_table], list_length[in_table]
    K = max(int(list_length.max(initial=0)), depth or 0, 1)
    found = table.rows_of(np.repeat(list_topic, list_length), doc_code)
    if list_length.size == R * T and (list_length == K).all() and (list_run * T + list_topic == np.arange(R * T)).all():
        rows = np.ascontiguousarray(found.reshape(R, T, K).transpose(2, 0, 1))  # every list K deep, run by run in topic order
    else:
        rows = _scattered_rows(found, list_run, list_topic, list_length, (K, R, T), table.PAD)
    lengths = np.zeros((R, T), dtype=np.int64)
    lengths[list_run, list_topic] = list_length
    return Ranking(table, rows, lengths)


def _scattered_rows(
    found: IntArray, list_run: IntArray, list_topic: IntArray, list_length: IntArray, shape: tuple[int, int, int], pad: int
) -> IntArray:
    """The ``(K, R, T)`` rows of lists given one after the other (``found``), ``pad`` past each list's end."""
    K, R, T = shape
    # entry e (of all lists, flat) at rank e - start of list l: cell ((e - start_l) R + run_l) T + topic_l,
    # i.e. e R T plus a constant per list (no per-entry rank, run or list arrays)
    start = np.cumsum(list_length) - list_length
    cell = np.repeat((list_run * T + list_topic) - start * (R * T), list_length)
    cell += np.arange(cell.size, dtype=np.int64) * (R * T)
    rows = np.full(K * R * T, pad, dtype=np.int64)
    rows[cell] = found
    return rows.reshape(K, R, T)


def _flat_lists(table: TopicTable, runs: Sequence[Run]) -> tuple[IntArray, IntArray, IntArray, IntArray]:
    """Every ranked list of ``runs``: its topic (table index, -1 if the table lacks it), run and length,
    and the docids of all lists one after the other as ``table.docid_values`` positions (-1: unknown)."""
    spanned = ListBatch.spanned(runs)
    if spanned is not None:  # runs built together, in order: one slice of their flat layout
        batch, a, b = spanned
        topic_index = np.array([table.topic_index.get(t, -1) for t in batch.topics.tolist()] + [-1], dtype=np.int64)
        docs = batch.positions(table.docid_lookup, batch.bounds[a], batch.bounds[b])
        return topic_index[batch.topic[a:b]], batch.run[a:b] - batch.run[a], np.diff(batch.bounds[a : b + 1]), docs
    flat = [RankedLists.of(run.lists) for run in runs]
    topics = np.array([t for lists in flat for t in lists.topics], dtype=object)
    list_topic = pd.Index(table.topic_ids, dtype=object).get_indexer(topics) if topics.size else np.zeros(0, dtype=np.int64)
    list_run = np.repeat(np.arange(len(runs)), [len(lists.topics) for lists in flat])
    list_length = np.concatenate([lists.lengths for lists in flat] + [np.zeros(0, dtype=np.int64)])
    doc_code = np.concatenate([table.docid_lookup.positions(lists.docids) for lists in flat] + [np.zeros(0, dtype=np.int64)])
    return list_topic, list_run, list_length, doc_code
