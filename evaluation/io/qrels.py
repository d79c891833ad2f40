"""Diversity qrels readers: TREC ``topic subtopic docid grade`` and NTCIR Dqrels ``topic intent docid Lk``.

Both return :data:`evaluation.collection.Judgments` (topic -> doc -> intent -> grade) and validate
the whole file first: any problem raises ``FormatError(path, line, reason)`` and nothing is returned.

* TREC: grade is an integer; negative grades (spam ``-2``) are judged-nonrelevant, stored as 0
  (docs/metrics.md#grades-and-gains).
* NTCIR: level ``L0``..``L15``; intent ``0`` marks a judged document relevant to nothing and must
  carry ``L0`` (NTCIREVAL convention).
* A repeated ``(topic, intent, doc)`` is an error (docs/metrics.md#grades-and-gains); ``on_duplicate="max"`` keeps the
  highest grade instead.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from evaluation.collection import Judgments
from evaluation.exceptions import FormatError
from evaluation.io._lines import expect_columns, numbered_fields, parse_int

QrelsFormat = Literal["auto", "trec", "ntcir"]
_LEVEL = re.compile(r"^L(\d+)$")


def detect_qrels_format(path: str | Path) -> str:
    """``ntcir`` when the 4th column of the first data line looks like ``L<k>``, else ``trec``."""
    for _, fields in numbered_fields(path):
        return "ntcir" if len(fields) == 4 and fields[3].startswith("L") else "trec"
    return "trec"  # pragma: no cover - numbered_fields raises on empty files


def read_qrels(
    path: str | Path,
    fmt: QrelsFormat = "auto",
    *,
    on_duplicate: Literal["error", "max"] = "error",
) -> Judgments:
    """Read a diversity qrels file (TREC or NTCIR Dqrels; ``fmt="auto"`` detects it)."""
    if on_duplicate not in ("error", "max"):
        raise ValueError(f"on_duplicate must be 'error' or 'max', got {on_duplicate!r}")
    if fmt == "auto":
        fmt = detect_qrels_format(path)  # type: ignore[assignment]
    if fmt not in ("trec", "ntcir"):
        raise ValueError(f"unknown qrels format {fmt!r}")
    judgments: Judgments = {}
    first_seen: dict[tuple[str, str, str], int] = {}
    for number, fields in numbered_fields(path):
        if fmt == "trec":
            expect_columns(path, number, fields, (4,), "topic subtopic docid grade")
            topic, intent, doc, raw = fields
            grade = max(0, parse_int(path, number, raw, "grade"))
        else:
            expect_columns(path, number, fields, (4,), "topic intent docid Lk")
            topic, intent, doc, raw = fields
            match = _LEVEL.match(raw)
            if not match:
                raise FormatError(path, number, f"relevance level must look like L0..L15, got {raw!r}")
            grade = int(match.group(1))
            if grade > 15:
                raise FormatError(path, number, f"relevance level above L15: {raw!r}")
            parse_int(path, number, intent, "intent")
        docs = judgments.setdefault(topic, {})
        grades = docs.setdefault(doc, {})
        if fmt == "ntcir" and intent == "0" and grade != 0:
            raise FormatError(path, number, f"intent 0 means 'relevant to no intent' and must be L0, got {raw}")
        key = (topic, intent, doc)
        if key in first_seen:
            if on_duplicate == "error":
                raise FormatError(
                    path, number, f"duplicate judgment for topic {topic} intent {intent} doc {doc} (first on line {first_seen[key]})"
                )
            if intent in grades:
                grades[intent] = max(grades[intent], grade)
            continue
        first_seen[key] = number
        if fmt == "ntcir" and intent == "0":
            continue  # judged, relevant to no intent: the document is known, no grade is stored
        grades[intent] = grade
    return judgments
