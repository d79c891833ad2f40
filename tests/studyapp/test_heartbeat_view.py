"""``POST /s/<slug>/heartbeat/``: an open page keeps the annotator's leases alive."""

from __future__ import annotations

import json
from datetime import timedelta

from django.utils import timezone

from studyapp.models import Assignment
from tests.studyapp.annotator_base import JSON, AnnotatorTestCase


class HeartbeatTestCase(AnnotatorTestCase):
    def test_it_renews_the_leases(self) -> None:
        soon = timezone.now() + timedelta(minutes=2)
        self.alice.assignments.update(lease_expires_at=soon)
        response = self.client.post(self.url("study_heartbeat"), **JSON)
        self.assertEqual(json.loads(response.content), {"ok": True, "status": "active"})
        leases = Assignment.objects.filter(annotator=self.alice).values_list("lease_expires_at", flat=True)
        self.assertTrue(all(lease > soon + timedelta(minutes=self.study.lease_minutes - 3) for lease in leases))
        self.assertEqual(set(Assignment.objects.filter(annotator=self.bob).values_list("lease_expires_at", flat=True)) & {soon}, set())

    def test_it_requires_the_session_post_and_csrf(self) -> None:
        self.assertEqual(self.fresh_client().post(self.url("study_heartbeat"), **JSON).status_code, 403)
        self.assertEqual(self.client.get(self.url("study_heartbeat")).status_code, 405)
        client = self.fresh_client(enforce_csrf_checks=True)
        client.get(self.entry(PROLIFIC_PID="alice"))
        self.assertEqual(client.post(self.url("study_heartbeat"), **JSON).status_code, 403)

    def test_item_pages_carry_the_heartbeat(self) -> None:
        response = self.client.get(self.url("study_next_item"), follow=True)
        self.assertContains(response, f'data-heartbeat-url="{self.url("study_heartbeat")}" data-heartbeat-seconds="60"')
