"""``/s/<slug>/practice/``: one practice item on the real item layout, then feedback on the answer."""

from __future__ import annotations

from studyapp.models import Annotator
from studyapp.services.participation.onboarding import PRACTICE_GOOD, practice_feedback, practice_item
from tests.studyapp.annotator_base import AnnotatorTestCase


class PracticeTestCase(AnnotatorTestCase):
    def setUp(self) -> None:
        super().setUp()
        self.carol_client = self.fresh_client()
        self.carol = self.consent(self.carol_client, "carol")
        self.carol_client.post(self.url("study_instructions"))
        self.good_left = practice_item(self.carol.token).good_on_left
        self.good_value = -3 if self.good_left else 3

    def test_it_shows_a_practice_item_with_the_scale(self) -> None:
        response = self.carol_client.get(self.url("study_practice"))
        self.assertContains(response, "A practice item")
        self.assertContains(response, "java")
        self.assertContains(response, PRACTICE_GOOD[0].title)
        self.assertContains(response, 'type="radio" name="value"', count=9)
        self.assertNotContains(response, "checked")
        self.assertContains(response, 'data-mode="practice"')

    def test_a_good_answer_gets_praise_and_leads_on(self) -> None:
        response = self.carol_client.post(self.url("study_practice"), {"value": self.good_value})
        self.assertRedirects(response, self.url("study_practice"), fetch_redirect_response=False)
        page = self.carol_client.get(self.url("study_practice"))
        self.assertContains(page, "Well done")
        self.assertContains(page, f'href="{self.url("study_comprehension")}"')
        self.carol.refresh_from_db()
        self.assertEqual(self.carol.practice_value, self.good_value)

    def test_a_wrong_answer_is_explained_and_the_first_answer_counts(self) -> None:
        self.carol_client.post(self.url("study_practice"), {"value": -self.good_value})
        self.carol_client.post(self.url("study_practice"), {"value": self.good_value})
        page = self.carol_client.get(self.url("study_practice"))
        self.assertContains(page, "Look again: the")
        self.carol.refresh_from_db()
        self.assertEqual(self.carol.practice_value, -self.good_value)

    def test_feedback_verdicts(self) -> None:
        self.assertEqual(practice_feedback(-4, good_on_left=True).verdict, "good")
        self.assertEqual(practice_feedback(-1, good_on_left=True).verdict, "weak")
        self.assertEqual(practice_feedback(0, good_on_left=True).verdict, "wrong")
        self.assertEqual(practice_feedback(2, good_on_left=False).verdict, "good")
        self.assertEqual(practice_feedback(-2, good_on_left=False).verdict, "wrong")

    def test_the_better_page_is_on_either_side_depending_on_the_annotator(self) -> None:
        sides = {practice_item(a.token).good_on_left for a in [Annotator(token=f"token-{n}") for n in range(20)]}
        self.assertEqual(sides, {True, False})
        self.assertEqual(practice_item(self.carol.token), practice_item(self.carol.token))

    def test_an_answer_off_the_scale_is_refused(self) -> None:
        response = self.carol_client.post(self.url("study_practice"), {"value": 7})
        self.assertContains(response, "Please choose a point on the scale", status_code=400)
        self.carol.refresh_from_db()
        self.assertIsNone(self.carol.practice_value)

    def test_it_requires_a_csrf_token(self) -> None:
        client = self.fresh_client(enforce_csrf_checks=True)
        client.get(self.entry(PROLIFIC_PID="carol", SESSION_ID="s-carol"))
        self.assertEqual(client.post(self.url("study_practice"), {"value": 1}).status_code, 403)


class PracticeListsTests(AnnotatorTestCase):
    """The practice item's two result lists are fixed texts: drawn once per process, side and language."""

    def test_the_lists_are_drawn_once_per_side_and_language_and_afresh_with_debug(self) -> None:
        from unittest import mock

        from studyapp.services.participation import item_page
        from studyapp.services.participation.onboarding import PRACTICE_BAD, practice_item_with

        item_page._practice_pages.cache_clear()
        self.addCleanup(item_page._practice_pages.cache_clear)
        with self.settings(DEBUG=False), mock.patch.object(item_page, "render_to_string", wraps=item_page.render_to_string) as draw:
            left, right = item_page.practice_pages(practice_item_with(True))
            again = item_page.practice_pages(practice_item_with(True))
            swapped = item_page.practice_pages(practice_item_with(False))
        self.assertEqual(draw.call_count, 4)  # two lists for each side of the good page, none for the page again
        self.assertEqual(again, (left, right))
        self.assertEqual(left.results[0].title, PRACTICE_GOOD[0].title)
        self.assertEqual(right.results[0].title, PRACTICE_BAD[0].title)
        self.assertEqual(swapped[0].results[0].title, PRACTICE_BAD[0].title)
        self.assertEqual(swapped[1].results[0].title, PRACTICE_GOOD[0].title)
        with self.settings(DEBUG=True), mock.patch.object(item_page, "render_to_string", wraps=item_page.render_to_string) as draw:
            item_page.practice_pages(practice_item_with(True))
        self.assertEqual(draw.call_count, 2)
