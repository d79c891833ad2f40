"""Item pages' per-process display caches: fresh for STUDYAPP_DISPLAY_CACHE_SECONDS, bounded, off on demand."""

from __future__ import annotations

from unittest import mock

from django.db import connection
from django.test import SimpleTestCase, override_settings
from django.test.utils import CaptureQueriesContext

from studyapp.models import Document
from studyapp.models.study import run_page
from studyapp.services.collections import display_cache
from studyapp.services.collections.display_cache import TimedCache
from studyapp.services.participation import item_page
from tests.studyapp.annotator_base import AnnotatorTestCase


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@override_settings(STUDYAPP_DISPLAY_CACHE_SECONDS=60, DEBUG=False)
class TimedCacheTests(SimpleTestCase):
    def setUp(self) -> None:
        self.clock = Clock()
        patcher = mock.patch.object(display_cache.time, "monotonic", self.clock)
        patcher.start()
        self.addCleanup(patcher.stop)
        self.calls: list[str] = []

    def compute(self, value: str):
        return lambda: self.calls.append(value) or value

    def test_a_value_is_kept_while_fresh_and_computed_again_after(self) -> None:
        cache = TimedCache(size=10)
        self.assertEqual(cache.get("k", self.compute("first")), "first")
        self.clock.now += 59.9
        self.assertEqual(cache.get("k", self.compute("second")), "first")
        self.clock.now += 0.1  # 60 s after it was computed: stale
        self.assertEqual(cache.get("k", self.compute("third")), "third")
        self.assertEqual(self.calls, ["first", "third"])

    def test_at_most_size_entries_are_kept_the_oldest_go_first(self) -> None:
        cache = TimedCache(size=2)
        for key in ("a", "b", "c"):
            cache.get(key, self.compute(key))
        self.assertEqual(len(cache), 2)
        cache.get("b", self.compute("b again"))
        cache.get("a", self.compute("a again"))  # dropped: computed again
        self.assertEqual(self.calls, ["a", "b", "c", "a again"])

    def test_zero_seconds_or_debug_turn_it_off(self) -> None:
        cache = TimedCache(size=10)
        for overrides in ({"STUDYAPP_DISPLAY_CACHE_SECONDS": 0}, {"DEBUG": True}):
            with self.subTest(**overrides), self.settings(**overrides):
                self.calls.clear()
                cache.get("k", self.compute("one"))
                cache.get("k", self.compute("two"))
                self.assertEqual(self.calls, ["one", "two"])
                self.assertEqual(len(cache), 0)

    def test_clear_all_empties_every_cache(self) -> None:
        caches = [TimedCache(size=10), TimedCache(size=10)]
        for cache in caches:
            cache.get("k", self.compute("v"))
        display_cache.clear_all()
        self.assertEqual([len(c) for c in caches], [0, 0])


@override_settings(STUDYAPP_DISPLAY_CACHE_SECONDS=60, DEBUG=False)
class ItemPageCacheTests(AnnotatorTestCase):
    def setUp(self) -> None:
        super().setUp()
        self.clock = Clock()
        patcher = mock.patch.object(display_cache.time, "monotonic", self.clock)
        patcher.start()
        self.addCleanup(patcher.stop)

    def test_an_edited_title_shows_once_the_kept_page_is_stale(self) -> None:
        assignment = self.serve(self.client)
        first = assignment.presentation.documents("a")[0]
        url = self.url("study_item", assignment.pk)
        self.assertContains(self.client.get(url), first.display_title)
        Document.objects.filter(pk=first.pk).update(title="An edited title")
        self.clock.now += 30
        self.assertNotContains(self.client.get(url), "An edited title")  # within the minute: the kept page
        self.clock.now += 31
        self.assertContains(self.client.get(url), "An edited title")
        with self.settings(STUDYAPP_DISPLAY_CACHE_SECONDS=0):
            Document.objects.filter(pk=first.pk).update(title="Edited again")
            self.assertContains(self.client.get(url), "Edited again")  # off: read every time

    def test_another_annotator_on_the_same_presentation_reads_no_display_data(self) -> None:
        assignment = self.serve(self.client)
        self.client.get(self.url("study_item", assignment.pk))
        # bob is shown the same presentation (as a second annotator of it would be)
        mine = self.serve(self.bob_client)
        type(mine).objects.filter(pk=mine.pk).update(presentation=assignment.presentation)
        with CaptureQueriesContext(connection) as queries:
            response = self.bob_client.get(self.url("study_item", mine.pk))
        self.assertEqual(response.status_code, 200)
        tables = " ".join(q["sql"] for q in queries.captured_queries)
        for table in ("studyapp_rankeditem", "studyapp_document", "studyapp_presentation", "studyapp_topic", "studyapp_subtopic"):
            self.assertNotIn(table, tables)
        self.assertEqual(
            response.content.decode().split('<div class="serps">')[1].split("</div>\n<form")[0].count('class="result"'),
            self.client.get(self.url("study_item", assignment.pk)).content.decode().count('class="result"'),
        )

    def test_a_page_without_main_texts_is_read_once_for_every_need(self) -> None:
        p = self.study.presentations.filter(kind="pair").first()
        depth = self.study.depth
        with CaptureQueriesContext(connection) as queries:
            pages = [item_page._run_page(p.topic_id, p.run_a_id, depth, "query", need) for need in ("", "need one", "need two")]
        self.assertEqual(len(queries.captured_queries), 1)  # one read, kept for the topic level and both needs
        self.assertEqual(len({id(page) for page in pages}), 1)

    def test_a_page_with_main_texts_is_drawn_per_need(self) -> None:
        p = self.study.presentations.filter(kind="pair").first()
        documents = run_page(p.topic_id, p.run_a_id, self.study.depth)
        Document.objects.filter(pk=documents[0].pk).update(text="The orange cat sat on the mat. A grey dog slept in the garden.")
        with CaptureQueriesContext(connection) as queries:
            cat = item_page._run_page(p.topic_id, p.run_a_id, self.study.depth, "", "orange cat")
            dog = item_page._run_page(p.topic_id, p.run_a_id, self.study.depth, "", "grey dog")
            again = item_page._run_page(p.topic_id, p.run_a_id, self.study.depth, "", "orange cat")
        self.assertEqual(len(queries.captured_queries), 2)  # the snippets depend on the need: one page per need
        self.assertIs(again, cat)
        self.assertIn("cat", cat.results[0].snippet)
        self.assertNotEqual(cat.results[0].snippet, dog.results[0].snippet)

    def test_a_page_read_again_after_its_minute_is_drawn_again_only_when_its_lines_changed(self) -> None:
        p = self.study.presentations.filter(kind="pair").first()
        depth = self.study.depth
        first = item_page._run_page(p.topic_id, p.run_a_id, depth, "query", "")
        self.clock.now += 61  # the kept page ran out: its lines are read again
        with (
            CaptureQueriesContext(connection) as queries,
            mock.patch.object(item_page, "render_to_string", wraps=item_page.render_to_string) as draw,
        ):
            again = item_page._run_page(p.topic_id, p.run_a_id, depth, "query", "")
        self.assertEqual(len(queries.captured_queries), 1)
        draw.assert_not_called()  # the same lines: the list drawn before
        self.assertIs(again, first)
        Document.objects.filter(pk=run_page(p.topic_id, p.run_a_id, depth)[0].pk).update(title="An edited title")
        self.clock.now += 61
        edited = item_page._run_page(p.topic_id, p.run_a_id, depth, "query", "")
        self.assertIn("An edited title", edited.html)
        self.assertNotIn("An edited title", first.html)
        with self.settings(DEBUG=True), mock.patch.object(item_page, "render_to_string", wraps=item_page.render_to_string) as draw:
            item_page._run_page(p.topic_id, p.run_a_id, depth, "query", "")
        draw.assert_called_once()  # DEBUG: drawn every time (template edits show at once)

    def test_drawn_lists_are_kept_by_their_lines_and_bounded(self) -> None:
        cache = display_cache.DrawnCache(size=2)
        drawn: list[str] = []
        for key in ("a", "b", "a", "c", "a"):
            cache.get(key, lambda key=key: drawn.append(key) or key.upper())
        # the second "a" is the one drawn before; "c" made three, so the oldest ("a") went and was drawn again
        self.assertEqual(drawn, ["a", "b", "c", "a"])
        self.assertEqual(len(cache), 2)
        cache.get("b", lambda: drawn.append("b again") or "B")
        self.assertEqual(drawn[-1], "b again")
        display_cache.clear_all()
        self.assertEqual(len(cache), 0)
