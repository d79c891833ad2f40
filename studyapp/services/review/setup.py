"""What a researcher pastes into each recruitment platform to open a study there (the staff set-up page).

Each registered platform contributes its own section (:meth:`Platform.setup_fields`), so a new
platform gets a section by declaring it. Links are absolute: the site's public address comes from
the request or from ``STUDYAPP_BASE_URL`` (:func:`base_url`).
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.http import HttpRequest
from django.urls import reverse

from studyapp.models import Study
from studyapp.services.analysis.status import study_status
from studyapp.services.platforms.base import SetupField
from studyapp.services.platforms.registry import REGISTRY


@dataclass(frozen=True)
class SetupSection:
    """One platform's part of the set-up page."""

    key: str
    label: str
    fields: tuple[SetupField, ...]


def base_url(request: HttpRequest | None = None) -> str:
    """The site's public address without a trailing slash: ``STUDYAPP_BASE_URL`` when set (behind a
    proxy the request may not know it), else the request's own scheme and host."""
    configured = getattr(settings, "STUDYAPP_BASE_URL", "")
    if configured:
        return configured.rstrip("/")
    if request is None:
        raise ValueError("no STUDYAPP_BASE_URL and no request to take the site's address from")
    return f"{request.scheme}://{request.get_host()}"


def study_link(study: Study, base: str) -> str:
    """The annotator link of ``study`` on the site at ``base`` (absolute, ends with '/')."""
    return base.rstrip("/") + reverse("study_entry", args=[study.slug])


def annotators_needed(study: Study) -> int:
    """Annotators ``study`` still needs for k answers on every presentation (the platform's places)."""
    return int(study_status(study).get("annotators_needed", 0))


def setup_sections(study: Study, base: str) -> list[SetupSection]:
    """Every platform's fields for ``study``, the anonymous link first, in registration order."""
    link = study_link(study, base)
    needed = annotators_needed(study)
    return [
        SetupSection(
            platform.key or "link",
            platform.label or "Direct link (lab, e-mail, anonymous)",
            tuple(platform.setup_fields(study, link, needed)),
        )
        for platform in REGISTRY.values()
    ]
