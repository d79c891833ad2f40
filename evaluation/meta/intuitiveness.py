"""Concordance (intuitiveness) test (docs/metrics.md#intuitiveness; Sakai WWW 2012, Sakai & Song 2013, Chen et al.).

For every topic and unordered run pair where two candidate metrics disagree (``d1 * d2 < 0``;
ties never disagree), each metric *agrees* with a gold standard ``GS`` if ``d_M * d_GS >= 0`` (a
gold-standard tie agrees with both; option ``gs_tie="neither"``). Concordance of a metric =
agreements / disagreements. The all-gold extension requires agreement with every gold standard at
once. Significance: two-sided exact sign test on the disagreements where exactly one metric
agrees, ``a = #(only M1)``, ``b = #(only M2)``, ``p = binomtest(a, a + b, 0.5)`` (1 if a + b = 0);
``p_adjusted``: Holm (1979) over the candidate pairs of each gold standard (one family per gold
standard, up to 741 tests for 39 candidates), the raw ``p`` kept beside it.
A row counts the topics where both candidates and its gold standard(s) are defined (column
``topics``): a measure undefined on a topic leaves that topic out of its own rows only.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import stats as sps

from evaluation._types import FloatArray
from evaluation.exceptions import EvaluationError
from evaluation.meta._matrix import ScoreCube
from evaluation.meta.agreement import signs
from evaluation.meta.significance import run_pairs
from evaluation.meta.userprefs import adjust_p

GS_TIES = ("both", "neither")
ALL_GOLD = "all"
CONVENTIONS = {
    "disagreement": "d_1 d_2 < 0 on a topic and run pair; |d| <= 1e-12 is a tie, never a disagreement (docs/metrics.md#intuitiveness)",
    "sign_test": "exact two-sided binomial test on a = only M1 agrees, b = only M2 agrees (docs/metrics.md#intuitiveness)",
    "p_adjusted": "Holm over the candidate pairs of each gold standard (one family per gold standard); p is raw",
    "undefined": "a row counts only the topics where both candidates and its gold standard(s) are defined (column topics)",
    "intuitiveness_order": "mean concordance of a metric over its comparisons with every other candidate (our choice, Chen 6.1): column tau_b",
    "cellwise_order": "count over Table 2 cells: a cell agrees when its two concordances are ordered as the two "
    "metrics' MUP, disagrees when reversed; tau_cells = (agree - disagree) / cells with both defined (ties count in cells only); "
    "NaN when no cell is ordered either way (e.g. a constant gold standard)",
}
ORDER_TIE = 1e-12  # MUP or concordance differences this small are ties
COLUMNS = ["gold", "measure_1", "measure_2", "topics", "disagreements", "concordance_1", "concordance_2", "a", "b", "p", "p_adjusted"]


def pair_signs(cube: ScoreCube) -> FloatArray:
    """Signs of ``M(t, r_a) - M(t, r_b)`` for every topic and run pair ``a < b``: (G, n_topics * P)."""
    a, b = run_pairs(len(cube.runs))
    return signs(cube.values[:, :, a] - cube.values[:, :, b]).reshape(len(cube.measures), -1)


def concordance_test(cube: ScoreCube, gold: Sequence[str], measures: Sequence[str] | None = None, *, gs_tie: str = "both") -> pd.DataFrame:
    """Concordance of every pair of candidate measures with every gold standard.

    Parameters
    ----------
    cube : per-topic scores of the candidates and the gold standards (same topics and runs).
    gold : gold-standard measures (I-rec, Prec, PMP, Ef-P by default on the CLI).
    measures : candidates (default: every measure of ``cube`` not in ``gold``).
    gs_tie : ``both`` (a gold tie agrees with both metrics, default) or ``neither``.

    Returns
    -------
    DataFrame ``gold measure_1 measure_2 topics disagreements concordance_1 concordance_2 a b p``,
    one row per gold standard (plus ``all`` when there are several) and unordered candidate pair, in
    the order of ``measures``; ``topics`` are those where both candidates and the gold standard(s)
    are defined. Concordances are NaN when there is no disagreement.
    """
    if gs_tie not in GS_TIES:
        raise ValueError(f"gs_tie must be one of {', '.join(GS_TIES)}, got {gs_tie!r}")
    gold = list(dict.fromkeys(gold))
    if not gold:
        raise EvaluationError("name at least one gold-standard measure")
    candidates = [m for m in (measures if measures is not None else cube.measures) if m not in gold]
    if len(candidates) < 2:
        raise EvaluationError("the concordance test needs at least 2 candidate measures besides the gold standards")
    s = pair_signs(cube)  # NaN where the measure is undefined: never a disagreement, never an agreement
    per_topic = len(run_pairs(len(cube.runs))[0])
    complete = cube.complete
    cand = {m: s[cube.measure_index(m)] for m in candidates}
    golds = {g: s[cube.measure_index(g)] for g in gold}
    defined = {m: cube.defined[cube.measure_index(m)] for m in (*candidates, *gold)}
    gold_defined = {g: defined[g] for g in gold}
    if len(gold) > 1:
        gold_defined[ALL_GOLD] = np.logical_and.reduce([defined[g] for g in gold])
    units = {g: np.repeat(topics, per_topic) for g, topics in gold_defined.items()}  # topic -> (topic, run pair) units
    rows = []
    n_topics = len(cube.topics)
    for m1, m2 in itertools.combinations(candidates, 2):
        s1, s2 = cand[m1], cand[m2]
        disagree = s1 * s2 < 0
        if complete:  # one disagreement set for every gold; 'all' combines the per-gold agreements
            n = int(disagree.sum())
            agree1 = {g: _agrees(s1[disagree], sg[disagree], gs_tie) for g, sg in golds.items()}
            agree2 = {g: _agrees(s2[disagree], sg[disagree], gs_tie) for g, sg in golds.items()}
            if len(gold) > 1:
                agree1[ALL_GOLD] = np.logical_and.reduce(list(agree1.values()))
                agree2[ALL_GOLD] = np.logical_and.reduce(list(agree2.values()))
            rows.extend((g, m1, m2, n_topics, n, *_summary(agree1[g], agree2[g], n)) for g in agree1)
            continue
        both = defined[m1] & defined[m2]
        for g, g_units in units.items():
            mask = disagree & g_units
            n = int(mask.sum())
            members = gold if g == ALL_GOLD else [g]
            first = np.logical_and.reduce([_agrees(s1[mask], golds[x][mask], gs_tie) for x in members])
            second = np.logical_and.reduce([_agrees(s2[mask], golds[x][mask], gs_tie) for x in members])
            rows.append((g, m1, m2, int((both & gold_defined[g]).sum()), n, *_summary(first, second, n)))
    table = pd.DataFrame.from_records(rows, columns=COLUMNS[:-1])
    table["p"] = sign_test_p(table["a"].to_numpy(), table["b"].to_numpy())
    table["p_adjusted"] = np.nan
    for _, index in table.groupby("gold", sort=False).groups.items():  # one family per gold standard
        table.loc[index, "p_adjusted"] = adjust_p(table.loc[index, "p"].to_numpy(dtype=np.float64), "holm")
    return table


def sign_test_p(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Exact two-sided sign test ``binomtest(a, a + b, 0.5).pvalue`` for many ``(a, b)`` at once (1 when a + b = 0).

    For p = 1/2 the binomial is symmetric, so the two-sided p-value is ``min(1, 2 P(X <= min(a, b)))``
    (equal to scipy's ``binomtest`` to about 1e-15, vectorised instead of one call per pair).
    """
    a = np.asarray(a, dtype=np.int64)
    b = np.asarray(b, dtype=np.int64)
    n = a + b
    with np.errstate(invalid="ignore"):
        p = np.minimum(1.0, 2.0 * sps.binom.cdf(np.minimum(a, b), n, 0.5))
    return np.where(n > 0, p, 1.0)


def _agrees(s_m: FloatArray, s_g: FloatArray, gs_tie: str) -> np.ndarray:
    product = s_m * s_g
    return product >= 0 if gs_tie == "both" else product > 0


def _summary(agree1: np.ndarray, agree2: np.ndarray, n: int) -> tuple[float, float, int, int, float]:
    a = int((agree1 & ~agree2).sum())
    b = int((agree2 & ~agree1).sum())
    c1 = agree1.sum() / n if n else np.nan
    c2 = agree2.sum() / n if n else np.nan
    return float(c1), float(c2), a, b, np.nan  # p: sign_test_p over all rows at once


def intuitiveness_scores(table: pd.DataFrame) -> pd.DataFrame:
    """Per gold standard and measure: mean concordance over its comparisons with every other measure.

    Comparisons without disagreements are skipped. Columns ``gold measure score comparisons``.
    This is the ordering correlated with the MUP ordering (Chen et al. §6.1; our choice of score).
    """
    left = table.rename(columns={"measure_1": "measure", "concordance_1": "c"})[["gold", "measure", "c"]]
    right = table.rename(columns={"measure_2": "measure", "concordance_2": "c"})[["gold", "measure", "c"]]
    both = pd.concat([left, right]).dropna(subset=["c"])
    out = both.groupby(["gold", "measure"], sort=False)["c"].agg(score="mean", comparisons="size").reset_index()
    return out


def cell_order(table: pd.DataFrame, mup: pd.Series) -> pd.DataFrame:
    """``table`` (from :func:`concordance_test`) with ``mup_1 mup_2 order_vs_mup`` per cell of Chen et al. Table 2.

    ``order_vs_mup`` is 1 when the cell's concordances are ordered as the two metrics' MUP (the
    cells the paper highlights), -1 when reversed, 0 when either pair ties (within 1e-12), NaN when a
    MUP or a concordance is undefined.
    """
    out = table.copy()
    mup = mup.astype(np.float64)
    out["mup_1"] = out["measure_1"].map(mup).astype(np.float64)
    out["mup_2"] = out["measure_2"].map(mup).astype(np.float64)
    d_mup = (out["mup_1"] - out["mup_2"]).to_numpy()
    d_int = (out["concordance_1"] - out["concordance_2"]).to_numpy(dtype=np.float64)
    with np.errstate(invalid="ignore"):
        order = signs(d_mup, ORDER_TIE) * signs(d_int, ORDER_TIE)
    out["order_vs_mup"] = np.where(np.isnan(d_mup) | np.isnan(d_int), np.nan, order)
    return out


ORDERING_COLUMNS = ["gold", "measures", "tau_b", "p", "cells", "agree", "disagree", "tau_cells"]


def ordering_agreement(scores: pd.DataFrame, mup: pd.Series, table: pd.DataFrame | None = None) -> pd.DataFrame:
    """Agreement between the metric order by MUP and by intuitiveness, per gold standard, two readings.

    Parameters
    ----------
    scores : from :func:`intuitiveness_scores`.
    mup : MUP per measure (index: measure), e.g. the ``all``-subset MUP rows of an agreement table.
    table : the concordance table itself, for the cell-wise reading (default: that reading is NaN).

    Returns columns ``gold measures tau_b p cells agree disagree tau_cells``:

    * ``tau_b``, ``p``: Kendall tau_b between the MUP values and the per-metric intuitiveness scores
      (mean concordance, :func:`intuitiveness_scores`; our reading) over ``measures`` metrics;
    * ``tau_cells = (agree - disagree) / cells``: a count over the Table 2 cells (:func:`cell_order`),
      ``cells`` those with MUP and concordances defined; NaN when no cell is ordered either way (every
      cell tied, as with a constant gold standard: undefined, like tau_b with every pair tied).
      Chen et al. print -0.407 and 0.333 = -11/27 and 9/27; over the 28 cells of their Table 2 this
      rule cannot give them (docs/meta.md#intuitiveness).
    """
    cells = cell_order(table, mup) if table is not None else None
    rows = []
    for g, group in scores.groupby("gold", sort=False):
        cellwise = _cellwise(cells[cells["gold"] == g]) if cells is not None else (0, 0, 0, np.nan)
        common = [m for m in group["measure"] if m in mup.index and np.isfinite(mup[m])]
        if len(common) < 2:
            rows.append((g, len(common), np.nan, np.nan, *cellwise))
            continue
        x = group.set_index("measure").loc[common, "score"].to_numpy(dtype=np.float64)
        y = mup.loc[common].to_numpy(dtype=np.float64)
        if np.ptp(x) == 0 or np.ptp(y) == 0:
            rows.append((g, len(common), np.nan, np.nan, *cellwise))
            continue
        result = sps.kendalltau(x, y)
        rows.append((g, len(common), float(result.statistic), float(result.pvalue), *cellwise))
    return pd.DataFrame.from_records(rows, columns=ORDERING_COLUMNS)


def _cellwise(cells: pd.DataFrame) -> tuple[int, int, int, float]:
    order = cells["order_vs_mup"].dropna()
    n, agree, disagree = int(order.size), int((order > 0).sum()), int((order < 0).sum())
    return n, agree, disagree, (agree - disagree) / n if agree + disagree else np.nan
