"""How many participants does a study need? The plan from its design (docs/studyapp.md#planning-a-study).

:func:`plan_study` reads the study's design (runs, topics, kept subtopics, levels, answers per
presentation, items per participant, bonus), scores what its participants will see with every
metric the report scores, and simulates the study with the project's user model at a grid of
participant counts (:mod:`evaluation.meta.planning`): per count the expected best-set size, the
chance that the best set is a single entry, and the cost at the study's reward. The assumed
agreement level defaults to the figures of the seed design's simulations (docs/benchmarks.md#adaptive-allocation:
truth D#-nDCG@10, signal 2, noise 1, a tenth of answers random) and can be overridden.
:func:`projection` does the same from the answers so far: the user model's signal and noise fitted
to them (``evaluation.meta.separation``) and the answers already given counted in.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal

import numpy as np
import pandas as pd

from evaluation.collection import SUBTOPIC_TOPIC
from evaluation.meta._matrix import score_cube
from evaluation.meta.planning import SINGLE_TARGET, Design, plan, recommended
from evaluation.meta.simulate import StudyPairs, UserModel
from studyapp.models import Presentation, Study
from studyapp.models.study import PresentationKind
from studyapp.services.analysis.study_analysis import study_collection, study_measures, study_scores

TRUTH = "D#-nDCG@10"  # the seed design's planted truth (at the study's depth)
SIGNAL, NOISE, RANDOM_SHARE = 2.0, 1.0, 0.1  # the seed design's user model (docs/benchmarks.md#adaptive-allocation)
FRACTIONS = (0.1, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0)  # of the participants that complete the study once


@dataclass
class StudyPlan:
    """The planning table of a study with what it rests on."""

    study: Study
    table: pd.DataFrame  # participants answers answers_per_pair best_set_size single_entry truth_in_set claim n_sim cost
    complete: int  # participants that give every presentation its k answers
    per_participant: int  # regular answers per participant
    presentations: int
    level: str
    truth: str
    model: UserModel
    reward: Decimal
    recommended: int | None  # row index of the recommended size
    built: StudyDesign | None = None

    def lines(self) -> list[str]:
        """The table as the command prints it, with the assumptions and the recommendation."""
        s, m = self.study, self.model
        out = [
            f"Plan for {s.name!r}: {self.presentations} presentations x {s.annotators_per_presentation} answers, "
            f"{self.per_participant} answers per participant: {self.complete} participants complete it; analysed at {self.level} level.",
            f"Assumed users: they follow {self.truth} (signal {m.signal:g}, noise {m.noise:g}, {m.cheaters:.0%} random answers); "
            f"{int(self.table['n_sim'].iloc[0])} simulated studies per row; cost = participants x "
            f"{self.reward + s.bonus_amount} (reward {self.reward} + bonus {s.bonus_amount}).",
            f"{'participants':>12} {'answers/pair':>12} {'best set size':>13} {'single entry':>12} {'truth in set':>12} {'cost':>10}",
        ]
        for i, r in self.table.iterrows():
            mark = "  <- recommended" if i == self.recommended else ""
            out.append(
                f"{int(r.participants):>12} {r.answers_per_pair:>12.2f} {_num(r.best_set_size, 13)} {_num(r.single_entry, 12)} "
                f"{_num(r.truth_in_set, 12)} {r.cost:>10}{mark}"
            )
        if self.recommended is None:
            best = self.table["single_entry"].max()
            out.append(
                f"Recommended: none in the grid: the best set is a single entry in at most {_num(best, 0).strip()} of simulated "
                f"studies at every size (target {SINGLE_TARGET:.0%}); under these assumptions the metrics are not told apart. "
                "Try --participants with larger counts, or a design with more topics or runs."
            )
        else:
            r = self.table.loc[self.recommended]
            out.append(
                f"Recommended: {int(r.participants)} participants, the smallest count whose best set is a single entry in at least "
                f"{SINGLE_TARGET:.0%} of simulated studies."
            )
        return out


def _num(value: float, width: int) -> str:
    return f"{'–':>{width}}" if value is None or not np.isfinite(value) else f"{value:>{width}.2f}"


@dataclass(frozen=True)
class StudyDesign:
    """What the plan simulates: the analysed pairs' differences, their identities and the score table."""

    design: Design
    level: str
    pairs: StudyPairs
    scores: pd.DataFrame


def study_design(study: Study) -> StudyDesign:
    """The study's analysed pairs (primary level: topic when it asks at topic level) with every metric's difference."""
    data = study_collection(study)
    level = "topic" if "topic" in data.levels else "subtopic"
    measures = study_measures(data.depth)
    scores, _ = study_scores(data, measures)
    if level == "topic":
        keys = data.topics
    else:
        keys = [SUBTOPIC_TOPIC.format(topic=t, subtopic=s) for t in data.topics for s in data.weights[t]]
    cube = score_cube(scores[scores["topic"].isin(keys)], measures, runs=data.run_names, topics=keys)
    pairs = StudyPairs.from_cube(cube)
    topic_of = np.array([str(k).split("/")[0] for k in pairs.topic])
    _, clusters = np.unique(topic_of, return_inverse=True)
    presentations = Presentation.objects.filter(study=study, kind=PresentationKind.PAIR).count()
    design = Design(pairs.d, clusters, pairs.measures, max(presentations, pairs.d.shape[1]))
    return StudyDesign(design, level, pairs, scores)


def plan_study(
    study: Study,
    *,
    participants: list[int] | None = None,
    reward: Decimal = Decimal("0"),
    truth: str | None = None,
    signal: float = SIGNAL,
    noise: float = NOISE,
    random_share: float = RANDOM_SHARE,
    n_sim: int = 40,
    B: int = 500,
    seed: int = 1,
    progress: Callable[[int, int], None] | None = None,
) -> StudyPlan:
    """Simulate ``study`` at a grid of participant counts (default: fractions of the complete study)."""
    built = study_design(study)
    design, level = built.design, built.level
    per = study.regular_items_per_annotator
    if per < 1:
        raise ValueError(f"study {study.name!r} gives participants no regular item (items_per_annotator {study.items_per_annotator})")
    complete = math.ceil(design.presentations * study.annotators_per_presentation / per)
    grid = participants or sorted({max(1, round(complete * f)) for f in FRACTIONS})
    if min(grid) < 1:
        raise ValueError(f"participant counts must be positive, got {grid}")
    truth = truth or f"D#-nDCG@{study.depth}"
    model = UserModel(noise=noise, signal=signal, annotators=study.annotators_per_presentation, cheaters=random_share)
    table = plan(design, truth, model, [n * per for n in grid], n_sim=n_sim, B=B, rng=seed, progress=progress)
    table.insert(0, "participants", grid)
    table["cost"] = [(reward + study.bonus_amount) * n for n in grid]
    return StudyPlan(study, table, complete, per, design.presentations, level, truth, model, reward, recommended(table), built)


def check_plan(result: StudyPlan, participants: int, *, n_sim: int = 40, B: int = 500, seed: int = 2) -> dict[str, float]:
    """Simulate ``participants`` again through the report's own path and compare with the plan's row.

    Independent of the planner's shortcut (sums of answers straight into :func:`best_set`): each
    simulated study is written as canonical votes (one row per answer, as the preference export has
    them), read back by ``preference_items`` and analysed by ``best_set_with_users`` against the study's
    score table, with other seeds. Returns the mean best-set size and the single-entry share with
    their Monte Carlo standard errors.
    """
    from evaluation.meta.bestset import best_set_with_users
    from evaluation.meta.levels import preference_items
    from evaluation.meta.planning import answer_counts, simulate_each
    from evaluation.meta.simulate import latent_preference

    built = result.built
    if built is None:
        raise ValueError("this plan keeps no design to check against")
    rng = np.random.default_rng(seed)
    pairs, model = built.pairs, result.model
    mu = latent_preference(pairs.d[pairs.measures.index(result.truth)], model.signal)
    answers = participants * result.per_participant
    sizes, single = [], []
    for _ in range(n_sim):
        counts = answer_counts(pairs.d.shape[1], built.design.presentations, answers, rng)
        each = simulate_each(mu, counts, model, rng)
        rows = [
            (built.level, *_topic_subtopic(str(pairs.topic[c])), pairs.run_a[c], pairs.run_b[c], f"a{j}", int(each[c, j]), 0)
            for c in np.flatnonzero(counts)
            for j in range(counts[c])
        ]
        votes = pd.DataFrame.from_records(rows, columns=["level", "topic", "subtopic", "run_a", "run_b", "annotator", "value", "line"])
        chosen = best_set_with_users(preference_items(votes, built.level), built.scores, list(pairs.measures), B=B, rng=rng)
        if chosen.claim:
            sizes.append(chosen.size)
            single.append(chosen.size == 1)
    n = max(len(sizes), 1)
    return {
        "best_set_size": float(np.mean(sizes)) if sizes else float("nan"),
        "best_set_size_se": float(np.std(sizes, ddof=1) / np.sqrt(n)) if len(sizes) > 1 else float("nan"),
        "single_entry": float(np.mean(single)) if single else float("nan"),
        "single_entry_se": float(np.sqrt(np.mean(single) * (1 - np.mean(single)) / n)) if single else float("nan"),
        "n_sim": n_sim,
    }


def _topic_subtopic(key: str) -> tuple[str, str]:
    topic, _, subtopic = key.partition("/")
    return topic, subtopic
