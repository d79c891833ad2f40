"""The annotator's way through a study, from the platform link to the completion code.

Steps, in order: ``consent`` -> ``instructions`` -> ``practice`` -> ``comprehension`` -> ``items`` ->
``done``. :func:`next_step` derives where an annotator stands from their row alone, so a reload, a
new browser (platform ids) or a lost connection always lands on the same page. Terminal states
(``closed``, ``full``, ``screened``, ``excluded``) are shown as a message; an annotator excluded by
quality control after finishing (or on their last answer) keeps the completion page.

* **A resumed identity is bound.** A known platform id resumes only in the browser that holds the
  annotator's token or with the same platform session id (:func:`may_resume`); anyone else who
  knows the id gets a refusal, never the participant's state.
* **Capacity before consent, once.** A newcomer is only shown the consent form when the study is open
  and admission would find a full quota for them (:func:`check_room` on the entry page, one query, the
  same rule as ``allocation.admit``; while the study has ample room a server process reuses its answer
  for 2 s: ``room_check``); otherwise the screen-out page, nothing stored. The consent page
  does not ask again: admission at consent is the real check.
* **Admission at consent.** Accepting the consent leases the whole quota (``allocation.admit``), so
  nobody who went through the instructions finds the study full afterwards. Onboarding requests
  keep those leases alive like any other request.
* **Comprehension check, two attempts.** Failing twice screens the annotator out (Prolific's rule:
  they are asked to return the study, never rejected) and releases their items for others.
* **Completion only after the last answer.** ``done`` requires every assignment answered (or
  released); :func:`after_answer` marks the annotator finished right after storing the last one.
* **Answers are never refused for the step.** An answer to the annotator's own served item is
  stored whatever their step or the study's status (consent text changed, study closed, annotator
  excluded); :func:`after_answer` then says which page comes next.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass
from datetime import datetime

from django.db import IntegrityError, transaction
from django.db.models import QuerySet

from studyapp.exceptions import ConsentOutdated, IdentityInUse, PlatformIdRequired, StudyClosed, StudyFull, StudyUnavailable
from studyapp.models import Annotator, Assignment, Consent, Study
from studyapp.services import platforms
from studyapp.services.clock import now_or
from studyapp.services.participation import allocation, room_check
from studyapp.services.participation.onboarding import (
    COMPREHENSION_ATTEMPTS,
    PracticeFeedback,
    practice_feedback,
    practice_item,
    wrong_answers,
)
from studyapp.services.participation.sequence import Sequence
from studyapp.services.platforms import Arrival

CONSENT, INSTRUCTIONS, PRACTICE, COMPREHENSION, ITEMS, DONE = "consent", "instructions", "practice", "comprehension", "items", "done"
CLOSED, FULL, SCREENED, EXCLUDED = "closed", "full", "screened", "excluded"
TERMINAL = (CLOSED, FULL, SCREENED, EXCLUDED)


@dataclass(frozen=True)
class ComprehensionResult:
    passed: bool
    wrong: list[str]
    attempts_left: int


def next_step(annotator: Annotator) -> str:
    """Where ``annotator`` stands; the page to show them."""
    study = annotator.study
    status = annotator.status
    if status == Annotator.Status.EXCLUDED:
        # Exclusion from the data never withholds the completion code: whoever finished sees it.
        return DONE if annotator.finished_at is not None else EXCLUDED
    if status == Annotator.Status.SCREENED:
        return SCREENED
    if status == Annotator.Status.REFUSED:
        return FULL
    if status == Annotator.Status.FINISHED:
        return DONE
    if study.status == Study.Status.CLOSED:
        return CLOSED
    if annotator.consented_at is None or annotator.consent_version != study.consent_version or status == Annotator.Status.NEW:
        return CONSENT  # never consented, consented to an older text, or not admitted yet (study paused then)
    if annotator.instructions_read_at is None:
        return INSTRUCTIONS
    if annotator.practice_answered_at is None:
        return PRACTICE
    if annotator.comprehension_passed_at is None:
        return COMPREHENSION
    return ITEMS


def find(study: Study, arrival: Arrival) -> Annotator | None:
    """The annotator who arrived before with the same platform id (they resume where they were)."""
    if not arrival.external_id:
        return None
    return same_id(study, arrival).first()


def same_id(study: Study, arrival: Arrival) -> QuerySet[Annotator]:
    """The annotators of ``study`` with the arrival's platform id (at most one)."""
    return Annotator.objects.filter(study=study, platform=arrival.platform, external_id=arrival.external_id).order_by("pk")


def may_resume(annotator: Annotator, arrival: Arrival) -> bool:
    """May ``arrival``, in a browser that does not hold ``annotator``'s token, take up ``annotator``?

    Only with the same platform session as stored (Prolific's ``SESSION_ID``, MTurk's
    ``assignmentId``: the platform's ``session_param``). The participant id alone is no proof: others
    can know it. The same browser (its session holds the token) is checked by the caller.
    """
    return platforms.by_key(annotator.platform).may_resume(annotator.external_ids or {}, arrival)


def by_token(study: Study, token: str) -> Annotator | None:
    """The annotator whose secret token the browser session holds."""
    if not token:
        return None
    annotator = Annotator.objects.filter(study=study, token=token).first()
    if annotator is not None:
        annotator.study = study  # the caller's study object: read once per request
    return annotator


def returned(annotator: Annotator, arrival: Arrival, *, now: datetime | None = None) -> None:
    """A known annotator came back through the link: keep the latest platform parameters, record the activity."""
    now = now_or(now)
    if arrival.external_ids and arrival.external_ids != annotator.external_ids:
        annotator.external_ids = {**annotator.external_ids, **arrival.external_ids}
        annotator.save(update_fields=["external_ids"])
    seen(annotator, now=now)


def seen(annotator: Annotator, *, now: datetime | None = None) -> None:
    """A step of an admitted annotator (consent, onboarding, the platform link) keeps all their leases alive.

    An item page and its heartbeat keep only the item on screen (``allocation.current_assignment``,
    :func:`heartbeat`); answers keep them all (``answers.record_answer``).
    """
    if annotator.status == Annotator.Status.ACTIVE:
        allocation.touch(annotator, now_or(now))


def heartbeat(annotator: Annotator, item: int | None, *, now: datetime | None = None) -> bool:
    """An open page says the annotator is there; returns whether the lease of ``item`` was extended.

    Only the item on screen (``item``: their served, unanswered assignment) keeps its lease; the
    others run out after ``lease_minutes`` unless the annotator does something (a page, an answer),
    so a script sending heartbeats holds at most one item per admitted annotator, not a whole quota.
    """
    now = now_or(now)
    if annotator.status != Annotator.Status.ACTIVE:
        return False
    allocation.mark_seen(annotator, now)
    return item is not None and allocation.keep_on_screen(annotator, item, now)


def check_platform_id(study: Study, arrival: Arrival) -> None:
    """Raise :class:`PlatformIdRequired` when ``study`` requires a platform id and ``arrival`` has none."""
    if study.require_platform_id and not arrival.external_id:
        raise PlatformIdRequired(f"study {study.name!r} admits only participants with a {platforms.names_text()} id")


def check_room(study: Study, *, now: datetime | None = None) -> None:
    """Before consent: raise :class:`StudyClosed` or :class:`StudyFull` when a newcomer cannot start."""
    if study.status != Study.Status.OPEN:
        raise StudyClosed(f"study {study.name!r} is {study.status}", study.screenout_code)
    if not (room_check.has_room(study) if now is None else allocation.can_admit(study, now=now)):
        raise StudyFull(f"study {study.name!r} has no room for another full set of items", study.screenout_code)


def consent_digest(study: Study) -> str:
    return hashlib.sha256(study.consent_text.encode()).hexdigest()


def give_consent(
    study: Study,
    annotator: Annotator | None,
    arrival: Arrival,
    version: str,
    *,
    now: datetime | None = None,
    rng: random.Random | None = None,
) -> Annotator:
    """Record consent to ``version`` of the study's text and, for a newcomer, lease their quota.

    Raises :class:`ConsentOutdated` when ``version`` is not the study's current one (the page was
    older than the text), :class:`StudyClosed` for a newcomer of a study that is not open and
    :class:`PlatformIdRequired` for a newcomer without the platform id the study requires (nothing
    stored). A newcomer is registered under the arrival's key, so the same arrival consenting twice
    (two posts at once) is one annotator; a platform id that another arrival registered meanwhile
    raises :class:`IdentityInUse` unless the platform session matches (:func:`may_resume`). A newcomer whom admission refuses (the study filled up since the capacity check) is
    stored as refused, with their consent: :func:`next_step` then says ``full``.
    """
    now = now_or(now)
    if version != study.consent_version:
        raise ConsentOutdated(version, study.consent_version)
    if (annotator is None or annotator.status == Annotator.Status.NEW) and study.status != Study.Status.OPEN:
        raise StudyClosed(f"study {study.name!r} is {study.status}", study.screenout_code)
    if annotator is None:
        check_platform_id(study, arrival)  # checked on the entry page too; the study may have changed since
        try:
            return _consented(study, None, arrival, version, now, rng)
        except IntegrityError:  # registered by a post of the same arrival at this very moment: found this time
            return _consented(study, None, arrival, version, now, rng)
    return _consented(study, annotator, arrival, version, now, rng)


def _consented(
    study: Study, annotator: Annotator | None, arrival: Arrival, version: str, now: datetime, rng: random.Random | None
) -> Annotator:
    # One transaction: registering, the consent and the items leased stand or fall together, so a failed
    # write (a full disk, a lost connection) leaves no participant registered without items. A newcomer's
    # row is inserted without a savepoint: a concurrent registration fails the whole transaction, and
    # give_consent runs it again.
    with transaction.atomic():
        new = False
        if annotator is None:
            annotator, new = allocation.registered(
                study,
                platform=arrival.platform,
                external_id=arrival.external_id,
                external_ids=arrival.external_ids,
                arrival_key=arrival.key,
                now=now,
                savepoint=False,
                consent=(version, now),
            )
            if arrival.key and annotator.arrival_key != arrival.key and not may_resume(annotator, arrival):
                raise IdentityInUse(f"platform id of annotator {annotator.pseudonym} is held by another session")
        defaults = {"text_sha256": consent_digest(study), "accepted_at": now}
        if new:  # created in this transaction with the consent's version and time: it has no consent row yet
            Consent.objects.create(annotator=annotator, version=version, **defaults)
        else:
            Consent.objects.get_or_create(annotator=annotator, version=version, defaults=defaults)
            annotator.consent_version, annotator.consented_at = version, now
            annotator.save(update_fields=["consent_version", "consented_at"])
        if annotator.status == Annotator.Status.NEW:
            try:
                allocation.admit(annotator, now=now, rng=rng)
            except StudyUnavailable:
                pass  # full: stored as refused (next_step says so); closed meanwhile: still new, asked again later
        else:
            seen(annotator, now=now)
    return annotator


def read_instructions(annotator: Annotator, *, now: datetime | None = None) -> None:
    now = now_or(now)
    if annotator.instructions_read_at is None:
        annotator.instructions_read_at = now
        annotator.save(update_fields=["instructions_read_at"])
    seen(annotator, now=now)


def practice_for(annotator: Annotator):
    """The practice item of this annotator (sides fixed per annotator)."""
    return practice_item(annotator.token)


def answer_practice(annotator: Annotator, value: int, *, now: datetime | None = None) -> PracticeFeedback:
    """Keep the first practice answer and return the feedback on it."""
    now = now_or(now)
    if annotator.practice_answered_at is None:
        annotator.practice_value, annotator.practice_answered_at = value, now
        annotator.save(update_fields=["practice_value", "practice_answered_at"])
    seen(annotator, now=now)
    return practice_feedback(annotator.practice_value, practice_for(annotator).good_on_left)


def practice_result(annotator: Annotator) -> PracticeFeedback | None:
    if annotator.practice_value is None:
        return None
    return practice_feedback(annotator.practice_value, practice_for(annotator).good_on_left)


def check_comprehension(annotator: Annotator, answers: dict[str, str], *, now: datetime | None = None) -> ComprehensionResult:
    """Score one attempt; the second failed attempt screens the annotator out and frees their items."""
    now = now_or(now)
    with transaction.atomic():
        me = Annotator.objects.select_for_update().get(pk=annotator.pk)
        if me.comprehension_passed_at is not None:
            result = ComprehensionResult(True, [], COMPREHENSION_ATTEMPTS - me.comprehension_attempts)
        elif me.status == Annotator.Status.SCREENED or me.comprehension_attempts >= COMPREHENSION_ATTEMPTS:
            result = ComprehensionResult(False, [], 0)
        else:
            me.comprehension_attempts += 1
            wrong = wrong_answers(answers)
            if not wrong:
                me.comprehension_passed_at = now
            elif me.comprehension_attempts >= COMPREHENSION_ATTEMPTS:
                _screen_out(me, "failed the comprehension check twice", now)
            me.save(update_fields=["comprehension_attempts", "comprehension_passed_at", "status", "exclusion_reason"])
            result = ComprehensionResult(not wrong, wrong, COMPREHENSION_ATTEMPTS - me.comprehension_attempts)
    for name in ("comprehension_attempts", "comprehension_passed_at", "status", "exclusion_reason"):
        setattr(annotator, name, getattr(me, name))
    if me.status == Annotator.Status.ACTIVE:
        seen(annotator, now=now)
    return result


def _screen_out(annotator: Annotator, reason: str, now: datetime) -> None:
    annotator.status, annotator.exclusion_reason = Annotator.Status.SCREENED, reason
    # Their unanswered items go back to the pool at once instead of waiting for the lease to expire.
    annotator.assignments.open().update(released_at=now)


def after_answer(annotator: Annotator, sequence: Sequence, answered: int, *, now: datetime | None = None) -> tuple[str, Assignment | None]:
    """The annotator's step after their answer to assignment ``answered`` was stored and, on ``items``, the next open item.

    ``sequence`` is the annotator's :class:`Sequence` read before the answer was stored. The last
    answer marks the annotator finished (the completion page opens then), whatever the study's
    status; otherwise the step may be another page, e.g. the consent again after its text changed,
    or the closed page.
    """
    now = now_or(now)
    following = next(iter(sequence.open(besides=answered)), None)
    if following is None and annotator.status == Annotator.Status.ACTIVE:
        done = Annotator.objects.filter(pk=annotator.pk, status=Annotator.Status.ACTIVE).update(
            status=Annotator.Status.FINISHED, finished_at=now, last_seen_at=now
        )
        if done:
            annotator.status, annotator.finished_at, annotator.last_seen_at = Annotator.Status.FINISHED, now, now
        else:  # changed meanwhile (e.g. excluded): read what it is now
            annotator.refresh_from_db(fields=["status", "finished_at", "last_seen_at"])
    step = next_step(annotator)
    return step, following if step == ITEMS else None
