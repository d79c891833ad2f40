"""Tidy result tables as TSV/CSV/JSON text, and the wide layouts of the papers.

Numbers are written losslessly (``repr`` of floats), integers as integers, NaN as ``nan`` (JSON
``null``), infinities as ``inf``/``-inf`` (JSON strings), like the score tables.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from evaluation.exceptions import FormatError
from evaluation.io.spreadsheet import escape_cell, unescape_cell
from evaluation.wording import named

FORMATS = ("tsv", "csv", "json")


def _cell(value: object) -> str:
    if value is None:
        return "nan"
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        value = float(value)
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if pd.isna(value):
        return "nan"
    return str(value)


def _json_value(value: object) -> object:
    if value is None:
        return None
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        value = float(value)
        if math.isnan(value):
            return None
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return value
    if pd.isna(value):
        return None
    return str(value)


def render_table(frame: pd.DataFrame, fmt: str = "tsv") -> str:
    """Render a tidy frame: header + one line per row (TSV/CSV) or a list of records (JSON)."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    columns = [str(c) for c in frame.columns]
    rows = frame.astype(object).itertuples(index=False, name=None)
    if fmt == "json":
        records = [{c: _json_value(v) for c, v in zip(columns, row)} for row in rows]
        return json.dumps(records, indent=1, allow_nan=False) + "\n"
    buffer = io.StringIO()
    writer = csv.writer(buffer, delimiter="\t" if fmt == "tsv" else ",", lineterminator="\n")
    # CSV opens in spreadsheets: text cells that would run as formulas are escaped (evaluation.io.spreadsheet).
    cell = (lambda v: escape_cell(c) if isinstance(c := _cell(v), str) else c) if fmt == "csv" else _cell
    writer.writerow([escape_cell(c) for c in columns] if fmt == "csv" else columns)
    for row in rows:
        writer.writerow([cell(v) for v in row])
    return buffer.getvalue()


def read_table(path: str, required: Sequence[str]) -> pd.DataFrame:
    """Read back a tidy table written by :func:`render_table` (TSV, CSV or JSON, by content).

    Raises FormatError naming ``path`` when it is empty, unparsable or lacks a ``required`` column,
    so a companion input (``--power``, ``--agreement``) fails before any work is done.
    """
    from evaluation.io._lines import read_text

    text = read_text(path)
    if not text.strip():
        raise FormatError(path, 0, "file is empty")
    try:
        if text.lstrip().startswith("["):
            frame = pd.DataFrame.from_records(json.loads(text))
        else:
            sep = "\t" if "\t" in text.lstrip().splitlines()[0] else ","
            frame = pd.read_csv(io.StringIO(text), sep=sep, keep_default_na=False, na_values=["nan"])
            if sep == ",":  # undo render_table's spreadsheet escaping
                frame.columns = [unescape_cell(str(c)) for c in frame.columns]
                for column in frame.columns:
                    if not pd.api.types.is_numeric_dtype(frame[column]):
                        frame[column] = frame[column].map(lambda v: unescape_cell(v) if isinstance(v, str) else v)
    except (ValueError, TypeError) as exc:
        raise FormatError(path, 0, f"not a TSV, CSV or JSON table ({' '.join(str(exc).split())})") from None
    missing = [c for c in required if c not in frame.columns]
    if missing:
        raise FormatError(path, 0, f"lacks {named('column', missing)}; required: {' '.join(required)}")
    return frame


def concordance_matrix(table: pd.DataFrame, gold: str, measures: Sequence[str] | None = None, digits: int = 3) -> pd.DataFrame:
    """Chen et al. Table 2 layout for one gold standard: cell (row M1, column M2) = ``c1/c2 (N)``.

    ``c1`` is the concordance of the row metric, ``c2`` of the column metric and ``N`` the number
    of disagreements; both triangles are filled, the diagonal is empty.
    """
    rows = table[table["gold"] == gold]
    if rows.empty:
        raise ValueError(f"no concordance rows for gold standard {gold!r}")
    names = list(measures) if measures is not None else list(dict.fromkeys([*rows["measure_1"], *rows["measure_2"]]))
    cells: dict[str, dict[str, str]] = {column: dict.fromkeys(names, "") for column in names}  # column -> row -> text
    for r in rows.itertuples(index=False):
        if r.measure_1 in cells and r.measure_2 in cells:
            cells[r.measure_2][r.measure_1] = f"{_fmt(r.concordance_1, digits)}/{_fmt(r.concordance_2, digits)} ({r.disagreements})"
            cells[r.measure_1][r.measure_2] = f"{_fmt(r.concordance_2, digits)}/{_fmt(r.concordance_1, digits)} ({r.disagreements})"
    return pd.DataFrame({column: [cells[column][row] for row in names] for column in names}, index=names, columns=names)


def _fmt(value: float, digits: int) -> str:
    return "-" if value is None or not np.isfinite(value) else f"{value:.{digits}f}"


def agreement_grid(table: pd.DataFrame, measure: str, statistic: str = "tau_b") -> tuple[pd.DataFrame, pd.DataFrame]:
    """Bin x subrange grids (values and N) of one measure from an agreement table (Chen Fig. 1)."""
    from evaluation.meta.agreement import BINS, SUBRANGES

    rows = table[(table["measure"] == measure) & (table["statistic"] == statistic)]
    value = dict(zip(rows["subset"], rows["value"]))
    n = dict(zip(rows["subset"], rows["n"]))
    cells = [[f"{b}:{s}" for s in SUBRANGES] for b in BINS]
    values = pd.DataFrame([[float(value[c]) for c in row] for row in cells], index=list(BINS), columns=list(SUBRANGES), dtype=float)
    counts = pd.DataFrame([[int(n[c]) for c in row] for row in cells], index=list(BINS), columns=list(SUBRANGES))
    return values, counts


TABLES_EXTRA = "Markdown and LaTeX tables need tabulate and Jinja2 (dependencies of diversity-prefs: pip install tabulate Jinja2)"


def to_markdown(frame: pd.DataFrame, digits: int = 4) -> str:
    """A GitHub-flavoured Markdown table (floats rounded to ``digits``, NaN as ``nan``) for notes and docs:
    pandas' ``DataFrame.to_markdown`` (tabulate). Text cells are kept as written (no number parsing) with
    ``|`` escaped."""
    shown = frame.reset_index(drop=True).copy()
    text_columns = [
        n for n, c in enumerate(shown.columns) if not pd.api.types.is_numeric_dtype(shown[c]) or pd.api.types.is_bool_dtype(shown[c])
    ]
    for n in text_columns:
        shown.iloc[:, n] = [v.replace("|", "\\|") if isinstance(v, str) else v for v in shown.iloc[:, n]]
    try:
        text = shown.to_markdown(
            index=False, tablefmt="github", floatfmt=f".{digits}f", disable_numparse=text_columns if len(shown) else True
        )
    except ImportError as error:
        raise ImportError(f"{TABLES_EXTRA}: {error}") from error
    return text + "\n"


# After pandas' escape="latex" (& % $ # _ { } ~ ^ and the backslash): the characters that font encoding OT1, LaTeX's default, prints
# as other glyphs (< as an inverted !, > as an inverted ?, | as an em dash).
_LATEX_GLYPHS = str.maketrans({"<": r"\textless{}", ">": r"\textgreater{}", "|": r"\textbar{}"})


def _latex_text(value: object) -> str:
    """A cell's text (already escaped by pandas) with the OT1-misprinted characters as their text commands."""
    return str(value).translate(_LATEX_GLYPHS)


def to_latex(frame: pd.DataFrame, digits: int = 4) -> str:
    """A LaTeX ``tabular`` with booktabs rules (numbers right-aligned, floats rounded to ``digits``, NaN as
    ``--``, LaTeX's special characters escaped in cells and headers): pandas' ``Styler.to_latex`` (Jinja2)."""
    numeric = [pd.api.types.is_numeric_dtype(frame[c]) and not pd.api.types.is_bool_dtype(frame[c]) for c in frame.columns]
    text = [c for c, n in zip(frame.columns, numeric) if not n]
    try:
        styler = frame.reset_index(drop=True).style.format(precision=digits, na_rep="--", escape="latex")
        if text:
            styler = styler.format(_latex_text, subset=text, na_rep="--", escape="latex")
        styler = styler.format_index(_latex_text, escape="latex", axis=1).hide(axis="index")
        return styler.to_latex(hrules=True, column_format="".join("r" if n else "l" for n in numeric))
    except ImportError as error:
        raise ImportError(f"{TABLES_EXTRA}: {error}") from error
