"""Admin of studies: added from a JSON configuration (the service of ``create_study``), design frozen, teams."""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils.html import format_html

from studyapp import models as m
from studyapp.admin.common import CountColumns, ReadOnly, ReadOnlyInline, TeamScoped
from studyapp.forms.study import json_download, study_form_step
from studyapp.models.study_settings import SETTINGS
from studyapp.services.access import teams
from studyapp.services.design.study_config import keys, setting_problems
from studyapp.services.quality import control
from studyapp.services.review.setup import base_url
from studyapp.views.staff import download


class StudyChangeForm(forms.ModelForm):
    """Editing a study: every setting obeys its declaration (``models.study_settings``), as in the JSON configuration."""

    class Meta:
        model = m.Study
        fields = "__all__"

    def clean(self):
        data = super().clean()
        values = {key: data[key] for key in keys() if key in data and key in self.fields}
        for key, reason in setting_problems(values):
            self.add_error(key if key in self.fields else None, reason)
        return data


class StudyRunInline(ReadOnlyInline):
    model = m.StudyRun


class StudyTopicInline(ReadOnlyInline):
    model = m.StudyTopic
    fields = ["topic", "position"]


class StudyMemberInline(admin.TabularInline):
    """The study's team: its owner and members, and who of them may see raw platform ids (owners and superusers edit it)."""

    model = m.StudyMember
    extra = 1
    fields = ["user", "role", "platform_ids"]
    autocomplete_fields: list[str] = []

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.name == "user":
            from django.contrib.auth import get_user_model

            kwargs["queryset"] = get_user_model().objects.filter(is_staff=True, is_active=True).order_by("username")
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def _owner(self, request: HttpRequest, obj) -> bool:
        return obj is not None and teams.owners_studies(request.user).filter(pk=obj.pk).exists()

    def has_add_permission(self, request: HttpRequest, obj=None) -> bool:
        return self._owner(request, obj)

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return self._owner(request, obj)

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return self._owner(request, obj)

    def has_view_permission(self, request: HttpRequest, obj=None) -> bool:
        return obj is not None


@admin.register(m.Study)
class StudyAdmin(admin.ModelAdmin):
    list_display = [
        "name",
        "slug",
        "collection",
        "status",
        "levels",
        "annotators_per_presentation",
        "items_per_annotator",
        "created_at",
        "dashboard",
        "report_link",
    ]
    list_filter = ["status", "levels", "collection"]
    search_fields = ["name", "slug"]
    inlines = [StudyMemberInline, StudyRunInline, StudyTopicInline]
    form = StudyChangeForm
    actions = ["export_preferences_csv", "run_quality_check"]
    # Presentations were generated from these: changing them afterwards would misdescribe the data.
    design_fields = ["slug", "collection", "levels", *(s.name for s in SETTINGS if s.frozen), "config", "created_at"]

    def get_readonly_fields(self, request, obj=None):
        return [*self.design_fields, "report_link"] if obj is not None else []

    def get_queryset(self, request: HttpRequest):
        return (
            super().get_queryset(request).filter(pk__in=teams.visible_studies(request.user))
            if not request.user.is_superuser
            else super().get_queryset(request)
        )

    @admin.display(description="report")
    def report_link(self, obj: m.Study) -> str:
        """The study report (docs/studyapp.md#study-report): which metric agrees with the answers so far."""
        return format_html('<a href="{}">study report</a>', reverse("study_report", args=[obj.slug]))

    @admin.display(description="dashboard")
    def dashboard(self, obj: m.Study) -> str:
        return format_html('<a href="{}">progress, agreement, downloads</a>', reverse("staff_study", args=[obj.slug]))

    @admin.action(description="Export preferences (CSV)", permissions=["view"])
    def export_preferences_csv(self, request: HttpRequest, queryset) -> HttpResponse | None:
        """The default export of ``manage.py export_preferences`` as a download (one study at a time)."""
        if queryset.count() != 1:
            self.message_user(request, "Select exactly one study to export its preferences.", messages.WARNING)
            return None
        return download(queryset.get(), "csv")

    def add_view(self, request: HttpRequest, form_url: str = "", extra_context=None) -> HttpResponse:
        if not self.has_add_permission(request):
            return HttpResponseRedirect(reverse("admin:studyapp_study_changelist"))
        step = study_form_step(request)
        if step.download is not None:
            return json_download(step.download, step.filename)
        if step.summary is not None:
            for line in step.summary.lines(base_url(request)):
                self.message_user(request, line, messages.SUCCESS)
            return HttpResponseRedirect(reverse("admin:studyapp_study_change", args=[step.summary.study.pk]))
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "form": step.form,
            "title": "Create a study",
            "collections": m.Collection.objects.order_by("name"),
        }
        return render(request, "studyapp/admin/create_study.html", context)

    @admin.action(description="Run the quality check (re-evaluate every annotator with the current settings)", permissions=["change"])
    def run_quality_check(self, request: HttpRequest, queryset) -> None:
        """The same as ``manage.py quality_check STUDY`` for each selected study."""
        for study in queryset:
            report = control.quality_check(study)
            level = messages.WARNING if report.excluded else messages.SUCCESS
            self.message_user(request, " | ".join(line.strip() for line in report.lines()), level)


@admin.register(m.StudySubtopic)
class StudySubtopicAdmin(TeamScoped, ReadOnly, admin.ModelAdmin):
    study_path = "study_topic__study"
    list_display = ["study_topic", "subtopic", "weight", "position"]
    list_filter = ["study_topic__study"]
    list_select_related = ["study_topic__study", "study_topic__topic", "subtopic__topic"]
    raw_id_fields = ["study_topic", "subtopic"]


@admin.register(m.StudyRun)
class StudyRunAdmin(TeamScoped, ReadOnly, admin.ModelAdmin):
    list_display = ["study", "run"]
    list_filter = ["study"]
    list_select_related = ["study", "run"]


@admin.register(m.StudyTopic)
class StudyTopicAdmin(TeamScoped, ReadOnly, admin.ModelAdmin):
    list_display = ["study", "topic", "position"]
    list_filter = ["study"]
    search_fields = ["topic__topic_id", "topic__query"]
    list_select_related = ["study", "topic"]
    raw_id_fields = ["topic"]


@admin.register(m.Presentation)
class PresentationAdmin(TeamScoped, ReadOnly, CountColumns, admin.ModelAdmin):
    list_display = ["id", "study", "kind", "level", "topic", "subtopic", "run_a", "run_b", "n_answers"]
    list_filter = ["study", "kind", "level"]
    search_fields = ["topic__topic_id", "topic__query", "run_a__name", "run_b__name"]
    list_select_related = ["study", "topic", "subtopic__topic", "run_a", "run_b"]
    raw_id_fields = ["topic", "subtopic", "run_a", "run_b"]
    counts = {"n_answers": ("assignments__preference", "answers")}
