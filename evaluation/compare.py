"""Paired significance tests between runs, as researchers report them (docs/evaluation.md#comparing-runs).

:func:`compare` scores the runs per topic and tests every pair (or every run against a baseline)
on the topics where both are defined:

* ``t``: the paired t-test (``scipy.stats.ttest_rel``, two-sided);
* ``wilcoxon``: the Wilcoxon signed-rank test (``scipy.stats.wilcoxon``, two-sided; zero
  differences dropped, Wilcoxon's rule; 1.0 when every difference is 0);
* ``randomisation``: the paired randomisation (permutation) test of Fisher, as Smucker et al. (CIKM
  2007) use it: each topic's pair of scores swapped at random, ``permutations`` times (all
  ``2^n`` sign patterns when there are no more), p = ``2 min(P(D* <= d), P(D* >= d))`` with
  ``scipy.stats.permutation_test``'s ``+1`` for random draws;
* ``bootstrap``: the paired bootstrap test (Sakai, SIGIR 2006), studentised as ``meta discpower``'s
  (the same code, :func:`evaluation.meta.significance.bootstrap_asl`): differences shifted to mean 0,
  topics resampled ``permutations`` times, p = share of resamples with ``|t*| >= |t|``
  (``t = mean / (sd / sqrt(n))``, each resample's ``t*`` with its own sd).

``diff = mean_b - mean_a`` (positive: ``run_b`` scores higher); with a ``baseline`` it is
``run_a``, so ``diff > 0`` means the run beats the baseline. ``effect_size`` is Cohen's d of the
paired differences (``d_z``: mean / standard deviation). ``p_adjusted`` corrects the p-values of each
measure's comparisons (one family per measure): Holm, Bonferroni or Benjamini-Hochberg.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from itertools import combinations
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd
from scipy import stats

from evaluation.engine import evaluate
from evaluation.exceptions import EvaluationError
from evaluation.io.runs import Run, run_file_name
from evaluation.io.scores import MEAN_TOPIC
from evaluation.metrics import Measure
from evaluation.report.tables import to_latex, to_markdown

Test = Literal["t", "wilcoxon", "randomisation", "bootstrap"]
Correction = Literal["holm", "bonferroni", "bh"] | None
TESTS = ("t", "wilcoxon", "randomisation", "bootstrap")
CORRECTIONS = ("holm", "bonferroni", "bh", "none")
COLUMNS = [
    "measure",
    "run_a",
    "run_b",
    "mean_a",
    "mean_b",
    "diff",
    "n_topics",
    "test",
    "p_value",
    "p_adjusted",
    "effect_size",
    "significant",
]


class Comparison(pd.DataFrame):
    """The tidy frame of :func:`compare` (one row per measure and run pair) with table renderers."""

    @property
    def _constructor(self):
        return Comparison

    def to_markdown(self, digits: int = 4, **_: Any) -> str:  # type: ignore[override]
        """A GitHub-flavoured Markdown table, floats to ``digits`` places."""
        return to_markdown(pd.DataFrame(self), digits)

    def to_latex(self, digits: int = 4, **_: Any) -> str:  # type: ignore[override]
        """A LaTeX ``tabular`` (booktabs rules), floats to ``digits`` places."""
        return to_latex(pd.DataFrame(self), digits)


def _dict_key_of(baseline: Any, runs: Any) -> Any:
    """The key under which a dict of runs holds ``baseline`` (the same run file or the same :class:`Run`): a dict's key
    names its run (:func:`~evaluation.io.inputs.as_runs`), so the baseline given as that file or object is that key."""
    if not isinstance(runs, Mapping) or baseline is None or (isinstance(baseline, str) and baseline in runs):
        return baseline
    for key, value in runs.items():
        if value is baseline or (
            isinstance(baseline, (str, Path)) and isinstance(value, (str, Path)) and Path(value).resolve() == Path(baseline).resolve()
        ):
            return str(key)
    return baseline


def _baseline_name(baseline: str | Path | Run | None, names: list[str]) -> str | None:
    """The run ``baseline`` stands for: a run's name, a :class:`Run` (its name) or a run file (the name
    :func:`read_run` gives it: its tag column), as ``--baseline`` takes a name or a file."""
    if baseline is None or (isinstance(baseline, str) and baseline in names):
        return baseline
    if isinstance(baseline, Run):
        name, given = baseline.name, repr(baseline)
    elif isinstance(baseline, (str, Path)) and Path(baseline).is_file():
        name, given = run_file_name(baseline), f"{str(baseline)!r} (run {run_file_name(baseline)})"
    else:
        name, given = str(baseline), repr(baseline)
    if name not in names:
        raise EvaluationError(f"baseline {given} is not among the runs: {', '.join(names)}")
    return name


def compare(
    collection: Any,
    runs: Any,
    measures: Iterable[str | Measure] | str | Measure,
    baseline: str | Path | Run | None = None,
    test: Test = "t",
    correction: Correction = "holm",
    *,
    alpha: float = 0.05,
    permutations: int = 10_000,
    rng: int | np.random.Generator | None = 0,
    **evaluate_options: Any,
) -> Comparison:
    """Compare ``runs`` pairwise (``baseline=None``: every pair, in input order) or each with ``baseline``
    (a run's name, its run file, or the :class:`Run`).

    ``collection``, ``runs`` and ``measures`` take what :func:`~evaluation.engine.evaluate` takes
    (``evaluate_options`` are passed on, but ``per_topic`` and ``per_subtopic``). Returns a :class:`Comparison` with :data:`COLUMNS`;
    ``significant`` is ``p_adjusted <= alpha``. Topics where either run's score is NaN are left out
    of that pair (``n_topics``).
    """
    if test not in TESTS:
        raise ValueError(f"test must be one of {', '.join(TESTS)}, got {test!r}")
    if correction not in (*CORRECTIONS, None):
        raise ValueError(f"correction must be one of holm, bonferroni, bh or None, got {correction!r}")
    if not 0 < alpha < 1:  # else 'significant' would be all True (alpha >= 1) or all False
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    if isinstance(permutations, bool) or not isinstance(permutations, (int, np.integer)) or permutations < 1:
        raise ValueError(f"permutations must be a positive integer, got {permutations!r}")  # 0 draws gave p = 1
    for option in ("per_topic", "per_subtopic"):  # per_subtopic=True tested a topic's subtopics as further topics
        if option in evaluate_options:
            raise TypeError(
                f"compare() takes no {option}=: it tests the runs' scores per topic, topics being the independent units "
                f"(a topic's subtopics are not); compare subtopics with evaluate(..., per_subtopic=True) and your own test"
            )
    frame = evaluate(collection, runs, measures, per_topic=True, **evaluate_options)
    # a measure asked for twice ("D#-nDCG@10 D#-nDCG@10", a list built in a loop) is one family, not a pivot error
    per_topic = frame[frame["topic"] != MEAN_TOPIC].drop_duplicates(["run", "topic", "measure"])
    names = list(dict.fromkeys(frame["run"]))
    baseline = _baseline_name(_dict_key_of(baseline, runs), names)
    if len(names) < 2:
        raise EvaluationError("compare needs at least two runs")
    pairs = [(baseline, n) for n in names if n != baseline] if baseline is not None else list(combinations(names, 2))
    generator = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    rows = []
    for measure in dict.fromkeys(per_topic["measure"]):
        table = per_topic[per_topic["measure"] == measure].pivot(index="topic", columns="run", values="value")
        family = []
        for a, b in pairs:
            both = table[[a, b]].dropna()
            x, y = both[a].to_numpy(), both[b].to_numpy()
            family.append(
                {
                    "measure": measure,
                    "run_a": a,
                    "run_b": b,
                    "mean_a": x.mean() if x.size else np.nan,
                    "mean_b": y.mean() if y.size else np.nan,
                    "diff": (y - x).mean() if x.size else np.nan,
                    "n_topics": x.size,
                    "test": test,
                    "p_value": p_value(x, y, test, permutations, generator),
                    "effect_size": cohens_dz(y - x),
                }
            )
        adjusted = adjust(np.array([r["p_value"] for r in family]), correction)
        for row, p in zip(family, adjusted):
            row["p_adjusted"] = p
            row["significant"] = bool(p <= alpha)
        rows.extend(family)
    return Comparison(pd.DataFrame(rows, columns=COLUMNS))


def p_value(x: np.ndarray, y: np.ndarray, test: str, permutations: int = 10_000, rng: np.random.Generator | None = None) -> float:
    """Two-sided p-value of one paired test on scores ``x`` (run a) and ``y`` (run b) per topic."""
    d = y - x
    if d.size < 2:
        return np.nan
    if not d.any():
        return 1.0  # identical scores on every topic: no evidence of a difference
    if test == "t":
        return float(stats.ttest_rel(y, x).pvalue) if d.std() > 0 else 0.0
    if test == "wilcoxon":
        return float(stats.wilcoxon(d).pvalue)
    rng = rng or np.random.default_rng(0)
    if test == "randomisation":
        return _randomisation(d, permutations, rng)
    return _bootstrap(d, permutations, rng)


def _randomisation(d: np.ndarray, permutations: int, rng: np.random.Generator) -> float:
    """Paired randomisation test of the mean difference (sign flips), two-sided as scipy defines it."""
    n = d.size
    exact = 2**n <= permutations
    if exact:  # every sign pattern once
        signs = 1 - 2 * ((np.arange(2**n)[:, None] >> np.arange(n)) & 1)
    else:
        signs = rng.choice(np.array([-1, 1]), size=(permutations, n))
    null = (signs * d).mean(axis=1)
    observed = d.mean()
    tolerance = 1e-14 * max(abs(observed), 1.0)  # scipy's relative tolerance for ties with the observation
    less, greater = (null <= observed + tolerance).sum(), (null >= observed - tolerance).sum()
    extra = 0 if exact else 1
    total = null.size + extra
    return float(min(1.0, 2 * min(less + extra, greater + extra) / total))


def _bootstrap(d: np.ndarray, resamples: int, rng: np.random.Generator) -> float:
    """Paired bootstrap test (Sakai 2006): the studentised statistic of the mean-shifted differences,
    by the same code as ``meta discpower`` (one implementation, docs/metrics.md#paired-bootstrap)."""
    from evaluation.meta._resampling import bootstrap_counts
    from evaluation.meta.significance import bootstrap_asl

    asl, _ = bootstrap_asl(d, bootstrap_counts(rng, d.size, resamples))
    return float(asl[0])


def cohens_dz(d: np.ndarray) -> float:
    """Cohen's d of paired differences: mean / standard deviation (ddof 1); NaN when undefined."""
    if d.size < 2:
        return np.nan
    sd = d.std(ddof=1)
    return float(d.mean() / sd) if sd > 0 else (0.0 if d.mean() == 0 else float(np.sign(d.mean()) * np.inf))


def adjust(p: np.ndarray, correction: str | None) -> np.ndarray:
    """Adjusted p-values of one family: Holm (step-down), Bonferroni, Benjamini-Hochberg
    (``scipy.stats.false_discovery_control``); NaN p-values stay NaN and do not count."""
    out = np.full(p.shape, np.nan)
    valid = ~np.isnan(p)
    q, m = p[valid], int(valid.sum())
    if m == 0:
        return out
    if correction in (None, "none"):
        out[valid] = q
    elif correction == "bonferroni":
        out[valid] = np.minimum(q * m, 1.0)
    elif correction == "holm":
        order = np.argsort(q, kind="stable")
        stepped = np.maximum.accumulate(q[order] * (m - np.arange(m)))
        held = np.empty(m)
        held[order] = np.minimum(stepped, 1.0)
        out[valid] = held
    else:
        out[valid] = stats.false_discovery_control(q, method="bh")
    return out
