"""Admin of adaptive allocation (read-only): each round's draw and each run-pair group's probability and dispute.

Written by ``manage.py allocation_priorities`` off the request path (docs/meta.md#adaptive-allocation); the
selection probabilities are the design weights of the analysis, so nothing here is ever edited by hand.
"""

from __future__ import annotations

from django.contrib import admin

from studyapp import models as m
from studyapp.admin.common import ReadOnly, TeamScoped


@admin.register(m.AllocationRound)
class AllocationRoundAdmin(TeamScoped, ReadOnly, admin.ModelAdmin):
    """One draw: when, after how many valid answers, which best-set entries it steered by."""

    list_display = ["study", "number", "drawn_at", "answers", "drawn", "target", "decided"]
    list_filter = ["study", "decided"]
    list_select_related = ["study"]


@admin.register(m.AllocationGroup)
class AllocationGroupAdmin(TeamScoped, ReadOnly, admin.ModelAdmin):
    """A topic's run pair: the round that drew it, its selection probability and why (disputed by which metrics)."""

    list_display = ["study", "topic", "run_a", "run_b", "drawn_round", "probability", "priority", "disputed_by"]
    list_filter = ["study"]
    list_select_related = ["study", "topic", "run_a", "run_b"]
    raw_id_fields = ["topic", "run_a", "run_b"]
