"""Collection diversity of a topic (Golbus, Aslam & Clarke, IRJ 2013; docs/metrics.md#alpha-ia-and-diversity-difficulty):
greedy minimal cover size ξ, diversity difficulty dd and subtopic miss rates smr."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from evaluation._types import FloatArray
from evaluation.arrays import TopicTable, table_for
from evaluation.collection import Collection


@dataclass(frozen=True)
class TopicDifficulty:
    """Per-topic ξ, d_max, d_mean, dd and smr (``smr[t, i]``, NaN outside ``I_q^+``)."""

    xi: np.ndarray
    d_max: FloatArray
    d_mean: FloatArray
    dd: FloatArray
    smr: FloatArray
    smr_uniform_fallback: np.ndarray


def greedy_cover_size(covers: np.ndarray, docids: np.ndarray) -> int:
    """ξ: documents taken greedily (most uncovered intents first, ties by smallest docid) until
    every coverable intent is covered. ``covers`` is ``(n_docs, I)`` boolean."""
    order = np.argsort(docids.astype(str))
    covers = covers[order]
    uncovered = covers.any(axis=0)
    taken = 0
    while uncovered.any():
        gain = (covers & uncovered).sum(axis=1)
        best = int(np.argmax(gain))  # first maximum = smallest docid
        uncovered &= ~covers[best]
        taken += 1
    return taken


def difficulty(
    table: TopicTable, *, exponent_offset: int = 0, smr_depth: int | None = None, dd_intents: str = "relevant"
) -> TopicDifficulty:
    """ξ, dd and smr for every topic of ``table`` (docs/metrics.md#alpha-ia-and-diversity-difficulty).

    ``exponent_offset=1`` reproduces Golbus et al.'s Table 1 (exponent ξ+1); ``smr_depth``
    defaults to ξ; ``dd_intents="listed"`` uses all listed intents for d_max.
    """
    key = ("difficulty", exponent_offset, smr_depth, dd_intents)

    def build() -> TopicDifficulty:
        T, I = table.n_topics, table.n_intents
        xi = np.zeros(T, dtype=np.int64)
        d_max = np.zeros(T)
        d_mean = np.zeros(T)
        smr = np.full((T, I), np.nan)
        fallback = np.zeros(T, dtype=bool)
        for t, (a, b) in enumerate(table.topic_rows):
            rel = table.rel[t]
            m = int(rel.sum())
            if m == 0:
                d_max[t] = d_mean[t] = np.nan
                continue
            block = table.grades[a:b] >= 1
            xi[t] = greedy_cover_size(block, table.docids[a:b])
            listed = int(table.listed[t].sum())
            d_max[t] = 1.0 if dd_intents == "relevant" else m / listed
            miss = 1.0 - table.n_rel[t, rel] / table.n_rel_docs[t]
            d_mean[t] = 1.0 - np.mean(miss ** (xi[t] + exponent_offset))
            depth = xi[t] if smr_depth is None else smr_depth
            powered = miss**depth
            total = powered.sum()
            if total > 0:
                smr[t, rel] = powered / total
            else:
                smr[t, rel] = 1.0 / m
                fallback[t] = True
        with np.errstate(invalid="ignore", divide="ignore"):
            dd = 2.0 * d_max * d_mean / (d_max + d_mean)
        return TopicDifficulty(xi, d_max, d_mean, dd, smr, fallback)

    return table.memo(key, build)


def difficulty_frame(collection: Collection, **options) -> pd.DataFrame:
    """One row per topic: ``topic xi d_max d_mean dd`` plus ``smr`` as ``intent:value`` pairs."""
    table = table_for(collection)
    result = difficulty(table, **options)
    rows = []
    for t, tid in enumerate(table.topic_ids):
        pairs = [f"{iid}:{result.smr[t, n]:.6g}" for n, iid in enumerate(table.intent_ids[t]) if table.rel[t, n]]
        rows.append(
            {
                "topic": tid,
                "xi": int(result.xi[t]),
                "d_max": result.d_max[t],
                "d_mean": result.d_mean[t],
                "dd": result.dd[t],
                "smr": " ".join(pairs),
                "smr_uniform_fallback": bool(result.smr_uniform_fallback[t]),
            }
        )
    return pd.DataFrame(rows)
