"""Graded side-by-side preferences: the input of the agreement analyses (docs/metrics.md#run-pairs-and-signs).

Files: CSV or TSV with a header, JSON Lines or Parquet (any format of the registry in
:mod:`evaluation.io.preference_formats`, so every export of the study app). Required columns ``topic run_a run_b value``; optional
``level`` (``topic``, the default, or ``subtopic``), ``subtopic`` (required at subtopic level) and
``annotator``. Other columns (timings, the side shown left, ...) are ignored, except ``check``: a row
of a check item (``check`` true, or naming the kind as exports before ``check_kind`` did) compares a
run with itself and is refused.

``value`` is an integer in [-4, 4] on the 9-point scale; positive means ``run_b`` is preferred.
Rows are re-oriented to the canonical pair order ``run_a < run_b`` (by run name): a row given the
other way round is swapped and its value negated. Several rows for the same item
``(level, topic, subtopic, run_a, run_b)`` are different annotators; :func:`aggregate_preferences`
averages them from integer sums so that user ties are exact (``sum == 0``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from evaluation.exceptions import FormatError
from evaluation.io.preference_formats import read_records
from evaluation.wording import named

REQUIRED = ("topic", "run_a", "run_b", "value")
OPTIONAL = ("level", "subtopic", "annotator", "check")
REGULAR = ("", "false", "0")  # ``check`` cells of a regular item (empty: a file without check items)
LEVELS = ("topic", "subtopic")
SCALE = 4
VOTE_COLUMNS = ("level", "topic", "subtopic", "run_a", "run_b", "annotator", "value", "line")
ITEM_KEYS = ["level", "topic", "subtopic", "run_a", "run_b"]


def read_preferences(path: str | Path) -> pd.DataFrame:
    """Read a preferences file into canonical votes.

    Returns
    -------
    DataFrame with one row per answer and columns ``level topic subtopic run_a run_b annotator
    value line``: ``run_a < run_b``, ``value`` int64 in [-4, 4] oriented so that positive prefers
    ``run_b``, ``subtopic`` and ``annotator`` empty strings when not given, ``line`` the 1-based
    line of the answer in the file (the row of a Parquet file).

    Raises
    ------
    FormatError
        Missing column, value not an integer in [-4, 4], unknown level, the same run twice, a
        subtopic missing at subtopic level (or given at topic level), or the same annotator
        answering one item twice; the message names the file and line.
    """
    records = read_records(path)
    missing = [c for c in REQUIRED if c not in records.columns]
    if missing:
        raise FormatError(path, records.header_line, f"header lacks {named('column', missing)}; required: {' '.join(REQUIRED)}")
    wanted = [c for c in (*REQUIRED, *OPTIONAL) if c in records.columns]
    rows: list[tuple[str, str, str, str, str, str, int, int]] = []
    seen: dict[tuple[str, ...], int] = {}
    for line, cells in records.rows:
        rows.append(_parse_row(path, line, {c: cells.get(c, "").strip() for c in wanted}, seen))
    if not rows:
        raise FormatError(path, 0, "no preference rows")
    frame = pd.DataFrame.from_records(rows, columns=list(VOTE_COLUMNS))
    frame["value"] = frame["value"].astype(np.int64)
    frame["line"] = frame["line"].astype(np.int64)
    return frame


def _parse_row(path: str | Path, line: int, cells: dict[str, str], seen: dict[tuple[str, ...], int]) -> tuple:
    topic, run_a, run_b = cells["topic"], cells["run_a"], cells["run_b"]
    if cells.get("check", "").lower() not in REGULAR:
        raise FormatError(
            path, line, f"check item (check = {cells['check']!r}), not a preference between two runs; export without --include-checks"
        )
    for name, cell in (("topic", topic), ("run_a", run_a), ("run_b", run_b)):
        if not cell:
            raise FormatError(path, line, f"{name} is empty")
    if run_a == run_b:
        raise FormatError(path, line, f"run_a and run_b are the same run {run_a!r}")
    try:
        value = int(cells["value"])
    except ValueError:
        raise FormatError(path, line, f"value must be an integer in [-{SCALE}, {SCALE}], got {cells['value']!r}") from None
    if not -SCALE <= value <= SCALE:
        raise FormatError(path, line, f"value must be in [-{SCALE}, {SCALE}], got {value}")
    level = cells.get("level", "") or "topic"
    if level not in LEVELS:
        raise FormatError(path, line, f"unknown level {level!r}; expected topic or subtopic")
    subtopic = cells.get("subtopic", "")
    if level == "subtopic" and not subtopic:
        raise FormatError(path, line, "subtopic-level row without a subtopic")
    if level == "topic" and subtopic:
        raise FormatError(path, line, f"topic-level row names subtopic {subtopic!r}; set level to subtopic")
    if run_a > run_b:
        run_a, run_b, value = run_b, run_a, -value
    annotator = cells.get("annotator", "")
    if annotator:
        key = (level, topic, subtopic, run_a, run_b, annotator)
        if key in seen:
            raise FormatError(path, line, f"annotator {annotator!r} answered this item twice (first on line {seen[key]})")
        seen[key] = line
    return level, topic, subtopic, run_a, run_b, annotator, value, line


def aggregate_preferences(votes: pd.DataFrame) -> pd.DataFrame:
    """Mean preference per item (docs/metrics.md#run-pairs-and-signs).

    Parameters
    ----------
    votes : frame as returned by :func:`read_preferences`.

    Returns
    -------
    DataFrame with columns ``level topic subtopic run_a run_b n total p``: ``n`` answers, their
    integer ``total`` and ``p = total / n`` (a user tie is exactly ``total == 0``), sorted by the
    item key.
    """
    missing = [c for c in ("level", "topic", "subtopic", "run_a", "run_b", "value") if c not in votes.columns]
    if missing:
        raise ValueError(f"votes lack {named('column', missing)}")
    grouped = votes.groupby(ITEM_KEYS, sort=True)["value"].agg(n="size", total="sum").reset_index()
    grouped["n"] = grouped["n"].astype(np.int64)
    grouped["total"] = grouped["total"].astype(np.int64)
    grouped["p"] = grouped["total"] / grouped["n"]
    return grouped
