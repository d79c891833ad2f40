"""MTurk in its frame (``services.participation.framing``): an MTurk worker's study pages may be framed by
MTurk's worker sites only, with cookies sent in that frame; every other page (a Prolific or anonymous
participant's, staff pages) still refuses framing. The whole framed flow in Chromium is
tests/browser/test_mturk_frame.py."""

from __future__ import annotations

import os
from unittest import mock
from urllib.parse import urlencode

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.test import Client, override_settings
from django.urls import reverse

from studyapp.middleware import policy
from studyapp.models import Annotator
from studyapp.services import platforms
from studyapp.services.platforms.mturk import FRAME_ANCESTORS
from studyapp.settings import env_origins
from tests.studyapp.annotator_base import AnnotatorTestCase

MTURK = {"workerId": "W1", "assignmentId": "A1", "hitId": "H1", "turkSubmitTo": "https://workersandbox.mturk.com"}
MTURK_FRAME = "frame-ancestors https://worker.mturk.com https://www.mturk.com https://workersandbox.mturk.com;"


class MTurkFrameTests(AnnotatorTestCase):
    def assert_framed(self, response) -> None:
        self.assertNotIn("X-Frame-Options", response.headers)
        self.assertIn(MTURK_FRAME, response["Content-Security-Policy"])
        self.assertNotIn("'none'; base-uri", response["Content-Security-Policy"].split("frame-ancestors")[1][:8])

    def assert_refused(self, response) -> None:
        self.assertEqual(response["X-Frame-Options"], "DENY")
        self.assertIn("frame-ancestors 'none';", response["Content-Security-Policy"])

    def test_an_mturk_worker_is_framed_by_mturk_only_from_arrival_to_the_end(self) -> None:
        client = Client()
        response = client.get(self.entry(**MTURK))
        self.assertEqual(response.status_code, 302)  # on to the consent page
        self.assert_framed(response)
        self.assertEqual(response.cookies[settings.SESSION_COOKIE_NAME]["samesite"], "None")
        response = client.get(response.url)
        self.assertEqual(response.status_code, 200)
        self.assert_framed(response)
        cookie = response.cookies[settings.CSRF_COOKIE_NAME]  # the consent form's
        self.assertEqual((cookie["samesite"], cookie["secure"]), ("None", True))
        self.assertTrue(cookie.OutputString().endswith("; Partitioned"), cookie.OutputString())  # CHIPS: kept per MTurk site
        # later pages carry no MTurk parameter: the pending arrival, then the annotator, says MTurk
        response = client.post(self.url("study_consent"), {"agree": "on", "version": self.study.consent_version})
        self.assertEqual(response.status_code, 302)
        self.assertEqual(response.cookies[settings.SESSION_COOKIE_NAME]["samesite"], "None")  # the new session key
        self.assert_framed(client.get(self.url("study_instructions")))
        self.assertEqual(Annotator.objects.get(study=self.study, external_id="W1").platform, "mturk")

    def test_the_preview_is_framed_and_stores_nothing(self) -> None:
        client = Client()
        response = client.get(self.entry(**{**MTURK, "assignmentId": "ASSIGNMENT_ID_NOT_AVAILABLE", "workerId": ""}), follow=True)
        self.assertEqual(response.status_code, 200)
        self.assert_framed(response)
        self.assertFalse(Annotator.objects.filter(study=self.study, platform="mturk").exists())

    def test_every_other_page_refuses_framing(self) -> None:
        self.assert_refused(self.client.get(self.url("study_instructions")))  # alice, a Prolific participant
        fresh = Client()
        response = fresh.get(self.entry(PROLIFIC_PID="p-frame", STUDY_ID="toy", SESSION_ID="s"))
        self.assert_refused(response)
        self.assert_refused(fresh.get(response.url))
        self.assertEqual(response.cookies[settings.SESSION_COOKIE_NAME]["samesite"], "Lax")
        self.assert_refused(Client().get(self.entry()))  # anonymous
        self.assert_refused(Client().get("/"))
        self.assert_refused(Client().get("/staff/"))
        # an MTurk worker's browser opening another study, or the staff pages, is not framed either
        worker = Client()
        worker.get(self.entry(**MTURK))
        self.assert_refused(worker.get("/"))
        self.assert_refused(worker.get(f"/staff/{self.slug}/"))
        # staff pages whose URL names start like the participant pages' (study_report...), MTurk parameters or not
        for url in (reverse("study_report", args=[self.slug]), reverse("study_report_file", args=[self.slug, "summary.csv"])):
            for query in ("", "?" + urlencode(MTURK)):
                with self.subTest(url + query):
                    self.assert_refused(worker.get(url + query))

    def test_extra_origins_come_from_the_setting_and_are_checked(self) -> None:
        with override_settings(STUDYAPP_MTURK_FRAME_ANCESTORS=("http://127.0.0.1:8123",)):
            self.assertEqual(platforms.MTURK.frame_ancestors, (*FRAME_ANCESTORS, "http://127.0.0.1:8123"))
            self.assertIn("http://127.0.0.1:8123", platforms.form_action_hosts())
            response = Client().get(self.entry(**{**MTURK, "turkSubmitTo": "http://127.0.0.1:8123"}))
            self.assertIn("https://workersandbox.mturk.com http://127.0.0.1:8123;", response["Content-Security-Policy"])
        self.assertNotIn("127.0.0.1", policy())
        self.assertEqual(platforms.MTURK.frame_ancestors, FRAME_ANCESTORS)  # production default: MTurk's sites only
        with mock.patch.dict(os.environ, {"X_ORIGINS": "http://localhost:80 https://a.example"}):
            self.assertEqual(env_origins("X_ORIGINS"), ("http://localhost:80", "https://a.example"))
        for bad in ("localhost:80", "http://a.example/path", "ftp://a.example", "*"):
            with mock.patch.dict(os.environ, {"X_ORIGINS": bad}), self.assertRaisesRegex(ImproperlyConfigured, "X_ORIGINS"):
                env_origins("X_ORIGINS")
        self.assertEqual(platforms.PROLIFIC.frame_ancestors, ())

    def test_the_setup_page_says_mturk_may_frame_mturk_studies(self) -> None:
        fields = platforms.MTURK.setup_fields(self.study, "https://study.example/s/x/", 3)
        self.assertIn("This site allows MTurk to frame MTurk studies.", fields[0].help)

    def test_a_platform_declaring_frame_ancestors_is_framed_by_its_origins_only(self) -> None:
        from studyapp.services.platforms.base import Platform

        class Kiosk(Platform):
            key, name, label, params, id_param = "kiosk", "Kiosk", "Kiosk panel", ("kid",), "kid"
            frame_ancestors = ("https://kiosk.example",)

        platforms.register(Kiosk())
        self.addCleanup(platforms.unregister, "kiosk")
        response = Client().get(self.entry(kid="k-1"))
        self.assertNotIn("X-Frame-Options", response.headers)
        self.assertIn("frame-ancestors https://kiosk.example;", response["Content-Security-Policy"])
        self.assert_refused(Client().get(self.entry()))  # the anonymous link is still refused
