"""Document selection sensitivity DSS (docs/metrics.md#document-selection-sensitivity; Golbus, Aslam & Clarke, IRJ 2013, §7).

For each topic with relevant documents ``R_T``: evaluate the metric on ``N_perm`` uniformly random
permutations of ``R_T`` and take ``DSS_q = s / x_bar`` (sample sd, ddof 1, over the permutations,
divided by their mean; NaN when the mean is 0). By default relevance is binary and intent weights
uniform, as in the paper (``keep_grades=True`` keeps the collection's grades and weights).
Topic aggregates (docs/metrics.md#alpha-ia-and-diversity-difficulty): ``avg`` (mean), ``geom`` (geometric mean with a 1e-5 floor) and
``DD`` (``sum (1 - dd_t) DSS_t / sum (1 - dd_t)``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from evaluation._types import FloatArray
from evaluation.collection import Collection
from evaluation.exceptions import EvaluationError
from evaluation.meta._resampling import RngLike, resolve_rng
from evaluation.wording import named

AGGREGATES = ("avg", "geom", "DD")
GEOM_EPS = 1e-5
COLUMNS = ["measure", "topic", "dss", "mean", "sd", "n_perm"]


def dss_values(values: FloatArray) -> FloatArray:
    """``sd(ddof=1) / mean`` along the last axis; NaN where the mean is 0 (docs/metrics.md#document-selection-sensitivity)."""
    values = np.asarray(values, dtype=np.float64)
    mean = values.mean(axis=-1)
    sd = values.std(axis=-1, ddof=1) if values.shape[-1] > 1 else np.full(mean.shape, np.nan)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(mean == 0, np.nan, sd / mean)


def topic_average(values: FloatArray, how: str = "avg", dd: FloatArray | None = None) -> float:
    """Average per-topic values the docs/metrics.md#alpha-ia-and-diversity-difficulty ways, ignoring NaN topics: ``avg``, ``geom`` or ``DD``."""
    values = np.asarray(values, dtype=np.float64)
    keep = ~np.isnan(values)
    if not keep.any():
        return float("nan")
    if how == "avg":
        return float(values[keep].mean())
    if how == "geom":
        return float(np.exp(np.log(np.maximum(values[keep], GEOM_EPS)).mean()))
    if how == "DD":
        if dd is None:
            raise ValueError("the DD average needs per-topic diversity difficulty values")
        weight = 1.0 - np.asarray(dd, dtype=np.float64)[keep]
        total = weight.sum()
        return float((weight * values[keep]).sum() / total) if total > 0 else float("nan")
    raise ValueError(f"topic average must be one of {', '.join(AGGREGATES)}, got {how!r}")


def permuted_runs(collection: Collection, n_perm: int, rng: RngLike = None, depth: int | None = None) -> tuple[list, list[str]]:
    """``n_perm`` in-memory runs; run k lists a uniform permutation of ``R_T`` for every topic.

    With ``depth`` the lists are cut there (the measures never look deeper). Returns the runs and
    the topics that have relevant documents.
    """
    from evaluation.io.runs import Run

    rng, _ = resolve_rng(rng)
    topics = [t for t in collection.topic_ids if collection.relevant_documents(t)]
    if not topics:
        raise EvaluationError("no topic has relevant documents")
    relevant = {t: np.array(collection.relevant_documents(t), dtype=object) for t in topics}
    lists: list[dict[str, list[str]]] = [{} for _ in range(n_perm)]
    for t in topics:
        docs = relevant[t]
        order = np.argsort(rng.random((n_perm, docs.size)), axis=1)[:, :depth]
        for k in range(n_perm):
            lists[k][t] = docs[order[k]].tolist()
    return [Run(f"perm{k:05d}", lists[k]) for k in range(n_perm)], topics


@dataclass(frozen=True)
class DSSResult:
    """Per-topic DSS rows plus ``all:<aggregate>`` rows (columns ``measure topic dss mean sd n_perm``)."""

    table: pd.DataFrame
    n_perm: int
    seed: int | None
    keep_grades: bool


def document_selection_sensitivity(
    collection: Collection,
    measures: Sequence[str],
    *,
    n_perm: int = 1000,
    rng: RngLike = None,
    keep_grades: bool = False,
    aggregates: Sequence[str] = AGGREGATES,
) -> DSSResult:
    """DSS of each measure on each topic, and its topic aggregates.

    Every measure sees the same permutations (common random numbers).
    """
    from evaluation.engine import evaluate, resolve_measures

    if n_perm < 2:
        raise ValueError(f"n_perm must be >= 2, got {n_perm}")
    unknown = [a for a in aggregates if a not in AGGREGATES]
    if unknown:
        raise ValueError(f"unknown {named('topic average', unknown)}; choose from {', '.join(AGGREGATES)}")
    generator, seed = resolve_rng(rng)
    used = collection if keep_grades else collection.binarised().with_weights("uniform")
    cutoffs = [m.cutoff for m in resolve_measures(measures)]
    depth = None if any(c is None for c in cutoffs) else max(cutoffs)
    runs, topics = permuted_runs(used, n_perm, generator, depth)
    frame = evaluate(used, runs, list(measures), per_topic=True)
    frame = frame[frame["topic"].isin(topics)]
    dd = _difficulty(used, topics) if "DD" in aggregates else None
    rows = []
    for measure in dict.fromkeys(measures):
        matrix = frame[frame["measure"] == measure].pivot(index="topic", columns="run", values="value").reindex(topics)
        values = matrix.to_numpy(dtype=np.float64)
        dss = dss_values(values)
        mean = values.mean(axis=1)
        sd = values.std(axis=1, ddof=1)
        rows += [(measure, t, dss[i], mean[i], sd[i], n_perm) for i, t in enumerate(topics)]
        rows += [(measure, f"all:{how}", topic_average(dss, how, dd), np.nan, np.nan, n_perm) for how in aggregates]
    return DSSResult(pd.DataFrame.from_records(rows, columns=COLUMNS), n_perm, seed, keep_grades)


def _difficulty(collection: Collection, topics: list[str]) -> FloatArray:
    from evaluation.difficulty import difficulty_frame

    dd = difficulty_frame(collection).set_index("topic")["dd"]
    return dd.reindex(topics).to_numpy(dtype=np.float64)
