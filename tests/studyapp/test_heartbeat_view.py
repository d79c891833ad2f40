"""``POST /s/<slug>/heartbeat/``: an open page says the annotator is there; an item page's heartbeat
keeps the lease of the item on screen, and only that one."""

from __future__ import annotations

import json
from datetime import timedelta

from django.db.models import F
from django.utils import timezone

from studyapp.models import Annotator, Assignment
from studyapp.services.participation import allocation
from tests.studyapp.annotator_base import JSON, AnnotatorTestCase


class HeartbeatTestCase(AnnotatorTestCase):
    def beat(self, client, item: int | None = None):
        return client.post(self.url("study_heartbeat"), {} if item is None else {"item": item}, **JSON)

    def leases(self, annotator: Annotator) -> dict[int, object]:
        return dict(Assignment.objects.filter(annotator=annotator).values_list("pk", "lease_expires_at"))

    def test_an_item_pages_heartbeat_renews_the_lease_of_that_item_only(self) -> None:
        on_screen = self.serve(self.client)
        soon = timezone.now() + timedelta(minutes=2)
        Assignment.objects.update(lease_expires_at=soon)
        response = self.beat(self.client, on_screen.pk)
        self.assertEqual(json.loads(response.content), {"ok": True, "status": "active", "extended": True})
        leases = self.leases(self.alice)
        self.assertGreater(leases.pop(on_screen.pk), soon + timedelta(minutes=self.study.lease_minutes - 3))
        self.assertEqual(set(leases.values()), {soon})  # her other items were not extended
        self.assertEqual(set(self.leases(self.bob).values()), {soon})
        self.alice.refresh_from_db()
        self.assertGreater(self.alice.last_seen_at, timezone.now() - timedelta(minutes=1))

    def test_a_heartbeat_for_any_other_item_is_refused_and_extends_nothing(self) -> None:
        on_screen = self.serve(self.client)
        bobs = self.serve(self.bob_client)
        soon = timezone.now() + timedelta(minutes=2)
        Assignment.objects.update(lease_expires_at=soon)
        not_served = self.alice.assignments.exclude(pk=on_screen.pk).first()
        for item in (not_served.pk, bobs.pk, 10**9):
            with self.subTest(item=item):
                response = self.beat(self.client, item)
                self.assertEqual(response.status_code, 409)
                self.assertEqual(json.loads(response.content)["error"], "not_on_screen")
        self.answer(self.client, on_screen)  # answered: no longer on screen
        Assignment.objects.update(lease_expires_at=soon)
        self.assertEqual(self.beat(self.client, on_screen.pk).status_code, 409)
        self.assertEqual(set(self.leases(self.alice).values()) | set(self.leases(self.bob).values()), {soon})
        self.assertEqual(self.beat(self.client, "x").status_code, 400)

    def test_an_expired_lease_is_not_revived_by_a_heartbeat(self) -> None:
        on_screen = self.serve(self.client)
        past = timezone.now() - timedelta(seconds=1)
        Assignment.objects.filter(pk=on_screen.pk).update(lease_expires_at=past)  # others may hold its slot now
        self.assertEqual(self.beat(self.client, on_screen.pk).status_code, 409)
        self.assertEqual(Assignment.objects.get(pk=on_screen.pk).lease_expires_at, past)

    def test_a_heartbeat_of_a_page_without_an_item_extends_nothing(self) -> None:
        soon = timezone.now() + timedelta(minutes=2)
        Assignment.objects.update(lease_expires_at=soon)
        response = self.beat(self.client)
        self.assertEqual(json.loads(response.content), {"ok": True, "status": "active", "extended": False})
        self.assertEqual(set(self.leases(self.alice).values()), {soon})

    def test_it_requires_the_session_post_and_csrf(self) -> None:
        self.assertEqual(self.beat(self.fresh_client()).status_code, 403)
        self.assertEqual(self.client.get(self.url("study_heartbeat")).status_code, 405)
        client = self.fresh_client(enforce_csrf_checks=True)
        self.sign_in(client, self.alice)
        self.assertEqual(self.beat(client).status_code, 403)

    def test_item_pages_name_their_item_in_the_heartbeat(self) -> None:
        on_screen = self.serve(self.client)
        response = self.client.get(self.url("study_item", on_screen.pk))
        self.assertContains(
            response,
            f'data-heartbeat-url="{self.url("study_heartbeat")}" data-heartbeat-seconds="60" data-heartbeat-item="{on_screen.pk}"',
        )
        instructions = self.fresh_client()
        self.consent(instructions, "carol")
        page = instructions.get(self.url("study_instructions"))
        self.assertContains(page, "data-heartbeat-url=")
        self.assertNotContains(page, "data-heartbeat-item")

    def test_a_scripted_client_cannot_keep_a_study_full_by_heartbeats(self) -> None:
        """The attack of issue 12: admitted annotators that never answer, kept alive by heartbeats.

        Six scripted participants fill the toy study (room for six), open their first item and then
        only send heartbeats, naming every item they hold. After the lease time the study takes
        newcomers again: each keeps only the item on its screen.
        """
        clients = [self.client, self.bob_client]
        for n in range(4):
            client = self.fresh_client()
            self.onboard(client, f"script-{n}")
            clients.append(client)
        self.assertFalse(allocation.can_admit(self.study))  # full
        shown = {client: self.serve(client) for client in clients}
        # 19 of the 20 lease minutes pass with heartbeats (the clock is moved by moving the leases back) ...
        Assignment.objects.update(lease_expires_at=F("lease_expires_at") - timedelta(minutes=self.study.lease_minutes - 1))
        for client, item in shown.items():  # ... and the script beats for every item it holds
            holder = Assignment.objects.get(pk=item.pk).annotator
            for pk in holder.assignments.values_list("pk", flat=True):
                self.assertEqual(self.beat(client, pk).status_code, 200 if pk == item.pk else 409)
            self.assertEqual(self.beat(client).status_code, 200)
        later = timezone.now() + timedelta(minutes=2)
        held = Assignment.objects.live(later)
        self.assertEqual(sorted(held.values_list("pk", flat=True)), sorted(item.pk for item in shown.values()))
        self.assertTrue(allocation.can_admit(self.study, now=later))  # newcomers get in again
        self.assertGreaterEqual(allocation.capacity(self.study, now=later).newcomers, 3)
