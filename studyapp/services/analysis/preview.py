"""Live preview of a running study on the staff dashboard: which metric agrees best so far, and how sure is that?

From the valid answers so far (the rows the report reads, ``services.analysis.study_analysis.study_votes``):

* per presentation level the study has (topic, subtopic), every metric's MUP over the run pairs
  answered so far with its 95% percentile interval, from the report's own computation
  (``evaluation.meta.agreement_with_users`` with the report's bootstrap over topics, B and seed,
  asked only for the ``all`` subset: the same resamples, so the same numbers as the report's
  agreement table for the same answers; docs/metrics.md#agreement-with-users), best first;
* per level, the best set (``evaluation.meta.bestset``, docs/meta.md#best-set): the metrics whose MUP is
  not significantly below another's, from the report's seed and B (the same set as the report's);
* how many more answers would make the leader come out strictly first by MUP in at least 80% of
  simulated studies *if the leader were the metric the users follow* (``evaluation.meta.separation``;
  an assumption the sentence states and the best set checks): the leader of the first level (topic when
  the study asks at topic level) is planted as the truth of the simulator, with the user model's
  signal and noise fitted to the answers so far at that level, and simulated studies of growing
  size up to the full study (every unit of the level, k answers per pair) count how often it wins.

The scores of the study's collection do not change while it runs and are cached per study; the
preview is cached per state of the answers and exclusions (``services.analysis.report.fingerprint``), like
the report page, so a dashboard refresh recomputes it only after a new answer or exclusion.
"""

from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
import pandas as pd
from django.core.cache import cache

from evaluation.collection import SUBTOPIC_TOPIC
from evaluation.exceptions import EvaluationError
from evaluation.meta._matrix import pair_differences, score_cube
from evaluation.meta.agreement import agreement_with_users
from evaluation.meta.bestset import MIN_TOPICS, BestSet, best_set_with_users
from evaluation.meta.levels import preference_items
from evaluation.meta.separation import N_SIM, TARGET, Separation, fit_user_model, separation
from evaluation.meta.simulate import StudyPairs, check_truth_defined
from studyapp.models import Study
from studyapp.models.study import SUBTOPIC, TOPIC
from studyapp.services.analysis.report import fingerprint
from studyapp.services.analysis.study_analysis import (
    DEFAULT_B,
    DEFAULT_SEED,
    mup_order,
    study_collection,
    study_measures,
    study_scores,
    study_votes,
)

PREVIEW_VERSION = 3  # part of the cache keys: bump when the preview's content changes
CACHE_SECONDS = 24 * 3600
SHOWN = 5  # metrics listed per level on the dashboard
NAMED = 8  # best-set members named per level on the dashboard (the report names all)
MIN_FIT_ANSWERS = 20  # fewer answers at the level give no separation estimate


@dataclass(frozen=True)
class RankedMetric:
    measure: str
    mup: float | None  # None where undefined (no answered pair with a non-zero preference)
    low: float | None
    high: float | None
    in_best_set: bool = False  # not significantly below another metric by MUP (docs/meta.md#best-set)
    p_best: float | None = None  # p-value of "this metric is the best"; None without a claim
    n: int = 0  # run pairs the metric's MUP rests on


@dataclass(frozen=True)
class LevelPreview:
    """The MUP ranking of one level on the answers so far."""

    level: str
    answers: int  # valid answers at this level
    pairs: int  # run pairs (items) they cover
    topics: int  # topics among those pairs (the bootstrap resamples these)
    ranking: list[RankedMetric]  # every metric, best first
    note: str = ""  # why there is no ranking
    best_set: BestSet | None = None  # docs/meta.md#best-set; None without a ranking

    @property
    def top(self) -> list[RankedMetric]:
        return self.ranking[:SHOWN]

    @property
    def leaders(self) -> list[str]:
        """The metrics sharing the best MUP."""
        best = self.ranking[0].mup if self.ranking else None
        return [] if best is None else [r.measure for r in self.ranking if r.mup == best]

    @property
    def best_set_named(self) -> list[str]:
        """The best set as the dashboard names it: at most ``NAMED`` metrics, then how many more."""
        names = self.best_set_measures
        return names if len(names) <= NAMED else [*names[:NAMED], f"{len(names) - NAMED} more"]

    @property
    def best_set_measures(self) -> list[str]:
        """The best set, best MUP first (empty without a ranking)."""
        return [] if self.best_set is None else list(self.best_set.measures)


@dataclass
class Preview:
    min_topics: ClassVar[int] = MIN_TOPICS  # fewer topics at a level: no best set is claimed there
    answers: int  # valid answers to regular items
    levels: list[LevelPreview]
    separation: Separation | None
    separation_level: str | None
    separation_note: str  # the sentence when there is no estimate
    noise: float | None  # fitted user model (evaluation.meta.separation.fit_user_model)
    signal: float | None
    B: int
    seed: int
    seconds: dict[str, float] = field(default_factory=dict)

    @property
    def sentence(self) -> str:
        """One sentence on separation for the dashboard."""
        s = self.separation
        if s is None:
            return self.separation_note
        return self._shared_lead() + self._separation_sentence(s)

    def _shared_lead(self) -> str:
        leaders = next(lv.leaders for lv in self.levels if lv.level == self.separation_level)
        if len(leaders) < 2:
            return ""
        return f"{', '.join(leaders[:-1])} and {leaders[-1]} share the best {self.separation_level}-level MUP so far. "

    def _separation_sentence(self, s: Separation) -> str:
        """What the simulation says, led by what it assumes: that the leader so far is the metric users follow."""
        fitted = f"signal {self.signal:.2f}, noise {self.noise:.2f} fitted to the {s.answers_now:,} {self.separation_level}-level answers"
        if s.candidates < 2:
            return f"Every metric agrees with {s.leader} in sign on every run pair: nothing to separate."
        assumed = f"Assuming {s.leader}, the leader so far, is the metric the users follow ({fitted}): "
        if s.separated_now:
            told = f"it would come out first by MUP in {s.rate_now:.0%} of simulated studies of this size"
            claim = f"{told}, so the answers at hand would separate it."
        elif s.units_needed is None:
            claim = (
                f"even the full study ({s.answers_full:,} answers) would put it first by MUP in only {s.rate_full:.0%} of "
                f"simulated studies (target {s.target:.0%}): it would not separate the leading metrics."
            )
        else:
            claim = (
                f"about {s.more_answers:,} more answers ({s.answers_needed:,} of the full {s.answers_full:,}) would put it "
                f"first by MUP in {s.target:.0%} of simulated studies (now {s.rate_now:.0%})."
            )
        return assumed + claim + self._assumption_check()

    def _assumption_check(self) -> str:
        """The best set's word on the assumption (docs/meta.md#best-set): it is not tested by the simulation."""
        level = next(lv for lv in self.levels if lv.level == self.separation_level)
        chosen = level.best_set
        if chosen is None or not chosen.claim:
            return " The answers so far are too few to test whether another metric is as good (no best set yet)."
        others = len(chosen.measures) - 1
        if others <= 0:
            return f" The answers so far support the assumption: {self.separation.leader} alone is in the best set."
        return (
            f" The estimate does not test that assumption: {others} other metric{'s' if others > 1 else ''} "
            f"{'are' if others > 1 else 'is'} not significantly below it (best set of {others + 1})."
        )

    @property
    def duplicates(self) -> str:
        """The metrics that can never be told apart from the leader (same sign on every pair), or ""."""
        s = self.separation
        if s is None or not s.duplicates:
            return ""
        names = ", ".join(m for m, _ in s.duplicates)
        agree, them = ("agrees", "it") if len(s.duplicates) == 1 else ("agree", "them")
        return (
            f"{names} {agree} with {s.leader} in sign on every {self.separation_level}-level run pair of the study: "
            f"no number of answers separates {them} (left out of the estimate)."
        )


def _defined(x: float) -> float | None:
    return None if x is None or not math.isfinite(x) else float(x)


def _study_key(study: Study) -> str:
    """The study's id and creation time (a deleted study's id may come back for a new one)."""
    return f"{study.pk}:{study.created_at.timestamp() if study.created_at else ''}"


def study_scores_cached(study: Study) -> dict:
    """Every metric's scores of the study's collection as shown (``services.analysis.study_analysis``) with the units
    of each level; computed once per study (its design is frozen once created)."""
    key = f"study-preview-scores:v{PREVIEW_VERSION}:{_study_key(study)}"
    entry = cache.get(key)
    if entry is None:
        data = study_collection(study)
        measures = study_measures(data.depth)
        scores, _ = study_scores(data, measures)
        units = {TOPIC: list(data.topics)}
        if SUBTOPIC in data.levels:
            units[SUBTOPIC] = [SUBTOPIC_TOPIC.format(topic=t, subtopic=s) for t in data.topics for s in data.weights[t]]
        entry = {"scores": scores, "measures": measures, "units": units, "levels": list(data.levels)}
        cache.set(key, entry, CACHE_SECONDS)
    return entry


def study_preview(study: Study, *, B: int = DEFAULT_B, seed: int = DEFAULT_SEED, target: float = TARGET, n_sim: int = N_SIM) -> Preview:
    """The MUP ranking per level and the separation estimate on the valid answers so far."""
    seconds: dict[str, float] = {}
    start = time.perf_counter()
    entry = study_scores_cached(study)
    scores, measures = entry["scores"], entry["measures"]
    seconds["scores"] = time.perf_counter() - start
    start = time.perf_counter()
    votes = study_votes(study)
    seconds["answers"] = time.perf_counter() - start
    start = time.perf_counter()
    levels = [_level(votes, level, scores, measures, B=B, seed=seed) for level in entry["levels"]]
    seconds["ranking"] = time.perf_counter() - start
    start = time.perf_counter()
    preview = Preview(len(votes), levels, None, None, "", None, None, B, seed, seconds)
    _separate(preview, votes, entry, study.annotators_per_presentation, target=target, n_sim=n_sim, seed=seed)
    seconds["separation"] = time.perf_counter() - start
    return preview


def _level(votes: pd.DataFrame, level: str, scores: pd.DataFrame, measures: list[str], *, B: int, seed: int) -> LevelPreview:
    mine = votes[votes["level"] == level]
    if mine.empty:
        return LevelPreview(level, 0, 0, 0, [], f"no valid {level}-level answers yet")
    items = preference_items(mine, level)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = agreement_with_users(items, scores, measures, B=B, rng=seed, subsets=("all",))
            chosen = best_set_with_users(items, scores, measures, B=B, rng=seed) if B > 0 else None
    except EvaluationError as exc:
        return LevelPreview(level, len(mine), len(items), items["topic"].nunique(), [], str(exc))
    order = mup_order(result.table)
    p_best = {} if chosen is None else chosen.table.set_index("measure")["p_best"].to_dict()
    ranking = [
        RankedMetric(
            m,
            _defined(r.value),
            _defined(r.ci_low),
            _defined(r.ci_high),
            in_best_set=chosen is not None and m in chosen,
            p_best=_defined(p_best.get(m)),
            n=int(r.n),
        )
        for m, r in order.iterrows()
    ]
    note = "" if ranking and ranking[0].mup is not None else "every answered pair is a tie so far: MUP is not defined yet"
    return LevelPreview(level, len(mine), result.n_pairs, result.n_topics, ranking if not note else [], note, chosen if not note else None)


def _separate(preview: Preview, votes: pd.DataFrame, entry: dict, k: int, *, target: float, n_sim: int, seed: int) -> None:
    """Fill in the separation estimate of the first ranked level (``k`` answers per pair in the full study), or say why there is none."""
    ranked = next((lv for lv in preview.levels if lv.ranking), None)
    if ranked is None:
        preview.separation_note = "No valid answers yet." if not len(votes) else "No metric ranking yet, so no separation estimate."
        return
    if ranked.answers < MIN_FIT_ANSWERS:
        preview.separation_note = (
            f"Too few answers for a separation estimate ({ranked.answers} {ranked.level}-level answers; it needs {MIN_FIT_ANSWERS})."
        )
        return
    try:
        _estimate(preview, votes, entry, ranked, k, target=target, n_sim=n_sim, seed=seed)
    except EvaluationError as exc:  # e.g. a metric undefined on every topic: say so, never fail the dashboard
        preview.separation_note = f"No separation estimate: {exc}."


def _estimate(
    preview: Preview, votes: pd.DataFrame, entry: dict, ranked: LevelPreview, k: int, *, target: float, n_sim: int, seed: int
) -> None:
    """Plant the leader of ``ranked``, fit the user model to that level's answers and simulate (module docstring)."""
    leader = ranked.ranking[0].measure
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cube = score_cube(entry["scores"], entry["measures"], topics=entry["units"][ranked.level], min_runs=2)
    check_truth_defined(cube, [leader])  # the planted leader must be defined on every unit (PMP may not be)
    pairs = StudyPairs.from_cube(cube)
    mine = votes[votes["level"] == ranked.level]
    keys = (
        mine["topic"]
        if ranked.level == TOPIC
        else [SUBTOPIC_TOPIC.format(topic=t, subtopic=s) for t, s in zip(mine["topic"], mine["subtopic"])]
    )
    keys = np.asarray(keys, dtype=object)
    known = np.isin(keys, cube.topics)
    d_answers = pair_differences(
        cube.restrict(measures=[leader]), keys[known], mine["run_a"].to_numpy()[known], mine["run_b"].to_numpy()[known]
    )[0]
    fitted = fit_user_model(pairs.d[cube.measure_index(leader)], d_answers, mine["value"].to_numpy()[known])
    if fitted is None:
        preview.separation_note = f"The answers so far do not follow {leader}, the leader: no separation estimate."
        return
    model = fitted.user_model(k)
    preview.signal, preview.noise = fitted.signal, fitted.noise
    preview.separation_level = ranked.level
    preview.separation = separation(pairs, leader, model, answers_now=int(known.sum()), target=target, n_sim=n_sim, seed=seed)


def cached_preview(study: Study) -> Preview:
    """The preview of ``study`` in its current state (computed at most once per state of answers and exclusions)."""
    key = f"study-preview:v{PREVIEW_VERSION}:{_study_key(study)}:{fingerprint(study)}"
    preview = cache.get(key)
    if preview is None:
        preview = study_preview(study)
        cache.set(key, preview, CACHE_SECONDS)
    return preview
