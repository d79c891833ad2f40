"""Staff sessions end on the server (services.access.staff_sessions): after signing out, a password change
or the staff expiry, a copy of the session cookie no longer opens staff pages; participants are unaffected."""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from studyapp.models import StaffSession
from studyapp.services.access.teams import set_team
from tests.studyapp.annotator_base import AnnotatorTestCase

PASSWORD = "a-long-staff-password-1"


class StaffSessionTest(AnnotatorTestCase):
    def setUp(self) -> None:
        super().setUp()
        self.boss = get_user_model().objects.create_user("boss", password=PASSWORD, is_staff=True)
        set_team(self.study, "boss")
        self.staff = Client()
        response = self.staff.post(reverse("admin:login"), {"username": "boss", "password": PASSWORD, "next": "/staff/"})
        self.assertEqual(response.status_code, 302)
        self.page = reverse("staff_study_payments", args=[self.slug])
        self.assertEqual(self.staff.get(self.page).status_code, 200)
        self.thief = Client()
        self.thief.cookies[settings.SESSION_COOKIE_NAME] = self.staff.cookies[settings.SESSION_COOKIE_NAME].value

    def assert_signed_out(self, client: Client) -> None:
        response = client.get(self.page)
        self.assertEqual(response.status_code, 302)
        self.assertIn("/admin/login/", response["Location"])

    def test_a_copied_cookie_works_only_until_sign_out(self) -> None:
        self.assertEqual(self.thief.get(self.page).status_code, 200)  # the copy works while the session lives ...
        self.staff.post(reverse("admin:logout"))
        self.assert_signed_out(self.thief)  # ... and not after signing out
        self.assertFalse(StaffSession.objects.filter(user=self.boss).exists())

    def test_a_password_change_ends_every_session(self) -> None:
        other = Client()
        other.force_login(self.boss)
        self.boss.set_password("another-long-password-2")
        self.boss.save()
        self.assert_signed_out(self.thief)
        self.assert_signed_out(other)
        self.assertFalse(StaffSession.objects.filter(user=self.boss).exists())

    def test_staff_sessions_expire_sooner_than_participants(self) -> None:
        self.assertLess(settings.STUDYAPP_STAFF_SESSION_SECONDS, settings.SESSION_COOKIE_AGE)
        session = StaffSession.objects.get(user=self.boss)
        self.assertAlmostEqual((session.expires_at - session.created_at).total_seconds(), settings.STUDYAPP_STAFF_SESSION_SECONDS)
        StaffSession.objects.filter(pk=session.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
        self.assert_signed_out(self.staff)

    def test_an_unrelated_last_login_update_keeps_the_session(self) -> None:
        self.boss.last_login = timezone.now()
        self.boss.save(update_fields=["last_login"])
        self.boss.first_name = "B"
        self.boss.save()
        self.assertEqual(self.staff.get(self.page).status_code, 200)

    def test_participants_need_no_server_side_session(self) -> None:
        response = self.client.get(reverse("study_next_item", args=[self.slug]), follow=True)
        self.assertContains(response, 'id="answer-scale"')
        self.assertEqual(StaffSession.objects.exclude(user=self.boss).count(), 0)
