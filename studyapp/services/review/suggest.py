"""What the study's rules suggest for one submission on the platform: approve (with the study's bonus),
reject (a reason of the platform's and a message built from the broken rule), or no action.

Built on the payments export's facts (services.data.payments): who finished, who was excluded by which
rule, and whether a whole submission was "exceptionally fast" (more than 3 SD under the mean of the
finishers). Prolific allows rejecting for speed only then, and for failed attention checks only when
enough of them failed (two on a submission of 5 minutes or more: Platform.failed_checks_to_reject); so a
participant excluded for fast decisions who was not exceptionally fast overall, or for fewer failed
checks, is approved (their answers still do not count), with the reason shown to staff. Excluded by a staff decision: no
suggestion, staff decide. Not finished, refused (study full) or screened out: nothing to review.

The message goes to the participant, in the study's language (gettext: locale/*/LC_MESSAGES), and is
at least as long as the platform requires (Prolific: 100 characters).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal

from django.utils import translation
from django.utils.translation import gettext, ngettext

from studyapp.models import Annotator, QualityDecision, ReviewDecision, Study
from studyapp.services.data.payments import SpeedNorm
from studyapp.services.platforms.base import Platform
from studyapp.services.quality.control import AnnotatorSignals, Breach, submission_seconds
from studyapp.services.quality.rules import RULES

APPROVE, REJECT, SKIP = ReviewDecision.Action.APPROVE, ReviewDecision.Action.REJECT, ReviewDecision.Action.SKIP
ZERO = Decimal("0.00")


@dataclass(frozen=True)
class Decision:
    """A decision on one submission: ``note`` says why, for staff (never sent)."""

    action: str
    category: str = ""
    message: str = ""
    bonus: Decimal = ZERO
    note: str = ""


def suggest(study: Study, annotator: Annotator, platform: Platform, signals: AnnotatorSignals | None,
            exclusion: QualityDecision | None, norm: SpeedNorm) -> Decision:  # fmt: skip
    """The rules' decision for ``annotator``'s submission."""
    status = annotator.status
    if status == Annotator.Status.FINISHED:
        bonus = study.bonus_amount or ZERO
        return Decision(APPROVE, bonus=bonus, note="finished, valid" + (f"; bonus {bonus}" if bonus else ""))
    if status != Annotator.Status.EXCLUDED:
        return Decision(SKIP, note=_not_reviewed(annotator))
    if exclusion is None or not exclusion.automatic:
        who = f" by staff ({exclusion.reason})" if exclusion is not None else ""
        return Decision(SKIP, note=f"excluded{who}: choose the decision")
    seconds = submission_seconds(annotator)
    recorded = exclusion.counts or {}  # rule -> the numbers the exclusion was decided on, for every rule broken then
    rules = [exclusion.rule, *(r for r in recorded if r != exclusion.rule)]
    refusals = []
    for rule in rules:
        breach = breach_of(signals, rule)
        counts = recorded.get(rule) or (breach.counts if breach else {})
        detail = breach.detail if breach else exclusion.detail
        decision, why_not = _rejection(study, platform, rule, counts, detail, seconds, norm)
        if decision is not None:
            return decision
        refusals.append(why_not)
    return Decision(APPROVE, note=f"excluded ({exclusion.detail}); {'; '.join(refusals)}: approve; answers not used")


def _rejection(study: Study, platform: Platform, rule: str, counts: dict, detail: str, seconds: float | None,
               norm: SpeedNorm) -> tuple[Decision | None, str]:  # fmt: skip
    """The rejection for breaking ``rule`` when the platform accepts it as a reason, else (None, why not)."""
    kind = RULES[rule].reject_as if rule in RULES else "other"  # the platform names it (Platform.rejection_reasons)
    if kind == "speed":
        if not norm.exceptionally_fast(seconds):
            why = "not exceptionally fast overall" if seconds is not None else "did not finish"
            return None, f"{why}: speed alone is no reason to reject"
        message = speed_message(study, platform, seconds or 0.0, norm)
    else:
        if kind == "checks":
            needed = platform.failed_checks_to_reject(seconds)
            failed = counts.get("failed")
            if not isinstance(failed, int) or failed < needed:
                counted = (
                    f"{failed} failed {ngettext('check', 'checks', failed)}" if isinstance(failed, int) else "failed checks not counted"
                )
                return None, f"{counted}, and {platform.name} allows a rejection only for at least {needed} on a submission of this length"
        message = rule_message(study, platform, rule, counts, detail)
    category = platform.rejection_reasons.get(kind, platform.rejection_reasons.get("other", ""))
    return Decision(REJECT, category, message, note=f"excluded: {detail}"), ""


def _not_reviewed(annotator: Annotator) -> str:
    return {
        Annotator.Status.NEW: "not started: nothing to review",
        Annotator.Status.ACTIVE: "not finished: nothing to review (the platform times the submission out or the participant returns it)",
        Annotator.Status.REFUSED: "turned away (study full): nothing to review",
        Annotator.Status.SCREENED: "screened out by the comprehension check: nothing to review",
    }.get(annotator.status, f"{annotator.status}: nothing to review")


# -- participant-facing messages ---------------------------------------------------------------------


def speed_message(study: Study, platform: Platform, seconds: float, norm: SpeedNorm) -> str:
    """Why an exceptionally fast submission is rejected, with its time and the study's average."""
    values = {"seconds": f"{seconds:.0f}", "mean": f"{norm.mean or 0:.0f}"}
    return _in_language(study, platform, lambda: gettext(
        "Your submission was rejected because it was completed exceptionally fast: %(seconds)s seconds from consent to the "
        "last answer, while participants of this study took %(mean)s seconds on average (more than three standard "
        "deviations faster than the average)."
    ) % values)  # fmt: skip


def rule_message(study: Study, platform: Platform, rule: str, counts: dict, detail: str) -> str:
    """Why a submission excluded by ``rule`` is rejected: the rule's own message with the study's numbers (``counts`` of
    the breach; :attr:`~studyapp.services.quality.rules.QualityRule.rejected`), else the rule's ``detail``."""
    declared = RULES.get(rule)

    def text() -> str:
        if declared is not None and declared.rejected is not None:
            return declared.rejected(counts)
        return gettext(
            "Your submission was rejected because it broke one of the study's rules that were shown before the first item: %(detail)s."
        ) % {"detail": detail}

    return _in_language(study, platform, text)


def _in_language(study: Study, platform: Platform, text: Callable[[], str]) -> str:
    """``text()`` in the study's language, made as long as the platform's minimum (Prolific: 100 characters): first
    the invitation to write to us, then, for a short translation, the English text after it; cut at the maximum."""
    with translation.override(study.language):
        message = text()
        if len(message) < platform.message_min:
            message += " " + gettext("If you think this is a mistake, please send us a message through %(platform)s.") % {
                "platform": platform.name
            }
    if len(message) < platform.message_min and study.language != "en":
        with translation.override("en"):
            message += f" ({text()})"
    return message[: platform.message_max]


def breach_of(signals: AnnotatorSignals | None, rule: str) -> Breach | None:
    """The breach of ``rule`` among ``signals``' (None when the rule is not broken now)."""
    return next((b for b in (signals.breaches if signals else ()) if b.rule == rule), None)
