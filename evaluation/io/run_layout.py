"""Runs from parallel arrays, one entry per run line: :func:`runs_from_arrays`.

The lines are laid out chunk by chunk (about :data:`CHUNK_LINES` lines, cut where a ranked list
ends), so the temporaries of ordering and de-duplicating cost a chunk's worth of memory whatever the
input's size; only the runs' docids (one reference per line) are kept. Lines of one list that are
not next to each other in the input (rare) are laid out in one piece.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from evaluation._factorize import (
    ENCODE_KEEP_SHARE,
    as_objects,
    at_positions,
    block_heads,
    encode_strings,
    factorize,
    has_missing,
    join_encoded,
    repeated_in_groups,
    repeated_in_lists,
    repeated_keys,
)
from evaluation._types import IntArray
from evaluation.exceptions import EvaluationError, warn
from evaluation.io.runs import ListBatch, RankedLists, Run, RunOrder, _check_options, _duplicate_message

CHUNK_LINES = 1 << 19
TOPIC_BITS = 32  # a list's group code: run code << TOPIC_BITS | topic code
TOPIC_MASK = (1 << TOPIC_BITS) - 1
ENCODE_LIST_LIMIT = 100  # chunks whose lists are at most this long ...
ENCODE_MIN_RUNS = 4  # ... and that hold at least this many runs have their docids encoded (encode_strings)


def runs_from_arrays(
    runs: Sequence[str] | np.ndarray,
    topics: Sequence[str] | np.ndarray,
    docids: Sequence[str] | np.ndarray,
    scores: Sequence[float] | np.ndarray | None = None,
    *,
    ranks: Sequence[int] | np.ndarray | None = None,
    order: RunOrder = "score",
    on_duplicate_doc: Literal["keep_first", "error"] = "keep_first",
    chunk_lines: int = CHUNK_LINES,
) -> list[Run]:
    """Runs from parallel arrays, one entry per run line ``run topic docid [rank] score``.

    The in-memory counterpart of :func:`~evaluation.io.runs.read_run` for any number of runs at once,
    with the same ordering options (docs/metrics.md#runs: ``score`` = score desc then docid desc,
    ``pyndeval`` = score desc then docid asc, ``rank``, ``file``) and the same duplicate rule (keep
    the highest-ranked occurrence with a warning, or raise). Runs, and topics within a run, come in
    order of first appearance. Errors name the run, the topic and the line (0-based entry).
    """
    _check_options(order, on_duplicate_doc)
    columns = [_sequence(c) for c in (runs, topics, docids)]
    if not len(columns[0]) == len(columns[1]) == len(columns[2]):
        raise EvaluationError("runs, topics and docids must have the same length")
    extra = [None if c is None else _sequence(c) for c in (scores, ranks)]
    if len(columns[0]) <= chunk_lines:
        return _Layout(order, on_duplicate_doc).build(*columns, *extra, chunk_lines)
    try:
        return _Layout(order, on_duplicate_doc).build(*columns, *extra, chunk_lines)
    except _SplitList:  # a list's lines are not together: one piece
        return _Layout(order, on_duplicate_doc).build(*columns, *extra, len(columns[0]))


def _sequence(values):
    """A list, tuple or array as it is (sliced, not copied); anything else (a pandas Series) as an array."""
    return values if isinstance(values, (list, tuple, np.ndarray)) else np.asarray(values)


def _part(values, a: int, b: int):
    """Entries ``[a, b)`` of an input column: the column itself when that is all of it (one chunk: a list's slice
    would copy every reference, and freeing the copy touch them all again), else a slice."""
    return values if a == 0 and b == len(values) else values[a:b]


class _SplitList(Exception):
    """One list's lines fell into two chunks."""


@dataclass(frozen=True)
class _Lists:
    """Entries laid out list by list: list ``n`` (code ``group[n]``) holds ``docids[bounds[n]:bounds[n + 1]]``;
    with ``codes``, each entry's position in ``dictionary`` (:func:`~evaluation._factorize.encode_strings`), and then
    no ``docids`` (None: the strings are the dictionary's, :meth:`values`)."""

    group: IntArray
    sizes: IntArray
    docids: np.ndarray | None
    codes: IntArray | None = None
    dictionary: object | None = None

    def values(self, where: np.ndarray | slice = slice(None)) -> np.ndarray:
        """The docids of the entries ``where`` (object array)."""
        if self.docids is not None:
            return self.docids[where]
        return np.take(self.dictionary.to_numpy(zero_copy_only=False), self.codes[where])

    @classmethod
    def of_entries(cls, group: IntArray, docids: np.ndarray, codes: IntArray | None, dictionary: object | None) -> _Lists:
        """From entries sorted by group (then rank)."""
        starts = np.flatnonzero(np.diff(group, prepend=-1))
        return cls(group[starts], np.diff(np.append(starts, group.size)), docids, codes, dictionary)

    def kept(self, keep: np.ndarray, sizes: IntArray) -> _Lists:
        """The entries where ``keep``, lists now of ``sizes``."""
        docids = None if self.docids is None else self.docids[keep]
        return _Lists(self.group, sizes, docids, None if self.codes is None else self.codes[keep], self.dictionary)


class _Layout:
    """One :func:`runs_from_arrays` call: run and topic names get codes by first appearance across chunks."""

    def __init__(self, order: str, on_duplicate_doc: str) -> None:
        self.order, self.on_duplicate_doc = order, on_duplicate_doc
        self.run_index: dict[object, int] = {}
        self.topic_index: dict[object, int] = {}
        self.messages: list[str] = []

    def name(self, group: int) -> tuple[str, str]:
        """The run and topic names of a list's group code."""
        runs, topics = list(self.run_index), list(self.topic_index)
        return str(runs[group >> TOPIC_BITS]), str(topics[group & TOPIC_MASK])

    def build(self, runs, topics, docids, scores, ranks, chunk_lines: int) -> list[Run]:
        n = len(runs)
        out, only = None, None
        groups, sizes, codes, encoded, cursor, a = [], [], [], [], 0, 0
        while a < n:
            b, heads, names, topic_values = self._chunk(runs, topics, a, n, chunk_lines)
            lists = self._lay_out(a, b, heads, names, topic_values, docids, scores, ranks)
            kept = int(lists.sizes.sum())
            if lists.docids is None:  # encoded: the strings stay in the dictionary unless the chunks cannot be joined
                encoded.append((cursor, lists))
            elif a == 0 and b == n:  # one chunk: its docids (an array of its own) are the runs', not copied again
                only = lists.docids
            else:
                if out is None:
                    out = np.empty(n, dtype=object)
                out[cursor : cursor + kept] = lists.docids
            cursor += kept
            groups.append(lists.group)
            sizes.append(lists.sizes)
            codes.append((lists.codes, lists.dictionary))
            a = b
        group, size = np.concatenate(groups or [np.zeros(0, np.int64)]), np.concatenate(sizes or [np.zeros(0, np.int64)])
        if len(groups) > 1 and repeated_keys(group).any():
            raise _SplitList
        code, dictionary = join_encoded(codes, cursor)
        if code is not None:
            docs = None  # every chunk encoded: the runs' docids are made from the dictionary if ever read
        elif encoded and len(groups) == 1:
            docs = encoded[0][1].values()
        else:
            if out is None:
                out = np.empty(n, dtype=object)
            for start, lists in encoded:  # chunks whose dictionaries cannot be joined: their strings made now
                out[start : start + lists.codes.size] = lists.values()
            docs = only if only is not None else out[:cursor]
        if not (group[1:] > group[:-1]).all():  # chunks' lists interleave (runs not one after another): by group
            group, size, entry = _by_group(group, size)
            docs, code = None if docs is None else docs[entry], None if code is None else code[entry]
        for message in self.messages:
            warn(f"{message}; kept the highest-ranked occurrence")
        return self._split(group, size, docs, code, dictionary)

    def _chunk(self, runs, topics, a: int, n: int, chunk_lines: int):
        """The next chunk ``[a, b)``, ending where a list ends (the whole rest when it is short): its block
        heads (relative to ``a``) and its run and topic names (slices of the input)."""
        size = max(chunk_lines, 1)
        while True:
            b = min(n, a + size)
            names, topic_values = _part(runs, a, b), _part(topics, a, b)
            heads = block_heads(names, topic_values)
            if b == n or heads.size > 1:
                break
            size *= 2  # one block longer than a chunk
        if b < n:  # the last block may go on in the next chunk
            cut = int(heads[-1])
            return a + cut, heads[:-1], names[:cut], topic_values[:cut]
        return b, heads, names, topic_values

    def _codes(self, values: np.ndarray, index: dict[object, int], where: Callable[[int], str]) -> IntArray:
        """Codes of the blocks' names; ``where(k)`` names block ``k``'s first line in an error."""
        codes, distinct = factorize(values)
        if (codes < 0).any():
            raise EvaluationError(f"{where(int(np.argmax(codes < 0)))}: every run line needs a run name, a topic and a docid")
        known = np.array([index.setdefault(v, len(index)) for v in distinct.tolist()], dtype=np.int64)
        return known[codes]

    def _lay_out(self, a, b, heads, names, topic_values, docids, scores, ranks) -> _Lists:
        given = _part(docids, a, b)

        def where(k: int) -> str:
            line = int(heads[k])
            return f"line {a + line} (run {names[line]} topic {topic_values[line]} doc {given[line]})"

        block_group = (self._codes(at_positions(names, heads), self.run_index, where) << TOPIC_BITS) | self._codes(
            at_positions(topic_values, heads), self.topic_index, where
        )
        sizes = np.diff(np.append(heads, b - a))
        # shallow lists of several runs: the docids encoded once, for the repeat check here and the look-up later
        shallow = (
            sizes.size
            and int(sizes.max()) <= ENCODE_LIST_LIMIT
            and np.count_nonzero(np.diff(block_group >> TOPIC_BITS)) >= ENCODE_MIN_RUNS - 1
        )
        codes, dictionary = encode_strings(given) if shallow else (None, None)  # None: a docid is not a string
        # the docids as an object array (owned, not a view: a pass that touches every string object, and another when the
        # array is freed) unless encoded with few enough distinct values for the runs to keep the dictionary (join_encoded)
        repeating = codes is not None and len(dictionary) * ENCODE_KEEP_SHARE <= b - a
        docs = None if repeating else as_objects(given) if isinstance(given, (list, tuple)) else np.array(given, dtype=object)
        if codes is None and has_missing(docs):
            line = a + int(np.flatnonzero([d is None or d != d for d in docs.tolist()])[0])
            raise EvaluationError(
                f"line {line} (run {names[line - a]} topic {topic_values[line - a]} doc {docs[line - a]}): "
                "every run line needs a run name, a topic and a docid"
            )
        key = _within_list_key(
            self.order, None if scores is None else _part(scores, a, b), None if ranks is None else _part(ranks, a, b), b - a
        )
        if key is not None and self.order != "rank" and not np.isfinite(key).all():
            line = int(np.argmax(~np.isfinite(key)))
            raise EvaluationError(
                f"line {a + line} (run {names[line]} topic {topic_values[line]} doc {given[line]}): score {-key[line]} is not a finite number"
            )
        head = np.zeros(b - a, dtype=bool)
        head[heads] = True
        if (block_group[1:] > block_group[:-1]).all() and (key is None or ((key[1:] > key[:-1]) | head[1:]).all()):
            lists = _Lists(block_group, sizes, docs, codes, dictionary)  # already in list order, no tie: the usual input
        else:
            group = np.repeat(block_group, sizes)
            position = self._list_order(group, given, key)
            moved = None if docs is None else docs[position]
            lists = _Lists.of_entries(group[position], moved, None if codes is None else codes[position], dictionary)
        return self._drop_repeated(lists)

    def _list_order(self, group: IntArray, docs: Sequence | np.ndarray, key: np.ndarray | None) -> IntArray:
        """Permutation of the entries into list order: by (run, topic) group, then docs/metrics.md#runs key."""
        if key is None:
            return np.argsort(group, kind="stable")
        position = np.lexsort((key, group))
        tied = (np.diff(group[position]) == 0) & (np.diff(key[position]) == 0)
        if not tied.any():
            return position
        if self.order == "rank":
            n = position[int(np.argmax(tied))]
            run, topic = self.name(int(group[n]))
            raise EvaluationError(f"run {run} topic {topic}: rank {key[n]} repeated")
        # equal scores in a list: docid breaks the tie (descending for "score", ascending for "pyndeval")
        members = np.unique(np.concatenate([position[:-1][tied], position[1:][tied]]))
        names = at_positions(docs, members).tolist()
        rank_of = {d: n for n, d in enumerate(sorted(set(names)))}
        tie_key = np.zeros(group.size, dtype=np.int64)
        tie_key[members] = [rank_of[d] for d in names]
        return np.lexsort((-tie_key if self.order == "score" else tie_key, key, group))

    def _drop_repeated(self, lists: _Lists) -> _Lists:
        """Keep each docid's first (highest-ranked) entry in its list; note the rest, or raise."""
        if lists.codes is not None:
            repeated = repeated_in_groups(lists.sizes, lists.codes)
        else:
            repeated = repeated_in_lists(lists.sizes, lists.docids, together=lists.group >> TOPIC_BITS)  # a run's lists
        if not repeated.any():
            return lists
        entry_list = np.repeat(np.arange(lists.sizes.size), lists.sizes)
        for n in np.unique(entry_list[repeated]).tolist():
            message = _duplicate_message(*self.name(int(lists.group[n])), lists.values(repeated & (entry_list == n)).tolist())
            if self.on_duplicate_doc == "error":
                raise EvaluationError(message)
            self.messages.append(message)
        sizes = lists.sizes - np.bincount(entry_list[repeated], minlength=lists.sizes.size)
        return lists.kept(~repeated, sizes)

    def _split(
        self, group: IntArray, sizes: IntArray, docids: np.ndarray | None, codes: IntArray | None, dictionary: object | None
    ) -> list[Run]:
        """One :class:`Run` per run; each holds a view of the flat docids (None: the batch makes them when first read)."""
        bounds = np.zeros(sizes.size + 1, dtype=np.int64)
        np.cumsum(sizes, out=bounds[1:])
        run_of_list, topic_code = group >> TOPIC_BITS, group & TOPIC_MASK
        topic_names = np.array(list(self.topic_index), dtype=object)
        first_list = np.searchsorted(run_of_list, np.arange(len(self.run_index) + 1)).tolist()
        batch = ListBatch(topic_names, run_of_list, topic_code, bounds, docids, codes, dictionary)
        topic_of_list = topic_names[topic_code].tolist()
        out = []
        for r, name in enumerate(self.run_index):
            a, b = first_list[r], first_list[r + 1]
            flat = None if docids is None else docids[bounds[a] : bounds[b]]
            ranked = RankedLists(tuple(topic_of_list[a:b]), bounds[a : b + 1] - bounds[a], flat, batch, a)
            out.append(Run(str(name), ranked))
        return out


def _by_group(group: IntArray, sizes: IntArray) -> tuple[IntArray, IntArray, IntArray]:
    """Lists reordered by group code: their groups, sizes, and the entries in the new order."""
    order = np.argsort(group, kind="stable")
    starts = (np.cumsum(sizes) - sizes)[order]
    moved = sizes[order]
    entry = np.repeat(starts - (np.cumsum(moved) - moved), moved) + np.arange(int(moved.sum()))
    return group[order], moved, entry


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
    if score.shape != (n,):
        raise EvaluationError("scores must be finite numbers, one per entry")
    return np.negative(score, out=score) if score is not scores else -score
