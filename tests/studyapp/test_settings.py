"""Deployment defaults: DEBUG off, a kept secret key, localhost hosts, static files without collectstatic,
and friendly 404/500 pages (never Django's technical pages with the URL patterns) under those defaults."""

from __future__ import annotations

import os
import runpy
import shutil
import stat
import tempfile
from pathlib import Path
from typing import Any
from unittest import mock

from django.contrib.staticfiles import finders
from django.core.exceptions import ImproperlyConfigured
from django.test import override_settings

import studyapp.settings
from tests.studyapp.annotator_base import AnnotatorTestCase

DEPLOYMENT_VARIABLES = (
    "DATABASE_URL",
    "DJANGO_PG_PREPARED",
    "DJANGO_DEBUG",
    "DJANGO_SECRET_KEY",
    "DJANGO_SECRET_KEY_FILE",
    "DJANGO_ALLOWED_HOSTS",
    "STUDYAPP_STATIC_FROM_APPS",
)
TECHNICAL = ("URLconf", "urlpatterns", "Traceback", "DEBUG = True", "studyapp.urls")


def default_settings(key_file: Path, **env: str) -> dict[str, Any]:
    """The settings module run afresh with none of the deployment variables set (plus ``env``)."""
    clean = {k: v for k, v in os.environ.items() if k not in DEPLOYMENT_VARIABLES}
    with mock.patch.dict(os.environ, {**clean, "DJANGO_SECRET_KEY_FILE": str(key_file), **env}, clear=True):
        return runpy.run_path(studyapp.settings.__file__)


class DefaultSettingsTestCase(AnnotatorTestCase):
    def setUp(self) -> None:
        super().setUp()
        self.tmp = Path(tempfile.mkdtemp(prefix="studyapp-settings-"))
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.key_file = self.tmp / "secret-key"
        self.defaults = default_settings(self.key_file)

    def test_debug_is_off_by_default_and_on_only_when_asked(self) -> None:
        self.assertIs(self.defaults["DEBUG"], False)
        self.assertIs(default_settings(self.key_file, DJANGO_DEBUG="1")["DEBUG"], True)

    def test_a_secret_key_is_generated_once_kept_private_and_reused(self) -> None:
        key = self.defaults["SECRET_KEY"]
        self.assertGreaterEqual(len(key), 50)
        self.assertEqual(self.key_file.read_text().strip(), key)
        self.assertEqual(stat.S_IMODE(self.key_file.stat().st_mode), 0o600)
        self.assertEqual(default_settings(self.key_file)["SECRET_KEY"], key)  # the next start keeps the sessions
        self.assertEqual(default_settings(self.key_file, DJANGO_SECRET_KEY="from-env")["SECRET_KEY"], "from-env")
        self.assertEqual(list(self.tmp.iterdir()), [self.key_file])  # no draft files left

    def test_an_unwritable_key_file_still_starts_with_a_temporary_key(self) -> None:
        with mock.patch("sys.stderr"):
            settings = default_settings(self.tmp / "missing-folder" / "secret-key")
        self.assertGreaterEqual(len(settings["SECRET_KEY"]), 50)

    def test_hosts_and_static_files(self) -> None:
        self.assertEqual(self.defaults["ALLOWED_HOSTS"], ["localhost", "127.0.0.1", "[::1]"])
        self.assertEqual(default_settings(self.key_file, DJANGO_ALLOWED_HOSTS="study.example.org")["ALLOWED_HOSTS"], ["study.example.org"])
        self.assertIs(self.defaults["WHITENOISE_USE_FINDERS"], True)  # `make run` needs no collectstatic
        self.assertIsNotNone(finders.find("studyapp/annotator.js"))

    def test_postgresql_prepares_hot_statements_unless_turned_off(self) -> None:
        url = "postgres://u:p@127.0.0.1:5432/db"
        options = default_settings(self.key_file, DATABASE_URL=url)["DATABASES"]["default"]["OPTIONS"]
        self.assertEqual((options["server_side_binding"], options["prepare_threshold"]), (True, 5))
        off = default_settings(self.key_file, DATABASE_URL=url, DJANGO_PG_PREPARED="0")["DATABASES"]["default"]
        self.assertNotIn("server_side_binding", off.get("OPTIONS", {}))
        self.assertNotIn("server_side_binding", self.defaults["DATABASES"]["default"]["OPTIONS"])  # SQLite
        with self.assertRaisesRegex(ImproperlyConfigured, "DJANGO_PG_PREPARED must be a boolean"):
            default_settings(self.key_file, DATABASE_URL=url, DJANGO_PG_PREPARED="maybe")

    def test_unknown_addresses_give_the_friendly_404_page(self) -> None:
        cases = [
            ("/no-such-page/", self.client, "Page not found"),
            (self.url("study_entry").replace(self.slug, "no-such-study"), self.client, "Study not found"),
            (self.url("study_item", 987654), self.client, "This page does not exist or is not yours."),
            (self.url("study_entry") + "item/not-a-number/", self.client, "Page not found"),
        ]
        with override_settings(DEBUG=self.defaults["DEBUG"]):
            for url, client, text in cases:
                with self.subTest(url=url):
                    response = client.get(url)
                    self.assertContains(response, text, status_code=404)
                    for technical in TECHNICAL:
                        self.assertNotContains(response, technical, status_code=404)
        with override_settings(DEBUG=True):  # what participants saw before: the URL patterns
            self.assertContains(self.client.get("/no-such-page/"), "URLconf", status_code=404)

    def test_a_server_error_gives_the_friendly_500_page(self) -> None:
        self.client.raise_request_exception = False
        with override_settings(DEBUG=self.defaults["DEBUG"]), mock.patch("studyapp.views.site.render", side_effect=RuntimeError("boom")):
            response = self.client.get("/")
        self.assertContains(response, "Something went wrong", status_code=500)
        for technical in (*TECHNICAL, "boom"):
            self.assertNotContains(response, technical, status_code=500)
