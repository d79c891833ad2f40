"""The run-pair inputs of the pairwise analyses (:func:`~evaluation.meta.agreement.agreement`,
:func:`~evaluation.meta.bestset.best_set`): G metric differences and P user preferences, checked in one
place (:func:`checked_pairs`), read from preference items and a score table (:func:`pair_inputs`), and
handed to either analysis with its own options (:func:`on_items`; docs/metrics.md#run-pairs-and-signs).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np
import pandas as pd

from evaluation._types import FloatArray, IntArray
from evaluation.exceptions import EvaluationError
from evaluation.meta._matrix import pair_differences, score_cube
from evaluation.meta.levels import drop_undefined

TIE = 1e-12
Result = TypeVar("Result")


def signs(values: FloatArray, tol: float = TIE) -> FloatArray:
    """``sign(x)`` with ``|x| <= tol`` mapped to 0 (floating-noise ties, docs/metrics.md#run-pairs-and-signs)."""
    values = np.asarray(values, dtype=np.float64)
    return np.where(np.abs(values) <= tol, 0.0, np.sign(values))


@dataclass(frozen=True)
class PairInputs:
    """The arrays every pairwise analysis reads from preference items and a score table."""

    d: FloatArray  # (G, P) metric differences
    p: FloatArray  # (P,) mean user preferences
    user_sign: FloatArray  # (P,) exact user signs
    clusters: IntArray  # (P,) topic index of each pair
    measures: tuple[str, ...]


def checked_pairs(
    d: FloatArray, p: FloatArray, measures: Sequence[str], user_sign: FloatArray | None = None, clusters: IntArray | None = None
) -> PairInputs:
    """``d`` (G, P; NaN where a metric is undefined on a pair) and ``p`` (P,) as float arrays, refused unless
    their shapes agree with G ``measures`` and P > 0 pairs, ``p`` is finite and ``d`` finite or NaN;
    ``user_sign`` defaults to :func:`signs` of ``p``, ``clusters`` to each pair its own topic."""
    d = np.atleast_2d(np.asarray(d, dtype=np.float64))
    p = np.asarray(p, dtype=np.float64)
    G, P = d.shape
    if len(measures) != G:
        raise ValueError(f"{len(measures)} measure names for {G} rows of differences")
    if p.shape != (P,):
        raise ValueError(f"preferences must have shape ({P},), got {p.shape}")
    if P == 0:
        raise EvaluationError("no run pairs to analyse")
    if not np.isfinite(p).all() or np.isinf(d).any():
        raise EvaluationError("preferences must be finite and metric differences finite or NaN (undefined)")
    s_u = signs(p) if user_sign is None else np.asarray(user_sign, dtype=np.float64)
    clusters = np.arange(P) if clusters is None else np.asarray(clusters)
    return PairInputs(d, p, s_u, clusters, tuple(measures))


def pair_inputs(items: pd.DataFrame, scores: pd.DataFrame, measures: Sequence[str] | None = None) -> PairInputs:
    """Metric differences, preferences and topics of the defined preference items (see :func:`on_items`)."""
    items = drop_undefined(items)
    if items.empty:
        raise EvaluationError("no run pair has a defined user preference")
    runs = sorted(set(items["run_a"]) | set(items["run_b"]))
    cube = score_cube(scores, measures, runs=runs, topics=list(dict.fromkeys(items["key"])))
    kept = items["key"].isin(cube.topics)
    if not kept.all():
        items = items[kept].reset_index(drop=True)
    d = pair_differences(cube, items["key"], items["run_a"], items["run_b"])
    _, clusters = np.unique(items["topic"].to_numpy(), return_inverse=True)
    return PairInputs(d, items["p"].to_numpy(dtype=np.float64), items["sign"].to_numpy(dtype=np.float64), clusters, tuple(cube.measures))


def on_items(
    analysis: Callable[..., Result], items: pd.DataFrame, scores: pd.DataFrame, measures: Sequence[str] | None = None, **options: Any
) -> Result:
    """``analysis(d, p, measures, user_sign=, clusters=, **options)`` of preference items against a per-topic score table.

    ``items`` come from :func:`evaluation.meta.levels.preference_items` (``key run_a run_b p sign topic``);
    ``scores`` is a tidy ``run topic measure value`` frame in which the metric of pair ``c`` is looked up under
    topic ``key`` (every needed (run, key, measure) must be present); ``measures`` default to all in the
    scores. The pairs of one topic form one cluster; ``options`` are the analysis's own.
    """
    x = pair_inputs(items, scores, measures)
    return analysis(x.d, x.p, x.measures, user_sign=x.user_sign, clusters=x.clusters, **options)
