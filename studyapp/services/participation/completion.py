"""How a participant leaves the study: each platform has its own path, never another platform's.

* **MTurk**: the assignment is posted to ``turkSubmitTo/mturk/externalSubmit`` with its
  ``assignmentId`` (MTurk's rule for an ExternalQuestion), the only action on the page. The study's
  ``redirect_url`` (usually Prolific's) is never used for an MTurk worker. Without the submit
  parameters (an old link) the worker gets the code to enter on MTurk.
* **Prolific**: the study's ``redirect_url`` with ``{code}`` filled in, followed automatically after
  ``STUDYAPP_REDIRECT_SECONDS`` and as a link; without a redirect URL, the code to enter on Prolific.
* **Anonymous** (no platform ids, e.g. a lab session or a test): the code only.

The screen-out code of a full study follows the same rule (:func:`screenout_link`).
"""

from __future__ import annotations

from dataclasses import dataclass

from studyapp.models import Annotator, Study

MTURK_SUBMIT_PATH = "/mturk/externalSubmit"


@dataclass(frozen=True)
class Completion:
    """What the completion page offers one participant."""

    platform: str
    code: str
    redirect_url: str = ""  # Prolific only: followed automatically
    mturk_action: str = ""  # MTurk only: where the submit form posts
    mturk_assignment_id: str = ""

    @property
    def platform_name(self) -> str:
        return {Annotator.Platform.PROLIFIC: "Prolific", Annotator.Platform.MTURK: "MTurk"}.get(self.platform, "")


def completion_for(annotator: Annotator) -> Completion:
    """The completion path of a finished ``annotator`` (see the module docstring)."""
    study = annotator.study
    code = study.completion_code
    if annotator.platform == Annotator.Platform.MTURK:
        ids = annotator.external_ids or {}
        submit_to, assignment_id = ids.get("turkSubmitTo", ""), ids.get("assignmentId", "")
        if submit_to and assignment_id:
            return Completion(annotator.platform, code, mturk_action=submit_to + MTURK_SUBMIT_PATH, mturk_assignment_id=assignment_id)
        return Completion(annotator.platform, code)
    if annotator.platform == Annotator.Platform.PROLIFIC:
        return Completion(annotator.platform, code, redirect_url=study.completion_redirect())
    return Completion(annotator.platform, code)


def screenout_link(study: Study, platform: str) -> str:
    """Where a participant whom a full study turns away is sent with the screen-out code: Prolific's
    redirect for a Prolific participant, nowhere ('') for anyone else (they are shown the code)."""
    if platform != Annotator.Platform.PROLIFIC or not study.redirect_url or not study.screenout_code:
        return ""
    return study.redirect_url.replace("{code}", study.screenout_code)
