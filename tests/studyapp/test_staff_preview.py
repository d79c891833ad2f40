"""The staff preview (/staff/<slug>/preview/): the whole participant flow on the real pages and items, a
preview banner on each page, nothing stored that counts, and only for the study's team."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.test import Client
from django.urls import reverse
from django.utils import translation

from studyapp.models import Annotator, Assignment, Consent, Preference, QualityDecision, Study
from studyapp.services.access.teams import set_team
from studyapp.services.participation import staff_preview
from studyapp.services.participation.onboarding import COMPREHENSION
from tests.studyapp.base import BaseTestCase

RIGHT = {q.key: q.correct for q in COMPREHENSION}
WRONG = {q.key: next(v for v, _ in q.options if v != q.correct) for q in COMPREHENSION}
JSON = {"HTTP_ACCEPT": "application/json"}
BANNER = "data-preview-banner"


def counts() -> dict[str, int]:
    """What a preview must not change: answers, leases, annotators (and so payments rows), consents, quality decisions."""
    models = {"Preference": Preference, "Assignment": Assignment, "Annotator": Annotator, "Consent": Consent}
    return {name: model.objects.count() for name, model in {**models, "QualityDecision": QualityDecision}.items()}


class StaffPreviewTest(BaseTestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        super().setUpTestData()
        User = get_user_model()
        cls.member = User.objects.create_user("member", password="pw-membermember", is_staff=True)
        cls.outsider = User.objects.create_user("outsider", password="pw-outsideroutsider", is_staff=True)
        set_team(cls.study, "member", ["member"])

    def setUp(self) -> None:
        super().setUp()
        self.client = Client()
        self.client.force_login(self.member)
        self.slug = self.study.slug

    def url(self, name: str) -> str:
        return reverse(name, args=[self.slug])

    def page(self, url: str, *, post: dict | None = None, status: int = 200, **extra):
        """GET (or POST) ``url``, follow redirects, check the final page is a preview page, return it."""
        response = self.client.post(url, post, follow=True, **extra) if post is not None else self.client.get(url, follow=True)
        self.assertEqual(response.status_code, status, url)
        self.assertContains(response, BANNER, status_code=status)
        self.pages += 1
        return response

    def walk(self) -> list[str]:
        """Consent -> instructions -> practice (+ feedback) -> check -> every item -> completion; the pages' data-page names."""
        self.pages = 0
        seen = []
        r = self.page(self.url("staff_preview"))
        seen.append(r.context["request"].path)
        self.assertContains(r, 'data-page="consent"')
        self.assertContains(r, "Preview")
        r = self.page(self.url("staff_preview_consent"), post={"agree": "on", "version": self.study.consent_version})
        self.assertContains(r, 'data-page="instructions"')
        r = self.page(self.url("staff_preview_instructions"), post={})
        self.assertContains(r, 'data-page="practice"')
        r = self.page(self.url("staff_preview_practice"), post={"value": "-3"})
        self.assertContains(r, 'data-page="practice-feedback"')
        self.assertContains(r, f'href="{self.url("staff_preview_check")}"')  # the feedback's Continue stays in the preview
        r = self.page(self.url("staff_preview_check"), post=WRONG)
        self.assertContains(r, "Attempt 2 of 2")
        r = self.page(self.url("staff_preview_check"), post=RIGHT)
        quota = self.study.items_per_annotator
        shown = set()
        for number in range(1, quota + 1):
            self.assertContains(r, f"Item {number} / {quota}")
            self.assertContains(r, 'data-mode="item"')
            shown.add(r.context["page"].assignment.presentation_id)
            self.assertIsNone(r.context["page"].assignment.pk)  # built without a stored assignment
            answer = self.client.post(self.url("staff_preview_item"), {"value": "1", "request_id": "r" * 32}, **JSON)
            self.assertEqual(answer.status_code, 200)
            data = answer.json()
            self.assertFalse(data["stored"])
            self.assertEqual(data["finished"], number == quota)
            r = self.page(data["next"])
        self.assertEqual(len(shown), quota)
        self.assertTrue(shown <= set(self.study.presentations.values_list("pk", flat=True)))
        self.assertContains(r, 'data-page="done"')
        self.assertContains(r, self.study.completion_code)
        return seen

    def test_the_whole_flow_stores_nothing_that_counts_and_every_page_says_preview(self) -> None:
        cache.clear()
        before = counts()
        study_before = Study.objects.values().get(pk=self.study.pk)
        self.walk()
        self.assertEqual(self.pages, 6 + self.study.items_per_annotator)  # consent, instructions, practice, feedback, 2 checks, items, done
        self.assertEqual(counts(), before)
        self.assertEqual(Study.objects.values().get(pk=self.study.pk), study_before)
        self.walk()  # again from the start: a fresh walk-through
        self.assertEqual(counts(), before)

    def test_the_pages_keep_their_order(self) -> None:
        self.client.get(self.url("staff_preview"))
        response = self.client.get(self.url("staff_preview_item"))
        self.assertRedirects(response, self.url("staff_preview_consent"))
        self.assertEqual(self.client.post(self.url("staff_preview_item"), {"value": "1"}).status_code, 302)
        fresh = Client()
        fresh.force_login(self.member)
        self.assertRedirects(fresh.get(self.url("staff_preview_check")), self.url("staff_preview"), target_status_code=302)

    def test_bad_input_is_refused_as_a_participant_sees_it(self) -> None:
        self.client.get(self.url("staff_preview"))
        r = self.client.post(self.url("staff_preview_consent"), {"version": self.study.consent_version})
        self.assertEqual(r.status_code, 400)
        self.assertContains(r, BANNER, status_code=400)
        self.client.post(self.url("staff_preview_consent"), {"agree": "on", "version": self.study.consent_version})
        self.client.post(self.url("staff_preview_instructions"))
        r = self.client.post(self.url("staff_preview_practice"), {"value": "9"})
        self.assertEqual(r.status_code, 400)
        self.client.post(self.url("staff_preview_practice"), {"value": "2"})
        self.client.post(self.url("staff_preview_check"), RIGHT)
        r = self.client.post(self.url("staff_preview_item"), {"value": "7"}, **JSON)
        self.assertEqual(r.status_code, 400)
        self.assertEqual(r.json()["error"], "invalid")

    def test_two_failed_checks_show_the_screened_page(self) -> None:
        self.client.get(self.url("staff_preview"))
        self.client.post(self.url("staff_preview_consent"), {"agree": "on", "version": self.study.consent_version})
        self.client.post(self.url("staff_preview_instructions"))
        self.client.post(self.url("staff_preview_practice"), {"value": "2"})
        self.client.post(self.url("staff_preview_check"), WRONG)
        r = self.client.post(self.url("staff_preview_check"), WRONG, follow=True)
        self.assertContains(r, 'data-page="screened"')
        self.assertContains(r, BANNER)

    def test_non_members_get_403_and_anonymous_visitors_the_sign_in(self) -> None:
        outsider = Client()
        outsider.force_login(self.outsider)
        for name in ("staff_preview", "staff_preview_consent", "staff_preview_item", "staff_preview_done"):
            self.assertEqual(outsider.get(self.url(name)).status_code, 403, name)
            self.assertIn("/admin/login/", Client().get(self.url(name))["Location"])
        self.assertEqual(outsider.post(self.url("staff_preview_item"), {"value": "1"}).status_code, 403)

    def test_the_banner_is_in_the_study_language(self) -> None:
        Study.objects.filter(pk=self.study.pk).update(language="ja")
        r = self.client.get(self.url("staff_preview"), follow=True)
        with translation.override("ja"):
            self.assertContains(r, translation.gettext("Preview"))
        self.assertContains(r, "プレビュー")

    def test_the_study_and_setup_pages_link_the_preview(self) -> None:
        for name in ("staff_study", "staff_study_setup"):
            self.assertContains(self.client.get(self.url(name)), f'href="{self.url("staff_preview")}"')

    def test_preview_items_alternate_sides_and_respect_the_quota(self) -> None:
        items = staff_preview.preview_items(self.study)
        self.assertEqual(len(items), self.study.items_per_annotator)
        self.assertEqual([side for _, side in items], [i % 2 == 0 for i in range(len(items))])
