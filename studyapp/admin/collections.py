"""Admin of imported collections: topics, subtopics, documents, judgments, runs and their ranked lists.

What shapes a study's pages and analysis (topics and their queries, subtopics and their weights,
judgments, runs and their ranked lists) is read-only once a study uses the collection
(:class:`FrozenOnceStudied`); documents' display data stays correctable (``import_documents`` adds it too).
"""

from __future__ import annotations

from django.contrib import admin

from studyapp import models as m
from studyapp.admin.common import CountColumns, FrozenOnceStudied


@admin.register(m.Collection)
class CollectionAdmin(CountColumns, admin.ModelAdmin):
    list_display = ["name", "n_topics", "n_runs", "created_at"]
    search_fields = ["name", "description"]
    readonly_fields = ["source", "created_at"]
    counts = {"n_topics": ("topics", "topics"), "n_runs": ("runs", "runs")}


class SubtopicInline(FrozenOnceStudied, admin.TabularInline):
    model = m.Subtopic  # its obj is the topic: collection_path leads from the topic
    extra = 0
    fields = ["number", "type", "weight", "text"]


@admin.register(m.Topic)
class TopicAdmin(FrozenOnceStudied, CountColumns, admin.ModelAdmin):
    list_display = ["topic_id", "query", "collection", "n_subtopics"]
    list_filter = ["collection"]
    search_fields = ["topic_id", "query", "description"]
    list_select_related = ["collection"]
    inlines = [SubtopicInline]
    counts = {"n_subtopics": ("subtopics", "subtopics")}


@admin.register(m.Subtopic)
class SubtopicAdmin(FrozenOnceStudied, admin.ModelAdmin):
    collection_path = "topic__collection"
    list_display = ["__str__", "type", "weight", "text"]
    list_filter = ["type", "topic__collection"]
    search_fields = ["text", "topic__topic_id", "topic__query"]
    list_select_related = ["topic"]
    raw_id_fields = ["topic"]


@admin.register(m.Document)
class DocumentAdmin(admin.ModelAdmin):
    list_display = ["docid", "title", "url", "collection"]
    list_filter = ["collection"]
    search_fields = ["docid", "title", "url", "snippet"]
    list_select_related = ["collection"]


@admin.register(m.Judgment)
class JudgmentAdmin(FrozenOnceStudied, admin.ModelAdmin):
    collection_path = "topic__collection"
    list_display = ["topic", "subtopic", "document", "grade"]
    list_filter = ["grade", "topic__collection"]
    search_fields = ["document__docid", "topic__topic_id"]
    list_select_related = ["topic", "subtopic__topic", "document"]
    raw_id_fields = ["topic", "subtopic", "document"]


@admin.register(m.Run)
class RunAdmin(FrozenOnceStudied, CountColumns, admin.ModelAdmin):
    list_display = ["name", "collection", "source", "n_items"]
    list_filter = ["collection"]
    search_fields = ["name", "source"]
    list_select_related = ["collection"]
    counts = {"n_items": ("items", "ranked items")}


@admin.register(m.RankedItem)
class RankedItemAdmin(FrozenOnceStudied, admin.ModelAdmin):
    collection_path = "run__collection"
    list_display = ["run", "topic", "rank", "document"]
    list_filter = ["run__collection", "run"]
    search_fields = ["document__docid", "topic__topic_id", "run__name"]
    list_select_related = ["run", "topic", "document"]
    raw_id_fields = ["run", "topic", "document"]
