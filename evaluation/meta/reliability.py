"""Inter-annotator agreement on graded preferences (docs/metrics.md#inter-annotator-agreement).

Krippendorff's alpha (interval and ordinal) and the share of annotator pairs that agree on the
direction of a preference. Both take the answers grouped by unit (one unit = one presentation):
the annotators' identities do not enter either statistic, only which values share a unit.

Source: K. Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", Annenberg School
for Communication, University of Pennsylvania, sections on the coincidence matrix (C.), the
interval metric and the ordinal metric.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

LEVELS = ("interval", "ordinal")
PREFERENCE_DOMAIN = tuple(range(-4, 5))  # the 9-point scale, -4 .. +4


def _counts(units: Iterable[Sequence[float]], domain: Sequence[float]) -> np.ndarray:
    """Units x values matrix: how many annotators gave each value of ``domain`` to each unit."""
    index = {float(v): i for i, v in enumerate(domain)}
    rows = []
    for u, values in enumerate(units):
        row = np.zeros(len(domain), dtype=np.float64)
        for value in values:
            position = index.get(float(value))
            if position is None:
                raise ValueError(f"unit {u}: value {value!r} is not in the value domain {list(domain)}")
            row[position] += 1
        rows.append(row)
    return np.array(rows, dtype=np.float64).reshape(len(rows), len(domain))


def _squared_distances(domain: np.ndarray, totals: np.ndarray, level: str) -> np.ndarray:
    """delta^2_ck between every two values of the domain (Krippendorff 2011, metric differences)."""
    if level == "interval":
        return (domain[:, None] - domain[None, :]) ** 2
    # ordinal: (sum_{g=c..k} n_g - (n_c + n_k) / 2)^2 with the values in domain order
    cumulative = np.concatenate([[0.0], np.cumsum(totals)])
    low = np.minimum.outer(np.arange(len(domain)), np.arange(len(domain)))
    high = np.maximum.outer(np.arange(len(domain)), np.arange(len(domain)))
    between = cumulative[high + 1] - cumulative[low]
    return (between - (totals[:, None] + totals[None, :]) / 2) ** 2


def krippendorff_alpha(units: Iterable[Sequence[float]], *, level: str = "interval", domain: Sequence[float] = PREFERENCE_DOMAIN) -> float:
    """Krippendorff's alpha of the values given to each unit (docs/metrics.md#inter-annotator-agreement).

    With ``n_u`` the number of values in unit ``u`` (units with fewer than two are not pairable and
    left out), the coincidence matrix is ``o_ck = sum_u (number of ordered c-k pairs of different
    annotators in u) / (n_u - 1)``, ``n_c = sum_k o_ck``, ``n = sum_c n_c``, and::

        alpha = 1 - D_o / D_e = 1 - (n - 1) * sum_ck o_ck delta2_ck / sum_ck n_c n_k delta2_ck

    interval: ``delta2_ck = (c - k)^2``; ordinal: ``delta2_ck = (sum_{g=c..k} n_g - (n_c + n_k)/2)^2``
    over the values in domain order (Krippendorff 2011).

    Parameters
    ----------
    units : per unit, the values its annotators gave (missing answers are simply absent).
    level : ``interval`` or ``ordinal``.
    domain : every value the scale allows, in order (default -4..4). Passing the full scale keeps
        alpha independent of which values happened to be used; a value outside it is an error.

    Returns
    -------
    alpha in (-inf, 1]; NaN when fewer than two pairable values exist or all pairable values are
    equal (no expected disagreement).
    """
    if level not in LEVELS:
        raise ValueError(f"level must be one of {', '.join(LEVELS)}, got {level!r}")
    values = np.asarray(domain, dtype=np.float64)
    if values.ndim != 1 or len(values) < 2 or np.any(np.diff(values) <= 0):
        raise ValueError("the value domain must hold at least two values in increasing order")
    counts = _counts(units, domain)
    per_unit = counts.sum(axis=1)
    pairable = counts[per_unit >= 2]
    if len(pairable) == 0:
        return float("nan")
    weights = 1.0 / (pairable.sum(axis=1) - 1)
    coincidences = (pairable * weights[:, None]).T @ pairable - np.diag((pairable * weights[:, None]).sum(axis=0))
    totals = coincidences.sum(axis=1)
    n = totals.sum()
    delta2 = _squared_distances(values, totals, level)
    expected = float((np.outer(totals, totals) * delta2).sum())
    if n < 2 or expected == 0:
        return float("nan")
    observed = float((coincidences * delta2).sum())
    return 1.0 - (n - 1) * observed / expected


def direction_agreement(units: Iterable[Sequence[float]]) -> tuple[float, int]:
    """Share of annotator pairs within a unit whose answers have the same sign (-, 0, +).

    Over every unordered pair of answers to the same unit; returns ``(share, pairs)`` with NaN
    when there is no pair (docs/metrics.md#inter-annotator-agreement).
    """
    agreeing = pairs = 0
    for values in units:
        signs = np.sign(np.asarray(values, dtype=np.float64))
        m = len(signs)
        if m < 2:
            continue
        same = sum(int(c) * (int(c) - 1) // 2 for c in np.unique(signs, return_counts=True)[1])
        agreeing += same
        pairs += m * (m - 1) // 2
    return (agreeing / pairs if pairs else float("nan")), pairs
