"""The JSON study configuration: keys, defaults and checks that need no database.

Every problem is collected and reported together (like Django's ``validate_password``); checks
against the collection (run names, topics, capacity) live in ``services.design.study_design``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from studyapp.exceptions import InvalidStudyConfig
from studyapp.models import Study
from studyapp.services import platforms

KEYS = (
    "runs", "topics", "topic_rule", "subtopics_per_topic", "depth", "levels", "annotators_per_presentation",
    "items_per_annotator", "fast_threshold_seconds", "fast_limit", "lease_minutes", "check_share", "consent_text",
    "consent_version", "instructions", "completion_code", "screenout_code", "redirect_url", "same_pair_both_levels",
    "require_platform_id",
    "fast_time", "check_fail_limit", "straightline_limit", "side_bias_limit", "median_seconds_min",
)  # fmt: skip
DEFAULT_CONSENT = (
    "This is a research study on how people compare search result pages. You will see two result pages for a "
    "query and say which one you prefer. We record your answers, the time you take and the identifiers your "
    "recruitment platform passes to us, and nothing else. Taking part is voluntary; you may stop at any time."
)
DEFAULT_INSTRUCTIONS = (
    "Each page shows a search query and two result lists, left and right. Imagine you typed the query. Look at "
    "both lists and choose how much better one of them is for you, from 'left much better' to 'right much better'. "
    "Choose 'about the same' when you see no real difference."
)
_CODE = re.compile(r"^[A-Za-z0-9_-]{1,100}$")


@dataclass(frozen=True)
class TextRule:
    """What a text setting accepts; ``required`` texts may not be empty (an empty code or URL means none)."""

    required: bool = False
    max_length: int | None = None
    pattern: re.Pattern[str] | None = None
    what: str = ""


_CODE_RULE = TextRule(pattern=_CODE, what="must be 1-100 letters, digits, '-' or '_'")
TEXT_RULES = {
    "consent_text": TextRule(required=True),
    "consent_version": TextRule(required=True, max_length=50),
    "instructions": TextRule(required=True),
    "completion_code": _CODE_RULE,
    "screenout_code": _CODE_RULE,
    "redirect_url": TextRule(max_length=500, pattern=re.compile(r"^https?://\S+$"), what="must be an http(s):// URL"),
}


def text_problem(key: str, value: Any) -> str | None:
    """Why ``value`` is no valid text setting ``key`` (see :data:`TEXT_RULES`), or None."""
    rule = TEXT_RULES[key]
    if not isinstance(value, str):
        return f"{key} must be a string, got {json.dumps(value)}"
    if rule.required and not value.strip():
        return f"{key} must not be empty or blank"
    if rule.max_length is not None and len(value) > rule.max_length:
        return f"{key} must be at most {rule.max_length} characters"
    if rule.pattern is not None and value and not rule.pattern.match(value):
        return f"{key} {rule.what}, got {value!r}"
    return None


def redirect_problem(redirect_url: str, completion_code: str) -> str | None:
    """Why ``redirect_url`` does not fit ``completion_code`` (None when it does, or when there is no URL).

    The URL is used twice: finished annotators go to it with the completion code, refused ones (study
    full) with the screen-out code. Without ``{code}`` the refused would land on the completion URL.
    """
    if not redirect_url:
        return None
    if "{code}" not in redirect_url:
        return (
            "redirect_url must contain {code}, which becomes the completion code (or, for participants refused "
            "because the study is full, the screen-out code), e.g. https://app.prolific.com/submissions/complete?cc={code}"
        )
    if not completion_code:
        return "redirect_url contains {code} but no completion_code is given"
    return None


def platform_study(redirect_url: str) -> bool:
    """Does ``redirect_url`` send participants back to a platform (one of its ``recruiting_hosts``: Prolific's, MTurk's)?

    That is how a configuration says it recruits on a platform; such a study requires a platform id
    by default (``require_platform_id``).
    """
    host = (urlsplit(redirect_url.strip()).hostname or "").lower()
    return any(host == h or host.endswith("." + h) for h in platforms.recruiting_hosts())


def setting_problems(values: dict[str, Any]) -> list[tuple[str, str]]:
    """``(key, reason)`` for the text settings in ``values`` that break a rule; keys absent are not checked.

    The one validator of :func:`parse_config` and of the admin's study form.
    """
    problems = [(key, problem) for key in TEXT_RULES if key in values and (problem := text_problem(key, values[key]))]
    if not {key for key, _ in problems} & {"redirect_url", "completion_code"}:
        redirect = redirect_problem(values.get("redirect_url", "").strip(), values.get("completion_code", "").strip())
        if redirect:
            problems.append(("redirect_url", redirect))
    return problems


def _field_default(name: str) -> Any:
    return Study._meta.get_field(name).default


@dataclass
class StudyConfig:
    """A syntactically valid configuration; defaults come from the ``Study`` model fields."""

    runs: list[str]
    topics: list[str] | None = None
    topic_rule: dict[str, int] | None = None
    subtopics_per_topic: int = field(default_factory=lambda: _field_default("subtopics_per_topic"))
    depth: int = field(default_factory=lambda: _field_default("depth"))
    levels: list[str] = field(default_factory=lambda: ["topic", "subtopic"])
    annotators_per_presentation: int = field(default_factory=lambda: _field_default("annotators_per_presentation"))
    items_per_annotator: int = field(default_factory=lambda: _field_default("items_per_annotator"))
    fast_threshold_seconds: float = field(default_factory=lambda: _field_default("fast_threshold_seconds"))
    fast_limit: int = field(default_factory=lambda: _field_default("fast_limit"))
    lease_minutes: int = field(default_factory=lambda: _field_default("lease_minutes"))
    check_share: float = field(default_factory=lambda: _field_default("check_share"))
    consent_text: str = DEFAULT_CONSENT
    consent_version: str = "1"
    instructions: str = DEFAULT_INSTRUCTIONS
    completion_code: str = ""
    screenout_code: str = ""
    redirect_url: str = ""
    same_pair_both_levels: bool = False
    require_platform_id: bool = False  # parse_config: default true when redirect_url goes to Prolific or MTurk
    fast_time: str = field(default_factory=lambda: _field_default("fast_time"))
    check_fail_limit: int | None = None
    straightline_limit: int | None = None
    side_bias_limit: float | None = None
    median_seconds_min: float | None = None

    @property
    def levels_field(self) -> str:
        """The ``Study.levels`` value for these levels."""
        return Study.Levels.BOTH if len(self.levels) == 2 else self.levels[0]


class _Checker:
    def __init__(self, raw: dict[str, Any]) -> None:
        self.raw = raw
        self.errors: list[str] = []
        self.values: dict[str, Any] = {}

    def optional(self, key: str) -> bool:
        """Is ``key`` given as null (an optional limit switched off)?"""
        if key in self.raw and self.raw[key] is None:
            self.values[key] = None
            return True
        return False

    def integer(self, key: str, low: int, high: int) -> None:
        if key not in self.raw:
            return
        value = self.raw[key]
        if isinstance(value, bool) or not isinstance(value, int):
            self.errors.append(f"{key} must be an integer, got {json.dumps(value)}")
        elif not low <= value <= high:
            self.errors.append(f"{key} must be between {low} and {high}, got {value}")
        else:
            self.values[key] = value

    def number(self, key: str, low: float, high: float, *, low_open: bool = False, high_open: bool = False) -> None:
        if key not in self.raw:
            return
        value = self.raw[key]
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            self.errors.append(f"{key} must be a number, got {json.dumps(value)}")
            return
        too_low = value <= low if low_open else value < low
        too_high = value >= high if high_open else value > high
        if too_low or too_high:
            lo, hi = ("(" if low_open else "["), (")" if high_open else "]")
            self.errors.append(f"{key} must be in {lo}{low:g}, {high:g}{hi}, got {value}")
        else:
            self.values[key] = float(value)

    def boolean(self, key: str) -> None:
        if key not in self.raw:
            return
        if isinstance(self.raw[key], bool):
            self.values[key] = self.raw[key]
        else:
            self.errors.append(f"{key} must be true or false, got {json.dumps(self.raw[key])}")

    def texts(self) -> None:
        """The text settings (see :func:`setting_problems`), stored stripped."""
        problems = setting_problems(self.raw)
        self.errors += [reason for _, reason in problems]
        failed = {key for key, _ in problems}
        self.values.update({key: self.raw[key].strip() for key in TEXT_RULES if key in self.raw and key not in failed})

    def string_list(self, key: str, *, min_length: int) -> None:
        if key not in self.raw:
            return
        value = self.raw[key]
        if not isinstance(value, list) or not all(isinstance(v, (str, int)) and not isinstance(v, bool) for v in value):
            self.errors.append(f"{key} must be a list of names, got {json.dumps(value)}")
            return
        items = [str(v) for v in value]
        repeated = sorted({v for v in items if items.count(v) > 1})
        if repeated:
            self.errors.append(f"{key} lists {', '.join(repeated)} more than once")
        elif len(items) < min_length:
            self.errors.append(f"{key} needs at least {min_length} entr{'y' if min_length == 1 else 'ies'}, got {len(items)}")
        else:
            self.values[key] = items


def parse_config(raw: Any) -> StudyConfig:
    """Validate a decoded JSON configuration; raises :class:`InvalidStudyConfig` with every reason."""
    if not isinstance(raw, dict):
        raise InvalidStudyConfig([f"the configuration must be a JSON object, got {type(raw).__name__}"])
    c = _Checker(raw)
    unknown = sorted(set(raw) - set(KEYS))
    if unknown:
        c.errors.append(f"unknown key(s): {', '.join(unknown)} (known keys: {', '.join(KEYS)})")
    if "runs" not in raw:
        c.errors.append("runs is required: a list of at least 2 run names (every pair is compared)")
    c.string_list("runs", min_length=2)
    c.string_list("topics", min_length=1)
    if "topics" in raw and "topic_rule" in raw:
        c.errors.append("give either topics or topic_rule, not both")
    if "topic_rule" in raw:
        rule = raw["topic_rule"]
        if not isinstance(rule, dict) or set(rule) - {"count", "min_subtopics"} or "count" not in rule:
            c.errors.append('topic_rule must look like {"count": 50, "min_subtopics": 3}')
        else:
            sub = _Checker(rule)
            sub.integer("count", 1, 100000)
            sub.integer("min_subtopics", 1, 1000)
            c.errors += [f"topic_rule.{e}" for e in sub.errors]
            if not sub.errors:
                c.values["topic_rule"] = {"count": sub.values["count"], "min_subtopics": sub.values.get("min_subtopics", 1)}
    c.integer("subtopics_per_topic", 1, 100)
    c.integer("depth", 1, 100)
    if "levels" in raw:
        levels = raw["levels"]
        if (
            not isinstance(levels, list)
            or not levels
            or any(v not in ("topic", "subtopic") for v in levels)
            or len(set(levels)) != len(levels)
        ):
            c.errors.append(f'levels must be ["topic"], ["subtopic"] or ["topic", "subtopic"], got {json.dumps(levels)}')
        else:
            c.values["levels"] = [v for v in ("topic", "subtopic") if v in levels]
    c.integer("annotators_per_presentation", 1, 100)
    c.integer("items_per_annotator", 1, 10000)
    c.number("fast_threshold_seconds", 0, 3600, low_open=True)
    c.integer("fast_limit", 0, 10000)
    c.integer("lease_minutes", 1, 24 * 60)
    c.number("check_share", 0, 0.5)
    c.texts()
    c.boolean("same_pair_both_levels")
    c.boolean("require_platform_id")
    if "require_platform_id" not in raw and "redirect_url" in c.values:
        c.values["require_platform_id"] = platform_study(c.values["redirect_url"])
    if "fast_time" in raw:
        if raw["fast_time"] not in Study.FastTime.values:
            c.errors.append(f"fast_time must be one of {', '.join(Study.FastTime.values)}, got {json.dumps(raw['fast_time'])}")
        else:
            c.values["fast_time"] = raw["fast_time"]
    if not c.optional("check_fail_limit"):
        c.integer("check_fail_limit", 0, 10000)
    if not c.optional("straightline_limit"):
        c.integer("straightline_limit", 1, 10000)
    if not c.optional("side_bias_limit"):
        c.number("side_bias_limit", 0.5, 1)
    if not c.optional("median_seconds_min"):
        c.number("median_seconds_min", 0, 3600, low_open=True)
    if c.errors:
        raise InvalidStudyConfig(c.errors)
    return StudyConfig(**c.values)


def read_config(path: str | Path) -> StudyConfig:
    """Read and validate a configuration file."""
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise InvalidStudyConfig([f"{path}: no such file"]) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidStudyConfig([f"{path}: cannot read it ({exc})"]) from None
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidStudyConfig([f"{path}:{exc.lineno}: invalid JSON: {exc.msg} (column {exc.colno})"]) from None
    return parse_config(raw)
