"""What :func:`~evaluation.engine.evaluate` notes about each run as it streams past: its name (a name
given twice is an error) and which topics it shares with the qrels, reported in one warning per kind
(docs/evaluation.md#topics-a-run-and-the-qrels-do-not-share)."""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path
from typing import Literal

import numpy as np

from evaluation.exceptions import EvaluationError, warn
from evaluation.io.runs import Run
from evaluation.wording import counted, plural

Mismatch = Literal["warn", "error", "ignore"]
SHOWN = 5  # runs and topics named in a warning; the rest are counted


class TopicLog:
    """Run names and topic coverage, gathered run by run (a run's lists are not kept)."""

    def __init__(
        self, topic_ids: list[str], on_mismatch: Mismatch = "warn", *, missing_scored: bool = True, unscored: Collection[str] = ()
    ) -> None:
        """``unscored``: qrels topics NaN for every run (no relevant document): not reported missing,
        since a run lacking them is not scored 0 on them."""
        if on_mismatch not in ("warn", "error", "ignore"):
            raise ValueError(f"on_topic_mismatch must be 'warn', 'error' or 'ignore', got {on_mismatch!r}")
        self.topic_ids = topic_ids
        self.position = {t: n for n, t in enumerate(topic_ids)}
        self.on_mismatch, self.missing_scored = on_mismatch, missing_scored
        self.unscored = frozenset(unscored)
        self.names: list[str] = []
        self.seen: dict[str, str | None] = {}  # run name -> the file it was read from
        self.covered: list[np.ndarray] = []
        self.missing: list[tuple[str, list[str]]] = []  # run, qrels topics it lacks
        self.extra: list[tuple[str, list[str]]] = []  # run, its topics the qrels lack

    def add(self, run: Run) -> None:
        if run.name in self.seen:
            first = self.seen[run.name]
            if first and run.source and Path(first).resolve() == Path(run.source).resolve():
                raise EvaluationError(f"run file given twice: {first}" + (f" (as {first} and {run.source})" if first != run.source else ""))
            if first and run.source:
                raise EvaluationError(
                    f"run name given twice: {run.name}, the tag column of both {first} and {run.source}"
                    " (a run file is named by its tag column: give each file its own tag)"
                )
            raise EvaluationError(
                f"run name given twice: {run.name} (a run is named by its file's tag column, its key in a dict of runs"
                " or Run(name, ...): each run needs its own)"
            )
        self.seen[run.name] = run.source
        self.names.append(run.name)
        has = np.zeros(len(self.topic_ids), dtype=bool)
        extra = []
        for topic in run.lists:
            n = self.position.get(topic)
            if n is None:
                extra.append(topic)
            else:
                has[n] = True
        self.covered.append(has)
        if extra:
            self.extra.append((run.name, extra))
        if self.missing_scored and not has.all():
            lacking = [t for t, h in zip(self.topic_ids, has) if not h and t not in self.unscored]
            if lacking:
                self.missing.append((run.name, lacking))
        if self.on_mismatch == "error":
            self._check()

    def included(self) -> np.ndarray:
        """``(R, T)``: whether run ``r`` has a list for topic ``t``."""
        return np.array(self.covered, dtype=bool).reshape(len(self.names), len(self.topic_ids))

    def _messages(self, hint: bool = False) -> list[str]:
        """One message per kind of mismatch; with ``hint``, each says how to make it an error."""
        error = "on_topic_mismatch='error' makes this an error"
        out = []
        if self.missing:
            n = sum(len(topics) for _, topics in self.missing)
            notes = "; ".join(["topic_set='run_and_qrels' leaves them out", *([error] if hint else [])])
            out.append(f"qrels {plural(n, 'topic')} missing from {_runs(self.missing)}: scored 0 ({notes})")
        if self.extra:
            n = sum(len(topics) for _, topics in self.extra)
            out.append(
                f"run {plural(n, 'topic')} missing from the qrels, not scored: {_runs(self.extra)}" + (f" ({error})" if hint else "")
            )
        return out

    def _check(self) -> None:
        messages = self._messages()
        if messages:
            raise EvaluationError("; ".join(messages) + " (on_topic_mismatch='error')")

    def report(self) -> None:
        """Warn (or raise) once per kind of mismatch."""
        if self.on_mismatch == "error":
            self._check()
        elif self.on_mismatch == "warn":
            for message in self._messages(hint=True):
                warn(message)


def _runs(found: list[tuple[str, list[str]]]) -> str:
    """``run a (2: 251, 252), run b (1: 260) and 3 more runs``."""
    parts = []
    for name, topics in found[:SHOWN]:
        listed = ", ".join(topics[:SHOWN]) + (f", ... ({len(topics) - SHOWN} more)" if len(topics) > SHOWN else "")
        parts.append(f"run {name} ({len(topics)}: {listed})")
    more = f" and {counted(len(found) - SHOWN, 'more run', 'more runs')}" if len(found) > SHOWN else ""
    return ", ".join(parts) + more
