"""The one conversion layer from the IR ecosystem's in-memory forms to :class:`Collection` and :class:`Run`.

:func:`~evaluation.engine.evaluate` and :func:`~evaluation.engine.score_matrix` pass their inputs
through :func:`as_collection` and :func:`as_runs`, which accept, besides our own objects and file paths:

* pandas DataFrames with the column names of ir_datasets / ir_measures: qrels ``query_id doc_id
  relevance [iteration]`` (``iteration`` is the subtopic; without it every judgment is subtopic
  ``"0"``), runs ``query_id doc_id score`` (a ``run`` column, if any, names several runs);
* pytrec_eval-style nested dicts: qrels ``{query_id: {doc_id: relevance}}`` (one subtopic ``"0"``)
  or ``{query_id: {subtopic: {doc_id: relevance}}}``, a run ``{query_id: {doc_id: score}}``;
* iterables of ir_measures' ``Qrel(query_id, doc_id, relevance, iteration)`` and
  ``ScoredDoc(query_id, doc_id, score)`` named tuples (any object with those attributes).

Everything ends in the array builders :func:`~evaluation.collection.judgments_from_arrays` and
:func:`~evaluation.io.runs.runs_from_arrays`, so the readers' rules hold for every kind: identifiers
become strings, lists are ordered by score descending with ties by docid descending (trec_eval's
order, docs/metrics.md#runs), a repeated judgment is an error. Anything else is a ``TypeError``
naming the accepted kinds; a frame without the needed columns is a ``ValueError``.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Iterator, Mapping, Sequence
from itertools import chain
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from evaluation.collection import Collection, build_collection, judgments_from_arrays
from evaluation.exceptions import EvaluationError
from evaluation.io.runs import Run, read_run, runs_from_arrays
from evaluation.loading import load_collection
from evaluation.wording import named

DEFAULT_SUBTOPIC = "0"  # ir_measures' Qrel.iteration default: the subtopic of judgments that name none
DEFAULT_RUN = "run"
QREL_COLUMNS = ("query_id", "doc_id", "relevance")
RUN_COLUMNS = ("query_id", "doc_id", "score")
QRELS_KINDS = (
    "a Collection, a qrels file path, a DataFrame with columns query_id doc_id relevance [iteration], "
    "a dict {query_id: {doc_id: relevance}} or {query_id: {subtopic: {doc_id: relevance}}}, or Qrel tuples"
)
RUN_KINDS = (
    "a Run, a run file path, a directory of run files, a DataFrame with columns query_id doc_id score [run], "
    "a dict {query_id: {doc_id: score}}, ScoredDoc or (query_id, doc_id, score) tuples, "
    "or a list, generator or dict {name: run} of these"
)


def as_collection(qrels: Any) -> Collection:
    """``qrels`` of any accepted kind as a :class:`Collection` (a Collection is returned as it is)."""
    if isinstance(qrels, Collection):
        return qrels
    if isinstance(qrels, (str, Path)):
        return load_collection(qrels)
    if isinstance(qrels, pd.DataFrame):
        return _collection_of_frame(qrels)
    if isinstance(qrels, Mapping):
        return _collection_of_frame(_qrels_frame_of_dict(qrels))
    if _is_iterable(qrels):
        rows = list(qrels)
        if rows and all(_has(r, QREL_COLUMNS) for r in rows):
            columns = {c: [getattr(r, c) for r in rows] for c in QREL_COLUMNS}
            return _collection_of_frame(pd.DataFrame({**columns, "iteration": [getattr(r, "iteration", DEFAULT_SUBTOPIC) for r in rows]}))
    raise TypeError(f"qrels must be {QRELS_KINDS}; got {_describe(qrels)}")


def as_runs(runs: Any) -> list[Run]:
    """``runs`` of any accepted kind, one run or several (a list, or a dict ``{name: run}``), as a list
    of :class:`Run`. A dict's key names its run (a file's tag, a ``Run``'s or a DataFrame's own name gives way to
    it) unless the value holds several runs (a DataFrame whose ``run`` column has several names: they keep them);
    runs without a name of their own and outside a dict are ``run``, ``run1``, ..."""
    return list(iter_runs(runs))


def run_files_in(directory: str | Path) -> list[Path]:
    """A directory's run files: every file whose name does not start with ``.``, in name order."""
    files = sorted(p for p in Path(directory).iterdir() if p.is_file() and not p.name.startswith("."))
    if not files:
        raise EvaluationError(f"{directory}: a directory without run files")
    return files


def run_paths(paths: Sequence[str]) -> list[str]:
    """The command line's ``--run`` values, a directory standing for its run files (:func:`run_files_in`)."""
    return [str(f) for p in paths for f in (run_files_in(p) if Path(p).is_dir() else [p])]


def iter_runs(runs: Any) -> Iterator[Run]:
    """:func:`as_runs` one run at a time: a generator of runs, a dict ``{name: iterator}`` and a
    directory of run files are read run by run as the caller asks for them, never held whole."""
    if isinstance(runs, Run):
        yield runs
    elif isinstance(runs, (str, Path)) and Path(runs).is_dir():
        yield from (read_run(path) for path in run_files_in(runs))
    elif isinstance(runs, Mapping) and runs and not _is_score_dict(runs):
        for name, run in runs.items():
            found = _runs_of(run, str(name))
            yield from [_named(found[0], str(name))] if len(found) == 1 else found
    elif _is_iterable(runs) and not isinstance(runs, (Mapping, pd.DataFrame)):
        items = iter(runs)
        first = next(items, _END)
        if first is _END:
            return
        if _has(first, RUN_COLUMNS) or _is_row(first):  # ScoredDoc or (query_id, doc_id, score) tuples: one run
            yield from _runs_of(chain([first], items), DEFAULT_RUN)
            return
        for n, run in enumerate(chain([first], items)):
            yield from _runs_of(run, f"{DEFAULT_RUN}{n + 1}")
    else:
        yield from _runs_of(runs, DEFAULT_RUN)


_END = object()


def _named(run: Run, name: str) -> Run:
    """``run`` under ``name`` (the user's key in a dict of runs), its ranked lists shared, not checked again."""
    if run.name == name:
        return run
    if not name:
        raise EvaluationError("a run needs a non-empty name: a dict of runs has the key ''")
    renamed = copy.copy(run)
    object.__setattr__(renamed, "name", name)
    return renamed


def _runs_of(run: Any, name: str) -> list[Run]:
    """The run(s) of one run-like value; ``name`` for a run that carries no name."""
    if isinstance(run, Run):
        return [run]
    if isinstance(run, (str, Path)):
        return [read_run(run)]
    if isinstance(run, pd.DataFrame):
        return _runs_of_frame(run, name)
    if isinstance(run, Mapping) and run and _is_score_dict(run):
        return _runs_of_frame(_run_frame_of_dict(run), name)
    if _is_iterable(run) and not isinstance(run, Mapping):
        rows = list(run)
        if _scored_docs(rows):
            return _runs_of_frame(pd.DataFrame({c: [getattr(r, c) for r in rows] for c in RUN_COLUMNS}), name)
        if rows and all(isinstance(r, tuple) and len(r) == 3 for r in rows):  # (query_id, doc_id, score)
            return _runs_of_frame(pd.DataFrame(rows, columns=list(RUN_COLUMNS)), name)
    raise TypeError(f"runs must be {RUN_KINDS}; got {_describe(run)}")


def _is_row(value: Any) -> bool:
    """A plain ``(query_id, doc_id, score)`` tuple (a number as the score), not a run of its own."""
    return isinstance(value, tuple) and len(value) == 3 and isinstance(value[1], str) and isinstance(value[2], (int, float, np.number))


def _scored_docs(items: list) -> bool:
    return bool(items) and all(_has(r, RUN_COLUMNS) for r in items)


def _collection_of_frame(frame: pd.DataFrame) -> Collection:
    _require(frame, QREL_COLUMNS, "qrels")
    _require_present(frame, ("query_id", "doc_id", "iteration"), "qrels")
    subtopic = frame["iteration"] if "iteration" in frame.columns else pd.Series(DEFAULT_SUBTOPIC, index=frame.index)
    relevance = pd.to_numeric(frame["relevance"], errors="coerce")
    bad = (relevance.isna() | (relevance != relevance.round())).to_numpy()
    if bad.any():
        n = int(np.argmax(bad))
        raise ValueError(
            f"qrels row {_plain(frame.index[n])!r} (query_id {frame['query_id'].iloc[n]}, doc_id {frame['doc_id'].iloc[n]}): "
            f"relevance {_plain(frame['relevance'].iloc[n])!r} is not an integer"
        )
    return build_collection(
        judgments_from_arrays(_text(frame["query_id"]), _text(subtopic), _text(frame["doc_id"]), relevance.to_numpy(np.int64))
    )


def _runs_of_frame(frame: pd.DataFrame, name: str) -> list[Run]:
    _require(frame, RUN_COLUMNS, "run")
    _require_present(frame, ("query_id", "doc_id", "run"), "run")
    names = _text(frame["run"]) if "run" in frame.columns else np.full(len(frame), name, dtype=object)
    score = pd.to_numeric(frame["score"], errors="coerce")
    bad = (score.isna() | ~np.isfinite(score.fillna(0))).to_numpy()
    if bad.any():
        n = int(np.argmax(bad))
        raise ValueError(
            f"run row {_plain(frame.index[n])!r} (query_id {frame['query_id'].iloc[n]}, doc_id {frame['doc_id'].iloc[n]}): "
            f"score {_plain(frame['score'].iloc[n])!r} is not a finite number"
        )
    return runs_from_arrays(names, _text(frame["query_id"]), _text(frame["doc_id"]), score.to_numpy(np.float64))


def _qrels_frame_of_dict(qrels: Mapping) -> pd.DataFrame:
    rows = []
    for query, docs in qrels.items():
        if not isinstance(docs, Mapping):
            raise TypeError(f"qrels dict: query {query!r} maps to {_describe(docs)}, expected a dict {{doc_id: relevance}}")
        for key, value in docs.items():
            if isinstance(value, Mapping):  # {query_id: {subtopic: {doc_id: relevance}}}
                rows.extend((query, doc, grade, key) for doc, grade in value.items())
            else:
                rows.append((query, key, value, DEFAULT_SUBTOPIC))
    return pd.DataFrame(rows, columns=[*QREL_COLUMNS, "iteration"])


def _run_frame_of_dict(run: Mapping) -> pd.DataFrame:
    rows = [(query, doc, score) for query, docs in run.items() for doc, score in docs.items()]
    return pd.DataFrame(rows, columns=list(RUN_COLUMNS))


def _is_score_dict(run: Mapping) -> bool:
    """Whether ``run`` is ``{query_id: {doc_id: score}}`` (rather than ``{name: run}``)."""
    first = next(iter(run.values()))
    if not isinstance(first, Mapping):
        return False
    inner = next(iter(first.values()), 0)
    return isinstance(inner, (int, float, np.number)) and not isinstance(inner, bool)


def _require_present(frame: pd.DataFrame, columns: Sequence[str], what: str) -> None:
    """A missing identifier (None, NaN) is an error naming its row label, as a bad score or grade is."""
    for column in (c for c in columns if c in frame.columns):
        missing = frame[column].isna().to_numpy()
        if missing.any():
            n = int(np.argmax(missing))
            raise ValueError(
                f"{what} row {_plain(frame.index[n])!r} (query_id {frame['query_id'].iloc[n]}, doc_id {frame['doc_id'].iloc[n]}): "
                f"{column} is missing"
            )


def _require(frame: pd.DataFrame, columns: Sequence[str], what: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"{what} DataFrame lacks {named('column', missing)}; has {', '.join(map(str, frame.columns))}")


def _text(column: pd.Series | Sequence) -> np.ndarray:
    """Identifiers as strings (a query id 1 and "1" are the same topic), missing values kept missing."""
    series = pd.Series(column)
    if pd.api.types.infer_dtype(series, skipna=True) == "string":
        return series.to_numpy(dtype=object)
    return series.astype(str).where(series.notna(), None).to_numpy(dtype=object)


def _has(value: Any, attributes: Sequence[str]) -> bool:
    """Whether ``value`` is a record with these fields (a DataFrame's columns are attributes too: not one)."""
    return not isinstance(value, pd.DataFrame) and all(hasattr(value, a) for a in attributes)


def _is_iterable(value: Any) -> bool:
    return isinstance(value, Iterable) and not isinstance(value, (str, bytes))


def _describe(value: Any) -> str:
    return (
        type(value).__name__
        if not isinstance(value, (list, tuple)) or not value
        else f"{type(value).__name__} of {type(value[0]).__name__}"
    )


def _plain(value: Any) -> Any:
    """A numpy scalar as the Python value it holds (for messages)."""
    return value.item() if isinstance(value, np.generic) else value
