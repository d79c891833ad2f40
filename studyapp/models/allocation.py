"""What adaptive allocation stored: each run-pair group's draw and dispute, and each round (docs/meta.md#adaptive-allocation).

Written off the request path by ``services.analysis.adaptive.recompute`` (``manage.py allocation_priorities``);
admission reads only which groups are drawn (``services.participation.allocation``), the analysis the
probabilities (the design weights of ``evaluation.meta.adaptive``).
"""

from __future__ import annotations

from django.db import models
from django.db.models import Q

from studyapp.models.collection import Run, Topic
from studyapp.models.study import Study

NOT_DRAWN = -1


class AllocationRound(models.Model):
    """One draw of adaptive allocation: when, after how many valid answers, which metrics were still contenders."""

    study = models.ForeignKey(Study, models.CASCADE, related_name="allocation_rounds")
    number = models.PositiveIntegerField()
    drawn_at = models.DateTimeField()
    answers = models.PositiveIntegerField(help_text="valid answers on regular presentations when the round was drawn")
    target = models.FloatField(help_text="expected number of groups drawn (the sum of the probabilities)")
    drawn = models.PositiveIntegerField(help_text="groups drawn")
    contenders = models.JSONField(default=list, blank=True, help_text="entries of the best set the round steered by")
    decided = models.BooleanField(default=False, help_text="the best set had at most 3 entries at this look (level corrected for looks)")
    decided_answers = models.PositiveIntegerField(null=True, blank=True, help_text="valid answers when the decided signal first came on")

    class Meta:
        ordering = ["study", "number"]
        constraints = [models.UniqueConstraint(fields=["study", "number"], name="allocationround_unique")]

    def __str__(self) -> str:
        return f"{self.study}: round {self.number}"


class AllocationGroup(models.Model):
    """A run pair of a topic (every presentation of it, both levels) as adaptive allocation sees it."""

    study = models.ForeignKey(Study, models.CASCADE, related_name="allocation_groups")
    topic = models.ForeignKey(Topic, models.PROTECT, related_name="+")
    run_a = models.ForeignKey(Run, models.PROTECT, related_name="+")
    run_b = models.ForeignKey(Run, models.PROTECT, related_name="+")
    drawn_round = models.IntegerField(default=NOT_DRAWN, help_text="the round that drew it (-1: not drawn yet)")
    probability = models.FloatField(default=0.0, help_text="its selection probability in the last round that considered it")
    full = models.BooleanField(default=True, help_text="drawn to get k answers per presentation (else one: the first layer only)")
    full_probability = models.FloatField(default=1.0, help_text="the chance a drawn group was made full (the second phase)")
    priority = models.FloatField(default=0.0, help_text="dispute weight at the last recomputation (0: every contender orders it alike)")
    disputed_by = models.TextField(blank=True, help_text="contenders ordering it against the others' majority")

    class Meta:
        ordering = ["study", "topic", "run_a", "run_b"]
        constraints = [
            models.UniqueConstraint(fields=["study", "topic", "run_a", "run_b"], name="allocationgroup_unique"),
            models.CheckConstraint(condition=Q(probability__gte=0) & Q(probability__lte=1), name="allocationgroup_probability"),
            models.CheckConstraint(condition=Q(drawn_round__gte=NOT_DRAWN), name="allocationgroup_round"),
            models.CheckConstraint(
                condition=Q(full_probability__gt=0) & Q(full_probability__lte=1), name="allocationgroup_full_probability"
            ),
        ]
        indexes = [models.Index(fields=["study", "drawn_round"], name="allocationgroup_drawn")]

    def __str__(self) -> str:
        return f"{self.study}: {self.topic_id} {self.run_a_id}/{self.run_b_id}"
