"""Shared plumbing for the line-oriented readers: numbered fields, typed parsing, clear errors."""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path

from evaluation.exceptions import FormatError


def read_text(path: str | Path) -> str:
    """The whole file as text (UTF-8, BOM tolerated); a missing or unreadable file is a FormatError."""
    try:
        with open(path, encoding="utf-8-sig") as handle:
            return handle.read()
    except FileNotFoundError:
        raise FormatError(path, 0, "no such file") from None
    except IsADirectoryError:
        raise FormatError(path, 0, "is a directory, expected a file") from None
    except UnicodeDecodeError as exc:
        raise FormatError(path, 0, f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise FormatError(path, 0, exc.strerror or str(exc)) from None


def text_lines(text: str) -> list[str]:
    """``text`` cut at ``\n`` only (a trailing ``\r`` dropped): unlike ``str.splitlines``, characters such
    as U+2028 or U+0085 inside a value (a JSON string, a title) never start a new line."""
    return [line.removesuffix("\r") for line in text.removesuffix("\n").split("\n")] if text else []


def numbered_fields(path: str | Path, sep: str | None = None) -> Iterator[tuple[int, list[str]]]:
    """Yield ``(line_number, fields)`` for every non-blank, non-comment (``#``) line.

    Raises FormatError for an empty file (nothing to read is never silently accepted).
    """
    text = read_text(path)
    seen = False
    for number, raw in enumerate(text_lines(text), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        seen = True
        fields = line.split(sep) if sep else line.split()
        yield number, [f.strip() for f in fields] if sep else fields
    if not seen:
        raise FormatError(path, 0, "file is empty")


def expect_columns(path: str | Path, number: int, fields: list[str], allowed: tuple[int, ...], what: str) -> None:
    if len(fields) not in allowed:
        wanted = " or ".join(str(n) for n in allowed)
        raise FormatError(path, number, f"expected {wanted} columns ({what}), found {len(fields)}")


def parse_int(path: str | Path, number: int, text: str, what: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise FormatError(path, number, f"{what} must be an integer, got {text!r}") from None


def parse_float(path: str | Path, number: int, text: str, what: str) -> float:
    try:
        value = float(text.replace(",", ".")) if text.count(",") == 1 and "." not in text else float(text)
    except ValueError:
        raise FormatError(path, number, f"{what} must be a number, got {text!r}") from None
    if not math.isfinite(value):
        raise FormatError(path, number, f"{what} must be finite, got {text!r}")
    return value
