"""What a recruitment platform declares (:class:`Platform`) and what it produces: who arrives
(:class:`Arrival`) and how they leave (:class:`Completion`)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING

from django.utils.functional import Promise
from django.utils.translation import gettext, gettext_lazy

if TYPE_CHECKING:
    from studyapp.models import Annotator, Study
    from studyapp.services.platforms.review_api import ReviewClient, SubmissionRef

# What a participant or session id in a link may look like (anything else is a broken or forged link).
ID_PATTERN = re.compile(r"^[A-Za-z0-9_.:@-]{1,100}$")


@dataclass(frozen=True)
class Arrival:
    """Who arrives, as the platform link says (validated by ``forms.ArrivalForm``)."""

    platform: str = ""
    external_id: str = ""
    external_ids: dict[str, str] = field(default_factory=dict)
    preview: bool = False  # e.g. MTurk's ASSIGNMENT_ID_NOT_AVAILABLE: show the task, store nothing
    key: str = ""  # random, given when the browser arrives (sessions.set_pending): one arrival, one annotator

    def to_session(self) -> dict:
        return {"platform": self.platform, "external_id": self.external_id, "external_ids": dict(self.external_ids), "key": self.key}

    @classmethod
    def from_session(cls, data: dict | None) -> Arrival:
        data = data or {}
        ids = dict(data.get("external_ids", {}))
        return cls(str(data.get("platform", "")), str(data.get("external_id", "")), ids, key=str(data.get("key", "")))

    def same_participant(self, other: Arrival | None) -> bool:
        """Does ``other`` name the same participant (the same platform id, or both anonymous)?"""
        return other is not None and (self.platform, self.external_id) == (other.platform, other.external_id)


@dataclass(frozen=True)
class SetupField:
    """One value a researcher pastes into a platform when opening the study there (the set-up page)."""

    label: str
    value: str
    help: str = ""
    multiline: bool = False


@dataclass(frozen=True)
class DraftOptions:
    """What the study's settings do not say about a draft on a platform (``manage.py platform_draft``)."""

    reward: Decimal  # per participant, in the account's currency (Prolific) or US dollars (MTurk)
    minutes: int  # the estimated time to finish the study
    title: str = ""  # shown to participants; default: the study's name
    description: str = ""
    keywords: str = ""  # MTurk's search keywords, comma separated
    lifetime_days: int = 7  # MTurk: how long the HIT can be accepted


@dataclass(frozen=True)
class Draft:
    """The one API call that opens ``study`` on a platform, for the researcher to publish there."""

    platform: str
    operation: str  # "POST /api/v1/studies/" (Prolific) or "CreateHIT" (MTurk)
    body: dict
    note: str  # what the call does and does not do ("a draft: publish it on Prolific")


@dataclass(frozen=True)
class Completion:
    """What the completion page offers one participant: the code, and either a redirect (followed
    automatically) or a form that submits the work to the platform (the page's only action)."""

    platform: str
    platform_name: str
    code: str
    redirect_url: str = ""
    submit_action: str = ""
    submit_fields: tuple[tuple[str, str], ...] = ()


class Platform:
    """A recruitment platform. Subclasses set the class attributes and override what differs.

    ``key`` is what ``Annotator.platform`` stores ('' only for the anonymous link); ``params`` are the
    link's parameters (each at most ``max_length[param]`` characters, else 100); ``id_param`` names
    the participant, ``session_param`` their session on the platform: only the participant's own
    link carries it, so it is what lets them resume in another browser (:meth:`may_resume`).
    ``free_params`` are checked by :meth:`check` instead of :data:`ID_PATTERN`.
    """

    key: str = ""
    name: str = ""  # in participants' texts: "Return to Prolific"
    label: str = ""  # for staff (admin, dashboard): "Amazon Mechanical Turk"
    id_label: str | Promise = gettext_lazy("participant id")  # "The link has no Prolific participant id"
    params: tuple[str, ...] = ()
    id_param: str = ""
    session_param: str = ""
    free_params: tuple[str, ...] = ()
    max_length: Mapping[str, int] = {}
    submit_hosts: tuple[str, ...] = ()  # where its completion form may post (CSP form-action)
    recruiting_hosts: tuple[str, ...] = ()  # a redirect_url to one of these says the study recruits here
    # Origins that show the study to this platform's participants in a frame (CSP frame-ancestors of
    # their pages only, services.participation.framing); empty: never framed, like every other page.
    frame_ancestors: tuple[str, ...] = ()
    # ``(code, label)`` of the reasons the platform accepts with a rejection (review through its API,
    # services.review.decisions); empty: the message alone carries the reason.
    rejection_categories: tuple[tuple[str, str], ...] = ()
    # The category for each kind of reason a rejection has ("speed", "checks", "effort", "other";
    # QualityRule.reject_as of services.quality.rules); empty: no categories.
    rejection_reasons: Mapping[str, str] = {}
    # The length a rejection's message must have on the platform (its documented limits).
    message_min: int = 0
    message_max: int = 1000
    # A regex matching the shape of this platform's raw ids (participant, submission): hidden from staff
    # without the id permission even when no participant holds them any more (services.access.platform_ids).
    raw_id_pattern: str = ""

    def failed_checks_to_reject(self, submission_seconds: float | None) -> int:
        """How many failed attention checks the platform accepts as a reason to reject a submission that
        took ``submission_seconds`` (consent -> last answer; None: unknown). By default one."""
        return 1

    # -- the link -------------------------------------------------------------------------------

    def in_link(self, raw: Mapping[str, str]) -> bool:
        """Does the link carry any of this platform's parameters?"""
        return any(p in raw for p in self.params)

    def is_preview(self, cleaned: Mapping[str, str]) -> bool:
        """Is this a preview of the task (shown, nothing stored) rather than a participant?"""
        return False

    def check(self, cleaned: dict[str, str], raw: Mapping[str, str]) -> dict[str, str]:
        """``{param: problem}`` for the link's parameters; may normalise ``cleaned`` in place.

        By default: ids must match :data:`ID_PATTERN`, and a link that carries any parameter of the
        platform must carry the participant's id (an empty ``PROLIFIC_PID=`` is a broken link, never
        an anonymous participant).
        """
        problems = {
            p: "unexpected characters"
            for p in self.params
            if p not in self.free_params and cleaned.get(p) and not ID_PATTERN.match(cleaned[p])
        }
        if self.id_param and self.in_link(raw) and not cleaned.get(self.id_param) and not self.is_preview(cleaned):
            problems.setdefault(self.id_param, "missing or empty")
        return problems

    def missing_id_text(self) -> str:
        """Why a link without the participant's id cannot be used, in a participant's words."""
        text = gettext("The link has no %(platform)s %(id_label)s (%(param)s is empty), so we cannot tell who you are.")
        return text % {"platform": self.name, "id_label": self.id_label, "param": self.id_param}

    def arrival(self, cleaned: Mapping[str, str]) -> Arrival | None:
        """Who arrives, when the link names a participant of this platform; else None."""
        if self.id_param and cleaned.get(self.id_param):
            ids = {p: cleaned[p] for p in self.params if cleaned.get(p)}
            return Arrival(self.key, cleaned[self.id_param], ids)
        return None

    def may_resume(self, stored: Mapping[str, str], arrival: Arrival) -> bool:
        """May ``arrival`` take up the participant whose stored link parameters are ``stored``, in a
        browser that does not hold their token? Only with the same platform session; the participant
        id alone is no proof (others can know it)."""
        session = stored.get(self.session_param, "") if self.session_param else ""
        return bool(session) and arrival.external_ids.get(self.session_param) == session

    # -- opening the study on the platform ------------------------------------------------------

    def setup_fields(self, study: Study, link: str, needed: int) -> list[SetupField]:
        """What to paste into the platform to recruit for ``study`` (annotator link ``link``,
        ``needed`` annotators still wanted). By default the link itself."""
        return [SetupField("Study link", link, "Send this link to participants; each browser becomes one annotator.")]

    def draft_client(self, production: bool) -> ReviewClient | None:
        """The client that sends :meth:`draft` (its ``create_draft(body)``); ``production`` matters to a
        platform with a sandbox (MTurk). By default the review client."""
        return self.review_client()

    def draft_destination(self, production: bool) -> str:
        """Where :meth:`draft_client` creates the study, in words after the call's name (" in the requester sandbox"),
        for a platform with more than one place; '' by default."""
        return ""

    def draft(self, study: Study, link: str, needed: int, options: DraftOptions) -> Draft | None:
        """The API call that creates ``study`` on the platform with the set-up page's values (``link``,
        ``needed``); None when the platform has no API for it (the anonymous link)."""
        return None

    # -- leaving the study ----------------------------------------------------------------------

    def completion(self, annotator: Annotator) -> Completion:
        """How a finished participant leaves: by default the code to enter where they were asked."""
        return Completion(self.key, self.name, annotator.study.completion_code)

    def screenout_link(self, study: Study) -> str:
        """Where a participant whom a full study turns away is sent with the screen-out code ('' : nowhere, the code is shown)."""
        return ""

    # -- review through the platform's API (services.review.decisions) ---------------------------

    def submission_ref(self, annotator: Annotator) -> SubmissionRef | None:
        """What the platform's API needs to act on ``annotator``'s submission; None when the platform
        cannot be reviewed through an API (the anonymous link) or the stored link lacks the ids."""
        return None

    def review_client(self) -> ReviewClient | None:
        """The platform's review client, configured from the environment only (credentials are never
        stored); None when the platform has no API. Raises ``review_api.ApiError`` when credentials
        are missing."""
        return None
