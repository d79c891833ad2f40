"""Grouped numpy helpers of :mod:`evaluation.arrays`: per-group descending sorts (ideal lists), per-topic
reductions of rows grouped by topic, and cutting or zero-padding the last axis."""

from __future__ import annotations

import numpy as np

from evaluation._types import FloatArray, IntArray


def descending_by_group(values: FloatArray, group: IntArray, n_groups: int, length: int, *, order: IntArray | None = None) -> FloatArray:
    """``(n_groups, length)``: each group's values sorted descending, cut or zero padded to ``length``; ``order``: the
    entries already ordered by group, then value descending (else sorted here)."""
    order = np.lexsort((-values, group)) if order is None else order
    values, group = values[order], group[order]
    fresh = np.ones(group.size, dtype=bool)
    np.not_equal(group[1:], group[:-1], out=fresh[1:])
    starts = np.flatnonzero(fresh)
    position = np.arange(group.size) - np.repeat(starts, np.diff(np.append(starts, group.size)))  # rank within the group
    fits = position < length
    out = np.zeros((n_groups, length))
    out[group[fits], position[fits]] = values[fits]
    return out


def per_topic_reduce(ufunc: np.ufunc, values: np.ndarray, starts: IntArray) -> np.ndarray:
    """``ufunc``-reduce ``values`` (rows grouped by topic, groups starting at ``starts``) per topic;
    0 for topics without rows."""
    out = np.zeros((starts.size,) + values.shape[1:], dtype=np.int64)
    if values.shape[0]:
        filled = np.append(starts[1:], values.shape[0]) > starts
        out[filled] = ufunc.reduceat(values.astype(np.int64), starts[filled], axis=0)
    return out


def fit(array: np.ndarray, length: int) -> np.ndarray:
    """Cut or zero-pad the last axis of ``array`` to ``length``."""
    have = array.shape[-1]
    if have >= length:
        return array[..., :length]
    pad = [(0, 0)] * (array.ndim - 1) + [(0, length - have)]
    return np.pad(array, pad)
