"""The study report: simulated annotators through the real pages, the report's sections, its files,
the reproduction by the ``evaluation`` command line alone, the staff-only page and the commands."""

from __future__ import annotations

import io
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from types import SimpleNamespace
from unittest import mock

import pytest
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import SimpleTestCase
from django.urls import reverse
from django.utils import timezone

from evaluation.cli import main as evaluation_main
from studyapp.models import Annotator, Preference
from studyapp.services.analysis import report as report_service
from studyapp.services.analysis.report import build_report, write_report
from studyapp.services.analysis.report.files import reproduce_script
from studyapp.services.rehearsal.simulation import FAST_SECONDS, HONEST_SECONDS, Plan, simulate_annotators
from tests.studyapp.annotator_base import AnnotatorTestCase
from tests.studyapp.base import BaseTestCase

TRUTH = "D#-nDCG@10"
SECTIONS = ("summary", "preferences", "agreement", "heatmaps", "intuitiveness", "settings")


def run_commands(folder: Path, commands: list[str]) -> None:
    """Run ``python -m evaluation ...`` command lines in ``folder`` through the CLI's entry point."""
    before = os.getcwd()
    os.chdir(folder)
    try:
        for command in commands:
            argv = shlex.split(command)
            assert argv[:3] == ["python", "-m", "evaluation"], command
            assert evaluation_main(argv[3:]) == 0, command
    finally:
        os.chdir(before)


class SimulationTestCase(BaseTestCase):
    def test_honest_annotators_fill_the_study_through_the_pages(self) -> None:
        result = simulate_annotators(self.study, Plan(truth=TRUTH, noise=0.5, fast_share=0.0, seed=1))
        self.assertEqual(result.counts["done"], 6)  # the toy study holds exactly six annotators
        self.assertEqual(result.counts["full"], 2)  # the next one is refused, and once more when nobody works
        self.assertEqual(result.answers, 36)
        self.assertEqual(Preference.objects.count(), 36)
        self.assertEqual(Annotator.objects.filter(status=Annotator.Status.FINISHED).count(), 6)
        answers = Preference.objects.select_related("assignment")
        # decision times are simulated: measured by the server from the serve to the answer
        self.assertGreaterEqual(min(p.server_seconds for p in answers), HONEST_SECONDS[0] - 0.01)
        self.assertTrue(all(abs(p.server_seconds - p.client_ms / 1000) < 0.01 for p in answers))
        self.assertLessEqual(max(p.answered_at for p in answers), timezone.now())
        self.assertTrue(all(p.assignment.served_at is not None for p in answers))
        ids = set(Annotator.objects.values_list("external_id", flat=True))
        self.assertEqual(ids, {f"sim-{n:05d}" for n in range(1, 7)})  # refused arrivals stored nothing

    def test_fast_cheaters_decide_in_seconds(self) -> None:
        result = simulate_annotators(self.study, Plan(truth=TRUTH, noise=1.0, fast_share=1.0, n=2, seed=2))
        self.assertEqual([o.fast for o in result.outcomes], [True, True])
        times = [p.server_seconds for p in Preference.objects.all()]
        self.assertEqual(len(times), 12)
        self.assertLessEqual(max(times), FAST_SECONDS[1] + 0.01)

    def test_answers_follow_the_truth(self) -> None:
        simulate_annotators(self.study, Plan(truth=TRUTH, noise=0.0, fast_share=0.0, seed=3))
        analysis = build_report(self.study, B=50).analysis
        for level in ("topic", "subtopic"):
            self.assertEqual(analysis.mup(level)[TRUTH], 1.0, level)

    def test_bad_plans(self) -> None:
        for plan, message in (
            ({"noise": -1}, "--noise must be >= 0"),
            ({"fast_share": 1.5}, "--fast-share must be between 0 and 1"),
            ({"n": 0}, "--n must be at least 1"),
        ):
            with self.assertRaisesMessage(Exception, message):
                Plan(truth=TRUTH, **plan)

    def test_command(self) -> None:
        out = io.StringIO()
        call_command("simulate_annotators", self.study.slug, "--truth", TRUTH, "--noise", "1", "--fast-share", "0", "--n", "2", stdout=out)
        self.assertIn("Simulated 2 annotators (0 fast)", out.getvalue())
        self.assertEqual(Preference.objects.count(), 12)
        for argv, message in (
            (["nope", "--truth", TRUTH], "no study named 'nope'"),
            ([self.study.slug, "--truth", "nDCG-XX@10"], "unknown metric 'nDCG-XX'"),
            ([self.study.slug, "--truth", TRUTH, "--fast-share", "2"], "--fast-share must be between 0 and 1"),
        ):
            with self.assertRaisesMessage(CommandError, message):
                call_command("simulate_annotators", *argv, stdout=io.StringIO())


class ReportTestCase(BaseTestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        super().setUpTestData()
        simulate_annotators(cls.study, Plan(truth=TRUTH, noise=0.5, fast_share=0.0, seed=4))

    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        cls.built = {}  # set here, not in setUpTestData (whose attributes each test gets a deep copy of)

    def report(self):
        """The study's report at B = 100, seed 5, built once for the class: the tests reading it change neither the
        study (each test's rows are rolled back) nor the report (write_report renders from it)."""
        if "report" not in self.built:
            self.built["report"] = build_report(self.study, B=100, seed=5)
        return self.built["report"]

    def test_every_section_and_table(self) -> None:
        report = self.report()
        self.assertEqual(
            set(report.tables),
            {"agreement-topic", "agreement-weighted", "agreement-subtopic", "userprefs", "discpower", "intuitiveness",
             "intuitiveness-matrix", "intuitiveness-ordering"},
        )  # fmt: skip
        html = report_service.render_html(report, standalone=True, figure_url=lambda stem, fmt: f"figures/{stem}.{fmt}")
        for section in SECTIONS:
            self.assertIn(f'<section id="{section}">', html)
        self.assertIn("Krippendorff", html)
        self.assertIn("I-rec@10", html)
        # the ad hoc baselines are scored on the same pairs and marked as such (docs/metrics.md#ad-hoc-baselines)
        for baseline in ("nDCG@10", "Q@10", "AP@10", "ERR@10", "nERR@10", "RBP@10", "EBR@10", "iRBU@10"):
            self.assertIn(f"<td>{baseline} <small>(ad hoc)</small></td>", html)
        self.assertNotIn("<td>D#-nDCG@10 <small>(ad hoc)", html)
        self.assertEqual(
            report_service.figure_stems(report),
            [f"{kind}-{level}" for level in ("topic", "weighted", "subtopic") for kind in ("metric-bars", "heatmaps")],
        )
        summary = report.summary
        self.assertEqual(summary["pairs"], {"topic": 6, "weighted": 6, "subtopic": 12})
        self.assertEqual(summary["annotators"]["finished"], 6)
        best_set = summary["best_set"]  # docs/meta.md#best-set; two topics are too few for a claim
        self.assertEqual((best_set["level"], best_set["claim"], best_set["B"], best_set["seed"]), ("topic", False, 100, None))
        self.assertEqual(best_set["measures"], [])  # no claim: nothing is named, nothing is marked in or out
        self.assertEqual(best_set["method"], "none")
        agreement = report.tables["agreement-topic"]
        self.assertEqual(list(agreement.columns[-3:]), ["entry", "p_best", "in_best_set"])
        self.assertTrue(agreement["in_best_set"].isna().all())
        self.assertEqual(set(report.timer.seconds), {"collection", "scoring", "meta", "rendering"})
        self.assertEqual(report.settings["seed"], 5)
        self.assertEqual(report.settings["options"]["B"], 100)

    @pytest.mark.slow
    def test_files_reproduce_with_the_evaluation_cli_alone(self) -> None:
        report = self.report()
        with tempfile.TemporaryDirectory() as folder:
            out = Path(folder) / "report"
            written = write_report(report, out, figure_levels=["topic", "subtopic"])
            names = {p.relative_to(out).as_posix() for p in written}
            for name in ("index.html", "report.css", "preferences.csv", "scores.tsv", "settings.json", "reproduce.sh",
                         "collection/qrels.txt", "collection/intents.tsv", "collection/runs/alpha.run", "figures/heatmaps-topic.svg",
                         "figures/metric-bars-topic.png", "figures/heatmaps-subtopic.png", "agreement-topic.csv"):  # fmt: skip
                self.assertIn(name, names)
            self.assertNotIn("figures/heatmaps-weighted.svg", names)  # drawn for the levels asked only
            self.assertFalse(list(out.rglob(".*.tmp")))
            ours = {name: (out / name).read_bytes() for name in names if name.endswith((".csv", ".tsv")) and "/" not in name}
            for name in ours:
                if name != "preferences.csv":
                    (out / name).unlink()
            run_commands(out, report.commands)
            for name, content in ours.items():
                self.assertEqual((out / name).read_bytes(), content, name)
            self.assertEqual((out / "collection/runs/alpha.run").read_text().splitlines()[0], "1 Q0 t1-d1 1 10 alpha")

    def test_no_answers(self) -> None:
        Preference.objects.all().delete()
        report = build_report(self.study, B=20, seed=1)
        self.assertEqual(report.analysis.agreement, {})
        self.assertNotIn("preferences.csv", report.inputs)
        html = report_service.render_html(report, standalone=True, figure_url=lambda stem, fmt: "")
        self.assertIn("No valid answers yet", html)

    def test_command(self) -> None:
        with tempfile.TemporaryDirectory() as folder:
            out = io.StringIO()
            call_command(
                "study_report",
                self.study.name,
                "--out",
                f"{folder}/r",
                "--bootstrap",
                "50",
                "--seed",
                "2",
                stdout=out,
                stderr=io.StringIO(),
            )
            self.assertNotIn("Best by MUP", out.getvalue())  # never one metric
            self.assertIn("No best set claimed (topic level): 2 topics, fewer than 5; highest MUP", out.getvalue())
            self.assertTrue((Path(folder) / "r" / "index.html").is_file())
            (Path(folder) / "file").write_text("x")
            for argv, message in (
                (["nope", "--out", folder], "no study named 'nope'"),
                ([self.study.slug, "--out", f"{folder}/file"], "--out needs a directory, this is a file"),
                ([self.study.slug, "--out", f"{folder}/missing/r"], "does not exist"),
            ):
                with self.assertRaisesMessage(CommandError, message):
                    call_command("study_report", *argv, stdout=io.StringIO(), stderr=io.StringIO())


class ReportPageTestCase(AnnotatorTestCase):
    """The page is for staff only: anonymous visitors and annotators are sent to the staff sign-in."""

    def setUp(self) -> None:
        super().setUp()
        cache.clear()
        self.page = reverse("study_report", args=[self.study.slug])

    def test_staff_only(self) -> None:
        login = reverse("admin:login")
        for client in (self.fresh_client(), self.client):  # anonymous; alice, an annotator of the study
            response = client.get(self.page)
            self.assertEqual(response.status_code, 302)
            self.assertTrue(response.url.startswith(login))
        user = get_user_model().objects.create_user("someone", password="pw-for-tests-1")
        other = self.fresh_client()
        other.force_login(user)
        self.assertEqual(other.get(self.page).status_code, 302)
        for name in ("study_report_figure", "study_report_file"):
            args = [self.study.slug, "heatmaps-topic", "svg"] if name == "study_report_figure" else [self.study.slug, "userprefs.csv"]
            self.assertEqual(self.fresh_client().get(reverse(name, args=args)).status_code, 302)

    def test_staff_see_the_report_and_reloads_are_cached(self) -> None:
        staff = get_user_model().objects.create_superuser("staff", "staff@example.org", "pw-for-tests")
        client = self.fresh_client()
        client.force_login(staff)
        self.answer_everything(self.client, value=2)
        with mock.patch("studyapp.services.analysis.report.build_report", wraps=report_service.build_report) as built:
            response = client.get(self.page)
            self.assertEqual(response.status_code, 200)
            for section in SECTIONS:
                self.assertContains(response, f'<section id="{section}">')
            self.assertEqual(client.get(self.page).status_code, 200)
            self.assertEqual(built.call_count, 1)  # the reload came from the cache
            svg = client.get(reverse("study_report_figure", args=[self.study.slug, "metric-bars-topic", "svg"]))
            self.assertEqual((svg.status_code, svg["Content-Type"]), (200, "image/svg+xml"))
            csv = client.get(reverse("study_report_file", args=[self.study.slug, "agreement-topic.csv"]))
            self.assertEqual(csv.status_code, 200)
            self.assertTrue(csv.content.startswith(b"measure,statistic,subset,n,value,ci_low,ci_high"))
            self.assertEqual(built.call_count, 1)
            self.answer_everything(self.bob_client, value=-1)  # new answers: a fresh report
            self.assertContains(client.get(self.page), "agreement")
            self.assertEqual(built.call_count, 2)
        self.assertEqual(client.get(reverse("study_report_figure", args=[self.study.slug, "nope", "svg"])).status_code, 404)
        self.assertEqual(client.get(reverse("study_report_file", args=[self.study.slug, "nope.csv"])).status_code, 404)
        self.assertEqual(client.get(reverse("study_report", args=["no-such-study"])).status_code, 404)
        admin = client.get(reverse("admin:studyapp_study_changelist"))
        self.assertContains(admin, self.page)
        self.assertContains(client.get(reverse("staff_study", args=[self.study.slug])), self.page)  # the dashboard links it


class ReproduceScriptTests(SimpleTestCase):
    """reproduce.sh runs with the interpreter that wrote the report unless PYTHON says otherwise, and with
    python3 when that interpreter is gone (issue 33: where the README sends you, `python` may not exist)."""

    COMMANDS = ["python -m evaluation score --x 'a b'", "python -m evaluation meta y"]

    def setUp(self) -> None:
        self.folder = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, self.folder, True)
        self.log = self.folder / "calls.log"
        (self.folder / "bin").mkdir()
        self.fake("bin/python3")

    def fake(self, name: str) -> str:
        """A stand-in interpreter that logs its name, the folder it runs in and its arguments."""
        path = self.folder / name
        path.write_text(f'#!/bin/sh\necho "{path.name} $(basename "$(pwd)") $*" >> "{self.log}"\n')
        path.chmod(0o755)
        return str(path)

    def run_script(self, python: str, **env: str) -> list[str]:
        report = SimpleNamespace(study=SimpleNamespace(name="S"), commands=self.COMMANDS)
        script = self.folder / "report" / "reproduce.sh"
        script.parent.mkdir(exist_ok=True)
        script.write_text(reproduce_script(report, python=python))
        self.log.unlink(missing_ok=True)
        path = f"{self.folder / 'bin'}:/usr/bin:/bin"
        subprocess.run(["sh", str(script)], cwd=self.folder, env={"PATH": path, **env}, check=True)  # from another folder
        return self.log.read_text().splitlines()

    def test_the_writer_by_default_then_python_then_python3(self) -> None:
        writer = self.fake("writer python")  # a space in the path: quoted
        self.assertEqual(
            self.run_script(writer), ["writer python report -m evaluation score --x a b", "writer python report -m evaluation meta y"]
        )
        self.assertEqual(self.run_script(writer, PYTHON=self.fake("other"))[0], "other report -m evaluation score --x a b")
        self.assertEqual(self.run_script(str(self.folder / "gone"))[0], "python3 report -m evaluation score --x a b")
        self.assertIn(
            f"PYTHON=${{PYTHON:-{shlex.quote(sys.executable)}}}",
            reproduce_script(SimpleNamespace(study=SimpleNamespace(name="S"), commands=[])),
        )
