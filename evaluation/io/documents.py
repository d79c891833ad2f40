"""Display data of documents (``docid, title, url, snippet``) for showing result pages.

Two formats, chosen by extension (``.jsonl``/``.json`` or ``.tsv``/``.txt``) or, otherwise, by the
first data line (``{`` means JSONL):

* JSONL: one object per line, ``{"docid": ..., "title": ..., "url": ..., "snippet": ...}``;
  only ``docid`` is required, unknown keys are rejected (they are usually typos).
* TSV: tab-separated ``docid title url snippet``. A first line with a field ``docid`` is a
  header and fixes the column order (the other columns are optional); without a header the
  columns are positional and trailing ones may be omitted.

The whole file is validated before anything is returned: a missing docid, a docid with
whitespace, a repeated docid, a non-text value or a URL that is not a well-formed ``http(s)://``
address with a host (:func:`url_problem`) raises ``FormatError(path, line, reason)``. Blank lines and ``#`` comments are skipped.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from evaluation.exceptions import FormatError
from evaluation.io._lines import read_text, text_lines
from evaluation.wording import named

FIELDS = ("docid", "title", "url", "snippet")


@dataclass(frozen=True)
class DocumentInfo:
    """What a result page shows for one document; empty strings when not given."""

    docid: str
    title: str = ""
    url: str = ""
    snippet: str = ""


def url_problem(url: str) -> str:
    """Why ``url`` cannot be a result link, or ``""`` when it can: result pages only link absolute
    ``http(s)://`` URLs with a host, a valid port, and no whitespace or control characters (never
    ``javascript:`` or ``data:`` ones)."""
    if any(ch.isspace() or ord(ch) < 32 or ord(ch) == 127 for ch in url):
        return "contains whitespace or control characters (write a space as %20)"
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - parsing the port raises ValueError for a bad one
    except ValueError as exc:
        return f"is not a valid URL ({exc})"
    if parts.scheme.lower() not in ("http", "https"):
        return "must start with http:// or https://"
    if not parts.hostname:
        return "has no host name"
    return ""


def _data_lines(path: str | Path) -> list[tuple[int, str]]:
    lines = [
        (number, raw) for number, raw in enumerate(text_lines(read_text(path)), start=1) if raw.strip() and not raw.lstrip().startswith("#")
    ]
    if not lines:
        raise FormatError(path, 0, "file is empty")
    return lines


def _detect(path: str | Path, first: str) -> str:
    suffix = Path(path).suffix.lower()
    if suffix in (".jsonl", ".json", ".ndjson"):
        return "jsonl"
    if suffix in (".tsv", ".txt", ".tab"):
        return "tsv"
    return "jsonl" if first.lstrip().startswith("{") else "tsv"


def _record(path: str | Path, number: int, values: dict[str, str]) -> DocumentInfo:
    docid = values.get("docid", "")
    if not docid:
        raise FormatError(path, number, "docid is missing or empty")
    if any(ch.isspace() for ch in docid):
        raise FormatError(path, number, f"docid must not contain whitespace, got {docid!r}")
    url = values.get("url", "")
    problem = url_problem(url) if url else ""
    if problem:
        raise FormatError(path, number, f"url {problem}, got {url[:200]!r}")
    return DocumentInfo(docid, values.get("title", ""), url, values.get("snippet", ""))


def _parse_jsonl(path: str | Path, number: int, line: str) -> dict[str, str]:
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as exc:
        raise FormatError(path, number, f"invalid JSON: {exc.msg} (column {exc.colno})") from None
    if not isinstance(obj, dict):
        raise FormatError(path, number, f"expected a JSON object, got {type(obj).__name__}")
    unknown = sorted(set(obj) - set(FIELDS))
    if unknown:
        raise FormatError(path, number, f"unknown {named('key', unknown)}; expected {', '.join(FIELDS)}")
    values: dict[str, str] = {}
    for key, value in obj.items():
        if value is None:
            value = ""
        if key == "docid" and isinstance(value, int) and not isinstance(value, bool):
            value = str(value)
        if not isinstance(value, str):
            raise FormatError(path, number, f"{key} must be a string, got {type(value).__name__}")
        values[key] = value.strip()
    return values


def _tsv_columns(path: str | Path, number: int, header: list[str]) -> list[str]:
    names = [h.strip().lower() for h in header]
    unknown = [n for n in names if n not in FIELDS]
    if unknown:
        raise FormatError(path, number, f"unknown {named('column', unknown)}; expected {', '.join(FIELDS)}")
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise FormatError(path, number, f"{named('column', repeated)} named twice in the header")
    return names


def read_documents(path: str | Path) -> dict[str, DocumentInfo]:
    """Read document display data; returns docid -> :class:`DocumentInfo` in file order."""
    lines = _data_lines(path)
    fmt = _detect(path, lines[0][1])
    columns: list[str] = list(FIELDS)
    if fmt == "tsv" and "docid" in [f.strip().lower() for f in lines[0][1].split("\t")]:
        columns = _tsv_columns(path, lines[0][0], lines[0][1].split("\t"))
        lines = lines[1:]
    out: dict[str, DocumentInfo] = {}
    first_seen: dict[str, int] = {}
    for number, line in lines:
        if fmt == "jsonl":
            values = _parse_jsonl(path, number, line)
        else:
            fields = line.split("\t")
            if len(fields) > len(columns):
                raise FormatError(
                    path, number, f"expected at most {len(columns)} tab-separated columns ({' '.join(columns)}), found {len(fields)}"
                )
            values = {name: value.strip() for name, value in zip(columns, fields)}
        info = _record(path, number, values)
        if info.docid in first_seen:
            raise FormatError(path, number, f"docid {info.docid} listed twice (first on line {first_seen[info.docid]})")
        first_seen[info.docid] = number
        out[info.docid] = info
    return out
