"""The erasure log: that a participant's data was erased, when, how and how much, and nothing about them.

A row keeps no platform id, pseudonym, token, address or answer: only the study, the time, who asked
(the participant on the withdraw page, staff in the admin or ``manage.py erase_participant``), the
staff user who handled it, and how many rows went. See services.data.erasure.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from studyapp.models.study import Study


class ErasureSource(models.TextChoices):
    WITHDRAWAL = "withdrawal", "the participant withdrew (withdraw page)"
    ADMIN = "admin", "staff request (admin action)"
    COMMAND = "command", "staff request (manage.py erase_participant)"


class ErasureLog(models.Model):
    Source = ErasureSource

    study = models.ForeignKey(Study, models.CASCADE, related_name="erasures")
    source = models.CharField(max_length=12, choices=Source.choices)
    staff = models.ForeignKey(settings.AUTH_USER_MODEL, models.SET_NULL, null=True, blank=True, related_name="+")
    answers = models.PositiveIntegerField(help_text="answers erased")
    assignments = models.PositiveIntegerField(help_text="items given to them, answered or not (their places re-opened)")
    status = models.CharField(max_length=10, blank=True, help_text="where they stood: new, active, finished, excluded, ...")
    erased_at = models.DateTimeField()

    class Meta:
        ordering = ["study", "erased_at", "id"]
        verbose_name = "erasure"
        constraints = [models.CheckConstraint(condition=Q(source__in=ErasureSource.values), name="erasurelog_source_valid")]

    def __str__(self) -> str:
        return f"{self.study}: {self.answers} answers erased ({self.get_source_display()}, {self.erased_at:%Y-%m-%d %H:%M})"


class WithdrawnParticipant(models.Model):
    """That someone with a given platform id withdrew from a study, so opening the study's link again
    does not admit them as a newcomer. Holds no platform id: ``key`` is an HMAC of the platform and the
    id under the study's secret (services.data.erasure.withdrawal_key), dropped with the platform ids
    after the retention period (purge_platform_ids)."""

    study = models.ForeignKey(Study, models.CASCADE, related_name="withdrawn")
    key = models.CharField(max_length=64, help_text="HMAC-SHA256 of the platform and platform id (no id is kept)")
    withdrawn_at = models.DateTimeField()

    class Meta:
        ordering = ["study", "withdrawn_at", "id"]
        verbose_name = "withdrawn participant"
        constraints = [models.UniqueConstraint(fields=["study", "key"], name="withdrawn_once_per_study")]

    def __str__(self) -> str:
        return f"{self.study}: a participant withdrew ({self.withdrawn_at:%Y-%m-%d %H:%M})"
