"""Errors and warnings raised by the evaluation package.

Every user-facing problem is an :class:`EvaluationError`; the CLI prints its message on one line
and exits with status 2.
"""

from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path


class EvaluationError(Exception):
    """Base class of every error the evaluation package reports to users."""


class FormatError(EvaluationError, ValueError):
    """A file could not be read: names the file, the 1-based line (0 = whole file) and the reason."""

    def __init__(self, path: str | Path, line: int, reason: str) -> None:
        self.path = str(path)
        self.line = line
        self.reason = reason
        super().__init__(f"{self.path}:{line}: {reason}" if line else f"{self.path}: {reason}")


class UnknownMetricError(EvaluationError, ValueError):
    """A measure name or one of its parameters is not registered. ``suggestions``: the closest known
    metric names for an unknown name (empty otherwise)."""

    def __init__(self, message: str, *, suggestions: list[str] | None = None) -> None:
        super().__init__(message)
        self.suggestions = list(suggestions or [])


class EvaluationWarning(UserWarning):
    """Something was accepted but deserves attention (duplicate docids, topics without relevance, ...)."""


_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


def warn(message: str) -> None:
    """An :class:`EvaluationWarning` shown at the first caller outside this package (its file and line, as Python
    prints a warning), however deep inside the package the problem was found: through ``compare``, ``per_subtopic``
    or a run file read as it is scored, a fixed ``stacklevel`` pointed at a line of the package."""
    frame, level = sys._getframe(1), 2
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, EvaluationWarning, stacklevel=level)
