"""The admin action "Export preferences (CSV)" on studies: the command's default export as a download, staff only."""

from __future__ import annotations

import random

from django.contrib.auth import get_user_model
from django.urls import reverse

from studyapp.services.data.export import export_bytes
from tests.studyapp.base import NOW, BaseTestCase, make_toy_study
from tests.studyapp.filled import fill


class AdminExportTests(BaseTestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        super().setUpTestData()
        fill(cls.study, ["a1", "a2"], random.Random(4), NOW)
        cls.other = make_toy_study(name="Second study")
        cls.staff = get_user_model().objects.create_superuser("staff", "staff@example.org", "pw-for-tests")

    def post_action(self, *ids: int):
        data = {"action": "export_preferences_csv", "_selected_action": [str(i) for i in ids]}
        return self.client.post(reverse("admin:studyapp_study_changelist"), data)

    def test_staff_download_the_same_csv_as_the_command(self) -> None:
        self.client.force_login(self.staff)
        response = self.post_action(self.study.pk)
        self.assertEqual(response.status_code, 200)
        self.assertEqual(response["Content-Type"], "text/csv; charset=utf-8")
        self.assertEqual(response["Content-Disposition"], 'attachment; filename="toy-study-preferences.csv"')
        self.assertEqual(response.content, export_bytes(self.study, "csv")[0])
        self.assertGreater(response.content.count(b"\n"), 10)

    def test_one_study_at_a_time(self) -> None:
        self.client.force_login(self.staff)
        response = self.post_action(self.study.pk, self.other.pk)
        self.assertEqual(response.status_code, 302)
        messages = [str(m) for m in response.wsgi_request._messages]
        self.assertEqual(messages, ["Select exactly one study to export its preferences."])

    def test_refused_to_anonymous_and_non_staff(self) -> None:
        response = self.post_action(self.study.pk)
        self.assertEqual(response.status_code, 302)
        self.assertIn("/admin/login/", response["Location"])
        plain = get_user_model().objects.create_user("plain", "p@example.org", "pw-for-tests")
        self.client.force_login(plain)
        response = self.post_action(self.study.pk)
        self.assertEqual(response.status_code, 302)
        self.assertIn("/admin/login/", response["Location"])
