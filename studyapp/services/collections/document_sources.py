"""Documents read from where collections keep them: WARC archives, folders of HTML files, JSON Lines.

Every reader streams: one record at a time, and only the documents asked for (``wanted``) are
parsed, so a 1 GB archive costs the memory of one record. Untrusted archives are bounded
(:mod:`.bounded_input`): decompressed bytes per record and per file, records over the limit skipped
and counted, damaged gzip and non-WARC data reported as ``file: reason`` with the record number, a
truncated file said so, text in any encoding. HTML becomes a title and the page's main
content with Resiliparse (``resiliparse.extract.html2text`` with ``main_content=True``, built for
web archives such as ClueWeb and Common Crawl: it drops navigation, boilerplate, scripts and
styles); WARC records are read with FastWARC (Resiliparse's WARC reader), docids from the
``WARC-TREC-ID`` header and URLs from ``WARC-Target-URI``, as ClueWeb09/12 ship them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from fastwarc.warc import ArchiveIterator, WarcRecordType
from resiliparse.extract.html2text import extract_plain_text
from resiliparse.parse.encoding import bytes_to_str, detect_encoding
from resiliparse.parse.html import HTMLTree

from evaluation.wording import named
from studyapp.exceptions import ImportFailed
from studyapp.services.collections.bounded_input import CHUNK, BoundedStream, ReadNotes

TEXT_MAX = 20_000  # characters of main content kept per document: plenty for snippets


@dataclass
class ReadContext:
    """What a reader needs besides the path: which documents to parse, a progress callback (records read)
    and where to note what was skipped or repaired (with the limits)."""

    wanted: Callable[[str], bool]
    tick: Callable[[int], None]
    notes: ReadNotes


@dataclass(frozen=True)
class DocumentText:
    """A document's display data as read: its title, URL and main-content text (any may be empty)."""

    docid: str
    url: str
    title: str
    text: str


def from_html(docid: str, url: str, html: bytes | str) -> DocumentText:
    """Title and main content of an HTML page."""
    if isinstance(html, bytes):
        html = bytes_to_str(html, detect_encoding(html))
    tree = HTMLTree.parse(html)
    title = " ".join((tree.title or "").split())
    text = extract_plain_text(tree, main_content=True, alt_texts=False, links=False, list_bullets=False)
    if not text.strip():  # a page the main-content heuristic empties entirely: keep all its text
        text = extract_plain_text(tree, main_content=False, alt_texts=False, links=False, list_bullets=False)
    return DocumentText(docid, url, title, text.strip()[:TEXT_MAX])


def _http_body(payload: bytes) -> bytes:
    """The body of an HTTP response record (ClueWeb's records hold the response with its headers)."""
    for sep in (b"\r\n\r\n", b"\n\n"):
        head, found, body = payload.partition(sep)
        if found and head[:5].upper() == b"HTTP/":
            return body
    return payload


def _record_body(record: object, keep: bool) -> tuple[bytes, int]:
    """The record's block (if ``keep``) and its length as read, a chunk at a time."""
    parts, size = [], 0
    while chunk := record.reader.read(CHUNK):  # type: ignore[attr-defined]
        size += len(chunk)
        if keep:
            parts.append(chunk)
    return b"".join(parts), size


def read_warc(path: Path, ctx: ReadContext) -> Iterator[DocumentText]:
    """The wanted documents of a ``.warc`` or ``.warc.gz`` file (response and resource records)."""
    if not path.is_file():
        raise ImportFailed(f"{path}: no such file")
    limit = ctx.notes.limits.record_bytes
    types = WarcRecordType.response | WarcRecordType.resource
    with BoundedStream(path, ctx.notes.limits) as stream:
        records = ArchiveIterator(stream, record_types=types, parse_http=False)
        complete = 0  # records read to their end
        while True:
            try:
                record = next(records)
            except StopIteration:  # the end, or a plain file that ends inside a header
                stream.short = stream.short or (not stream.gzipped and _ends_inside_a_header(path))
                break
            except OSError as exc:  # FastWARC: what follows is not a WARC record
                # ... or the archive ends inside a record's header (gzip says so; a plain file's tail shows it)
                truncated = stream.truncated or (not stream.gzipped and _ends_inside_a_header(path))
                stream.truncated = stream.truncated or truncated
                if truncated and not stream.problem:
                    stream.problem = "the archive ends early (the file is truncated)"
                stream.check(complete, ctx.notes)
                if truncated:
                    break
                raise ImportFailed(f"{path}: after record {complete}: not a WARC record ({exc})") from None
            ctx.tick(1)
            docid = (record.headers.get("WARC-TREC-ID") or record.headers.get("WARC-Record-ID") or "").strip()
            oversized = record.content_length > limit
            body, size = _record_body(record, bool(docid) and not oversized and ctx.wanted(docid))
            headless = "Content-Length" not in record.headers  # the file ended inside this record's header
            if stream.problem or size < record.content_length or headless:  # ... or inside its block, or broke
                stream.short = size < record.content_length or headless
                break
            complete += 1
            if oversized:
                ctx.notes.skip_oversized(f"{path}: record {complete} ({docid or 'no id'})", record.content_length)
            elif body:
                url = (record.headers.get("WARC-Target-URI") or "").strip()
                yield from_html(docid, url, _http_body(body))
        stream.check(complete, ctx.notes, ended=True)


def _ends_inside_a_header(path: Path) -> bool:
    """Does the plain WARC file at ``path`` end inside a record's header (after the last complete block, only the
    start of a header: ``WARC/1.0`` and header lines that never reach their blank line)?"""
    with path.open("rb") as file:
        file.seek(max(0, path.stat().st_size - 64 * 1024))
        tail = file.read()
    end = tail.rfind(b"\r\n\r\n")
    rest = (tail[end + 4 :] if end >= 0 else tail).lstrip(b"\r\n")
    return bool(rest) and (b"WARC/1.".startswith(rest[:7]) if len(rest) < 7 else rest.startswith(b"WARC/1."))


def read_html_folder(path: Path, ctx: ReadContext) -> Iterator[DocumentText]:
    """Files named ``<docid>`` or ``<docid>.html``/``.htm`` in a folder (not recursive)."""
    for file in sorted(path.iterdir()):
        ctx.tick(1)
        if not file.is_file():
            continue
        docid = file.name.removesuffix(".html").removesuffix(".htm")
        if not ctx.wanted(docid):
            continue
        size = file.stat().st_size
        if size > ctx.notes.limits.record_bytes:
            ctx.notes.skip_oversized(str(file), size)
            continue
        yield from_html(docid, "", file.read_bytes())


def read_jsonl(path: Path, ctx: ReadContext) -> Iterator[DocumentText]:
    """``{"docid", "url"?, "title"?, "html"? | "text"?}`` per line (``.jsonl`` or ``.jsonl.gz``); errors name the
    file and line; lines over the limit per record are skipped and counted."""
    limit = ctx.notes.limits.record_bytes
    with BoundedStream(path, ctx.notes.limits) as stream:
        number = 0
        while line := stream.readline(limit + 1):
            number += 1
            ctx.tick(1)
            if len(line) > limit and not line.endswith(b"\n"):
                ctx.notes.skip_oversized(f"{path}:{number}", len(line) + stream.skip_line())
                continue
            if not line.strip():
                continue
            try:
                row = json.loads(ctx.notes.decode(line, f"{path}:{number}"))
            except json.JSONDecodeError as exc:
                raise ImportFailed(f"{path}:{number}: not a JSON object ({exc.msg})") from None
            problem = _jsonl_problem(row)
            if problem:
                raise ImportFailed(f"{path}:{number}: {problem}")
            if not ctx.wanted(row["docid"]):
                continue
            url, title = row.get("url", ""), row.get("title", "")
            if "html" in row:
                doc = from_html(row["docid"], url, row["html"])
                yield DocumentText(doc.docid, url, title or doc.title, doc.text)
            else:
                yield DocumentText(row["docid"], url, " ".join(title.split()), " ".join(row.get("text", "").split())[:TEXT_MAX])
        stream.check(number - 1 if stream.problem else number, ctx.notes, ended=True, unit="line")


def _jsonl_problem(row: object) -> str:
    if not isinstance(row, dict):
        return "not a JSON object"
    unknown = set(row) - {"docid", "url", "title", "html", "text"}
    if unknown:
        return f"unknown {named('key', sorted(unknown))} (expected docid, url, title, html or text)"
    if not isinstance(row.get("docid"), str) or not row["docid"].strip():
        return "no docid"
    if "html" in row and "text" in row:
        return "give html or text, not both"
    bad = [k for k, v in row.items() if not isinstance(v, str)]
    return f"{', '.join(bad)} must be text" if bad else ""


def reader_for(path: Path) -> Callable[[Path, ReadContext], Iterator[DocumentText]]:
    """The reader of ``path`` by its kind: a folder, a WARC file or a JSON Lines file (gzip or not)."""
    if path.is_dir():
        return read_html_folder
    name = path.name.lower()
    if name.endswith((".warc", ".warc.gz", ".warc.gzip")):
        return read_warc
    if name.endswith((".jsonl", ".json", ".jsonl.gz", ".json.gz")):
        return read_jsonl
    if not path.exists():
        raise ImportFailed(f"{path}: no such file or folder")
    raise ImportFailed(f"{path}: not a WARC file (.warc, .warc.gz), a folder of HTML files or JSON Lines (.jsonl, .jsonl.gz)")
