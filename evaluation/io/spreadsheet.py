"""Spreadsheet-safe CSV cells: the one escaping rule of every CSV file the app writes.

A spreadsheet runs a cell that begins with ``=``, ``+``, ``-`` or ``@`` as a formula, and a tab or
carriage return in front can smuggle one past a reader that trims (the OWASP "CSV injection" list).
Text reaching our CSV files comes from outside (run and topic names of an imported collection, staff
reasons, platform ids), so :func:`escape_cell` puts an apostrophe in front of such a cell; the
apostrophe is what spreadsheets themselves use to mark text. Numbers are left alone (``-3``,
``-0.25``, ``1e-05``): the analysis reads signed answers as they are. The rule is documented in
docs/data-dictionary.md#spreadsheet-safe-csv.
It lives in the ``evaluation`` package because the command line's CSV tables (``render_table``) and
the study app's files both use it: a report's tables and the command line that reproduces them
write the same bytes.
"""

from __future__ import annotations

import re

import pandas as pd

FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?|[+-]?(inf|nan)|[+-]")  # a lone sign is text


def escape_cell(text: str) -> str:
    """``text`` with an apostrophe in front when a spreadsheet could run it as a formula: it begins with
    ``=``, ``+``, ``-``, ``@``, a tab or a carriage return and is not a number."""
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


def unescape_cell(text: str) -> str:
    """The cell as it was before :func:`escape_cell` (reading back a CSV file this package wrote)."""
    if text[:1] == "'" and escape_cell(text[1:]) == text:
        return text[1:]
    return text
