"""Integer codes for object values (docids, topics, intents, run names), by first appearance."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property
from itertools import chain, groupby, repeat
from operator import itemgetter

import numpy as np
import pandas as pd

from evaluation._types import IntArray

try:  # pyarrow (the [parquet] extra): Lookup's string look-ups
    import pyarrow as _pa
    import pyarrow.compute as _pc
except ImportError:  # pragma: no cover - without pyarrow, a dict serves
    _pa = _pc = None


def as_objects(values: Sequence | np.ndarray) -> np.ndarray:
    """``values`` as a 1-d object array; a list is copied in one pass (``np.asarray`` inspects it first)."""
    if isinstance(values, (list, tuple)):
        return np.fromiter(values, dtype=object, count=len(values))
    return np.asarray(values, dtype=object)


def factorize(values: Sequence | np.ndarray) -> tuple[IntArray, np.ndarray]:
    """``pd.factorize`` of an object array: codes (-1 for None/NaN) and the distinct values in order
    of first appearance."""
    codes, uniques = pd.factorize(as_objects(values))
    return codes.astype(np.int64, copy=False), np.asarray(uniques, dtype=object)


def block_heads(*columns: Sequence | np.ndarray) -> IntArray:
    """First positions of the blocks of neighbours equal in every column (entries of one run list, or
    of one qrels topic and intent, come in such blocks).

    ``itertools.groupby`` walks each column in C (a string equal to its neighbour is usually the same
    object: an identity check), twice as quick on long blocks as making an object array and comparing
    it with its shifted self; the columns themselves are not copied."""
    n = len(columns[0])
    if any(len(column) != n for column in columns):
        raise ValueError("columns of different lengths")
    heads = np.zeros(n, dtype=bool)
    for column in columns:
        sizes = equal_run_sizes(column)
        heads[np.cumsum(sizes) - sizes] = True
    return np.flatnonzero(heads)


SHORT_BLOCK = 8  # blocks shorter than this are left to ``groupby`` (:func:`equal_run_sizes`)


def equal_run_sizes(column: Sequence | np.ndarray) -> IntArray:
    """Sizes of the blocks of neighbours equal in ``column`` (``itertools.groupby``'s groups).

    A list or tuple of strings is walked block by block, not entry by entry: the block's end is first
    guessed to be as far as the previous block's length (a run's lists of one depth, a topic's
    judgments under each intent), else found by probing at doubling distances and bisecting; then
    ``list.count`` over the block confirms that every entry in it equals its first (one C-level pass, an
    identity check for the usual repeated string object; ``groupby`` compares the same way, ``==``
    after identity). From the first block shorter than :data:`SHORT_BLOCK` (or one not confirmed, or a
    first entry that is not a ``str``) ``groupby`` walks the rest."""
    sizes: list[int] = []
    a, n, guess = 0, len(column), 1
    span, resume = SPAN_BLOCK, 0  # blocks the next look ahead checks at once; where it may start
    if isinstance(column, (list, tuple)):
        while a < n:
            head = column[a]
            if type(head) is not str:
                break
            b = a + guess
            if not (b <= n and head == column[b - 1] and (b == n or not head == column[b])):
                equal, probe = a, a + 1  # column[equal] == head; column[probe] unknown
                while probe < n and head == column[probe]:
                    equal, probe = probe, a + 2 * (probe - a)
                probe = min(probe, n)  # column[probe] != head, or the end
                while probe - equal > 1:
                    middle = (equal + probe) // 2
                    if head == column[middle]:
                        equal = middle
                    else:
                        probe = middle
                b = equal + 1
            if b - a < SHORT_BLOCK or column[a:b].count(head) != b - a:
                break
            sizes.append(b - a)
            a, guess = b, b - a
            if guess <= SPAN_BLOCK and a >= resume:
                blocks = _equal_blocks_ahead(column, a, guess, span)
                if blocks:
                    sizes.extend([guess] * blocks)
                    a, span = a + blocks * guess, 2 * span
                else:  # sizes vary here: walk block by block for a while
                    resume, span = a + span * guess, SPAN_BLOCK
    if a < n:
        rest = column[a:] if a else column
        sizes.extend(map(len, map(list, map(itemgetter(1), groupby(rest)))))
    return np.array(sizes, dtype=np.int64)


SPAN_BLOCK = 64  # blocks up to this long are also checked many at once (:func:`_equal_blocks_ahead`)


def _equal_blocks_ahead(column: list | tuple, a: int, size: int, span: int) -> int:
    """How many blocks of ``size`` equal strings start at ``a``, checked at once: ``max(span, size)`` blocks
    (fewer near the end), or 0 when not all of them are such blocks.

    Short blocks (a run's lists at depth 20: 5,000 blocks of 20 per 100,000 lines) cost more in Python per
    block than in C per entry, so ``size`` strided slices, one per offset within a block, are compared
    with the blocks' heads (list ``==``: identity, then ``==``, as ``groupby`` compares), after checking
    that the heads are strings that differ from their neighbours and from the entry after the last block.
    """
    blocks = min(max(span, size), (len(column) - a) // size)
    if blocks < 2:
        return 0
    end = a + blocks * size
    heads = column[a:end:size]
    if set(map(type, heads)) != {str} or any(map(str.__eq__, heads[1:], heads[:-1])):
        return 0
    if end < len(column) and heads[-1] == column[end]:
        return 0
    for offset in (size - 1, *range(1, size - 1)):  # a block one shorter or longer shows first in its last entry
        if column[a + offset : end : size] != heads:
            return 0
    return blocks


def at_positions(values: Sequence | np.ndarray, where: IntArray) -> np.ndarray:
    """``values[where]`` as an object array, for a list as well as an array."""
    if isinstance(values, np.ndarray):
        return values[where].astype(object, copy=False)
    return as_objects([values[n] for n in where.tolist()])


def factorize_blocks(*columns: Sequence | np.ndarray, heads: IntArray | None = None) -> list[tuple[IntArray, np.ndarray]]:
    """:func:`factorize` of each column, hashing only the first entry of each block of neighbours
    equal in every column (see :func:`block_heads`; ``heads`` if already known)."""
    heads = block_heads(*columns) if heads is None else heads
    sizes = np.diff(np.append(heads, len(columns[0])))
    out = []
    for column in columns:
        codes, names = factorize(at_positions(column, heads))
        out.append((np.repeat(codes, sizes), names))
    return out


def factorize_repeats(values: Sequence | np.ndarray, heads: IntArray) -> tuple[IntArray, np.ndarray]:
    """:func:`factorize` of ``values`` cut into blocks at ``heads`` (ascending, the first 0), hashing only
    the blocks that differ from the block before them: a block equal to it entry for entry (Python's
    ``==``, as a hash table compares) takes its codes. Qrels list a topic's documents again under each
    of its intents, so most of their docids need no hashing. Same codes and values as ``factorize``."""
    n = len(values)
    items = values.tolist() if isinstance(values, np.ndarray) else values
    bounds = np.append(heads, n).astype(np.int64)
    edges = bounds.tolist()
    sizes = np.diff(bounds)
    original = np.arange(sizes.size)  # the block whose codes each block takes
    for b in range(1, sizes.size):
        a0, a1, a2 = edges[b - 1], edges[b], edges[b + 1]
        if a2 - a1 == a1 - a0 and items[a1:a2] == items[a0:a1]:
            original[b] = original[b - 1]
    hashed = original == np.arange(sizes.size)
    if hashed.all():
        return factorize(values)
    kept = np.flatnonzero(hashed).tolist()
    codes, uniques = factorize(list(chain.from_iterable(items[edges[b] : edges[b + 1]] for b in kept)))
    offset = np.zeros(sizes.size, dtype=np.int64)  # each hashed block's first position among the hashed values
    offset[hashed] = np.cumsum(sizes[hashed]) - sizes[hashed]
    return codes[np.repeat(offset[original] - bounds[:-1], sizes) + np.arange(n)], uniques


class Lookup:
    """Positions of values among ``distinct`` (an object array without repeats, e.g. the uniques of
    :func:`factorize`), -1 for values it lacks, like ``pd.Index(distinct).get_indexer(values)``.

    Strings go through pyarrow's ``pyarrow.compute.index_in`` when pyarrow is installed (the
    ``[parquet]`` extra; the quickest on deep runs' mostly unjudged docids), the value set converted
    once; anything else, or without pyarrow, through one C-level pass of ``dict.get``."""

    def __init__(self, distinct: np.ndarray) -> None:
        self.distinct = distinct

    @cached_property
    def index(self) -> dict[object, int]:
        return dict(zip(self.distinct.tolist(), range(len(self.distinct))))

    @cached_property
    def value_set(self) -> object | None:
        if _pa is None:
            return None
        try:
            return _pa.array(self.distinct, type=_pa.string())
        except (_pa.ArrowInvalid, _pa.ArrowTypeError, UnicodeEncodeError):  # the last: a lone surrogate
            return None

    def descending(self, codes: IntArray) -> IntArray | None:
        """Positions of ``codes`` (indices into ``distinct``) ordered by their values, greatest first, a
        stable sort (``sorted(..., reverse=True)``): pyarrow's sort of the strings (UTF-8 byte order,
        which is Python's code point order), or None when there is no pyarrow value set."""
        if self.value_set is None:
            return None
        taken = self.value_set.take(_pa.array(codes, type=_pa.int64()))
        return _pc.array_sort_indices(taken, order="descending").to_numpy().astype(np.int64, copy=False)

    def positions(self, values: Sequence | np.ndarray) -> IntArray:
        """Positions of ``values`` (a sequence, an array, or a pyarrow string array) among ``distinct``."""
        if _pa is not None and isinstance(values, _pa.Array):
            if self.value_set is not None and len(values):
                found = _pc.index_in(values, value_set=self.value_set)
                return found.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64, copy=False)
            values = values.to_pylist()
        if self.value_set is not None and len(values):
            try:
                found = _pc.index_in(_pa.array(values, type=_pa.string()), value_set=self.value_set)
            except (_pa.ArrowInvalid, _pa.ArrowTypeError, UnicodeEncodeError):  # not all strings, a None, a surrogate: a dict
                pass
            else:
                return found.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64, copy=False)
        items = values.tolist() if isinstance(values, np.ndarray) else values
        return np.fromiter(map(self.index.get, items, repeat(-1)), dtype=np.int64, count=len(items))


ENCODE_KEEP_SHARE = 4  # join_encoded keeps a dictionary of at most one distinct value per this many entries


def encode_strings(values: Sequence | np.ndarray) -> tuple[IntArray, object] | tuple[None, None]:
    """``(codes, dictionary)``: pyarrow's ``dictionary_encode`` of ``values`` (each value's position in the
    distinct values, a pyarrow string array in order of first appearance), or ``(None, None)`` without
    pyarrow, for no values, or when a value is not a string (``None`` and NaN included)."""
    if _pa is None or not len(values):
        return None, None
    try:
        strings = _pa.array(values, type=_pa.string())
    except (_pa.ArrowInvalid, _pa.ArrowTypeError, UnicodeEncodeError):  # the last: a lone surrogate
        return None, None
    if strings.null_count:
        return None, None
    encoded = _pc.dictionary_encode(strings)
    return encoded.indices.to_numpy(), encoded.dictionary


def join_encoded(parts: list[tuple[IntArray | None, object | None]], entries: int) -> tuple[IntArray, object] | tuple[None, None]:
    """The :func:`encode_strings` results of consecutive parts as one: codes into the parts' dictionaries
    one after the other (a value may appear in several). ``(None, None)`` when a part was not encoded, or when
    the dictionaries hold more than one value per :data:`ENCODE_KEEP_SHARE` entries (values that seldom
    repeat: the strings are looked up as they are, no copy of them kept)."""
    if not parts or any(codes is None for codes, _ in parts):
        return None, None
    sizes = [len(dictionary) for _, dictionary in parts]
    if sum(sizes) * ENCODE_KEEP_SHARE > entries:
        return None, None
    if len(parts) == 1:
        return parts[0]
    offsets = np.cumsum([0] + sizes[:-1]).tolist()
    codes = np.concatenate([codes.astype(np.int64) + offset for (codes, _), offset in zip(parts, offsets)])
    return codes, _pa.concat_arrays([dictionary for _, dictionary in parts])


def repeated_in_groups(sizes: IntArray, codes: IntArray) -> np.ndarray:
    """Boolean mask of the integer codes that already appeared earlier in the same list (lists: consecutive
    blocks of ``sizes`` codes), as :func:`repeated_in_lists` finds repeated values: a sort finds out that no
    list repeats a code, the usual case."""
    if codes.size < 2:
        return np.zeros(codes.size, dtype=bool)
    key = np.repeat(np.arange(sizes.size, dtype=np.int64) * (int(codes.max()) + 1), sizes) + codes
    return repeated_keys(key)


REPEAT_BLOCK = 1024  # values per set of :func:`repeated_in_lists` (short lists are checked together)


def repeated_in_lists(sizes: IntArray, values: np.ndarray, together: IntArray | None = None) -> np.ndarray:
    """Boolean mask of the values that already appeared earlier in the same list (lists: consecutive
    blocks of ``sizes`` values), like ``pd.DataFrame({"list": list_of_each, "value": values}).duplicated()``.

    No hash table of every value at once (at TREC depth, millions of docids that are mostly distinct):
    consecutive short lists of equal ``together`` (a run's lists: different topics, which seldom share
    a docid) are taken together in blocks of about :data:`REPEAT_BLOCK` values (a longer list alone),
    and one set per block tells whether the block has a repeat at all (one C-level pass, each docid's
    cached hash; a set costs about a microsecond before its values, more than a 20-document list's
    values). Only the lists of a block that does get a set each, and only the lists whose set is
    smaller than the list are walked value by value. Without ``together`` every list is a block.
    """
    out = np.zeros(values.size, dtype=bool)
    if values.size < 2:
        return out
    bounds = np.zeros(sizes.size + 1, dtype=np.int64)
    np.cumsum(sizes, out=bounds[1:])
    # short lists: slices of a Python list are cheaper than views of the array
    items = values.tolist() if values.size < 64 * sizes.size else values
    starts = bounds[:-1]
    opens = np.ones(sizes.size, dtype=bool)  # list n opens a block
    if together is not None:
        opens[1:] = (together[1:] != together[:-1]) | (starts[1:] // REPEAT_BLOCK != starts[:-1] // REPEAT_BLOCK)
        opens[1:] |= (sizes[1:] >= REPEAT_BLOCK) | (sizes[:-1] >= REPEAT_BLOCK)
    first = np.flatnonzero(opens)  # each block's first list
    suspect = _fewer_distinct(items, np.append(starts[first], values.size))
    if first.size == sizes.size:  # every list a block of its own
        repeating = first[suspect]
    elif suspect.any():
        last = np.append(first[1:], sizes.size)
        lists = np.concatenate([np.arange(a, b) for a, b in zip(first[suspect].tolist(), last[suspect].tolist())])
        repeating = lists[_fewer_distinct(items, bounds[lists], bounds[lists + 1])]
    else:
        return out
    for n in repeating.tolist():
        seen: set[object] = set()
        a = int(bounds[n])
        for k, value in enumerate(values[a : bounds[n + 1]].tolist()):
            if value in seen:
                out[a + k] = True
            else:
                seen.add(value)
    return out


def _fewer_distinct(items: Sequence | np.ndarray, starts: IntArray, ends: IntArray | None = None) -> np.ndarray:
    """For each slice ``items[starts[n]:ends[n]]`` (``ends`` defaults to the next start), whether it
    holds fewer distinct values than entries."""
    if ends is None:
        starts, ends = starts[:-1], starts[1:]
    slices = map(slice, starts.tolist(), ends.tolist())
    distinct = np.fromiter(map(len, map(set, map(items.__getitem__, slices))), dtype=np.int64, count=starts.size)
    return distinct < ends - starts


def has_missing(values: np.ndarray) -> bool:
    """Whether an object array holds None or NaN; a scan that only checks for strings first (the usual
    docids), as a missing-value check on every entry costs several times more."""
    return pd.api.types.infer_dtype(values, skipna=False) != "string" and bool(pd.isna(values).any())


NEARLY_SORTED = 64  # repeated_keys sorts by timsort when fewer than one key in this many is below its predecessor


def repeated_keys(key: IntArray) -> np.ndarray:
    """Boolean mask of the integer keys that already appeared earlier in ``key`` (like
    ``pd.Series.duplicated``); a sort finds out that none did, the usual case, faster than hashing.

    Keys that mostly ascend already (a qrels' ``(topic, intent, docid)`` keys: a topic's intents list its
    documents in one order) are sorted by ``kind="stable"`` (timsort for int64: one pass over each ascending
    stretch and a merge, 0.04 against 0.58 ms for 43,840 keys with 8 descents); others by the default
    introsort (timsort is ten times slower on shuffled keys)."""
    if key.size < 2:
        return np.zeros(key.size, dtype=bool)
    descents = np.count_nonzero(key[1:] < key[:-1])
    ordered = np.sort(key, kind="stable" if descents * NEARLY_SORTED < key.size else None)
    if not (ordered[1:] == ordered[:-1]).any():
        return np.zeros(key.size, dtype=bool)
    return pd.Series(key).duplicated().to_numpy()
