"""The metric registry: one :class:`MetricSpec` per metric, and measure strings.

A measure string is ``Name(k=v,...)'@cutoff`` (docs/metrics.md#measure-names): parameters in parentheses,
a trailing ``'`` for the condensed-list variant (docs/metrics.md#condensed-lists; accepted right after the name too),
the cutoff after ``@``. ``str(Measure)`` gives the canonical form with default parameters dropped,
so canonical strings round-trip and serve as keys. trec_eval's spellings (``P_10``, ``ndcg_cut.20``, ``map``)
are read as ours (:func:`trec_eval_spelling`, docs/metrics.md#trec_eval-measures).
"""

from __future__ import annotations

import difflib
import inspect
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from evaluation.exceptions import UnknownMetricError

# required: ``Name@k`` only; optional: the whole list by default; either: the whole list when no cutoff is
# given, but listed at the usual cutoffs by :func:`default_measures` (nDCG, AP, Judged); none: the whole list only
CutoffRule = Literal["required", "optional", "either", "none"]
DEFAULT_CUTOFFS = (5, 10, 20)


@dataclass(frozen=True)
class Param:
    """A metric parameter: type, default, description, and optional choices or bounds."""

    type: type
    default: Any
    doc: str
    choices: tuple[Any, ...] | None = None
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False

    def parse(self, metric: str, name: str, raw: Any) -> Any:
        value = raw
        if isinstance(raw, str):
            text = raw.strip()
            try:
                if self.type is bool:
                    if text.lower() not in ("true", "false", "1", "0", "yes", "no"):
                        raise ValueError
                    value = text.lower() in ("true", "1", "yes")
                elif self.type is int:
                    value = int(text)
                elif self.type is float:
                    value = float(text)
                else:
                    value = text
            except ValueError:
                raise UnknownMetricError(f"{metric}: parameter {name} must be {self.type.__name__}, got {raw!r}") from None
        elif self.type is float and isinstance(raw, int) and not isinstance(raw, bool):
            value = float(raw)
        if not isinstance(value, self.type):
            raise UnknownMetricError(f"{metric}: parameter {name} must be {self.type.__name__}, got {raw!r}")
        if self.type is float and not np.isfinite(value):
            raise UnknownMetricError(f"{metric}: parameter {name} must be finite, got {raw!r}")
        if self.choices is not None and value not in self.choices:
            options = ", ".join(str(c) for c in self.choices)
            raise UnknownMetricError(f"{metric}: parameter {name} must be one of {options}, got {raw!r}")
        if self.low is not None and (value < self.low or (self.low_open and value == self.low)):
            bound = ">" if self.low_open else ">="
            raise UnknownMetricError(f"{metric}: parameter {name} must be {bound} {self.low}, got {raw!r}")
        if self.high is not None and (value > self.high or (self.high_open and value == self.high)):
            bound = "<" if self.high_open else "<="
            raise UnknownMetricError(f"{metric}: parameter {name} must be {bound} {self.high}, got {raw!r}")
        return value


# kernel(ranking, cutoff, **params) -> (R, T) float array
Kernel = Callable[..., np.ndarray]
# aggregate(values (R, T) with NaN for excluded topics, table, params) -> (R,)
Aggregate = Callable[..., np.ndarray]


@dataclass(frozen=True)
class MetricSpec:
    """A registered metric: its kernel, parameters, cutoff rule, tags and citation."""

    name: str
    kernel: Kernel
    params: dict[str, Param]
    cutoff: CutoffRule
    tags: frozenset[str]
    citation: str
    summary: str
    aggregate: Aggregate | None = None
    aliases: tuple[str, ...] = ()
    # params -> why the metric can be undefined (NaN) on a topic that has relevant documents; '' never
    undefined: Callable[[dict[str, Any]], str] | None = None

    @property
    def defaults(self) -> dict[str, Any]:
        return {k: p.default for k, p in self.params.items()}

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={_fmt(p.default)}" for k, p in self.params.items())
        return f"MetricSpec({self.name!r}, cutoff={self.cutoff!r}, params=({params}), tags={sorted(self.tags)})"


REGISTRY: dict[str, MetricSpec] = {}
_ALIASES: dict[str, str] = {}


def register(
    name: str,
    *,
    params: dict[str, Param] | None = None,
    cutoff: CutoffRule = "required",
    tags: Iterable[str] = (),
    citation: str,
    aggregate: Aggregate | None = None,
    aliases: Iterable[str] = (),
    undefined: Callable[[dict[str, Any]], str] | None = None,
) -> Callable[[Kernel], Kernel]:
    """Register ``kernel`` under ``name`` (decorator). Names and aliases must be unique, and the
    kernel takes its parameters keyword-only and without defaults: :class:`Param` is the one place
    a default is written (:func:`check_kernel_signature`)."""

    aliases = tuple(aliases)

    def decorate(kernel: Kernel) -> Kernel:
        if name in REGISTRY or name in _ALIASES:
            raise ValueError(f"metric {name!r} registered twice")
        taken = [alias for alias in aliases if alias in REGISTRY or alias in _ALIASES]
        if taken:
            raise ValueError(f"metric {name!r}: the alias {taken[0]!r} is taken by {_ALIASES.get(taken[0], taken[0])!r}")
        check_kernel_signature(name, kernel, params or {})
        doc = (kernel.__doc__ or "").strip().splitlines()
        spec = MetricSpec(
            name=name,
            kernel=kernel,
            params=dict(params or {}),
            cutoff=cutoff,
            tags=frozenset(tags),
            citation=citation,
            summary=doc[0] if doc else name,
            aggregate=aggregate,
            aliases=aliases,
            undefined=undefined,
        )
        REGISTRY[name] = spec
        for alias in spec.aliases:
            _ALIASES[alias] = name
        return kernel

    return decorate


def check_kernel_signature(name: str, kernel: Kernel, params: dict[str, Param]) -> None:
    """Raise ValueError unless ``kernel(ranking, cutoff, *, <one keyword per Param>)`` repeats no
    default. Parameter names that are not identifiers (``lambda``) arrive through ``**params``."""
    after_cutoff = list(inspect.signature(kernel).parameters.values())[2:]
    named = {p.name for p in after_cutoff if p.kind is inspect.Parameter.KEYWORD_ONLY}
    takes_rest = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in after_cutoff)
    problems = [f"{p.name} has a default" for p in after_cutoff if p.default is not inspect.Parameter.empty]
    problems += [f"{p.name} is not keyword-only" for p in after_cutoff if p.kind not in (p.KEYWORD_ONLY, p.VAR_KEYWORD)]
    problems += [f"{extra} is no Param" for extra in sorted(named - set(params))]
    if not takes_rest:
        problems += [f"Param {missing} is not a kernel argument" for missing in sorted(set(params) - named)]
    if problems:
        raise ValueError(f"metric {name!r}: kernel signature: " + "; ".join(problems))


@dataclass(frozen=True)
class Measure:
    """A metric with parameters, cutoff and list mode: what one output column means."""

    spec: MetricSpec
    params: dict[str, Any] = field(default_factory=dict)
    cutoff: int | None = None
    condensed: bool = False
    text: str = ""

    @property
    def name(self) -> str:
        return self.spec.name

    def canonical(self) -> str:
        """``Name(non-default params)'@cutoff``."""
        changed = [f"{k}={_fmt(v)}" for k, v in self.params.items() if v != self.spec.params[k].default]
        out = self.spec.name
        if changed:
            out += "(" + ",".join(changed) + ")"
        if self.condensed:
            out += "'"
        if self.cutoff is not None:
            out += f"@{self.cutoff}"
        return out

    @property
    def label(self) -> str:
        """The string shown in output: the requested text verbatim, else the canonical form."""
        return self.text or self.canonical()

    def __str__(self) -> str:
        return self.canonical()

    def __repr__(self) -> str:
        return f"Measure({self.label!r})" if self.label == self.canonical() else f"Measure({self.label!r}: {self.canonical()})"

    def __hash__(self) -> int:
        return hash((self.spec.name, tuple(sorted(self.params.items())), self.cutoff, self.condensed))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Measure) and hash(self) == hash(other) and self.canonical() == other.canonical()


def _fmt(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value) if isinstance(value, float) else str(value)


# ir_measures' parameters, accepted on every measure: judged_only=True is the condensed list (the
# trailing '); rel is the lowest relevant grade: only its default 1 except on the metrics with a Param
# of that name (P, R, RR, Success, AP: docs/metrics.md#trec_eval-measures)
ECOSYSTEM_PARAMS = {
    "judged_only": Param(bool, False, "ir_measures: drop unjudged documents first (the same as a trailing ')"),
    "rel": Param(int, 1, "ir_measures' lowest relevant grade (relevance here is always grade >= 1)", choices=(1,)),
}

# parameter values may hold one level of parentheses, e.g. EU(eu_discount=log2(i+1))
_SYNTAX = re.compile(r"^(?P<name>[^()@']+?)(?P<p1>')?(?:\((?P<params>(?:[^()]|\([^()]*\))*)\))?(?P<p2>')?(?:@(?P<cutoff>[^@]*))?$")
_TOP_LEVEL_COMMA = re.compile(r",(?![^()]*\))")
_TOP_LEVEL_SEPARATOR = re.compile(r"[,\s]+(?![^()]*\))")  # commas or blanks outside parentheses


def get_spec(name: str) -> MetricSpec:
    """The spec registered under ``name`` or one of its aliases (ir_measures' spellings included);
    an unknown name raises :class:`UnknownMetricError` naming the closest known names."""
    key = _ALIASES.get(name, name)
    if key not in REGISTRY:
        close = closest_names(name)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        if name.lower() in TREC_EVAL_ELSEWHERE:
            hint = f"; trec_eval's {name} is not defined here: compute it with ir_measures (ir_measures.parse_measure({name!r}))"
        if name in RANX_ELSEWHERE:
            hint += f"; ranx's {name} is not defined here: compute it with ranx or ir_measures"
        raise UnknownMetricError(f"unknown metric {name!r}{hint} (`python -m evaluation metrics` lists them all)", suggestions=close)
    return REGISTRY[key]


def closest_names(name: str, n: int = 3) -> list[str]:
    """Up to ``n`` registered names closest to ``name`` (difflib over names and aliases, case-insensitive),
    each given as the metric's own name."""
    known = {spelling.lower(): target for spelling, target in [*((k, k) for k in REGISTRY), *_ALIASES.items()]}
    out: list[str] = []
    for match in difflib.get_close_matches(name.lower(), list(known), n=3 * n, cutoff=0.6):
        if known[match] not in out:
            out.append(known[match])
    return out[:n]


def parse_measure(text: str, **overrides: Any) -> Measure:
    """Parse ``"alpha-nDCG(alpha=0.3)@10"``, ``"D-nDCG'@5"``, ``"RBU(p=0.99,e=0.05)"``, ...

    Raises UnknownMetricError for unknown names or parameters, bad values and cutoff misuse.
    """
    _refuse_comma_lists(text.strip())
    raw = trec_eval_spelling(text.strip())
    # names that themselves contain '@' (S-RR@100%) are matched as a prefix first
    prefixed = next((n for n in sorted(REGISTRY, key=len, reverse=True) if "@" in n and raw.startswith(n)), None)
    rest = raw[len(prefixed) :] if prefixed else raw
    match = _SYNTAX.match("X" + rest if prefixed else rest)
    if not match:
        raise UnknownMetricError(f"cannot parse measure {text!r}; expected Name(param=value,...)'@cutoff")
    spec = get_spec(prefixed or match.group("name").strip())
    condensed = bool(match.group("p1") or match.group("p2"))
    params = dict(spec.defaults)
    given = match.group("params")
    if given is not None and given.strip():
        for item in _TOP_LEVEL_COMMA.split(given):
            if "=" not in item:
                raise UnknownMetricError(f"{spec.name}: parameters must be name=value, got {item.strip()!r}")
            key, value = (s.strip() for s in item.split("=", 1))
            if key in ECOSYSTEM_PARAMS and key not in spec.params:
                parsed = ECOSYSTEM_PARAMS[key].parse(spec.name, key, value)
                condensed |= key == "judged_only" and parsed
                continue
            if key not in spec.params:
                known = ", ".join(spec.params) or "none"
                raise UnknownMetricError(f"{spec.name}: unknown parameter {key!r} (accepted: {known})")
            params[key] = spec.params[key].parse(spec.name, key, value)
    for key, value in overrides.items():
        if key not in spec.params:
            raise UnknownMetricError(f"{spec.name}: unknown parameter {key!r}")
        params[key] = spec.params[key].parse(spec.name, key, value)
    cutoff = _parse_cutoff(spec, match.group("cutoff"))
    return Measure(spec, params, cutoff, condensed, text.strip())


# trec_eval's spellings (``P_10``, ``P.10``, ``recall_100``, ``recip_rank``, ``map``, ``map_cut_10``, ``ndcg``,
# ``ndcg_cut.20``, ``success_10``) -> our measure (docs/metrics.md#trec_eval-measures); ``{k}``: the cutoff
TREC_EVAL_NAMES = {
    "P": "P@{k}",
    "recall": "R@{k}",
    "success": "Success@{k}",
    "recip_rank": "RR",
    "map": "AP",
    "map_cut": "AP(ap_norm=R)@{k}",
    "ndcg": "nDCG",
    "ndcg_cut": "nDCG@{k}",
}
_TREC_EVAL_NAME = re.compile(r"^(?P<name>P|recall|success|recip_rank|map_cut|map|ndcg_cut|ndcg)(?:[._](?P<k>\d+))?$")


# ranx's names (its evaluate and compare; docs/metrics.md#trec_eval-measures) -> our measure, ranx's values
RANX_NAMES = {
    "ndcg": "nDCG@{k}",
    "map": "AP(ap_norm=R)@{k}",  # over R like trec_eval's map_cut, not NTCIREVAL's AP@k
    "mrr": "RR@{k}",
    "precision": "P@{k}",
    "recall": "R@{k}",
    "hit_rate": "Success@{k}",
}
_RANX_NAME = re.compile(r"^(?P<name>ndcg|map|mrr|precision|recall|hit_rate)@(?P<k>\d+)$")


def trec_eval_spelling(text: str) -> str:
    """Our measure string for one of trec_eval's measure names (``ndcg_cut.20`` -> ``nDCG@20``) or ranx's
    (``map@100`` -> ``AP(ap_norm=R)@100``, ``mrr`` -> ``RR``), else ``text``. Raises for a trec_eval name
    that needs a cutoff and has none (``P``, ``ndcg_cut``) or one it does not take."""
    ranx = _RANX_NAME.match(text)
    if ranx:
        return RANX_NAMES[ranx.group("name")].format(k=ranx.group("k"))
    if text == "mrr":
        return "RR"
    match = _TREC_EVAL_NAME.match(text)
    if not match or (match.group("name") == "P" and match.group("k") is None):
        return text
    name, k = match.group("name"), match.group("k")
    template = TREC_EVAL_NAMES[name]
    if k is None and "{k}" in template:
        raise UnknownMetricError(f"{text!r}: trec_eval's {name} needs a cutoff, e.g. {name}_10 (our {template.format(k=10)})")
    if k is not None and "{k}" not in template:
        cut = f"{name}_cut_{k}" if name in ("map", "ndcg") else f"{template}@{k}"
        raise UnknownMetricError(f"{text!r}: trec_eval's {name} takes no cutoff; write {cut}")
    return template.format(k=k)


# trec_eval's measures this package does not define (docs/metrics.md#trec_eval-measures): answered with a pointer
TREC_EVAL_ELSEWHERE = frozenset(
    {"bpref", "rprec", "infap", "num_ret", "num_rel", "num_rel_ret", "set_p", "set_recall", "set_f", "set_map", "gm_map", "iprec_at_recall"}
)
# ranx's metrics this package does not define: answered with a pointer
RANX_ELSEWHERE = frozenset({"hits", "f1", "r-precision", "ndcg_burges", "dcg", "dcg_burges"})


def _refuse_comma_lists(text: str) -> None:
    """A hint for several measures given as one comma- or blank-separated string."""
    if _TOP_LEVEL_SEPARATOR.search(text) and "(" not in re.split(r"[,\s]", text)[0]:
        parts = [p for p in _TOP_LEVEL_SEPARATOR.split(text) if p]
        raise UnknownMetricError(
            f"{text!r} looks like several measures; give one per string, e.g. {parts!r} (on the command line: --measures {' '.join(parts)})"
        )


def _parse_cutoff(spec: MetricSpec, raw: str | None) -> int | None:
    if raw is None:
        if spec.cutoff == "required":
            raise UnknownMetricError(f"{spec.name} needs a cutoff, e.g. {spec.name}@10")
        return None
    if spec.cutoff == "none":
        raise UnknownMetricError(f"{spec.name} takes no cutoff (it scores the whole list)")
    try:
        cutoff = int(raw)
    except ValueError:
        hint = (
            f" (the condensed list's ' goes before the cutoff: {spec.name}'@{raw[:-1]})" if raw.endswith("'") and raw[:-1].isdigit() else ""
        )
        raise UnknownMetricError(f"{spec.name}: cutoff must be a positive integer, got {raw!r}{hint}") from None
    if cutoff < 1:
        raise UnknownMetricError(f"{spec.name}: cutoff must be a positive integer, got {raw!r}")
    return cutoff


def default_measures(cutoffs: Iterable[int] = DEFAULT_CUTOFFS, *, condensed: bool = True) -> list[Measure]:
    """Every registered metric at default parameters: cutoff-taking ones at each cutoff, the
    rest once on the whole list; each also as its condensed variant when ``condensed``."""
    out: list[Measure] = []
    for spec in REGISTRY.values():
        cuts: list[int | None] = list(cutoffs) if spec.cutoff in ("required", "either") else [None]
        for mode in (False, True) if condensed else (False,):
            for cut in cuts:
                out.append(Measure(spec, dict(spec.defaults), cut, mode))
    return out
