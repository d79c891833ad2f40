"""Django admin for every model. Imported data and study designs are read-mostly: big foreign keys
are raw ids (a select of 15,000 documents would make pages unusable) and design fields are frozen.
Studies are added from a JSON configuration through the same service as ``create_study``."""

from __future__ import annotations

import json

from django import forms
from django.contrib import admin, messages
from django.db.models import Count, Exists, OuterRef, Value
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils.html import format_html

from studyapp import models as m
from studyapp.exceptions import InvalidStudyConfig
from studyapp.forms import QualityReasonForm, StaffLoginForm
from studyapp.models.study_settings import SETTINGS
from studyapp.services import platforms
from studyapp.services.access import teams
from studyapp.services.data import erasure
from studyapp.services.design.study_config import keys, parse_config, setting_problems
from studyapp.services.design.study_design import create_study
from studyapp.services.quality import control
from studyapp.views.staff import download

admin.site.login_form = StaffLoginForm  # sign-in throttled after repeated failures

EXAMPLE_CONFIG = {
    "runs": ["run-a", "run-b", "run-c"],
    "topic_rule": {"count": 50, "min_subtopics": 3},
    "subtopics_per_topic": 3,
    "levels": ["topic", "subtopic"],
    "annotators_per_presentation": 3,
    "items_per_annotator": 60,
}


class ReadOnly:
    """Staff read here but never add, edit or delete (a model admin or an inline)."""

    def has_add_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return False


class ReadOnlyInline(ReadOnly, admin.TabularInline):
    extra = 0
    show_change_link = True


class TeamScoped:
    """A study object's admin: only rows of studies whose team the user is on (superusers see all),
    and the study filter offers only those studies. ``study_path`` leads from the row to its study."""

    study_path = "study"

    def get_queryset(self, request: HttpRequest):
        qs = super().get_queryset(request)
        if request.user.is_superuser:
            return qs
        return qs.filter(**{f"{self.study_path}__in": teams.visible_studies(request.user)})

    def get_list_filter(self, request: HttpRequest):
        return [(f, admin.RelatedOnlyFieldListFilter) if f == self.study_path else f for f in super().get_list_filter(request)]


class PlatformIdsHidden(TeamScoped):
    """A study object's admin whose search may look at raw platform ids (``id_search``): only for users who
    may see the ids of every study they see (services.access.teams.sees_platform_ids)."""

    id_search: tuple[str, ...] = ()

    def get_search_fields(self, request: HttpRequest):
        fields = super().get_search_fields(request)
        return fields if _sees_all_ids(request.user) else [f for f in fields if f not in self.id_search]


def _sees_all_ids(user) -> bool:
    return user.is_superuser or not teams.visible_studies(user).exclude(members__user=user, members__platform_ids=True).exists()


class CountColumns:
    """Sortable changelist columns counting related rows: ``counts = {column: (relation, description)}``
    makes a column per entry, filled by one ``Count`` annotation each on the admin's queryset."""

    counts: dict[str, tuple[str, str]] = {}

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        for column, (_, description) in cls.counts.items():
            setattr(cls, column, _count_column(column, description))

    def get_queryset(self, request: HttpRequest):
        counted = {f"_{column}": Count(relation, distinct=True) for column, (relation, _) in self.counts.items()}
        return super().get_queryset(request).annotate(**counted)


def _count_column(column: str, description: str):
    @admin.display(description=description, ordering=f"_{column}")
    def count(self, obj) -> int:
        return getattr(obj, f"_{column}")

    return count


@admin.register(m.Collection)
class CollectionAdmin(CountColumns, admin.ModelAdmin):
    list_display = ["name", "n_topics", "n_runs", "created_at"]
    search_fields = ["name", "description"]
    readonly_fields = ["source", "created_at"]
    counts = {"n_topics": ("topics", "topics"), "n_runs": ("runs", "runs")}


class SubtopicInline(admin.TabularInline):
    model = m.Subtopic
    extra = 0
    fields = ["number", "type", "weight", "text"]


@admin.register(m.Topic)
class TopicAdmin(CountColumns, admin.ModelAdmin):
    list_display = ["topic_id", "query", "collection", "n_subtopics"]
    list_filter = ["collection"]
    search_fields = ["topic_id", "query", "description"]
    list_select_related = ["collection"]
    inlines = [SubtopicInline]
    counts = {"n_subtopics": ("subtopics", "subtopics")}


@admin.register(m.Subtopic)
class SubtopicAdmin(admin.ModelAdmin):
    list_display = ["__str__", "type", "weight", "text"]
    list_filter = ["type", "topic__collection"]
    search_fields = ["text", "topic__topic_id", "topic__query"]
    list_select_related = ["topic"]
    raw_id_fields = ["topic"]


@admin.register(m.Document)
class DocumentAdmin(admin.ModelAdmin):
    list_display = ["docid", "title", "url", "collection"]
    list_filter = ["collection"]
    search_fields = ["docid", "title", "url", "snippet"]
    list_select_related = ["collection"]


@admin.register(m.Judgment)
class JudgmentAdmin(admin.ModelAdmin):
    list_display = ["topic", "subtopic", "document", "grade"]
    list_filter = ["grade", "topic__collection"]
    search_fields = ["document__docid", "topic__topic_id"]
    list_select_related = ["topic", "subtopic__topic", "document"]
    raw_id_fields = ["topic", "subtopic", "document"]


@admin.register(m.Run)
class RunAdmin(CountColumns, admin.ModelAdmin):
    list_display = ["name", "collection", "source", "n_items"]
    list_filter = ["collection"]
    search_fields = ["name", "source"]
    list_select_related = ["collection"]
    counts = {"n_items": ("items", "ranked items")}


@admin.register(m.RankedItem)
class RankedItemAdmin(admin.ModelAdmin):
    list_display = ["run", "topic", "rank", "document"]
    list_filter = ["run__collection", "run"]
    search_fields = ["document__docid", "topic__topic_id", "run__name"]
    list_select_related = ["run", "topic", "document"]
    raw_id_fields = ["run", "topic", "document"]


class CreateStudyForm(forms.Form):
    """Everything ``manage.py create_study`` takes; validated by the same service."""

    collection = forms.ModelChoiceField(queryset=m.Collection.objects.all())
    name = forms.CharField(max_length=100)
    config = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 18, "cols": 80, "style": "font-family: monospace"}),
        initial=json.dumps(EXAMPLE_CONFIG, indent=2),
        help_text="JSON with the keys of docs/studyapp.md; only runs is required.",
    )

    def clean_config(self):
        try:
            raw = json.loads(self.cleaned_data["config"])
        except json.JSONDecodeError as exc:
            raise forms.ValidationError(f"invalid JSON at line {exc.lineno}: {exc.msg}") from None
        try:
            return parse_config(raw)
        except InvalidStudyConfig as exc:
            raise forms.ValidationError(exc.errors) from None


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
        form = CreateStudyForm(request.POST or None)
        if request.method == "POST" and form.is_valid():
            try:
                summary = create_study(form.cleaned_data["collection"].name, form.cleaned_data["name"], form.cleaned_data["config"])
            except InvalidStudyConfig as exc:
                for error in exc.errors:
                    form.add_error(None, error)
            else:
                teams.set_team(summary.study, request.user.get_username())  # whoever creates a study owns it
                for line in summary.lines():
                    self.message_user(request, line, messages.SUCCESS)
                return HttpResponseRedirect(reverse("admin:studyapp_study_change", args=[summary.study.pk]))
        context = {**self.admin_site.each_context(request), "opts": self.model._meta, "form": form, "title": "Create a study"}
        return render(request, "studyapp/admin/create_study.html", context)

    @admin.action(description="Run the quality check (re-evaluate every annotator with the current settings)", permissions=["change"])
    def run_quality_check(self, request: HttpRequest, queryset) -> None:
        """The same as ``manage.py quality_check STUDY`` for each selected study."""
        for study in queryset:
            report = control.quality_check(study)
            level = messages.WARNING if report.excluded else messages.SUCCESS
            self.message_user(request, " | ".join(line.strip() for line in report.lines()), level)


@admin.register(m.StudySubtopic)
class StudySubtopicAdmin(TeamScoped, admin.ModelAdmin):
    study_path = "study_topic__study"
    list_display = ["study_topic", "subtopic", "weight", "position"]
    list_filter = ["study_topic__study"]
    list_select_related = ["study_topic__study", "study_topic__topic", "subtopic__topic"]
    raw_id_fields = ["study_topic", "subtopic"]


@admin.register(m.StudyRun)
class StudyRunAdmin(TeamScoped, admin.ModelAdmin):
    list_display = ["study", "run"]
    list_filter = ["study"]
    list_select_related = ["study", "run"]


@admin.register(m.StudyTopic)
class StudyTopicAdmin(TeamScoped, admin.ModelAdmin):
    list_display = ["study", "topic", "position"]
    list_filter = ["study"]
    search_fields = ["topic__topic_id", "topic__query"]
    list_select_related = ["study", "topic"]
    raw_id_fields = ["topic"]


@admin.register(m.Presentation)
class PresentationAdmin(TeamScoped, CountColumns, admin.ModelAdmin):
    list_display = ["id", "study", "kind", "level", "topic", "subtopic", "run_a", "run_b", "n_answers"]
    list_filter = ["study", "kind", "level"]
    search_fields = ["topic__topic_id", "topic__query", "run_a__name", "run_b__name"]
    list_select_related = ["study", "topic", "subtopic__topic", "run_a", "run_b"]
    raw_id_fields = ["topic", "subtopic", "run_a", "run_b"]
    counts = {"n_answers": ("assignments__preference", "answers")}


class AssignmentInline(ReadOnlyInline):
    model = m.Assignment
    fields = ["position", "presentation", "a_on_left", "served_at", "lease_expires_at", "released_at"]
    raw_id_fields = ["presentation"]


class ConsentInline(ReadOnlyInline):
    model = m.Consent
    fields = ["version", "accepted_at", "text_sha256"]


@admin.register(m.Annotator)
class AnnotatorAdmin(PlatformIdsHidden, CountColumns, admin.ModelAdmin):
    id_search = ("external_id",)
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
        """Fast decisions, failed checks, longest run of one answer, share on the left, median time, rules broken."""
        if not hasattr(obj, "_signals"):
            _attach_signals([obj])
        s = obj._signals
        if s is None or not s.decisions:
            return "-"
        parts = [f"fast {s.fast}/{s.decisions}", f"checks failed {s.checks_failed}/{s.checks}",
                 f"run {s.longest_run}", "left " + (f"{s.left_share:.0%}" if s.left_share is not None else "-"),
                 f"median {s.median_seconds:.1f} s"]  # fmt: skip
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
                self.message_user(request, f"{verb}d {len(done)} annotator(s){note}.", messages.SUCCESS)
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
            self.message_user(request, f"Erased {len(entries)} participant(s) and their {answers} answer(s); logged without personal data.")
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
    """Set ``_signals`` (:class:`control.AnnotatorSignals`) on each annotator, one computation per study."""
    by_study: dict[int, list[m.Annotator]] = {}
    for a in annotators:
        by_study.setdefault(a.study_id, []).append(a)
    for group in by_study.values():
        signals = {s.annotator_id: s for s in control.annotator_signals(group[0].study, group)}
        for a in group:
            a._signals = signals.get(a.pk)


@admin.register(m.Consent)
class ConsentAdmin(PlatformIdsHidden, admin.ModelAdmin):
    study_path = "annotator__study"
    id_search = ("annotator__external_id",)
    list_display = ["annotator", "version", "accepted_at"]
    list_filter = ["annotator__study", "version"]
    search_fields = ["annotator__pseudonym", "annotator__external_id"]
    list_select_related = ["annotator"]
    raw_id_fields = ["annotator"]


@admin.register(m.Assignment)
class AssignmentAdmin(PlatformIdsHidden, admin.ModelAdmin):
    study_path = "annotator__study"
    id_search = ("annotator__external_id",)
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
class PreferenceAdmin(PlatformIdsHidden, ReadOnly, admin.ModelAdmin):
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
class QualityDecisionAdmin(PlatformIdsHidden, ReadOnly, admin.ModelAdmin):
    id_search = ("annotator__external_id",)
    """The log of quality decisions: read-only, nothing is ever edited or deleted."""

    list_display = ["decided_at", "study", "annotator", "action", "rule", "detail", "staff", "reason"]
    list_filter = ["study", "action", "rule"]
    search_fields = ["annotator__pseudonym", "annotator__external_id", "detail", "reason"]
    list_select_related = ["study", "annotator", "staff"]


@admin.register(m.StudyMember)
class StudyMemberAdmin(TeamScoped, admin.ModelAdmin):
    """Every team membership; owners change their study's team (here or in the study's page), superusers any."""

    list_display = ["study", "user", "role", "platform_ids"]
    list_filter = ["study", "role", "platform_ids"]
    search_fields = ["study__name", "user__username"]
    list_select_related = ["study", "user"]

    def _owns(self, request: HttpRequest, obj) -> bool:
        return teams.owners_studies(request.user).filter(pk=obj.study_id).exists() if obj is not None else request.user.is_superuser

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return super().has_change_permission(request, obj) and self._owns(request, obj)

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return super().has_delete_permission(request, obj) and self._owns(request, obj)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return super().has_add_permission(request) and request.user.is_superuser


@admin.register(m.ErasureLog)
class ErasureLogAdmin(TeamScoped, ReadOnly, admin.ModelAdmin):
    """Erasures: when and how much, never whose (read-only)."""

    list_display = ["erased_at", "study", "source", "staff", "answers", "assignments", "status"]
    list_filter = ["study", "source"]
    list_select_related = ["study", "staff"]


@admin.register(m.StaffSession)
class StaffSessionAdmin(admin.ModelAdmin):
    """Signed-in staff sessions (superusers): deleting one signs that browser out at its next request."""

    list_display = ["user", "created_at", "expires_at"]
    list_select_related = ["user"]
    readonly_fields = ["user", "key_digest", "created_at", "expires_at"]

    def has_module_permission(self, request: HttpRequest) -> bool:
        return request.user.is_superuser

    def has_view_permission(self, request: HttpRequest, obj=None) -> bool:
        return request.user.is_superuser

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return request.user.is_superuser
