"""How a participant leaves the study: each platform has its own path, never another platform's.

The platform's adapter (``services.platforms``) decides: MTurk posts the assignment to MTurk (the
study's ``redirect_url`` is never used for a worker), Prolific follows the study's ``redirect_url``
with ``{code}`` filled in after ``STUDYAPP_REDIRECT_SECONDS``, and the anonymous link (a lab session,
a test) shows the code only. The screen-out code of a full study follows the same rule
(:func:`screenout_link`).
"""

from __future__ import annotations

from studyapp.models import Annotator, Study
from studyapp.services import platforms
from studyapp.services.platforms import Completion

__all__ = ["Completion", "completion_for", "screenout_link"]


def completion_for(annotator: Annotator) -> Completion:
    """The completion path of a finished ``annotator`` (see the module docstring)."""
    return platforms.by_key(annotator.platform).completion(annotator)


def screenout_link(study: Study, platform: str) -> str:
    """Where a participant whom a full study turns away is sent with the screen-out code: the
    platform's redirect (Prolific's), or nowhere ('') when the participant is shown the code."""
    return platforms.by_key(platform).screenout_link(study)
