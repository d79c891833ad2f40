"""Acceptance 2: 30 annotators arriving at once (threads, each with its own database connection) on
a small study. Runs against the configured database: SQLite by default, and PostgreSQL through
``test_postgresql.py`` (or directly with ``DATABASE_URL=postgres://...``)."""

from __future__ import annotations

import random
import threading
from collections import Counter
from datetime import timedelta

import numpy as np
from django.conf import settings
from django.db import connection, connections
from django.db.models import Count
from django.test import Client, TransactionTestCase
from django.urls import reverse

from studyapp.exceptions import AnswerConflict, StudyFull
from studyapp.models import Annotator, Assignment, Preference
from studyapp.services.analysis.adaptive import recompute
from studyapp.services.participation import allocation
from studyapp.services.participation.answers import record_answer
from tests.studyapp.base import NOW, import_toy, make_toy_study

ARRIVALS = 30


class ConcurrentArrivalsTestCase(TransactionTestCase):
    """Toy study with k = 2 and 3 items each: 18 presentations x 2 = 36 slots, room for 12 annotators."""

    def setUp(self) -> None:
        import_toy()
        self.study = make_toy_study(items_per_annotator=3)

    def arrive_and_work(self, index: int, barrier: threading.Barrier, outcomes: dict, errors: list) -> None:
        rng = random.Random(index)
        try:
            barrier.wait(timeout=60)
            annotator = allocation.register(self.study, external_id=f"worker-{index}", now=NOW)
            try:
                allocation.admit(annotator, now=NOW, rng=rng)
            except StudyFull as refusal:
                outcomes[index] = ("refused", refusal.screenout_code, annotator.pk)
                return
            answered = 0
            at = NOW
            while (item := allocation.current_assignment(annotator, now=at, rng=rng)) is not None:
                # a double click: the same answer sent twice must be stored once; another value is refused
                value = rng.randint(-4, 4)
                record_answer(item, value, request_id=f"{index}-{item.pk}", now=at + timedelta(seconds=3))
                record_answer(item, value, request_id=f"{index}-{item.pk}", now=at + timedelta(seconds=4))
                try:
                    record_answer(item, -value if value else 1, request_id=f"{index}-tab2", now=at + timedelta(seconds=4))
                    raise AssertionError("a different second answer was not refused")
                except AnswerConflict:
                    pass
                answered += 1
                at += timedelta(seconds=5)
            outcomes[index] = ("finished", answered, annotator.pk)
        except Exception as exc:  # reported by the main thread
            errors.append(f"worker {index}: {type(exc).__name__}: {exc}")
        finally:
            connections.close_all()

    def test_thirty_simultaneous_arrivals(self) -> None:
        barrier = threading.Barrier(ARRIVALS)
        outcomes: dict[int, tuple] = {}
        errors: list[str] = []
        threads = [threading.Thread(target=self.arrive_and_work, args=(i, barrier, outcomes, errors)) for i in range(ARRIVALS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=120)
        self.assertEqual(errors, [])
        self.assertEqual(len(outcomes), ARRIVALS)

        # never more than k valid answers per presentation
        per_presentation = Counter(Preference.objects.values_list("assignment__presentation_id", flat=True))
        self.assertLessEqual(max(per_presentation.values()), 2)
        # never the same presentation twice to one annotator
        pairs = list(Assignment.objects.values_list("annotator_id", "presentation_id"))
        self.assertEqual(len(pairs), len(set(pairs)))
        # each annotator: a full quota, or a clear refusal with nothing leased
        finished = [o for o in outcomes.values() if o[0] == "finished"]
        refused = [o for o in outcomes.values() if o[0] == "refused"]
        self.assertEqual(len(finished) + len(refused), ARRIVALS)
        for _, answered, pk in finished:
            self.assertEqual(answered, 3)
            self.assertEqual(Annotator.objects.get(pk=pk).status, Annotator.Status.FINISHED)
        for _, code, pk in refused:
            self.assertEqual(code, "TOYFULL")
            self.assertEqual(Annotator.objects.get(pk=pk).status, Annotator.Status.REFUSED)
            self.assertFalse(Assignment.objects.filter(annotator_id=pk).exists())
        # one answer per assignment, and the study fills up: at most one quota's worth of slots stays open
        self.assertEqual(Preference.objects.count(), 3 * len(finished))
        self.assertFalse(Assignment.objects.annotate(n=Count("preference")).filter(n__gt=1).exists())
        self.assertGreaterEqual(len(finished), 11, f"only {len(finished)} of 12 possible annotators were admitted")
        print(
            f"[{connection.vendor}] {len(finished)} annotators finished, {len(refused)} refused, {sum(per_presentation.values())} answers"
        )


class AdaptiveConcurrentArrivalsTestCase(ConcurrentArrivalsTestCase):
    """The same arrivals on an adaptive study whose first round is drawn (issue 32): the drawn groups first and each
    choice's spare rows keep every invariant under real row locks (SKIP LOCKED on PostgreSQL)."""

    def setUp(self) -> None:
        import_toy()
        self.study = make_toy_study(items_per_annotator=3, allocation="adaptive")
        self.assertIsNotNone(recompute(self.study, now=NOW, rng=np.random.default_rng(1)).drew)


class ConcurrentConsentTestCase(TransactionTestCase):
    """Issue 12: two consent posts of one browser at the same moment (a double click, two tabs, a
    script replaying the cookie) on an anonymous link made two annotators; now they make one."""

    POSTS = 3  # per round, all with the same cookie
    ROUNDS = 4

    def setUp(self) -> None:
        import_toy()
        self.study = make_toy_study(items_per_annotator=3)

    def post_consent(self, cookie: str, barrier: threading.Barrier, replies: list, errors: list) -> None:
        try:
            client = Client()
            client.cookies[settings.SESSION_COOKIE_NAME] = cookie
            barrier.wait(timeout=60)
            replies.append(client.post(reverse("study_consent", args=[self.study.slug]), {"agree": "on", "version": "1"}).status_code)
        except Exception as exc:  # reported by the main thread
            errors.append(f"{type(exc).__name__}: {exc}")
        finally:
            connections.close_all()

    def test_simultaneous_consent_posts_of_one_browser_make_one_annotator(self) -> None:
        for round_ in range(self.ROUNDS):
            browser = Client()
            self.assertEqual(browser.get(reverse("study_entry", args=[self.study.slug])).status_code, 302)  # anonymous link
            cookie = browser.cookies[settings.SESSION_COOKIE_NAME].value
            barrier = threading.Barrier(self.POSTS)
            replies: list[int] = []
            errors: list[str] = []
            threads = [threading.Thread(target=self.post_consent, args=(cookie, barrier, replies, errors)) for _ in range(self.POSTS)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(timeout=120)
            self.assertEqual(errors, [])
            self.assertEqual(replies, [302] * self.POSTS)
            self.assertEqual(Annotator.objects.count(), round_ + 1)
        for annotator in Annotator.objects.all():
            self.assertEqual(annotator.status, Annotator.Status.ACTIVE)
            self.assertEqual(annotator.assignments.count(), 3)  # one quota, leased once
            self.assertEqual(annotator.consents.count(), 1)
        print(
            f"[{connection.vendor}] {self.ROUNDS} rounds of {self.POSTS} simultaneous consent posts: {Annotator.objects.count()} annotators"
        )
