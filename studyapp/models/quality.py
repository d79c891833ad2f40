"""The log of quality decisions: every exclusion and reinstatement, automatic or by staff.

Nothing is ever deleted: an excluded annotator keeps their answers, which stop counting (see
:meth:`studyapp.models.annotation.AssignmentQuerySet.valid`). Each row says who decided (a rule, or
a staff user with a reason), which rule with which counts, and which open leases were freed.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from studyapp.models.annotation import Annotator
from studyapp.models.study import Study


class QualityAction(models.TextChoices):
    EXCLUDE = "exclude", "excluded"
    REINSTATE = "reinstate", "reinstated"


class DecisionRule(models.TextChoices):
    """Why a decision was taken (``QualityDecision.Rule``): one of the quality rules (the keys of ``services.quality.rules.RULES``,
    in its order, whose ``QualityRule`` declares the rule), or a decision of staff."""

    FAST = "fast", "fast decisions"
    CHECKS = "checks", "failed check items"
    STRAIGHTLINE = "straightline", "straight-lining"
    SIDE_BIAS = "side_bias", "left/right bias"
    MEDIAN_TIME = "median_time", "median decision time"
    RULES = "rules", "no rule broken any more"
    STAFF = "staff", "staff decision"


class QualityDecision(models.Model):
    """One quality decision on one annotator (``staff`` empty = automatic)."""

    Action = QualityAction
    Rule = DecisionRule

    study = models.ForeignKey(Study, models.CASCADE, related_name="quality_decisions")
    annotator = models.ForeignKey(Annotator, models.CASCADE, related_name="quality_decisions")
    action = models.CharField(max_length=10, choices=Action.choices)
    rule = models.CharField(max_length=15, choices=Rule.choices)
    detail = models.TextField(blank=True, help_text='what the rule found, e.g. "fast: 31 of 60 decisions under 10 s"')
    counts = models.JSONField(default=dict, blank=True, help_text="the rule's numbers and the settings it used")
    staff = models.ForeignKey(settings.AUTH_USER_MODEL, models.SET_NULL, null=True, blank=True, related_name="+")
    reason = models.TextField(blank=True, help_text="the staff member's reason")
    released = models.JSONField(default=list, blank=True, help_text="ids of the open assignments freed by this exclusion")
    decided_at = models.DateTimeField()

    class Meta:
        ordering = ["study", "decided_at", "id"]
        constraints = [
            models.CheckConstraint(condition=Q(action__in=QualityAction.values), name="qualitydecision_action_valid"),
            models.CheckConstraint(condition=Q(rule__in=DecisionRule.values), name="qualitydecision_rule_valid"),
            models.CheckConstraint(condition=~Q(rule="staff") | ~Q(reason=""), name="qualitydecision_staff_reason"),
        ]
        indexes = [models.Index(fields=["annotator", "decided_at"], name="qualitydecision_annotator")]

    def __str__(self) -> str:
        who = f"staff {self.staff}" if self.rule == DecisionRule.STAFF else "automatic"
        return f"{self.annotator} {self.get_action_display()} ({who}: {self.detail or self.reason})"

    @property
    def automatic(self) -> bool:
        return self.rule != DecisionRule.STAFF
