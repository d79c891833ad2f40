"""An imported test collection: topics, subtopics, documents, judgments and the runs' ranked lists.

Rows are written once by ``services.collections.importing`` and never edited by the study workflow; the
evaluation package gets them back through ``services.collections.evaluation_bridge.to_evaluation_collection``.
"""

from __future__ import annotations

from django.db import models
from django.db.models import Q


class Collection(models.Model):
    """A named test collection (qrels, intents, topics, display data, runs)."""

    name = models.CharField(max_length=100, unique=True)
    description = models.TextField(blank=True)
    # Where the rows came from (file names and options), for provenance in the admin.
    source = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Topic(models.Model):
    """A query of the collection; ``position`` keeps the collection's topic order."""

    collection = models.ForeignKey(Collection, models.CASCADE, related_name="topics")
    topic_id = models.CharField(max_length=64)
    query = models.TextField(blank=True)
    description = models.TextField(blank=True)
    position = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["collection", "position"]
        constraints = [models.UniqueConstraint(fields=["collection", "topic_id"], name="topic_unique_id")]

    def __str__(self) -> str:
        return f"{self.topic_id}: {self.query}" if self.query else self.topic_id

    @property
    def display_query(self) -> str:
        """What a result page shows as the query: the query text, else the topic id."""
        return self.query or self.topic_id


class SubtopicType(models.TextChoices):
    """The kind of intent a subtopic stands for."""

    INF = "inf", "informational"
    NAV = "nav", "navigational"


class Subtopic(models.Model):
    """An intent (TREC subtopic) of a topic. ``weight`` is null when the collection gives none."""

    Type = SubtopicType

    topic = models.ForeignKey(Topic, models.CASCADE, related_name="subtopics")
    number = models.CharField(max_length=32, help_text="the intent id of the qrels (usually 1, 2, ...)")
    text = models.TextField(blank=True)
    weight = models.FloatField(null=True, blank=True, help_text="Pr(i|q) as given; empty means uniform")
    type = models.CharField(max_length=3, choices=Type.choices, default=Type.INF)
    position = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["topic", "position"]
        constraints = [
            models.UniqueConstraint(fields=["topic", "number"], name="subtopic_unique_number"),
            models.CheckConstraint(condition=Q(weight__isnull=True) | Q(weight__gte=0), name="subtopic_weight_nonnegative"),
            models.CheckConstraint(condition=Q(type__in=SubtopicType.values), name="subtopic_type_valid"),
        ]

    def __str__(self) -> str:
        return f"{self.topic.topic_id}/{self.number}"


class Document(models.Model):
    """A document's display data; without it, result pages show the docid."""

    collection = models.ForeignKey(Collection, models.CASCADE, related_name="documents")
    docid = models.CharField(max_length=200)
    title = models.TextField(blank=True)
    url = models.TextField(blank=True)
    snippet = models.TextField(blank=True)
    # Main content (import_documents): result pages draw a query-biased snippet from it (services.collections.snippets).
    text = models.TextField(blank=True, default="", db_default="")

    class Meta:
        ordering = ["collection", "docid"]
        constraints = [models.UniqueConstraint(fields=["collection", "docid"], name="document_unique_docid")]

    def __str__(self) -> str:
        return self.docid

    @property
    def display_title(self) -> str:
        return self.title or self.docid


class Judgment(models.Model):
    """One qrels line: the grade of a document for a subtopic.

    ``subtopic`` is null for a document judged for the topic but relevant to no intent (NTCIR
    intent ``0``); such a row keeps the document *judged* (docs/metrics.md#relevance-and-empty-topics).
    """

    topic = models.ForeignKey(Topic, models.CASCADE, related_name="judgments")
    subtopic = models.ForeignKey(Subtopic, models.CASCADE, null=True, blank=True, related_name="judgments")
    document = models.ForeignKey(Document, models.CASCADE, related_name="judgments")
    grade = models.PositiveSmallIntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["subtopic", "document"], condition=Q(subtopic__isnull=False), name="judgment_unique_subtopic_doc"
            ),
            models.UniqueConstraint(fields=["topic", "document"], condition=Q(subtopic__isnull=True), name="judgment_unique_topic_doc"),
            models.CheckConstraint(condition=Q(grade__gte=0), name="judgment_grade_nonnegative"),
            models.CheckConstraint(condition=Q(subtopic__isnull=False) | Q(grade=0), name="judgment_no_intent_is_grade_0"),
        ]

    def __str__(self) -> str:
        intent = self.subtopic.number if self.subtopic_id else "-"
        return f"{self.topic.topic_id} {intent} {self.document.docid} {self.grade}"


class Run(models.Model):
    """A system's ranked lists for the collection's topics."""

    collection = models.ForeignKey(Collection, models.CASCADE, related_name="runs")
    name = models.CharField(max_length=100)
    source = models.CharField(max_length=500, blank=True, help_text="file it was imported from")

    class Meta:
        ordering = ["collection", "name"]
        constraints = [models.UniqueConstraint(fields=["collection", "name"], name="run_unique_name")]

    def __str__(self) -> str:
        return self.name


class RankedItem(models.Model):
    """Rank ``rank`` (1-based) of ``run``'s list for ``topic``."""

    run = models.ForeignKey(Run, models.CASCADE, related_name="items")
    topic = models.ForeignKey(Topic, models.CASCADE, related_name="ranked_items")
    rank = models.PositiveIntegerField()
    document = models.ForeignKey(Document, models.CASCADE, related_name="ranked_items")

    class Meta:
        ordering = ["run", "topic", "rank"]
        constraints = [
            models.UniqueConstraint(fields=["run", "topic", "rank"], name="rankeditem_unique_rank"),
            models.UniqueConstraint(fields=["run", "topic", "document"], name="rankeditem_unique_document"),
            models.CheckConstraint(condition=Q(rank__gte=1), name="rankeditem_rank_positive"),
        ]

    def __str__(self) -> str:
        return f"{self.run.name} {self.topic.topic_id} #{self.rank}"
