"""The admin: every model's list and change pages load for staff, and studies are created from a JSON
configuration through the same service as ``create_study``. Plus the landing page."""

from __future__ import annotations

import json

from django.apps import apps
from django.contrib.auth import get_user_model
from django.urls import reverse

from studyapp.models import Presentation, Study
from studyapp.services import flow
from tests.studyapp.base import TOY_CONFIG, BaseTestCase


class AdminTestCase(BaseTestCase):
    def setUp(self) -> None:
        super().setUp()
        self.staff = get_user_model().objects.create_superuser("staff", "staff@example.org", "pw-for-tests")
        self.client.force_login(self.staff)
        alice = self.arrive("alice")
        flow.give_consent(self.study, alice, flow.Arrival(), self.study.consent_version, now=self.now)
        self.answer_all(alice)

    def test_every_model_has_a_working_list_and_change_page(self) -> None:
        for model in apps.get_app_config("studyapp").get_models():
            name = model._meta.model_name
            with self.subTest(model=name):
                response = self.client.get(reverse(f"admin:studyapp_{name}_changelist"))
                self.assertEqual(response.status_code, 200)
                obj = model.objects.first()
                self.assertIsNotNone(obj)
                self.assertEqual(self.client.get(reverse(f"admin:studyapp_{name}_change", args=[obj.pk])).status_code, 200)

    def test_list_search_and_filters(self) -> None:
        url = reverse("admin:studyapp_document_changelist")
        response = self.client.get(url, {"q": "Jaguar facts"})
        self.assertContains(response, "t1-d1")
        self.assertNotContains(response, "t2-d3")
        response = self.client.get(reverse("admin:studyapp_presentation_changelist"), {"level__exact": "topic"})
        self.assertContains(response, "6 presentations")

    def test_it_creates_a_study_from_a_configuration(self) -> None:
        url = reverse("admin:studyapp_study_add")
        self.assertContains(self.client.get(url), "Create a study")
        response = self.client.post(
            url, {"collection": self.collection.pk, "name": "Admin study", "config": json.dumps({**TOY_CONFIG, "levels": ["topic"]})}
        )
        study = Study.objects.get(name="Admin study")
        self.assertRedirects(response, reverse("admin:studyapp_study_change", args=[study.pk]), fetch_redirect_response=False)
        self.assertEqual(Presentation.objects.filter(study=study).count(), 6)
        self.assertContains(self.client.get(response.url), "6 topic-level + 0 subtopic-level = 6")

    def test_a_bad_configuration_is_shown_with_its_reasons(self) -> None:
        url = reverse("admin:studyapp_study_add")
        response = self.client.post(
            url,
            {"collection": self.collection.pk, "name": "Bad", "config": json.dumps({**TOY_CONFIG, "runs": ["alpha", "zulu"], "depth": 0})},
        )
        self.assertContains(response, "depth must be between 1 and 100")
        response = self.client.post(
            url, {"collection": self.collection.pk, "name": "Bad", "config": json.dumps({**TOY_CONFIG, "runs": ["alpha", "zulu"]})}
        )
        self.assertContains(response, "unknown run(s) zulu")
        response = self.client.post(url, {"collection": self.collection.pk, "name": "Bad", "config": "{not json"})
        self.assertContains(response, "invalid JSON at line 1")
        self.assertFalse(Study.objects.filter(name="Bad").exists())

    def test_design_fields_are_read_only_after_creation(self) -> None:
        response = self.client.get(reverse("admin:studyapp_study_change", args=[self.study.pk]))
        self.assertNotContains(response, 'name="depth"')
        self.assertContains(response, 'name="status"')

    def test_the_home_page_links_the_demo_study_and_the_admin(self) -> None:
        self.client.logout()
        response = self.client.get(reverse("home"))
        self.assertContains(response, reverse("admin:index"))
        self.assertNotContains(response, "Try the demo study")  # no demo loaded in this test
