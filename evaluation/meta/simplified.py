"""Simplified test collections (docs/metrics.md#simplified-collections; Sakai & Song 2013, §5).

Five versions of a collection: ``popularity+graded`` (the original), ``popularity+binary``,
``uniform+graded``, ``uniform+binary`` and ``linear+graded``; uniform and linear weights are over
``I_q^+``. Each simplified collection is compared with the original by discriminative power and
by Kendall tau / symmetric tau_ap of the run rankings, measure by measure.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import pandas as pd

from evaluation.collection import Collection
from evaluation.exceptions import EvaluationError
from evaluation.meta._matrix import ScoreCube, score_cube
from evaluation.meta._resampling import RngLike, resolve_rng
from evaluation.meta.correlation import power_and_correlation_rows

ORIGINAL = "popularity+graded"
SIMPLIFICATIONS: dict[str, Callable[[Collection], Collection]] = {
    ORIGINAL: lambda c: c,
    "popularity+binary": lambda c: c.binarised(),
    "uniform+graded": lambda c: c.with_weights("uniform"),
    "uniform+binary": lambda c: c.binarised().with_weights("uniform"),
    "linear+graded": lambda c: c.with_weights("linear"),
}
COLUMNS = ["collection", "measure", "pairs", "significant", "power", "tau", "tau_ap", "test", "B", "alpha", "seed"]


def simplified_scores(collection: Collection, runs: Sequence, measures: Sequence[str]) -> dict[str, pd.DataFrame]:
    """Per-topic scores of ``runs`` on each simplified version of ``collection``."""
    from evaluation.engine import evaluate

    return {name: evaluate(make(collection), runs, list(measures), per_topic=True) for name, make in SIMPLIFICATIONS.items()}


def compare_collections(
    cubes: Mapping[str, ScoreCube],
    *,
    reference: str = ORIGINAL,
    test: str = "bootstrap",
    B: int = 1000,
    alpha: float = 0.05,
    rng: RngLike = None,
) -> pd.DataFrame:
    """Discriminative power of each version and the ranking correlation with ``reference``.

    Every version's test uses the same seed, hence the same resamples (same topics and runs).
    Returns columns ``collection measure pairs significant power tau tau_ap test B alpha seed``.
    """
    if reference not in cubes:
        raise EvaluationError(f"reference collection {reference!r} is not among {', '.join(cubes)}")
    generator, seed = resolve_rng(rng)
    if seed is None:  # a Generator was given: fix one seed so every version sees the same resamples
        seed = int(generator.integers(2**63 - 1))
    base = cubes[reference]
    base_means = base.means()
    rows = []
    for name, cube in cubes.items():
        if cube.runs != base.runs or cube.topics != base.topics or cube.measures != base.measures:
            raise EvaluationError(f"collection {name} does not have the same runs, topics and measures as {reference}")
        rows.extend(
            power_and_correlation_rows(name, cube, base_means, test=test, B=B, alpha=alpha, rng=seed, seed=seed, label=f" on {name}")
        )
    return pd.DataFrame.from_records(rows, columns=COLUMNS)


def simplified_comparison(
    collection: Collection,
    runs: Sequence,
    measures: Sequence[str],
    *,
    test: str = "bootstrap",
    B: int = 1000,
    alpha: float = 0.05,
    rng: RngLike = None,
) -> pd.DataFrame:
    """Score ``runs`` on the five versions of ``collection`` and compare them (docs/metrics.md#simplified-collections)."""
    frames = simplified_scores(collection, runs, measures)
    cubes = {name: score_cube(frame, measures) for name, frame in frames.items()}
    topics = set.intersection(*(set(c.topics) for c in cubes.values()))
    cubes = {name: c.restrict(topics=[t for t in c.topics if t in topics]) for name, c in cubes.items()}
    return compare_collections(cubes, test=test, B=B, alpha=alpha, rng=rng)
