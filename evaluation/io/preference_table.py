"""The preference export as a typed table: one schema for every registered format.

:data:`EXPORT_COLUMNS` is the study app's export (docs/data-dictionary.md): each column with its type.
Every format stores the same values (text formats as text, Parquet typed): ids (``topic``,
``subtopic``, names) are strings, never numbers, and an empty string cell is a null (the subtopic of
a topic-level answer, the ``check_kind`` of a regular item, the reason of a valid annotator); JSON Lines
and Parquet write it as null, CSV as an empty cell. ``check`` is a boolean in every format (true on
check items, false on regular ones, never null). :func:`read_export` reads any registered format
back into a DataFrame with the dtypes of :data:`PANDAS_DTYPES` (pandas' nullable types), so an
export read from CSV, JSON Lines or Parquet is the same DataFrame and joins scores without casts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import pandas as pd

from evaluation.exceptions import FormatError
from evaluation.io.preference_formats import Column, Kind, read_records

# (column, type): the order of the columns in every format (docs/data-dictionary.md describes each).
EXPORT_COLUMNS: tuple[Column, ...] = (
    ("study", "string"),
    ("presentation", "int"),
    ("level", "string"),
    ("topic", "string"),
    ("subtopic", "string"),
    ("run_a", "string"),
    ("run_b", "string"),
    ("left_run", "string"),
    ("shown_value", "int"),
    ("value", "int"),
    ("check", "bool"),
    ("check_kind", "string"),
    ("annotator", "string"),
    ("position", "int"),
    ("server_seconds", "float"),
    ("client_ms", "int"),
    ("visible_ms", "int"),
    ("first_interaction_ms", "int"),
    ("late", "bool"),
    ("valid", "bool"),
    ("exclusion_reason", "string"),
    ("served_at", "timestamp"),
    ("answered_at", "timestamp"),
)
PANDAS_DTYPES: dict[Kind, str] = {
    "string": "string",
    "int": "Int64",
    "float": "Float64",
    "bool": "boolean",
    "timestamp": "datetime64[us, UTC]",
}
BOOLEANS = {"true": True, "false": False, "1": True, "0": False}


def with_nulls(rows: Iterable[Mapping[str, Any]], columns: Sequence[Column]) -> Iterable[dict[str, Any]]:
    """``rows`` with every empty string of a string column as ``None`` (what the writers store as null)."""
    strings = [name for name, kind in columns if kind == "string"]
    for row in rows:
        out = dict(row)
        for name in strings:
            if out.get(name) == "":
                out[name] = None
        yield out


def _parsers() -> dict[Kind, Callable[[str], Any]]:
    return {
        "string": str,
        "int": int,
        "float": float,
        "bool": lambda cell: BOOLEANS[cell.lower()],
        "timestamp": datetime.fromisoformat,
    }


def read_export(path: str | Path, columns: Sequence[Column] = EXPORT_COLUMNS) -> pd.DataFrame:
    """A preference file of any registered format as a DataFrame typed by ``columns`` (the export's by
    default; a column the schema does not name is a string). Empty cells and nulls are ``<NA>``.

    Raises ``FormatError`` naming the file and line of a cell that is not of its column's type."""
    records = read_records(path)
    kinds: dict[str, Kind] = {name: kind for name, kind in columns}
    names = list(records.columns)
    parsers = _parsers()
    values: dict[str, list[Any]] = {name: [] for name in names}
    for line, cells in records.rows:
        for name in names:
            cell = cells.get(name, "")
            kind = kinds.get(name, "string")
            try:
                values[name].append(None if cell == "" else parsers[kind](cell))
            except (ValueError, KeyError):
                raise FormatError(path, line, f"{name}: {cell!r} is not of type {kind}") from None
    data = {}
    for name in names:
        kind = kinds.get(name, "string")
        if kind == "timestamp":
            data[name] = pd.Series(pd.to_datetime(values[name], utc=True), dtype=PANDAS_DTYPES[kind])
        else:
            data[name] = pd.Series(values[name], dtype=PANDAS_DTYPES[kind])
    return pd.DataFrame(data, columns=names)
