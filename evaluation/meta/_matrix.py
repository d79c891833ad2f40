"""Per-topic score tables -> complete ``measure x topic x run`` arrays (docs/metrics.md#meta-evaluation preamble).

Every meta-evaluation works on complete matrices: each run has a value for each topic of the
topic set. Missing rows are errors that name them (a missing score is never read as 0). Rows
with topic ``all`` are means and are ignored; subtopic rows ``<topic>/<subtopic>`` are not topics
of the default topic set (:func:`topic_rows`).

Undefined values are handled per measure. A measure whose value is NaN for *every* run of a topic
is undefined there (PMP when the topic's kept intent weights are equal; any measure on a topic
without relevant documents, docs/metrics.md#relevance-and-empty-topics): the cube keeps the NaN
and every analysis leaves that topic out *for that measure only*, with a warning naming the
measure, the topics and the reason; :attr:`ScoreCube.defined` tells which (measure, topic) cells
hold values. A topic undefined for every measure is dropped from the cube. A NaN for only some
runs of a topic is an error.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pandas as pd

from evaluation._types import BoolArray, FloatArray, IntArray
from evaluation.exceptions import EvaluationError, EvaluationWarning
from evaluation.io.scores import MEAN_TOPIC
from evaluation.wording import be, counted, have, named

SHOWN = 5  # how many missing keys an error message lists


def natural_key(text: str) -> tuple[int, int, str]:
    """Sort key: integer ids numerically, then other ids as strings."""
    return (0, int(text), "") if text.isdigit() else (1, 0, text)


@dataclass(frozen=True)
class ScoreCube:
    """Complete per-topic scores.

    Attributes
    ----------
    values : array of shape (n_measures, n_topics, n_runs); NaN for every run where a measure is
        undefined on a topic (left out for that measure only).
    measures, topics, runs : labels of the three axes (topics and runs in natural order).
    """

    values: FloatArray
    measures: tuple[str, ...]
    topics: tuple[str, ...]
    runs: tuple[str, ...]

    def matrix(self, measure: str) -> FloatArray:
        """Topic-by-run matrix ``X[t, j]`` of one measure."""
        return self.values[self.measure_index(measure)]

    def measure_index(self, measure: str) -> int:
        try:
            return self.measures.index(measure)
        except ValueError:
            raise EvaluationError(f"measure {measure!r} is not among {', '.join(self.measures)}") from None

    @cached_property
    def defined(self) -> BoolArray:
        """``(n_measures, n_topics)``: True where the measure has values on the topic."""
        return ~np.isnan(self.values).any(axis=2)

    def topic_counts(self) -> IntArray:
        """Topics each measure is defined on: the n its per-measure statistics rest on."""
        return self.defined.sum(axis=1)

    @property
    def complete(self) -> bool:
        """True when every measure is defined on every topic."""
        return bool(self.defined.all())

    def means(self) -> pd.DataFrame:
        """Run means over the topics each measure is defined on: indexed by run, one column per measure
        (NaN for a measure defined on no topic)."""
        if self.complete:
            values = self.values.mean(axis=1)
        else:
            counts = self.topic_counts()[:, None]
            with np.errstate(invalid="ignore", divide="ignore"):
                values = np.where(counts > 0, np.nansum(self.values, axis=1) / counts, np.nan)
        return pd.DataFrame(values.T, index=list(self.runs), columns=list(self.measures))

    def groups(self) -> list[ScoreCube]:
        """The cube split into measures defined on the same topics, each on exactly those topics.

        The group of the measures defined on every topic comes first, the others in order of their
        first measure; analyses that draw random numbers do so group by group in this order, so the
        numbers of the complete measures do not depend on whether partly undefined ones are present.
        """
        if self.complete:
            return [self]
        masks: dict[bytes, list[int]] = {}
        for g in range(len(self.measures)):
            masks.setdefault(self.defined[g].tobytes(), []).append(g)
        ordered = sorted(masks.values(), key=lambda members: (not self.defined[members[0]].all(), members[0]))
        return [
            self.restrict(
                topics=[self.topics[t] for t in np.flatnonzero(self.defined[members[0]])],
                measures=[self.measures[g] for g in members],
            )
            for members in ordered
        ]

    def common(self, measures: Sequence[str] | None = None, *, why: str = "") -> ScoreCube:
        """The cube on the topics where every one of ``measures`` (default all) is defined, for analyses
        that need all measures on the same units at once; warns (naming ``why``) when that leaves topics out."""
        cube = self.restrict(measures=measures) if measures is not None else self
        keep = cube.defined.all(axis=0)
        if keep.all():
            return cube
        if not keep.any():
            raise EvaluationError(f"no topic has values for every measure{f' ({why})' if why else ''}")
        partial = [m for m, ok in zip(cube.measures, cube.defined.all(axis=1)) if not ok]
        left = [t for t, ok in zip(cube.topics, keep) if not ok]
        warnings.warn(
            f"{why or 'this analysis'} needs every measure on the same topics: {named('topic', left)} {be(len(left))} left out because "
            f"{', '.join(partial)} {'is' if len(partial) == 1 else 'are'} undefined there",
            EvaluationWarning,
            stacklevel=2,
        )
        return cube.restrict(topics=[t for t, ok in zip(cube.topics, keep) if ok])

    def restrict(self, *, topics: Sequence[str] | None = None, measures: Sequence[str] | None = None) -> ScoreCube:
        """The cube on a subset of topics and/or measures (in the order given)."""
        t_idx = [self.topics.index(t) for t in topics] if topics is not None else list(range(len(self.topics)))
        m_idx = [self.measure_index(m) for m in measures] if measures is not None else list(range(len(self.measures)))
        return ScoreCube(
            self.values[np.ix_(m_idx, t_idx, range(len(self.runs)))],
            tuple(self.measures[i] for i in m_idx),
            tuple(self.topics[i] for i in t_idx),
            self.runs,
        )


def score_cube(
    scores: pd.DataFrame,
    measures: Iterable[str] | None = None,
    *,
    runs: Iterable[str] | None = None,
    topics: Iterable[str] | None = None,
    min_runs: int = 1,
) -> ScoreCube:
    """Build a :class:`ScoreCube` from a tidy ``run topic measure value`` frame.

    Parameters
    ----------
    scores : per-topic scores (as read by :func:`evaluation.io.scores.read_scores`).
    measures : measures to keep (default: all, in order of first appearance).
    runs, topics : the runs and topics the analysis needs (default: all present for the measures).
    min_runs : fewest runs the analysis can work with.

    Raises
    ------
    EvaluationError
        A measure absent from the scores, a needed (run, topic, measure) without a row, a NaN
        for some but not all runs of a topic, or fewer than ``min_runs`` runs.
    """
    missing_cols = [c for c in ("run", "topic", "measure", "value") if c not in scores.columns]
    if missing_cols:
        raise EvaluationError(f"scores lack {named('column', missing_cols)}")
    per_topic = scores[scores["topic"].astype(str) != MEAN_TOPIC]
    available = list(pd.unique(scores["measure"].astype(str)))  # unique() first: iterating a str column is slow
    measures = list(dict.fromkeys(measures)) if measures is not None else available
    if not measures:
        raise EvaluationError("no measures to analyse")
    absent = [m for m in measures if m not in available]
    if absent:
        raise EvaluationError(f"{named('measure', absent)} not in the scores (available: {', '.join(available) or 'none'})")
    per_topic = per_topic[per_topic["measure"].isin(measures)]
    with_topics = set(per_topic["measure"].unique())
    no_topics = [m for m in measures if m not in with_topics]
    if no_topics:
        raise EvaluationError(f"no per-topic scores for {', '.join(no_topics)} (only means); write scores with --per-topic")
    runs = list(dict.fromkeys(runs)) if runs is not None else sorted(set(per_topic["run"].unique()), key=natural_key)
    topics = list(dict.fromkeys(topics)) if topics is not None else sorted(topic_rows(set(per_topic["topic"].unique())), key=natural_key)
    if len(runs) < min_runs:
        raise EvaluationError(f"need at least {min_runs} runs, the scores have {len(runs)}")
    unknown_runs = sorted(set(runs) - set(per_topic["run"].unique()))
    if unknown_runs:
        raise EvaluationError(f"no scores at all for {named('run', unknown_runs)}")
    if not topics:
        raise EvaluationError("no topics to analyse")
    full = pd.MultiIndex.from_product([measures, topics, runs], names=["measure", "topic", "run"])
    series = per_topic.set_index(["measure", "topic", "run"])["value"].astype(np.float64)
    if series.index.duplicated().any():
        m, t, r = series.index[series.index.duplicated()][0]
        raise EvaluationError(f"more than one score for run={r} topic={t} measure={m}")
    present = full.isin(series.index)
    if not present.all():
        holes = full[~present]
        shown = "; ".join(f"run={r} topic={t} measure={m}" for m, t, r in holes[:SHOWN])
        more = f" and {len(holes) - SHOWN} more" if len(holes) > SHOWN else ""
        raise EvaluationError(f"scores missing for {counted(len(holes), '(run, topic, measure) combination')}: {shown}{more}")
    values = series.reindex(full).to_numpy(dtype=np.float64).reshape(len(measures), len(topics), len(runs))
    return _undefined_topics(ScoreCube(values, tuple(measures), tuple(topics), tuple(runs)))


def topic_rows(topics: Iterable[str]) -> list[str]:
    """The topics of a score table without its subtopic rows.

    ``score --per-topic --per-subtopic`` writes each subtopic under ``<topic>/<subtopic>``
    (:data:`evaluation.collection.SUBTOPIC_TOPIC`); such a row, whose ``<topic>`` is a topic of the
    same table, is read only where a subtopic is asked for by name (subtopic-level agreement),
    never as a topic of its own.
    """
    topics = set(map(str, topics))
    return [t for t in topics if not ("/" in t and t.rpartition("/")[0] in topics)]


def _undefined_topics(cube: ScoreCube) -> ScoreCube:
    """Check the NaN pattern, drop topics undefined for every measure and warn about each measure
    undefined on some topics (it is left out there, the other measures keep them)."""
    nan = np.isnan(cube.values)
    partial = nan.any(axis=2) & ~nan.all(axis=2)
    if partial.any():
        m, t = np.argwhere(partial)[0]
        runs = [cube.runs[j] for j in np.flatnonzero(nan[m, t])]
        raise EvaluationError(
            f"score is NaN for {named('run', runs[:SHOWN])}{' ...' if len(runs) > SHOWN else ''} but not for the other runs on topic "
            f"{cube.topics[t]} measure {cube.measures[m]} ({int(partial.sum())} such (topic, measure))"
        )
    undefined = nan.all(axis=2)  # (measures, topics)
    if not undefined.any():
        return cube
    reasons = [undefined_reason(m) for m in cube.measures]
    empty = undefined.all(axis=0)
    if empty.all():
        raise EvaluationError(f"every topic has NaN scores for every measure (topics {', '.join(cube.topics[:SHOWN])} ...)")
    if empty.any():
        dropped = [cube.topics[t] for t in np.flatnonzero(empty)]
        why = "no relevant documents" if not all(reasons) else "; ".join(dict.fromkeys(reasons))
        warnings.warn(
            f"{named('topic', dropped)} {have(len(dropped))} NaN scores for every run and every measure ({why}) and {be(len(dropped))} left out",
            EvaluationWarning,
            stacklevel=3,
        )
        cube = cube.restrict(topics=[t for t in cube.topics if t not in dropped])
        undefined = undefined[:, ~empty]
    n = len(cube.topics)
    for g in np.flatnonzero(undefined.any(axis=1)):
        topics = [cube.topics[t] for t in np.flatnonzero(undefined[g])]
        measure = cube.measures[g]
        warnings.warn(
            f"{measure} is undefined on {len(topics)} of {counted(n, 'topic')} ({', '.join(topics)}): "
            f"{reasons[g] or 'its score is NaN there'}; these topics are left out for {measure} only, "
            f"every other measure keeps them",
            EvaluationWarning,
            stacklevel=3,
        )
    return cube


def undefined_reason(measure: str) -> str:
    """Why ``measure`` can be undefined on a topic that has relevant documents ('' when it cannot,
    or the name is not a registered metric): the ``undefined`` text of its metric spec."""
    from evaluation.exceptions import UnknownMetricError
    from evaluation.metrics import parse_measure

    try:
        parsed = parse_measure(measure)
    except UnknownMetricError:
        return ""
    return parsed.spec.undefined(parsed.params) if parsed.spec.undefined else ""


def pair_differences(cube: ScoreCube, topics: Sequence[str], run_a: Sequence[str], run_b: Sequence[str]) -> FloatArray:
    """``d_M(c) = M(run_b, topic) - M(run_a, topic)`` for each pair ``c``; shape (n_measures, n_pairs)."""
    t_pos = {t: i for i, t in enumerate(cube.topics)}
    r_pos = {r: i for i, r in enumerate(cube.runs)}
    t = np.array([t_pos[x] for x in topics], dtype=np.int64)
    a = np.array([r_pos[x] for x in run_a], dtype=np.int64)
    b = np.array([r_pos[x] for x in run_b], dtype=np.int64)
    return cube.values[:, t, b] - cube.values[:, t, a]
