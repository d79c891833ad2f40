"""Bad data and faults: times bounded at import (file:line) and by database constraints, staff pages on odd
but storable rows, a database that does not answer (503 with Retry-After, JSON for the page script; locked
and frozen PostgreSQL: test_database_waits.py), request body limits, and consent with
item assignment in one transaction."""

from __future__ import annotations

import tempfile
from datetime import UTC, datetime
from pathlib import Path
from unittest import mock

from django.contrib.auth import get_user_model
from django.db import IntegrityError, OperationalError, transaction
from django.test import Client
from django.urls import reverse

from studyapp.exceptions import ImportFailed
from studyapp.models import Annotator, Assignment, Consent, Preference
from studyapp.services.access.teams import set_team
from studyapp.services.data.preference_import import import_preferences
from tests.studyapp.annotator_base import JSON, AnnotatorTestCase
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
        self.assertEqual(default_settings(folder / "key")["DATA_UPLOAD_MAX_MEMORY_SIZE"], 1024 * 1024)
