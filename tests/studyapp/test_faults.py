"""Bad data and faults: times bounded at import (file:line) and by database constraints, staff pages on odd
but storable rows, a database that does not answer (503 with Retry-After, JSON for the page script; a
locked PostgreSQL table answered within the statement timeout), request body limits, and consent with
item assignment in one transaction."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from datetime import UTC, datetime
from pathlib import Path
from unittest import mock

import pytest
from django.contrib.auth import get_user_model
from django.db import IntegrityError, OperationalError, transaction
from django.test import Client
from django.urls import reverse

from studyapp.exceptions import ImportFailed
from studyapp.models import Annotator, Assignment, Consent, Preference
from studyapp.services.access.teams import set_team
from studyapp.services.data.preference_import import import_preferences
from studyapp.settings import BASE_DIR
from tests.studyapp.annotator_base import JSON, AnnotatorTestCase
from tests.studyapp.test_postgresql import postgres_url
from tests.studyapp.test_settings import default_settings

HEADER = "level,topic,subtopic,run_a,run_b,value,annotator,answered_at"


class TimestampTest(AnnotatorTestCase):
    def test_import_refuses_times_out_of_range_with_file_and_line(self) -> None:
        folder = Path(tempfile.mkdtemp())
        for bad in ("0001-01-01T00:00:00+05:00", "9999-12-31T23:59:59-05:00", "1999-12-31T23:59:59+00:00"):
            path = folder / "answers.csv"
            path.write_text(f"{HEADER}\ntopic,1,,alpha,bravo,1,x1,2026-01-05T12:00:00+00:00\ntopic,1,,alpha,charlie,1,x1,{bad}\n")
            with self.assertRaises(ImportFailed) as caught:
                import_preferences(self.study, path)
            self.assertIn(f"answers.csv:3: answered_at must lie between 2000-01-01 and 2100-01-01, got '{bad}'", str(caught.exception))
            self.assertFalse(Annotator.objects.filter(external_id="x1").exists())
        path.write_text(f"{HEADER},server_seconds\ntopic,1,,alpha,bravo,1,x1,2001-01-01T00:00:00+00:00,999999999\n")
        with self.assertRaisesMessage(ImportFailed, "answers.csv:2: server_seconds 1e+09 would put the item's serving before 2000-01-01"):
            import_preferences(self.study, path)

    def test_the_database_refuses_times_out_of_range(self) -> None:
        item = Assignment.objects.filter(annotator=self.alice).first()
        for field, model, pk in (("served_at", Assignment, item.pk), ("created_at", Annotator, self.alice.pk)):
            for bad in (datetime(1999, 12, 31, tzinfo=UTC), datetime(2100, 1, 1, tzinfo=UTC)):
                with self.assertRaises(IntegrityError), transaction.atomic():
                    model.objects.filter(pk=pk).update(**{field: bad})

    def test_staff_pages_survive_odd_but_storable_rows(self) -> None:
        items = list(Assignment.objects.filter(annotator=self.alice).order_by("position"))
        edges = [datetime(2000, 1, 1, tzinfo=UTC), datetime(2099, 12, 31, 23, 59, 59, tzinfo=UTC)]
        for item, at in zip(items, edges, strict=False):
            Assignment.objects.filter(pk=item.pk).update(served_at=None)
            Preference.objects.create(assignment=item, value=-4, canonical=4 if item.a_on_left is False else -4, server_seconds=1e8,
                                      client_ms=2**31 - 1, visible_ms=0, answered_at=at)  # fmt: skip
        Annotator.objects.filter(pk=self.alice.pk).update(exclusion_reason="=cmd|' /C calc'!A0\r\n\t", last_seen_at=edges[1])
        boss = get_user_model().objects.create_superuser("boss", password="pw-boss-boss-boss")
        set_team(self.study, "boss")
        client = Client()
        client.force_login(boss)
        urls = [reverse(n, args=[self.slug]) for n in ("staff_study", "staff_study_live", "staff_study_payments", "study_report")]
        urls += [reverse("staff_study_export", args=[self.slug, f]) for f in ("csv", "jsonl", "parquet")]
        urls += [reverse("admin:studyapp_preference_changelist"), reverse("admin:studyapp_annotator_changelist"), reverse("staff_studies")]
        for url in urls:
            self.assertEqual(client.get(url).status_code, 200, url)


class DatabaseUnavailableTest(AnnotatorTestCase):
    def test_503_with_retry_after_html_and_json(self) -> None:
        client = Client(raise_request_exception=False)
        self.sign_in(client, self.alice)
        with mock.patch(
            "studyapp.services.participation.sessions.resolve", side_effect=OperationalError("canceling statement due to statement timeout")
        ):
            page = client.get(reverse("study_next_item", args=[self.slug]))
            script = client.post(reverse("study_heartbeat", args=[self.slug]), **JSON)
        self.assertEqual(page.status_code, 503)
        self.assertEqual(page["Retry-After"], "30")
        self.assertContains(page, "Please try again shortly", status_code=503)
        self.assertEqual(script.status_code, 503)
        self.assertEqual(script["Retry-After"], "30")
        self.assertEqual(script.json()["error"], "unavailable")
        with mock.patch("studyapp.services.participation.sessions.resolve", side_effect=ValueError("a bug")):
            broken = client.get(reverse("study_next_item", args=[self.slug]), **JSON)
        self.assertEqual(broken.status_code, 500)
        self.assertEqual(broken.json()["error"], "server")
        self.assertNotIn("Retry-After", broken)

    def test_consent_and_items_are_one_transaction(self) -> None:
        client = Client(raise_request_exception=False)
        client.get(self.entry(PROLIFIC_PID="carol", STUDY_ID="toy", SESSION_ID="s-carol"))
        consent = {"version": self.study.consent_version, "agree": "on"}
        disk_full = OperationalError("database or disk is full")
        with mock.patch("studyapp.services.participation.allocation.admit", side_effect=disk_full):
            failed = client.post(reverse("study_consent", args=[self.slug]), consent)
        self.assertEqual(failed.status_code, 503)
        self.assertFalse(Annotator.objects.filter(external_id="carol").exists())  # nobody registered without items
        self.assertFalse(Consent.objects.filter(annotator__external_id="carol").exists())
        again = client.post(reverse("study_consent", args=[self.slug]), consent)  # reopening the link works
        self.assertEqual(again.status_code, 302)
        carol = Annotator.objects.get(external_id="carol")
        self.assertEqual(carol.assignments.count(), self.study.items_per_annotator)
        self.assertTrue(Consent.objects.filter(annotator=carol).exists())


class BodyLimitTest(AnnotatorTestCase):
    def test_large_and_unknown_length_bodies_are_refused_before_reading(self) -> None:
        url = reverse("study_answer", args=[self.slug, 1])
        too_big = self.client.generic("POST", url, b"x", CONTENT_LENGTH=str(300 * 1024 * 1024), content_type="application/octet-stream")
        self.assertEqual(too_big.status_code, 413)
        chunked = self.client.generic("POST", url, b"", HTTP_TRANSFER_ENCODING="chunked", CONTENT_LENGTH="")
        self.assertEqual(chunked.status_code, 411)
        self.assertNotIn(self.client.post(url, {"value": "1"}).status_code, (411, 413))  # an ordinary answer passes the limit

    def test_settings(self) -> None:
        folder = Path(tempfile.mkdtemp())
        pg = default_settings(folder / "key", DATABASE_URL="postgres://u:p@127.0.0.1:5432/db", STUDYAPP_DB_STATEMENT_TIMEOUT="20")
        options = pg["DATABASES"]["default"]["OPTIONS"]
        self.assertEqual((options["connect_timeout"], options["options"]), (5, "-c statement_timeout=20000"))
        commands = default_settings(folder / "key", DATABASE_URL="postgres://u:p@127.0.0.1:5432/db")
        self.assertNotIn("options", commands["DATABASES"]["default"]["OPTIONS"])  # no statement limit for commands
        self.assertEqual(commands["DATA_UPLOAD_MAX_MEMORY_SIZE"], 1024 * 1024)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def fetch(url: str, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes, float]:
    start = time.monotonic()
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers or {}), timeout=60) as r:
            return r.status, dict(r.headers), r.read(), time.monotonic() - start
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read(), time.monotonic() - start


@pytest.mark.slow
def test_a_locked_postgresql_table_answers_503_within_the_statement_timeout() -> None:
    """gunicorn (timeout 30 s) on PostgreSQL with a statement timeout of 2 s; a table locked by another
    session: the page and the script get 503 with Retry-After in about 2 s, no worker is killed."""
    import psycopg

    url = postgres_url()  # fails in CI without PostgreSQL, skips elsewhere
    base = url.replace("postgres://", "postgresql://", 1)
    name = f"studyapp_hang_{os.getpid()}"
    db_url = url.rsplit("/", 1)[0] + "/" + name
    port = free_port()
    env = {**os.environ, "DATABASE_URL": db_url, "DJANGO_SECRET_KEY": "k" * 50, "DJANGO_ALLOWED_HOSTS": "127.0.0.1",
           "STUDYAPP_DB_STATEMENT_TIMEOUT": "2", "STUDYAPP_WORKER_TIMEOUT": "30", "WEB_CONCURRENCY": "1",
           "STUDYAPP_BIND": f"127.0.0.1:{port}", "DJANGO_LOG_LEVEL": "ERROR"}  # fmt: skip
    with psycopg.connect(base, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}"')
        admin.execute(f'CREATE DATABASE "{name}"')
    server = None
    log = tempfile.TemporaryFile()
    try:
        manage = [sys.executable, "manage.py"]
        subprocess.run([*manage, "migrate", "-v", "0"], cwd=BASE_DIR, env=env, check=True, timeout=300)
        subprocess.run([*manage, "load_demo", "--no-simulated-study"], cwd=BASE_DIR, env=env, check=True, timeout=300, capture_output=True)
        server = subprocess.Popen([sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py", "studyapp.wsgi"], cwd=BASE_DIR, env=env,
                                  stdout=subprocess.DEVNULL, stderr=log)  # fmt: skip
        page = f"http://127.0.0.1:{port}/"  # the home page reads the studies table
        deadline = time.monotonic() + 60
        while True:
            try:
                if fetch(page)[0] == 200:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline or server.poll() is not None:
                log.seek(0)
                raise AssertionError("gunicorn did not start:\n" + log.read().decode()[-3000:])
            time.sleep(0.5)
        with psycopg.connect(base.rsplit("/", 1)[0] + "/" + name) as lock:
            lock.execute("LOCK TABLE studyapp_study IN ACCESS EXCLUSIVE MODE")  # held until the block ends
            status, headers, body, seconds = fetch(page)
            assert (status, headers.get("Retry-After")) == (503, "30"), (status, headers, body[:200])
            assert b"Please try again shortly" in body
            assert 1.5 < seconds < 10, seconds  # the statement timeout, far below the worker timeout
            status, headers, body, seconds = fetch(page, {"Accept": "application/json"})
            assert status == 503 and json.loads(body)["error"] == "unavailable" and seconds < 10
        assert fetch(page)[0] == 200  # the lock is gone: the same worker answers again
        assert server.poll() is None
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=30)
        with psycopg.connect(base, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
