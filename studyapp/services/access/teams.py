"""Study teams: which studies a staff user may see, and whether they may see raw platform ids.

Superusers see every study and every id. Other staff see the studies whose team they are on
(models.team.StudyMember) and platform ids only where their membership says ``platform_ids``.
Everything else (views, admin, commands that act for a user) asks here.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import QuerySet
from django.shortcuts import get_object_or_404

from studyapp.exceptions import StudyError
from studyapp.models import Study, StudyMember


def visible_studies(user) -> QuerySet[Study]:
    """The studies ``user`` may see (all for a superuser, none for anyone not signed in as staff)."""
    if not (user.is_authenticated and user.is_active and user.is_staff):
        return Study.objects.none()
    if user.is_superuser:
        return Study.objects.all()
    return Study.objects.filter(members__user=user)


def is_member(user, study: Study) -> bool:
    return visible_studies(user).filter(pk=study.pk).exists()


def sees_platform_ids(user, study: Study) -> bool:
    """May ``user`` see the raw platform ids of ``study``'s participants?"""
    if not (user.is_authenticated and user.is_active and user.is_staff):
        return False
    return user.is_superuser or StudyMember.objects.filter(study=study, user=user, platform_ids=True).exists()


def sees_all_platform_ids(user) -> bool:
    """May ``user`` see the raw platform ids of every study they see? Only from their own memberships:
    each of their studies must grant them ``platform_ids`` (what other members may see is irrelevant)."""
    if not (user.is_authenticated and user.is_active and user.is_staff):
        return False
    if user.is_superuser:
        return True
    granted = StudyMember.objects.filter(user=user, platform_ids=True).values("study")
    return not visible_studies(user).exclude(pk__in=granted).exists()


def member_study(user, slug: str, queryset: QuerySet[Study] | None = None) -> Study:
    """The study of ``slug`` for a staff view: 404 when there is none, 403 when ``user`` is not on its team."""
    study = get_object_or_404(queryset if queryset is not None else Study.objects.all(), slug=slug)
    if not is_member(user, study):
        raise PermissionDenied("this study's data is for its team only")
    return study


def owners_studies(user) -> QuerySet[Study]:
    """Studies whose team ``user`` may change (owner, or any for a superuser)."""
    if user.is_superuser:
        return Study.objects.all()
    return Study.objects.filter(members__user=user, members__role=StudyMember.Role.OWNER)


def set_team(study: Study, owner: str | None, members: Iterable[str] = (), platform_ids: Iterable[str] = ()) -> list[str]:
    """Put users (by user name) on ``study``'s team: ``owner`` as owner, ``members`` as members, and
    grant ``platform_ids`` to those named there (each must be the owner or a member). Every name must
    be an existing staff user; nothing changes unless all are. Returns one line per change."""
    User = get_user_model()
    members, ids = list(dict.fromkeys(members)), set(platform_ids)
    named = ([owner] if owner else []) + members
    users = {u.username: u for u in User.objects.filter(username__in=named)}
    problems = [f"no user {name!r} (create it with manage.py createsuperuser or in the admin)" for name in named if name not in users]
    problems += [f"user {name!r} is not staff (set is_staff in the admin)" for name, u in users.items() if not u.is_staff]
    problems += [f"--platform-ids {name!r}: not the owner or a member" for name in sorted(ids - set(named))]
    if problems:
        raise StudyError("; ".join(problems))
    lines = []
    with transaction.atomic():
        if owner:
            StudyMember.objects.filter(study=study, role=StudyMember.Role.OWNER).exclude(user=users[owner]).update(
                role=StudyMember.Role.MEMBER
            )
            StudyMember.objects.update_or_create(
                study=study, user=users[owner], defaults={"role": StudyMember.Role.OWNER, "platform_ids": owner in ids}
            )
            lines.append(f"Owner: {owner}" + (" (may see platform ids)" if owner in ids else ""))
        for name in members:
            if name == owner:
                continue
            StudyMember.objects.update_or_create(
                study=study, user=users[name], defaults={"role": StudyMember.Role.MEMBER, "platform_ids": name in ids}
            )
            lines.append(f"Member: {name}" + (" (may see platform ids)" if name in ids else ""))
    return lines
