"""What serving a real study costs per request: no session rows, and the query budgets of the hot paths."""

from __future__ import annotations

import os
import subprocess
import sys

from django.conf import settings
from django.contrib.sessions.models import Session

from studyapp.services.participation.sessions import ARRIVALS
from tests.studyapp.annotator_base import AnnotatorTestCase


class SessionStorageTest(AnnotatorTestCase):
    def test_an_anonymous_visit_stores_no_session_row(self) -> None:
        client = self.fresh_client()
        response = client.get(self.entry(PROLIFIC_PID="carol", STUDY_ID="toy", SESSION_ID="s-carol"))
        self.assertRedirects(response, self.url("study_consent"), fetch_redirect_response=False)
        self.assertIn(settings.SESSION_COOKIE_NAME, response.cookies)  # the pending arrival is in the cookie
        self.assertEqual(client.session[ARRIVALS][str(self.study.pk)]["external_id"], "carol")
        self.assertEqual(Session.objects.count(), 0)

    def test_a_tampered_session_cookie_is_an_empty_session(self) -> None:
        client = self.fresh_client()
        client.get(self.entry(PROLIFIC_PID="carol", STUDY_ID="toy", SESSION_ID="s-carol"))
        value = client.cookies[settings.SESSION_COOKIE_NAME].value
        client.cookies[settings.SESSION_COOKIE_NAME] = value[:-3] + ("AAA" if not value.endswith("AAA") else "BBB")
        response = client.get(self.url("study_consent"))
        self.assertRedirects(response, self.url("study_entry"), fetch_redirect_response=False)  # no pending arrival


def _gunicorn_config(**env: str) -> subprocess.CompletedProcess:
    """gunicorn reading ``gunicorn.conf.py`` with ``env`` set (``--check-config``: it starts nothing)."""
    command = [sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py", "--check-config", "--print-config", "studyapp.wsgi"]
    return subprocess.run(command, cwd=settings.BASE_DIR, env={**os.environ, **env}, capture_output=True, text=True, timeout=60)


def test_gunicorn_settings_come_from_the_environment() -> None:
    result = _gunicorn_config(WEB_CONCURRENCY="4", STUDYAPP_MAX_REQUESTS="2000", STUDYAPP_WORKER_TIMEOUT="45")
    assert result.returncode == 0, result.stderr
    printed = {name.strip(): value.strip() for name, _, value in (line.partition("=") for line in result.stdout.splitlines())}
    assert (printed["workers"], printed["max_requests"], printed["max_requests_jitter"], printed["timeout"]) == ("4", "2000", "200", "45")


def test_bad_gunicorn_settings_are_one_line_and_status_1() -> None:
    for env, message in (
        ({"STUDYAPP_MAX_REQUESTS": "many"}, "STUDYAPP_MAX_REQUESTS must be an integer, got 'many'"),
        ({"STUDYAPP_MAX_REQUESTS": "-1"}, "STUDYAPP_MAX_REQUESTS must be at least 0, got -1"),
        ({"WEB_CONCURRENCY": "0"}, "WEB_CONCURRENCY must be at least 1, got 0"),
        ({"STUDYAPP_WORKER_TIMEOUT": "1.5"}, "STUDYAPP_WORKER_TIMEOUT must be an integer, got '1.5'"),
    ):
        result = _gunicorn_config(**env)
        assert result.returncode == 1
        assert result.stderr.strip() == f"gunicorn.conf.py: {message}"
