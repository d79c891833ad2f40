"""Judgments (qrels) as a collection holds them: nested dicts (:data:`Judgments`) or, for large files,
parallel arrays (:class:`QrelsColumns`) behind a read-only mapping (:class:`ColumnJudgments`), built by
:func:`judgments_from_arrays`. Conventions: docs/metrics.md#data-conventions (grades are non-negative
integers; a document judged for no intent has an empty inner dict).
"""

from __future__ import annotations

import array
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Literal

import numpy as np
import pandas as pd

from evaluation._factorize import block_heads, factorize, factorize_blocks, factorize_repeats, repeated_keys
from evaluation._types import IntArray
from evaluation.exceptions import EvaluationError

# topic -> docid -> intent -> grade (empty inner dict: judged, relevant to nothing)
Judgments = dict[str, dict[str, dict[str, int]]]


@dataclass(frozen=True, eq=False)
class QrelsColumns:
    """Judgments as parallel arrays, one entry per (topic, docid, intent) grade.

    ``topic``, ``docid`` and ``intent`` index ``topics``, ``docids`` (object array of distinct
    docids) and ``intents``; ``intent == -1`` (grade 0) marks a document judged relevant to no
    intent, the empty inner dict of :data:`Judgments` (docs/metrics.md#relevance-and-empty-topics).
    """

    topics: tuple[str, ...]
    docids: np.ndarray
    intents: tuple[str, ...]
    topic: IntArray
    docid: IntArray
    intent: IntArray
    grade: IntArray

    @classmethod
    def of(cls, judgments: Mapping[str, Mapping[str, Mapping[str, int]]]) -> QrelsColumns:
        """The columns of any judgments mapping (topic -> docid -> intent -> grade)."""
        if isinstance(judgments, ColumnJudgments):
            return judgments.columns
        entries = [
            (n, doc, intent, grade)
            for n, docs in enumerate(judgments.values())
            for doc, grades in docs.items()
            for intent, grade in (grades.items() if grades else ((None, 0),))
        ]
        doc_code, docids = factorize([e[1] for e in entries])
        intent_code, intents = factorize([e[2] for e in entries])
        grade = np.array([e[3] for e in entries], dtype=np.int64)
        if grade.size and grade.min() < 0:
            n = int(np.argmin(grade))
            topic, doc, intent, value = list(judgments)[entries[n][0]], entries[n][1], entries[n][2], entries[n][3]
            raise EvaluationError(
                f"topic {topic} doc {doc} intent {intent}: negative grade {value} (judged nonrelevant is 0, docs/metrics.md#grades-and-gains)"
            )
        return cls(
            topics=tuple(judgments),
            docids=docids,
            intents=tuple(intents),
            topic=np.array([e[0] for e in entries], dtype=np.int64),
            docid=doc_code,
            intent=intent_code,
            grade=grade,
        )

    def select(self, topic_ids: Sequence[str]) -> QrelsColumns:
        """The entries of ``topic_ids`` only, topics renumbered in that order."""
        position = {t: n for n, t in enumerate(topic_ids)}
        new = np.array([position.get(t, -1) for t in self.topics] + [-1], dtype=np.int64)[self.topic]
        keep = new >= 0
        if keep.all():  # every entry stays: the columns are shared (never written to), only topics renumbered
            return replace(self, topics=tuple(topic_ids), topic=new)
        return replace(
            self, topics=tuple(topic_ids), topic=new[keep], docid=self.docid[keep], intent=self.intent[keep], grade=self.grade[keep]
        )

    def relevant_pairs(self) -> set[tuple[str, str]]:
        """``(topic, intent)`` pairs with at least one document of grade >= 1 (``I_q^+``, docs/metrics.md#intents-and-weights)."""
        rel = self.grade >= 1
        n = max(len(self.intents), 1)
        codes = _distinct_codes(self.topic[rel] * n + self.intent[rel], len(self.topics) * n)
        return {(self.topics[c // n], self.intents[c % n]) for c in codes.tolist()}

    def intent_ids(self) -> dict[str, set[str]]:
        """The intents each topic's entries name."""
        named = self.intent >= 0
        n = max(len(self.intents), 1)
        out: dict[str, set[str]] = {t: set() for t in self.topics}
        for c in _distinct_codes(self.topic[named] * n + self.intent[named], len(self.topics) * n).tolist():
            out[self.topics[c // n]].add(self.intents[c % n])
        return out


def _distinct_codes(codes: IntArray, size: int) -> IntArray:
    """``np.unique(codes)`` for codes in ``[0, size)``: marked in a dense table (no sort)."""
    seen = np.zeros(size, dtype=bool)
    seen[codes] = True
    return np.flatnonzero(seen)


class ColumnJudgments(Mapping[str, dict[str, dict[str, int]]]):
    """:data:`Judgments` stored as :class:`QrelsColumns` (what :func:`judgments_from_arrays` builds).

    Reads like the nested dict; a topic's dict is only built when that topic is looked up, so
    evaluation, which reads the columns, never pays for it.
    """

    def __init__(self, columns: QrelsColumns) -> None:
        self.columns = columns
        self._position = {t: n for n, t in enumerate(columns.topics)}
        self._built: dict[str, dict[str, dict[str, int]]] = {}

    def __getitem__(self, topic: str) -> dict[str, dict[str, int]]:
        if topic not in self._built:
            self._built[topic] = self._topic_dict(self._position[topic])
        return self._built[topic]

    def __iter__(self) -> Iterator[str]:
        return iter(self.columns.topics)

    def __len__(self) -> int:
        return len(self.columns.topics)

    def __repr__(self) -> str:
        return f"ColumnJudgments({len(self)} topics, {self.columns.grade.size} entries)"

    def select(self, topic_ids: Sequence[str]) -> ColumnJudgments:
        return ColumnJudgments(self.columns.select(topic_ids))

    def _topic_dict(self, n: int) -> dict[str, dict[str, int]]:
        c = self.columns
        mine = np.flatnonzero(c.topic == n)
        docs: dict[str, dict[str, int]] = {}
        for doc, intent, grade in zip(c.docids[c.docid[mine]].tolist(), c.intent[mine].tolist(), c.grade[mine].tolist()):
            grades = docs.setdefault(doc, {})
            if intent >= 0:
                grades[c.intents[intent]] = grade
        return docs


def integer_column(values: Sequence[int] | np.ndarray) -> np.ndarray:
    """``np.asarray(values)``; a list or tuple of Python (or NumPy) integers is copied into int64 by
    ``array.array`` in one C pass (``np.asarray`` inspects every entry's type first, about twice the
    time). Anything that is not an integer (a float, a string, ``None``, one beyond int64) leaves
    it to ``np.asarray``, so the dtype, and the error it leads to, are as before."""
    if isinstance(values, (list, tuple)):
        try:
            return np.frombuffer(array.array("q", values), dtype=np.int64)
        except (TypeError, OverflowError):
            pass
    return np.asarray(values)


def judgments_from_arrays(
    topics: Sequence[str] | np.ndarray,
    intents: Sequence[str | None] | np.ndarray,
    docids: Sequence[str] | np.ndarray,
    grades: Sequence[int] | np.ndarray,
    *,
    on_duplicate: Literal["error", "max"] = "error",
) -> ColumnJudgments:
    """Judgments from parallel arrays, one entry per qrels line ``topic intent docid grade``.

    The in-memory counterpart of :func:`~evaluation.io.qrels.read_qrels`: negative grades are
    judged nonrelevant (0, docs/metrics.md#grades-and-gains); intent ``None`` marks a document judged relevant to no
    intent (grade must be 0); a repeated ``(topic, intent, docid)`` is an error, or keeps the
    highest grade with ``on_duplicate="max"``.
    """
    if on_duplicate not in ("error", "max"):
        raise ValueError(f"on_duplicate must be 'error' or 'max', got {on_duplicate!r}")
    grade = integer_column(grades)
    if grade.dtype.kind not in "iub" and grade.size:
        raise EvaluationError(f"grades must be integers, got {grade.dtype}")
    grade = np.maximum(grade.astype(np.int64, copy=False), 0)
    if not len(topics) == len(intents) == len(docids) == grade.size:
        raise EvaluationError("topics, intents, docids and grades must have the same length")
    # qrels list a topic's judgments intent by intent: (topic, intent) blocks
    heads = block_heads(topics, intents)
    (topic_code, topic_names), (intent_code, intent_names) = factorize_blocks(topics, intents, heads=heads)
    doc_code, docid_names = factorize_repeats(docids, heads)  # a topic's intents list the same documents
    if (topic_code < 0).any() or (doc_code < 0).any():
        line = int(np.argmax((topic_code < 0) | (doc_code < 0)))
        raise EvaluationError(f"line {line} (topic {topics[line]} doc {docids[line]}): every judgment needs a topic and a docid")
    if (grade[intent_code < 0] != 0).any():
        raise EvaluationError("intent None means 'relevant to no intent' and needs grade 0")
    key = (topic_code * (len(intent_names) + 1) + intent_code + 1) * max(len(docid_names), 1) + doc_code
    repeated = repeated_keys(key) & (intent_code >= 0)
    if repeated.any():
        n = int(np.argmax(repeated))
        if on_duplicate == "error":
            raise EvaluationError(
                f"duplicate judgment for topic {topic_names[topic_code[n]]} intent {intent_names[intent_code[n]]} doc {docid_names[doc_code[n]]}"
            )
        group, _ = pd.factorize(key)
        best = np.zeros(group.max() + 1, dtype=np.int64)
        np.maximum.at(best, group, grade)
        grade = best[group]
    keep = ~repeated
    columns = QrelsColumns(
        topics=tuple(topic_names),
        docids=docid_names,
        intents=tuple(intent_names),
        topic=topic_code[keep],
        docid=doc_code[keep],
        intent=intent_code[keep],
        grade=grade[keep],
    )
    return ColumnJudgments(columns)


def select_topics(judgments: Mapping[str, dict[str, dict[str, int]]], topic_ids: Sequence[str]) -> Mapping[str, dict[str, dict[str, int]]]:
    """The judgments of ``topic_ids`` in that order (topics without judgments get none)."""
    if isinstance(judgments, ColumnJudgments):
        return judgments.select(topic_ids)
    return {t: judgments.get(t, {}) for t in topic_ids}
