"""User preferences per run pair at topic, subtopic and weighted level (docs/metrics.md#run-pairs-and-signs, docs/metrics.md#weighted-topic-preference).

The result of :func:`preference_items` is the table every agreement analysis starts from: one row
per run pair ``c`` with its mean preference ``p`` and its exact user sign. ``key`` names the score
topic that holds the metric values for the pair:

* topic level: the topic id;
* weighted level: the topic id (the topic-level metric is compared with the weighted preference);
* subtopic level: ``"<topic>/<subtopic>"`` -- metric values computed on that single subtopic must
  be stored under this topic id in the scores file (see ``docs/meta.md``).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping

import numpy as np
import pandas as pd

from evaluation.collection import SUBTOPIC_TOPIC
from evaluation.exceptions import EvaluationError, EvaluationWarning
from evaluation.io.preferences import aggregate_preferences
from evaluation.wording import be, counted, have, named

LEVELS = ("topic", "weighted", "subtopic")
SUBTOPIC_KEY = SUBTOPIC_TOPIC
WEIGHTED_TIE = 1e-12  # weighted preferences are sums of float products: |p| <= this is a user tie
ITEM_COLUMNS = ["key", "topic", "subtopic", "run_a", "run_b", "n", "p", "sign"]

Weights = Mapping[str, Mapping[str, float]]


def preference_items(votes: pd.DataFrame, level: str = "topic", weights: Weights | None = None) -> pd.DataFrame:
    """Run pairs with their user preference at one level.

    Parameters
    ----------
    votes : canonical votes from :func:`evaluation.io.preferences.read_preferences`.
    level : ``topic``, ``weighted`` or ``subtopic``.
    weights : topic -> subtopic -> intent probability; required for the weighted level.

    Returns
    -------
    DataFrame with columns ``key topic subtopic run_a run_b n p sign``. ``p`` is the mean of the
    answers (``total / n``), ``sign`` the user preference sign in {-1, 0, 1}: exact from the
    integer totals at topic and subtopic level; at weighted level ``|p| <= 1e-12`` is a tie and
    ``p`` is NaN (sign 0) where a kept subtopic has no answers (docs/metrics.md#weighted-topic-preference, no renormalisation).
    """
    if level not in LEVELS:
        raise ValueError(f"level must be one of {', '.join(LEVELS)}, got {level!r}")
    items = aggregate_preferences(votes)
    if level == "weighted":
        if weights is None:
            raise EvaluationError("the weighted level needs intent weights (--intents FILE)")
        return weighted_items(items, weights)
    items = items[items["level"] == level].copy()
    if items.empty:
        raise EvaluationError(f"the preferences have no {level}-level rows")
    if level == "topic":
        items["key"] = items["topic"]
    else:
        items["key"] = [SUBTOPIC_KEY.format(topic=t, subtopic=s) for t, s in zip(items["topic"], items["subtopic"])]
    items["sign"] = np.sign(items["total"]).astype(np.int64)
    return items.loc[:, ITEM_COLUMNS].reset_index(drop=True)


def weighted_items(items: pd.DataFrame, weights: Weights) -> pd.DataFrame:
    """Weighted topic preference ``p_c = sum_i w_i p_{c,i}`` (docs/metrics.md#weighted-topic-preference; Chen et al.).

    The kept subtopics of a topic are those with subtopic-level answers for any of its run pairs;
    their weights are taken from ``weights`` and renormalised to sum to 1. A pair without answers
    for one of its topic's kept subtopics gets NaN. ``n`` is the number of subtopic answers used.
    """
    sub = items[items["level"] == "subtopic"]
    if sub.empty:
        raise EvaluationError("the weighted level needs subtopic-level preferences; the file has none")
    rows = []
    for topic, group in sub.groupby("topic", sort=True):
        kept = sorted(set(group["subtopic"]))
        given = weights.get(topic)
        if given is None:
            raise EvaluationError(f"no intent weights for topic {topic}")
        unknown = [s for s in kept if s not in given]
        if unknown:
            raise EvaluationError(f"topic {topic}: {named('subtopic', unknown)} {have(len(unknown))} no weight in the intents file")
        total = sum(float(given[s]) for s in kept)
        if not total > 0:
            raise EvaluationError(f"topic {topic}: the kept subtopics {', '.join(kept)} all have weight 0")
        w = {s: float(given[s]) / total for s in kept}
        for (run_a, run_b), pair in group.groupby(["run_a", "run_b"], sort=True):
            by_sub = dict(zip(pair["subtopic"], pair["p"]))
            complete = all(s in by_sub for s in kept)
            p = sum(w[s] * by_sub[s] for s in kept) if complete else np.nan
            rows.append((topic, topic, "", run_a, run_b, int(pair["n"].sum()), p))
    out = pd.DataFrame.from_records(rows, columns=ITEM_COLUMNS[:-1])
    out["p"] = out["p"].astype(np.float64)
    sign = np.where(np.abs(out["p"]) <= WEIGHTED_TIE, 0, np.sign(out["p"].fillna(0.0)))
    out["sign"] = sign.astype(np.int64)
    return out


def drop_undefined(items: pd.DataFrame) -> pd.DataFrame:
    """Leave out pairs whose preference is NaN, with a warning that counts them (never silently)."""
    undefined = items["p"].isna()
    if undefined.any():
        warnings.warn(
            f"{counted(int(undefined.sum()), 'run pair')} {'lacks' if int(undefined.sum()) == 1 else 'lack'} answers for a kept subtopic "
            f"(weighted preference NaN, docs/metrics.md#weighted-topic-preference) and {be(int(undefined.sum()))} left out",
            EvaluationWarning,
            stacklevel=3,
        )
    return items[~undefined].reset_index(drop=True)


def intent_weights(intents: Mapping[str, list]) -> dict[str, dict[str, float]]:
    """topic -> intent -> probability from :func:`evaluation.io.intents.read_intents` output."""
    return {topic: {i.id: float(i.weight) for i in listed} for topic, listed in intents.items()}
