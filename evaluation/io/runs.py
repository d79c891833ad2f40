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

from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from itertools import chain
from pathlib import Path
from typing import Literal

import numpy as np

from evaluation._types import IntArray
from evaluation.exceptions import EvaluationError, FormatError, warn
from evaluation.io._lines import expect_columns, numbered_fields, parse_float, parse_int
from evaluation.io._run_columns import plain_columns
from evaluation.wording import named

RunOrder = Literal["score", "rank", "file", "pyndeval"]
ORDERS: tuple[str, ...] = ("score", "rank", "file", "pyndeval")


@dataclass(frozen=True)
class Run:
    """A system's ranked lists: ``lists[topic]`` is the ranked tuple of docids (best first).

    A topic may also map to ``{docid: score}`` (pytrec_eval's form): that list is ranked by score
    descending, ties by docid descending (trec_eval's order, docs/metrics.md#runs), never by the
    dict's insertion order. Scores must be finite numbers.
    """

    name: str
    lists: Mapping[str, Sequence[str]] = field(default_factory=dict)
    source: str | None = field(default=None, compare=False, repr=False)  # the file read_run read it from

    def __post_init__(self) -> None:
        if not self.name:
            raise EvaluationError("a run needs a non-empty name")
        if isinstance(self.lists, RankedLists):
            return  # built by runs_from_arrays, which already removed or rejected duplicates
        if any(isinstance(docs, Mapping) for docs in self.lists.values()):
            object.__setattr__(self, "lists", {t: _ranked_by_score(self.name, t, docs) for t, docs in self.lists.items()})
        for topic, docs in self.lists.items():
            if isinstance(docs, (str, bytes)):
                raise EvaluationError(f"run {self.name} topic {topic}: expected a ranked list of docids, got the string {docs!r}")
            if len(set(docs)) != len(docs):
                twice = [d for d, n in Counter(docs).items() if n > 1]
                raise EvaluationError(
                    f"run {self.name} topic {topic}: {named('docid', twice)} listed twice (each document once; to keep first"
                    " occurrences: list(dict.fromkeys(docids)))"
                )

    def __repr__(self) -> str:
        """Counts only (``Run('bm25', 50 topics, depth 1000)``), never every ranked list."""
        return f"Run({self.name!r}, {len(self.lists)} topics, depth {self.depth})"

    @classmethod
    def from_df(
        cls, frame, name: str | None = None, *, q_id_col: str = "query_id", doc_id_col: str = "doc_id", score_col: str = "score"
    ) -> Run:
        """The run of a DataFrame with columns ``query_id doc_id score`` (ir_measures' names; ``[run]``
        naming it), ranked like :func:`read_run` (score desc, ties by docid desc). Other column names
        as ranx's ``Run.from_df`` takes them: ``q_id_col``, ``doc_id_col``, ``score_col``."""
        from evaluation.io.inputs import as_runs

        given = {q_id_col: "query_id", doc_id_col: "doc_id", score_col: "score"}
        missing = [column for column in given if column not in frame.columns]
        if missing:
            raise ValueError(
                f"run DataFrame lacks {'column' if len(missing) == 1 else 'columns'} {', '.join(map(str, missing))}; has "
                f"{', '.join(map(str, frame.columns))} (name yours with q_id_col=, doc_id_col=, score_col=)"
            )
        renamed = {old: new for old, new in given.items() if old != new}
        if renamed:
            frame = frame.drop(columns=[c for c in given.values() if c in frame.columns and c not in given]).rename(columns=renamed)
        runs = as_runs(frame) if name is None else as_runs({name: frame.drop(columns=["run"], errors="ignore")})
        if len(runs) != 1:
            raise EvaluationError(f"the frame holds {len(runs)} runs ({', '.join(r.name for r in runs)}); use evaluation.io.inputs.as_runs")
        return runs[0]

    def to_dataframe(self):
        """``query_id doc_id rank score run``, one row per ranked document; ``score`` counts down from the
        list length to 1, so :meth:`from_df` and :func:`read_run` give this ranking back."""
        import pandas as pd

        rows = [(topic, doc, rank) for topic in self.lists for rank, doc in enumerate(self.lists[topic], start=1)]
        frame = pd.DataFrame(rows, columns=["query_id", "doc_id", "rank"])
        length = frame.groupby("query_id", sort=False)["rank"].transform("size") if rows else frame["rank"]
        frame["score"] = (length - frame["rank"] + 1).astype(float)
        frame["run"] = self.name
        return frame

    def save(self, path: str | Path) -> None:
        """Write a TREC run file ``topic Q0 docid rank score tag`` (scores as in :meth:`to_dataframe`),
        atomically; reading it back gives this run, less topics with an empty list (a run file cannot
        list them). A name, topic or docid that the file could not hold (blank inside, empty, a topic
        starting with ``#``, read as a comment; text UTF-8 cannot hold, a lone surrogate) is an EvaluationError and nothing
        is written."""
        from evaluation.io.scores import write_atomic

        _check_writable("run name", [self.name])
        _check_writable("topic", list(self.lists), comment=True)
        try:
            frame = self.to_dataframe()
        except UnicodeEncodeError:  # pyarrow met a docid UTF-8 cannot hold: name it
            _check_writable("docid", [docid for docids in self.lists.values() for docid in docids])
            raise
        _check_writable("docid", frame["doc_id"].unique().tolist())
        lines = [
            f"{t} Q0 {d} {r} {s:g} {self.name}\n" for t, d, r, s in zip(frame["query_id"], frame["doc_id"], frame["rank"], frame["score"])
        ]
        write_atomic(path, "".join(lines))

    def per_subtopic(self, subtopics: Mapping[str, Sequence[str]], key: str = "{topic}/{subtopic}") -> Run:
        """The run for a per-subtopic collection: each topic's list repeated under ``key`` for every subtopic."""
        lists = {key.format(topic=t, subtopic=s): docs for t, docs in self.lists.items() for s in subtopics.get(t, ())}
        return Run(self.name, lists)

    @property
    def depth(self) -> int:
        """Length of the run's longest list."""
        if isinstance(self.lists, RankedLists):
            return self.lists.longest
        return max(map(len, self.lists.values()), default=0)


class RankedLists(Mapping[str, tuple[str, ...]]):
    """A run's ranked lists stored flat: reads like ``{topic: (docid, ...)}``.

    The list of ``topics[n]`` is ``docids[offsets[n]:offsets[n + 1]]``, best first. Runs built
    together by :func:`runs_from_arrays` hold views of one flat array (their :class:`ListBatch`, from its
    list ``first`` on), so laying consecutive runs out over a collection reads one slice of it; without
    ``docids`` they are read from the batch when first asked for (a batch of encoded docids makes them then).
    Lists hold no repeated docid.
    """

    def __init__(
        self, topics: tuple[str, ...], offsets: IntArray, docids: np.ndarray | None = None, batch: ListBatch | None = None, first: int = 0
    ) -> None:
        if docids is None and batch is None:
            raise ValueError("RankedLists needs its docids or the ListBatch holding them")
        self.topics, self.offsets, self._docids, self.batch, self.first = topics, offsets, docids, batch, first

    @property
    def docids(self) -> np.ndarray:
        """Every list's docids one after the other (object array)."""
        if self._docids is None:
            bounds = self.batch.bounds
            self._docids = self.batch.docids[bounds[self.first] : bounds[self.first + len(self.topics)]]
        return self._docids

    @classmethod
    def of(cls, lists: Mapping[str, Sequence[str]]) -> RankedLists:
        """The flat form of any mapping topic -> ranked docids."""
        if isinstance(lists, RankedLists):
            return lists
        values = list(lists.values())
        offsets = np.zeros(len(values) + 1, dtype=np.int64)
        np.cumsum([len(v) for v in values], out=offsets[1:])
        docids = np.array(list(chain.from_iterable(values)), dtype=object)
        return cls(tuple(lists), offsets, docids)

    @cached_property
    def lengths(self) -> IntArray:
        return np.diff(self.offsets)

    @cached_property
    def longest(self) -> int:
        """The longest list's length (0 without lists)."""
        return int(self.lengths.max(initial=0))

    @cached_property
    def _position(self) -> dict[str, int]:
        return {t: n for n, t in enumerate(self.topics)}

    def __getitem__(self, topic: str) -> tuple[str, ...]:
        n = self._position[topic]
        return tuple(self.docids[self.offsets[n] : self.offsets[n + 1]].tolist())

    def __iter__(self) -> Iterator[str]:
        return iter(self.topics)

    def __len__(self) -> int:
        return len(self.topics)

    def __repr__(self) -> str:
        return f"RankedLists({len(self.topics)} topics, {int(self.lengths.sum())} ranked documents)"


@dataclass(frozen=True, eq=False)
class ListBatch:
    """The ranked lists of several runs built together by :func:`runs_from_arrays`, flat: list ``n`` is
    run ``run[n]``'s list for ``topics[topic[n]]``, ``docids[bounds[n]:bounds[n + 1]]`` (runs in order,
    each run's lists contiguous). Laying consecutive runs out over a collection reads one slice."""

    topics: np.ndarray
    run: IntArray
    topic: IntArray
    bounds: IntArray
    flat_docids: np.ndarray | None  # None: made from ``codes`` and ``dictionary`` when first read (:attr:`docids`)
    codes: IntArray | None = None  # shallow lists of many runs: each docid's position in ``dictionary`` (encode_strings)
    dictionary: object | None = None  # a pyarrow string array

    @cached_property
    def docids(self) -> np.ndarray:
        """Every entry's docid (object array): ``flat_docids``, or the dictionary's strings at the codes, made when first
        read (the layout over a collection reads the codes only; this is for reading the runs' lists)."""
        if self.flat_docids is not None:
            return self.flat_docids
        return np.take(self.dictionary.to_numpy(zero_copy_only=False), self.codes)

    def positions(self, lookup, lo: int, hi: int) -> IntArray:
        """Positions of the docids of entries ``lo:hi`` among a :class:`~evaluation._factorize.Lookup`'s values:
        encoded docids look the dictionary up once, then each entry takes its code's position."""
        if self.codes is None:
            return lookup.positions(self.flat_docids[lo:hi])
        return np.take(lookup.positions(self.dictionary), self.codes[lo:hi])

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


def _ranked_by_score(run: str, topic: str, docs: Mapping[str, float] | Sequence[str]) -> tuple[str, ...]:
    """``{docid: score}`` ranked by score descending, ties by docid descending (trec_eval); a list as it is."""
    if not isinstance(docs, Mapping):
        return tuple(docs)
    for doc, score in docs.items():
        if isinstance(score, bool) or not isinstance(score, (int, float, np.number)) or not np.isfinite(score):
            raise EvaluationError(f"run {run} topic {topic} doc {doc}: score {score!r} is not a finite number")
    return tuple(doc for doc, _ in sorted(docs.items(), key=lambda item: (item[1], item[0]), reverse=True))


def _duplicate_message(run: str, topic: str, dropped: Sequence[str]) -> str:
    return f"run {run} topic {topic}: duplicate {named('docid', sorted(set(dropped)))}"


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
        warn(f"{message}; kept the highest-ranked occurrence")
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
    run = None
    if columns is not None:
        topic, doc, rank, score, tag = columns
        names = np.empty(topic.size, dtype=object)
        names.fill(name or tag or Path(path).stem)  # fill: ten times quicker than np.full for objects
        try:
            (run,) = runs_from_arrays(names, topic, doc, score, ranks=rank, order=order, on_duplicate_doc=on_duplicate_doc)
        except EvaluationError:
            pass  # a repeated rank or docid: the reader below reports it with its line
    if run is None:
        run = _read_run_lines(path, order=order, on_duplicate_doc=on_duplicate_doc, name=name)
    object.__setattr__(run, "source", str(path))  # frozen; not re-validated: an error can then name the file
    return run


def run_file_name(path: str | Path) -> str:
    """The name :func:`read_run` gives the run in ``path``: the tag column of its first line (the
    file's stem when that line has no six fields), read from that line alone."""
    with open(path, encoding="utf-8-sig", errors="replace") as handle:
        for raw in handle:
            fields = raw.split()
            if fields and not fields[0].startswith("#"):
                return fields[5] if len(fields) == 6 else Path(path).stem
    return Path(path).stem


def _read_run_lines(path: str | Path, *, order: RunOrder, on_duplicate_doc: Literal["keep_first", "error"], name: str | None) -> Run:
    """The validating line reader of :func:`read_run`."""
    rows: dict[str, list[tuple[float, int, int, str]]] = {}
    tag = None
    tags: dict[str, None] = {}  # every tag, in file order
    ranks: dict[tuple[str, int], int] = {}
    for number, fields in numbered_fields(path):
        expect_columns(path, number, fields, (6,), "topic Q0 docid rank score tag")
        topic, _, doc, raw_rank, raw_score, line_tag = fields
        try:
            rank = parse_int(path, number, raw_rank, "rank")
            score = parse_float(path, number, raw_score, "score")
        except FormatError as exc:  # the row's topic and document too, not only its line
            raise FormatError(path, number, f"{exc.reason} (topic {topic}, doc {doc})") from None
        if tag is None:
            tag = line_tag
        tags[line_tag] = None
        if order == "rank":
            if (topic, rank) in ranks:
                raise FormatError(path, number, f"rank {rank} repeated for topic {topic} (first on line {ranks[topic, rank]})")
            ranks[topic, rank] = number
        rows.setdefault(topic, []).append((score, rank, number, doc))
    lists: dict[str, tuple[str, ...]] = {}
    run_name = name or tag or Path(path).stem
    if len(tags) > 1:  # trec_eval reads one run per file whatever its tags; say so rather than merge in silence
        shown = ", ".join(list(tags)[:5]) + (", ..." if len(tags) > 5 else "")
        warn(f"{path}: {len(tags)} run tags in one file ({shown}): read as one run {run_name}; give each run its own file")
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


def _check_writable(what: str, values: list[str], *, comment: bool = False) -> None:
    """Refuse a value a whitespace-separated UTF-8 run file line cannot hold as one field."""
    for value in values:
        if not value or any(c.isspace() for c in value) or (comment and value.startswith("#")):
            raise EvaluationError(f"cannot save the run: {what} {value!r} cannot be a field of a TREC run file line")
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as error:  # a lone surrogate, e.g. from bytes decoded with errors="surrogateescape"
            raise EvaluationError(
                f"cannot save the run: {what} {value!r} cannot be written in UTF-8 ({error.reason}: {value[error.start]!r})"
            ) from None


def _check_options(order: str, on_duplicate_doc: str) -> None:
    if order not in ORDERS:
        raise ValueError(f"order must be one of {', '.join(ORDERS)}, got {order!r}")
    if on_duplicate_doc not in ("keep_first", "error"):
        raise ValueError(f"on_duplicate_doc must be 'keep_first' or 'error', got {on_duplicate_doc!r}")


from evaluation.io.run_layout import runs_from_arrays  # noqa: E402  (it builds the Run and RankedLists above)
