"""TREC run files ``topic Q0 docid rank score tag`` -> :class:`Run` (ranked docids per topic).

Ordering (spec §1.4, register #5):

* ``score`` (default; trec_eval / ndeval ``-traditional``): score descending, ties by docid descending;
* ``rank``: the rank column ascending (ndeval default; a repeated rank in a topic is an error);
* ``file``: the order of the lines (NTCIREVAL, RBU jar);
* ``pyndeval``: score descending, ties by docid ascending.

A document listed twice for a topic is kept at its first (highest-ranked) position with a warning
(``on_duplicate_doc="keep_first"``), or rejected (``"error"``, ndeval's behaviour).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from evaluation.exceptions import EvaluationError, EvaluationWarning, FormatError
from evaluation.io._lines import expect_columns, numbered_fields, parse_float, parse_int

RunOrder = Literal["score", "rank", "file", "pyndeval"]
ORDERS: tuple[str, ...] = ("score", "rank", "file", "pyndeval")


@dataclass(frozen=True)
class Run:
    """A system's ranked lists: ``lists[topic]`` is the ranked tuple of docids (best first)."""

    name: str
    lists: Mapping[str, Sequence[str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.name:
            raise EvaluationError("a run needs a non-empty name")
        for topic, docs in self.lists.items():
            if len(set(docs)) != len(docs):
                raise EvaluationError(f"run {self.name} topic {topic}: duplicate docids; use dedupe_ranked()")


def dedupe_ranked(docs: Sequence[str], *, run: str, topic: str, on_duplicate_doc: str = "keep_first", where: str = "") -> tuple[str, ...]:
    """Drop later occurrences of a docid (spec §1.4, register #6), warning once; or raise."""
    seen: set[str] = set()
    out: list[str] = []
    dropped: list[str] = []
    for doc in docs:
        if doc in seen:
            dropped.append(doc)
            continue
        seen.add(doc)
        out.append(doc)
    if dropped:
        message = f"run {run} topic {topic}: duplicate docid(s) {', '.join(sorted(set(dropped)))}"
        if on_duplicate_doc == "error":
            raise EvaluationError(f"{where}{message}")
        warnings.warn(f"{message}; kept the highest-ranked occurrence", EvaluationWarning, stacklevel=3)
    return tuple(out)


def read_run(
    path: str | Path,
    *,
    order: RunOrder = "score",
    on_duplicate_doc: Literal["keep_first", "error"] = "keep_first",
    name: str | None = None,
) -> Run:
    """Read a TREC run file. The run is named after the tag column of its first line unless ``name``."""
    if order not in ORDERS:
        raise ValueError(f"order must be one of {', '.join(ORDERS)}, got {order!r}")
    if on_duplicate_doc not in ("keep_first", "error"):
        raise ValueError(f"on_duplicate_doc must be 'keep_first' or 'error', got {on_duplicate_doc!r}")
    rows: dict[str, list[tuple[float, int, int, str]]] = {}
    tag = None
    ranks: dict[tuple[str, int], int] = {}
    for number, fields in numbered_fields(path):
        expect_columns(path, number, fields, (6,), "topic Q0 docid rank score tag")
        topic, _, doc, raw_rank, raw_score, line_tag = fields
        rank = parse_int(path, number, raw_rank, "rank")
        score = parse_float(path, number, raw_score, "score")
        if tag is None:
            tag = line_tag
        if order == "rank":
            if (topic, rank) in ranks:
                raise FormatError(path, number, f"rank {rank} repeated for topic {topic} (first on line {ranks[topic, rank]})")
            ranks[topic, rank] = number
        rows.setdefault(topic, []).append((score, rank, number, doc))
    lists: dict[str, tuple[str, ...]] = {}
    run_name = name or tag or Path(path).stem
    for topic, entries in rows.items():
        if order == "score":
            entries.sort(key=lambda e: e[3], reverse=True)
            entries.sort(key=lambda e: -e[0])
        elif order == "pyndeval":
            entries.sort(key=lambda e: (-e[0], e[3]))
        elif order == "rank":
            entries.sort(key=lambda e: e[1])
        if on_duplicate_doc == "error":
            seen: dict[str, int] = {}
            for _, _, number, doc in sorted(entries, key=lambda e: e[2]):
                if doc in seen:
                    raise FormatError(path, number, f"docid {doc} repeated for topic {topic} (first on line {seen[doc]})")
                seen[doc] = number
        lists[topic] = dedupe_ranked([e[3] for e in entries], run=run_name, topic=topic)
    return Run(run_name, lists)
