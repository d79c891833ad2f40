"""Admin of who may see what: study teams, the erasure log, open staff sessions."""

from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest

from studyapp import models as m
from studyapp.admin.common import ReadOnly, TeamScoped
from studyapp.services.access import teams


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


@admin.register(m.WithdrawnParticipant)
class WithdrawnParticipantAdmin(TeamScoped, ReadOnly, admin.ModelAdmin):
    """Withdrawals that keep a returning platform id out: a keyed hash each, never the id (read-only)."""

    list_display = ["withdrawn_at", "study"]
    list_filter = ["study"]
    list_select_related = ["study"]


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
