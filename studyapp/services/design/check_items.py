"""Check items: a result page against itself (expected 0) or against a degraded copy of itself.

The degraded copy moves the page's relevant documents to the bottom (or out of the page) by
putting nonrelevant documents first: the run's own nonrelevant documents, then judged
nonrelevant ones of the topic. Annotators who prefer the degraded copy are not reading.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class CheckPlan:
    """One check item to create: ``b_documents`` is set for degraded checks only."""

    kind: str  # "identical" or "degraded"
    topic: int
    run: int
    b_documents: tuple[int, ...] = ()


def degrade(ranked: Sequence[int], depth: int, relevant: Callable[[int], bool], judged_nonrelevant: Sequence[int]) -> list[int] | None:
    """Degraded copy of ``ranked[:depth]``, or None when it cannot be told apart from the original.

    ``ranked`` is the run's whole list (document ids); the copy has the same length as the shown page.
    """
    page = list(ranked[:depth])
    if not any(relevant(d) for d in page):
        return None  # nothing to push down: the copy would be as bad as the original
    fillers = [d for d in ranked if not relevant(d)]
    seen = set(fillers)
    fillers += [d for d in judged_nonrelevant if d not in seen]
    kept_relevant = [d for d in page if relevant(d)]
    copy = (fillers + kept_relevant)[: len(page)]
    if copy == page or relevant(copy[0]):
        return None  # no nonrelevant document to put first
    return copy


def plan_checks(
    topics: Sequence[int],
    runs: Sequence[int],
    lists: dict[tuple[int, int], list[int]],
    depth: int,
    relevant: dict[int, set[int]],
    judged_nonrelevant: dict[int, list[int]],
) -> list[CheckPlan]:
    """An identical and (when possible) a degraded check per topic, rotating over the runs.

    ``lists[run, topic]`` are ranked document ids, ``relevant[topic]`` the documents relevant to
    what is shown, ``judged_nonrelevant[topic]`` judged documents relevant to none of it.
    """
    plans: list[CheckPlan] = []
    for n, topic in enumerate(topics):
        plans.append(CheckPlan("identical", topic, runs[n % len(runs)]))
        for shift in range(len(runs)):  # the degraded check prefers a different run than the identical one
            run = runs[(n + 1 + shift) % len(runs)]
            copy = degrade(lists.get((run, topic), []), depth, relevant[topic].__contains__, judged_nonrelevant[topic])
            if copy is not None:
                plans.append(CheckPlan("degraded", topic, run, tuple(copy)))
                break
    return plans
