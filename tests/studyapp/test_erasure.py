"""Withdrawal and erasure (services.data.erasure, views.withdrawal, manage.py erase_participant, the admin
action) and the retention limit on platform ids (manage.py purge_platform_ids)."""

from __future__ import annotations

import io
import json
import random
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError
from django.forms.models import model_to_dict
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from studyapp.models import Annotator, Assignment, Consent, ErasureLog, Preference, Presentation, QualityDecision, WithdrawnParticipant
from studyapp.services import platforms
from studyapp.services.access.teams import set_team
from studyapp.services.data import erasure
from studyapp.services.data.export import ExportOptions, export_bytes
from studyapp.services.data.payments import payments_csv
from studyapp.services.data.pseudonyms import pseudonym
from studyapp.services.participation import allocation, flow
from studyapp.services.participation.answers import record_answer
from studyapp.services.quality import control
from tests.studyapp.annotator_base import AnnotatorTestCase
from tests.studyapp.filled import answer_everything, fill_until_full, random_value

PARTICIPANT_PAGES = (
    "study_entry",
    "study_consent",
    "study_instructions",
    "study_practice",
    "study_comprehension",
    "study_next_item",
    "study_done",
)


class WithdrawalTest(AnnotatorTestCase):
    def answer_some(self, annotator: Annotator, n: int) -> None:
        now = timezone.now()
        for _ in range(n):
            item = allocation.current_assignment(annotator, now=now, rng=self.rng)
            record_answer(item, 2, client_ms=1500, now=now)

    def traces(self, annotator: Annotator) -> list[str]:
        """What identifies ``annotator`` in a file: platform id, internal code, token, export pseudonym."""
        return [annotator.external_id, annotator.pseudonym, annotator.token, pseudonym(self.study, annotator)]

    def everything_exported(self) -> str:
        files = [export_bytes(self.study, fmt, ExportOptions(include_excluded=True, include_checks=True))[0] for fmt in ("csv", "jsonl")]
        return "\n".join(f.decode() for f in files) + payments_csv(self.study)

    def test_every_participant_page_has_the_withdraw_link(self) -> None:
        link = reverse("study_withdraw", args=[self.slug])
        for name in PARTICIPANT_PAGES:
            response = self.client.get(reverse(name, args=[self.slug]), follow=True)
            self.assertContains(response, f'href="{link}"', msg_prefix=name)
        newcomer = self.fresh_client().get(self.entry(PROLIFIC_PID="newbie"), follow=True)
        self.assertContains(newcomer, 'data-page="consent"')
        self.assertContains(newcomer, f'href="{link}"')
        expired = self.fresh_client().get(reverse("study_next_item", args=[self.slug]))
        self.assertContains(expired, f'href="{link}"', status_code=403)  # the message pages too
        item = self.client.get(reverse("study_next_item", args=[self.slug]), follow=True)
        self.assertContains(item, 'id="answer-scale"')
        self.assertContains(item, f'href="{link}"')

    def test_withdrawing_erases_everything_and_reopens_the_places(self) -> None:
        self.answer_some(self.alice, 3)
        control.exclude(self.alice, rule=QualityDecision.Rule.FAST, detail="for the log")  # a quality decision goes too
        control.reinstate(self.alice, staff=None, reason="back again")
        alice = Annotator.objects.get(pk=self.alice.pk)
        traces = self.traces(alice)
        presentations = list(Assignment.objects.filter(annotator=alice).values_list("presentation", flat=True))
        self.assertEqual(len(presentations), self.study.items_per_annotator)
        self.assertTrue(any(t in self.everything_exported() for t in traces))

        confirm = self.client.get(reverse("study_withdraw", args=[self.slug]))
        self.assertContains(confirm, "erase my answers")
        done = self.client.post(reverse("study_withdraw", args=[self.slug]))
        self.assertContains(done, "has been erased")
        self.assertContains(done, "Return submission")

        self.assertFalse(Annotator.objects.filter(pk=alice.pk).exists())
        self.assertFalse(Assignment.objects.filter(annotator_id=alice.pk).exists())
        self.assertFalse(Consent.objects.filter(annotator_id=alice.pk).exists())
        self.assertFalse(QualityDecision.objects.filter(annotator_id=alice.pk).exists())
        self.assertEqual(Preference.objects.filter(request_id__startswith="alice").count(), 0)
        exported = self.everything_exported()
        for trace in traces:
            self.assertNotIn(trace, exported)
        log = ErasureLog.objects.get()
        self.assertEqual((log.source, log.answers, log.assignments, log.status), ("withdrawal", 3, 6, "active"))
        logged = json.dumps(model_to_dict(log), default=str) + str(log)
        for trace in traces + ["alice", "s-alice"]:
            self.assertNotIn(trace, logged)

        # her browser is forgotten: the item pages say the session ended (her platform id is not admitted again)
        self.assertEqual(self.client.get(reverse("study_next_item", args=[self.slug])).status_code, 403)
        # her places re-open: newcomers fill every presentation to k, quotas and k hold
        newcomers = fill_until_full(self.study, random.Random(5), timezone.now(), seconds=lambda r: 12.0, choose=random_value)
        self.assertGreater(len(newcomers), 0)
        k = self.study.annotators_per_presentation
        for p in Presentation.objects.filter(study=self.study, kind="pair"):
            answers = Assignment.objects.filter(presentation=p, preference__isnull=False).count()
            self.assertLessEqual(answers, k)
        for p in presentations:
            self.assertTrue(Assignment.objects.filter(presentation_id=p).exists(), p)
        for a in Annotator.objects.filter(study=self.study):
            self.assertLessEqual(a.assignments.count(), self.study.items_per_annotator)

    def test_a_withdrawn_participant_opening_the_link_again_is_not_admitted_as_new(self) -> None:
        self.client.post(reverse("study_withdraw", args=[self.slug]))  # alice, from Prolific
        mark = WithdrawnParticipant.objects.get(study=self.study)
        self.assertNotIn("alice", json.dumps(model_to_dict(mark), default=str) + str(mark))  # a keyed hash, no id
        for client in (self.client, self.fresh_client()):  # the same browser, or another one
            again = client.get(self.entry(PROLIFIC_PID="alice", STUDY_ID="toy", SESSION_ID="s-alice-2"))
            self.assertContains(again, "You have withdrawn from this study", status_code=403)
            self.assertContains(again, "Return submission", status_code=403)
        self.assertFalse(Annotator.objects.filter(study=self.study, external_id="alice").exists())
        other = self.fresh_client().get(self.entry(PROLIFIC_PID="carol", STUDY_ID="toy", SESSION_ID="s-carol"), follow=True)
        self.assertContains(other, 'data-page="consent"')  # anyone else still comes in
        staff_erased = erasure.erase(self.bob, source=ErasureLog.Source.ADMIN)  # staff erasing on request marks nobody
        self.assertEqual(staff_erased.source, "admin")
        self.assertEqual(WithdrawnParticipant.objects.count(), 1)
        # the mark is derived from the platform id: it goes with the ids after the retention period
        WithdrawnParticipant.objects.update(withdrawn_at=timezone.now() - timedelta(days=40))
        call_command("purge_platform_ids", self.slug, "--older-than", "30", stdout=io.StringIO())
        self.assertFalse(WithdrawnParticipant.objects.exists())

    def test_the_arrivals_look_up_finds_the_annotator_or_says_whether_the_id_withdrew(self) -> None:
        def arrival(pid: str, platform: str = "prolific") -> platforms.Arrival:
            return platforms.Arrival(platform, pid)

        with self.assertNumQueries(1):
            found, withdrew = erasure.find_or_withdrawn(self.study, arrival("bob"))
        self.assertEqual((found, withdrew), (self.bob, False))
        for name in ("external_ids", "created_at", "consented_at", "status", "token"):  # read back as find() reads them
            self.assertEqual(getattr(found, name), getattr(flow.find(self.study, arrival("bob")), name), name)
        self.assertFalse(hasattr(found, "withdrew"))
        self.assertEqual(erasure.find_or_withdrawn(self.study, arrival("carol")), (None, False))
        self.assertEqual(erasure.find_or_withdrawn(self.study, arrival("bob", "mturk")), (None, False))  # another platform's bob
        self.client.post(reverse("study_withdraw", args=[self.slug]))  # alice, from Prolific
        with self.assertNumQueries(1):
            self.assertEqual(erasure.find_or_withdrawn(self.study, arrival("alice")), (None, True))
        self.assertEqual(erasure.find_or_withdrawn(self.study, arrival("alice", "mturk")), (None, False))
        self.assertEqual(erasure.find_or_withdrawn(self.study, arrival("")), (None, False))

    def test_the_study_code_is_shown_when_it_has_one_and_a_second_post_is_harmless(self) -> None:
        self.study.withdrawal_code = "WITHDRAWN42"
        self.study.save()
        self.client.post(reverse("study_withdraw", args=[self.slug]))
        again = self.client.post(reverse("study_withdraw", args=[self.slug]))
        self.assertContains(again, "WITHDRAWN42")
        self.assertContains(again, "Nothing was recorded")
        self.assertEqual(ErasureLog.objects.count(), 1)
        self.assertTrue(Annotator.objects.filter(pk=self.bob.pk).exists())

    def test_erase_participant_command(self) -> None:
        self.answer_some(self.bob, 2)
        out = io.StringIO()
        call_command("erase_participant", self.slug, "bob", stdout=out)
        self.assertIn("Erased: 2 answers and 6 items", out.getvalue())
        self.assertFalse(Annotator.objects.filter(pk=self.bob.pk).exists())
        self.assertEqual(ErasureLog.objects.get().source, "command")
        with self.assertRaisesMessage(CommandError, "no participant with platform id or code 'bob'"):
            call_command("erase_participant", self.slug, "bob", stdout=io.StringIO())
        call_command("erase_participant", self.slug, self.alice.pseudonym, stdout=io.StringIO())  # the internal code works too
        self.assertEqual(ErasureLog.objects.count(), 2)

    def test_admin_action_for_staff_handled_requests(self) -> None:
        staff = get_user_model().objects.create_superuser("boss", password="pw-boss-boss-boss")
        set_team(self.study, "boss")
        client = Client()
        client.force_login(staff)
        url = reverse("admin:studyapp_annotator_changelist")
        confirm = client.post(url, {"action": "erase_annotators", "_selected_action": [self.alice.pk]})
        self.assertContains(confirm, "cannot be undone")
        self.assertTrue(Annotator.objects.filter(pk=self.alice.pk).exists())
        client.post(url, {"action": "erase_annotators", "_selected_action": [self.alice.pk], "apply": "1"})
        self.assertFalse(Annotator.objects.filter(pk=self.alice.pk).exists())
        log = ErasureLog.objects.get()
        self.assertEqual((log.source, log.staff), ("admin", staff))


class RetentionTest(AnnotatorTestCase):
    def test_platform_ids_go_answers_and_pseudonyms_stay(self) -> None:
        now = timezone.now()
        answer_everything(self.alice, self.rng, now)
        before = export_bytes(self.study, "csv")[0].decode()
        Annotator.objects.filter(pk=self.alice.pk).update(last_seen_at=now - timedelta(days=40))
        out = io.StringIO()
        call_command("purge_platform_ids", self.slug, "--older-than", "30", stdout=out)
        self.assertIn("platform ids of 1 annotator last seen more than 30 days ago removed", out.getvalue())
        alice, bob = Annotator.objects.get(pk=self.alice.pk), Annotator.objects.get(pk=self.bob.pk)
        self.assertEqual((alice.external_id, alice.external_ids), ("", {}))
        self.assertEqual(bob.external_id, "bob")  # seen recently: kept
        self.assertEqual(export_bytes(self.study, "csv")[0].decode(), before)  # same answers, same pseudonym
        self.assertNotIn("alice", payments_csv(self.study))
        self.assertEqual(alice.assignments.filter(preference__isnull=False).count(), self.study.items_per_annotator)

    def test_default_days_come_from_the_study_then_the_site(self) -> None:
        Annotator.objects.filter(pk=self.alice.pk).update(last_seen_at=timezone.now() - timedelta(days=20))
        call_command("purge_platform_ids", stdout=io.StringIO())  # site default 90 days: nothing
        self.assertEqual(Annotator.objects.get(pk=self.alice.pk).external_id, "alice")
        self.study.platform_id_retention_days = 10
        self.study.save()
        call_command("purge_platform_ids", stdout=io.StringIO())
        self.assertEqual(Annotator.objects.get(pk=self.alice.pk).external_id, "")

    def test_bad_days(self) -> None:
        for bad in ("0", "-3", "ten"):
            with self.assertRaises(CommandError):
                call_command("purge_platform_ids", "--older-than", bad, stdout=io.StringIO())
