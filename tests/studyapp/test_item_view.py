"""``/s/<slug>/item/`` and ``/s/<slug>/item/<id>/``: what an item page shows, to whom, in which order, and its weight."""

from __future__ import annotations

import re
from datetime import timedelta

from django.contrib.staticfiles import finders
from django.utils import timezone

from studyapp.models import Assignment, Document, Presentation, RankedItem, StudySubtopic, Topic
from studyapp.services.collections import display_cache
from studyapp.services.participation.item_page import LINK_MAX, SNIPPET_MAX, TITLE_MAX, display_url, item_page, results, shorten
from tests.studyapp.annotator_base import AnnotatorTestCase

PAGE_BUDGET = 60 * 1024  # bytes: the item page with its stylesheet and script


class ItemTestCase(AnnotatorTestCase):
    def test_the_next_item_address_leads_to_the_current_item(self) -> None:
        response = self.client.get(self.url("study_next_item"))
        first = self.alice.assignments.order_by("position").first()
        self.assertRedirects(response, self.url("study_item", first.pk), fetch_redirect_response=False)

    def test_it_shows_the_query_two_result_pages_and_the_scale(self) -> None:
        assignment = self.serve(self.client)
        response = self.client.get(self.url("study_item", assignment.pk))
        p = assignment.presentation
        self.assertContains(response, p.topic.query)
        self.assertContains(response, "Left / A")
        self.assertContains(response, "Right / B")
        self.assertContains(response, "Item 1 / 6")
        self.assertContains(response, '<progress aria-labelledby="progress-label" max="6" value="0">')
        self.assertContains(response, 'type="radio" name="value"', count=9)
        self.assertNotContains(response, "checked")
        # enabled: the form works without the script
        self.assertContains(response, '<button type="submit" class="button primary">Submit answer</button>')
        # every point named in words: the side (for screen readers; shown on phones) and the strength
        for side, word in (("Left", "much better"), ("Left", "slightly better"), ("Right", "better"), ("Right", "much better")):
            self.assertContains(response, f'<span class="side">{side} </span><span class="word">{word}</span>')
        self.assertContains(response, '<span class="text"><span class="word">About the same</span></span>')
        for value, sentence in ((-2, "Left is somewhat better"), (0, "Both are about the same"), (4, "Right is much better")):
            self.assertContains(response, f'<span data-for="{value}">{sentence}</span>')  # the choice echoed in words
        self.assertContains(response, f'data-assignment="{assignment.pk}"')
        self.assertContains(response, 'name="request_id"')
        self.assertContains(response, "csrfmiddlewaretoken")
        self.assertEqual(response["Cache-Control"], "max-age=0, no-cache, no-store, must-revalidate, private")

    def test_result_pages_have_equal_depth_and_safe_links(self) -> None:
        assignment = self.serve(self.client)
        html = self.client.get(self.url("study_item", assignment.pk)).content.decode()
        left, right = html.split('class="serp serp-right"')
        self.assertEqual(left.count('class="result"'), right.count('class="result"'))
        links = re.findall(r"<a [^>]*class=\"title\"[^>]*>", html)
        self.assertTrue(links)
        for link in links:
            self.assertIn('target="_blank"', link)
            self.assertIn('rel="noopener noreferrer"', link)

    def test_the_sides_follow_the_assignment(self) -> None:
        assignment = self.serve(self.client)
        page = item_page(assignment, self.study, 1, 6)
        a, b = assignment.presentation.documents("a"), assignment.presentation.documents("b")
        shown_left = [r.title for r in page.left]
        expected = a if assignment.a_on_left else b
        self.assertEqual(shown_left, [d.display_title for d in expected])

    def shown(self, level: str) -> Assignment:
        """An (unsaved) assignment of a topic-1 presentation at ``level``, run_a on the left."""
        presentation = Presentation.objects.filter(study=self.study, level=level, topic__topic_id="1").order_by("id").first()
        return Assignment(presentation=presentation, a_on_left=True)

    def test_topic_level_shows_every_kept_subtopic_without_weights(self) -> None:
        page = item_page(self.shown("topic"), self.study, 1, 6)
        self.assertEqual(page.needs, ["the animal", "the car"])
        self.assertEqual(page.query, "jaguar")
        weights = StudySubtopic.objects.filter(study_topic__study=self.study).values_list("weight", flat=True)
        self.assertTrue(all(f"{w:g}" not in " ".join(page.needs) for w in weights))

    def test_subtopic_level_shows_only_that_subtopic(self) -> None:
        assignment = self.shown("subtopic")
        page = item_page(assignment, self.study, 1, 6)
        self.assertEqual(page.needs, [assignment.presentation.subtopic.text])

    def test_collection_text_is_escaped(self) -> None:
        Document.objects.update(title="<b>bold</b> & co", snippet="<script>alert('x')</script><img src=x onerror=alert(1)>")
        Topic.objects.update(query="<i>query</i>")
        assignment = self.serve(self.client)
        response = self.client.get(self.url("study_item", assignment.pk))
        self.assertContains(response, "&lt;b&gt;bold&lt;/b&gt; &amp; co")
        self.assertContains(response, "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;")
        self.assertContains(response, "&lt;i&gt;query&lt;/i&gt;")
        self.assertNotContains(response, "<script>alert")
        self.assertNotContains(response, "<img src=x")

    def test_a_reload_shows_the_same_item_with_the_same_sides_and_keeps_the_first_serve_time(self) -> None:
        assignment = self.serve(self.client)
        served = Assignment.objects.get(pk=assignment.pk).served_at
        first = self.client.get(self.url("study_item", assignment.pk)).content
        again = self.client.get(self.url("study_item", assignment.pk)).content
        strip = re.compile(rb'(value="[0-9a-f]{32}"|name="csrfmiddlewaretoken" value="[^"]+")')
        self.assertEqual(strip.sub(b"", first), strip.sub(b"", again))
        self.assertEqual(Assignment.objects.get(pk=assignment.pk).served_at, served)

    def test_a_reload_renews_the_lease_of_the_item_on_screen_only(self) -> None:
        on_screen = self.serve(self.client)
        soon = timezone.now() + timedelta(minutes=2)
        Assignment.objects.update(lease_expires_at=soon)
        for _ in range(3):  # reloading the page (a script could do it every minute) keeps no other item
            self.assertEqual(self.client.get(self.url("study_item", on_screen.pk)).status_code, 200)
            self.assertEqual(self.client.get(self.url("study_next_item")).status_code, 302)
        leases = dict(Assignment.objects.filter(annotator=self.alice).values_list("pk", "lease_expires_at"))
        self.assertGreater(leases.pop(on_screen.pk), soon + timedelta(minutes=self.study.lease_minutes - 3))
        self.assertEqual(set(leases.values()), {soon})  # her other items were not extended
        self.assertEqual(set(Assignment.objects.filter(annotator=self.bob).values_list("lease_expires_at", flat=True)), {soon})
        self.alice.refresh_from_db()
        self.assertGreater(self.alice.last_seen_at, timezone.now() - timedelta(minutes=1))  # still seen
        self.answer(self.client, on_screen)  # progress: her remaining items are kept again
        self.assertTrue(
            all(lease > soon for lease in Assignment.objects.filter(annotator=self.alice).values_list("lease_expires_at", flat=True))
        )

    def test_another_annotators_item_is_a_404(self) -> None:
        bobs = self.serve(self.bob_client)
        response = self.client.get(self.url("study_item", bobs.pk))
        self.assertContains(response, "Page not found", status_code=404)
        self.assertContains(self.client.get(self.url("study_item", 999999)), "Page not found", status_code=404)

    def test_an_answered_or_later_item_redirects_to_the_current_one(self) -> None:
        first = self.serve(self.client)
        later = self.alice.assignments.order_by("-position").first()
        self.assertRedirects(
            self.client.get(self.url("study_item", later.pk)), self.url("study_item", first.pk), fetch_redirect_response=False
        )
        self.answer(self.client, first)
        second = self.serve(self.client)
        self.assertRedirects(
            self.client.get(self.url("study_item", first.pk)), self.url("study_item", second.pk), fetch_redirect_response=False
        )

    def test_without_a_session_it_asks_to_open_the_link_again(self) -> None:
        first = self.alice.assignments.order_by("position").first()
        response = self.fresh_client().get(self.url("study_item", first.pk))
        self.assertContains(response, "Your session has ended", status_code=403)

    def page_weight(self, assignment: Assignment) -> tuple[str, int]:
        """The item page's HTML and its weight in bytes with its own stylesheet and script."""
        html = self.client.get(self.url("study_item", assignment.pk)).content.decode()
        assets = re.findall(r'<(?:script|link)[^>]*(?:src|href)="([^"]+)"', html)
        self.assertEqual(
            sorted(assets), ["/static/studyapp/annotator.css", "/static/studyapp/annotator.js", "/static/studyapp/site.css", "data:,"]
        )
        size = len(html.encode()) + sum(
            len(open(finders.find(a.removeprefix("/static/")), "rb").read()) for a in assets if a.startswith("/static/")
        )
        return html, size

    def deepen(self, presentation: Presentation, depth: int) -> None:
        """Give both runs of ``presentation`` ``depth`` results for its topic (the toy runs have 6)."""
        for run in (presentation.run_a, presentation.run_b):
            have = RankedItem.objects.filter(run=run, topic=presentation.topic).count()
            for rank in range(have + 1, depth + 1):
                doc = Document.objects.create(collection=self.collection, docid=f"extra-{run.name}-{rank}")
                RankedItem.objects.create(run=run, topic=presentation.topic, rank=rank, document=doc)

    def test_the_page_is_self_contained_and_under_60_kb(self) -> None:
        Document.objects.update(snippet="x" * 300, title="A long title of a search result " * 3, url="https://example.org/" + "p/" * 40)
        _, size = self.page_weight(self.serve(self.client))
        self.assertLess(size, PAGE_BUDGET)

    def test_depth_10_with_huge_titles_snippets_and_urls_stays_under_60_kb(self) -> None:
        assignment = self.serve(self.client)
        self.deepen(assignment.presentation, 10)
        words = "Lorem <b>ipsum</b> dolor & sit amet, consectetur adipiscing elit. "
        Document.objects.update(title=words * 100, snippet=words * 1000, url="https://example.org/" + "p/" * 5000)
        display_cache.clear_all()  # serve() drew the page before the edit
        html, size = self.page_weight(assignment)
        self.assertEqual(html.count('<p class="snippet">'), 20)  # 10 results on each side
        self.assertLess(size, PAGE_BUDGET)
        self.assertNotIn(words * 10, html.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&"))
        self.assertIn("\u2026", html)
        self.assertNotIn('href="https://example.org/p/p/', html)  # too long to link: the title is plain text

    def test_titles_and_snippets_are_capped_with_an_ellipsis(self) -> None:
        assignment = self.serve(self.client)
        Document.objects.update(title="T" * 1000, snippet="word " * 1000)
        Document.objects.filter(pk=assignment.presentation.documents("a")[0].pk).update(title="Short title", snippet="Short.")
        display_cache.clear_all()  # serve() drew the page before the edit
        page = item_page(Assignment.objects.select_related("presentation").get(pk=assignment.pk), self.study, 1, 6)
        a_side = page.left if assignment.a_on_left else page.right
        self.assertEqual((a_side.results[0].title, a_side.results[0].snippet), ("Short title", "Short."))  # short texts are untouched
        for result in [*page.left, *page.right][1:]:
            if result.title != "Short title":
                self.assertEqual(len(result.title), TITLE_MAX)
                self.assertTrue(result.title.endswith("\u2026"))
                self.assertLessEqual(len(result.snippet), SNIPPET_MAX)
                self.assertTrue(result.snippet.endswith("word\u2026"))  # the cut drops the trailing space

    def test_shorten(self) -> None:
        self.assertEqual(shorten("abc", 3), "abc")
        self.assertEqual(shorten("abcd", 3), "ab\u2026")
        self.assertEqual(shorten("ab  cd", 4), "ab\u2026")
        self.assertEqual(shorten("", 3), "")

    def test_only_links_of_a_sane_length_are_linked(self) -> None:
        base = "https://example.org/"
        fits, too_long = Document(url=base + "x" * (LINK_MAX - len(base))), Document(url=base + "x" * (LINK_MAX + 1 - len(base)))
        self.assertEqual([r.url for r in results([fits, too_long])], [fits.url, ""])
        self.assertEqual(results([too_long])[0].display_url, display_url(too_long.url))  # still shown, shortened

    def test_a_malformed_stored_url_is_plain_text_and_never_breaks_the_page(self) -> None:
        assignment = self.serve(self.client)
        docs = assignment.presentation.documents("a")
        bad = ["http://[::1", "javascript:alert(1)", "http://example.org:99999/", "http://exa mple.org/"]
        for doc, url in zip(docs, bad):
            Document.objects.filter(pk=doc.pk).update(url=url)
        display_cache.clear_all()  # the page drawn by serve() is kept for a minute otherwise
        response = self.client.get(self.url("study_item", assignment.pk))
        self.assertEqual(response.status_code, 200)
        html = response.content.decode()
        for url in bad:
            self.assertNotIn(f'href="{url}', html)
        self.assertIn("http://[::1", html)  # shown as text
        self.assertEqual([r.url for r in results(assignment.presentation.documents("a")[:4])], ["", "", "", ""])
        self.assertEqual(display_url("http://[::1"), "http://[::1")

    def test_display_urls(self) -> None:
        self.assertEqual(display_url("https://www.example.org/a/b/"), "example.org \u203a a \u203a b")
        self.assertEqual(display_url("http://example.org"), "example.org")
        self.assertLessEqual(len(display_url("https://example.org/" + "x" * 200)), 70)
