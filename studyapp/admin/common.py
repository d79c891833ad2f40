"""What the model admins share: read-only pages, team scoping, hidden platform ids, count columns."""

from __future__ import annotations

from django.contrib import admin
from django.db.models import Count
from django.http import HttpRequest

from studyapp.services.access import platform_ids, teams


class ReadOnly:
    """Staff read here but never add, edit or delete (a model admin or an inline)."""

    def has_add_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return False


class RecordedByTheApp:
    """Rows the app records as participants take part (annotators): staff never add one here, and a row's
    page is for reading (its actions, e.g. exclude or erase, change it through the services)."""

    def has_add_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return obj is None and super().has_change_permission(request, obj)  # the list and its actions


class FrozenOnceStudied:
    """Collection rows that shape what studies show (ranked lists, judgments): read-only, on the page and
    in the list, once a study of their collection exists (``collection_path`` leads to the collection).
    New rows come from ``import_collection``, never from the admin."""

    collection_path = "collection"

    def has_add_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def _studied(self, obj) -> bool:
        collection = obj
        for part in self.collection_path.split("__"):
            collection = getattr(collection, part)
        return collection.studies.exists()

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return (obj is None or not self._studied(obj)) and super().has_change_permission(request, obj)

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return obj is not None and not self._studied(obj) and super().has_delete_permission(request, obj)  # no bulk delete


class ReadOnlyInline(ReadOnly, admin.TabularInline):
    extra = 0
    show_change_link = True


class TeamScoped:
    """A study object's admin: only rows of studies whose team the user is on (superusers see all),
    and the study filter offers only those studies. ``study_path`` leads from the row to its study.

    Raw platform ids (services.access.platform_ids.ID_FIELDS) stay out of reach of users who may not see
    the ids of every study they see: lookups in the address (``?external_id__startswith=``), search,
    sorting and filters that reach such a field are refused or dropped, so no count can reveal an id."""

    study_path = "study"

    def get_queryset(self, request: HttpRequest):
        qs = super().get_queryset(request)
        if request.user.is_superuser:
            return qs
        return qs.filter(**{f"{self.study_path}__in": teams.visible_studies(request.user)})

    def _hides_ids(self, request: HttpRequest | None) -> bool:
        """Does ``request``'s user lack the ids of some study they see? Asked once per request (a changelist asks
        for each lookup, filter, search field and column; each answer is a query) and kept on the request."""
        if request is None:
            return True
        user = request.user
        known = getattr(request, "_studyapp_sees_all_ids", None)
        if known is None or known[0] != user.pk:
            known = request._studyapp_sees_all_ids = (user.pk, teams.sees_all_platform_ids(user))
        return not known[1]

    def _without_ids(self, request: HttpRequest | None, paths) -> list:
        if not self._hides_ids(request):
            return list(paths)
        return [p for p in paths if not (isinstance(p, str) and platform_ids.touches_ids(self.model, p))]

    def lookup_allowed(self, lookup: str, value, request: HttpRequest | None = None) -> bool:
        if self._hides_ids(request) and platform_ids.touches_ids(self.model, lookup):
            return False
        return super().lookup_allowed(lookup, value, request)

    def get_list_filter(self, request: HttpRequest):
        filters = self._without_ids(request, super().get_list_filter(request))
        return [(f, admin.RelatedOnlyFieldListFilter) if f == self.study_path else f for f in filters]

    def get_search_fields(self, request: HttpRequest):
        return self._without_ids(request, super().get_search_fields(request))

    def get_ordering(self, request: HttpRequest):
        return self._without_ids(request, super().get_ordering(request))

    def get_sortable_by(self, request: HttpRequest):
        columns = super().get_sortable_by(request)
        return [c for c in columns if not self._orders_by_ids(request, c)]

    def _orders_by_ids(self, request: HttpRequest | None, column) -> bool:
        """Does the changelist column ``column`` sort by a raw id (its field, or its ``admin_order_field``)?"""
        if not self._hides_ids(request):
            return False
        order = getattr(getattr(self, column, None), "admin_order_field", column) if isinstance(column, str) else None
        order = getattr(column, "admin_order_field", order) if callable(column) else order
        return isinstance(order, str) and platform_ids.touches_ids(self.model, order)

    def get_changelist(self, request: HttpRequest, **kwargs):
        """The changelist, whose ``?o=`` sorting skips a column that sorts by a raw id (Django sorts by any listed
        column with an ordering, sortable or not)."""
        base, admin_ = super().get_changelist(request, **kwargs), self

        class IdSafeChangeList(base):
            def get_ordering_field(self, field_name):
                return None if admin_._orders_by_ids(request, field_name) else super().get_ordering_field(field_name)

        return IdSafeChangeList


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
