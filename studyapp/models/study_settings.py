"""The study settings, declared once: type, default, bounds, help and whether they are frozen.

Each :class:`StudySetting` makes the ``Study`` column (:meth:`StudySetting.model_field`, declared on the
model as ``name = setting_column("name")``) and its database constraint (:meth:`StudySetting.constraint`); the JSON configuration
(``services.design.study_config``: ``KEYS``, ``StudyConfig``, ``parse_config``), the admin's study
form and the key table of docs/studyapp.md#create_study read the same declaration
(tests/studyapp/test_study_settings.py holds them to it). A new setting is one entry of
:data:`SETTINGS`, its column line on ``Study`` and ``manage.py makemigrations studyapp``
(docs/contributing.md#a-study-setting).

The configuration's structure (``runs``, ``topics``, ``topic_rule``, ``levels``) is not a setting:
the parser checks it against the collection.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from django.db import models
from django.db.models import Q
from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy as _


class FastTime(models.TextChoices):
    """Which decision time the fast-decision rule reads."""

    SERVER = "server", "server: item first served -> answer arrived"
    VISIBLE = "visible", "browser: time the page was visible (server time when the browser sent none)"


class StudyLanguage(models.TextChoices):
    """The languages participant pages can be shown in (settings.LANGUAGES; catalogues in locale/)."""

    EN = "en", "English"
    ZH_HANS = "zh-hans", "Simplified Chinese"
    JA = "ja", "Japanese"


class ExcludedExit(models.TextChoices):
    """What a participant excluded by quality control mid-study is asked to do."""

    RETURN = "return", "return the study on the platform (no code)"
    SCREENOUT = "screenout", "leave with the screen-out code (Prolific: its redirect)"


class Allocation(models.TextChoices):
    """Which presentations admission offers first (services.participation.allocation; docs/meta.md#adaptive-allocation)."""

    UNIFORM = "uniform", "uniform: the presentations with the fewest answers first"
    ADAPTIVE = "adaptive", "adaptive: drawn groups disputed among the metrics still in the best set first"


# The default texts are marked for translation: create_study stores them in the study's language.
# The default consent names whom to write to as a placeholder: create_study and the set-up page warn while it is left.
CONTACT_PLACEHOLDER = _("[name and e-mail address of the researchers]")
DEFAULT_CONSENT = format_lazy(
    _(
        "This is a research study on how people compare search result pages. You will see two result pages for a "
        "query and say which one you prefer. We record your answers, the time you take and the identifiers your "
        "recruitment platform passes to us, and nothing else. Taking part is voluntary; you may stop at any time. "
        "Questions about the study: {contact}."
    ),
    contact=CONTACT_PLACEHOLDER,
)
DEFAULT_INSTRUCTIONS = _(
    "Each page shows a search query and two result lists, left and right. Imagine you typed the query. Look at "
    "both lists and choose how much better one of them is for you, from 'left much better' to 'right much better'. "
    "Choose 'about the same' when you see no real difference."
)
CENT = Decimal("0.01")
_CODE = re.compile(r"^[A-Za-z0-9_-]{1,100}$")
_URL = re.compile(r"^https?://\S+$")
_UNSET = object()


@dataclass(frozen=True)
class StudySetting:
    """One setting of a study: a ``Study`` column and a key of the JSON configuration.

    ``low``/``high`` bound numbers (``low_open``/``high_open``: the bound itself is excluded);
    ``optional`` settings take ``null``, which switches a quality rule off; ``text`` settings may be
    ``required`` (not blank), have a ``pattern`` (``what`` says it in words) and a ``max_length``;
    ``frozen`` settings shaped the presentations, so staff cannot change them afterwards.
    ``config_default`` is the configuration's default when it differs from the column's
    (the generic consent text); ``doc_default`` is how the docs table writes the default.
    ``check(value, values)``, when given, is the setting's own rule past its type and bounds, reading the other
    settings of the same configuration (``values``: those given; the declared default for the rest).
    """

    name: str
    type: type
    default: Any
    help: str
    doc: str = ""
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    optional: bool = False
    choices: type[models.TextChoices] | None = None
    column: type[models.Field] | None = None
    max_length: int | None = None
    required: bool = False
    blank: bool = True  # may the admin's form leave it empty (a text column)
    pattern: re.Pattern[str] | None = None
    what: str = ""
    frozen: bool = False
    config_default: Any = _UNSET
    doc_default: str = ""
    check: Callable[[Any, Mapping[str, Any]], str | None] | None = None

    @property
    def initial(self) -> Any:
        """The configuration's default."""
        return self.default if self.config_default is _UNSET else self.config_default

    # -- the column --------------------------------------------------------------------------------

    def model_field(self) -> models.Field:
        """The ``Study`` column of this setting."""
        options: dict[str, Any] = {"default": self.default, "help_text": self.help}
        if self.optional:
            options.update(null=True, blank=True)  # the default stays the declared one (check_fail_limit: 1)
        if self.choices is not None:
            return models.CharField(max_length=10, choices=self.choices.choices, **options)
        if self.type is str:
            column = self.column or (models.CharField if self.max_length else models.TextField)
            return column(blank=self.blank, **({"max_length": self.max_length} if self.max_length else {}), **options)
        if self.type is Decimal:  # money: two decimal places (the platforms' smallest unit)
            return models.DecimalField(max_digits=8, decimal_places=2, **options)
        column = self.column or {int: models.PositiveIntegerField, float: models.FloatField, bool: models.BooleanField}[self.type]
        return column(**options)

    def constraint(self) -> models.CheckConstraint | None:
        """The database's check of the bounds (or choices); None for settings without either."""
        if self.choices is not None:
            return models.CheckConstraint(condition=Q(**{f"{self.name}__in": self.choices.values}), name=f"study_{self.name}_valid")
        if self.low is None and self.high is None:
            return None
        condition = Q()
        if self.low is not None:
            condition &= Q(**{f"{self.name}__{'gt' if self.low_open else 'gte'}": self.low})
        if self.high is not None:
            condition &= Q(**{f"{self.name}__{'lt' if self.high_open else 'lte'}": self.high})
        if self.optional:
            condition = Q(**{f"{self.name}__isnull": True}) | condition
        return models.CheckConstraint(condition=condition, name=f"study_{self.name}_range")

    # -- checking a value --------------------------------------------------------------------------

    def clean(self, value: Any) -> Any:
        """A valid ``value`` as stored: texts stripped, numbers of a float setting as floats."""
        if isinstance(value, str):
            return value.strip()
        if self.type is Decimal and value is not None:
            return Decimal(str(value)).quantize(CENT)
        return float(value) if self.type is float and value is not None else value

    def _num(self, x: float) -> str:
        return str(int(x)) if self.type is int else f"{x:g}"

    def bounds_text(self) -> str:
        """The accepted range in words: ``1-100``, or ``over 0, up to 3600`` with an open end."""
        if self.low is None or self.high is None:
            return ""
        low, high = self._num(self.low), self._num(self.high)
        if not (self.low_open or self.high_open):
            return f"{low}-{high}"
        return f"{'over' if self.low_open else 'from'} {low}, {'under' if self.high_open else 'up to'} {high}"

    def problem(self, value: Any, values: Mapping[str, Any] | None = None) -> str | None:
        """Why ``value`` is not valid for this setting (the parser's and the admin's message), or None;
        ``values``: the configuration's other settings, for :attr:`check`."""
        basic = self._basic_problem(value)
        if basic is None and self.check is not None and value is not None:
            return self.check(value, values or {})
        return basic

    def _basic_problem(self, value: Any) -> str | None:
        if value is None and self.optional:
            return None
        if self.choices is not None:
            if value not in self.choices.values:
                return f"{self.name} must be one of {', '.join(self.choices.values)}, got {json.dumps(value)}"
            return None
        if self.type is bool:
            return None if isinstance(value, bool) else f"{self.name} must be true or false, got {json.dumps(value)}"
        if self.type is str:
            return self._text_problem(value)
        if self.type is Decimal:
            return self._money_problem(value)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or (self.type is int and not isinstance(value, int)):
            return f"{self.name} must be {'an integer' if self.type is int else 'a number'}, got {json.dumps(value)}"
        too_low = self.low is not None and (value <= self.low if self.low_open else value < self.low)
        too_high = self.high is not None and (value >= self.high if self.high_open else value > self.high)
        if too_low or too_high:
            if self.type is int:
                return f"{self.name} must be between {self._num(self.low)} and {self._num(self.high)}, got {value}"
            lo, hi = ("(" if self.low_open else "["), (")" if self.high_open else "]")
            return f"{self.name} must be in {lo}{self._num(self.low)}, {self._num(self.high)}{hi}, got {value}"
        return None

    def _money_problem(self, value: Any) -> str | None:
        """An amount of money: a number, a Decimal or a text like "1.50", at most two decimal places, within the bounds."""
        if isinstance(value, bool) or not isinstance(value, (int, float, Decimal, str)):
            return f"{self.name} must be an amount like 1.50, got {json.dumps(value, default=str)}"
        try:
            amount = Decimal(str(value).strip())
        except InvalidOperation:
            return f"{self.name} must be an amount like 1.50, got {value}"
        if not amount.is_finite():
            return f"{self.name} must be an amount like 1.50, got {value}"
        if amount != amount.quantize(CENT):
            return f"{self.name} must have at most two decimal places, got {value}"
        if (self.low is not None and amount < Decimal(str(self.low))) or (self.high is not None and amount > Decimal(str(self.high))):
            return f"{self.name} must be between {self._num(self.low)} and {self._num(self.high)}, got {value}"
        return None

    def _text_problem(self, value: Any) -> str | None:
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):  # candidate_metrics as a JSON list
            return f"{self.name} must be a string, got a list: write it as one comma-separated string, {json.dumps(','.join(value))}"
        if not isinstance(value, str):
            return f"{self.name} must be a string, got {json.dumps(value)}"
        if self.required and not value.strip():
            return f"{self.name} must not be empty or blank"
        if self.max_length is not None and len(value) > self.max_length:
            return f"{self.name} must be at most {self.max_length} characters"
        if self.pattern is not None and value and not self.pattern.match(value):
            return f"{self.name} {self.what}, got {value!r}"
        return None

    # -- the docs ----------------------------------------------------------------------------------

    def default_text(self) -> str:
        """The default as the docs table and the admin's create form write it (Markdown code marks)."""
        return self.doc_default or _doc_value(self.initial)

    def docs_row(self) -> str:
        """This setting's row of the key table in docs/studyapp.md#create_study."""
        default = self.default_text()
        bounds = self.bounds_text()
        meaning = (self.doc or self.help) + (f"; allowed: {bounds}" if bounds else "") + (f"; {FROZEN_NOTE}" if self.frozen else "")
        return f"| `{self.name}` | {default} | {meaning} |"


FROZEN_NOTE = "**fixed once the study exists** (the admin shows it read-only)"  # docs_row of a frozen setting


def _doc_value(value: Any) -> str:
    if value is None or isinstance(value, bool) or isinstance(value, str):
        return f"`{json.dumps(value)}`"
    return f"{value:g}"


def scored_metrics(depth: int) -> list[str]:
    """The metrics a study's report scores, as it names them: every registered metric at default parameters, cut at
    the study ``depth`` (raw lists, as shown), except those tagged ``judging`` (Judged@k: how much of a list was
    judged, not how good it is). Known without scoring (``services.analysis.study_analysis.study_measures``)."""
    from evaluation.metrics import REGISTRY, Measure  # read when called: the models load before any metric is needed

    return [
        Measure(spec, dict(spec.defaults), depth if spec.cutoff != "none" else None).label
        for spec in REGISTRY.values()
        if "judging" not in spec.tags
    ]


def candidate_list(text: str) -> list[str]:
    """The metric names of a ``candidate_metrics`` text: comma-separated, blanks around them and empty entries dropped."""
    return [name for part in (text or "").split(",") if (name := part.strip())]


def candidates_problem(value: str, values: Mapping[str, Any]) -> str | None:
    """Why ``value`` is not a list of candidate metrics of a study with ``values``' depth (None when it is, or empty).

    Checked at configuration time without scoring: each name must be one of :func:`scored_metrics` at the study's
    ``depth`` (e.g. ``alpha-nDCG@10`` at depth 10), at least 2 distinct, none twice."""
    names = candidate_list(value)
    if not names:
        return None
    depth = values.get("depth", BY_NAME["depth"].default)
    if BY_NAME["depth"].problem(depth) is not None:
        return None  # the depth's own problem is reported; the names are checked once it is valid
    known = scored_metrics(depth)
    unknown = [n for n in dict.fromkeys(names) if n not in known]
    if unknown:
        words = []
        for name in unknown:
            close = difflib.get_close_matches(name, known, n=1, cutoff=0.6) or [k for k in known if k.lower() == name.lower()]
            words.append(f"{name!r} (" + (f"did you mean {close[0]!r}?" if close else f"{len(known)} metrics are scored") + ")")
        return (
            f"candidate_metrics: unknown metric {', '.join(words)}; the names are the report's at the study's depth {depth}, "
            f"e.g. {known[0]}"
        )
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        return f"candidate_metrics lists {', '.join(repeated)} more than once"
    if len(names) < 2:
        return f"candidate_metrics needs at least 2 metrics to decide among, got only {names[0]} (empty: every metric the report scores)"
    return None


_CODE_RULE = {"type": str, "default": "", "max_length": 100, "pattern": _CODE, "what": "must be 1-100 letters, digits, '-' or '_'"}
_SMALL = models.PositiveSmallIntegerField

SETTINGS: tuple[StudySetting, ...] = (
    StudySetting("subtopics_per_topic", int, 3, "subtopics kept per topic (the heaviest)", low=1, high=100, column=_SMALL, frozen=True,
                 doc="keep the k heaviest subtopics per topic (ties: lower id), weights renormalised to sum to 1 "
                     "([metrics.md#intents-and-weights](metrics.md#intents-and-weights), computed by `evaluation.Collection.keep_top_intents`)"),
    StudySetting("depth", int, 10, "documents shown per result page", low=1, high=100, column=_SMALL, frozen=True),
    StudySetting("annotators_per_presentation", int, 3, "k, valid answers wanted per presentation", low=1, high=100, column=_SMALL),
    StudySetting("items_per_annotator", int, 60, "quota per annotator, check items included", low=1, high=10000),
    StudySetting("fast_threshold_seconds", float, 10.0, "decisions faster than this count as fast", low=0, high=3600, low_open=True,
                 doc="decisions faster than this count as fast ([quality control](#quality-control))"),
    StudySetting("fast_limit", int, 30, "more decisions than this under the threshold exclude an annotator", low=0, high=10000,
                 doc="an annotator with more fast decisions than this is excluded"),
    StudySetting("lease_minutes", int, 20, "inactivity after which items are freed", low=1, high=24 * 60,
                 doc="inactivity after which an annotator's unanswered items are freed"),
    StudySetting("check_share", float, 0.0, "share of each annotator's items that are check items", low=0, high=0.5, frozen=True),
    StudySetting("consent_text", str, "", "shown before the study (Markdown)", required=True, config_default=DEFAULT_CONSENT,
                 doc_default="a generic text"),
    StudySetting("consent_version", str, "1", "stored with each consent; a new version asks everyone again", max_length=50, required=True,
                 blank=False, column=models.CharField),
    StudySetting("instructions", str, "", "shown before the first item (Markdown), then the study's rules", required=True, config_default=DEFAULT_INSTRUCTIONS,
                 doc_default="a generic text"),
    StudySetting("completion_code", **_CODE_RULE, help="shown at the end",
                 doc_default="random 8 hex digits if neither it nor `redirect_url` is given"),
    StudySetting("screenout_code", **_CODE_RULE, help="shown when the study is full", doc_default="none",
                 doc="shown to annotators refused because the study is full"),
    StudySetting("withdrawal_code", **_CODE_RULE, doc_default="none",
                 help="shown to participants who withdraw (empty: they are asked to return the study on their platform)"),
    StudySetting("platform_id_retention_days", int, None,
                 "purge_platform_ids removes platform ids this many days after the last visit (empty: the site default)",
                 low=1, high=3650, optional=True, doc="`purge_platform_ids` removes platform ids this many days after the last visit "
                 "(`null`: `STUDYAPP_PLATFORM_ID_RETENTION_DAYS`, 90)"),
    StudySetting("redirect_url", str, "", "e.g. https://app.prolific.com/submissions/complete?cc={code}", max_length=500, pattern=_URL,
                 what="must be an http(s):// URL", doc_default="none",
                 doc="where to send finished annotators, e.g. `https://app.prolific.com/submissions/complete?cc={code}`; it must contain "
                     "`{code}`, replaced by the completion code (then required) for finished annotators and by the screen-out code on "
                     'the "study full" page'),
    StudySetting("allocation", str, Allocation.UNIFORM.value, "which presentations are offered first: uniform or adaptive",
                 choices=Allocation, frozen=True,
                 doc='`"uniform"`: the presentations with the fewest answers first; `"adaptive"`: first the run pairs drawn, with '
                     "known probabilities, by how much the metrics still in the best set dispute them "
                     "([meta.md#adaptive-allocation](meta.md#adaptive-allocation)); every guarantee of the allocation holds either way"),
    StudySetting("candidate_metrics", str, "", "the metrics an adaptive study decides among, comma-separated "
                 "(empty: every metric the report scores)", max_length=1000, column=models.CharField, frozen=True,
                 check=candidates_problem, doc_default="every metric",
                 doc="the metrics the study decides among, as the report names them at the study's `depth`, comma-separated, "
                     'e.g. `"alpha-nDCG@10,nERR-IA@10,D#-nDCG@10"` (at least 2; unknown names are refused with the closest '
                     "known one). An adaptive study's contenders, dispute weights and decided signal are computed over "
                     "these alone ([meta.md#adaptive-allocation](meta.md#adaptive-allocation)); the report still scores "
                     "every metric. A uniform study may name them too: the report notes them, nothing else changes"),
    StudySetting("same_pair_both_levels", bool, False, "may one annotator see the same (topic, run pair) at both levels?", frozen=True),
    StudySetting("require_platform_id", bool, False, "admit only newcomers whose link carries a platform's participant id (no anonymous link)",
                 doc_default="`true` when `redirect_url` goes to a host of a registered platform (Prolific's, MTurk's: "
                             "[contributing.md](contributing.md#a-recruitment-platform)), else `false`",
                 doc="admit only newcomers whose link carries a platform's participant id; an anonymous link then gets a \"Please open "
                     "the study from your platform\" page (403) and nothing is stored. Set it explicitly for an MTurk study without a "
                     "redirect URL; staff can change it in the admin at any time (see [annotator.md#security](annotator.md#security))"),
    StudySetting("language", str, StudyLanguage.EN.value, "the language of the participant pages", choices=StudyLanguage,
                 doc='the participant pages\' language: `"en"`, `"zh-hans"` or `"ja"` ([annotator.md#languages](annotator.md#languages))'),
    StudySetting("min_viewport_width", int, None,
                 "participants whose browser window is narrower (CSS pixels) are asked to use a larger screen (empty: any width)",
                 low=240, high=3840, optional=True, column=_SMALL,
                 doc="narrower browser windows (CSS pixels) see a note asking for a larger screen instead of the study's pages"),
    StudySetting("excluded_exit", str, ExcludedExit.RETURN.value, "what a participant excluded mid-study by quality control is asked to do",
                 choices=ExcludedExit,
                 doc='what a participant excluded mid-study is asked to do: `"return"` the study, or `"screenout"`: enter the '
                     "`screenout_code` (then required)"),
    StudySetting("fast_time", str, FastTime.SERVER.value, "which decision time the fast rule reads", choices=FastTime,
                 doc='which decision time the fast rule reads: `"server"` (item first served -> answer arrived) or `"visible"` '
                     "(the browser's visible time; the server's where the browser sent none)"),
    StudySetting("check_fail_limit", int, 1,
                 "exclude annotators failing more check items than this (default 1: two failed checks exclude; empty: only reported)",
                 low=0, high=10000, optional=True,
                 doc="exclude annotators failing more check items than this (default: two failed checks exclude, Prolific's rule; `null`: "
                     "reported only; see [annotator.md#fair-rules-told-up-front](annotator.md#fair-rules-told-up-front))"),
    StudySetting("straightline_limit", int, None, "exclude annotators giving the same answer more times in a row than this (empty: only reported)",
                 low=1, high=10000, optional=True, doc="exclude annotators giving the same answer more times in a row than this"),
    StudySetting("side_bias_limit", float, None,
                 "exclude annotators whose share of non-zero answers on one side exceeds this (empty: only reported)",
                 low=0.5, high=1, optional=True,
                 doc="exclude annotators with more than this share of their non-zero answers on one side, judged from 10 such answers"),
    StudySetting("median_seconds_min", float, None, "exclude annotators whose median decision time is under this (empty: only reported)",
                 low=0, high=3600, low_open=True, optional=True,
                 doc="exclude annotators whose median decision time is under this many seconds, judged from 10 decisions"),
    StudySetting("bonus_amount", Decimal, Decimal("0.00"), "bonus per approved submission, in the platform study's currency (0: no bonus)",
                 low=0, high=100, doc_default="0",
                 doc="bonus paid to every approved submission through the platform's API, in the currency of the study on the "
                     "platform, two decimal places (0: none; [reviewing and paying](#reviewing-and-paying-on-the-platform))"),
    StudySetting("bonus_reason", str, "", "the bonus's reason (MTurk shows it to the worker)", max_length=500, doc_default="none",
                 doc="why the bonus is paid (MTurk shows it to the worker; Prolific takes none)"),
)  # fmt: skip


def by_name(settings: tuple[StudySetting, ...]) -> dict[str, StudySetting]:
    """``{name: setting}``; ValueError when a name is declared twice (one declaration per setting)."""
    named: dict[str, StudySetting] = {}
    for setting in settings:
        if setting.name in named:
            raise ValueError(f"study setting {setting.name!r} declared twice")
        named[setting.name] = setting
    return named


BY_NAME: dict[str, StudySetting] = by_name(SETTINGS)


def setting_constraints() -> list[models.CheckConstraint]:
    """The ``Study`` table's checks of every declared setting."""
    return [c for s in SETTINGS if (c := s.constraint()) is not None]


def setting_column(name: str) -> models.Field:
    """The ``Study`` column of the setting ``name``, made from its declaration (``name = setting_column("name")``
    in the model's body, so editors and type checkers see every column)."""
    return BY_NAME[name].model_field()
