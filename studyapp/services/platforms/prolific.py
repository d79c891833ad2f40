"""Prolific: ``?PROLIFIC_PID=...&STUDY_ID=...&SESSION_ID=...``; finished participants go back through
the study's ``redirect_url`` with ``{code}`` filled in (or enter the code on Prolific)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from studyapp.services.platforms.base import Completion, Platform

if TYPE_CHECKING:
    from studyapp.models import Annotator, Study


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

    def screenout_link(self, study: Study) -> str:
        if not study.redirect_url or not study.screenout_code:
            return ""
        return study.redirect_url.replace("{code}", study.screenout_code)


PROLIFIC = Prolific()
