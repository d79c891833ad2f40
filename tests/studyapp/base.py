"""Shared fixtures for the study app tests: a toy collection on disk and a named cast.

The toy collection ("toy") has three topics and three runs (alpha, bravo, charlie):

* topic 1: 3 subtopics, weights 0.5 / 0.3 / 0.2 (subtopic 3 is navigational);
* topic 2: 4 subtopics, weights 0.4 / 0.3 / 0.2 / 0.1;
* topic 3: 2 subtopics, no weights in the intents file (uniform), and run charlie has no list for it.

The toy study ("Toy study") compares the three runs on topics 1 and 2 with 2 subtopics kept, at
both levels: 3 pairs x 2 topics x (1 + 2) = 18 presentations; k = 2, 6 items per annotator, so
exactly 6 annotators fit.

The cast: alice, bob and carol are annotators who arrive in that order; dave arrives when the
study is full; staff is a superuser.
"""

from __future__ import annotations

import random
import tempfile
from datetime import UTC, datetime, timedelta
from functools import cache
from pathlib import Path

from django.test import TestCase

from studyapp.models import Annotator, Assignment, Collection, Study
from studyapp.services.collections.importing import import_collection
from studyapp.services.design.study_config import parse_config
from studyapp.services.design.study_design import create_study
from studyapp.services.participation import allocation
from studyapp.services.participation.answers import record_answer

NOW = datetime(2026, 1, 5, 12, 0, tzinfo=UTC)

TOY_CONFIG = {
    "runs": ["alpha", "bravo", "charlie"],
    "topics": ["1", "2"],
    "subtopics_per_topic": 2,
    "levels": ["topic", "subtopic"],
    "annotators_per_presentation": 2,
    "items_per_annotator": 6,
    "lease_minutes": 10,
    "completion_code": "TOYDONE",
    "screenout_code": "TOYFULL",
}


def _qrels() -> str:
    lines = []
    grades = {  # topic -> subtopic -> {doc number: grade}
        "1": {"1": {1: 3, 2: 2, 5: 1}, "2": {3: 2, 4: 1}, "3": {6: 4}},
        "2": {"1": {1: 2, 2: 1}, "2": {3: 3}, "3": {4: 1, 7: 2}, "4": {5: 1}},
        "3": {"1": {1: 1}, "2": {2: 2}},
    }
    for topic, subs in grades.items():
        for sub, docs in subs.items():
            for n in range(1, 9):
                lines.append(f"{topic} {sub} t{topic}-d{n} {docs.get(n, 0)}")
    return "\n".join(lines) + "\n"


INTENTS = "1\t1\t0.5\tinf\n1\t2\t0.3\tinf\n1\t3\t0.2\tnav\n2\t1\t0.4\n2\t2\t0.3\n2\t3\t0.2\n2\t4\t0.1\n"

TOPICS_XML = """<topics>
<topic number="1"><query>jaguar</query><description>the animal, the car, the team</description>
<subtopic number="1" type="inf">the animal</subtopic><subtopic number="2" type="inf">the car</subtopic>
<subtopic number="3" type="nav">the team's site</subtopic></topic>
<topic number="2"><query>python</query><description>language or snake</description></topic>
<topic number="3"><query>mercury</query><description>planet or element</description></topic>
</topics>
"""

DOCS_JSONL = "\n".join(
    [
        '{"docid": "t1-d1", "title": "Jaguar facts", "url": "https://example.org/jaguar", "snippet": "The big cat."}',
        '{"docid": "t1-d2", "title": "Jaguar range map", "url": "https://example.org/range", "snippet": ""}',
        '{"docid": "t2-d1", "title": "Python tutorial", "url": "https://example.org/py"}',
    ]
)


def _run(name: str, orders: dict[str, list[int]]) -> str:
    return "".join(f"{t} Q0 t{t}-d{n} {r} {100 - r} {name}\n" for t, docs in orders.items() for r, n in enumerate(docs, start=1))


RUNS = {
    "alpha": _run("alpha", {"1": [1, 2, 3, 4, 5, 6], "2": [1, 2, 3, 4, 5, 6], "3": [1, 2, 3]}),
    "bravo": _run("bravo", {"1": [6, 3, 1, 7, 8, 2], "2": [3, 4, 5, 1, 8, 7], "3": [2, 1, 4]}),
    "charlie": _run("charlie", {"1": [8, 7, 6, 5, 4, 3], "2": [8, 7, 1, 2, 3, 4], "9": [1, 2]}),
}


@cache
def toy_files() -> dict[str, Path]:
    """Write the toy collection once per test process; returns the paths by role."""
    folder = Path(tempfile.mkdtemp(prefix="studyapp-toy-"))
    paths = {
        "qrels": folder / "qrels.txt",
        "intents": folder / "intents.tsv",
        "topics": folder / "topics.xml",
        "docs": folder / "docs.jsonl",
    }
    paths["qrels"].write_text(_qrels())
    paths["intents"].write_text(INTENTS)
    paths["topics"].write_text(TOPICS_XML)
    paths["docs"].write_text(DOCS_JSONL + "\n")
    for name, text in RUNS.items():
        paths[name] = folder / f"{name}.run"
        paths[name].write_text(text)
    paths["folder"] = folder
    return paths


def import_toy(name: str = "toy") -> Collection:
    f = toy_files()
    import_collection(
        name,
        qrels=f["qrels"],
        intents=f["intents"],
        topics=f["topics"],
        docs=f["docs"],
        runs=[f["alpha"], f["bravo"], f["charlie"]],
    )
    return Collection.objects.get(name=name)


def make_toy_study(name: str = "Toy study", collection: str = "toy", **changes) -> Study:
    config = {**TOY_CONFIG, **changes}
    return create_study(collection, name, parse_config(config)).study


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text)
    return path


class BaseTestCase(TestCase):
    """The toy collection and study, a fixed clock and a seeded random generator."""

    @classmethod
    def setUpTestData(cls) -> None:
        cls.collection = import_toy()
        cls.study = make_toy_study()

    def setUp(self) -> None:
        self.now = NOW
        self.rng = random.Random(7)

    def later(self, **delta: float) -> datetime:
        return self.now + timedelta(**delta)

    def arrive(self, name: str, *, now: datetime | None = None, study: Study | None = None) -> Annotator:
        """Register and admit an annotator whose external id is ``name``."""
        annotator = allocation.register(study or self.study, external_id=name, now=now or self.now)
        allocation.admit(annotator, now=now or self.now, rng=self.rng)
        return annotator

    def answer_all(self, annotator: Annotator, value: int = 1, *, now: datetime | None = None) -> int:
        """Answer every item of ``annotator`` (one second apart); returns how many were answered."""
        count = 0
        at = now or self.now
        while (item := allocation.current_assignment(annotator, now=at, rng=self.rng)) is not None:
            record_answer(item, value, client_ms=1000, request_id=f"r{item.pk}", now=at + timedelta(seconds=1))
            at += timedelta(seconds=2)
            count += 1
        return count

    def valid_answers(self, presentation_id: int) -> int:
        return Assignment.objects.filter(presentation_id=presentation_id, preference__isnull=False).count()
