"""Dense arrays for vectorised evaluation (DESIGN.md "evaluation internals").

:class:`TopicTable` is built once per collection: intent weights ``W[t, i]`` (zero padded),
types, judged documents as rows of a grade matrix, and the ideal lists of spec §1.5.
:class:`Ranking` holds the ranked lists of several runs as ``rows[run, topic, rank]`` into that
grade matrix, so ``grades[run, topic, rank, intent]`` is one fancy-indexing step. A Ranking also
memoises per-rank intermediates (cumulative gains, cascade products, ...) so that a metric at
several cutoffs, and metrics sharing a building block, cost one pass.

Axis conventions: ``R`` runs, ``T`` topics, ``K`` ranks, ``I`` intents (max over topics).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from functools import cached_property
from itertools import chain
from typing import Any

import numpy as np
import pandas as pd

from evaluation._types import BoolArray, FloatArray, IntArray
from evaluation.collection import Collection
from evaluation.io.runs import Run


class Memoised:
    """Holds derived arrays under keys that include every parameter they depend on."""

    _cache: dict[Hashable, Any]

    def memo(self, key: Hashable, build: Callable[[], Any]) -> Any:
        """The value stored under ``key``, built by ``build()`` the first time."""
        if key not in self._cache:
            self._cache[key] = build()
        return self._cache[key]


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
        # documents: one row per (topic, judged doc); two sentinel rows (unjudged, padding) at the end
        self.doc_index: list[pd.Index] = []  # per topic: docid -> row offset within the topic
        docids: list[str] = []
        cells_row: list[int] = []
        cells_col: list[int] = []
        cells_grade: list[int] = []
        start = 0
        self.topic_rows: list[tuple[int, int]] = []
        for t, tid in enumerate(self.topic_ids):
            topic = collection.topics[tid]
            weights = collection.weights(tid)
            col = {iid: n for n, iid in enumerate(topic.intent_ids)}
            for intent in topic.intents:
                n = col[intent.id]
                self.W[t, n] = weights[intent.id]
                self.nav[t, n] = intent.type == "nav"
                self.listed[t, n] = True
            docs = collection.judgments.get(tid, {})
            names = sorted(docs)
            for r, doc in enumerate(names, start=start):
                grades = docs[doc]
                cells_row.extend([r] * len(grades))
                cells_col.extend(col[i] for i in grades)
                cells_grade.extend(grades.values())
            self.doc_index.append(pd.Index(names, dtype=object))
            self.topic_rows.append((start, start + len(names)))
            docids.extend(names)
            start += len(names)
        self.n_docs = start
        self.UNJUDGED = start
        self.PAD = start + 1
        self.grades = np.zeros((start + 2, I), dtype=np.int16)
        self.grades[cells_row, cells_col] = cells_grade
        self.judged_row = np.ones(start + 2, dtype=bool)
        self.judged_row[start:] = False
        self.docids = np.array(docids + ["", ""], dtype=object)
        self.gmax = np.zeros((T, I), dtype=np.int64)
        self.n_rel = np.zeros((T, I), dtype=np.int64)
        self.n_rel_docs = np.zeros(T, dtype=np.int64)
        for t, (a, b) in enumerate(self.topic_rows):
            if b > a:
                block = self.grades[a:b]
                self.gmax[t] = block.max(axis=0)
                self.n_rel[t] = (block >= 1).sum(axis=0)
                self.n_rel_docs[t] = (block >= 1).any(axis=1).sum()
        self.rel = self.n_rel > 0  # I_q^+
        self.n_rel_intents = self.rel.sum(axis=1)  # M+
        self.W_plus = np.where(self.rel, self.W, 0.0).sum(axis=1)  # W+
        self.max_grade = int(self.gmax.max()) if self.gmax.size else 0
        self._cache: dict[Hashable, Any] = {}

    @cached_property
    def W_hat(self) -> FloatArray:
        """Weights renormalised over ``I_q^+`` (ndeval family, spec §2.3): ``w_i / W+``."""
        w = np.where(self.rel, self.W, 0.0)
        return np.divide(w, self.W_plus[:, None], out=np.zeros_like(w), where=self.W_plus[:, None] > 0)

    @cached_property
    def uniform_weights(self) -> BoolArray:
        """Per topic: all weights over ``I_q^+`` are exactly equal (ndeval's unweighted case)."""
        out = np.ones(self.n_topics, dtype=bool)
        for t in range(self.n_topics):
            w = self.W[t, self.rel[t]]
            out[t] = w.size == 0 or bool(np.all(w == w[0]))
        return out

    def topic_block(self, t: int) -> np.ndarray:
        a, b = self.topic_rows[t]
        return self.grades[a:b]

    # ------------------------------------------------------------ ideal lists
    def intent_ideal(self, length: int) -> FloatArray:
        """Per-intent ideal gains ``(T, I, length)``: ``R_i`` sorted by grade descending (spec §1.5)."""

        def build() -> FloatArray:
            L = max(length, int(self.n_rel.max()) if self.n_rel.size else 0, 1)
            out = np.zeros((self.n_topics, self.n_intents, L))
            for t in range(self.n_topics):
                block = self.topic_block(t)
                if block.shape[0]:
                    ordered = -np.sort(-block.astype(np.float64), axis=0)[:L]
                    out[t, :, : ordered.shape[0]] = ordered.T
            return out

        full = self.memo(("intent_ideal",), build)
        return _fit(full, length)

    @cached_property
    def doc_global_gain(self) -> FloatArray:
        """``GG(d) = sum_i w_i g_i(d)`` for every document row (spec §1.2)."""
        topic_of_row = np.repeat(np.arange(self.n_topics), [b - a for a, b in self.topic_rows])
        gg = np.zeros(self.n_docs + 2)
        if self.n_docs:
            gg[: self.n_docs] = (self.grades[: self.n_docs] * self.W[topic_of_row]).sum(axis=1)
        return gg

    def global_ideal(self, length: int) -> FloatArray:
        """Global ideal gains ``(T, length)``: documents with ``GG > 0`` by ``GG`` descending (spec §1.5)."""

        def build() -> FloatArray:
            gg = self.doc_global_gain
            L = max(length, int(self.n_global_rel.max()) if self.n_topics else 0, 1)
            out = np.zeros((self.n_topics, L))
            for t, (a, b) in enumerate(self.topic_rows):
                g = np.sort(gg[a:b][gg[a:b] > 0])[::-1]
                out[t, : g.size] = g
            return out

        return _fit(self.memo(("global_ideal",), build), length)

    @cached_property
    def n_global_rel(self) -> IntArray:
        """``R`` of the D-measures: documents with ``GG > 0`` per topic."""
        gg = self.doc_global_gain
        return np.array([int((gg[a:b] > 0).sum()) for a, b in self.topic_rows], dtype=np.int64)


def _fit(array: np.ndarray, length: int) -> np.ndarray:
    """Cut or zero-pad the last axis of ``array`` to ``length``."""
    have = array.shape[-1]
    if have >= length:
        return array[..., :length]
    pad = [(0, 0)] * (array.ndim - 1) + [(0, length - have)]
    return np.pad(array, pad)


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
    rows : int array ``(R, T, K)``; ``table.UNJUDGED`` for unjudged docs, ``table.PAD`` past the end.
    lengths : int array ``(R, T)``, the list lengths (before padding).
    condensed : whether unjudged documents were removed (spec §1.6).
    """

    def __init__(self, table: TopicTable, rows: IntArray, lengths: IntArray, *, condensed: bool = False) -> None:
        self.table = table
        self.rows = rows
        self.lengths = lengths
        self.condensed = condensed
        self.n_runs, self.n_topics, self.depth = rows.shape
        self._cache: dict[Hashable, Any] = {}

    @cached_property
    def grades(self) -> np.ndarray:
        """``(R, T, K, I)`` int16 grades; 0 for unjudged, padding and intents a topic lacks."""
        return self.table.grades[self.rows]

    @cached_property
    def present(self) -> BoolArray:
        """``(R, T, K)``: a document occupies this rank."""
        return self.rows != self.table.PAD

    @cached_property
    def judged(self) -> BoolArray:
        return self.table.judged_row[self.rows]

    def condense(self) -> Ranking:
        """The condensed lists (spec §1.6): unjudged documents removed, order kept, then padded."""
        keep = self.judged
        order = np.argsort(~keep, axis=2, kind="stable")
        rows = np.take_along_axis(self.rows, order, axis=2)
        kept = np.take_along_axis(keep, order, axis=2)
        rows = np.where(kept, rows, self.table.PAD)
        return Ranking(self.table, rows, keep.sum(axis=2), condensed=True)


def build_ranking(table: TopicTable, runs: Sequence[Run], depth: int | None = None) -> Ranking:
    """Lay out ``runs`` over the table's topics; depth = longest list (at least ``depth``).

    Topics absent from a run get an empty list (score 0, spec §1.4); topics absent from the
    collection are ignored.
    """
    T = table.n_topics
    lengths = np.zeros((len(runs), T), dtype=np.int64)
    for r, run in enumerate(runs):
        for tid, docs in run.lists.items():
            t = table.topic_index.get(tid)
            if t is not None:
                lengths[r, t] = len(docs)
    K = max(int(lengths.max()) if lengths.size else 0, depth or 0, 1)
    rows = np.full((len(runs), T, K), table.PAD, dtype=np.int64)
    position = np.arange(K)
    for t, tid in enumerate(table.topic_ids):
        lists = [run.lists.get(tid, ()) for run in runs]
        flat = list(chain.from_iterable(lists))
        if not flat:
            continue
        found = table.doc_index[t].get_indexer(flat)  # one hashed lookup for every run's list
        found = np.where(found >= 0, found + table.topic_rows[t][0], table.UNJUDGED)
        mask = position[None, :] < lengths[:, t, None]
        rows[:, t][mask] = found
    return Ranking(table, rows, lengths)
