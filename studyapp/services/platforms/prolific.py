"""Prolific: ``?PROLIFIC_PID=...&STUDY_ID=...&SESSION_ID=...``; finished participants go back through
the study's ``redirect_url`` with ``{code}`` filled in (or enter the code on Prolific)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from studyapp.services.platforms.base import Completion, Platform, SetupField

if TYPE_CHECKING:
    from studyapp.models import Annotator, Study


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

    def completion(self, annotator: Annotator) -> Completion:
        study = annotator.study
        return Completion(self.key, self.name, study.completion_code, redirect_url=study.completion_redirect())

    def setup_fields(self, study: Study, link: str, needed: int) -> list[SetupField]:
        placeholders = "&".join(f"{p}={{{{%{p}%}}}}" for p in self.params)
        fields = [
            SetupField(
                "Study URL",
                f"{link}?{placeholders}",
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

    def screenout_link(self, study: Study) -> str:
        if not study.redirect_url or not study.screenout_code:
            return ""
        return study.redirect_url.replace("{code}", study.screenout_code)


PROLIFIC = Prolific()
