"""Tidy score tables ``run topic measure value``: writers (TSV/CSV/JSON) and a validating reader.

The per-topic table written by ``python -m evaluation score --per-topic`` is the input of every
``python -m evaluation meta`` command. Mean rows carry the topic ``all``.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import tempfile
from pathlib import Path

import pandas as pd

from evaluation.exceptions import FormatError
from evaluation.io._lines import read_text
from evaluation.io.spreadsheet import escape_cell, unescape_cell
from evaluation.wording import named

COLUMNS = ("run", "topic", "measure", "value")
FORMATS = ("tsv", "csv", "json")
MEAN_TOPIC = "all"


def format_value(value: float) -> str:
    """Shortest round-trip representation; NaN is written as ``nan`` (``null`` in JSON)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "nan"
    return repr(float(value))


def render_scores(frame: pd.DataFrame, fmt: str = "tsv") -> str:
    """Render a tidy score frame as text in ``fmt`` (tsv, csv or json)."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    missing = [c for c in COLUMNS if c not in frame.columns]
    if missing:
        raise ValueError(f"score frame lacks columns {missing}")
    rows = zip(*(frame[c].tolist() for c in COLUMNS))  # columns as lists: far quicker to walk than the frame's rows
    if fmt == "json":
        records = [{"run": r, "topic": t, "measure": m, "value": None if v is None or math.isnan(v) else float(v)} for r, t, m, v in rows]
        return json.dumps(records, indent=1, allow_nan=False) + "\n"
    buffer = io.StringIO()
    writer = csv.writer(buffer, delimiter="\t" if fmt == "tsv" else ",", lineterminator="\n")
    writer.writerow(COLUMNS)
    if fmt == "csv":  # spreadsheet-safe, as every CSV table of the package (docs/data-dictionary.md#spreadsheet-safe-csv)
        writer.writerows((escape_cell(str(r)), escape_cell(str(t)), escape_cell(str(m)), format_value(v)) for r, t, m, v in rows)
    else:
        writer.writerows((r, t, m, format_value(v)) for r, t, m, v in rows)
    return buffer.getvalue()


def write_atomic(path: str | Path, content: str | bytes) -> None:
    """Write ``content`` to ``path`` via a temporary file and rename: never a half-written file."""
    path = Path(path)
    directory = path.parent if str(path.parent) else Path(".")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    except OSError as error:  # a missing or unwritable folder: name the file asked for, not the temporary one
        raise type(error)(error.errno, error.strerror, str(path)) from None
    try:
        binary = isinstance(content, bytes)
        with os.fdopen(fd, "wb" if binary else "w", **({} if binary else {"encoding": "utf-8", "newline": ""})) as handle:
            handle.write(content)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def write_scores(frame: pd.DataFrame, path: str | Path, fmt: str | None = None) -> None:
    """Write a tidy score frame; the format defaults to the file extension (``.csv``, ``.json``, else TSV)."""
    write_atomic(path, render_scores(frame, fmt or guess_format(path)))


def guess_format(path: str | Path) -> str:
    suffix = Path(path).suffix.lower().lstrip(".")
    return suffix if suffix in FORMATS else "tsv"


def read_scores(path: str | Path) -> pd.DataFrame:
    """Read a score table (TSV, CSV or JSON as written by :func:`write_scores`).

    Returns a frame with columns ``run topic measure value`` (strings and float64). Raises
    FormatError with the line number for a missing column, a non-numeric value or a repeated
    ``(run, topic, measure)`` key.
    """
    text = read_text(path)
    if not text.strip():
        raise FormatError(path, 0, "file is empty")
    if text.lstrip().startswith("["):
        return _read_json(path, text)
    first = text.splitlines()[0]
    delimiter = "\t" if "\t" in first else ","
    reader = csv.reader(io.StringIO(text), delimiter=delimiter)
    header = [h.strip() for h in next(reader)]
    missing = [c for c in COLUMNS if c not in header]
    if missing:
        raise FormatError(path, 1, f"header lacks {named('column', missing)}; expected {' '.join(COLUMNS)}")
    position = {c: header.index(c) for c in COLUMNS}
    records: list[tuple[str, str, str, float]] = []
    seen: dict[tuple[str, str, str], int] = {}
    for number, fields in enumerate(reader, start=2):
        if not fields or all(not f.strip() for f in fields):
            continue
        if len(fields) != len(header):
            raise FormatError(path, number, f"expected {len(header)} fields, found {len(fields)}")
        run, topic, measure = (fields[position[c]].strip() for c in COLUMNS[:3])
        if delimiter == ",":  # a CSV score table this package wrote: its escaped cells back as they were
            run, topic, measure = unescape_cell(run), unescape_cell(topic), unescape_cell(measure)
        records.append((run, topic, measure, _parse_value(path, number, fields[position["value"]].strip())))
        _check_unique(path, number, (run, topic, measure), seen)
    return _frame(path, records)


def _read_json(path: str | Path, text: str) -> pd.DataFrame:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise FormatError(path, exc.lineno, f"invalid JSON: {exc.msg}") from None
    records: list[tuple[str, str, str, float]] = []
    seen: dict[tuple[str, str, str], int] = {}
    for index, item in enumerate(data, start=1):
        if not isinstance(item, dict) or any(c not in item for c in COLUMNS):
            raise FormatError(path, 0, f"record {index} must be an object with keys {', '.join(COLUMNS)}")
        value = item["value"]
        value = math.nan if value is None else _parse_value(path, 0, str(value))
        key = (str(item["run"]), str(item["topic"]), str(item["measure"]))
        records.append((*key, value))
        _check_unique(path, index, key, seen)
    return _frame(path, records)


def _parse_value(path: str | Path, number: int, text: str) -> float:
    if text.lower() in {"nan", "", "null", "none", "-"}:
        return math.nan
    try:
        return float(text)
    except ValueError:
        raise FormatError(path, number, f"value must be a number, got {text!r}") from None


def _check_unique(path: str | Path, number: int, key: tuple[str, str, str], seen: dict) -> None:
    if key in seen:
        raise FormatError(path, number, f"duplicate row for run={key[0]} topic={key[1]} measure={key[2]} (first on line {seen[key]})")
    seen[key] = number


def _frame(path: str | Path, records: list[tuple[str, str, str, float]]) -> pd.DataFrame:
    if not records:
        raise FormatError(path, 0, "no score rows")
    frame = pd.DataFrame.from_records(records, columns=list(COLUMNS))
    frame["value"] = frame["value"].astype("float64")
    return frame
