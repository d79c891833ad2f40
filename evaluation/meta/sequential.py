"""Nominal levels for a fixed number of looks at accumulating data (docs/meta.md#adaptive-allocation).

A study that looks at its data ``K`` times and may stop at any look keeps a family-wise level ``alpha`` only if
each look is tested at a smaller nominal level. Two rules:

* ``bonferroni``: ``alpha / K`` per look. Valid whatever the joint law of the looks' statistics, and conservative
  when the looks share their data (each look's data contain the earlier looks').
* ``pocock``: Pocock's (1977) boundary, one nominal level for every look such that a standardised cumulative sum
  observed at the information fractions ``k / K`` (a Brownian motion: the canonical joint distribution of
  group-sequential tests, ``corr(Z_j, Z_k) = sqrt(j / k)``; Jennison & Turnbull 2000, ch. 2-3 and 11) crosses it
  at any of the ``K`` looks with probability ``alpha``. It spends the level at about the rate Bonferroni does
  (Lan & DeMets' Pocock-type spending) but counts the looks' shared data, so each look's level is larger. Its
  validity rests on that joint law, which holds asymptotically for statistics on cumulative data; a procedure
  whose looks depart from it (adaptive weights) must measure its family-wise level (benchmarks/bench_adaptive.py).

The crossing probability is computed by the recursion of Armitage, McPherson & Rowe (1969) on the sub-density of
the cumulative sum that has not crossed yet, with Simpson's rule on a grid that ends on the boundary.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from scipy.optimize import brentq
from scipy.stats import norm

BOUNDARIES = ("pocock", "bonferroni")
DESCRIPTIONS = {
    "pocock": "Pocock's boundary (one level for every look, counting the looks' shared data)",
    "bonferroni": "Bonferroni (the level divided among the looks)",
}
GRID = 241  # Simpson points per look (odd)
TAIL = 9.0  # the continuation region's far end, in standard deviations of the cumulative sum (mass beyond: < 1e-18)


def _simpson(n: int) -> np.ndarray:
    w = np.ones(n)
    w[1:-1:2], w[2:-1:2] = 4.0, 2.0
    return w / 3.0


def crossing_probability(c: float, looks: int, two_sided: bool = False) -> float:
    """Chance that ``Z_k = S_k / sqrt(k)`` (``S_k`` a sum of k independent standard normals) reaches ``c``
    (``|Z_k| >= c`` when ``two_sided``) at any of the looks ``k = 1 .. looks``."""
    if looks < 1:
        raise ValueError(f"looks must be >= 1, got {looks}")
    weights = _simpson(GRID)
    crossed = 1.0 - norm.cdf(c) + (norm.cdf(-c) if two_sided else 0.0)
    x = density = None
    for k in range(1, looks + 1):
        b = c * np.sqrt(k)
        a = -b if two_sided else -TAIL * np.sqrt(k)
        grid = np.linspace(a, b, GRID)
        if k == 1:
            density = norm.pdf(grid)
        else:  # the sub-density of S_k on the continuation region, from S_{k-1}'s
            h = x[1] - x[0]
            step = (h * weights * density)[None, :]
            crossed += float((step * (norm.sf(b - x)[None, :] + (norm.cdf(a - x)[None, :] if two_sided else 0.0))).sum())
            density = (step * np.exp(-0.5 * (grid[:, None] - x[None, :]) ** 2)).sum(axis=1) / np.sqrt(2 * np.pi)
        x = grid
    return crossed


@lru_cache(maxsize=64)
def pocock_critical(alpha: float, looks: int, two_sided: bool = False) -> float:
    """Pocock's constant ``c``: the crossing probability over ``looks`` equally spaced looks is ``alpha``."""
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    tail = alpha / 2 if two_sided else alpha
    start = norm.isf(tail)  # one look
    if looks == 1:
        return float(start)
    return float(brentq(lambda c: crossing_probability(c, looks, two_sided) - alpha, start, norm.isf(tail / looks) + 0.1, xtol=1e-7))


def nominal_alpha(alpha: float, looks: int, boundary: str = "pocock", two_sided: bool = False) -> float:
    """Each look's nominal level so that ``looks`` looks together keep ``alpha`` (module docstring)."""
    if looks < 1:
        raise ValueError(f"looks must be >= 1, got {looks}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    if boundary == "bonferroni":
        return alpha / looks
    if boundary != "pocock":
        raise ValueError(f"boundary must be one of {', '.join(BOUNDARIES)}, got {boundary!r}")
    c = pocock_critical(alpha, looks, two_sided)
    return float(norm.sf(c) * (2 if two_sided else 1))
