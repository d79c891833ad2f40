"""Errors and warnings raised by the evaluation package.

Every user-facing problem is an :class:`EvaluationError`; the CLI prints its message on one line
and exits with status 2.
"""

from __future__ import annotations

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
