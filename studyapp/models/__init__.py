"""Database models; outside code imports them from here (wagtail's ``models/`` package pattern).

Low-level first: ``collection`` (what was imported) <- ``study`` (what is asked) <- ``annotation``
(who answered what) <- ``quality`` (the log of exclusions and reinstatements) <- ``platform_review`` (decisions and API calls on the platform); ``team`` (who may see a study).
"""

from studyapp.models.allocation import AllocationGroup, AllocationRound
from studyapp.models.annotation import Annotator, Assignment, Consent, Preference
from studyapp.models.collection import Collection, Document, Judgment, RankedItem, Run, Subtopic, Topic
from studyapp.models.erasure import ErasureLog, WithdrawnParticipant
from studyapp.models.planning import StoredPlan
from studyapp.models.platform_review import PlatformCall, ReviewDecision, ReviewJob
from studyapp.models.quality import QualityDecision
from studyapp.models.staff import StaffSession
from studyapp.models.study import Presentation, Study, StudyRun, StudySubtopic, StudyTopic
from studyapp.models.team import StudyMember

__all__ = [
    "AllocationGroup",
    "AllocationRound",
    "Annotator",
    "Assignment",
    "Collection",
    "Consent",
    "Document",
    "ErasureLog",
    "WithdrawnParticipant",
    "Judgment",
    "PlatformCall",
    "Preference",
    "Presentation",
    "QualityDecision",
    "RankedItem",
    "ReviewDecision",
    "ReviewJob",
    "Run",
    "StaffSession",
    "StoredPlan",
    "Study",
    "StudyMember",
    "StudyRun",
    "StudySubtopic",
    "StudyTopic",
    "Subtopic",
    "Topic",
]
