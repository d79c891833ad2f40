"""Analyse a study: score what the annotators saw with every metric and compare with their answers.

The evaluation collection is rebuilt from the study's rows exactly as the annotators saw it: its
topics, only the kept subtopics with the renormalised weights stored in ``StudySubtopic``
(docs/metrics.md#intents-and-weights), the runs cut at the page depth, check items left out. Every
registered metric is scored at that depth for every (run, topic) and, when the study asks at
subtopic level, every (run, subtopic) under topic ``<topic>/<subtopic>`` (what ``python -m
evaluation score --per-topic --per-subtopic`` writes). The valid answers (annotators not excluded
by quality control), in canonical orientation (positive = run_b preferred, docs/design.md), then go
through ``evaluation.meta`` unchanged: agreement (tau, tau_b, MUP, MUP_b with topic-bootstrap
intervals, per Delta bin and preference subrange; docs/metrics.md#agreement-with-users), the
user-preference summary (Chen et al. Table 1), discriminative power (docs/metrics.md#paired-bootstrap)
and intuitiveness (docs/metrics.md#intuitiveness). Nothing here computes a statistic itself.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

import evaluation.collection
import evaluation.io.runs
from evaluation.engine import evaluate
from evaluation.exceptions import EvaluationError
from evaluation.io.preferences import VOTE_COLUMNS
from evaluation.io.runs import runs_from_arrays
from evaluation.meta._matrix import ScoreCube, score_cube
from evaluation.meta.agreement import AgreementResult, agreement_with_users
from evaluation.meta.bestset import BestSet, best_set_with_users
from evaluation.meta.intuitiveness import cell_order, concordance_test, intuitiveness_scores, ordering_agreement
from evaluation.meta.levels import preference_items
from evaluation.meta.significance import DiscriminativePower, discriminative_power
from evaluation.meta.userprefs import preference_summary
from evaluation.metrics import parse_measure
from studyapp.models import RankedItem, Study, StudySubtopic, StudyTopic
from studyapp.models.study import SUBTOPIC, TOPIC
from studyapp.models.study_settings import scored_metrics
from studyapp.services.collections.evaluation_bridge import to_evaluation_collection
from studyapp.services.data.export import vote_rows

GOLD = ("I-rec", "Ef-P", "Prec", "PMP")  # intuitiveness gold standards (Chen et al.; docs/metrics.md#intuitiveness)
LEVELS = ("topic", "weighted", "subtopic")  # agreement levels (docs/metrics.md#weighted-topic-preference)
DEFAULT_B = 1000
DEFAULT_SEED = 1
DEFAULT_ALPHA = 0.05


@dataclass(frozen=True)
class StudyCollection:
    """What the annotators of a study saw, as ``evaluation`` objects."""

    collection: evaluation.collection.Collection  # the study's topics with their kept subtopics and renormalised weights
    runs: list[evaluation.io.runs.Run]  # the study's runs (by name), every list cut at the study depth
    topics: list[str]  # study topic ids in study order
    weights: dict[str, dict[str, float]]  # topic -> kept subtopic -> renormalised weight
    depth: int
    levels: list[str]  # the study's presentation levels (topic, subtopic)

    @property
    def run_names(self) -> list[str]:
        return [run.name for run in self.runs]


def study_measures(depth: int) -> list[str]:
    """Every registered metric at default parameters, cut at the study ``depth`` (raw lists, as shown),
    except those tagged ``judging`` (Judged@k: how much of a list was judged, not how good it is):
    ``models.study_settings.scored_metrics``, which the ``candidate_metrics`` setting is checked against."""
    return scored_metrics(depth)


def is_ad_hoc(measure: str) -> bool:
    """Whether ``measure`` is one of the ad hoc baselines (docs/metrics.md#ad-hoc-baselines), not a diversity metric."""
    return "adhoc" in parse_measure(measure).spec.tags


def gold_measures(depth: int) -> list[str]:
    """The intuitiveness gold standards at ``depth``: I-rec, Ef-P, Prec, PMP."""
    return [f"{name}@{depth}" for name in GOLD]


def study_collection(study: Study) -> StudyCollection:
    """The study's evaluation collection and runs, exactly as its presentations showed them."""
    study_topics = list(StudyTopic.objects.filter(study=study).select_related("topic").order_by("position"))
    topics = [st.topic.topic_id for st in study_topics]
    weights: dict[str, dict[str, float]] = {t: {} for t in topics}
    kept = StudySubtopic.objects.filter(study_topic__study=study).order_by("study_topic__position", "position")
    for topic_id, number, weight in kept.values_list("study_topic__topic__topic_id", "subtopic__number", "weight"):
        weights[topic_id][number] = weight
    collection = to_evaluation_collection(study.collection, topics).keep_intents(weights)
    names = sorted(study.study_runs.values_list("run__name", flat=True))
    rows = list(
        RankedItem.objects.filter(run__study_runs__study=study, topic__in=[st.topic_id for st in study_topics], rank__lte=study.depth)
        .order_by("run__name", "topic_id", "rank")
        .values_list("run__name", "topic__topic_id", "document__docid", "rank")
    )
    run_col, topic_col, doc_col, rank_col = (list(c) for c in zip(*rows)) if rows else ([], [], [], [])
    built = {run.name: run for run in runs_from_arrays(run_col, topic_col, doc_col, ranks=rank_col, order="rank")} if rows else {}
    runs = [built.get(name, evaluation.io.runs.Run(name, {})) for name in names]
    return StudyCollection(collection, runs, topics, weights, study.depth, study.level_list)


def study_scores(data: StudyCollection, measures: list[str] | None = None) -> tuple[pd.DataFrame, list[str]]:
    """Tidy ``run topic measure value`` scores of every run on every topic and, for a study with
    subtopic-level presentations, every kept subtopic as ``<topic>/<subtopic>``; the warnings raised."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        frame = evaluate(
            data.collection, data.runs, measures or study_measures(data.depth), per_topic=True, per_subtopic=SUBTOPIC in data.levels
        )
    return frame, [str(w.message) for w in caught]


def study_votes(study: Study, rows: list[dict] | None = None) -> pd.DataFrame:
    """The valid answers on regular presentations as canonical votes (the frame ``read_preferences`` returns).

    Read through the preference export (``services.data.export``, its default rows): check items and
    annotators excluded by quality control are left out, ``value`` is the canonical answer
    (positive = run_b preferred) and ``annotator`` the keyed pseudonym, so the analysis reads
    exactly what ``export_preferences`` hands to ``python -m evaluation meta agreement``. ``rows``:
    the export's rows when the caller has them already (else :func:`services.data.export.vote_rows`).
    """
    columns = list(VOTE_COLUMNS[:-1])
    rows = vote_rows(study) if rows is None else rows
    frame = pd.DataFrame.from_records([tuple(row[c] for c in columns) for row in rows], columns=columns)
    frame["subtopic"] = frame["subtopic"].fillna("").astype(str)
    frame["value"] = frame["value"].astype(np.int64)
    frame["line"] = np.arange(len(frame), dtype=np.int64) + 2  # the line of the answer in an export file with a header
    return frame


@dataclass
class Timer:
    """Seconds spent per phase, elapsed and on the CPU (the report and ``benchmarks/bench_report.py`` print them)."""

    seconds: dict[str, float] = field(default_factory=dict)
    cpu: dict[str, float] = field(default_factory=dict)

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        start, start_cpu = time.perf_counter(), time.process_time()
        try:
            yield
        finally:
            self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - start
            self.cpu[name] = self.cpu.get(name, 0.0) + time.process_time() - start_cpu


@dataclass
class StudyAnalysis:
    """Everything the report shows, computed by ``evaluation`` from the study's rows."""

    data: StudyCollection
    measures: list[str]
    scores: pd.DataFrame
    votes: pd.DataFrame
    agreement: dict[str, AgreementResult]  # per level with answers: topic, weighted, subtopic
    best_sets: dict[str, BestSet]  # per level of ``agreement``: the metrics not significantly below another by MUP
    userprefs: pd.DataFrame | None
    power: DiscriminativePower | None
    concordance: pd.DataFrame | None  # gold measure_1 measure_2 topics disagreements concordance_1 concordance_2 a b p
    ordering: pd.DataFrame | None  # gold measures tau_b p cells agree disagree tau_cells: MUP order vs intuitiveness order
    gold: list[str]
    primary_level: str | None  # the level whose MUP orders the metrics (topic when asked, else weighted)
    B: int
    seed: int
    alpha: float
    notes: list[str] = field(default_factory=list)
    timer: Timer = field(default_factory=Timer)

    def mup(self, level: str | None = None) -> pd.Series:
        """MUP over all pairs per measure at ``level`` (default the primary level), best first."""
        return mup_order(self.agreement[level or self.primary_level].table)["value"]

    def best_set(self, level: str | None = None) -> BestSet | None:
        """The best set at ``level`` (default the primary level; docs/meta.md#best-set), None without answers there."""
        return self.best_sets.get(level or self.primary_level)


def mup_order(table: pd.DataFrame) -> pd.DataFrame:
    """The MUP rows over all pairs of an agreement table, indexed by measure, best first (ties keep the
    table's order; undefined values last): columns ``value ci_low ci_high n``."""
    rows = table[(table["statistic"] == "MUP") & (table["subset"] == "all")]
    return rows.set_index("measure")[["value", "ci_low", "ci_high", "n"]].sort_values("value", ascending=False, kind="stable")


def analyse_study(
    study: Study,
    *,
    B: int = DEFAULT_B,
    seed: int = DEFAULT_SEED,
    alpha: float = DEFAULT_ALPHA,
    measures: list[str] | None = None,
    timer: Timer | None = None,
    rows: list[dict] | None = None,
) -> StudyAnalysis:
    """Build the study's collection, score it, take the valid answers and run ``evaluation.meta``.

    Levels without answers are left out (with a note); with no answer at all only the scores and
    the discriminative power are computed. ``seed`` drives every bootstrap (agreement intervals and
    discriminative power), so a report is reproducible bit for bit.
    """
    timer = timer or Timer()
    with timer.phase("collection"):
        data = study_collection(study)
        votes = study_votes(study, rows)
    measures = list(measures or study_measures(data.depth))
    with timer.phase("scoring"):
        scores, notes = study_scores(data, measures)
    with timer.phase("meta"), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = _meta(data, measures, scores, votes, B=B, seed=seed, alpha=alpha)
    notes += result.pop("notes") + [str(w.message) for w in caught]
    return StudyAnalysis(
        data=data,
        measures=measures,
        scores=scores,
        votes=votes,
        B=B,
        seed=seed,
        alpha=alpha,
        notes=list(dict.fromkeys(notes)),
        timer=timer,
        **result,
    )


def _meta(
    data: StudyCollection, measures: list[str], scores: pd.DataFrame, votes: pd.DataFrame, *, B: int, seed: int, alpha: float
) -> dict:
    notes: list[str] = []
    cube = _topic_cube(data, measures, scores)
    power = None
    if cube is not None and len(cube.runs) > 1:
        try:
            power = discriminative_power(cube, test="bootstrap", B=B, alpha=alpha, rng=seed)
        except EvaluationError as exc:  # e.g. one topic: no bootstrap over topics
            notes.append(str(exc))
    gold = [g for g in gold_measures(data.depth) if g in measures]
    concordance = None
    if cube is not None and gold and len(measures) - len(gold) >= 2:
        concordance = concordance_test(cube, gold, [m for m in measures if m not in gold])
    agreement: dict[str, AgreementResult] = {}
    best_sets: dict[str, BestSet] = {}
    for level in LEVELS:
        items = _items(votes, level, data.weights, notes)
        if items is not None:
            try:
                agreement[level] = agreement_with_users(items, scores, measures, B=B, rng=seed)
                if B > 0:
                    best_sets[level] = best_set_with_users(items, scores, measures, B=B, rng=seed, alpha=alpha)
            except EvaluationError as exc:
                agreement.pop(level, None)
                notes.append(f"{level} level: {exc}")
    primary = next((level for level in LEVELS if level in agreement), None)
    ordering = None
    if concordance is not None and primary is not None:
        mup = mup_order(agreement[primary].table)["value"]
        ordering = ordering_agreement(intuitiveness_scores(concordance), mup, concordance)
        concordance = cell_order(concordance, mup)  # per Table 2 cell: ordered as MUP? (what meta intuitiveness --agreement writes)
    userprefs = preference_summary(votes, data.weights, alpha=alpha) if len(votes) else None
    return {
        "agreement": agreement,
        "best_sets": best_sets,
        "userprefs": userprefs,
        "power": power,
        "concordance": concordance,
        "ordering": ordering,
        "gold": gold,
        "primary_level": primary,
        "notes": notes,
    }


def _topic_cube(data: StudyCollection, measures: list[str], scores: pd.DataFrame) -> ScoreCube | None:
    """Topic-level scores of the study's topics (empty topics dropped with a warning).

    Runs and topics in the order ``meta discpower`` / ``meta intuitiveness`` read them from the
    scores file (natural order, subtopic rows left out), so a seeded bootstrap draws the same
    resamples there and here.
    """
    try:
        return score_cube(scores, measures, min_runs=2)
    except EvaluationError:
        return None


def _items(votes: pd.DataFrame, level: str, weights: dict[str, dict[str, float]], notes: list[str]) -> pd.DataFrame | None:
    """Preference items of ``level``, or None (noted) when the answers hold none."""
    wanted = TOPIC if level == "topic" else SUBTOPIC
    if votes.empty or not (votes["level"] == wanted).any():
        return None
    try:
        return preference_items(votes, level, weights if level == "weighted" else None)
    except EvaluationError as exc:
        notes.append(f"{level} level: {exc}")
        return None
