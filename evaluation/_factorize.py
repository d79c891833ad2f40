"""Integer codes for object values (docids, topics, intents, run names), by first appearance."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from evaluation._types import IntArray

try:  # pyarrow (the [parquet] extra) looks strings up among others as fast as a hash table of cached hashes
    import pyarrow as _pa
    import pyarrow.compute as _pc
except ImportError:  # pragma: no cover - without pyarrow, pandas' public Index.get_indexer serves
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


def block_heads(*columns: Sequence | np.ndarray) -> tuple[IntArray, list[np.ndarray]]:
    """First positions of the blocks of neighbours equal in every column (entries of one run list, or
    of one qrels topic and intent, come in such blocks), and the columns as object arrays."""
    values = [as_objects(column) for column in columns]
    n = values[0].size
    if any(v.size != n for v in values):
        raise ValueError("columns of different lengths")
    heads = np.zeros(n, dtype=bool)
    heads[:1] = True
    for v in values:
        heads[1:] |= v[1:] != v[:-1]
    return np.flatnonzero(heads), values


def factorize_blocks(*columns: Sequence | np.ndarray) -> list[tuple[IntArray, np.ndarray]]:
    """:func:`factorize` of each column, hashing only the first entry of each block of neighbours
    equal in every column (see :func:`block_heads`)."""
    heads, values = block_heads(*columns)
    sizes = np.diff(np.append(heads, values[0].size))
    out = []
    for v in values:
        codes, names = factorize(v[heads])
        out.append((np.repeat(codes, sizes), names))
    return out


def positions(distinct: np.ndarray, values: Sequence | np.ndarray) -> IntArray:
    """Position of every value in ``distinct`` (an object array without repeats, e.g. the uniques
    of :func:`factorize`), -1 for values it lacks: pyarrow's ``pyarrow.compute.index_in`` when pyarrow
    is installed and both hold strings only (3.5 times quicker on a million docids), else
    ``pd.Index.get_indexer``."""
    values = as_objects(values)
    if _pc is not None and values.size:
        try:
            found = _pc.index_in(_pa.array(values, type=_pa.string()), value_set=_pa.array(distinct, type=_pa.string()))
        except (_pa.ArrowInvalid, _pa.ArrowTypeError):  # not all strings (or a None): pandas below
            pass
        else:
            return found.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64, copy=False)
    return pd.Index(distinct, dtype=object).get_indexer(values).astype(np.int64, copy=False)


def value_hashes(values: np.ndarray) -> np.ndarray:
    """Python's ``hash`` of every value as unsigned 64-bit integers (a ``str`` computes it once and
    caches it, so a docid hashed before costs a look-up)."""
    return np.fromiter(map(hash, values), dtype=np.int64, count=values.size).view(np.uint64)


def repeated_in_groups(group: IntArray, values: np.ndarray) -> np.ndarray:
    """Boolean mask of the values that already appeared earlier in the same group (``group``: integers
    from 0), like ``pd.DataFrame({"group": group, "value": values}).duplicated()``.

    No hash table of every distinct value (at TREC depth, millions of docids that are mostly distinct,
    whose table costs far more than the rest of a run's layout): the group and the value's hash go into
    one 64-bit key, a sort finds the keys that occur more than once, and only the entries with such a
    key (the repeats themselves, and the rare values whose hashes clash) are compared by value.
    """
    out = np.zeros(values.size, dtype=bool)
    if values.size < 2:
        return out
    hashes = value_hashes(values)
    bits = int(group.max()).bit_length()  # the group in the top bits, the hash's top bits below it
    key = hashes if bits == 0 else (group.astype(np.uint64) << np.uint64(64 - bits)) | (hashes >> np.uint64(bits))
    ordered = np.sort(key)
    shared = ordered[1:][ordered[1:] == ordered[:-1]]
    if shared.size:
        suspects = np.flatnonzero(np.isin(key, shared))
        out[suspects] = pd.DataFrame({"group": group[suspects], "value": values[suspects]}).duplicated().to_numpy()
    return out


def has_missing(values: np.ndarray) -> bool:
    """Whether an object array holds None or NaN; a scan that only checks for strings first (the usual
    docids), as a missing-value check on every entry costs several times more."""
    return pd.api.types.infer_dtype(values, skipna=False) != "string" and bool(pd.isna(values).any())


def repeated_keys(key: IntArray) -> np.ndarray:
    """Boolean mask of the integer keys that already appeared earlier in ``key`` (like
    ``pd.Series.duplicated``); a sort finds out that none did, the usual case, faster than hashing."""
    ordered = np.sort(key)
    if not (ordered[1:] == ordered[:-1]).any():
        return np.zeros(key.size, dtype=bool)
    return pd.Series(key).duplicated().to_numpy()
