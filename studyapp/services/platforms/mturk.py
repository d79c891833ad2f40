"""Amazon Mechanical Turk (an ExternalQuestion HIT): ``?workerId=...&assignmentId=...&hitId=...&turkSubmitTo=...``.

The finished assignment is posted to ``turkSubmitTo/mturk/externalSubmit`` with its ``assignmentId``
(MTurk's rule for an ExternalQuestion), the only action on the page; the study's ``redirect_url``
(usually Prolific's) is never used for a worker. Without the submit parameters (an old link) the
worker gets the code to enter on MTurk. ``assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE`` is MTurk's
preview of the HIT: the task is shown, nothing stored.

MTurk shows an ExternalQuestion in a frame of its worker sites, so a worker's pages may be framed by
:data:`FRAME_ANCESTORS` (and by ``STUDYAPP_MTURK_FRAME_ANCESTORS``, extra origins for a local test,
which may also stand in as ``turkSubmitTo``); every other page refuses framing
(:mod:`.framing`, docs/annotator.md#security).
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import ROUND_HALF_UP, Decimal
from typing import TYPE_CHECKING
from xml.sax.saxutils import escape

from django.conf import settings
from django.utils.translation import gettext_lazy

from studyapp.services.platforms.base import Completion, Draft, DraftOptions, Platform, SetupField
from studyapp.services.platforms.review_api import SubmissionRef

if TYPE_CHECKING:
    from studyapp.models import Annotator, Study
    from studyapp.services.platforms.mturk_api import MTurkReviewClient

PREVIEW = "ASSIGNMENT_ID_NOT_AVAILABLE"
EXTERNAL_QUESTION = (
    '<ExternalQuestion xmlns="http://mechanicalturk.amazonaws.com/AWSMechanicalTurkDataSchemas/2006-07-14/ExternalQuestion.xsd">\n'
    "  <ExternalURL>{url}</ExternalURL>\n"
    "  <FrameHeight>0</FrameHeight>\n"
    "</ExternalQuestion>"
)
FEEDBACK_LIMIT = 1024  # RequesterFeedback: "Can be up to 1024 characters (including multi-byte characters)"
TITLE_LIMIT, DESCRIPTION_LIMIT, KEYWORDS_LIMIT = 128, 2000, 1000  # CreateHIT's Title, Description, Keywords
MAX_DAYS = 365  # LifetimeInSeconds: at most a year
MIN_DURATION = 30  # AssignmentDurationInSeconds: 30 seconds to 365 days
SUBMIT_PATH = "/mturk/externalSubmit"
# MTurk's worker sites, which show an ExternalQuestion in an iframe: production (the current and the
# classic worker site) and the sandbox.
FRAME_ANCESTORS = ("https://worker.mturk.com", "https://www.mturk.com", "https://workersandbox.mturk.com")
SUBMIT_HOSTS = ("https://www.mturk.com", "https://workersandbox.mturk.com")


def external_question(link: str) -> str:
    """The HIT's ``Question``: an ExternalQuestion showing ``link`` in MTurk's frame (FrameHeight 0: the whole window)."""
    return EXTERNAL_QUESTION.format(url=escape(link))


def extra_hosts() -> tuple[str, ...]:
    """``STUDYAPP_MTURK_FRAME_ANCESTORS``: origins standing in for MTurk (a local test's parent page); empty in production."""
    return tuple(getattr(settings, "STUDYAPP_MTURK_FRAME_ANCESTORS", ()))


class MTurk(Platform):
    key = "mturk"
    name = "MTurk"
    label = "Amazon Mechanical Turk"
    id_label = gettext_lazy("worker id")
    params = ("workerId", "assignmentId", "hitId", "turkSubmitTo")
    id_param = "workerId"
    session_param = "assignmentId"
    free_params = ("turkSubmitTo",)
    max_length = {"turkSubmitTo": 200}
    recruiting_hosts = ("mturk.com",)
    raw_id_pattern = r"\b(?=[A-Z0-9]*[0-9])(?=[A-Z0-9]*[A-Z])[A-Z0-9]{12,40}\b"  # worker, assignment and HIT ids
    # No rejection categories: the message (RequesterFeedback, required for a rejection) carries the reason.
    message_min, message_max = 1, FEEDBACK_LIMIT

    @property
    def submit_hosts(self) -> tuple[str, ...]:  # type: ignore[override]
        """Where MTurk may tell us to post the finished assignment (anything else would make us an open form relay)."""
        return SUBMIT_HOSTS + extra_hosts()

    @property
    def frame_ancestors(self) -> tuple[str, ...]:  # type: ignore[override]
        return FRAME_ANCESTORS + extra_hosts()

    def is_preview(self, cleaned: Mapping[str, str]) -> bool:
        return cleaned.get("assignmentId") == PREVIEW

    def check(self, cleaned: dict[str, str], raw: Mapping[str, str]) -> dict[str, str]:
        problems = super().check(cleaned, raw)
        submit_to = (cleaned.get("turkSubmitTo") or "").rstrip("/")
        if submit_to and submit_to not in self.submit_hosts:
            problems["turkSubmitTo"] = "not an MTurk address"
        cleaned["turkSubmitTo"] = submit_to
        return problems

    def setup_fields(self, study: Study, link: str, needed: int) -> list[SetupField]:
        framed = bool(getattr(self, "frame_ancestors", ()))
        return [
            SetupField(
                "ExternalQuestion (the HIT's Question)",
                external_question(link),
                "MTurk adds workerId, assignmentId, hitId and turkSubmitTo to the URL and shows it in a frame "
                "(FrameHeight 0: the whole window). "
                + (
                    "This site allows MTurk to frame MTurk studies."
                    if framed
                    else "This site does not yet allow being framed (docs/annotator.md)."
                ),
                multiline=True,
            ),
            SetupField("MaxAssignments", str(needed), "Annotators the study still needs for k answers on every presentation."),
            SetupField("Completion code", study.completion_code, "Posted back to MTurk with the assignment when the worker finishes."),
        ]

    def completion(self, annotator: Annotator) -> Completion:
        code = annotator.study.completion_code
        ids = annotator.external_ids or {}
        submit_to, assignment_id = ids.get("turkSubmitTo", ""), ids.get("assignmentId", "")
        if submit_to and assignment_id:
            fields = (("assignmentId", assignment_id), ("completionCode", code))
            return Completion(self.key, self.name, code, submit_action=submit_to + SUBMIT_PATH, submit_fields=fields)
        return Completion(self.key, self.name, code)

    def draft(self, study: Study, link: str, needed: int, options: DraftOptions) -> Draft:
        """``CreateHIT`` with the study as an ExternalQuestion. MTurk has no drafts: the HIT can be
        accepted at once (in the sandbox, where nothing is paid, unless asked for production).
        ``ValueError`` for a title or description longer than MTurk takes."""
        limits = (("title", options.title, TITLE_LIMIT), ("description", options.description, DESCRIPTION_LIMIT),
                  ("keywords", options.keywords, KEYWORDS_LIMIT))  # fmt: skip
        for name, text, limit in limits:
            if len(text) > limit:
                raise ValueError(f"the {name} has {len(text)} characters; MTurk takes at most {limit}")
        if options.lifetime_days > MAX_DAYS:
            raise ValueError(f"the HIT's lifetime must be at most {MAX_DAYS} days, not {options.lifetime_days}")
        body = {
            "Title": options.title,
            "Description": options.description,
            "Keywords": options.keywords,
            "Reward": str(options.reward.quantize(Decimal("0.01"), ROUND_HALF_UP)),
            "MaxAssignments": needed,
            "AssignmentDurationInSeconds": max(MIN_DURATION, 3 * 60 * options.minutes),
            "LifetimeInSeconds": 24 * 3600 * options.lifetime_days,
            "Question": external_question(link),
            "RequesterAnnotation": study.slug,
        }
        note = "MTurk has no drafts: the HIT is open to workers as soon as it is created."
        return Draft(self.key, "CreateHIT", body, note)

    # -- review through the Requester API (services.platforms.mturk_api) ------------------------

    def submission_ref(self, annotator: Annotator) -> SubmissionRef | None:
        """The worker's assignment (``workerId``, ``assignmentId``, ``hitId`` of their link); None for a
        link without them (an old link, a preview)."""
        ids = annotator.external_ids or {}
        worker, assignment = ids.get("workerId", ""), ids.get("assignmentId", "")
        if not worker or not assignment or assignment == PREVIEW:
            return None
        return SubmissionRef(worker, assignment, ids.get("hitId", ""))

    def review_client(self) -> MTurkReviewClient:
        """boto3's MTurk client from the environment (AWS credentials; ``STUDYAPP_MTURK_SANDBOX=1``: the sandbox)."""
        from studyapp.services.platforms.mturk_api import MTurkReviewClient  # boto3 only when reviewing

        return MTurkReviewClient()

    def draft_destination(self, production: bool) -> str:
        return " in production" if production else " in the requester sandbox"

    def draft_client(self, production: bool) -> MTurkReviewClient:
        """The HIT is created in the requester sandbox unless ``production`` (MTurk has no drafts)."""
        from studyapp.services.platforms.mturk_api import MTurkReviewClient, build_client

        return MTurkReviewClient(build_client(sandbox=not production))


MTURK = MTurk()
