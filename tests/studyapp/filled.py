"""A study with answers: annotators arrive and answer every item (export, import and dashboard tests, the dashboard screenshot)."""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import datetime, timedelta

from studyapp.exceptions import AnnotatorExcluded, StudyFull
from studyapp.models import Annotator, Assignment, QualityDecision, Study
from studyapp.services.participation import allocation
from studyapp.services.participation.answers import record_answer
from studyapp.services.quality import control

Chooser = Callable[[Assignment, random.Random], int]
VALUES = [-4, -3, -2, -1, 0, 0, 1, 2, 2, 3, 4]


def random_value(item: Assignment, rng: random.Random) -> int:
    return rng.choice(VALUES)


def answer_everything(
    annotator: Annotator, rng: random.Random, start: datetime, seconds: Callable[[random.Random], float] = lambda rng: 12.0,
    choose: Chooser = random_value,
) -> datetime:  # fmt: skip
    """Answer every item of ``annotator`` (``choose`` gives the value as shown, ``seconds`` the time taken); returns the time after the last.

    Stops early when quality control excludes the annotator on an answer (as the pages would).
    """
    at = start
    while True:
        try:
            item = allocation.current_assignment(annotator, now=at, rng=rng)
        except AnnotatorExcluded:  # quality control excluded them on their last answer
            break
        if item is None:
            break
        took = seconds(rng)
        at += timedelta(seconds=took)
        record_answer(item, choose(item, rng), client_ms=int(took * 1000), visible_ms=int(took * 900), first_interaction_ms=800, now=at)
        if item.annotator.status == Annotator.Status.EXCLUDED:
            annotator.refresh_from_db()
            break
    return at


def fill(study: Study, names: list[str], rng: random.Random, start: datetime, *, platform: str = "prolific") -> list[Annotator]:
    """Admit annotators with these platform ids one after the other and let each answer all their items."""
    annotators = []
    at = start
    for name in names:
        annotator = allocation.register(study, platform=platform, external_id=name, now=at)
        allocation.admit(annotator, now=at, rng=rng)
        at = answer_everything(annotator, rng, at)
        annotators.append(annotator)
    return annotators


def fill_until_full(
    study: Study, rng: random.Random, start: datetime, *, seconds: Callable[[random.Random], float], choose: Chooser, limit: int = 500
) -> list[Annotator]:
    """Admit newcomers (``worker-1``, ...) until admission refuses them; each answers every item."""
    annotators, at = [], start
    for n in range(1, limit + 1):
        annotator = allocation.register(study, platform="prolific", external_id=f"worker-{n}", now=at)
        try:
            allocation.admit(annotator, now=at, rng=rng)
        except StudyFull:
            annotator.delete()
            break
        at = answer_everything(annotator, rng, at, seconds, choose)
        annotators.append(annotator)
    return annotators


def exclude(annotator: Annotator, reason: str) -> None:
    """Exclude an annotator through quality control (answers kept, the decision logged) with ``reason`` as the detail."""
    control.exclude(annotator, rule=QualityDecision.Rule.FAST, detail=reason)
