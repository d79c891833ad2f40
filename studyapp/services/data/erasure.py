"""Withdrawal and erasure of a participant's data, and the retention limit on raw platform ids.

:func:`erase` deletes an annotator with everything recorded about them (consents, items given,
answers, quality decisions) in one transaction and writes an :class:`~studyapp.models.ErasureLog`
row that holds no personal data; the audit log of API calls (models.PlatformCall) keeps the calls, the
person's platform ids in them replaced by ``(erased)``. Deleting their items re-opens those answer slots, so every
presentation can still reach k valid answers; other annotators' quotas and answers are untouched.
Exports, payments and the report are computed from the database, so from then on they hold nothing
of the person (the report's cache key holds the answer count, so a cached report is not served again).

:func:`erase` on the participant's own request (the withdraw page) also keeps a keyed hash of their platform
id (:class:`~studyapp.models.WithdrawnParticipant`), so opening the study's link again tells them they
withdrew instead of admitting them as new (:func:`has_withdrawn`).

:func:`purge_platform_ids` removes raw platform ids (and the platform parameters of the arrival) of
annotators last seen more than N days ago, keeping their answers under the same export pseudonym
(the audit log then names them by it).
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Q, QuerySet
from django.db.models.functions import Coalesce

from studyapp.exceptions import StudyError
from studyapp.models import Annotator, Assignment, ErasureLog, Preference, Study, WithdrawnParticipant
from studyapp.services.access import platform_ids
from studyapp.services.clock import now_or
from studyapp.services.data.pseudonyms import pseudonym
from studyapp.services.participation import flow
from studyapp.services.platforms import Arrival
from studyapp.services.wording import count

ERASED = "(erased)"  # what an erased participant's platform ids become in the audit log


def erase(annotator: Annotator, *, source: str, staff=None, now: datetime | None = None) -> ErasureLog:
    """Delete ``annotator`` and all their rows; returns the log entry (answers and items counted first)."""
    now = now_or(now)
    with transaction.atomic():
        me = Annotator.objects.select_for_update().filter(pk=annotator.pk).first()
        if me is None:
            raise StudyError("this participant's data was erased already")
        answers = Preference.objects.filter(assignment__annotator=me).count()
        items = Assignment.objects.filter(annotator=me).count()
        entry = ErasureLog.objects.create(
            study_id=me.study_id, source=source, staff=staff, answers=answers, assignments=items, status=me.status, erased_at=now
        )
        platform_ids.scrub(me.study, dict.fromkeys(platform_ids.own_ids([me], me.study), ERASED))  # the audit log of API calls
        if source == ErasureLog.Source.WITHDRAWAL and me.external_id:
            key = withdrawal_key(me.study, me.platform, me.external_id)
            WithdrawnParticipant.objects.get_or_create(study_id=me.study_id, key=key, defaults={"withdrawn_at": now})
        me.delete()  # cascades: consents, assignments, their answers, quality decisions
    return entry


def withdrawal_key(study: Study, platform: str, external_id: str) -> str:
    """HMAC-SHA256 of (platform, platform id) under the study's secret: recognises a returning id, keeps none."""
    message = f"withdrawn\0{platform}\0{external_id}".encode()
    return hmac.new(study.pseudonym_secret.encode(), message, hashlib.sha256).hexdigest()


def withdrawal_marks(study: Study, platform: str, external_id: str) -> QuerySet[WithdrawnParticipant]:
    """The mark (at most one) that the participant with this platform id withdrew from ``study``."""
    return WithdrawnParticipant.objects.filter(study=study, key=withdrawal_key(study, platform, external_id))


def has_withdrawn(study: Study, platform: str, external_id: str) -> bool:
    """Did the participant with this platform id withdraw from ``study`` (and was the mark not purged yet)?"""
    if not external_id:
        return False
    return withdrawal_marks(study, platform, external_id).exists()


def find_or_withdrawn(study: Study, arrival: Arrival) -> tuple[Annotator | None, bool]:
    """:func:`flow.find`, and whether the platform id withdrew from the study (:func:`has_withdrawn`; a
    withdrawn participant's row is gone): ``(annotator, False)`` or ``(None, withdrew)``, in one query."""
    if not arrival.external_id:
        return None, False
    found, found_params = flow.same_id(study, arrival)[:1].query.sql_with_params()
    marks, marks_params = withdrawal_marks(study, arrival.platform, arrival.external_id).order_by().values("pk").query.sql_with_params()
    # one row always: the annotator's columns (NULL when none) and the withdrawal mark's existence
    sql = f"SELECT found.*, EXISTS({marks}) AS withdrew FROM (SELECT 1 AS one) one LEFT JOIN ({found}) found ON 1 = 1"
    row = next(iter(Annotator.objects.raw(sql, (*marks_params, *found_params))))
    if row.pk is None:
        return None, bool(row.withdrew)
    del row.withdrew
    return row, False


def find_participant(study: Study, pid: str) -> Annotator:
    """The annotator of ``study`` with platform id ``pid`` (any platform) or internal code ``pid``."""
    matches = list(Annotator.objects.filter(Q(external_id=pid) | Q(pseudonym=pid), study=study))
    if not matches:
        raise StudyError(f"study {study.name!r} has no participant with platform id or code {pid!r} (erased already?)")
    if len(matches) > 1:
        raise StudyError(f"{pid!r} names {len(matches)} participants of {study.name!r} (one per platform); use their code instead")
    return matches[0]


@dataclass(frozen=True)
class PurgeResult:
    study: Study
    days: int
    purged: int

    def line(self) -> str:
        return f"{self.study.name}: platform ids of {count(self.purged, 'annotator')} last seen more than {self.days} days ago removed"


def retention_days(study: Study, override: int | None = None) -> int:
    if override is not None:
        return override
    return study.platform_id_retention_days or settings.STUDYAPP_PLATFORM_ID_RETENTION_DAYS


def purge_platform_ids(study: Study, *, days: int | None = None, now: datetime | None = None) -> PurgeResult:
    """Remove the platform ids of ``study``'s annotators last seen (else arrived) more than ``days`` ago
    (default: the study's ``platform_id_retention_days``, else the site default). Their export pseudonym
    is kept first, so exports and the report name them as before."""
    now = now_or(now)
    days = retention_days(study, days)
    if days < 1:
        raise StudyError(f"--older-than must be at least 1 day, got {days}")
    cutoff = now - timedelta(days=days)
    old = (
        Annotator.objects.filter(study=study)
        .annotate(seen=Coalesce("last_seen_at", "finished_at", "created_at"))
        .filter(seen__lt=cutoff)
        .exclude(external_id="", external_ids={})
    )
    with transaction.atomic():
        annotators = list(old.select_for_update(of=("self",)))
        own = platform_ids.own_ids(annotators, study)
        stand_ins: dict[str, str] = {}
        for annotator in annotators:
            annotator.kept_pseudonym = annotator.kept_pseudonym or pseudonym(study, annotator)
            stand_ins.update(dict.fromkeys(platform_ids.ids_of(annotator) & own, f"(id of {annotator.kept_pseudonym})"))
            annotator.external_id, annotator.external_ids = "", {}
            annotator.save(update_fields=["kept_pseudonym", "external_id", "external_ids"])
        platform_ids.scrub(study, stand_ins)  # the audit log of API calls names them by pseudonym from now on
        WithdrawnParticipant.objects.filter(study=study, withdrawn_at__lt=cutoff).delete()  # derived from ids: same limit
    return PurgeResult(study, days, len(annotators))
