"""Metric Unanimity MU (docs/metrics.md#metric-unanimity; Amigó, Spina & Carrillo-de-Albornoz, SIGIR 2018).

Not to be confused with MUP (agreement with users). Sample space: ordered pairs ``(i, j)``,
``i != j``, of runs on the same topic, pooled over topics. For the metric ``m`` and the set ``M``
of all other metrics::

    m_ij = 1 if m(i) > m(j); 0.5 if tied; 0 otherwise
    M_ij = 1 if m'(i) >= m'(j) for every m' in M (``>`` with strict=True), else 0
    MU_M(m) = log2( P(m, M) / (P(m) P(M)) )

``P(M) = 0`` gives NaN, ``P(m, M) = 0`` gives ``-inf``. Differences with ``|d| <= 1e-12`` are ties.
Unanimity needs every metric on the same pairs: topics where some metric is undefined are left out
with a warning that names the metrics (:meth:`ScoreCube.common`); ``pairs`` is what remains.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from evaluation._types import FloatArray
from evaluation.exceptions import EvaluationError
from evaluation.meta._matrix import ScoreCube
from evaluation.meta.agreement import TIE

COLUMNS = ["measure", "MU", "P_m", "P_M", "P_mM", "pairs"]


def ordered_pair_differences(values: FloatArray) -> FloatArray:
    """``m(i) - m(j)`` for all ordered pairs ``i != j`` per topic: (G, n_topics, m, m) -> (G, S)."""
    G, n, m = values.shape
    d = values[:, :, :, None] - values[:, :, None, :]
    off = ~np.eye(m, dtype=bool)
    return d[:, :, off].reshape(G, n * m * (m - 1))


def metric_unanimity(cube: ScoreCube, measures: Sequence[str] | None = None, *, strict: bool = False) -> pd.DataFrame:
    """MU of every measure against all the others in ``cube`` (or in ``measures``).

    Returns columns ``measure MU P_m P_M P_mM pairs`` (``pairs`` = size of the sample space).
    """
    cube = cube.common(list(measures) if measures is not None else None, why="metric unanimity")
    G = len(cube.measures)
    if G < 2:
        raise EvaluationError("metric unanimity needs at least 2 measures")
    if len(cube.runs) < 2:
        raise EvaluationError("metric unanimity needs at least 2 runs")
    d = ordered_pair_differences(cube.values)
    m_ij = np.where(d > TIE, 1.0, np.where(d >= -TIE, 0.5, 0.0))  # (G, S)
    prefers = d > TIE if strict else d >= -TIE  # (G, S)
    rows = []
    for g, measure in enumerate(cube.measures):
        others = np.delete(prefers, g, axis=0).all(axis=0)
        p_m = m_ij[g].mean()
        p_big = others.mean()
        p_joint = (m_ij[g] * others).mean()
        rows.append((measure, _mu(p_joint, p_m, p_big), p_m, p_big, p_joint, d.shape[1]))
    return pd.DataFrame.from_records(rows, columns=COLUMNS)


def _mu(p_joint: float, p_m: float, p_big: float) -> float:
    if p_big == 0 or p_m == 0:
        return float("nan")
    if p_joint == 0:
        return float("-inf")
    return float(np.log2(p_joint / (p_m * p_big)))
