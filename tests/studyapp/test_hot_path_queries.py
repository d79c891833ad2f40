"""SQL statements of the requests every annotator sends many times (item page, heartbeat, answer) through the
whole middleware stack: what docs/benchmarks.md measures with ``benchmarks/bench_requests.py``, pinned here
so a new middleware or lookup that reads the database again on every request shows up as a failing count."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from django.db import connection
from django.test import RequestFactory, override_settings
from django.test.utils import CaptureQueriesContext

from studyapp.services.participation import sessions
from tests.studyapp.annotator_base import JSON, AnnotatorTestCase


@contextmanager
def statements(test: AnnotatorTestCase, expected: int) -> Iterator[None]:
    """Like ``assertNumQueries``, without the savepoints that the test's own transaction turns ``atomic`` blocks into."""
    with CaptureQueriesContext(connection) as captured:
        yield
    sql = [q["sql"] for q in captured.captured_queries if not q["sql"].startswith(("SAVEPOINT", "RELEASE SAVEPOINT"))]
    test.assertEqual(len(sql), expected, "\n".join(sql))


@override_settings(STUDYAPP_DISPLAY_CACHE_SECONDS=60, DEBUG=False)
class HotPathQueryTests(AnnotatorTestCase):
    def test_an_item_page_with_its_display_data_kept(self) -> None:
        assignment = self.serve(self.client)  # the first serve draws the page (display caches) and stamps served_at
        with statements(self, 2):  # the session's annotator with the study, the sequence (a reload renews no fresh lease)
            response = self.client.get(self.url("study_item", assignment.pk))
        self.assertEqual(response.status_code, 200)
        self.assertEqual(response["X-Frame-Options"], "DENY")  # the framing middleware still decided, without a query

    def test_a_heartbeat(self) -> None:
        assignment = self.serve(self.client)
        with statements(self, 2):  # the session's annotator with the study, the lease extension
            response = self.client.post(self.url("study_heartbeat"), {"item": assignment.pk}, **JSON)
        self.assertEqual(response.json()["extended"], True)

    def test_an_answer(self) -> None:
        assignment = self.serve(self.client)
        with statements(self, 3):  # the session's annotator with the study, the sequence, the answer
            response = self.answer(self.client, assignment)
        self.assertEqual(response.json()["stored"], True)

    def test_the_study_and_annotator_are_read_once_per_request(self) -> None:
        request = RequestFactory().get("/")
        request.session = {sessions.TOKENS: {str(self.study.pk): self.alice.token}}
        with self.assertNumQueries(1):
            first = sessions.resolve(request, self.slug)
            again = sessions.resolve(request, self.slug)  # as the framing middleware asks after the view
        self.assertEqual(first, (self.study, self.alice))
        self.assertIs(again[1], first[1])
        sessions.unbind(request, self.study)  # what the view did in between counts
        with self.assertNumQueries(0):
            self.assertEqual(sessions.resolve(request, self.slug), (self.study, None))
        with self.assertNumQueries(1):
            self.assertEqual(sessions.resolve(request, "no-such-study"), (None, None))


@override_settings(DEBUG=False)
class ArrivalQueryTests(AnnotatorTestCase):
    """The once-per-participant requests: the arrival and the consent (bench_requests.py's entry and consent_post).
    The suite's cache is per process (locmem); the database cache's one statement per arrival is pinned in
    test_shared_cache."""

    def test_a_newcomers_arrival(self) -> None:
        client = self.fresh_client()
        with statements(self, 3):  # the study, the platform id's annotator (none) with whether it withdrew before (no), the room
            response = client.get(self.entry(PROLIFIC_PID="carol", STUDY_ID="toy", SESSION_ID="s-carol"))
        self.assertRedirects(response, self.url("study_consent"), fetch_redirect_response=False)

    def test_a_newcomers_consent(self) -> None:
        client = self.fresh_client()
        client.get(self.entry(PROLIFIC_PID="carol", STUDY_ID="toy", SESSION_ID="s-carol"))
        with CaptureQueriesContext(connection) as captured:
            response = client.post(self.url("study_consent"), {"agree": "on", "version": self.study.consent_version})
        self.assertRedirects(response, self.url("study_instructions"), fetch_redirect_response=False)
        sql = [q["sql"].split()[0] for q in captured.captured_queries]
        # the study; the arrival's annotator (none); the annotator with its consent version and time, and its
        # consent, written without a savepoint or a look-up of a consent it cannot have; admission: the annotator locked, its history,
        # the counts, the picked presentations locked (PostgreSQL; SQLite: the study, before the annotator),
        # their counts, the items, its status; the framing middleware asks nothing (the bound annotator is known)
        self.assertEqual(
            len([s for s in sql if s not in ("SAVEPOINT", "RELEASE")]), 11, "\n".join(q["sql"] for q in captured.captured_queries)
        )
        # savepoints: the test's own transaction makes consent's transaction one, and admission's (its retry
        # when rows were locked); in production only admission's pair remains (14 statements in all)
        self.assertEqual(sql.count("SAVEPOINT"), 2)
