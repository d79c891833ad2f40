"""The quality rules, one declaration each: the signal it reads from an annotator's answers, the study
setting that holds its limit, when it is breached and in which words, what participants are told
(the instructions' sentence and the exclusion page's, with the study's numbers, translated), the
reason and message of a rejection on the platform, its dashboard and admin column and its row of
the docs table (docs/studyapp.md#quality-control).

:mod:`.control` computes every registered rule's signal and breach; :mod:`.stated` gives the
participant pages the sentences of the rules that exclude in a study; the review
(``services.review.suggest``) rejects with the rule's reason and message; the staff dashboard and
the annotator admin show one column per rule; the decision log's choices (``QualityDecision.Rule``)
and the docs table are checked against :data:`RULES` (tests/studyapp/test_quality_rules.py). A new
rule is one :class:`QualityRule` registered here, its limit declared as a study setting
(``models.study_settings``), its key added to ``QualityDecision.Rule`` with a migration, its
sentences translated (docs/contributing.md#a-quality-rule).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from django.utils.translation import gettext, ngettext

from studyapp.models import Presentation, Study

MIN_DECISIONS = 10  # side bias and median time are judged only from this many answers on
# The kinds of reason a rejection on a platform gives (Platform.rejection_reasons names each one there).
REJECTION_KINDS = ("speed", "checks", "effort", "other")


@dataclass(frozen=True)
class Answer:
    """One answered item as quality control sees it."""

    position: int
    value: int  # as shown: negative = left preferred
    canonical: int
    server_seconds: float | None
    visible_ms: int | None
    kind: str
    expected_sign: int | None

    def seconds(self, source: str) -> float | None:
        """The decision time the fast rule reads (``source``: ``Study.FastTime``)."""
        if source == Study.FastTime.VISIBLE and self.visible_ms is not None:
            return self.visible_ms / 1000
        return self.server_seconds

    @property
    def check_failed(self) -> bool | None:
        """None for regular items; for check items whether the answer contradicts the expected one."""
        if self.kind == Presentation.Kind.PAIR:
            return None
        if self.kind == Presentation.Kind.IDENTICAL:
            return self.canonical != 0
        return self.canonical * (self.expected_sign or 0) < 0  # degraded: the wrong side (0 is not)


class Answers:
    """One annotator's answers in sequence order, with what several rules read computed once."""

    def __init__(self, study: Study, answers: list[Answer]) -> None:
        self.study = study
        self.items = sorted(answers, key=lambda a: a.position)

    @cached_property
    def times(self) -> list[float]:
        """Decision times on the study's clock (``fast_time``), where there is one."""
        return [t for a in self.items if (t := a.seconds(self.study.fast_time)) is not None]

    @cached_property
    def sided(self) -> list[int]:
        """The non-zero answers (as shown)."""
        return [a.value for a in self.items if a.value != 0]


Breach = tuple[str, dict]  # (detail, counts) of a broken rule


@dataclass(frozen=True)
class QualityRule:
    """A quality rule. ``signal`` turns an annotator's :class:`Answers` into named numbers;
    ``breach(study, signal)`` says ``(detail, counts)`` when the rule is broken under the study's
    settings (None otherwise); ``limit`` is the study setting holding its limit (``None`` switches it
    off unless ``always_on``; ``applies`` when more decides whether it excludes in a study).

    What participants read, in the active language with the study's numbers (gettext; the fair-rules
    promise, docs/annotator.md#fair-rules-told-up-front): ``stated(study)``, its line in the
    instructions' list "the study ends early for anyone who ..."; ``excluded(study)``, the sentence
    that tells an excluded participant why. ``reject_as``, one of :data:`REJECTION_KINDS`, picks the
    platform's rejection category; ``rejected(counts)`` is the rejection message from the breach's
    counts (a "speed" rule is rejected with the speed message instead).
    ``column(study)`` and ``cell(signal)`` make the dashboard's and the admin's column; ``counted``
    and ``excludes_when`` its row of the docs table."""

    key: str
    label: str
    limit: str
    signal: Callable[[Answers], dict[str, Any]]
    breach: Callable[[Study, dict[str, Any]], Breach | None]
    column: Callable[[Study], str]
    cell: Callable[[dict[str, Any]], str]
    counted: str
    excludes_when: str
    stated: Callable[[Study], str]
    excluded: Callable[[Study], str]
    reject_as: str
    rejected: Callable[[dict[str, Any]], str] | None = None
    always_on: bool = False
    applies: Callable[[Study], bool] | None = None

    def excludes_in(self, study: Study) -> bool:
        """Does the rule exclude anyone in ``study`` (then participants are told it)?"""
        if self.applies is not None:
            return self.applies(study)
        return self.always_on or getattr(study, self.limit) is not None

    def docs_row(self) -> str:
        return f"| {self.label} | {self.counted} | {self.excludes_when} |"


RULES: dict[str, QualityRule] = {}


def register(rule: QualityRule) -> QualityRule:
    """Add ``rule`` (its key is what the decision log stores, so it must be new); ValueError on a half declaration."""
    if rule.key in RULES:
        raise ValueError(f"quality rule {rule.key!r} registered twice")
    if rule.reject_as not in REJECTION_KINDS:
        raise ValueError(f"quality rule {rule.key!r}: reject_as must be one of {', '.join(REJECTION_KINDS)}, not {rule.reject_as!r}")
    if rule.rejected is None and rule.reject_as != "speed":
        raise ValueError(f"quality rule {rule.key!r}: a rejection for {rule.reject_as!r} needs its message (rejected)")
    return RULES.setdefault(rule.key, rule)


def unregister(key: str) -> None:
    """Remove a rule (tests registering their own)."""
    del RULES[key]


def _num(x: float) -> str:
    return f"{x:g}"


def people_number(x: float) -> int | float:
    """10.0 -> 10, 2.5 -> 2.5: a setting as people write it."""
    return int(x) if float(x).is_integer() else round(x, 2)


def percent(value: object) -> str:
    return f"{value:.0%}" if isinstance(value, (int, float)) else "?"


def _values(counts: dict[str, Any], *keys: str) -> dict[str, Any]:
    """The numbers a rejection message names, "?" for one the breach did not record."""
    return {key: counts.get(key, "?") for key in keys}


def longest_run(values: list[int]) -> tuple[int, int | None]:
    best, best_value, run = 0, None, 0
    for i, v in enumerate(values):
        run = run + 1 if i and values[i - 1] == v else 1
        if run > best:
            best, best_value = run, v
    return best, best_value


# -- fast decisions --------------------------------------------------------------------------------


def _fast(a: Answers) -> dict[str, Any]:
    threshold = a.study.fast_threshold_seconds
    return {"fast": sum(1 for t in a.times if t < threshold), "decisions": len(a.items), "threshold": threshold}


def _fast_breach(study: Study, s: dict[str, Any]) -> Breach | None:
    if s["fast"] <= study.fast_limit:
        return None
    detail = f"fast: {s['fast']} of {s['decisions']} decisions under {_num(s['threshold'])} s (limit {study.fast_limit})"
    counts = {"fast": s["fast"], "decisions": s["decisions"], "threshold_seconds": s["threshold"], "limit": study.fast_limit,
              "time": study.fast_time}  # fmt: skip
    return detail, counts


def _fast_numbers(study: Study) -> dict[str, Any]:
    return {"counter": study.fast_limit, "seconds": people_number(study.fast_threshold_seconds)}


def _fast_stated(study: Study) -> str:
    return ngettext(
        "gives more than %(counter)s answer in less than %(seconds)s seconds each;",
        "gives more than %(counter)s answers in less than %(seconds)s seconds each;",
        study.fast_limit,
    ) % _fast_numbers(study)


def _fast_excluded(study: Study) -> str:
    return ngettext(
        "The study ended for you because more than %(counter)s of your answers took less than %(seconds)s seconds each. The "
        "instructions said that this ends the study early: answers that fast cannot have compared the two lists.",
        "The study ended for you because more than %(counter)s of your answers took less than %(seconds)s seconds each. The "
        "instructions said that this ends the study early: answers that fast cannot have compared the two lists.",
        study.fast_limit,
    ) % _fast_numbers(study)


register(QualityRule(
    "fast", "fast decisions", "fast_limit", _fast, _fast_breach,
    column=lambda study: f"under {_num(study.fast_threshold_seconds)} s", cell=lambda s: str(s["fast"]),
    counted="answers under `fast_threshold_seconds` (`fast_time`: server or visible time)",
    excludes_when="more than `fast_limit` (always on; defaults: more than 30 under 10 s)", always_on=True,
    stated=_fast_stated, excluded=_fast_excluded, reject_as="speed",
))  # fmt: skip


# -- check items -----------------------------------------------------------------------------------


def _checks(a: Answers) -> dict[str, Any]:
    checks = [failed for item in a.items if (failed := item.check_failed) is not None]
    return {"failed": sum(checks), "checks": len(checks)}


def _over_limit(count: str, limit_setting: str, words: Callable[[dict[str, Any], int], str]) -> Callable[..., Breach | None]:
    """A breach that is ``signal[count]`` above the study's ``limit_setting`` (off when that is null)."""

    def breach(study: Study, s: dict[str, Any]) -> Breach | None:
        limit = getattr(study, limit_setting)
        return None if limit is None or s[count] <= limit else (words(s, limit), {**s, "limit": limit})

    return breach


def _checks_stated(study: Study) -> str:
    limit = study.check_fail_limit
    if limit == 0:
        return gettext(
            "answers one of the check items wrongly: some items have a clear answer (for example, the same list on both sides, "
            "which is “About the same”);"
        )
    return ngettext(
        "answers more than %(counter)s check item wrongly: some items have a clear answer (for example, the same list on both "
        "sides, which is “About the same”);",
        "answers more than %(counter)s check items wrongly: some items have a clear answer (for example, the same list on both "
        "sides, which is “About the same”);",
        limit,
    ) % {"counter": limit}


def _checks_excluded(study: Study) -> str:
    limit = study.check_fail_limit
    return ngettext(
        "The study ended for you because more than %(counter)s of the check items, which have a clear answer, were answered wrongly.",
        "The study ended for you because more than %(counter)s of the check items, which have a clear answer, were answered wrongly.",
        limit or 0,
    ) % {"counter": limit}


def _checks_rejected(counts: dict[str, Any]) -> str:
    return gettext(
        "Your submission was rejected because you failed %(failed)s of the %(checks)s attention-check items (pairs of identical "
        "result pages, or of a page and a deliberately worse copy); the study's rules, shown before the first item, allowed at "
        "most %(limit)s failed checks."
    ) % _values(counts, "failed", "checks", "limit")


register(QualityRule(
    "checks", "failed check items", "check_fail_limit", _checks,
    _over_limit("failed", "check_fail_limit", lambda s, limit: f"checks: {s['failed']} of {s['checks']} check items failed (limit {limit})"),
    column=lambda study: "checks failed", cell=lambda s: f"{s['failed']} / {s['checks']}" if s["checks"] else "–",
    counted="`identical` checks answered non-zero, `degraded` checks answered on the wrong side (0 is not wrong)",
    excludes_when="more than `check_fail_limit`",
    stated=_checks_stated, excluded=_checks_excluded, reject_as="checks", rejected=_checks_rejected,
    applies=lambda study: study.check_fail_limit is not None and study.check_items_per_annotator > 0,
))  # fmt: skip


# -- straight-lining -------------------------------------------------------------------------------


def _straightline(a: Answers) -> dict[str, Any]:
    run, value = longest_run([item.value for item in a.items])
    return {"run": run, "value": value}


def _straightline_stated(study: Study) -> str:
    limit = study.straightline_limit or 0
    return ngettext(
        "gives the same answer more than %(counter)s time in a row;", "gives the same answer more than %(counter)s times in a row;", limit
    ) % {"counter": limit}


def _straightline_excluded(study: Study) -> str:
    limit = study.straightline_limit or 0
    return ngettext(
        "The study ended for you because the same answer was given more than %(counter)s time in a row.",
        "The study ended for you because the same answer was given more than %(counter)s times in a row.",
        limit,
    ) % {"counter": limit}


def _straightline_rejected(counts: dict[str, Any]) -> str:
    return gettext(
        "Your submission was rejected for low effort: you gave the same answer %(run)s times in a row, while the study's rules, "
        "shown before the first item, allowed at most %(limit)s identical answers in a row."
    ) % _values(counts, "run", "limit")


register(QualityRule(
    "straightline", "straight-lining", "straightline_limit", _straightline,
    _over_limit("run", "straightline_limit", lambda s, limit: f"straight-lining: the answer {s['value']:+d} {s['run']} times in a row (limit {limit})"),
    column=lambda study: "longest run", cell=lambda s: f"{s['run']} × {s['value']:+d}" if s["run"] else "–",
    counted="the longest run of the same answer in the annotator's sequence", excludes_when="longer than `straightline_limit`",
    stated=_straightline_stated, excluded=_straightline_excluded, reject_as="effort", rejected=_straightline_rejected,
))  # fmt: skip


# -- left/right bias -------------------------------------------------------------------------------


def _side_bias(a: Answers) -> dict[str, Any]:
    sided = a.sided
    return {"left_share": sum(1 for v in sided if v < 0) / len(sided) if sided else None, "answers": len(sided)}


def _side_bias_breach(study: Study, s: dict[str, Any]) -> Breach | None:
    limit, left = study.side_bias_limit, s["left_share"]
    if limit is None or s["answers"] < MIN_DECISIONS or left is None:
        return None
    share = max(left, 1 - left)
    if share <= limit:
        return None
    side = "left" if left >= 0.5 else "right"
    detail = f"side bias: {share:.0%} of {s['answers']} non-zero answers on the {side} (limit {limit:.0%})"
    return detail, {"share": share, "side": side, "answers": s["answers"], "limit": limit}


def _side_percent(study: Study) -> dict[str, Any]:
    return {"percent": people_number((study.side_bias_limit or 0) * 100)}


def _side_bias_rejected(counts: dict[str, Any]) -> str:
    values = {"share": percent(counts.get("share")), "answers": counts.get("answers", "?"), "limit": percent(counts.get("limit"))}
    return (
        gettext(
            "Your submission was rejected for low effort: %(share)s of your %(answers)s answers that preferred one side chose the same "
            "side of the page, while the study's rules, shown before the first item, allowed at most %(limit)s."
        )
        % values
    )


register(QualityRule(
    "side_bias", "left/right bias", "side_bias_limit", _side_bias, _side_bias_breach,
    column=lambda study: "left chosen", cell=lambda s: "–" if s["left_share"] is None else f"{round(s['left_share'] * 100)}%",
    counted="the share of non-zero answers preferring the left page",
    excludes_when=f"either side's share above `side_bias_limit` (from {MIN_DECISIONS} non-zero answers)",
    stated=lambda study: gettext(
        "prefers the same side (left or right) in more than %(percent)s%% of the answers that prefer a side;"
    ) % _side_percent(study),
    excluded=lambda study: gettext(
        "The study ended for you because more than %(percent)s%% of your answers preferred the same side."
    ) % _side_percent(study),
    reject_as="effort", rejected=_side_bias_rejected,
))  # fmt: skip


# -- median decision time --------------------------------------------------------------------------


def _median_time(a: Answers) -> dict[str, Any]:
    return {"median": statistics.median(a.times) if a.times else None, "decisions": len(a.times)}


def _median_breach(study: Study, s: dict[str, Any]) -> Breach | None:
    minimum, median = study.median_seconds_min, s["median"]
    if minimum is None or s["decisions"] < MIN_DECISIONS or median is None or median >= minimum:
        return None
    detail = f"median time: {median:.1f} s over {s['decisions']} decisions (minimum {_num(minimum)} s)"
    return detail, {"median_seconds": median, "decisions": s["decisions"], "minimum": minimum, "time": study.fast_time}


def _median_numbers(study: Study) -> dict[str, Any]:
    return {"seconds": people_number(study.median_seconds_min or 0)}


register(QualityRule(
    "median_time", "median decision time", "median_seconds_min", _median_time, _median_breach,
    column=lambda study: "median (s)", cell=lambda s: "–" if s["median"] is None else f"{s['median']:.1f}",
    counted="the median of the fast rule's times", excludes_when=f"under `median_seconds_min` (from {MIN_DECISIONS} decisions)",
    stated=lambda study: gettext(
        "takes less than %(seconds)s seconds for a typical answer (the median of all answers);"
    ) % _median_numbers(study),
    excluded=lambda study: gettext(
        "The study ended for you because your answers took less than %(seconds)s seconds each in the median."
    ) % _median_numbers(study),
    reject_as="speed",
))  # fmt: skip
