"""Preference file formats: the one registry that writes (the study app's exports and downloads) and
reads (every command that reads preferences, and the study app's import).

A format is one :class:`PreferenceFormat`: its name, file suffixes, content type, a writer of rows
and a reader of records. Adding one is a single :func:`register` call; ``manage.py
export_preferences --format``, the staff dashboard's download links and the readers pick it up
(docs/meta.md#preference-files). Registered here: ``csv`` (reads TSV too), ``jsonl`` and
``parquet`` (pyarrow, an optional dependency: ``pip install "diversity-prefs[parquet]"``).

Readers yield every data row as text cells (``{column: text}``, missing values empty, booleans
``true``/``false``, times ISO 8601) with its place in the file (a line for text formats, the
1-based row for Parquet), so one set of checks serves every format and errors name ``file:line``.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import IO, Any, Literal

from evaluation.exceptions import FormatError
from evaluation.io._lines import read_text, text_lines

Kind = Literal["string", "int", "float", "bool", "timestamp"]
Column = tuple[str, Kind]  # a column of a written file and the type a typed format (Parquet) stores
Cells = dict[str, str]


@dataclass(frozen=True)
class Records:
    """What a reader found: the columns (a text header, a JSON Lines file's first object, a Parquet
    schema), the line of the header (0 when there is none) and the data rows ``(line, cells)``."""

    columns: list[str]
    header_line: int
    rows: Iterator[tuple[int, Cells]]


Writer = Callable[[Iterable[Mapping[str, Any]], Sequence[Column], IO], int]
Reader = Callable[[Path], Records]


@dataclass(frozen=True)
class PreferenceFormat:
    """One file format for preference rows.

    ``write(rows, columns, stream)`` writes every row's ``columns`` in order and returns the number
    of rows; ``stream`` is text for text formats and bytes when ``binary``. ``read(path)`` returns
    :class:`Records`. ``sniff(head)`` says from a file's first bytes whether it is this format (for
    files whose suffix names none).
    """

    name: str
    suffixes: tuple[str, ...]
    content_type: str
    write: Writer
    read: Reader
    sniff: Callable[[bytes], bool]
    binary: bool = False
    spreadsheet: bool = False  # opened by spreadsheets: writers of untrusted text escape formula-like cells
    label: str = ""

    def __post_init__(self) -> None:
        if not self.name or not self.name.isidentifier():
            raise ValueError(f"a format name is a short identifier, got {self.name!r}")
        if not self.suffixes or not all(s.startswith(".") for s in self.suffixes):
            raise ValueError(f"format {self.name}: suffixes start with a dot, got {self.suffixes!r}")


_FORMATS: dict[str, PreferenceFormat] = {}


def register(fmt: PreferenceFormat) -> PreferenceFormat:
    """Add ``fmt`` to the registry (a name, and each suffix, may be registered once: a file is recognised by its suffix)."""
    if fmt.name in _FORMATS:
        raise ValueError(f"preference format {fmt.name!r} is already registered")
    owners = {suffix: other.name for other in _FORMATS.values() for suffix in other.suffixes}
    taken = [f"{suffix} ({owners[suffix]})" for suffix in fmt.suffixes if suffix in owners]
    if taken:
        raise ValueError(f"preference format {fmt.name!r}: suffix {', '.join(taken)} is taken")
    _FORMATS[fmt.name] = fmt
    return fmt


def unregister(name: str) -> None:
    """Remove a registered format (tests, plug-ins that replace one)."""
    _FORMATS.pop(name, None)


def format_names() -> tuple[str, ...]:
    """Names of the registered formats, in order of registration (what ``--format`` offers)."""
    return tuple(_FORMATS)


def get_format(name: str) -> PreferenceFormat:
    try:
        return _FORMATS[name]
    except KeyError:
        raise ValueError(f"unknown preference format {name!r}; known: {', '.join(_FORMATS)}") from None


def format_of(path: str | Path) -> PreferenceFormat:
    """The format of a file: by its suffix, else by its first bytes, else CSV/TSV text."""
    path = Path(path)
    for fmt in _FORMATS.values():
        if path.suffix.lower() in fmt.suffixes:
            return fmt
    try:
        with open(path, "rb") as handle:
            head = handle.read(512)
    except OSError:
        head = b""  # the reader reports the missing or unreadable file with its reason
    for fmt in _FORMATS.values():
        if fmt.sniff(head):
            return fmt
    return _FORMATS["csv"]


def read_records(path: str | Path) -> Records:
    """The records of a preferences file of any registered format; ``FormatError`` names file and line."""
    return format_of(path).read(Path(path))


def cell_text(value: Any) -> str:
    """A value as a text cell: empty for missing, ``true``/``false``, ISO 8601 for times."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, datetime):
        return value.isoformat()
    return str(value)


# --- CSV (and TSV when reading) --------------------------------------------------------------


def write_csv(rows: Iterable[Mapping[str, Any]], columns: Sequence[Column], stream: IO[str]) -> int:
    names = [name for name, _ in columns]
    writer = csv.writer(stream, lineterminator="\n")
    writer.writerow(names)
    count = 0
    for row in rows:
        writer.writerow([cell_text(row[c]) for c in names])
        count += 1
    return count


def read_delimited(path: Path) -> Records:
    """A CSV or TSV file with a header (tab-separated when its header line holds a tab)."""
    lines = text_lines(read_text(path))
    first = next((n for n, line in enumerate(lines) if line.strip()), None)
    if first is None:
        raise FormatError(path, 0, "file is empty")
    reader = csv.reader(io.StringIO("\n".join(lines[first:])), delimiter="\t" if "\t" in lines[first] else ",")
    header = [h.strip() for h in next(reader)]

    def rows() -> Iterator[tuple[int, Cells]]:
        for fields in reader:
            line = first + reader.line_num
            if not fields or all(not f.strip() for f in fields):
                continue
            if len(fields) != len(header):
                raise FormatError(path, line, f"expected {len(header)} fields, found {len(fields)}")
            yield line, dict(zip(header, (f.strip() for f in fields), strict=True))

    return Records(header, first + 1, rows())


# --- JSON Lines -----------------------------------------------------------------------------


def write_jsonl(rows: Iterable[Mapping[str, Any]], columns: Sequence[Column], stream: IO[str]) -> int:
    names = [name for name, _ in columns]
    count = 0
    for row in rows:
        record = {c: row[c].isoformat() if isinstance(row[c], datetime) else row[c] for c in names}
        stream.write(json.dumps(record, ensure_ascii=False) + "\n")
        count += 1
    return count


def read_jsonl(path: Path) -> Records:
    """One JSON object per line; the columns are the first object's keys."""
    numbered = [(n, line) for n, line in enumerate(text_lines(read_text(path)), start=1) if line.strip()]
    if not numbered:
        raise FormatError(path, 0, "file is empty")
    objects = (_json_object(path, n, line) for n, line in numbered)
    first_line, first = numbered[0][0], _json_object(path, *numbered[0])
    rows = ((n, {k: cell_text(v) for k, v in obj.items()}) for n, obj in zip((n for n, _ in numbered), objects, strict=True))
    return Records(list(first), first_line, rows)


def _json_object(path: Path, line: int, text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise FormatError(path, line, f"not a JSON object: {exc.msg}") from None
    if not isinstance(value, dict):
        raise FormatError(path, line, "not a JSON object")
    return value


# --- Parquet (pyarrow) ----------------------------------------------------------------------


def _pyarrow(path: str | Path | None = None) -> Any:
    try:
        import pyarrow
        import pyarrow.parquet  # noqa: F401 - the submodule the callers use
    except ImportError:
        reason = 'Parquet needs pyarrow: pip install "diversity-prefs[parquet]"'
        if path is None:
            raise ImportError(reason) from None
        raise FormatError(path, 0, reason) from None
    return pyarrow


ARROW_TYPES: dict[str, Callable[[Any], Any]] = {
    "string": lambda pa: pa.string(),
    "int": lambda pa: pa.int64(),
    "float": lambda pa: pa.float64(),
    "bool": lambda pa: pa.bool_(),
    "timestamp": lambda pa: pa.timestamp("us", tz="UTC"),
}


def arrow_schema(columns: Sequence[Column]) -> Any:
    pa = _pyarrow()
    return pa.schema([(name, ARROW_TYPES[kind](pa)) for name, kind in columns])


def write_parquet(rows: Iterable[Mapping[str, Any]], columns: Sequence[Column], stream: IO[bytes]) -> int:
    pa = _pyarrow()
    table = pa.Table.from_pylist(list(rows), schema=arrow_schema(columns))
    pa.parquet.write_table(table, stream)
    return table.num_rows


def read_parquet(path: Path) -> Records:
    """A Parquet file; a row's place is its 1-based row number."""
    pa = _pyarrow(path)
    try:
        table = pa.parquet.read_table(path)
    except FileNotFoundError:
        raise FormatError(path, 0, "no such file") from None
    except (OSError, pa.ArrowException) as exc:
        raise FormatError(path, 0, f"not a readable Parquet file ({exc})") from None
    if table.num_rows == 0 and not table.column_names:
        raise FormatError(path, 0, "file is empty")

    def rows() -> Iterator[tuple[int, Cells]]:
        number = 0
        for batch in table.to_batches():
            for record in batch.to_pylist():
                number += 1
                yield number, {k: cell_text(v) for k, v in record.items()}

    return Records(list(table.column_names), 0, rows())


register(
    PreferenceFormat(
        "csv",
        (".csv", ".tsv", ".txt"),
        "text/csv; charset=utf-8",
        write_csv,
        read_delimited,
        lambda head: False,
        spreadsheet=True,
        label="CSV",
    )
)
register(
    PreferenceFormat(
        "jsonl",
        (".jsonl", ".ndjson"),
        "application/x-ndjson; charset=utf-8",
        write_jsonl,
        read_jsonl,
        lambda head: head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"{"),
        label="JSON Lines",
    )
)
register(
    PreferenceFormat(
        "parquet",
        (".parquet", ".pq"),
        "application/vnd.apache.parquet",
        write_parquet,
        read_parquet,
        lambda head: head.startswith(b"PAR1"),
        binary=True,
        label="Parquet",
    )
)
