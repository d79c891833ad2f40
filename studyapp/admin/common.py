"""What the model admins share: read-only pages, team scoping, hidden platform ids, count columns."""

from __future__ import annotations

from django.contrib import admin
from django.db.models import Count
from django.http import HttpRequest

from studyapp.services.access import teams


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
