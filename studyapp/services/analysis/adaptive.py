"""Adaptive allocation off the request path: draw the groups to offer first, and the analysis's design weights
(docs/meta.md#adaptive-allocation; the statistics are ``evaluation.meta.adaptive``'s).

:func:`recompute` (``manage.py allocation_priorities``, periodically) reads the valid answers, takes the best set on the design-weighted
sample of the last complete round, weighs every (topic, run_a, run_b) group by how much the metrics still in the set dispute it, and,
when the drawn groups' open slots run low (at once when their room up to k answers does), draws the next round with known probabilities.
It writes :class:`AllocationGroup` and :class:`AllocationRound` rows; admission only reads which groups are drawn. The "decided" signal
looks at most :data:`MAX_LOOKS` times, each at :func:`evaluation.meta.adaptive.look_alpha` (``alpha / MAX_LOOKS``, Bonferroni): once per
round drawn, at the first :data:`MAX_LOOKS` draws (a recomputation that draws nothing takes no look, however often the command runs).
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass
from datetime import datetime

import numpy as np
import pandas as pd
from django.db.models import Count, Max

from evaluation.exceptions import EvaluationError
from evaluation.meta import adaptive, sequential
from evaluation.meta._matrix import pair_differences, score_cube
from evaluation.meta.levels import drop_undefined, preference_items
from evaluation.meta.pairs import pair_inputs
from studyapp.models import AllocationGroup, AllocationRound, Annotator, Preference, Presentation, Study
from studyapp.models.study import TOPIC
from studyapp.models.study_settings import Allocation, candidate_list
from studyapp.services.analysis import decided_signal, round_store
from studyapp.services.analysis.decided_signal import MAX_LOOKS  # the decided signal's looks
from studyapp.services.analysis.study_analysis import study_collection, study_votes
from studyapp.services.clock import now_or

logger = logging.getLogger("studyapp.services.analysis.adaptive")

ROUNDS = 20  # a round targets this share of the complete study's answers (1 / ROUNDS) ...
MIN_ROUND_QUOTAS = 4  # ... and room for at least this many annotators' regular quotas
LEVEL = 0.95  # the shown intervals' level; the look-corrected ones beside them hold together over the MAX_LOOKS looks at it
# Which interval the report shows, and what each covered at the look where a study stopped: benchmarks/bench_adaptive.py,
# planted-truth studies with these defaults (100 per design and simulation seed, docs/benchmarks.md#adaptive-allocation).
SHOWN_INTERVAL = (
    "design-weighted (two-phase estimator), score interval with the topics' Taylor linearisation variance at its effective "
    "degrees of freedom (evaluation.meta.intervals.linearisation_variance, linearisation_df)"
)
MEASURED_COVERAGE = {
    "shown": (
        "0.973 (the seed's design) and 0.955 (TREC 2014) of the population values in 100 planted-truth studies each, "
        "0.963 and 0.933 with another simulation seed (standard errors 0.009-0.017), 0.960-0.973 and 0.956-0.973 in 150 "
        "studies on each of three more seeds: a little conservative on the seed's design; 0.929-0.965 in the hard regimes "
        "(closely tied metrics, candidates that rarely disagree, 8 topics)"
    ),
    "looks": (
        "0.998 (the seed's design) and 1.000 (TREC 2014), 1.000 and 0.998 with another simulation seed, 0.994-1.000 in the hard regimes"
    ),
}
RESERVE = adaptive.RESERVE  # draw the next round when the drawn groups' open slots (at once: room) fall below this share of a round
# Random sign flips of each look's best set (above 12 topics): at least adaptive.fewest_flips(look alpha) = 444 for the
# set to shrink at all (with the earlier 400 the decided signal could never fire on a study of more than 12 topics),
# and the benchmark's 2,000 for the measured power (benchmarks/bench_adaptive.py --B).
B = 2000
FULL = adaptive.FULL  # the share of drawn groups that get k answers per presentation (the others one)


@dataclass
class Groups:
    """The study's run-pair groups with what admission and the analysis need of them (arrays in ``rows`` order)."""

    rows: list[AllocationGroup]
    names: list[tuple[str, str, str]]  # (topic id, run_a name, run_b name)
    slots: np.ndarray  # k x regular presentations of the group
    answers: np.ndarray  # valid answers on them (at most k counted per presentation)
    layered: np.ndarray  # its presentations with at least one valid answer (the first layer)
    drawn_round: np.ndarray
    probability: np.ndarray
    full: np.ndarray  # drawn to get k answers per presentation (else one)
    full_probability: np.ndarray
    presentations: np.ndarray  # regular presentations of the group

    @property
    def wanted(self) -> np.ndarray:
        """Answers a drawn group is offered first for: k per presentation if full, else one each."""
        return np.where(self.full, self.slots, self.presentations)

    @property
    def complete(self) -> np.ndarray:
        """Full groups: every presentation has its k answers; first-layer groups: every presentation has one."""
        return np.where(self.full, self.answers >= self.slots, self.layered >= self.presentations)


def ensure_groups(study: Study) -> None:
    """One :class:`AllocationGroup` per (topic, run_a, run_b) of the study's regular presentations (idempotent)."""
    keys = set(Presentation.objects.filter(study=study, kind=Presentation.Kind.PAIR).values_list("topic_id", "run_a_id", "run_b_id"))
    have = set(AllocationGroup.objects.filter(study=study).values_list("topic_id", "run_a_id", "run_b_id"))
    AllocationGroup.objects.bulk_create(
        [AllocationGroup(study=study, topic_id=t, run_a_id=a, run_b_id=b) for t, a, b in sorted(keys - have)], ignore_conflicts=True
    )


def state(study: Study) -> tuple[int, int]:
    """(valid answers on regular presentations, rounds drawn): two cheap queries; a recomputation with the same
    state as the last one has nothing new to say (the command skips it)."""
    answers = (
        Preference.objects.filter(assignment__presentation__study=study, assignment__presentation__kind=Presentation.Kind.PAIR)
        .exclude(assignment__annotator__status=Annotator.Status.EXCLUDED)
        .count()
    )
    return answers, study.allocation_rounds.count()


def groups_of(study: Study) -> Groups:
    """Every group with its slots and valid answers (excluded annotators count for nothing)."""
    ensure_groups(study)
    k = study.annotators_per_presentation
    rows = list(AllocationGroup.objects.filter(study=study).select_related("topic", "run_a", "run_b").order_by("id"))
    index = {(g.topic_id, g.run_a_id, g.run_b_id): i for i, g in enumerate(rows)}
    slots, answers, layered, presentations = (np.zeros(len(rows)) for _ in range(4))
    valid = (
        Preference.objects.filter(assignment__presentation__study=study, assignment__presentation__kind=Presentation.Kind.PAIR)
        .exclude(assignment__annotator__status=Annotator.Status.EXCLUDED)
        .order_by()
        .values_list("assignment__presentation")
        .annotate(n=Count("id"))
    )
    answered = Counter(dict(valid))
    for pid, t, a, b in Presentation.objects.filter(study=study, kind=Presentation.Kind.PAIR).values_list(
        "id", "topic_id", "run_a_id", "run_b_id"
    ):
        i = index[t, a, b]
        slots[i] += k
        answers[i] += min(k, answered[pid])
        layered[i] += answered[pid] > 0
        presentations[i] += 1
    return Groups(
        rows,
        [(g.topic.topic_id, g.run_a.name, g.run_b.name) for g in rows],
        slots,
        answers,
        layered,
        np.array([g.drawn_round for g in rows], dtype=np.int64),
        np.array([g.probability for g in rows], dtype=np.float64),
        np.array([g.full for g in rows], dtype=bool),
        np.array([g.full_probability for g in rows], dtype=np.float64),
        presentations,
    )


def analysis_round(groups: Groups) -> int | None:
    """The last round whose drawn groups (and every earlier round's) are complete: the estimator's round."""
    rounds = int(groups.drawn_round.max(initial=-1)) + 1
    done = None
    for r in range(rounds):
        if not groups.complete[groups.drawn_round == r].all():
            break
        done = r
    return done


def differences(study: Study, groups: Groups) -> tuple[np.ndarray, list[str]]:
    """(P, G) topic-level differences on every group, and the P names: the ``candidate_metrics`` (empty: every metric scored)."""
    from studyapp.services.analysis.preview import study_scores_cached  # preview -> report -> this module: read when called

    entry = study_scores_cached(study)
    measures = candidate_list(study.candidate_metrics) or entry["measures"]  # the contenders and disputed_by follow them
    cube = score_cube(entry["scores"], measures, topics=list(dict.fromkeys(n[0] for n in groups.names)))
    topics, run_a, run_b = (pd.Series([n[i] for n in groups.names]) for i in range(3))
    return pair_differences(cube, topics, run_a, run_b), list(cube.measures)


def preferences(study: Study, groups: Groups) -> tuple[np.ndarray, np.ndarray]:
    """(p, sign) per group at the study's primary level (topic when asked, else weighted); 0 where unanswered."""
    votes = study_votes(study)
    p, sign = np.zeros(len(groups.rows)), np.zeros(len(groups.rows))
    if votes.empty:
        return p, sign
    level = "topic" if TOPIC in study.level_list else "weighted"
    weights = study_collection(study).weights if level == "weighted" else None
    items = preference_items(votes, level, weights)
    index = {name: i for i, name in enumerate(groups.names)}
    for topic, a, b, value, s in items[["topic", "run_a", "run_b", "p", "sign"]].itertuples(index=False):
        i = index.get((str(topic), a, b))
        if i is not None and np.isfinite(value):
            p[i], sign[i] = value, s
    return p, sign


def round_due(study: Study, groups: Groups, priority: np.ndarray, available: np.ndarray, per_round: float) -> bool:
    """Whether the next round may be drawn (its drawn groups' open slots having run low): at once while some undrawn
    group is disputed among the contenders; once none is, one small round
    (:func:`evaluation.meta.adaptive.round_target`) per round's worth of answers since the last draw, so that the
    answers in between go to the drawn groups' further answers, the most disputed now first (admission's second
    tier), as benchmarks/bench_adaptive.py spends each batch (:func:`recompute` draws at once when they have no room)."""
    if (priority[available] > 0).any():
        return True
    last = study.allocation_rounds.order_by("-number").values_list("answers", flat=True).first()
    return last is None or groups.answers.sum() - last >= per_round


def next_round(study: Study, groups: Groups) -> int:
    """The number after the last round stored, also when that one drew no group (a small round can come up empty)."""
    last = study.allocation_rounds.aggregate(last=Max("number"))["last"]
    return max(int(groups.drawn_round.max(initial=-1)), -1 if last is None else last) + 1


@dataclass(frozen=True)
class Recomputed:
    """What one :func:`recompute` did: the analysis round, the contenders, whether it drew a round."""

    analysis_round: int | None
    contenders: tuple[str, ...]
    decided: bool
    drew: int | None  # the new round's number, or None
    drawn_groups: int


def recompute(
    study: Study, *, now: datetime | None = None, rng: np.random.Generator | None = None, alpha: float = decided_signal.ALPHA, B: int = B
) -> Recomputed:
    """Update the dispute weights and draw the next round when the drawn groups' open slots run low (module docstring)."""
    if study.allocation != Allocation.ADAPTIVE:
        raise ValueError(f"study {study.name!r} uses {study.allocation} allocation: nothing to recompute")
    now = now_or(now)
    draw_rng = rng or np.random.default_rng()
    seen = study.allocation_rounds.count()  # before the groups are read: round_store.store writes nothing if another draw came since
    groups = groups_of(study)
    d, measures = differences(study, groups)
    r_star, names, decided, closeness, in_set = analysis_round(groups), (), False, None, np.ones(len(measures), dtype=bool)
    weights = None if r_star is None else adaptive.design_weights(groups.drawn_round, groups.probability, r_star)
    if weights is not None and (weights > 0).any():  # rounds that all came up empty have nothing to weigh yet
        p, sign = preferences(study, groups)
        seeded = rng or np.random.default_rng((study.pk, r_star))  # the best set's resampling: same answers, same contenders
        topics = np.unique([n[0] for n in groups.names], return_inverse=True)[1]
        chosen = adaptive.contenders(
            d, p, measures, weights=weights, user_sign=sign, clusters=topics, alpha=adaptive.look_alpha(alpha, MAX_LOOKS), B=B, rng=seeded
        )
        in_set = np.isin(measures, chosen.members)
        names, decided = chosen.entries, decided_signal.decided(chosen, len(measures))
        closeness = adaptive.leader_closeness(measures, chosen.chosen.leaders)
    priority = adaptive.dispute_weights(d, in_set, closeness)
    why = adaptive.disputed_by(d, measures, in_set)
    available = groups.drawn_round == adaptive.NOT_DRAWN
    got = np.where(groups.full, groups.answers, groups.layered)
    drawn_open, room = (float(np.maximum(x, 0)[~available].sum()) for x in (groups.wanted - got, groups.slots - groups.answers))
    per_round = max(groups.slots.sum() / ROUNDS, MIN_ROUND_QUOTAS * study.regular_items_per_annotator)
    new_round, drawn, full = None, np.zeros(len(groups.rows), dtype=bool), np.zeros(len(groups.rows), dtype=bool)
    starved = room < RESERVE * per_round  # the answers before the next draw would fall on groups outside the design: draw now
    if available.any() and drawn_open < RESERVE * per_round and (starved or round_due(study, groups, priority, available, per_round)):
        new_round = next_round(study, groups)
        cost = groups.presentations[available].mean() * (1 + FULL * (study.annotators_per_presentation - 1))  # answers per drawn group
        target = adaptive.round_target(priority, available, per_round / cost, room=room / cost)  # starved: a round's room again
        q = adaptive.round_probabilities(priority, available, target)
        drawn = adaptive.draw(q, draw_rng) & available
        shares = adaptive.full_shares(priority, FULL)  # 1 where no contenders dispute the group
        full = adaptive.draw_full(drawn, shares, draw_rng)
    changed = []
    for i, g in enumerate(groups.rows):
        before = (g.priority, g.disputed_by, g.probability, g.drawn_round)
        g.priority, g.disputed_by = float(priority[i]), why[i][:2000]
        if new_round is not None and available[i]:
            g.probability = float(q[i])
            if drawn[i]:
                g.drawn_round, g.full, g.full_probability = new_round, bool(full[i]), float(shares[i])
        if (g.priority, g.disputed_by, g.probability, g.drawn_round) != before:
            changed.append(g)
    stored = None
    if new_round is not None:
        # The decided signal's looks: one per draw, the first MAX_LOOKS draws only (each at look_alpha), so that the
        # looks stay at most MAX_LOOKS however often the recomputation runs (every --every seconds).
        look = decided and new_round < MAX_LOOKS
        stored = AllocationRound(
            study=study,
            number=new_round,
            drawn_at=now,
            answers=int(groups.answers.sum()),
            target=float(q.sum()),
            drawn=int(drawn.sum()),
            contenders=list(names),
            decided=look,
            decided_answers=int(groups.answers.sum()) if look else None,
        )
    if not round_store.store(study, seen, changed, stored):  # only the rows that changed: a recomputation without news writes little
        return recompute(study, now=now, rng=rng, alpha=alpha, B=B)  # another one drew a round since this one read: again, on its draws
    decided = study.allocation_rounds.filter(decided=True).exists()
    who = ", ".join(names) or decided_signal.contenders_before_a_round(study.candidate_metrics)  # as allocation_priorities prints
    drew = "no new round" if new_round is None else f"drew round {new_round} ({int(drawn.sum())} groups)"
    logger.info("study %r: analysis round %s, contenders: %s; %s", study.name, r_star, who, drew)
    return Recomputed(r_star, tuple(names), bool(decided), new_round, int(drawn.sum()))


@dataclass(frozen=True)
class TwoPhaseWeights:
    """Each group's weights in the design-based estimators ((topic, run_a, run_b) names -> weight, positive ones only)."""

    full: dict[tuple[str, str, str], float]  # entry weight over the chance of being full, on the full groups
    entry: dict[tuple[str, str, str], float]  # every group drawn by the analysis round (its first layer)
    analysis_round: int | None


def two_phase_weights(study: Study) -> TwoPhaseWeights:
    """The weights of :func:`evaluation.meta.adaptive.weighted_estimates`' two phases at the analysis round (the
    entry weights pooled over every round up to it, :func:`evaluation.meta.adaptive.pooled_weights`; the decision
    in :func:`recompute` keeps the last round's)."""
    groups = groups_of(study)
    r_star = analysis_round(groups)
    if r_star is None:
        return TwoPhaseWeights({}, {}, None)
    entry = adaptive.pooled_weights(groups.drawn_round, groups.probability, r_star)
    weights = adaptive.full_weights(entry, groups.full & (entry > 0), groups.full_probability)
    return TwoPhaseWeights(
        {name: float(w) for name, w in zip(groups.names, weights) if w > 0},
        {name: float(e) for name, e in zip(groups.names, entry) if e > 0},
        r_star,
    )


def design_weights_by_group(study: Study) -> tuple[dict[tuple[str, str, str], float], int | None]:
    """Each group's weight in the full groups' part of the k-answer estimators and the analysis round."""
    weights = two_phase_weights(study)
    return weights.full, weights.analysis_round


def first_layer(votes: pd.DataFrame) -> pd.DataFrame:
    """The first valid answer of every presentation (the votes come oldest first): every drawn group's first layer."""
    return votes.drop_duplicates(["level", "topic", "subtopic", "run_a", "run_b"], keep="first")


WEIGHTED_COLUMNS = ["level", "measure", "statistic", "n", "value", "ci_low", "ci_high", "ci_low_looks", "ci_high_looks"]


def weighted_agreement(study: Study, votes: pd.DataFrame, scores: pd.DataFrame, measures: list[str], levels: list[str]) -> dict | None:
    """An adaptive study's design-based estimates: MUP, MUP_b and tau_b over all pairs per level, each group's
    answers weighted by its design weight (:func:`evaluation.meta.adaptive.weighted_estimates`), with what they rest on.
    ``ci_low, ci_high`` are the intervals shown: nominal :data:`LEVEL` design-based intervals (:data:`SHOWN_INTERVAL`),
    whose coverage at the look where a simulated study stopped is measured (:data:`MEASURED_COVERAGE`); ``ci_low_looks,
    ci_high_looks`` beside them are corrected for the looks (repeated confidence intervals at ``look_level``,
    :func:`evaluation.meta.adaptive.look_level` of :data:`LEVEL` over :data:`MAX_LOOKS`: they hold at every look together
    with probability at least :data:`LEVEL`, so also where the staff stopped, and are wider). The decided signal keeps
    the look correction (each look at ``look_alpha``).

    None for uniform allocation (every pair had the same chance: the report's own estimates are the design's).
    ``table`` is None while no round is complete (the report's estimates are then conditional on the pairs judged).
    """
    if study.allocation != Allocation.ADAPTIVE:
        return None
    phases = two_phase_weights(study)
    r_star = phases.analysis_round
    corrected = adaptive.look_level(LEVEL, MAX_LOOKS)
    out = {
        "analysis_round": r_star,
        "full": len(phases.full),  # the groups drawn full (as the dashboard's "full")
        "drawn": len(phases.entry),
        "table": None,
        "level": LEVEL,
        "interval": SHOWN_INTERVAL,
        "looks_level": corrected,
        "max_looks": MAX_LOOKS,
        "boundary": sequential.DESCRIPTIONS[adaptive.BOUNDARY],
        "look_alpha": decided_signal.LOOK_ALPHA,
        "coverage": dict(MEASURED_COVERAGE),
    }
    if r_star is None or votes.empty:
        return out
    frames = []
    topics = set(scores["topic"].astype(str))
    collection_weights = study_collection(study).weights if "weighted" in levels else None
    first = first_layer(votes)
    for level in levels:
        intents = collection_weights if level == "weighted" else None
        try:
            items = preference_items(votes, level, intents)
            layer = preference_items(first, level, intents)
        except EvaluationError:  # a level without answers: nothing to weigh
            continue
        # one row per item of a drawn group: its first layer (p, sign) and its k answers (p_full, sign_full)
        layer = drop_undefined(layer)
        layer = layer[layer["key"].astype(str).isin(topics)]
        names = list(zip(layer["topic"].astype(str), layer["run_a"], layer["run_b"]))
        layer = layer[[name in phases.entry for name in names]].reset_index(drop=True)
        if layer.empty:
            continue
        full = items[["key", "run_a", "run_b", "p", "sign"]].rename(columns={"p": "p_full", "sign": "sign_full"})
        layer = layer.merge(full, on=["key", "run_a", "run_b"], how="left")
        names = list(zip(layer["topic"].astype(str), layer["run_a"], layer["run_b"]))
        e = np.array([phases.entry[name] for name in names])
        w = np.array([phases.full.get(name, 0.0) for name in names])
        w = np.where(np.isfinite(layer["p_full"].to_numpy(dtype=np.float64)), w, 0.0)  # a full group without its k-answer preference
        if not (w > 0).any():
            continue
        x = pair_inputs(layer, scores, measures)
        if x.p.size != len(layer):
            raise EvaluationError(f"{len(layer) - x.p.size} run pairs of the {level} level have no scores")
        est = adaptive.weighted_estimates(
            x.d,
            np.nan_to_num(layer["p_full"].to_numpy(dtype=np.float64)),
            weights=w,
            clusters=x.clusters,
            user_sign=np.nan_to_num(layer["sign_full"].to_numpy(dtype=np.float64)),
            level=LEVEL,
            layer=x.p,
            layer_sign=x.user_sign,
            layer_weights=e,
        )
        for statistic in adaptive.ESTIMATED:
            low_looks, high_looks = est.interval(statistic, corrected)
            frames.append(
                pd.DataFrame(
                    {
                        "level": level,
                        "measure": list(x.measures),
                        "statistic": statistic,
                        "n": est.pairs,
                        "value": est.value[statistic],
                        "ci_low": est.low[statistic],
                        "ci_high": est.high[statistic],
                        "ci_low_looks": low_looks,
                        "ci_high_looks": high_looks,
                    }
                )
            )
    if frames:
        out["table"] = pd.concat(frames, ignore_index=True)[WEIGHTED_COLUMNS]
    return out


GROUPS_SHOWN = 100  # the dashboard lists this many groups, most disputed first


def dashboard_view(study: Study) -> dict | None:
    """The staff dashboard's adaptive-allocation section: each group's answers and why it was offered, the
    rounds, the decided signal and the answers saved so far against a complete uniform study. None for uniform."""
    if study.allocation != Allocation.ADAPTIVE:
        return None
    groups = groups_of(study)
    rounds = list(study.allocation_rounds.order_by("number"))
    answers, complete_study = int(groups.answers.sum()), int(groups.slots.sum())
    decided = next((r for r in rounds if r.decided), None)
    order = np.lexsort((np.arange(len(groups.rows)), -groups.answers, -np.array([g.priority for g in groups.rows])))
    rows = [
        {
            "topic": groups.names[i][0],
            "run_a": groups.names[i][1],
            "run_b": groups.names[i][2],
            "answers": int(groups.answers[i]),
            "slots": int(groups.slots[i]),
            "wanted": int(groups.wanted[i]) if groups.drawn_round[i] >= 0 else 0,
            "full": bool(groups.full[i]),
            "round": None if groups.drawn_round[i] < 0 else int(groups.drawn_round[i]),
            "probability": float(groups.probability[i]),
            "priority": groups.rows[i].priority,
            "disputed_by": groups.rows[i].disputed_by,
        }
        for i in order[:GROUPS_SHOWN]
    ]
    outside = int(groups.answers[groups.drawn_round < 0].sum())
    disputed = np.array([g.priority > 0 for g in groups.rows], dtype=bool)
    return {
        "rounds": len(rounds),
        # allocation_priorities never ran (its first run draws round 0): admission falls back to need order
        "recomputed": bool(rounds) or bool((groups.drawn_round >= 0).any()),
        "looks": min(len(rounds), MAX_LOOKS),
        "max_looks": MAX_LOOKS,
        "look_alpha": decided_signal.LOOK_ALPHA,
        "boundary": sequential.DESCRIPTIONS[adaptive.BOUNDARY],
        "contenders": (rounds[-1].contenders if rounds else []) or [decided_signal.contenders_before_a_round(study.candidate_metrics)],
        "cannot_decide": decided_signal.too_few_topics(len({name[0] for name in groups.names})),
        "groups": len(groups.rows),
        "drawn": int((groups.drawn_round >= 0).sum()),
        "full": int(((groups.drawn_round >= 0) & groups.full).sum()),
        "full_share": FULL,
        "answers": answers,
        "outside_draw": outside,
        "complete_study": complete_study,
        "decided_at": decided.decided_answers if decided else None,
        "decided_set": decided.contenders if decided else None,  # the best set at that look (the contenders may change later)
        "saving": complete_study / decided.decided_answers if decided and decided.decided_answers else None,
        "share_of_complete": answers / complete_study if complete_study else 0.0,
        # the steering so far: the share of the answers on the pairs the contenders dispute, against the share of
        # the slots there (what uniform allocation, which fills every slot alike, would spend on them)
        "on_disputed": float(groups.answers[disputed].sum() / answers) if answers else 0.0,
        "disputed_slots": float(groups.slots[disputed].sum() / complete_study) if complete_study else 0.0,
        "rows": rows,
    }
