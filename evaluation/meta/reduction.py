"""Topic set reduction (docs/metrics.md#topic-set-reduction; Sakai & Song 2013, §6).

Topics are ranked by the variance (ddof 0) of the reference measure's scores over all runs,
descending, ties by topic id, and removed from the top -- the most informative topics go first, a
deliberately pessimistic choice -- so the reduced sets are nested. On each reduced set we
recompute discriminative power (docs/metrics.md#discriminative-power) and the Kendall tau / symmetric tau_ap of the run ranking
against the full-set ranking (docs/metrics.md#rank-correlation) for every measure.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from evaluation.exceptions import EvaluationError
from evaluation.meta._matrix import ScoreCube, natural_key
from evaluation.meta._resampling import RngLike, resolve_rng
from evaluation.meta.correlation import power_and_correlation_rows
from evaluation.wording import named

COLUMNS = ["topics", "measure", "pairs", "significant", "power", "tau", "tau_ap", "test", "B", "alpha", "seed"]


def removal_order(cube: ScoreCube, reference: str) -> list[str]:
    """Topics in the order they are removed: variance of ``reference`` over runs, descending.

    The reference must be defined on every topic (its variance orders them all)."""
    undefined = [t for t, ok in zip(cube.topics, cube.defined[cube.measure_index(reference)]) if not ok]
    if undefined:
        raise EvaluationError(f"reference {reference} is undefined on {named('topic', undefined)}: it cannot order every topic for removal")
    variance = cube.matrix(reference).var(axis=1)
    return [t for _, t in sorted(zip(-variance, cube.topics), key=lambda vt: (vt[0], natural_key(vt[1])))]


def topic_set_reduction(
    cube: ScoreCube,
    reference: str,
    sizes: Sequence[int],
    *,
    test: str = "tukey",
    B: int = 1000,
    alpha: float = 0.05,
    rng: RngLike = None,
) -> pd.DataFrame:
    """Discriminative power and ranking correlation with the full set, on nested reduced topic sets.

    Returns columns ``topics measure pairs significant power tau tau_ap test B alpha seed``; the
    first block is the full topic set (tau = tau_ap = 1 by definition).
    """
    n = len(cube.topics)
    bad = [s for s in sizes if not 2 <= s <= n]
    if bad:
        raise EvaluationError(f"reduced sizes must be between 2 and {n} topics, got {', '.join(map(str, bad))}")
    generator, seed = resolve_rng(rng)
    order = removal_order(cube, reference)
    full_means = cube.means()
    rows = []
    for size in [n, *sorted(set(sizes) - {n}, reverse=True)]:
        removed = set(order[: n - size])
        reduced = cube.restrict(topics=[t for t in cube.topics if t not in removed])
        rows.extend(power_and_correlation_rows(size, reduced, full_means, test=test, B=B, alpha=alpha, rng=generator, seed=seed))
    return pd.DataFrame.from_records(rows, columns=COLUMNS)
