"""Reviewing submissions on the recruitment platform: the decision per submission and every API call.

:class:`ReviewDecision` holds what was decided for one annotator's submission (the rules' suggestion
as applied, or a staff override with who made it) and what reached the platform: the transition
sent, the bonus's stable token (created once, reused on every retry: MTurk's UniqueRequestToken) and
the platform's id of a created bonus payment (Prolific's bulk bonus, paid once). :class:`PlatformCall`
is the audit log: one row per API call with its result; credentials never reach it. See
services.review.decisions and docs/studyapp.md#reviewing-and-paying-on-the-platform.
"""

from __future__ import annotations

import uuid
from decimal import Decimal

from django.conf import settings
from django.db import models
from django.db.models import Q

from studyapp.models.annotation import Annotator
from studyapp.models.study import Study


class ReviewAction(models.TextChoices):
    APPROVE = "approve", "approve"
    REJECT = "reject", "reject"
    SKIP = "skip", "no action"


class ReviewSource(models.TextChoices):
    RULES = "rules", "the study's rules"
    STAFF = "staff", "staff decision"


class ReviewDecision(models.Model):
    """The review of one annotator's submission on their platform (at most one per annotator)."""

    Action = ReviewAction
    Source = ReviewSource

    study = models.ForeignKey(Study, models.CASCADE, related_name="review_decisions")
    annotator = models.OneToOneField(Annotator, models.CASCADE, related_name="review_decision")
    action = models.CharField(max_length=10, choices=Action.choices)
    category = models.CharField(max_length=30, blank=True, help_text="the platform's rejection category (Prolific: e.g. FAILED_CHECK)")
    message = models.TextField(blank=True, help_text="the participant-facing reason sent with a rejection")
    bonus = models.DecimalField(max_digits=8, decimal_places=2, default=Decimal("0.00"), help_text="bonus to pay (0: none)")
    source = models.CharField(max_length=10, choices=Source.choices, default=Source.RULES)
    staff = models.ForeignKey(settings.AUTH_USER_MODEL, models.SET_NULL, null=True, blank=True, related_name="+")
    decided_at = models.DateTimeField()
    applied_action = models.CharField(
        max_length=10, blank=True, help_text="approve/reject: what the platform holds (sent by us or found there)"
    )
    applied_at = models.DateTimeField(null=True, blank=True, help_text="when the last apply looked at this submission")
    applied_note = models.TextField(blank=True, help_text="what the last apply found, e.g. an error or 'returned on Prolific'")
    claimed_at = models.DateTimeField(
        null=True, blank=True, editable=False, help_text="an apply is sending this decision: its holder's last heartbeat"
    )
    claimed_by = models.CharField(max_length=100, blank=True, editable=False, help_text="host:pid of the apply sending it")
    bonus_token = models.UUIDField(default=uuid.uuid4, editable=False, help_text="our stable id of this bonus, the same on every retry")
    bonus_batch = models.CharField(max_length=100, blank=True, help_text="the platform's id of the bonus payment created for it (Prolific)")
    bonus_paid = models.DecimalField(max_digits=8, decimal_places=2, null=True, blank=True, help_text="the amount paid")
    bonus_paid_at = models.DateTimeField(null=True, blank=True)
    bonus_unknown = models.BooleanField(
        default=False,
        help_text="pay sent, outcome unknown: set before the pay call goes out, cleared only by a clean answer or staff",
    )
    bonus_sent_at = models.DateTimeField(null=True, blank=True, help_text="when the pay call whose answer is awaited was sent")

    class Meta:
        ordering = ["study", "annotator__created_at"]
        constraints = [
            models.CheckConstraint(condition=Q(action__in=ReviewAction.values), name="reviewdecision_action_valid"),
            models.CheckConstraint(condition=Q(source__in=ReviewSource.values), name="reviewdecision_source_valid"),
            models.CheckConstraint(condition=Q(bonus__gte=0), name="reviewdecision_bonus_not_negative"),
            models.UniqueConstraint(fields=["bonus_token"], name="reviewdecision_unique_bonus_token"),
        ]

    def __str__(self) -> str:
        return f"{self.annotator}: {self.get_action_display()} ({self.get_source_display()})"


class PlatformCall(models.Model):
    """One call to a platform's API and its result (the audit log; never credentials)."""

    study = models.ForeignKey(Study, models.CASCADE, related_name="platform_calls")
    annotator = models.ForeignKey(Annotator, models.SET_NULL, null=True, blank=True, related_name="platform_calls")
    platform = models.CharField(max_length=10)
    operation = models.CharField(max_length=15, help_text="state, approve, reject, bonus, pay_bonus, create_draft")
    request = models.JSONField(default=dict, blank=True, help_text="method, path and body (no credentials)")
    ok = models.BooleanField()
    status = models.PositiveSmallIntegerField(null=True, blank=True, help_text="HTTP status (empty: network error)")
    response = models.TextField(blank=True, help_text="the answer or the error, shortened")
    staff = models.ForeignKey(settings.AUTH_USER_MODEL, models.SET_NULL, null=True, blank=True, related_name="+")
    created_at = models.DateTimeField()

    class Meta:
        ordering = ["study", "created_at", "id"]
        verbose_name = "platform call"
        indexes = [models.Index(fields=["study", "created_at"], name="platformcall_study_time")]

    def __str__(self) -> str:
        return f"{self.operation} {'ok' if self.ok else 'failed'} ({self.status or 'no answer'})"


class ReviewJobStatus(models.TextChoices):
    QUEUED = "queued", "queued"
    RUNNING = "running", "running"
    DONE = "done", "done"
    FAILED = "failed", "failed"


class ReviewJob(models.Model):
    """An Apply of a study's review asked on the review page, run by a job worker (``manage.py run_jobs``) instead of
    the request, with its progress (services.review.jobs)."""

    Status = ReviewJobStatus

    study = models.ForeignKey(Study, models.CASCADE, related_name="review_jobs")
    staff = models.ForeignKey(settings.AUTH_USER_MODEL, models.SET_NULL, null=True, blank=True, related_name="+")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    created_at = models.DateTimeField()
    started_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True, help_text="the worker's last sign of life (a silent one is taken over)")
    finished_at = models.DateTimeField(null=True, blank=True)
    worker = models.CharField(max_length=100, blank=True, help_text="host and process id of the worker running it")
    attempts = models.PositiveSmallIntegerField(default=0, help_text="workers that took it (more than 1: a worker was lost)")
    steps_done = models.PositiveIntegerField(default=0)
    steps_failed = models.PositiveIntegerField(default=0)
    log = models.TextField(blank=True, help_text="one line per step, as the command prints them")
    error = models.TextField(blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [models.CheckConstraint(condition=Q(status__in=ReviewJobStatus.values), name="reviewjob_status_valid")]
        indexes = [models.Index(fields=["status", "created_at"], name="reviewjob_status_time")]

    def __str__(self) -> str:
        return f"apply {self.study} ({self.status})"
