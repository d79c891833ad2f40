"""What both command lines (``python -m evaluation`` and its ``meta`` commands) share: argument
types, one-line usage errors and the warnings printer."""

from __future__ import annotations

import argparse
import os
import re
import sys
import warnings
from collections.abc import Callable
from typing import TypeVar

Number = TypeVar("Number", int, float)
SCRIPT = "diversity-eval"  # the console script pyproject.toml installs


def program_name() -> str:
    """The name help and errors call the program: ``diversity-eval`` when run as the installed console
    script, else ``python -m evaluation``."""
    return SCRIPT if os.path.basename(sys.argv[0] or "").startswith(SCRIPT) else "python -m evaluation"


_TOP_LEVEL_SEPARATOR = re.compile(r"[,\s]+(?![^()]*\))")


def measure_names(values: list[str]) -> list[str]:
    """``--measures`` values, each split at commas and blanks outside parentheses
    (``alpha-nDCG@10,ERR-IA@20`` and a quoted ``"alpha-nDCG@10 ERR-IA@20"`` are two measures;
    ``alpha-nDCG(alpha=0.3, rel=1)@10`` is one)."""
    return [part for value in values for part in _TOP_LEVEL_SEPARATOR.split(value.strip()) if part]


def _checked(text: str, parse: Callable[[str], Number], accept: Callable[[Number], bool], what: str) -> Number:
    """``parse(text)`` if it parses and ``accept`` takes it; else the usage error ``expected <what>, got '<text>'``."""
    try:
        value = parse(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
    if not accept(value):
        raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}")
    return value


def positive_int(text: str) -> int:
    """argparse type: an integer >= 1."""
    return _checked(text, int, lambda value: value >= 1, "a positive integer")


def non_negative_int(text: str) -> int:
    """argparse type: an integer >= 0."""
    return _checked(text, int, lambda value: value >= 0, "a non-negative integer")


def probability(text: str) -> float:
    """argparse type: a number in (0, 1)."""
    return _checked(text, float, lambda value: 0 < value < 1, "a number in (0, 1)")


def non_negative(text: str) -> float:
    """argparse type: a number >= 0."""
    return _checked(text, float, lambda value: value >= 0, "a number >= 0")


class UsageError(Exception):
    """A command-line usage problem, reported like every other error: one line, exit status 2."""


class OneLineParser(argparse.ArgumentParser):
    """An ArgumentParser whose errors raise :class:`UsageError` instead of printing the usage block."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{self.prog}: {message}")


# the library's keyword arguments a message may name, and the command line's options for them
_OPTION_OF_KEYWORD = re.compile(r"\b(topic_set|on_topic_mismatch|empty_topic|on_duplicate_doc|on_duplicate_qrel|uniform_over)='([\w-]+)'")


def command_line_wording(text: str) -> str:
    """A library message as the command line says it: keyword arguments as the options that set them
    (``on_topic_mismatch='error'`` -> ``--on-topic-mismatch error``) and the program by the name it was
    started under (``python -m evaluation metrics`` -> ``diversity-eval metrics`` when installed)."""
    text = _OPTION_OF_KEYWORD.sub(lambda m: f"--{m.group(1).replace('_', '-')} {m.group(2)}", text)
    return text.replace("`python -m evaluation ", f"`{program_name()} ")


def print_warnings(caught: list[warnings.WarningMessage]) -> None:
    """Print each distinct user-facing warning once, on one line, as ``warning: ...`` on stderr
    (library warnings of other kinds, e.g. deprecations, are not the user's business)."""
    seen: set[str] = set()
    for item in caught:
        text = command_line_wording(" ".join(str(item.message).split()))
        if text not in seen and issubclass(item.category, UserWarning):
            seen.add(text)
            print(f"warning: {text}", file=sys.stderr)
