"""Query budgets of the annotator's hot paths, and an admission check whose cost does not grow with the study.

Counted with ``CaptureQueriesContext`` inside the test's transaction, so savepoints count too (in
production they are a plain BEGIN/COMMIT, which is not a query). Budgets (issue 12): item page <= 8,
answer <= 8 (9 for a fast answer: live quality control reads the annotator's answers, issue 10), heartbeat <= 3; the room check before consent is one aggregate query and runs once
per arrival; a study ten times larger costs an arrival the same number of queries.
"""

from __future__ import annotations

import random
import tempfile
from collections import Counter
from datetime import timedelta
from pathlib import Path
from unittest import mock

from django.db import connection
from django.test import override_settings
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from studyapp.exceptions import StudyFull
from studyapp.models import Annotator, Assignment, Presentation
from studyapp.services.collections.importing import import_collection
from studyapp.services.design.study_config import parse_config
from studyapp.services.design.study_design import create_study
from studyapp.services.participation import allocation
from tests.studyapp.annotator_base import AnnotatorTestCase
from tests.studyapp.base import NOW, BaseTestCase, make_toy_study

ITEM_PAGE, ANSWER, HEARTBEAT = 8, 8, 3
FAST_ANSWER = ANSWER + 1  # the test client answers within milliseconds: every answer here is a fast decision


class HotPathBudgetTest(AnnotatorTestCase):
    def count(self, call) -> tuple[int, object]:
        with CaptureQueriesContext(connection) as queries:
            result = call()
        return len(queries), result

    def test_item_page_first_serve_and_reload_at_both_levels(self) -> None:
        seen_levels = set()
        for _ in range(6):
            redirect = self.client.get(self.url("study_next_item"))
            if redirect.url == self.url("study_done"):
                break
            for visit in ("first serve", "reload"):
                n, response = self.count(lambda: self.client.get(redirect.url))  # noqa: B023
                self.assertEqual(response.status_code, 200)
                level = Assignment.objects.get(pk=int(redirect.url.rstrip("/").split("/")[-1])).presentation.level
                seen_levels.add(level)
                self.assertLessEqual(n, ITEM_PAGE, f"item page ({level}, {visit}): {n} queries")
            assignment = Assignment.objects.get(pk=int(redirect.url.rstrip("/").split("/")[-1]))
            self.answer(self.client, assignment, request_id=f"req-{assignment.pk:08d}")
        self.assertEqual(seen_levels, {"topic", "subtopic"})

    def test_every_answer_including_the_last_and_a_repeat(self) -> None:
        for n_item in range(6):
            assignment = self.serve(self.client)
            n, response = self.count(lambda: self.answer(self.client, assignment, request_id=f"req-{assignment.pk:08d}"))  # noqa: B023
            self.assertEqual(response.status_code, 200)
            self.assertTrue(response.json()["created"])
            self.assertLessEqual(n, FAST_ANSWER, f"answer {n_item + 1}: {n} queries")
        self.assertTrue(response.json()["finished"])
        n, response = self.count(lambda: self.answer(self.client, assignment, request_id=f"req-{assignment.pk:08d}"))
        self.assertFalse(response.json()["created"])
        self.assertLessEqual(n, ANSWER, f"a repeated answer: {n} queries")

    def test_heartbeat(self) -> None:
        on_screen = self.serve(self.client)
        for data in ({"item": on_screen.pk}, {}):  # an item page's heartbeat, and one of a page without an item
            with self.subTest(data=data):
                n, response = self.count(lambda data=data: self.client.post(self.url("study_heartbeat"), data))
                self.assertEqual(response.status_code, 200)
                self.assertLessEqual(n, HEARTBEAT)

    def test_the_next_item_redirect(self) -> None:
        n, response = self.count(lambda: self.client.get(self.url("study_next_item")))
        self.assertEqual(response.status_code, 302)
        self.assertLessEqual(n, ITEM_PAGE)

    def test_an_expired_lease_still_costs_no_more_than_the_budget_allows_twice(self) -> None:
        # the rare path (room re-checked, items renewed or replaced under locks) is allowed more
        assignment = self.serve(self.client)
        Assignment.objects.filter(annotator=self.alice).update(lease_expires_at=NOW)  # long ago
        n, response = self.count(lambda: self.client.get(self.url("study_item", assignment.pk)))
        self.assertEqual(response.status_code, 200)
        self.assertLessEqual(n, 2 * ITEM_PAGE)

    def test_the_room_is_checked_once_per_arrival(self) -> None:
        client = self.fresh_client()
        with mock.patch("studyapp.services.participation.allocation.newcomer_room", wraps=allocation.newcomer_room) as check:
            client.get(self.entry(PROLIFIC_PID="carol", STUDY_ID="toy", SESSION_ID="s-carol"))
            client.get(self.url("study_consent"))
            client.post(self.url("study_consent"), {"agree": "on", "version": self.study.consent_version})
        self.assertEqual(check.call_count, 1)
        self.assertEqual(Annotator.objects.get(external_id="carol").status, Annotator.Status.ACTIVE)

    def test_the_room_check_is_one_query(self) -> None:
        n, room = self.count(lambda: allocation.newcomer_room(self.study))
        self.assertEqual(n, 1)
        # the same figure by hand: per (topic, pair) the level with more presentations under k
        counts = allocation.live_counts(self.study, timezone.now())
        per_group: dict[tuple, Counter] = {}
        for p in Presentation.objects.filter(study=self.study):
            if counts.get(p.pk, 0) < self.study.annotators_per_presentation:
                per_group.setdefault(p.group, Counter())[p.level] += 1
        self.assertEqual(room, (sum(max(c.values()) for c in per_group.values()), 0))
        self.assertGreater(room[0], 0)


def _synthetic_collection(name: str, topics: int) -> None:
    """``topics`` topics with 3 subtopics each, 4 runs ranking the same 10 documents differently."""
    folder = Path(tempfile.mkdtemp(prefix="studyapp-budget-"))
    qrels = "".join(f"{t} {s} t{t}-d{d} {int(d % 3 == s - 1)}\n" for t in range(1, topics + 1) for s in (1, 2, 3) for d in range(10))
    (folder / "qrels.txt").write_text(qrels)
    runs = []
    for r in range(4):
        order = random.Random(r).sample(range(10), 10)
        lines = "".join(f"{t} Q0 t{t}-d{d} {rank} {20 - rank} run{r}\n" for t in range(1, topics + 1) for rank, d in enumerate(order, 1))
        (folder / f"run{r}.run").write_text(lines)
        runs.append(folder / f"run{r}.run")
    import_collection(name, qrels=folder / "qrels.txt", runs=runs)


@override_settings(STUDYAPP_ROOM_CHECK_SECONDS=0)  # every arrival asks the database for the room (the query whose cost is compared)
class AdmissionCostTest(AnnotatorTestCase):
    """An arrival (entry, consent page, consent) on a study and on one ten times larger: the same queries."""

    def arrival_queries(self, slug: str, pid: str) -> list[int]:
        self.slug = slug
        client = self.fresh_client()
        counts = []
        for request in (
            lambda: client.get(self.entry(PROLIFIC_PID=pid, STUDY_ID="x", SESSION_ID=f"s-{pid}")),
            lambda: client.get(self.url("study_consent")),
            lambda: client.post(self.url("study_consent"), {"agree": "on", "version": "1"}),
        ):
            with CaptureQueriesContext(connection) as queries:
                response = request()
            self.assertIn(response.status_code, (200, 302))
            counts.append(len(queries))
        self.assertEqual(Annotator.objects.get(external_id=pid).status, Annotator.Status.ACTIVE)
        return counts

    def test_a_study_ten_times_larger_costs_an_arrival_the_same_queries(self) -> None:
        config = {"runs": ["run0", "run1", "run2", "run3"], "annotators_per_presentation": 3, "items_per_annotator": 10, "check_share": 0.1}
        sizes = {}
        for name, topics in (("small", 2), ("large", 20)):
            _synthetic_collection(name, topics)
            study = create_study(name, f"{name} study", parse_config(config)).study
            sizes[name] = Presentation.objects.filter(study=study).count()
            costs = [self.arrival_queries(study.slug, f"{name}-{i}") for i in range(3)]
            self.assertEqual(costs[1], costs[2])  # the first arrival may differ (nothing answered yet): compare later ones
            sizes[name, "queries"] = costs[2]
        self.assertEqual(sizes["large"], 10 * sizes["small"])
        self.assertEqual(sizes["small", "queries"], sizes["large", "queries"])


class RoomCheckAgreesWithAdmissionTest(BaseTestCase):
    """The one-query room check says yes exactly when admission finds a full quota (the simulation agrees)."""

    def test_random_histories(self) -> None:
        for quota, both, checks in ((5, False, 0.0), (6, True, 0.0), (9, False, 0.0), (7, False, 0.3), (12, False, 0.0)):
            with self.subTest(quota=quota, both=both, checks=checks):
                study = make_toy_study(f"R{quota}{both}{checks}", items_per_annotator=quota, same_pair_both_levels=both, check_share=checks)
                rng = random.Random(quota)
                now = NOW
                for n in range(40):
                    expected = allocation.capacity(study, now=now).newcomers > 0
                    self.assertEqual(allocation.can_admit(study, now=now), expected, f"arrival {n}")
                    annotator = allocation.register(study, external_id=f"a{n}", now=now)
                    try:
                        allocation.admit(annotator, now=now, rng=rng)
                    except StudyFull:
                        self.assertFalse(expected)
                        break
                    self.assertTrue(expected)
                    action = rng.random()
                    if action < 0.5:
                        self.answer_all(annotator, now=now)
                    elif action < 0.7:
                        Annotator.objects.filter(pk=annotator.pk).update(status=Annotator.Status.EXCLUDED)
                    # else: walks away; the lease runs out later
                    now += timedelta(minutes=rng.choice([1, 4, 11]))
                else:
                    self.fail("the study never filled up")
