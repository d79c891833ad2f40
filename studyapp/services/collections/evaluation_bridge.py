"""Database rows -> an ``evaluation`` collection, so study design and analysis reuse its logic.

The evaluation package defines weights, top-k intents and renormalisation (docs/metrics.md#intents-and-weights); the study
app never re-implements them, it converts its rows and calls the same functions.
"""

from __future__ import annotations

from collections.abc import Iterable

import evaluation.collection
from evaluation.collection import Intent, Judgments
from studyapp.models import Collection, Judgment, Subtopic, Topic


def to_evaluation_collection(collection: Collection, topic_ids: Iterable[str] | None = None) -> evaluation.collection.Collection:
    """The collection (or the given topics of it, in that order) as an evaluation ``Collection``."""
    topics = Topic.objects.filter(collection=collection).order_by("position")
    if topic_ids is not None:
        wanted = list(topic_ids)
        topics = topics.filter(topic_id__in=wanted)
        order = {t: n for n, t in enumerate(wanted)}
        rows = sorted(topics, key=lambda t: order[t.topic_id])
    else:
        rows = list(topics)
    intents: dict[int, list[Intent]] = {t.pk: [] for t in rows}
    for sub in Subtopic.objects.filter(topic__in=rows).order_by("topic_id", "position"):
        intents[sub.topic_id].append(Intent(sub.number, sub.weight, sub.type, sub.text))  # type: ignore[arg-type]
    judgments: Judgments = {t.topic_id: {} for t in rows}
    by_pk = {t.pk: t.topic_id for t in rows}
    query = Judgment.objects.filter(topic__in=rows).values_list("topic_id", "document__docid", "subtopic__number", "grade")
    for topic_pk, docid, intent, grade in query.iterator(chunk_size=5000):
        grades = judgments[by_pk[topic_pk]].setdefault(docid, {})
        if intent is not None:
            grades[intent] = grade
    eval_topics = {t.topic_id: evaluation.collection.Topic(t.topic_id, tuple(intents[t.pk]), t.query, t.description) for t in rows}
    return evaluation.collection.Collection(eval_topics, judgments, name=collection.name)
