"""Must-show 1 of issue 10: a simulated study answered through the real pages (Django test client).

110 annotators arrive one after another; 10 of them, spread over the first 80 arrivals, answer every
item in 2 seconds. The fast rule (more than 2 of 4 decisions under 10 s) excludes each of them on
their 3rd answer, inside the answer's transaction; their presentations re-open, later annotators
take them, and the study ends with exactly those 10 excluded and every presentation at k valid
answers. Server-side decision time is simulated by replacing the clock service's time source.
Consent and onboarding go through the services (their pages have tests of their own); every item
is served and answered through the pages.
"""

from __future__ import annotations

import json
import tempfile
from datetime import datetime, timedelta
from pathlib import Path
from unittest import mock

import pytest
from django.conf import settings
from django.db.models import Count
from django.test import Client, TestCase
from django.urls import reverse
from django.utils import timezone

from studyapp.models import Annotator, Assignment, Presentation, QualityDecision
from studyapp.services.collections.importing import import_collection
from studyapp.services.design.study_config import parse_config
from studyapp.services.design.study_design import create_study
from studyapp.services.participation import allocation, flow
from studyapp.services.participation.sessions import TOKENS
from tests.studyapp.annotator_base import JSON, RIGHT_ANSWERS

RUNS, TOPICS, K, QUOTA = 5, 8, 5, 4  # 10 pairs x 8 topics = 80 presentations x k 5 = 400 slots = 100 annotators x 4
ARRIVALS = 110
FAST = {8 * n + 3 for n in range(10)}  # arrivals 3, 11, ..., 75 answer too fast


class SimulatedClock:
    """Stands in for ``django.utils.timezone`` inside ``services.clock``: time moves only when told."""

    def __init__(self, start: datetime) -> None:
        self.at = start

    def now(self) -> datetime:
        return self.at

    def advance(self, seconds: float) -> None:
        self.at += timedelta(seconds=seconds)


def _collection(folder: Path) -> dict:
    qrels, runs = [], []
    for t in range(1, TOPICS + 1):
        qrels += [f"{t} 1 t{t}-d{d} {1 if d % 3 == 0 else 0}" for d in range(1, 11)]
    for r in range(RUNS):
        path = folder / f"run{r}.run"
        lines = [f"{t} Q0 t{t}-d{(d + r) % 10 + 1} {d + 1} {10 - d} run{r}" for t in range(1, TOPICS + 1) for d in range(10)]
        path.write_text("\n".join(lines) + "\n")
        runs.append(path)
    (folder / "qrels.txt").write_text("\n".join(qrels) + "\n")
    return {"qrels": folder / "qrels.txt", "runs": runs}


@pytest.mark.slow
class SimulatedStudyTestCase(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        files = _collection(Path(tempfile.mkdtemp(prefix="studyapp-sim-")))
        import_collection("sim", qrels=files["qrels"], runs=files["runs"])
        config = {"runs": [f"run{r}" for r in range(RUNS)], "levels": ["topic"], "depth": 5, "subtopics_per_topic": 1,
                  "annotators_per_presentation": K, "items_per_annotator": QUOTA, "fast_threshold_seconds": 10,
                  "fast_limit": 2, "completion_code": "SIMDONE"}  # fmt: skip
        cls.study = create_study("sim", "Simulated study", parse_config(config)).study

    def url(self, name: str, *args) -> str:
        return reverse(name, args=[self.study.slug, *args])

    def take_part(self, pid: str, times: list[float]) -> dict:
        """One annotator: arrive and onboard (services), then answer each item through the pages after ``times[n]`` seconds."""
        self.assertTrue(allocation.can_admit(self.study))  # what the entry page checks before the consent
        annotator = flow.give_consent(self.study, None, flow.Arrival("prolific", pid, {"PROLIFIC_PID": pid}), self.study.consent_version)
        flow.read_instructions(annotator)
        flow.answer_practice(annotator, -3)
        flow.check_comprehension(annotator, RIGHT_ANSWERS)
        client = Client()
        session = client.session
        session[TOKENS] = {str(self.study.pk): annotator.token}
        session.save()
        client.cookies[settings.SESSION_COOKIE_NAME] = session.session_key
        following = client.get(self.url("study_next_item")).url
        reply: dict = {}
        for n, seconds in enumerate(times):
            self.assertEqual(client.get(following).status_code, 200)  # the item is served now
            self.clock.advance(seconds)
            pk = int(following.rstrip("/").split("/")[-1])
            data = {"value": (n % 9) - 4, "request_id": f"{pid}-{n:04d}", "client_ms": int(seconds * 1000)}
            reply = json.loads(client.post(self.url("study_answer", pk), data, **JSON).content)
            if n == 0:  # a retry of the same answer (lost reply): stored once, counted once
                again = json.loads(client.post(self.url("study_answer", pk), data, **JSON).content)
                self.assertEqual((again["stored"], again["created"]), (True, False))
            self.clock.advance(1)
            if reply["step"] != "items":
                break
            following = reply["next"]
        reply["page"] = client.get(reply["next"]).content.decode()
        return reply

    def test_the_too_fast_are_excluded_and_every_presentation_gets_k_valid_answers(self) -> None:
        self.clock = SimulatedClock(timezone.now())
        with mock.patch("studyapp.services.clock.timezone", self.clock):
            for n in range(ARRIVALS):
                if n in FAST:
                    times = [2.0] * QUOTA
                elif n % 4 == 0:
                    times = [4.0, 30.0, 9.9, 25.0]  # exactly at the limit: 2 fast decisions, kept
                else:
                    times = [15.0 + (n + i) % 20 for i in range(QUOTA)]
                reply = self.take_part(f"P{n:03d}", times)
                if n in FAST:
                    self.assertEqual(reply["step"], "excluded", n)
                    self.assertIn("more than 2 of your answers took less than 10 seconds each", reply["page"])
                else:
                    self.assertEqual(reply["step"], "done", n)
                    self.assertIn("SIMDONE", reply["page"])
            late = Client().get(self.url("study_entry") + "?PROLIFIC_PID=LATE")  # the study is complete: the entry page says so
            self.assertContains(late, "This study is full")

        excluded = set(Annotator.objects.filter(study=self.study, status=Annotator.Status.EXCLUDED).values_list("external_id", flat=True))
        self.assertEqual(excluded, {f"P{n:03d}" for n in FAST})
        self.assertEqual(Annotator.objects.filter(study=self.study, status=Annotator.Status.FINISHED).count(), ARRIVALS - len(FAST))
        decisions = QualityDecision.objects.filter(study=self.study)
        self.assertEqual(decisions.count(), len(FAST))
        self.assertEqual({d.detail for d in decisions}, {"fast: 3 of 3 decisions under 10 s (limit 2)"})
        valid = (
            Assignment.objects.filter(presentation__study=self.study, preference__isnull=False)
            .valid()
            .values("presentation_id")
            .annotate(n=Count("id"))
        )
        per_presentation = {row["presentation_id"]: row["n"] for row in valid}
        self.assertEqual(len(per_presentation), Presentation.objects.filter(study=self.study).count())
        self.assertEqual(set(per_presentation.values()), {K})
        stored = Assignment.objects.filter(annotator__study=self.study, preference__isnull=False).count()
        self.assertEqual(stored, 100 * QUOTA + 3 * len(FAST))  # the excluded annotators' answers are kept
