"""The quality rules as participants are told them: each rule's own sentences (:mod:`.rules`) with the
study's numbers, for the instructions (``_rules.html``) and for the page that tells an excluded
participant why (``_excluded_reason.html``).

Only rules that exclude in the study are stated (:meth:`.rules.QualityRule.excludes_in`; the check
rule only when the study has check items). The sentences are made when the page reads them, in the
language the page is rendered in.
"""

from __future__ import annotations

from dataclasses import dataclass

from studyapp.models import Annotator, Study
from studyapp.services.quality.control import last_exclusion
from studyapp.services.quality.rules import RULES, QualityRule


@dataclass(frozen=True)
class StatedRule:
    """One rule of ``study`` as participants read it."""

    rule: QualityRule
    study: Study

    @property
    def key(self) -> str:
        return self.rule.key

    @property
    def text(self) -> str:
        """Its line in the instructions ("the study ends early for anyone who ...")."""
        return self.rule.stated(self.study)

    @property
    def reason(self) -> str:
        """Why the study ended for a participant it excluded."""
        return self.rule.excluded(self.study)


def stated_rules(study: Study) -> list[StatedRule]:
    """The rules that exclude in ``study``, in registration order."""
    return [StatedRule(rule, study) for rule in RULES.values() if rule.excludes_in(study)]


def exclusion_rule(annotator: Annotator) -> str:
    """The rule (``QualityDecision.Rule`` value) of ``annotator``'s latest exclusion; '' when there is none."""
    decision = last_exclusion(annotator)
    return decision.rule if decision is not None else ""


def exclusion_reason(study: Study, rule: str) -> StatedRule | None:
    """The exclusion page's reason for ``rule`` (None for a staff decision: the page says the team decided)."""
    declared = RULES.get(rule)
    return StatedRule(declared, study) if declared is not None else None
