"""Reading untrusted archives without exhausting the machine: limits on decompressed bytes, clear errors.

A source file is read through :class:`BoundedStream`: gzip is recognised by its magic bytes (not the
name), decompressed bytes are counted against the limit per file, and a damaged gzip stream or a file
that ends early is remembered rather than raised (FastWARC's reader, which pulls from this stream,
must only ever see bytes or the end). The readers then say ``file: reason`` with the record number
(:meth:`BoundedStream.check`). Records larger than the limit per record are skipped and counted
(:class:`ReadNotes`); text that is not UTF-8 is decoded anyway and its replaced characters counted.
Nothing here holds more than one record (at most ``Limits.record_bytes``) in memory.
"""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from studyapp.exceptions import ImportFailed
from studyapp.services.wording import count

MB = 1024 * 1024
CHUNK = 1024 * 1024  # bytes read at a time


@dataclass(frozen=True)
class Limits:
    """Decompressed bytes allowed per record (a WARC record, a JSON line, an HTML file) and per source file."""

    record_bytes: int = 16 * MB
    file_bytes: int = 64 * 1024 * MB

    def __post_init__(self) -> None:
        if self.record_bytes < 1024 or self.file_bytes < self.record_bytes:
            raise ImportFailed(
                f"the limits must allow at least 1 KB per record and a file at least one record long, got "
                f"{self.record_bytes} bytes per record and {self.file_bytes} per file"
            )


def megabytes(n: int) -> str:
    return f"{n / MB:.1f} MB" if n < 1024 * MB else f"{n / (1024 * MB):.1f} GB"


@dataclass
class ReadNotes:
    """What the readers skipped or repaired, for the import's summary (one line per kind)."""

    limits: Limits = field(default_factory=Limits)
    oversized: int = 0  # records over the limit per record, skipped
    oversized_example: str = ""
    truncated: list[str] = field(default_factory=list)  # one line per file that ends early
    replaced: int = 0  # characters replaced in text that was not valid in its encoding
    not_utf8: int = 0  # lines or records decoded with another encoding than UTF-8
    replaced_example: str = ""

    def skip_oversized(self, where: str, size: int) -> None:
        self.oversized += 1
        self.oversized_example = self.oversized_example or f"{where} ({megabytes(size)})"

    def decode(self, data: bytes, where: str) -> str:
        """``data`` as text: UTF-8 (a byte-order mark dropped), else its detected encoding; characters
        that cannot be decoded become U+FFFD and are counted."""
        try:
            return data.decode("utf-8-sig")
        except UnicodeDecodeError:
            pass
        from resiliparse.parse.encoding import detect_encoding

        encoding = detect_encoding(data) or "utf-8"
        try:
            text = data.decode(encoding, errors="replace")
        except LookupError:
            encoding, text = "utf-8", data.decode("utf-8", errors="replace")
        self.not_utf8 += 1
        replaced = text.count("\ufffd") - data.count("\ufffd".encode())
        if replaced > 0:
            self.replaced += replaced
        self.replaced_example = self.replaced_example or f"{where} (read as {encoding})"
        return text

    def lines(self) -> list[str]:
        out = list(self.truncated)
        if self.oversized:
            out.append(
                f"Skipped {count(self.oversized, 'record')} over {megabytes(self.limits.record_bytes)} decompressed "
                f"(--max-record-mb), e.g. {self.oversized_example}."
            )
        if self.not_utf8:
            out.append(
                f"{count(self.not_utf8, 'record or line', 'records or lines')} not in UTF-8, decoded by their detected encoding, "
                f"{count(self.replaced, 'character')} replaced, e.g. {self.replaced_example}."
            )
        return out


class BoundedStream:
    """A source file, decompressed if it is gzip, that counts what it hands out and stops at the limit per
    file. Errors are kept in :attr:`problem` (the stream then ends) for :meth:`check` to report."""

    def __init__(self, path: Path, limits: Limits) -> None:
        self.path = path
        self.limits = limits
        self.position = 0  # decompressed bytes handed out
        self.problem = ""
        self.truncated = False
        self.short = False  # the reader found its last record shorter than it said (set by the reader)
        self.raw: BinaryIO = path.open("rb")
        self.gzipped = self.raw.read(2) == b"\x1f\x8b"
        self.raw.seek(0)
        self.stream: BinaryIO = gzip.GzipFile(fileobj=self.raw, mode="rb") if self.gzipped else self.raw

    def read(self, size: int = -1) -> bytes:
        allowed = self.limits.file_bytes + 1 - self.position
        size = allowed if size is None or size < 0 else min(size, allowed)
        # read1: what one read of the file gives, so the records before a truncation are handed out first
        return self._guarded(self.stream.read1 if self.gzipped else self.stream.read, size)

    def _guarded(self, read: Callable[[int], bytes], size: int) -> bytes:
        """``read(size)``, or b"" with :attr:`problem` said once the file is truncated, damaged or over the limit."""
        if self.problem:
            return b""
        try:
            data = read(size)
        except EOFError:
            self.truncated, self.problem = True, "the archive ends early (the file is truncated)"
            return b""
        except (OSError, zlib.error) as exc:
            self.problem = f"not a valid gzip file ({exc})"
            return b""
        self.position += len(data)
        if self.position > self.limits.file_bytes:
            self.problem = (
                f"more than {megabytes(self.limits.file_bytes)} decompressed (--max-file-mb; "
                f"{megabytes(self.raw.tell())} of the file read): not imported"
            )
            return b""
        return data

    def tell(self) -> int:
        return self.position

    def readline(self, limit: int) -> bytes:
        """One line of at most ``limit`` bytes (longer: the first ``limit`` bytes; see :meth:`skip_line`)."""
        return self._guarded(self.stream.readline, min(limit, self.limits.file_bytes + 1 - self.position))

    def skip_line(self) -> int:
        """Read to the end of the current line without keeping it; the bytes skipped."""
        skipped = 0
        while True:
            part = self.readline(CHUNK)
            skipped += len(part)
            if not part or part.endswith(b"\n"):
                return skipped

    def check(self, complete: int, notes: ReadNotes, *, ended: bool = False, unit: str = "record") -> None:
        """After ``complete`` records (or lines) read whole: a damaged file or one over the limit is an error
        (``file: record N: reason``, N the record it happened in); a truncated one is noted, keeping the
        complete records before the cut. ``ended``: the reader met the end of the data; if the last record
        was cut short there (no error from gzip: a plain file), that is a truncation too."""
        if ended and not self.problem and self.short:
            self.truncated, self.problem = True, "the archive ends early (the file is truncated)"
        if self.truncated:
            notes.truncated.append(f"{self.path}: {self.problem}, after {unit} {complete}; the complete {unit}s before it were read.")
            self.truncated, self.problem = False, ""
        elif self.problem:
            raise ImportFailed(f"{self.path}: {unit} {complete + 1}: {self.problem}")

    def close(self) -> None:
        self.stream.close()
        self.raw.close()

    def __enter__(self) -> BoundedStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
