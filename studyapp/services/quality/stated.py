"""The quality rules as participants are told them: the study's own numbers, for the instructions
(``_rules.html``) and for the page that tells an excluded participant why (``_excluded_reason.html``).

Only rules that exclude in the study are stated; the check rule only when the study has check items.
"""

from __future__ import annotations

from dataclasses import dataclass

from studyapp.models import Annotator, Study
from studyapp.services.quality.control import last_exclusion


def _number(x: float) -> int | float:
    """10.0 -> 10, 2.5 -> 2.5: a setting as people write it."""
    return int(x) if float(x).is_integer() else round(x, 2)


@dataclass(frozen=True)
class StatedRules:
    """The limits of ``study`` that exclude a participant (None: the rule does not exclude there)."""

    fast_limit: int
    fast_seconds: int | float
    check_limit: int | None
    straightline_limit: int | None
    side_bias_percent: int | float | None
    median_seconds: int | float | None


def stated_rules(study: Study) -> StatedRules:
    has_checks = study.check_items_per_annotator > 0
    return StatedRules(
        fast_limit=study.fast_limit,
        fast_seconds=_number(study.fast_threshold_seconds),
        check_limit=study.check_fail_limit if has_checks else None,
        straightline_limit=study.straightline_limit,
        side_bias_percent=None if study.side_bias_limit is None else _number(study.side_bias_limit * 100),
        median_seconds=None if study.median_seconds_min is None else _number(study.median_seconds_min),
    )


def exclusion_rule(annotator: Annotator) -> str:
    """The rule (``QualityDecision.Rule`` value) of ``annotator``'s latest exclusion; '' when there is none."""
    decision = last_exclusion(annotator)
    return decision.rule if decision is not None else ""
