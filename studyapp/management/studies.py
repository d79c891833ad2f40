"""The study argument of the management commands: a study's name or slug."""

from __future__ import annotations

from django.core.management.base import CommandError
from django.db.models import Q

from studyapp.models import Study


def find_study(name_or_slug: str) -> Study:
    """The study with that name or slug; a one-line ``CommandError`` listing the known ones otherwise."""
    study = Study.objects.filter(Q(name=name_or_slug) | Q(slug=name_or_slug)).select_related("collection").first()
    if study is None:
        known = ", ".join(Study.objects.values_list("name", flat=True)) or "none"
        raise CommandError(f"no study named {name_or_slug!r} (known: {known})")
    return study
