"""Quality control for staff: the quality_check and export_payments commands, the admin actions, read-only answers."""

from __future__ import annotations

import csv
import io
from datetime import timedelta
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from studyapp.models import Annotator, Preference, QualityDecision
from studyapp.services.data import payments
from studyapp.services.participation import flow
from studyapp.services.quality import control
from tests.studyapp.test_quality import QualityTestCase


class StaffTestCase(QualityTestCase):
    def setUp(self) -> None:
        super().setUp()
        self.staff = get_user_model().objects.create_superuser("staff", "staff@example.org", None)  # force_login: no password hashing
        self.client.force_login(self.staff)
        self.set(fast_limit=10)
        self.slow, self.quick = self.arrive("slow"), self.arrive("quick")
        for who in (self.slow, self.quick):
            flow.give_consent(self.study, who, flow.Arrival(), self.study.consent_version, now=self.clock)
        self.decide_all(self.slow, [30] * 6)
        self.decide_all(self.quick, [2] * 6)

    def command(self, name: str, *args: str) -> str:
        out = io.StringIO()
        call_command(name, *args, stdout=out, stderr=io.StringIO())
        return out.getvalue()


class QualityCheckCommandTestCase(StaffTestCase):
    def test_dry_run_then_for_real(self) -> None:
        self.set(fast_limit=5)
        text = self.command("quality_check", "Toy study", "--dry-run")
        self.assertIn("(dry run: nothing written): 2 annotators evaluated", text)
        self.assertIn(f"    {self.quick.pseudonym}: fast: 6 of 6 decisions under 10 s (limit 5)", text)
        self.assertFalse(QualityDecision.objects.exists())
        text = self.command("quality_check", self.study.slug)
        self.assertIn("  excluded: 1", text)
        self.assertEqual(Annotator.objects.get(pk=self.quick.pk).status, Annotator.Status.EXCLUDED)
        self.assertIn("  excluded: 0", self.command("quality_check", "Toy study"))

    def test_an_unknown_study_is_a_one_line_error(self) -> None:
        with self.assertRaises(CommandError) as caught:
            call_command("quality_check", "No such study")
        self.assertEqual(str(caught.exception), "no study named 'No such study' (known: Toy study)")
        self.assertEqual(QualityDecision.objects.count(), 0)


class PaymentsTestCase(StaffTestCase):
    def rows(self) -> dict[str, dict[str, str]]:
        return {row["platform_id"]: row for row in csv.DictReader(io.StringIO(self.command("export_payments", "Toy study")))}

    def test_the_table_says_which_rule_each_annotator_broke(self) -> None:
        self.set(fast_limit=5)
        control.quality_check(self.study, now=self.clock)
        rows = self.rows()
        self.assertEqual(list(next(iter(rows.values()))), list(payments.COLUMNS))
        quick, slow = rows["quick"], rows["slow"]
        self.assertEqual((quick["status"], quick["completion_shown"], quick["code_shown"]), ("excluded", "yes", "TOYDONE"))
        self.assertEqual(quick["rules_broken"], "fast: 6 of 6 decisions under 10 s (limit 5)")
        self.assertEqual(quick["excluded_by"], "rule fast")
        self.assertEqual((slow["status"], slow["rules_broken"], slow["excluded_by"]), ("finished", "", ""))
        self.assertEqual((slow["exceptionally_fast"], quick["exceptionally_fast"]), ("no", "no"))  # two are too few to tell

    def test_exceptionally_fast_is_more_than_3_sd_under_the_mean(self) -> None:
        norm = payments.speed_norm([])
        self.assertEqual((norm.finished, norm.cutoff, norm.exceptionally_fast(1.0)), (0, None, False))
        annotators = [Annotator(consented_at=self.now, finished_at=self.now + timedelta(seconds=s)) for s in [600] * 20 + [610] * 20 + [60]]
        norm = payments.speed_norm(annotators)
        self.assertEqual(norm.finished, 41)
        self.assertAlmostEqual(norm.cutoff, norm.mean - 3 * norm.sd)
        self.assertTrue(norm.exceptionally_fast(60))
        self.assertFalse(norm.exceptionally_fast(500))

    def test_written_to_a_file_whole_or_an_error(self) -> None:
        folder = Path(self.id().replace(".", "_"))
        target = Path("/tmp") / folder / "payments.csv"
        target.parent.mkdir(exist_ok=True)
        self.command("export_payments", "Toy study", "-o", str(target))
        self.assertEqual(target.read_text().splitlines()[0], ",".join(payments.COLUMNS))
        self.assertEqual(len(target.read_text().splitlines()), 3)
        with self.assertRaises(CommandError) as caught:
            self.command("export_payments", "Toy study", "-o", "/nonexistent-dir/payments.csv")
        self.assertTrue(str(caught.exception).startswith("/nonexistent-dir/payments.csv: cannot write there"))
        with self.assertRaises(CommandError):
            self.command("export_payments", "Nope")

    def test_formula_like_text_is_defused(self) -> None:
        control.exclude(self.slow, rule="staff", staff=self.staff, reason="=HYPERLINK(1)", now=self.clock)
        self.assertEqual(self.rows()["slow"]["excluded_by"], "staff staff: =HYPERLINK(1)")  # the cell starts with "staff"
        Annotator.objects.filter(pk=self.slow.pk).update(external_id="-1+1")
        self.assertEqual(self.rows()["'-1+1"]["platform_id"], "'-1+1")


class AdminTestCase(StaffTestCase):
    def action(self, model: str, action: str, ids: list[int], **extra) -> object:
        data = {"action": action, "_selected_action": [str(i) for i in ids], **extra}
        return self.client.post(reverse(f"admin:studyapp_{model}_changelist"), data)

    def test_staff_exclude_and_reinstate_in_bulk_with_a_reason(self) -> None:
        page = self.action("annotator", "exclude_annotators", [self.slow.pk, self.quick.pk])
        self.assertContains(page, "Exclude annotators")
        self.assertContains(page, self.quick.pseudonym)
        self.assertFalse(QualityDecision.objects.exists())  # nothing until a reason is given
        page = self.action("annotator", "exclude_annotators", [self.slow.pk, self.quick.pk], apply="1", reason="")
        self.assertContains(page, "This field is required")
        self.assertFalse(QualityDecision.objects.exists())
        done = self.action("annotator", "exclude_annotators", [self.slow.pk, self.quick.pk], apply="1", reason="same answers as another id")
        self.assertEqual(done.status_code, 302)
        log = QualityDecision.objects.order_by("id")
        self.assertEqual(
            [(d.action, d.rule, d.staff, d.reason) for d in log], [("exclude", "staff", self.staff, "same answers as another id")] * 2
        )
        self.assertEqual(set(Annotator.objects.values_list("status", flat=True)), {"excluded"})
        self.action("annotator", "reinstate_annotators", [self.quick.pk], apply="1", reason="appeal accepted")
        self.assertEqual(Annotator.objects.get(pk=self.quick.pk).status, Annotator.Status.FINISHED)
        self.assertEqual(log.last().reason, "appeal accepted")

    def test_the_study_action_runs_the_quality_check(self) -> None:
        self.set(fast_limit=5)
        response = self.action("study", "run_quality_check", [self.study.pk])
        self.assertEqual(response.status_code, 302)
        self.assertEqual(Annotator.objects.get(pk=self.quick.pk).status, Annotator.Status.EXCLUDED)
        messages = [str(m) for m in self.client.get(response.url).context["messages"]]
        self.assertTrue(any("excluded: 1" in m and self.quick.pseudonym in m for m in messages), messages)

    def test_the_annotator_list_shows_the_signals(self) -> None:
        """Every rule's dashboard column and cell (services.quality.rules), under the study's settings."""
        page = self.client.get(reverse("admin:studyapp_annotator_changelist"))
        self.assertContains(page, "under 10 s: 6 · checks failed: – · longest run: ")
        self.assertContains(page, "under 10 s: 0 · ")
        self.assertContains(page, "median (s): 30.0")

    def test_answers_are_read_only(self) -> None:
        answer = Preference.objects.filter(assignment__annotator=self.slow).first()
        change = reverse("admin:studyapp_preference_change", args=[answer.pk])
        self.assertEqual(self.client.get(change).status_code, 200)  # staff may read it
        self.client.post(change, {"assignment": answer.assignment_id, "value": -answer.value, "canonical": -answer.canonical,
                                  "answered_at_0": "2026-01-05", "answered_at_1": "12:00:00", "request_id": "x"})  # fmt: skip
        self.assertEqual(Preference.objects.get(pk=answer.pk).value, answer.value)
        self.assertEqual(self.client.post(reverse("admin:studyapp_preference_delete", args=[answer.pk]), {"post": "yes"}).status_code, 403)
        self.action("preference", "delete_selected", [answer.pk], post="yes")
        self.assertEqual(self.client.get(reverse("admin:studyapp_preference_add")).status_code, 403)
        # Deleting the annotator would delete their answers: refused too.
        self.client.post(reverse("admin:studyapp_annotator_delete", args=[self.slow.pk]), {"post": "yes"})
        self.action("annotator", "delete_selected", [self.slow.pk], post="yes")
        self.assertTrue(Annotator.objects.filter(pk=self.slow.pk).exists())
        self.assertEqual(Preference.objects.filter(pk=answer.pk).count(), 1)
        self.assertEqual(Preference.objects.count(), 12)
