"""A study design over a collection: chosen runs, topics, kept subtopics and the presentations asked.

Created in one go by ``services.design.study_design.create_study``; the design fields are frozen after
that (the admin shows them read-only) because presentations were generated from them.
"""

from __future__ import annotations

import math
import secrets

from django.db import models
from django.db.models import F, Q, QuerySet

from studyapp.compiled_queries import compiled
from studyapp.models.collection import Collection, Document, RankedItem, Run, Subtopic, Topic
from studyapp.models.study_settings import ExcludedExit, FastTime, StudyLanguage, setting_column, setting_constraints

PAGE_FIELDS = ("docid", "title", "url", "snippet", "text")  # what a result page shows of a document (run_page reads no more)


class Level(models.TextChoices):
    """What a presentation asks about: the whole topic or one of its subtopics."""

    TOPIC = "topic", "topic level (all kept subtopics)"
    SUBTOPIC = "subtopic", "subtopic level (one subtopic)"


TOPIC, SUBTOPIC = Level.TOPIC, Level.SUBTOPIC  # short names for the many places that compare levels


class StudyStatus(models.TextChoices):
    """Whether a study takes newcomers (open), not for now (paused) or never again (closed)."""

    OPEN = "open", "open"
    PAUSED = "paused", "paused"
    CLOSED = "closed", "closed"


class StudyLevels(models.TextChoices):
    """Which levels a study asks about."""

    TOPIC = "topic", "topic only"
    SUBTOPIC = "subtopic", "subtopic only"
    BOTH = "both", "topic and subtopic"


def new_pseudonym_secret() -> str:
    """A random key for the study's annotator pseudonyms (services.data.pseudonyms)."""
    return secrets.token_hex(32)


class Study(models.Model):
    """A preference study: its collection, status and levels, and one column per declared setting.

    The settings' columns and their checks are made from :data:`studyapp.models.study_settings.SETTINGS`,
    the one declaration the JSON configuration and the admin also read; each has its line here, in the
    declaration's order (tests/studyapp/test_study_settings.py finds every declared setting's column).
    """

    Status = StudyStatus
    Levels = StudyLevels
    FastTime = FastTime
    Language = StudyLanguage
    ExcludedExit = ExcludedExit

    name = models.CharField(max_length=100, unique=True)
    slug = models.SlugField(
        max_length=100, unique=True, help_text="part of the annotators' address: /s/demo-study/ for the slug demo-study"
    )
    collection = models.ForeignKey(Collection, models.PROTECT, related_name="studies")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.OPEN)

    levels = models.CharField(max_length=10, choices=Levels.choices, default=Levels.BOTH)

    config = models.JSONField(default=dict, blank=True, help_text="the configuration it was created from")
    pseudonym_secret = models.CharField(
        max_length=64, default=new_pseudonym_secret, editable=False, help_text="HMAC key of the annotator pseudonyms in exports"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    # -- one column per declared setting (studyapp.models.study_settings.SETTINGS) --
    subtopics_per_topic = setting_column("subtopics_per_topic")
    depth = setting_column("depth")
    annotators_per_presentation = setting_column("annotators_per_presentation")
    items_per_annotator = setting_column("items_per_annotator")
    fast_threshold_seconds = setting_column("fast_threshold_seconds")
    fast_limit = setting_column("fast_limit")
    lease_minutes = setting_column("lease_minutes")
    check_share = setting_column("check_share")
    consent_text = setting_column("consent_text")
    consent_version = setting_column("consent_version")
    instructions = setting_column("instructions")
    completion_code = setting_column("completion_code")
    screenout_code = setting_column("screenout_code")
    withdrawal_code = setting_column("withdrawal_code")
    platform_id_retention_days = setting_column("platform_id_retention_days")
    redirect_url = setting_column("redirect_url")
    allocation = setting_column("allocation")
    candidate_metrics = setting_column("candidate_metrics")
    same_pair_both_levels = setting_column("same_pair_both_levels")
    require_platform_id = setting_column("require_platform_id")
    language = setting_column("language")
    min_viewport_width = setting_column("min_viewport_width")
    excluded_exit = setting_column("excluded_exit")
    fast_time = setting_column("fast_time")
    check_fail_limit = setting_column("check_fail_limit")
    straightline_limit = setting_column("straightline_limit")
    side_bias_limit = setting_column("side_bias_limit")
    median_seconds_min = setting_column("median_seconds_min")
    bonus_amount = setting_column("bonus_amount")
    bonus_reason = setting_column("bonus_reason")

    class Meta:
        verbose_name_plural = "studies"
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(condition=Q(status__in=StudyStatus.values), name="study_status_valid"),
            models.CheckConstraint(condition=Q(levels__in=StudyLevels.values), name="study_levels_valid"),
            *setting_constraints(),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def level_list(self) -> list[str]:
        return [TOPIC, SUBTOPIC] if self.levels == self.Levels.BOTH else [self.levels]

    @property
    def check_items_per_annotator(self) -> int:
        # Round half up; the small epsilon absorbs float noise such as 60 * 0.1 = 6.000000000000001.
        return int(math.floor(self.items_per_annotator * self.check_share + 0.5 + 1e-9))

    @property
    def regular_items_per_annotator(self) -> int:
        return self.items_per_annotator - self.check_items_per_annotator

    def completion_redirect(self) -> str:
        """The redirect URL with ``{code}`` filled in ('' when the study has none)."""
        return self.redirect_url.replace("{code}", self.completion_code) if self.redirect_url else ""


class PresentationKind(models.TextChoices):
    """A regular run pair or one of the two kinds of check item."""

    PAIR = "pair", "run pair"
    IDENTICAL = "identical", "check: identical pages"
    DEGRADED = "degraded", "check: degraded copy"


class StudyRun(models.Model):
    study = models.ForeignKey(Study, models.CASCADE, related_name="study_runs")
    run = models.ForeignKey(Run, models.PROTECT, related_name="study_runs")

    class Meta:
        ordering = ["study", "run__name"]
        constraints = [models.UniqueConstraint(fields=["study", "run"], name="studyrun_unique")]

    def __str__(self) -> str:
        return f"{self.study}: {self.run}"


class StudyTopic(models.Model):
    study = models.ForeignKey(Study, models.CASCADE, related_name="study_topics")
    topic = models.ForeignKey(Topic, models.PROTECT, related_name="study_topics")
    position = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["study", "position"]
        constraints = [models.UniqueConstraint(fields=["study", "topic"], name="studytopic_unique")]

    def __str__(self) -> str:
        return f"{self.study}: {self.topic.topic_id}"


class StudySubtopic(models.Model):
    """A kept subtopic of a study topic with its renormalised weight (docs/metrics.md#intents-and-weights)."""

    study_topic = models.ForeignKey(StudyTopic, models.CASCADE, related_name="kept_subtopics")
    subtopic = models.ForeignKey(Subtopic, models.PROTECT, related_name="study_subtopics")
    weight = models.FloatField()
    position = models.PositiveSmallIntegerField(default=0, help_text="0 = heaviest")

    class Meta:
        ordering = ["study_topic", "position"]
        constraints = [
            models.UniqueConstraint(fields=["study_topic", "subtopic"], name="studysubtopic_unique"),
            models.CheckConstraint(condition=Q(weight__gte=0) & Q(weight__lte=1), name="studysubtopic_weight_range"),
        ]

    def __str__(self) -> str:
        return f"{self.study_topic}/{self.subtopic.number} ({self.weight:.3f})"


class Presentation(models.Model):
    """One thing to judge: two result pages for a topic, at topic level or for one subtopic.

    Regular presentations (``kind="pair"``) compare two runs in canonical order, run_a < run_b by
    name. Check items compare a run with itself (``identical``, expected answer 0) or with a
    degraded copy shown on the b side (``degraded``, expected sign -1: a is better); they are
    scored by the quality checks and left out of the analysis.
    """

    Kind = PresentationKind

    study = models.ForeignKey(Study, models.CASCADE, related_name="presentations")
    kind = models.CharField(max_length=10, choices=Kind.choices, default=Kind.PAIR)
    level = models.CharField(max_length=10, choices=Level.choices)
    topic = models.ForeignKey(Topic, models.PROTECT, related_name="presentations")
    subtopic = models.ForeignKey(Subtopic, models.PROTECT, null=True, blank=True, related_name="presentations")
    run_a = models.ForeignKey(Run, models.PROTECT, related_name="+")
    run_b = models.ForeignKey(Run, models.PROTECT, related_name="+")
    # For degraded checks: the b side's documents (Document ids, in rank order).
    b_documents = models.JSONField(default=list, blank=True)
    expected_sign = models.SmallIntegerField(null=True, blank=True, help_text="checks only: expected sign of the canonical answer")

    class Meta:
        ordering = ["study", "id"]
        constraints = [
            models.CheckConstraint(condition=Q(level__in=Level.values), name="presentation_level_valid"),
            models.CheckConstraint(condition=Q(kind__in=PresentationKind.values), name="presentation_kind_valid"),
            models.CheckConstraint(
                condition=(Q(level=TOPIC) & Q(subtopic__isnull=True)) | (Q(level=SUBTOPIC) & Q(subtopic__isnull=False)),
                name="presentation_subtopic_matches_level",
            ),
            models.CheckConstraint(
                condition=(Q(kind="pair") & ~Q(run_a=F("run_b")) & Q(expected_sign__isnull=True))
                | (~Q(kind="pair") & Q(run_a=F("run_b")) & Q(expected_sign__in=[-1, 0, 1])),
                name="presentation_runs_match_kind",
            ),
            models.UniqueConstraint(
                fields=["study", "kind", "topic", "run_a", "run_b"], condition=Q(level=TOPIC), name="presentation_unique_topic_level"
            ),
            models.UniqueConstraint(
                fields=["study", "kind", "subtopic", "run_a", "run_b"],
                condition=Q(level=SUBTOPIC),
                name="presentation_unique_subtopic_level",
            ),
        ]
        indexes = [models.Index(fields=["study", "kind"], name="presentation_study_kind")]

    def __str__(self) -> str:
        where = self.topic.topic_id if self.level == TOPIC else f"{self.topic.topic_id}/{self.subtopic.number}"
        if self.kind == self.Kind.PAIR:
            return f"{where} {self.run_a.name} vs {self.run_b.name}"
        return f"{where} {self.run_a.name} {self.kind} check"

    @property
    def group(self) -> tuple[int, int, int]:
        """(topic, run_a, run_b): the unit of the level exclusion rule."""
        return (self.topic_id, self.run_a_id, self.run_b_id)

    def documents(self, side: str) -> list[Document]:
        """The result page of side ``"a"`` or ``"b"``, cut at the study's depth."""
        if side not in ("a", "b"):
            raise ValueError(f"side must be 'a' or 'b', got {side!r}")
        if side == "b" and self.kind == self.Kind.DEGRADED:
            return documents_in_order(self.b_documents)
        return run_page(self.topic_id, self.run_a_id if side == "a" else self.run_b_id, self.study.depth)


def _run_page_query(topic_id: int, run_id: int, depth: int) -> QuerySet[RankedItem]:
    items = RankedItem.objects.filter(topic_id=topic_id, run_id=run_id, rank__lte=depth).select_related("document")
    return items.only(*(f"document__{name}" for name in PAGE_FIELDS)).order_by("rank")


def run_page(topic_id: int, run_id: int, depth: int) -> list[Document]:
    """A run's result page for a topic cut at ``depth``, in rank order, with only what a page shows (one query).

    Item pages read one whenever their display cache misses, so its SQL is built once per connection.
    """
    return [item.document for item in compiled("run_page", _run_page_query, [-1, -2, 1000]).fetch([topic_id, run_id, depth])]


def documents_in_order(ids: list[int]) -> list[Document]:
    """The documents of ``ids`` in that order, with only what a page shows (the worse side of a degraded check)."""
    by_id = Document.objects.only(*PAGE_FIELDS).in_bulk(ids)
    return [by_id[i] for i in ids]
