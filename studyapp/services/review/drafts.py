"""Opening a study on a recruitment platform through its API (``manage.py platform_draft``).

The call is the platform adapter's (:meth:`~studyapp.services.platforms.base.Platform.draft`), built from the set-up page's own
values (:mod:`.setup`: the annotator link, the annotators still needed, the completion code) plus what
the study does not say (:class:`~studyapp.services.platforms.base.DraftOptions`: reward, time, title). Prolific gets an
unpublished draft study; MTurk has no drafts, so its HIT is created in the requester sandbox unless
production is asked for. The call and its answer are recorded like the review's
(:class:`~studyapp.models.PlatformCall`); credentials come from the environment only.
"""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal

from studyapp.models import Study
from studyapp.services.platforms.base import Draft, DraftOptions, Platform
from studyapp.services.platforms.registry import REGISTRY
from studyapp.services.platforms.review_api import ApiError, CallRecord
from studyapp.services.review.sending import record_calls
from studyapp.services.review.setup import annotators_needed, study_link

DEFAULT_DESCRIPTION = "Compare pairs of search result lists for a query and say which one you prefer."
DEFAULT_KEYWORDS = "search, comparison, preference, research, study"
MAX_MINUTES = 24 * 60


def draft_platforms() -> list[str]:
    """The keys of the platforms that can open a study through their API."""
    return [key for key, platform in REGISTRY.items() if type(platform).draft is not Platform.draft]


def plan(study: Study, platform_key: str, base: str, options: DraftOptions) -> Draft:
    """The call that would open ``study`` on the platform (nothing sent); ``ValueError`` on bad input."""
    platform = REGISTRY.get(platform_key)
    if platform is None or platform_key not in draft_platforms():
        raise ValueError(f"platform {platform_key!r} cannot open a study through an API (choose from: {', '.join(draft_platforms())})")
    if not Decimal(options.reward) > 0:
        raise ValueError(f"the reward must be a positive amount, not {options.reward}")
    if not 1 <= options.minutes <= MAX_MINUTES:
        raise ValueError(f"the estimated time must be 1 to {MAX_MINUTES} minutes, not {options.minutes}")
    if options.lifetime_days < 1:
        raise ValueError(f"the HIT's lifetime must be at least one day, not {options.lifetime_days}")
    needed = annotators_needed(study)
    if needed < 1:
        raise ValueError(f"study {study.name!r} needs no more annotators: there are no places to open")
    options = replace(
        options,
        reward=Decimal(options.reward),
        title=options.title or study.name,
        description=options.description or DEFAULT_DESCRIPTION,
        keywords=options.keywords or DEFAULT_KEYWORDS,
    )
    draft = platform.draft(study, study_link(study, base), needed, options)
    assert draft is not None  # draft_platforms() lists only platforms that make one
    return draft


def destination(draft: Draft, production: bool) -> str:
    """Where ``draft`` would be created, in words after its call's name ('' for a platform with one place)."""
    return REGISTRY[draft.platform].draft_destination(production)


def create(study: Study, draft: Draft, *, production: bool = False, client=None, staff=None) -> tuple[str, list[CallRecord]]:
    """Send ``draft`` (through ``client``, default the platform's :meth:`~studyapp.services.platforms.base.Platform.draft_client`)
    and record the call; returns what was created, in words. Raises :class:`ApiError` (recorded too)."""
    if client is None:
        client = REGISTRY[draft.platform].draft_client(production)
    try:
        created, records = client.create_draft(draft.body)
    except ApiError as error:
        record_calls(study, None, draft.platform, error.records, staff)
        raise
    record_calls(study, None, draft.platform, records, staff)
    return created, records
