"""Intent probability files ``topic intent prob [inf|nav]`` (NTCIR Iprob / DINprob, TREC-style TSV).

Validated as a whole: probabilities must be numbers in [0, 1], a topic's probabilities must not
sum above 1 (tolerance 1e-6), the optional type must be ``inf`` or ``nav``, and an intent may be
listed once per topic. Intent ``0`` is reserved (NTCIREVAL: relevant to nothing).
"""

from __future__ import annotations

from pathlib import Path

from evaluation.collection import Intent
from evaluation.exceptions import FormatError
from evaluation.io._lines import expect_columns, numbered_fields, parse_float

SUM_TOLERANCE = 1e-6


def read_intents(path: str | Path) -> dict[str, list[Intent]]:
    """Read ``topic intent prob [type]``; returns topic -> intents (type ``""`` when not given)."""
    out: dict[str, list[Intent]] = {}
    seen: dict[tuple[str, str], int] = {}
    totals: dict[str, tuple[float, int]] = {}
    for number, fields in numbered_fields(path):
        expect_columns(path, number, fields, (3, 4), "topic intent prob [inf|nav]")
        topic, intent, raw = fields[:3]
        if intent == "0":
            raise FormatError(path, number, "intent 0 is reserved for documents relevant to no intent")
        prob = parse_float(path, number, raw, "probability")
        if not 0.0 <= prob <= 1.0:
            raise FormatError(path, number, f"probability must be in [0, 1], got {raw}")
        kind = fields[3].lower() if len(fields) == 4 else ""
        if kind not in ("", "inf", "nav"):
            raise FormatError(path, number, f"intent type must be 'inf' or 'nav', got {fields[3]!r}")
        if (topic, intent) in seen:
            raise FormatError(path, number, f"intent {intent} of topic {topic} listed twice (first on line {seen[topic, intent]})")
        seen[topic, intent] = number
        total = totals.get(topic, (0.0, number))[0] + prob
        totals[topic] = (total, number)
        out.setdefault(topic, []).append(Intent(intent, prob, kind))  # type: ignore[arg-type]
    for topic, (total, last) in totals.items():
        if total > 1.0 + SUM_TOLERANCE:
            raise FormatError(path, last, f"probabilities of topic {topic} sum to {total:.6g} > 1")
    return out
