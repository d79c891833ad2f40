"""Who may see a study: its team (an owner and members) and who of them may see raw platform ids.

Staff pages, downloads, quality actions and the admin's study objects show a study only to its team
(superusers see every study); raw platform ids (Prolific PIDs, MTurk worker ids) only to members
with ``platform_ids``. See services.access.teams and docs/studyapp.md#study-teams.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from studyapp.models.study import Study


class TeamRole(models.TextChoices):
    OWNER = "owner", "owner"
    MEMBER = "member", "member"


class StudyMember(models.Model):
    """One staff user on one study's team."""

    Role = TeamRole

    study = models.ForeignKey(Study, models.CASCADE, related_name="members")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, models.CASCADE, related_name="study_memberships")
    role = models.CharField(max_length=10, choices=Role.choices, default=Role.MEMBER)
    platform_ids = models.BooleanField(
        default=False, help_text="may see and download raw platform ids (Prolific PIDs, MTurk worker ids), e.g. to pay"
    )

    class Meta:
        ordering = ["study", "role", "user__username"]
        verbose_name = "team member"
        constraints = [
            models.UniqueConstraint(fields=["study", "user"], name="studymember_unique_user"),
            models.UniqueConstraint(fields=["study"], condition=Q(role="owner"), name="studymember_one_owner"),
            models.CheckConstraint(condition=Q(role__in=TeamRole.values), name="studymember_role_valid"),
        ]

    def __str__(self) -> str:
        return f"{self.user} ({self.get_role_display()} of {self.study})"
