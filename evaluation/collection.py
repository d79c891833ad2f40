"""Test collections: topics, intents (weight, type, text) and per-intent graded judgments.

A :class:`Collection` is immutable; transforms (:meth:`Collection.keep_top_intents`,
:meth:`Collection.with_weights`, :meth:`Collection.binarised`, :meth:`Collection.drop_documents`)
return new collections. Conventions follow docs/metrics.md#data-conventions:

* grades are non-negative integers (negative grades were mapped to 0 by the readers);
* a document is *judged* for a topic when any qrels line of the topic names it (docs/metrics.md#relevance-and-empty-topics);
* an intent is *relevant-bearing* (in ``I_q^+``) when some document has grade >= 1 for it;
* weights are used as given; when a topic has none, they are uniform over ``I_q^+`` (docs/metrics.md#intents-and-weights),
  or over all listed intents with ``uniform_over="listed"``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Literal

from evaluation import wording
from evaluation.exceptions import EvaluationError, warn
from evaluation.judgments import ColumnJudgments, Judgments, QrelsColumns, judgments_from_arrays, select_topics

__all__ = [  # the judgments' types and builders live in evaluation.judgments; these names stay importable from here
    "SUBTOPIC_TOPIC", "Collection", "ColumnJudgments", "Intent", "Judgments", "QrelsColumns", "Topic", "build_collection",
    "intent_sort_key", "judgments_from_arrays", "select_topics",
]  # fmt: skip

IntentType = Literal["inf", "nav"]
WeightPolicy = Literal["original", "uniform", "linear"]


SUBTOPIC_TOPIC = "{topic}/{subtopic}"
"""Topic id under which per-subtopic scores are stored (:meth:`Collection.per_subtopic`, subtopic-level agreement)."""


def intent_sort_key(ids: Iterable[str]) -> list[str]:
    """Intent ids in canonical order: numeric when every id is an integer, else string order."""
    ids = list(ids)
    try:
        return sorted(ids, key=lambda s: (int(s), s))
    except ValueError:
        return sorted(ids)


@dataclass(frozen=True)
class Intent:
    """One intent (TREC subtopic) of a topic. ``weight`` is None when the collection gives none."""

    id: str
    weight: float | None = None
    type: IntentType = "inf"
    text: str = ""


@dataclass(frozen=True)
class Topic:
    """A topic: its query, description and intents (in canonical id order)."""

    id: str
    intents: tuple[Intent, ...] = ()
    query: str = ""
    description: str = ""

    @property
    def intent_ids(self) -> list[str]:
        return [i.id for i in self.intents]


@dataclass(frozen=True)
class Collection:
    """Topics with intents and graded per-intent judgments (qrels).

    Parameters
    ----------
    topics : mapping topic id -> :class:`Topic`, in evaluation order.
    judgments : topic -> docid -> intent -> grade (grade >= 0).
    uniform_over : ``"relevant"`` (default, docs/metrics.md#intents-and-weights) or ``"listed"``: which intents share the
        uniform weight of a topic whose intents carry no weight.
    """

    topics: dict[str, Topic]
    judgments: Judgments | ColumnJudgments
    uniform_over: Literal["relevant", "listed"] = "relevant"
    name: str = ""
    _cache: dict = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.uniform_over not in ("relevant", "listed"):
            raise ValueError(f"uniform_over must be 'relevant' or 'listed', got {self.uniform_over!r}")
        for tid, topic in self.topics.items():
            given = [i.weight is not None for i in topic.intents]
            if any(given) and not all(given):
                missing = [i.id for i in topic.intents if i.weight is None]
                raise EvaluationError(f"topic {tid}: intents {', '.join(missing)} have no weight while others do")

    def __repr__(self) -> str:
        """Counts only: a notebook shows ``Collection('trec2014', 50 topics, 233 intents, 18744 judgments)``."""
        intents = sum(len(topic.intents) for topic in self.topics.values())
        if isinstance(self.judgments, ColumnJudgments):
            entries = int(self.judgments.columns.grade.size)
        else:
            entries = sum(len(grades) for docs in self.judgments.values() for grades in docs.values())
        name = f"{self.name!r}, " if self.name else ""
        return f"Collection({name}{len(self.topics)} topics, {intents} intents, {entries} judgments)"

    # ------------------------------------------------------------------ queries
    @property
    def topic_ids(self) -> list[str]:
        return list(self.topics)

    def relevant_intents(self, topic: str) -> list[str]:
        """``I_q^+``: intents of ``topic`` with at least one document of grade >= 1, canonical order."""
        return self._relevant_intents[topic]

    @cached_property
    def _relevant_intents(self) -> dict[str, list[str]]:
        found = self.qrels_columns.relevant_pairs()
        return {tid: [i for i in topic.intent_ids if (tid, i) in found] for tid, topic in self.topics.items()}

    @cached_property
    def qrels_columns(self) -> QrelsColumns:
        """The judgments as parallel arrays (what :class:`~evaluation.arrays.TopicTable` reads)."""
        return QrelsColumns.of(self.judgments)

    def relevant_documents(self, topic: str) -> list[str]:
        """``R_T``: documents relevant (grade >= 1) to at least one intent of ``topic``, sorted."""
        return sorted(d for d, grades in self.judgments.get(topic, {}).items() if any(g >= 1 for g in grades.values()))

    def judged_documents(self, topic: str) -> set[str]:
        return set(self.judgments.get(topic, {}))

    def weights(self, topic: str) -> dict[str, float]:
        """Intent weights ``Pr(i|q)`` of ``topic`` (docs/metrics.md#intents-and-weights): as given, else uniform."""
        intents = self.topics[topic].intents
        if intents and intents[0].weight is not None:
            return {i.id: float(i.weight) for i in intents}  # type: ignore[arg-type]
        over = self.relevant_intents(topic) if self.uniform_over == "relevant" else [i.id for i in intents]
        share = 1.0 / len(over) if over else 0.0
        return {i.id: (share if i.id in over else 0.0) for i in intents}

    @property
    def max_grade(self) -> int:
        grades = self.qrels_columns.grade
        return int(grades.max()) if grades.size else 0

    # --------------------------------------------------------------- transforms
    def _derive(self, **changes) -> Collection:
        return replace(self, _cache={}, **changes)

    def keep_top_intents(self, k: int) -> Collection:
        """Keep the ``k`` heaviest intents of every topic and renormalise their weights (docs/metrics.md#intents-and-weights).

        Ties in weight go to the lower intent id. Removed intents lose their qrels lines, but a
        document judged only for them stays judged (it was assessed).
        """
        if k < 1:
            raise ValueError(f"k must be >= 1, got {k}")
        kept: dict[str, dict[str, float]] = {}
        for tid, topic in self.topics.items():
            weights = self.weights(tid)
            order = {iid: n for n, iid in enumerate(topic.intent_ids)}
            ranked = [i.id for i in sorted(topic.intents, key=lambda i: (-weights[i.id], order[i.id]))[:k]]
            total = sum(weights[i] for i in ranked)
            kept[tid] = {i: (weights[i] / total) if total > 0 else 1.0 / len(ranked) for i in ranked}
        return self.keep_intents(kept)

    def keep_intents(self, kept: Mapping[str, Mapping[str, float]]) -> Collection:
        """Keep only the given intents of every topic, with the given weights (topic -> intent -> weight).

        What a study stored as its kept subtopics (docs/metrics.md#intents-and-weights). Intents keep
        their collection order; removed intents lose their qrels lines, but a document judged only
        for them stays judged. A topic or intent the collection does not have is an error.
        """
        topics: dict[str, Topic] = {}
        judgments: Judgments = {}
        for tid, weights in kept.items():
            if tid not in self.topics:
                raise EvaluationError(f"unknown topic {tid}")
            topic = self.topics[tid]
            unknown = sorted(set(weights) - set(topic.intent_ids))
            if unknown:
                raise EvaluationError(f"topic {tid}: unknown {wording.named('intent', unknown)}")
            topics[tid] = replace(topic, intents=tuple(replace(i, weight=float(weights[i.id])) for i in topic.intents if i.id in weights))
            judgments[tid] = {doc: {i: g for i, g in grades.items() if i in weights} for doc, grades in self.judgments.get(tid, {}).items()}
        return self._derive(topics=topics, judgments=judgments)

    def with_weights(self, policy: WeightPolicy, over: Literal["relevant", "listed"] = "relevant") -> Collection:
        """Replace intent weights (the simplified collections of docs/metrics.md#simplified-collections).

        ``uniform``: ``1/M+`` over ``I_q^+`` (or over listed intents with ``over="listed"``);
        ``linear``: intents ranked by original weight (ties: id ascending), the j-th of K gets
        ``(K - j + 1) / (K (K + 1) / 2)``; ``original``: unchanged.
        """
        if policy == "original":
            return self
        if policy not in ("uniform", "linear"):
            raise ValueError(f"weight policy must be original, uniform or linear, got {policy!r}")
        if over not in ("relevant", "listed"):
            raise ValueError(f"over must be 'relevant' or 'listed', got {over!r}")
        topics: dict[str, Topic] = {}
        for tid, topic in self.topics.items():
            weights = self.weights(tid)
            pool = self.relevant_intents(tid) if over == "relevant" else topic.intent_ids
            order = {iid: n for n, iid in enumerate(topic.intent_ids)}
            ranked = sorted(pool, key=lambda i: (-weights[i], order[i]))
            size = len(ranked)
            if policy == "uniform":
                new = {i: 1.0 / size for i in ranked}
            else:
                new = {i: (size - j) / (size * (size + 1) / 2) for j, i in enumerate(ranked)}
            topics[tid] = replace(topic, intents=tuple(replace(i, weight=new.get(i.id, 0.0)) for i in topic.intents))
        return self._derive(topics=topics)

    def binarised(self, rel_level: int = 1) -> Collection:
        """Grades become ``1[g >= rel_level]``; judged status never changes (docs/metrics.md#simplified-collections)."""
        judgments = {
            tid: {doc: {i: int(g >= rel_level) for i, g in grades.items()} for doc, grades in docs.items()}
            for tid, docs in self.judgments.items()
        }
        return self._derive(judgments=judgments)

    def drop_documents(self, documents: Mapping[str, Iterable[str]]) -> Collection:
        """Delete every qrels line of the given documents (they become unjudged; docs/metrics.md#leave-one-out-reusability)."""
        judgments = dict(self.judgments)
        for tid, docs in documents.items():
            if tid in judgments:
                gone = set(docs)
                judgments[tid] = {d: g for d, g in judgments[tid].items() if d not in gone}
        return self._derive(judgments=judgments)

    def per_subtopic(self) -> Collection:
        """Every intent alone as a topic ``<topic>/<intent>`` (:data:`SUBTOPIC_TOPIC`) with weight 1.

        What a subtopic-level presentation shows (docs/metrics.md#weighted-topic-preference; Chen et al.): the metric computed for
        one subtopic. Its qrels are that intent's lines; documents judged only for other intents of
        the topic stay judged (they were assessed), so condensed lists keep them.
        """
        topics: dict[str, Topic] = {}
        judgments: Judgments = {}
        for tid, topic in self.topics.items():
            docs = self.judgments.get(tid, {})
            for intent in topic.intents:
                key = SUBTOPIC_TOPIC.format(topic=tid, subtopic=intent.id)
                topics[key] = Topic(key, (replace(intent, weight=1.0),), topic.query, topic.description)
                judgments[key] = {doc: {i: g for i, g in grades.items() if i == intent.id} for doc, grades in docs.items()}
        return self._derive(topics=topics, judgments=judgments)

    def subtopic_ids(self) -> dict[str, list[str]]:
        """Topic -> its intent ids, in canonical order (what :meth:`Run.per_subtopic` needs)."""
        return {tid: topic.intent_ids for tid, topic in self.topics.items()}

    def restrict_topics(self, topic_ids: Iterable[str]) -> Collection:
        """The collection on a subset of its topics (order as given)."""
        ids = list(topic_ids)
        unknown = [t for t in ids if t not in self.topics]
        if unknown:
            raise EvaluationError(f"unknown {wording.named('topic', unknown)}")
        return self._derive(topics={t: self.topics[t] for t in ids}, judgments=select_topics(self.judgments, ids))


def build_collection(
    judgments: Judgments | ColumnJudgments,
    intents: Mapping[str, list[Intent]] | None = None,
    topics: Mapping[str, Topic] | None = None,
    *,
    uniform_over: Literal["relevant", "listed"] = "relevant",
    name: str = "",
) -> Collection:
    """Assemble a :class:`Collection` from qrels, an optional intents file and optional topic texts.

    The intents of a topic are the union of those named by the qrels, the intents file and the
    topics file. Weights and types come from the intents file, types and texts from the topics
    file (the intents file wins on types when both give one). Topics are those of the qrels, in
    the order of ``topics`` when given, else in sorted order.
    """
    intents = intents or {}
    topics = topics or {}
    order = [t for t in topics if t in judgments] + sorted(t for t in judgments if t not in topics)
    for source, table in (("intents", intents), ("topics", topics)):
        unjudged = sorted(t for t in table if t not in judgments)
        if unjudged:
            warn(
                f"{wording.named('topic', unjudged)} of the {source} file {wording.have(len(unjudged))} no qrels and {wording.be(len(unjudged))} not evaluated"
            )
    named = _named_intents(judgments)
    result: dict[str, Topic] = {}
    for tid in order:
        given = {i.id: i for i in intents.get(tid, [])}
        described = {i.id: i for i in topics[tid].intents} if tid in topics else {}
        ids = set(given) | set(described) | named[tid]
        if given:
            unweighted = sorted(i for i in ids if i not in given)
            if unweighted:
                warn(
                    f"topic {tid}: {wording.named('intent', unweighted)} {wording.be(len(unweighted))} in the qrels or topics but not in the "
                    f"intents file; {'it gets' if len(unweighted) == 1 else 'they get'} weight 0"
                )
        built = []
        for iid in intent_sort_key(ids):
            base = described.get(iid, Intent(iid))
            if iid in given:
                weight = given[iid].weight
                kind = given[iid].type if given[iid].type else base.type
            else:
                weight = 0.0 if given else None
                kind = base.type
            built.append(Intent(iid, weight, kind, base.text))
        meta = topics.get(tid, Topic(tid))
        result[tid] = Topic(tid, tuple(built), meta.query, meta.description)
    for tid, topic in result.items():
        for intent in topic.intents:
            if intent.weight is not None and (intent.weight < 0 or not math.isfinite(intent.weight)):
                raise EvaluationError(f"topic {tid} intent {intent.id}: weight must be >= 0, got {intent.weight}")
    return Collection(result, select_topics(judgments, order), uniform_over=uniform_over, name=name)


def _named_intents(judgments: Mapping[str, dict[str, dict[str, int]]]) -> dict[str, set[str]]:
    """The intents the judgments name, per topic."""
    if isinstance(judgments, ColumnJudgments):
        return judgments.columns.intent_ids()
    return {tid: {i for grades in docs.values() for i in grades} for tid, docs in judgments.items()}
