"""Admin of annotators and what they did: consents, assignments, answers, quality decisions, erasure."""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.db.models import Exists, OuterRef, Value
from django.http import HttpRequest
from django.shortcuts import render

from studyapp import models as m
from studyapp.admin.common import CountColumns, ReadOnly, ReadOnlyInline, RecordedByTheApp, TeamScoped
from studyapp.forms import QualityReasonForm
from studyapp.services import platforms
from studyapp.services.access import teams
from studyapp.services.data import erasure
from studyapp.services.quality import control, rules
from studyapp.services.wording import count


class AssignmentInline(ReadOnlyInline):
    model = m.Assignment
    fields = ["position", "presentation", "a_on_left", "served_at", "lease_expires_at", "released_at"]
    raw_id_fields = ["presentation"]


class ConsentInline(ReadOnlyInline):
    model = m.Consent
    fields = ["version", "accepted_at", "text_sha256"]


@admin.register(m.Annotator)
class AnnotatorAdmin(RecordedByTheApp, TeamScoped, CountColumns, admin.ModelAdmin):
    list_display = [
        "pseudonym",
        "study",
        "platform_label",
        "platform_id",
        "status",
        "n_answers",
        "quality_signals",
        "created_at",
        "last_seen_at",
    ]
    list_filter = ["study", "status", "platform"]
    search_fields = ["pseudonym", "external_id"]
    readonly_fields = [
        "token",
        "status",
        "exclusion_reason",
        "quality_signals",
        "created_at",
        "consent_version",
        "consented_at",
        "instructions_read_at",
        "practice_value",
        "practice_answered_at",
        "comprehension_attempts",
        "comprehension_passed_at",
        "finished_at",
    ]
    inlines = [ConsentInline, AssignmentInline]
    actions = ["exclude_annotators", "reinstate_annotators", "erase_annotators"]

    counts = {"n_answers": ("assignments__preference", "answers")}

    def get_queryset(self, request):
        qs = super().get_queryset(request).select_related("study")
        if request.user.is_superuser:
            return qs.annotate(_ids=Value(True))
        allowed = m.StudyMember.objects.filter(study=OuterRef("study"), user=request.user, platform_ids=True)
        return qs.annotate(_ids=Exists(allowed))

    @admin.display(description="platform id", ordering="external_id")
    def platform_id(self, obj: m.Annotator) -> str:
        """The raw platform id, for team members allowed to see it (services.access.teams)."""
        return obj.external_id if getattr(obj, "_ids", False) else ("(hidden)" if obj.external_id else "")

    def get_exclude(self, request: HttpRequest, obj=None):
        hidden = obj is None or not teams.sees_platform_ids(request.user, obj.study)
        return ["external_id", "external_ids"] if hidden else []

    def formfield_for_dbfield(self, db_field, request, **kwargs):
        if db_field.name == "platform":  # the registered platforms (services.platforms), not a fixed list in the model
            return forms.ChoiceField(choices=platforms.choices(), required=False, label="platform")
        return super().formfield_for_dbfield(db_field, request, **kwargs)

    @admin.display(description="platform", ordering="platform")
    def platform_label(self, obj: m.Annotator) -> str:
        return platforms.by_key(obj.platform).label

    def get_changelist_instance(self, request):
        """Compute the quality signals of the listed page in one go (two queries per study shown)."""
        changelist = super().get_changelist_instance(request)
        _attach_signals(changelist.result_list)
        return changelist

    @admin.display(description="quality signals")
    def quality_signals(self, obj: m.Annotator) -> str:
        """Every quality rule's column and cell, as on the dashboard (services.quality.rules), then the rules broken."""
        if not hasattr(obj, "_signals"):
            _attach_signals([obj])
        s = obj._signals
        if s is None or not s.decisions:
            return "-"
        parts = [f"{column}: {cell}" for column, cell in zip(obj._rule_columns, s.cells(), strict=True)]
        parts += [f"BREAKS {b.detail}" for b in s.breaches]
        return " · ".join(parts)

    def _decide(self, request: HttpRequest, queryset, *, reinstating: bool):
        verb = "Reinstate" if reinstating else "Exclude"
        if "apply" in request.POST:
            form = QualityReasonForm(request.POST)
            if form.is_valid():
                decide = control.reinstate if reinstating else control.exclude
                kwargs = {} if reinstating else {"rule": m.QualityDecision.Rule.STAFF}
                done = [a for a in queryset if decide(a, staff=request.user, reason=form.cleaned_data["reason"], **kwargs) is not None]
                skipped = queryset.count() - len(done)
                unchanged = "not excluded" if reinstating else "excluded already or without items (new, refused, screened)"
                note = f" ({skipped} {unchanged}: unchanged)" if skipped else ""
                self.message_user(request, f"{verb}d {count(len(done), 'annotator')}{note}.", messages.SUCCESS)
                return None
        else:
            form = QualityReasonForm()
        explanation = (
            "Their answers count again; the items their exclusion freed come back if they return."
            if reinstating
            else "Their answers are kept but stop counting; their unanswered items are freed for others."
        )
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "title": f"{verb} annotators",
            "explanation": explanation,
            "annotators": list(queryset.select_related("study")),
            "action": "reinstate_annotators" if reinstating else "exclude_annotators",
            "form": form,
        }
        return render(request, "studyapp/admin/quality_reason.html", context)

    @admin.action(description="Exclude selected annotators (with a reason)", permissions=["change"])
    def exclude_annotators(self, request: HttpRequest, queryset):
        return self._decide(request, queryset, reinstating=False)

    @admin.action(description="Reinstate selected annotators (with a reason)", permissions=["change"])
    def reinstate_annotators(self, request: HttpRequest, queryset):
        return self._decide(request, queryset, reinstating=True)

    @admin.action(description="Erase selected annotators' data (a withdrawal or erasure request)", permissions=["change"])
    def erase_annotators(self, request: HttpRequest, queryset):
        """services.data.erasure.erase for each selected annotator, after a confirmation page."""
        if "apply" in request.POST:
            entries = [erasure.erase(a, source=m.ErasureLog.Source.ADMIN, staff=request.user) for a in queryset]
            answers = sum(e.answers for e in entries)
            self.message_user(
                request, f"Erased {count(len(entries), 'participant')} and their {count(answers, 'answer')}; logged without personal data."
            )
            return None
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "title": "Erase participants' data",
            "annotators": list(queryset.select_related("study")),
            "action": "erase_annotators",
        }
        return render(request, "studyapp/admin/erase_confirm.html", context)


def _attach_signals(annotators) -> None:
    """Set ``_signals`` (:class:`control.AnnotatorSignals`) and ``_rule_columns`` (every rule's column title under the
    study's settings) on each annotator, one computation per study."""
    by_study: dict[int, list[m.Annotator]] = {}
    for a in annotators:
        by_study.setdefault(a.study_id, []).append(a)
    for group in by_study.values():
        study = group[0].study
        signals = {s.annotator_id: s for s in control.annotator_signals(study, group)}
        columns = [rule.column(study) for rule in rules.RULES.values()]
        for a in group:
            a._signals, a._rule_columns = signals.get(a.pk), columns


@admin.register(m.Consent)
class ConsentAdmin(TeamScoped, ReadOnly, admin.ModelAdmin):
    study_path = "annotator__study"
    list_display = ["annotator", "version", "accepted_at"]
    list_filter = ["annotator__study", "version"]
    search_fields = ["annotator__pseudonym", "annotator__external_id"]
    list_select_related = ["annotator"]
    raw_id_fields = ["annotator"]


@admin.register(m.Assignment)
class AssignmentAdmin(TeamScoped, ReadOnly, admin.ModelAdmin):
    study_path = "annotator__study"
    list_display = ["annotator", "position", "presentation", "a_on_left", "served_at", "lease_expires_at", "released_at"]
    list_filter = ["annotator__study", "a_on_left", "presentation__level"]
    search_fields = ["annotator__pseudonym", "annotator__external_id"]
    list_select_related = [
        "annotator",
        "presentation__topic",
        "presentation__subtopic__topic",
        "presentation__run_a",
        "presentation__run_b",
    ]
    raw_id_fields = ["annotator", "presentation"]


@admin.register(m.Preference)
class PreferenceAdmin(TeamScoped, ReadOnly, admin.ModelAdmin):
    study_path = "assignment__annotator__study"
    """Answers are data: staff read them here but never edit or delete one (deleting an annotator,
    assignment or study that has answers is refused for the same reason)."""

    list_display = ["assignment", "value", "canonical", "server_seconds", "client_ms", "visible_ms", "late", "answered_at"]
    list_filter = ["assignment__annotator__study", "late", "value"]
    search_fields = ["assignment__annotator__pseudonym", "request_id"]
    list_select_related = ["assignment__annotator", "assignment__presentation__topic", "assignment__presentation__subtopic__topic",
                           "assignment__presentation__run_a", "assignment__presentation__run_b"]  # fmt: skip
    raw_id_fields = ["assignment"]


@admin.register(m.QualityDecision)
class QualityDecisionAdmin(TeamScoped, ReadOnly, admin.ModelAdmin):
    """The log of quality decisions: read-only, nothing is ever edited or deleted."""

    list_display = ["decided_at", "study", "annotator", "action", "rule", "detail", "staff", "reason"]
    list_filter = ["study", "action", "rule"]
    search_fields = ["annotator__pseudonym", "annotator__external_id", "detail", "reason"]
    list_select_related = ["study", "annotator", "staff"]
