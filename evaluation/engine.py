"""Evaluate runs on a collection: measures in, a tidy ``run topic measure value`` frame out.

Topic handling (docs/metrics.md#relevance-and-empty-topics): every qrels topic is scored; a topic without any relevant
document gets NaN for every measure and is left out of the means, with a warning naming it
(``empty_topic="zero"`` scores it 0 and keeps it, like ndeval). A topic missing from a run
scores 0 (``topic_set="run_and_qrels"`` restricts each run's rows and mean to its own topics).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Literal

import numpy as np
import pandas as pd

from evaluation.arrays import Ranking, build_ranking, table_for
from evaluation.collection import SUBTOPIC_TOPIC, Collection
from evaluation.exceptions import EvaluationError, warn
from evaluation.io.inputs import as_collection, as_runs, iter_runs
from evaluation.io.runs import Run
from evaluation.io.scores import MEAN_TOPIC
from evaluation.metrics import Measure, default_measures, parse_measure
from evaluation.topic_log import TopicLog
from evaluation.wording import be, named

EmptyTopic = Literal["nan", "zero"]
TopicSet = Literal["qrels", "run_and_qrels"]


def resolve_measures(measures: Iterable[str | Measure | Any] | str | Measure | Any) -> list[Measure]:
    """Parse measures: one or a list of strings (``"all"`` expands to every registered metric at cutoffs
    5, 10 and 20, docs/metrics.md#parameter-defaults; trec_eval's spellings such as ``P_10`` or
    ``ndcg_cut.20`` too, docs/metrics.md#trec_eval-measures), our :class:`Measure` objects or ir_measures'
    measure objects (``ir_measures.parse_measure("alpha_nDCG@20")``, ``ir_measures.ERR_IA@10``, ``ir_measures.P@10``)."""
    if isinstance(measures, (str, Measure)) or _is_ir_measure(measures):
        measures = [measures]
    out: list[Measure] = []
    for item in measures:
        if isinstance(item, Measure):
            out.append(item)
        elif _is_ir_measure(item):
            from evaluation.ir_measures_provider import to_our_measure

            out.append(to_our_measure(item))
        elif item == "all":
            out.extend(default_measures())
        elif isinstance(item, str):
            out.append(parse_measure(item))
        else:
            raise TypeError(f"a measure must be a string, a Measure or an ir_measures measure, got {type(item).__name__}")
    if not out:
        raise EvaluationError("no measure requested")
    return out


def distinct_measures(measures: list[Measure]) -> list[Measure]:
    """The measures in order, each output label once (``alpha-nDCG@10`` asked twice, or by name and by ``all``, is one
    set of rows, not two that a later reader refuses as a repeated key)."""
    first: dict[str, Measure] = {}
    for measure in measures:
        first.setdefault(measure.label, measure)
    return list(first.values())


def _is_ir_measure(value: Any) -> bool:
    """An ir_measures measure object (``NAME`` and ``params``), without importing ir_measures."""
    return not isinstance(value, str) and hasattr(value, "NAME") and hasattr(value, "params")


# Per-rank blocks are (runs, topics, ranks, intents) float64 arrays; runs are scored in batches
# so that one such block stays under this many cells (about 32 MB), whatever the run depth.
BATCH_CELLS = 4_000_000


def score_matrix(
    collection: Collection | Any,
    runs: Sequence[Run] | Any,
    measures: Iterable[str | Measure | Any] | str | Measure | Any,
    *,
    progress: bool = False,
    on_run: Callable[[Run], None] | None = None,
) -> np.ndarray:
    """Raw per-topic scores ``(M, R, T)`` before topic-set rules (NaN only where a metric says so).

    ``collection`` and ``runs`` may be any kind :mod:`evaluation.io.inputs` converts (files, a
    directory of run files, DataFrames, pytrec_eval dicts, ir_measures tuples, ``{name: iterator}``,
    generators). Runs are taken one after another and scored in batches whose per-rank arrays stay
    under :data:`BATCH_CELLS` cells; a batch is dropped once scored, so lazy inputs are never held
    whole and memory is bounded by the largest batch. Ideals are computed once per collection.
    ``on_run`` sees every run as it is taken (before it is scored). ``measures``: what :func:`evaluate` takes.
    """
    collection = as_collection(collection)
    table = table_for(collection)
    measures = resolve_measures(measures)
    cutoff = max([m.cutoff for m in measures if m.cutoff is not None] + [1])
    total = len(runs) if isinstance(runs, Sequence) and not isinstance(runs, (str, bytes)) else None
    bar = _progress_bar(total) if progress else None
    families = _by_family(measures)
    parts = [np.empty((len(measures), 0, table.n_topics))]
    for batch in _batches(iter_runs(runs), table.n_topics * max(table.n_intents, 1), cutoff, on_run):
        parts.append(_score_batch(table, batch, measures, families, max([cutoff] + [run.depth for run in batch])))
        if bar is not None:
            bar.update(len(batch))
    if bar is not None:
        bar.close()
    return np.concatenate(parts, axis=1) if len(parts) > 2 else parts[-1]


def _batches(runs: Iterator[Run], cells_per_rank: int, cutoff: int, on_run: Callable[[Run], None] | None) -> Iterator[list[Run]]:
    """Consecutive runs in batches whose layout (runs x topics x depth x intents) stays under
    :data:`BATCH_CELLS` cells (at least one run per batch)."""
    batch: list[Run] = []
    depth = cutoff
    for run in runs:
        if on_run is not None:
            on_run(run)
        deeper = max(depth, run.depth)
        if batch and (len(batch) + 1) * deeper * cells_per_rank > BATCH_CELLS:
            yield batch
            batch, deeper = [], max(cutoff, run.depth)
        batch.append(run)
        depth = deeper
    if batch:
        yield batch


def _score_batch(table, batch: list[Run], measures: list[Measure], families: list[list[int]], depth: int) -> np.ndarray:
    """``(M, len(batch), T)`` scores of one batch; its per-rank blocks are freed family by family."""
    out = np.empty((len(measures), len(batch), table.n_topics))
    raw = build_ranking(table, batch, depth=depth)
    views: dict[bool, Ranking] = {False: raw}
    for family in families:
        with np.errstate(divide="ignore", invalid="ignore"):
            for n in family:
                measure = measures[n]
                if measure.condensed and True not in views:
                    views[True] = raw.condense()
                out[n] = measure.spec.kernel(views[measure.condensed], measure.cutoff, **measure.params)
        for view in views.values():
            view.release()  # the family's own per-intent blocks: freed before the next family builds its own
    return out


def _progress_bar(total: int):
    """A tqdm bar on stderr, or None when tqdm is not installed (it is an optional dependency)."""
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm(total=total, desc="scoring", unit="run", delay=2.0, leave=False)


def _by_family(measures: Sequence[Measure]) -> list[list[int]]:
    """Measure positions grouped by metric family (the module defining the kernel), families in order
    of first appearance: a family's measures share memoised blocks, so they run back to back."""
    families: dict[str, list[int]] = {}
    for n, measure in enumerate(measures):
        families.setdefault(measure.spec.kernel.__module__, []).append(n)
    return list(families.values())


def evaluate(
    collection: Collection | Any,
    runs: Sequence[Run] | Any,
    measures: Iterable[str | Measure],
    *,
    per_topic: bool = False,
    per_subtopic: bool = False,
    empty_topic: EmptyTopic = "nan",
    topic_set: TopicSet = "qrels",
    progress: bool = False,
    on_topic_mismatch: Literal["warn", "error", "ignore"] = "warn",
) -> pd.DataFrame:
    """Score ``runs`` on ``collection`` with ``measures``.

    Returns a DataFrame with columns ``run topic measure value``: per-topic rows (when
    ``per_topic``) followed, per run and measure, by the mean row with topic ``"all"``. The
    ``measure`` column repeats each requested string verbatim (canonical form for ``"all"``).
    With ``per_subtopic``, every subtopic is also scored alone (weight 1) as topic
    ``<topic>/<subtopic>`` (:meth:`Collection.per_subtopic`): per run, its topic rows, then its
    subtopic rows, then its mean rows, which stay the means over topics.

    ``collection`` and ``runs`` may also be files, pandas DataFrames with ir_datasets/ir_measures
    columns, pytrec_eval-style dicts or ir_measures ``Qrel``/``ScoredDoc`` tuples
    (:mod:`evaluation.io.inputs`); anything else is a ``TypeError``. Lazy inputs (a generator of runs,
    ``{name: iterator}``, a directory of run files) are read batch by batch, never held whole.

    A qrels topic missing from a run (scored 0 under ``topic_set="qrels"``) and a run topic missing
    from the qrels (not scored) are reported in one warning each (:class:`~evaluation.exceptions.EvaluationWarning`);
    ``on_topic_mismatch="error"`` makes them an :class:`~evaluation.exceptions.EvaluationError`,
    ``"ignore"`` silences them.
    """
    collection = as_collection(collection)
    if per_subtopic:
        return _with_subtopic_rows(collection, as_runs(runs), measures, per_topic, empty_topic, topic_set, progress, on_topic_mismatch)
    if empty_topic not in ("nan", "zero"):
        raise ValueError(f"empty_topic must be 'nan' or 'zero', got {empty_topic!r}")
    if topic_set not in ("qrels", "run_and_qrels"):
        raise ValueError(f"topic_set must be 'qrels' or 'run_and_qrels', got {topic_set!r}")
    measure_list = distinct_measures(resolve_measures(measures))
    table = table_for(collection)
    if table.n_topics == 0:
        raise EvaluationError("the qrels contain no topic")
    empty = table.n_rel_intents == 0
    unscored = [t for t, e in zip(table.topic_ids, empty) if e] if empty_topic == "nan" else []
    log = TopicLog(table.topic_ids, on_topic_mismatch, missing_scored=topic_set == "qrels", unscored=unscored)
    values = score_matrix(collection, runs, measure_list, progress=progress, on_run=log.add)
    if not log.names:
        raise EvaluationError("no run to evaluate")
    log.report()

    if empty.any():
        listed = [t for t, e in zip(table.topic_ids, empty) if e]
        action = "scored 0" if empty_topic == "zero" else "scored NaN and excluded from means"
        warn(f"{named('topic', listed)} without any relevant document: {action}")
        values[:, :, empty] = 0.0 if empty_topic == "zero" else np.nan
    _warn_undefined(measure_list, values, empty)
    included = log.included() if topic_set == "run_and_qrels" else np.ones((len(log.names), table.n_topics), dtype=bool)
    return _tidy(values, log.names, measure_list, table.topic_ids, included, per_topic, table)


def _warn_undefined(measures: Sequence[Measure], values: np.ndarray, empty: np.ndarray) -> None:
    """One warning naming the measures NaN on every topic with a relevant document (so their means are NaN)."""
    if empty.all():
        return  # the empty-topic warning has said it
    undefined = [m for m, v in zip(measures, values) if np.isnan(v[:, ~empty]).all()]
    if undefined:
        hint = (
            " (PMP: the intents' weights are equal, so no intent is the most popular; pmp_equal=tie scores such topics,"
            " docs/metrics.md#coverage-and-set-metrics)"
            if any("pmp_equal" in m.spec.params for m in undefined)
            else ""
        )
        listed = named("measure", [m.label for m in undefined])
        means = "so is its mean" if len(undefined) == 1 else "so are their means"
        warn(f"{listed} {be(len(undefined))} NaN on every topic, {means}{hint}")


def _with_subtopic_rows(
    collection: Collection,
    runs: Sequence[Run],
    measures: Iterable[str | Measure],
    per_topic: bool,
    empty_topic: EmptyTopic,
    topic_set: TopicSet,
    progress: bool,
    on_topic_mismatch: Literal["warn", "error", "ignore"],
) -> pd.DataFrame:
    """:func:`evaluate` with ``per_subtopic``: the topic frame plus every subtopic scored alone."""
    runs, measures = list(runs), distinct_measures(resolve_measures(measures))  # one string is one measure, not its letters
    options = {"empty_topic": empty_topic, "topic_set": topic_set, "progress": progress}
    frame = evaluate(collection, runs, measures, per_topic=per_topic, on_topic_mismatch=on_topic_mismatch, **options)
    subtopic_runs = [run.per_subtopic(collection.subtopic_ids(), SUBTOPIC_TOPIC) for run in runs]
    subtopics = evaluate(collection.per_subtopic(), subtopic_runs, measures, per_topic=True, on_topic_mismatch="ignore", **options)
    means = frame["topic"] == MEAN_TOPIC
    combined = pd.concat([frame[~means], subtopics[subtopics["topic"] != MEAN_TOPIC], frame[means]], ignore_index=True)
    position = {run.name: n for n, run in enumerate(runs)}
    order = combined["run"].map(position).to_numpy().argsort(kind="stable")
    return combined.iloc[order].reset_index(drop=True)


def _tidy(
    values: np.ndarray, names: Sequence[str], measures: Sequence[Measure], topics: list[str], included: np.ndarray, per_topic: bool, table
) -> pd.DataFrame:
    """Lay ``values (M, R, T)`` out as tidy rows: run by run, measure by measure, topics then the mean.

    Built with array operations (no Python loop over runs or topics): a CLI call with 100 runs and
    ``--measures all`` yields about a million rows.
    """
    M, R, T = values.shape
    masked = np.where(included[None], values, np.nan)
    means = np.empty((M, R))
    for m, measure in enumerate(measures):  # one vectorised call per measure
        if measure.spec.aggregate is not None:
            means[m] = measure.spec.aggregate(masked[m], table, measure.params)
        else:
            means[m] = _nanmean_rows(masked[m])
    run_of, measure_of = np.divmod(np.arange(R * M), M)  # run-major order of the mean rows
    slot = [np.full(R * M, T)]  # position of a row within its (run, measure) block: the mean comes last
    parts_run, parts_measure, parts_topic, parts_value = [run_of], [measure_of], [np.full(R * M, -1)], [means.T.ravel()]
    if per_topic:
        r, m, t = np.nonzero(np.broadcast_to(included[:, None, :], (R, M, T)))
        parts_run.append(r)
        parts_measure.append(m)
        parts_topic.append(t)
        parts_value.append(values[m, r, t])
        slot.append(t)
    run_idx, measure_idx, topic_idx, value = (np.concatenate(p) for p in (parts_run, parts_measure, parts_topic, parts_value))
    order = np.lexsort((np.concatenate(slot), measure_idx, run_idx))
    run_names = np.array(list(names), dtype=object)
    labels = np.array([measure.label for measure in measures], dtype=object)
    topic_names = np.array([*topics, MEAN_TOPIC], dtype=object)  # index -1 is the mean row
    return pd.DataFrame(
        {
            "run": run_names[run_idx[order]],
            "topic": topic_names[topic_idx[order]],
            "measure": labels[measure_idx[order]],
            "value": value[order].astype(np.float64),
        }
    )


def _nanmean_rows(values: np.ndarray) -> np.ndarray:
    """Mean of each row over its non-NaN cells; NaN for a row without any."""
    valid = ~np.isnan(values)
    count = valid.sum(axis=1)
    total = np.where(valid, values, 0.0).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, total / np.maximum(count, 1), np.nan)
