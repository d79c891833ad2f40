"""A study with answers: annotators arrive and answer every item with random values (export and dashboard tests)."""

from __future__ import annotations

import random
from datetime import datetime, timedelta

from studyapp.models import Annotator, Study
from studyapp.services import assignment as engine
from studyapp.services.answers import record_answer


def answer_everything(annotator: Annotator, rng: random.Random, start: datetime, seconds: float = 12.0) -> datetime:
    """Answer every item of ``annotator`` with a random value, ``seconds`` apart; returns the time after the last."""
    at = start
    while (item := engine.current_assignment(annotator, now=at, rng=rng)) is not None:
        value = rng.choice([-4, -3, -2, -1, 0, 0, 1, 2, 2, 3, 4])
        at += timedelta(seconds=seconds)
        record_answer(item, value, client_ms=int(seconds * 1000), visible_ms=int(seconds * 900), first_interaction_ms=800, now=at)
    return at


def fill(study: Study, names: list[str], rng: random.Random, start: datetime, *, platform: str = "prolific") -> list[Annotator]:
    """Admit annotators with these platform ids one after the other and let each answer all their items."""
    annotators = []
    at = start
    for name in names:
        annotator = engine.register(study, platform=platform, external_id=name, now=at)
        engine.admit(annotator, now=at, rng=rng)
        at = answer_everything(annotator, rng, at)
        annotators.append(annotator)
    return annotators


def exclude(annotator: Annotator, reason: str) -> None:
    """Mark an annotator excluded (what quality control does), keeping their answers."""
    annotator.status = Annotator.Status.EXCLUDED
    annotator.exclusion_reason = reason
    annotator.save(update_fields=["status", "exclusion_reason"])
