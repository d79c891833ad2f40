"""The last plan of a study (``manage.py plan_study``): stored so pages show it without simulating.

A simulation takes minutes, so no page runs one: ``plan_study STUDY`` stores its table here (kind
``design``: before recruiting, from assumed users) and ``plan_study STUDY --from-data`` stores the
projection from the answers so far (kind ``data``); the set-up page and the dashboard read the row
and say when and under which assumptions it was computed. One row per study and kind: a new run
replaces the last.
"""

from __future__ import annotations

from django.db import models
from django.db.models import Q

from studyapp.models.study import Study


class PlanKind(models.TextChoices):
    DESIGN = "design", "from the design and assumed users (before recruiting)"
    DATA = "data", "from the answers so far (user model fitted to them)"


class StoredPlan(models.Model):
    Kind = PlanKind

    study = models.ForeignKey(Study, models.CASCADE, related_name="plans")
    kind = models.CharField(max_length=8, choices=Kind.choices)
    computed_at = models.DateTimeField()
    assumptions = models.JSONField(help_text="truth, signal, noise, random share, simulations per row, seed, reward")
    table = models.JSONField(help_text="one object per participant count: the planning table's columns")
    lines = models.TextField(help_text="the table as plan_study printed it")
    summary = models.TextField(help_text="one sentence: the recommendation, or that no size in the grid separates the metrics")
    answers = models.PositiveIntegerField(default=0, help_text="valid answers at the analysed level when computed")
    seconds = models.FloatField(default=0, help_text="time the simulation took")

    class Meta:
        ordering = ["study", "kind"]
        verbose_name = "stored plan"
        constraints = [
            models.UniqueConstraint(fields=["study", "kind"], name="storedplan_one_per_kind"),
            models.CheckConstraint(condition=Q(kind__in=PlanKind.values), name="storedplan_kind_valid"),
        ]

    def __str__(self) -> str:
        return f"{self.study}: plan {self.kind} ({self.computed_at:%Y-%m-%d %H:%M})"
