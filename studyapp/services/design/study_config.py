"""The JSON study configuration: keys, defaults and checks that need no database.

Every problem is collected and reported together (like Django's ``validate_password``); checks
against the collection (run names, topics, capacity) live in ``services.design.study_design``.
"""

from __future__ import annotations

import difflib
import functools
import json
from collections.abc import Iterable
from dataclasses import field, make_dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from studyapp.exceptions import InvalidStudyConfig
from studyapp.models import Study, study_settings
from studyapp.models.study_settings import StudySetting
from studyapp.services import platforms

# The configuration's structure (checked against the collection); the other keys are the declared settings.
STRUCTURE = ("runs", "topics", "topic_rule", "levels")


def keys() -> tuple[str, ...]:
    """Every key of a configuration: the structure, then the declared settings (read when called)."""
    return (*STRUCTURE, *study_settings.BY_NAME)


KEYS = keys()  # at start-up


def unknown_names(what: str, given: Iterable[str], known: Iterable[str], where: str = "") -> list[str]:
    """One sentence per name of ``given`` not in ``known``: the closest known name as a suggestion
    (``difflib``), else every known name when they are few. ``what`` names the kind ("key", "run")."""
    known = list(known)
    problems = []
    for name in given:
        if name in known:
            continue
        close = difflib.get_close_matches(name, known, n=1, cutoff=0.6) or [k for k in known if k.lower() == name.lower()]
        if close:
            hint = f"did you mean {close[0]!r}?"
        elif len(known) <= 12:
            hint = f"known: {', '.join(sorted(known)) or 'none'}"
        else:
            hint = f"{len(known)} are known"
        problems.append(f"unknown {what} {name!r}{where} ({hint})")
    return problems


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
    """``(key, reason)`` for the settings in ``values`` that break their declaration; keys absent are not checked.

    The one validator of :func:`parse_config` and of the admin's study form.
    """
    problems = [(s.name, problem) for s in study_settings.SETTINGS if s.name in values and (problem := s.problem(values[s.name], values))]
    if not {key for key, _ in problems} & {"redirect_url", "completion_code"}:
        redirect = redirect_problem((values.get("redirect_url") or "").strip(), (values.get("completion_code") or "").strip())
        if redirect:
            problems.append(("redirect_url", redirect))
    if values.get("excluded_exit") == study_settings.ExcludedExit.SCREENOUT and not str(values.get("screenout_code") or "").strip():
        problems.append(("excluded_exit", 'excluded_exit "screenout" needs a screenout_code to give the excluded participants'))
    return problems


@functools.cache
def config_class(settings: tuple[StudySetting, ...]) -> type:
    """The :class:`StudyConfig` dataclass of ``settings``: the structure, then one field per setting with its default."""

    def levels_field(self) -> str:
        """The ``Study.levels`` value for these levels."""
        return Study.Levels.BOTH if len(self.levels) == 2 else self.levels[0]

    fields = [
        ("runs", list[str]),
        ("topics", list[str] | None, field(default=None)),
        ("topic_rule", dict[str, int] | None, field(default=None)),
        ("levels", list[str], field(default_factory=lambda: ["topic", "subtopic"])),
        *((s.name, s.type if not s.optional else s.type | None, field(default=s.initial)) for s in settings),
    ]
    doc = "A syntactically valid configuration; defaults come from the settings' declarations (``models.study_settings``)."
    return make_dataclass("StudyConfig", fields, namespace={"levels_field": property(levels_field), "__doc__": doc})


StudyConfig = config_class(study_settings.SETTINGS)


class _Checker:
    def __init__(self, raw: dict[str, Any]) -> None:
        self.raw = raw
        self.errors: list[str] = []
        self.values: dict[str, Any] = {}

    def integer(self, key: str, low: int, high: int) -> None:
        """A structural whole number (``topic_rule``'s): the same words as a declared setting's."""
        if key in self.raw:
            self.check(StudySetting(key, int, None, "", low=low, high=high), self.raw[key])

    def check(self, setting: StudySetting, value: Any) -> None:
        problem = setting.problem(value)
        if problem:
            self.errors.append(problem)
        else:
            self.values[setting.name] = setting.clean(value)

    def settings(self) -> None:
        """Every declared setting given (see :func:`setting_problems`), stored cleaned (texts stripped)."""
        problems = setting_problems(self.raw)
        self.errors += [reason for _, reason in problems]
        failed = {key for key, _ in problems}
        given = [s for s in study_settings.SETTINGS if s.name in self.raw and s.name not in failed]
        self.values.update({s.name: s.clean(self.raw[s.name]) for s in given})

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
    known = keys()
    c.errors += unknown_names("key", sorted(set(raw) - set(known)), known)
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
    c.settings()
    if "require_platform_id" not in raw and "redirect_url" in c.values:
        c.values["require_platform_id"] = platform_study(c.values["redirect_url"])
    if c.errors:
        raise InvalidStudyConfig(c.errors)
    return config_class(study_settings.SETTINGS)(**c.values)


def study_config(study: Study) -> dict[str, Any]:
    """``study``'s configuration as it stands, JSON-ready: its runs, topics and levels, then every declared
    setting's column (read when called; amounts as text, "1.50"). ``create_study --config`` takes it back and
    designs the same study (the report bundle's ``study.json``)."""
    config: dict[str, Any] = {
        "runs": sorted(study.study_runs.values_list("run__name", flat=True)),
        "topics": list(study.study_topics.order_by("position").values_list("topic__topic_id", flat=True)),
        "levels": [str(level) for level in study.level_list],
    }
    for setting in study_settings.SETTINGS:
        value = getattr(study, setting.name)
        config[setting.name] = str(value) if isinstance(value, Decimal) else value
    return config


def read_config(path: str | Path) -> StudyConfig:
    """Read and validate a configuration file."""
    return parse_config(read_json(path))


def read_json(path: str | Path) -> Any:
    """A configuration file's JSON, decoded (not validated); a problem names the file and line."""
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
    return raw
