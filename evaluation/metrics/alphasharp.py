"""The alpha#-IA family of Golbus, Aslam & Clarke (IRJ 2013; docs/metrics.md#alpha-ia-and-diversity-difficulty).

``alpha#-IA@k = lambda S-Recall@k + (1 - lambda) A_q`` where ``A_q`` averages per-subtopic
cascade measures (``micro``, ``geom``, ``smr``) or is the weighted cascade measure normalised by
the greedy ideal (``cascade``). Binary relevance throughout, as in the paper.
"""

from __future__ import annotations

import numpy as np

from evaluation._types import FloatArray
from evaluation.arrays import Ranking, TopicTable
from evaluation.difficulty import difficulty
from evaluation.metrics._common import discount, novelty_decay, safe_divide
from evaluation.metrics.base import Param, register
from evaluation.metrics.coverage import intent_recall
from evaluation.metrics.novelty import greedy_ideal_gains, novelty_gain

GOLBUS = "Golbus, Aslam & Clarke, Increasing evaluation sensitivity to diversity, Information Retrieval 16(4), 2013"
DISCOUNTS = {"dcg": "log", "err": "rr", "rbp": "rbp"}


def per_subtopic(ranking: Ranking, k: int, alpha: float, disc: str, beta: float) -> FloatArray:
    """``alphaM_i@k`` (R, T, I): each subtopic's cascade measure over its exact ideal (all of R_i first)."""
    d = discount(DISCOUNTS[disc], k, beta)
    novel = novelty_decay(ranking, alpha)  # J_i (1 - alpha)^{c_i}
    num = np.einsum("pkr,k->pr", novel[:, :k], d[: novel.shape[1]])
    ideal_prefix = np.cumsum(d * (1.0 - alpha) ** np.arange(k))
    n_rel = np.minimum(ranking.table.n_rel, k)
    den = np.where(n_rel > 0, ideal_prefix[np.maximum(n_rel - 1, 0)], 0.0)
    table = ranking.table
    return table.by_topic_and_intent(safe_divide(num, table.per_pair(den)[:, None]))


def _cascade(ranking: Ranking, k: int, alpha: float, disc: str, beta: float) -> FloatArray:
    d = discount(DISCOUNTS[disc], k, beta)
    gains = novelty_gain(ranking, alpha)[:k]
    gains = (gains * d[: gains.shape[0], None, None]).sum(axis=0)
    ideal = (greedy_ideal_gains(ranking.table, alpha, k) * d[None, :]).sum(axis=1)
    return safe_divide(gains, ideal)


def _topic_average(values: np.ndarray, table: TopicTable, params: dict) -> np.ndarray:
    """Topic means of docs/metrics.md#alpha-ia-and-diversity-difficulty: ``avg``, ``geom`` (ε floor) or ``DD`` (weights 1 - dd)."""
    mode = params.get("tavg", "avg")
    valid = ~np.isnan(values)
    if mode == "avg":
        return np.array([row[ok].mean() if ok.any() else np.nan for row, ok in zip(values, valid)])
    if mode == "geom":
        eps = params.get("geom_eps", 1e-5)
        logs = np.log(np.maximum(np.where(valid, values, 1.0), eps))
        return np.array([np.exp(row[ok].mean()) if ok.any() else np.nan for row, ok in zip(logs, valid)])
    weights = 1.0 - difficulty(table, exponent_offset=params.get("dd_exponent_offset", 0)).dd
    out = []
    for row, ok in zip(values, valid):
        w = np.where(ok & ~np.isnan(weights), weights, 0.0)
        total = w.sum()
        out.append(float((w * np.where(ok, row, 0.0)).sum() / total) if total > 0 else np.nan)
    return np.array(out)


@register(
    "alpha#-IA",
    params={
        "disc": Param(str, "dcg", "rank discount: dcg 1/log2(r+1), err 1/r, rbp beta^(r-1)", ("dcg", "err", "rbp")),
        "avg": Param(str, "micro", "subtopic averaging", ("cascade", "micro", "geom", "smr")),
        "alpha": Param(float, 0.3, "novelty penalty", low=0.0, high=1.0),
        "lambda": Param(float, 0.5, "weight of S-recall", low=0.0, high=1.0),
        "beta": Param(float, 0.8, "RBP discount base (disc=rbp)", low=0.0, high=1.0, low_open=True),
        "geom_eps": Param(float, 1e-5, "floor for geometric means", low=0.0, low_open=True),
        "tavg": Param(str, "avg", "topic averaging of the mean row", ("avg", "geom", "DD")),
        "dd_exponent_offset": Param(int, 0, "dd exponent xi + offset for tavg=DD (1 reproduces Golbus Table 1)", low=0),
    },
    tags={"normalised", "intent_aware", "binary", "cascade"},
    citation=GOLBUS,
    aggregate=_topic_average,
    aliases=("alpha#IA",),
)
def alpha_sharp_ia(
    ranking: Ranking,
    k: int,
    *,
    disc: str,
    avg: str,
    alpha: float,
    beta: float,
    geom_eps: float,
    tavg: str,
    dd_exponent_offset: int,
    **params: float,
) -> FloatArray:
    """lambda S-Recall@k + (1 - lambda) A_q with A_q in {cascade, micro, geom, smr} (docs/metrics.md#alpha-ia-and-diversity-difficulty).

    Slow reference: ``reference.alpha_sharp``.
    """
    lam = params["lambda"]
    table = ranking.table
    if avg == "cascade":
        score = _cascade(ranking, k, alpha, disc, beta)
    else:
        sub = per_subtopic(ranking, k, alpha, disc, beta)
        if avg == "micro":
            score = (sub * table.W_hat).sum(axis=2)
        elif avg == "geom":
            score = np.exp((np.log(np.maximum(sub, geom_eps)) * table.W_hat).sum(axis=2))
            score = np.where(table.n_rel_intents > 0, score, 0.0)
        else:
            smr = np.nan_to_num(difficulty(table).smr)
            score = (sub * smr).sum(axis=2)
    return lam * intent_recall(ranking, k) + (1.0 - lam) * score
