"""Admin of the platform review: the decisions per submission and the audit log of API calls (read-only).

Raw platform ids appear in an API call's request and answer (a Prolific submission id in the path,
a participant id in a bonus CSV): team members without the id permission see them masked
(services.review.decisions.mask_ids), like the annotator admin's platform id column.
"""

from __future__ import annotations

from django.contrib import admin
from django.db.models import Exists, OuterRef, Value
from django.http import HttpRequest

from studyapp import models as m
from studyapp.admin.common import ReadOnly, TeamScoped
from studyapp.services.review import decisions


class _MaskedIds:
    """Rows showing text that may hold raw platform ids (``masked_fields``, shown through ``masked_columns``),
    masked for users without the id permission of the row's study (annotated as ``_ids``)."""

    masked_fields: tuple[str, ...] = ()
    masked_columns: tuple[str, ...] = ()

    def get_queryset(self, request: HttpRequest):
        qs = super().get_queryset(request)
        if request.user.is_superuser:
            return qs.annotate(_ids=Value(True))
        return qs.annotate(_ids=Exists(m.StudyMember.objects.filter(study=OuterRef("study"), user=request.user, platform_ids=True)))

    def _masked(self, obj, text: str) -> str:
        return text if getattr(obj, "_ids", False) else decisions.mask_ids(obj.study, text)

    def get_fields(self, request: HttpRequest, obj=None):
        return [f.name for f in self.model._meta.fields if f.name not in self.masked_fields] + list(self.masked_columns)

    def get_readonly_fields(self, request: HttpRequest, obj=None):
        return self.get_fields(request, obj)


@admin.register(m.PlatformCall)
class PlatformCallAdmin(_MaskedIds, TeamScoped, ReadOnly, admin.ModelAdmin):
    """The audit log of calls to the platforms' APIs: nothing is ever edited or deleted."""

    list_display = ["created_at", "study", "annotator", "platform", "operation", "ok", "status", "staff"]
    list_filter = ["study", "platform", "operation", "ok"]
    search_fields = ["annotator__pseudonym", "operation"]
    list_select_related = ["study", "annotator", "staff"]
    masked_fields = ("request", "response")
    masked_columns = ("request_shown", "response_shown")

    @admin.display(description="request")
    def request_shown(self, obj: m.PlatformCall) -> str:
        return self._masked(obj, decisions.request_text(obj.request))

    @admin.display(description="response")
    def response_shown(self, obj: m.PlatformCall) -> str:
        return self._masked(obj, obj.response)


@admin.register(m.ReviewDecision)
class ReviewDecisionAdmin(TeamScoped, ReadOnly, admin.ModelAdmin):
    """Decisions are changed on the study's review page or with manage.py platform_review (with who changed them)."""

    list_display = ["annotator", "study", "action", "category", "bonus", "source", "staff", "applied_action", "applied_at", "bonus_paid_at"]
    list_filter = ["study", "action", "source", "applied_action"]
    search_fields = ["annotator__pseudonym"]
    list_select_related = ["study", "annotator", "staff"]

    def get_readonly_fields(self, request: HttpRequest, obj=None):
        return [f.name for f in self.model._meta.fields]


@admin.register(m.ReviewJob)
class ReviewJobAdmin(TeamScoped, ReadOnly, admin.ModelAdmin):
    """The review page's Apply jobs and their progress (run by manage.py run_jobs); read-only."""

    list_display = ["created_at", "study", "staff", "status", "attempts", "steps_done", "steps_failed", "finished_at"]
    list_filter = ["study", "status"]
    list_select_related = ["study", "staff"]
    exclude = ["log", "error"]  # steps and errors may name raw platform ids: the review page shows them masked


@admin.register(m.StoredPlan)
class StoredPlanAdmin(TeamScoped, ReadOnly, admin.ModelAdmin):
    """The last plan of each study and kind, written by manage.py plan_study (read-only: run the command again)."""

    list_display = ["study", "kind", "computed_at", "answers", "summary"]
    list_filter = ["study", "kind"]
    list_select_related = ["study"]

    def get_readonly_fields(self, request: HttpRequest, obj=None):
        return [f.name for f in self.model._meta.fields]
