"""Spreadsheet-safe CSV cells: the one escaping rule of every CSV file the app writes.

A spreadsheet runs a cell that begins with ``=``, ``+``, ``-`` or ``@`` as a formula, and a tab or
carriage return in front can smuggle one past a reader that trims (the OWASP "CSV injection" list).
Text reaching our CSV files comes from outside (run and topic names of an imported collection, staff
reasons, platform ids), so :func:`escape_cell` puts an apostrophe in front of such a cell; the
apostrophe is what spreadsheets themselves use to mark text. Numbers are left alone: ``-3`` or
``-0.25`` is a plain number in every spreadsheet, and the analysis reads signed answers. The rule is
documented in docs/data-dictionary.md#spreadsheet-safe-csv.
"""

from __future__ import annotations

import re

import pandas as pd

FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?|[+-]?(inf|nan)")


def escape_cell(text: str) -> str:
    """``text`` with an apostrophe in front when a spreadsheet would run it as a formula (numbers kept)."""
    if text[:1] in FORMULA_PREFIXES and not _NUMBER.fullmatch(text):
        return "'" + text
    return text


def escape_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``frame`` whose text cells are escaped (for tables rendered as CSV, e.g. the report's)."""
    out = frame.copy()
    for column in out.columns:
        if not pd.api.types.is_numeric_dtype(out[column]) and not pd.api.types.is_bool_dtype(out[column]):
            out[column] = out[column].map(lambda v: escape_cell(v) if isinstance(v, str) else v)
    out.columns = [escape_cell(str(c)) for c in out.columns]
    return out
