"""Prolific: ``?PROLIFIC_PID=...&STUDY_ID=...&SESSION_ID=...``; finished participants go back through
the study's ``redirect_url`` with ``{code}`` filled in (or enter the code on Prolific)."""

from __future__ import annotations

from decimal import ROUND_HALF_UP
from typing import TYPE_CHECKING

from studyapp.services.platforms import prolific_api
from studyapp.services.platforms.base import Completion, Draft, DraftOptions, Platform, SetupField
from studyapp.services.platforms.review_api import ReviewClient, SubmissionRef

if TYPE_CHECKING:
    from studyapp.models import Annotator, Study


# The rejection categories Prolific's submission transition accepts (``rejection_category``,
# Prolific API reference: "Approve or reject a submission").
REJECTION_CATEGORIES = (
    ("TOO_QUICKLY", "Too quickly"),
    ("TOO_SLOWLY", "Too slowly"),
    ("FAILED_INSTRUCTIONS", "Failed instructions"),
    ("INCOMP_LONGITUDINAL", "Incomplete longitudinal"),
    ("FAILED_CHECK", "Failed attention check"),
    ("LOW_EFFORT", "Low effort"),
    ("MALINGERING", "Malingering"),
    ("NO_CODE", "No completion code"),
    ("BAD_CODE", "Wrong completion code"),
    ("NO_DATA", "No data"),
    ("UNSUPP_DEVICE", "Unsupported device"),
    ("OTHER", "Other"),
)

# Prolific's own completion address: a participant sent here with the code is marked complete.
COMPLETE_URL = "https://app.prolific.com/submissions/complete?cc="


class Prolific(Platform):
    key = "prolific"
    name = "Prolific"
    label = "Prolific"
    params = ("PROLIFIC_PID", "STUDY_ID", "SESSION_ID")
    id_param = "PROLIFIC_PID"
    session_param = "SESSION_ID"
    recruiting_hosts = ("prolific.com", "prolific.co")
    rejection_categories = REJECTION_CATEGORIES
    rejection_reasons = {"speed": "TOO_QUICKLY", "checks": "FAILED_CHECK", "effort": "LOW_EFFORT", "other": "OTHER"}
    raw_id_pattern = r"\b[0-9a-f]{24}\b"  # ids are 24 hexadecimal digits (participant, submission, study)
    message_min = 100  # "It must be at least 100 chars long" (the transition's ``message``); no maximum documented

    def failed_checks_to_reject(self, submission_seconds: float | None) -> int:
        """Prolific's attention-check policy: a submission of 5 minutes or more may be rejected only for at
        least two failed checks; a shorter one for one (an unknown time counts as long)."""
        return 1 if submission_seconds is not None and submission_seconds < 300 else 2

    def completion(self, annotator: Annotator) -> Completion:
        study = annotator.study
        return Completion(self.key, self.name, study.completion_code, redirect_url=study.completion_redirect())

    def study_url(self, link: str) -> str:
        """The study's URL with Prolific's ``{{%PROLIFIC_PID%}}``, ``{{%STUDY_ID%}}``, ``{{%SESSION_ID%}}`` placeholders."""
        return link + "?" + "&".join(f"{p}={{{{%{p}%}}}}" for p in self.params)

    def setup_fields(self, study: Study, link: str, needed: int) -> list[SetupField]:
        fields = [
            SetupField(
                "Study URL",
                self.study_url(link),
                "Prolific replaces the {{%...%}} placeholders with the participant's, the study's and the session's ids.",
            ),
            SetupField("Completion code", study.completion_code, "Shown to every participant who finished; Prolific checks it."),
        ]
        if study.redirect_url:
            fields.append(SetupField("Completion URL", study.completion_redirect(), "Finished participants are sent here automatically."))
        else:
            fields.append(
                SetupField(
                    "Completion URL",
                    COMPLETE_URL + study.completion_code,
                    "The study has no redirect_url, so participants copy the code by hand; set redirect_url to "
                    f"{COMPLETE_URL}{{code}} in the administration to send them back automatically.",
                )
            )
        if study.screenout_code:
            fields.append(
                SetupField("Screen-out code", study.screenout_code, "Given to participants the study turns away when it is full.")
            )
        fields.append(SetupField("Places", str(needed), "Annotators the study still needs for k answers on every presentation."))
        return fields

    def draft(self, study: Study, link: str, needed: int, options: DraftOptions) -> Draft:
        """Prolific's "Create a draft study" (``POST /api/v1/studies/``): unpublished until the researcher
        publishes it. Finishers' code asks for manual review (``manage.py platform_review`` decides);
        the reward is in cents of the workspace's currency, the time in minutes."""
        body = {
            "name": options.title,
            "internal_name": f"{study.name} ({study.slug})",
            "description": options.description,
            "external_study_url": self.study_url(link),
            "prolific_id_option": "url_parameters",
            "completion_codes": [{"code": study.completion_code, "code_type": "COMPLETED", "actions": [{"action": "MANUALLY_REVIEW"}]}],
            "total_available_places": needed,
            "estimated_completion_time": options.minutes,
            "reward": int((options.reward * 100).to_integral_value(ROUND_HALF_UP)),
        }
        note = "Creates an unpublished draft study: check it and publish it on Prolific."
        return Draft(self.key, "POST /api/v1/studies/", body, note)

    def submission_ref(self, annotator: Annotator) -> SubmissionRef | None:
        """Prolific's submission id is the link's SESSION_ID; STUDY_ID names the Prolific study."""
        ids = annotator.external_ids or {}
        participant = ids.get("PROLIFIC_PID") or annotator.external_id
        if not participant or not ids.get("SESSION_ID"):
            return None
        return SubmissionRef(participant, ids["SESSION_ID"], ids.get("STUDY_ID", ""))

    def review_client(self) -> ReviewClient:
        """From PROLIFIC_API_TOKEN and PROLIFIC_API_URL (services.platforms.prolific_api)."""
        return prolific_api.client_from_env()

    def screenout_link(self, study: Study) -> str:
        if not study.redirect_url or not study.screenout_code:
            return ""
        return study.redirect_url.replace("{code}", study.screenout_code)


PROLIFIC = Prolific()
