"""TREC run files ``topic Q0 docid rank score tag`` -> :class:`Run` (ranked docids per topic).

Ordering (docs/metrics.md#runs):

* ``score`` (default; trec_eval / ndeval ``-traditional``): score descending, ties by docid descending;
* ``rank``: the rank column ascending (ndeval default; a repeated rank in a topic is an error);
* ``file``: the order of the lines (NTCIREVAL, RBU jar);
* ``pyndeval``: score descending, ties by docid ascending.

A document listed twice for a topic is kept at its first (highest-ranked) position with a warning
(``on_duplicate_doc="keep_first"``), or rejected (``"error"``, ndeval's behaviour).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from itertools import chain
from pathlib import Path
from typing import Literal

import numpy as np

from evaluation._factorize import as_objects, block_heads, factorize, has_missing, positions, repeated_in_groups
from evaluation._types import IntArray
from evaluation.exceptions import EvaluationError, EvaluationWarning, FormatError
from evaluation.io._lines import expect_columns, numbered_fields, parse_float, parse_int
from evaluation.io._run_columns import plain_columns

RunOrder = Literal["score", "rank", "file", "pyndeval"]
ORDERS: tuple[str, ...] = ("score", "rank", "file", "pyndeval")


@dataclass(frozen=True)
class Run:
    """A system's ranked lists: ``lists[topic]`` is the ranked tuple of docids (best first)."""

    name: str
    lists: Mapping[str, Sequence[str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.name:
            raise EvaluationError("a run needs a non-empty name")
        if isinstance(self.lists, RankedLists):
            return  # built by runs_from_arrays, which already removed or rejected duplicates
        for topic, docs in self.lists.items():
            if len(set(docs)) != len(docs):
                raise EvaluationError(f"run {self.name} topic {topic}: duplicate docids; use dedupe_ranked()")

    def per_subtopic(self, subtopics: Mapping[str, Sequence[str]], key: str = "{topic}/{subtopic}") -> Run:
        """The run for a per-subtopic collection: each topic's list repeated under ``key`` for every subtopic."""
        lists = {key.format(topic=t, subtopic=s): docs for t, docs in self.lists.items() for s in subtopics.get(t, ())}
        return Run(self.name, lists)

    @property
    def depth(self) -> int:
        """Length of the run's longest list."""
        if isinstance(self.lists, RankedLists):
            return int(self.lists.lengths.max(initial=0))
        return max(map(len, self.lists.values()), default=0)


@dataclass(frozen=True, eq=False)
class RankedLists(Mapping[str, tuple[str, ...]]):
    """A run's ranked lists stored flat: reads like ``{topic: (docid, ...)}``.

    The list of ``topics[n]`` is ``vocabulary[codes[offsets[n]:offsets[n + 1]]]``, best first.
    Runs built together by :func:`runs_from_arrays` share one vocabulary (the docids of all their
    lists, list after list), so laying them out over a collection is one look-up for all of them.
    Lists hold no repeated docid.
    """

    topics: tuple[str, ...]
    offsets: IntArray
    codes: IntArray
    vocabulary: np.ndarray
    batch: ListBatch | None = field(
        default=None, repr=False
    )  # the flat lists of all runs built together, this run's from list ``first`` on
    first: int = 0

    @classmethod
    def of(cls, lists: Mapping[str, Sequence[str]]) -> RankedLists:
        """The flat form of any mapping topic -> ranked docids."""
        if isinstance(lists, RankedLists):
            return lists
        values = list(lists.values())
        offsets = np.zeros(len(values) + 1, dtype=np.int64)
        np.cumsum([len(v) for v in values], out=offsets[1:])
        docids = np.array(list(chain.from_iterable(values)), dtype=object)
        return cls(tuple(lists), offsets, np.arange(docids.size), docids)

    @cached_property
    def lengths(self) -> IntArray:
        return np.diff(self.offsets)

    @cached_property
    def _position(self) -> dict[str, int]:
        return {t: n for n, t in enumerate(self.topics)}

    def __getitem__(self, topic: str) -> tuple[str, ...]:
        n = self._position[topic]
        return tuple(self.vocabulary[self.codes[self.offsets[n] : self.offsets[n + 1]]].tolist())

    def __iter__(self) -> Iterator[str]:
        return iter(self.topics)

    def __len__(self) -> int:
        return len(self.topics)


@dataclass(frozen=True, eq=False)
class ListBatch:
    """The ranked lists of several runs built together by :func:`runs_from_arrays`, flat: list ``n`` is
    run ``run[n]``'s list for ``topics[topic[n]]``, ``vocabulary[codes[bounds[n]:bounds[n + 1]]]``
    (runs in order, each run's lists contiguous). Laying runs out over a collection reads it whole."""

    topics: np.ndarray
    run: IntArray
    topic: IntArray
    bounds: IntArray
    codes: IntArray
    vocabulary: np.ndarray
    _found: list = field(default_factory=list, repr=False)  # [(docids, positions)]: the last lookup, see positions_in

    def positions_in(self, docids: np.ndarray) -> IntArray:
        """Position of every vocabulary entry in ``docids`` (a collection's distinct docids; -1: absent).

        Looked up once per ``docids`` array: ``score_matrix`` lays a batch out in slices of a few runs,
        and each slice would otherwise look the whole vocabulary up again (at depth 1000, millions of
        docids per slice). The array is kept with the result, so an identity check cannot be fooled.
        """
        if not self._found or self._found[0][0] is not docids:
            self._found[:] = [(docids, positions(docids, self.vocabulary))]
        return self._found[0][1]

    @staticmethod
    def spanned(runs: Sequence[Run]) -> tuple[ListBatch, int, int] | None:
        """``(batch, a, b)`` when ``runs`` are consecutive runs of one batch, in order: its lists ``a:b``."""
        lists = [run.lists for run in runs]
        if not lists or not all(isinstance(x, RankedLists) for x in lists):
            return None
        batch = lists[0].batch
        if batch is None or any(x.batch is not batch for x in lists):
            return None
        starts = [x.first for x in lists]
        ends = [x.first + len(x) for x in lists]
        if starts[1:] != ends[:-1] or any(len(x) == 0 for x in lists):
            return None
        return batch, starts[0], ends[-1]


def _duplicate_message(run: str, topic: str, dropped: Sequence[str]) -> str:
    return f"run {run} topic {topic}: duplicate docid(s) {', '.join(sorted(set(dropped)))}"


def dedupe_ranked(docs: Sequence[str], *, run: str, topic: str, on_duplicate_doc: str = "keep_first", where: str = "") -> tuple[str, ...]:
    """Drop later occurrences of a docid (docs/metrics.md#runs), warning once; or raise."""
    seen: set[str] = set()
    out: list[str] = []
    dropped: list[str] = []
    for doc in docs:
        if doc in seen:
            dropped.append(doc)
            continue
        seen.add(doc)
        out.append(doc)
    if dropped:
        message = _duplicate_message(run, topic, dropped)
        if on_duplicate_doc == "error":
            raise EvaluationError(f"{where}{message}")
        warnings.warn(f"{message}; kept the highest-ranked occurrence", EvaluationWarning, stacklevel=3)
    return tuple(out)


def read_run(
    path: str | Path,
    *,
    order: RunOrder = "score",
    on_duplicate_doc: Literal["keep_first", "error"] = "keep_first",
    name: str | None = None,
) -> Run:
    """Read a TREC run file. The run is named after the tag column of its first line unless ``name``.

    A plain file (six columns on every line, no comment line) is parsed by a C reader (pyarrow's when
    installed, else pandas', :mod:`evaluation.io._run_columns`) and laid out by :func:`runs_from_arrays`
    (same order and duplicate rules); anything else, and every error, goes through the line-by-line
    reader below, which names the file and line.
    """
    _check_options(order, on_duplicate_doc)
    columns = plain_columns(path)
    if columns is not None:
        topic, doc, rank, score, tag = columns
        names = np.empty(topic.size, dtype=object)
        names.fill(name or tag or Path(path).stem)  # fill: ten times quicker than np.full for objects
        try:
            (run,) = runs_from_arrays(names, topic, doc, score, ranks=rank, order=order, on_duplicate_doc=on_duplicate_doc)
            return run
        except EvaluationError:
            pass  # a repeated rank or docid: the reader below reports it with its line
    return _read_run_lines(path, order=order, on_duplicate_doc=on_duplicate_doc, name=name)


def _read_run_lines(path: str | Path, *, order: RunOrder, on_duplicate_doc: Literal["keep_first", "error"], name: str | None) -> Run:
    """The validating line reader of :func:`read_run`."""
    rows: dict[str, list[tuple[float, int, int, str]]] = {}
    tag = None
    ranks: dict[tuple[str, int], int] = {}
    for number, fields in numbered_fields(path):
        expect_columns(path, number, fields, (6,), "topic Q0 docid rank score tag")
        topic, _, doc, raw_rank, raw_score, line_tag = fields
        rank = parse_int(path, number, raw_rank, "rank")
        score = parse_float(path, number, raw_score, "score")
        if tag is None:
            tag = line_tag
        if order == "rank":
            if (topic, rank) in ranks:
                raise FormatError(path, number, f"rank {rank} repeated for topic {topic} (first on line {ranks[topic, rank]})")
            ranks[topic, rank] = number
        rows.setdefault(topic, []).append((score, rank, number, doc))
    lists: dict[str, tuple[str, ...]] = {}
    run_name = name or tag or Path(path).stem
    for topic, entries in rows.items():
        if order == "score":
            entries.sort(key=lambda e: e[3], reverse=True)
            entries.sort(key=lambda e: -e[0])
        elif order == "pyndeval":
            entries.sort(key=lambda e: (-e[0], e[3]))
        elif order == "rank":
            entries.sort(key=lambda e: e[1])
        if on_duplicate_doc == "error":
            seen: dict[str, int] = {}
            for _, _, number, doc in sorted(entries, key=lambda e: e[2]):
                if doc in seen:
                    raise FormatError(path, number, f"docid {doc} repeated for topic {topic} (first on line {seen[doc]})")
                seen[doc] = number
        lists[topic] = dedupe_ranked([e[3] for e in entries], run=run_name, topic=topic)
    return Run(run_name, lists)


def _check_options(order: str, on_duplicate_doc: str) -> None:
    if order not in ORDERS:
        raise ValueError(f"order must be one of {', '.join(ORDERS)}, got {order!r}")
    if on_duplicate_doc not in ("keep_first", "error"):
        raise ValueError(f"on_duplicate_doc must be 'keep_first' or 'error', got {on_duplicate_doc!r}")


def runs_from_arrays(
    runs: Sequence[str] | np.ndarray,
    topics: Sequence[str] | np.ndarray,
    docids: Sequence[str] | np.ndarray,
    scores: Sequence[float] | np.ndarray | None = None,
    *,
    ranks: Sequence[int] | np.ndarray | None = None,
    order: RunOrder = "score",
    on_duplicate_doc: Literal["keep_first", "error"] = "keep_first",
) -> list[Run]:
    """Runs from parallel arrays, one entry per run line ``run topic docid [rank] score``.

    The in-memory counterpart of :func:`read_run` for any number of runs at once, with the same
    ordering options (docs/metrics.md#runs: ``score`` = score desc then docid desc, ``pyndeval`` = score desc
    then docid asc, ``rank``, ``file``) and the same duplicate rule (keep the highest-ranked
    occurrence with a warning, or raise). Runs, and topics within a run, come in order of first
    appearance.
    """
    _check_options(order, on_duplicate_doc)
    if not len(runs) == len(topics) == len(docids):
        raise EvaluationError("runs, topics and docids must have the same length")
    # blocks of neighbours with the same (run, topic): usually one block per list, in list order
    blocks, (names, topic_values) = block_heads(runs, topics)
    docs = as_objects(docids)
    heads = np.zeros(names.size, dtype=bool)
    heads[blocks] = True
    run_code, run_names = factorize(names[blocks])
    topic_code, topic_names = factorize(topic_values[blocks])
    if (run_code < 0).any() or (topic_code < 0).any() or has_missing(docs):
        raise EvaluationError("every run line needs a run name, a topic and a docid")
    block_group = run_code * max(len(topic_names), 1) + topic_code
    sizes = np.diff(np.append(blocks, names.size))
    key = _within_list_key(order, scores, ranks, names.size)
    # docids get no codes: at depth 1000 most are distinct unjudged filler, and a vocabulary of them
    # cost more than everything else; the lists keep the docids, a collection looks them up
    if (block_group[1:] > block_group[:-1]).all() and (key is None or ((key[1:] > key[:-1]) | heads[1:]).all()):
        owned = docs if isinstance(docids, (list, tuple)) else docs.copy()  # not a view of the caller's array
        lists = _Lists(block_group, sizes, owned)  # already in list order, no tie: the usual input
    else:
        group = np.repeat(block_group, sizes)
        position = _list_order(group, docs, order, key, run_names, topic_names)
        lists = _Lists.of_entries(group[position], docs[position])
    lists = _drop_repeated(lists, on_duplicate_doc, run_names, topic_names)
    return _split_runs(lists, run_names, topic_names)


def _within_list_key(order: str, scores, ranks, n: int) -> np.ndarray | None:
    """What orders entries within a list, ascending: ``-score`` (ties broken later), the rank, or
    nothing (``file`` order)."""
    if order == "file":
        return None
    if order == "rank":
        if ranks is None:
            raise ValueError("order='rank' needs ranks")
        rank = np.asarray(ranks, dtype=np.int64)
        if rank.shape != (n,):
            raise EvaluationError("ranks must be integers, one per entry")
        return rank
    if scores is None:
        raise ValueError(f"order={order!r} needs scores")
    score = np.fromiter(scores, dtype=np.float64, count=len(scores)) if isinstance(scores, list) else np.asarray(scores, dtype=np.float64)
    if score.shape != (n,) or not np.isfinite(score).all():
        raise EvaluationError("scores must be finite numbers, one per entry")
    return -score


@dataclass(frozen=True)
class _Lists:
    """Entries laid out list by list: list ``n`` (code ``group[n]`` = run * topics + topic) holds
    ``docids[bounds[n]:bounds[n + 1]]``, best first; lists in ascending ``group`` order."""

    group: IntArray
    sizes: IntArray
    docids: np.ndarray

    @classmethod
    def of_entries(cls, group: IntArray, docids: np.ndarray) -> _Lists:
        """From entries sorted by group (then rank)."""
        starts = np.flatnonzero(np.diff(group, prepend=-1))
        return cls(group[starts], np.diff(np.append(starts, group.size)), docids)

    @property
    def bounds(self) -> IntArray:
        out = np.zeros(self.sizes.size + 1, dtype=np.int64)
        np.cumsum(self.sizes, out=out[1:])
        return out


def _list_order(group, docs, order, key, run_names, topic_names) -> IntArray:
    """Permutation of the entries into list order: by (run, topic) group, then docs/metrics.md#runs key."""
    if key is None:
        return np.argsort(group, kind="stable")
    position = np.lexsort((key, group))
    tied = (np.diff(group[position]) == 0) & (np.diff(key[position]) == 0)
    if not tied.any():
        return position
    if order == "rank":
        n = position[int(np.argmax(tied))]
        run, topic = divmod(int(group[n]), max(len(topic_names), 1))
        raise EvaluationError(f"run {run_names[run]} topic {topic_names[topic]}: rank {key[n]} repeated")
    # equal scores in a list: docid breaks the tie (descending for "score", ascending for "pyndeval")
    members = np.unique(np.concatenate([position[:-1][tied], position[1:][tied]]))
    names = docs[members].tolist()
    rank_of = {d: n for n, d in enumerate(sorted(set(names)))}
    tie_key = np.zeros(group.size, dtype=np.int64)
    tie_key[members] = [rank_of[d] for d in names]
    return np.lexsort((-tie_key if order == "score" else tie_key, key, group))


def _drop_repeated(lists: _Lists, on_duplicate_doc, run_names, topic_names) -> _Lists:
    """Keep each docid's first (highest-ranked) entry in its list; warn about the rest, or raise."""
    entry_list = np.repeat(np.arange(lists.sizes.size), lists.sizes)
    repeated = repeated_in_groups(entry_list, lists.docids)
    if not repeated.any():
        return lists
    n_topics = max(len(topic_names), 1)
    for n in np.unique(entry_list[repeated]).tolist():
        run, topic = divmod(int(lists.group[n]), n_topics)
        dropped = lists.docids[repeated & (entry_list == n)].tolist()
        message = _duplicate_message(run_names[run], topic_names[topic], dropped)
        if on_duplicate_doc == "error":
            raise EvaluationError(message)
        warnings.warn(f"{message}; kept the highest-ranked occurrence", EvaluationWarning, stacklevel=3)
    sizes = lists.sizes - np.bincount(entry_list[repeated], minlength=lists.sizes.size)
    return _Lists(lists.group, sizes, lists.docids[~repeated])


def _split_runs(lists: _Lists, run_names, topic_names) -> list[Run]:
    """One :class:`Run` per run code; all share the lists' docids as their vocabulary."""
    n_topics = max(len(topic_names), 1)
    bounds = lists.bounds
    vocabulary = lists.docids
    codes = np.arange(vocabulary.size)
    topic_of_list = topic_names[lists.group % n_topics].tolist()
    run_of_list, topic_code = np.divmod(lists.group, n_topics)
    first_list = np.searchsorted(run_of_list, np.arange(len(run_names) + 1)).tolist()
    batch = ListBatch(topic_names, run_of_list, topic_code, bounds, codes, vocabulary)
    out = []
    for r, name in enumerate(run_names.tolist()):
        a, b = first_list[r], first_list[r + 1]
        offsets = bounds[a : b + 1] - bounds[a]
        ranked = RankedLists(tuple(topic_of_list[a:b]), offsets, codes[bounds[a] : bounds[b]], vocabulary, batch, a)
        out.append(Run(str(name), ranked))
    return out
