"""Whether an adaptive study's "decided" signal can fire at all, given its number of topics, and what ``create_study``
says of an adaptive study (docs/meta.md#adaptive-allocation, "Optional stopping")."""

from __future__ import annotations

import math

from evaluation.meta import adaptive
from evaluation.meta.bestset import EXACT_TOPICS
from studyapp.models.study_settings import candidate_list

ALPHA = 0.05  # the decided signal's family-wise level over its looks
MAX_LOOKS = 20  # the decided signal's looks; each at look_alpha(ALPHA, MAX_LOOKS) (ALPHA / MAX_LOOKS)
LOOK_ALPHA = adaptive.look_alpha(ALPHA, MAX_LOOKS)


def fewest_topics(look_alpha: float = LOOK_ALPHA) -> int:
    """The fewest topics with which the best set can leave any entry out at a look's level. Up to ``EXACT_TOPICS``
    topics its sign-flip test enumerates all ``2^T`` flips, so its smallest ``p_best`` is ``1 / 2^T + SELECTION alpha``
    (:func:`evaluation.meta.bestset.best_set`), at most ``alpha`` only when ``2^T >= fewest_flips(alpha) + 1``
    (:func:`evaluation.meta.adaptive.fewest_flips`, the same bound on random flips): 9 topics at 0.0025."""
    return min(EXACT_TOPICS + 1, max(1, math.ceil(math.log2(adaptive.fewest_flips(look_alpha) + 1))))


def decided(chosen: adaptive.Contenders, candidates: int) -> bool:
    """The decided signal over ``candidates`` candidate metrics: at most ``DECIDED_SIZE`` entries left in the best set
    (:attr:`evaluation.meta.adaptive.Contenders.decided`). With at most that many candidates this holds at the first
    look whatever the answers say, so there it also needs a candidate left out of the best set."""
    return chosen.decided and (candidates > adaptive.DECIDED_SIZE or len(chosen.members) < candidates)


def too_few_topics(topics: int) -> str | None:
    """Why the best set can leave no metric out with ``topics`` topics (so the decided signal comes only if the
    metrics fall into at most 3 entries of the same signs), or None when it can."""
    least = fewest_topics()
    if topics >= least:
        return None
    return (
        f"with {topics} topics the best set can never leave a metric out: at a look's level {LOOK_ALPHA:g} that needs at least "
        f"{least} topics (its exact test has {2**topics} sign flips), so the decided signal comes only if the metrics fall into "
        "at most 3 entries that order every judged pair alike, and otherwise the study runs until every pair has its answers, "
        "as a uniform one would; add topics or choose uniform allocation"
    )


def creation_lines(slug: str, topics: int, candidate_metrics: str = "") -> list[str]:
    """What an adaptive study needs beside the server (its draws come from ``allocation_priorities`` alone), which
    metrics it decides among, and a warning when it has too few topics for the decided signal ever to fire or no
    candidate metrics named (``create_study`` prints them)."""
    why, names = too_few_topics(topics), candidate_list(candidate_metrics)
    among = (
        f"It decides among {len(names)} candidate metrics (candidate_metrics): {', '.join(names)}."
        if names
        else "Note: no candidate_metrics, so every metric the report scores contends; with that many the best set kept 20-25 "
        "entries in every measured study and the decided signal never came (docs/studyapp.md#how-annotators-get-items): "
        'to decide among a few, create the study again with e.g. "candidate_metrics": "alpha-nDCG@10,nERR-IA@10,D#-nDCG@10" '
        "(it is fixed once the study exists)."
    )
    return [
        f"Allocation: adaptive. Run manage.py allocation_priorities {slug} --every 30 beside the server while the study is open: "
        "until its first run draws a round, newcomers get presentations in need order as under uniform allocation, "
        "and those answers are left out of the design-weighted estimates (docs/meta.md#adaptive-allocation).",
        among,
        *([f"Warning: {why} (docs/meta.md#adaptive-allocation)."] if why else []),
    ]


def contenders_before_a_round(candidate_metrics: str) -> str:
    """Who contends until a complete round gives a best set: the study's candidate metrics, else every metric."""
    names = candidate_list(candidate_metrics)
    return f"the candidate metrics {', '.join(names)} (no complete round yet)" if names else "every metric (no complete round yet)"
