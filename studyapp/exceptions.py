"""Errors the study services raise; commands turn them into ``CommandError``, views into pages."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from studyapp.models import Preference


class StudyError(Exception):
    """Base class of every user-facing problem of the study platform."""


class ImportFailed(StudyError):
    """A collection could not be imported; nothing was written. The message names file:line: reason."""


class InvalidStudyConfig(StudyError):
    """A study configuration was rejected; ``errors`` lists every reason."""

    def __init__(self, errors: list[str]) -> None:
        self.errors = list(errors)
        super().__init__("invalid study configuration:\n" + "\n".join(f"  - {e}" for e in self.errors))


class TooManyBareDocuments(StudyError):
    """More of the documents a study would show lack display data than allowed; nothing was written."""


class StudyUnavailable(StudyError):
    """The study does not take (new) annotators now: closed, paused or full.

    ``screenout_code`` is what a crowdsourcing platform expects from refused participants.
    """

    def __init__(self, message: str, screenout_code: str = "") -> None:
        self.screenout_code = screenout_code
        super().__init__(message)


class StudyClosed(StudyUnavailable):
    """The study is paused or closed."""


class StudyFull(StudyUnavailable):
    """The study cannot give a newcomer a full quota of items."""


class PlatformIdRequired(StudyError):
    """The study admits only participants whose link carries a platform's participant id (services.platforms), and this one has none."""


class IdentityInUse(StudyError):
    """A platform id that another session holds: the participant's state is not handed to this one."""


class InvalidAnswer(StudyError):
    """An answer is outside the scale or otherwise malformed."""


class AnswerConflict(StudyError):
    """The item was answered already with a different value; an answer is never changed. ``stored`` is the stored one."""

    def __init__(self, stored: Preference, value: int) -> None:
        self.stored = stored
        super().__init__(f"the item was already answered with {stored.value:+d}; {value:+d} was not stored")


class AnnotatorExcluded(StudyError):
    """The annotator was excluded by quality control and gets no more items."""


class ConsentOutdated(StudyError):
    """The consent form answered an older version of the consent text; it must be shown again."""

    def __init__(self, accepted: str, current: str) -> None:
        self.accepted, self.current = accepted, current
        super().__init__(f"consent version {accepted!r} was accepted, but the study now asks for version {current!r}")
