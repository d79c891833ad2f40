"""Spreadsheet-safe CSV (evaluation.io.spreadsheet) in every CSV the app writes, and safe file names
(services.data.file_names): a run named ``../../../../x`` stays inside ``study_report --out``."""

from __future__ import annotations

import csv
import io
import tempfile
from pathlib import Path

import pandas as pd
from django.contrib.auth import get_user_model
from django.core.management import call_command

from evaluation.io.spreadsheet import escape_cell, escape_frame
from studyapp.models import Annotator, Run
from studyapp.services.analysis.report import build_report, write_report
from studyapp.services.data.export import ExportOptions, download_name, export_bytes
from studyapp.services.data.file_names import inside, safe_name
from studyapp.services.data.payments import payments_csv
from studyapp.services.quality import control
from tests.studyapp.base import BaseTestCase
from tests.studyapp.filled import fill


class EscapeCellTest(BaseTestCase):
    def test_formula_prefixes_get_an_apostrophe(self) -> None:
        for text in (
            "=2+5",
            "+cmd",
            "@SUM(9)",
            "\t=1",
            "\r=1",
            '=HYPERLINK("http://x","y")',
            "-2+3+cmd|' /C calc'!A0",
            "-A1",
            "=",
            "@",
            "-/- (0)",
            "-2+3",
            "-1+1",
        ):
            self.assertEqual(escape_cell(text), "'" + text, text)

    def test_numbers_and_plain_text_are_kept(self) -> None:
        for text in (
            "-3",
            "+4",
            "-0.25",
            "1e-05",
            "-1.5e-3",
            "-inf",
            "nan",
            "",
            "alpha",
            "2026-01-05T12:00:00+00:00",
            "a=b",
            "-",
            "+",
        ):
            self.assertEqual(escape_cell(text), text, text)

    def test_frames_escape_text_cells_and_headers_only(self) -> None:
        frame = pd.DataFrame({"name": ["=1+1", "ok"], "value": [-0.5, 2.0], "=h": ["@x", "-1"]})
        out = escape_frame(frame)
        self.assertEqual(list(out["name"]), ["'=1+1", "ok"])
        self.assertEqual(list(out["value"]), [-0.5, 2.0])
        self.assertEqual(list(out.columns), ["name", "value", "'=h"])
        self.assertEqual(list(out["'=h"]), ["'@x", "-1"])
        self.assertEqual(list(frame["name"]), ["=1+1", "ok"])  # the input is left as it was


class CsvFilesTest(BaseTestCase):
    """Formula-like text reaching the export, the payments file and the report's tables is defused."""

    def setUp(self) -> None:
        super().setUp()
        self.annotators = fill(self.study, ["@SUM(9)", "p2", "p3"], self.rng, self.now)
        staff = get_user_model().objects.create_superuser("boss", password="x" * 12)
        control.exclude(self.annotators[1], staff=staff, reason='=HYPERLINK("http://evil","click")', rule="staff")
        Run.objects.filter(name="alpha").update(name="=2+5")

    def rows(self, text: str) -> list[dict[str, str]]:
        return list(csv.DictReader(io.StringIO(text)))

    def test_preference_export(self) -> None:
        content, count = export_bytes(self.study, "csv", ExportOptions(include_excluded=True))
        rows = self.rows(content.decode())
        self.assertEqual(len(rows), count)
        run_cells = {r["run_a"] for r in rows} | {r["left_run"] for r in rows}
        self.assertIn("'=2+5", run_cells)
        self.assertNotIn("=2+5", run_cells)
        reasons = {r["exclusion_reason"] for r in rows if r["valid"] == "false"}
        self.assertTrue(reasons and all(r.startswith("'=HYPERLINK") for r in reasons), reasons)
        self.assertTrue(any(r["value"].startswith("-") for r in rows))  # negative answers stay numbers
        self.assertTrue(all(not r["value"].startswith("'") for r in rows))

    def test_payments(self) -> None:
        rows = self.rows(payments_csv(self.study))
        self.assertIn("'@SUM(9)", {r["platform_id"] for r in rows})
        self.assertTrue(any(r["excluded_by"].startswith("staff boss") for r in rows))

    def test_report_tables(self) -> None:
        Annotator.objects.filter(pk=self.annotators[1].pk).update(exclusion_reason="")
        report = build_report(self.study, B=20)
        with tempfile.TemporaryDirectory() as folder:
            write_report(report, folder, figure_levels=[])  # the CSV files are the point; no figure is drawn
            for path in Path(folder).glob("*.csv"):
                for line in csv.reader(path.open()):
                    for cell in line:
                        self.assertFalse(cell[:1] in ("=", "+", "@") and not cell.startswith("'"), f"{path.name}: {cell!r}")
            self.assertIn("'=2+5", Path(folder, "preferences.csv").read_text())


class FileNameTest(BaseTestCase):
    def test_safe_names(self) -> None:
        self.assertEqual(safe_name("run-a_1.2"), "run-a_1.2")
        for bad in ("../../../../x", "a/b", "..", ".", "", 'x"; filename=evil', "a\nb", "é"):
            name = safe_name(bad)
            self.assertRegex(name, r"^[A-Za-z0-9][A-Za-z0-9._-]*$", bad)
        self.assertNotEqual(safe_name("a/b"), safe_name("a_b"))
        with tempfile.TemporaryDirectory() as folder:
            with self.assertRaises(ValueError):
                inside(Path(folder), "../escape.txt")
            self.assertEqual(inside(Path(folder), "sub/ok.txt"), Path(folder).resolve() / "sub" / "ok.txt")

    def test_download_names(self) -> None:
        self.study.slug = 'evil"\r\nSet-Cookie: x'
        self.assertRegex(download_name(self.study, "csv"), r"^[A-Za-z0-9._-]+$")

    def test_study_report_keeps_a_hostile_run_name_inside_the_folder(self) -> None:
        fill(self.study, ["p1", "p2"], self.rng, self.now)
        Run.objects.filter(name="alpha").update(name="../../../../x")
        with tempfile.TemporaryDirectory() as parent:
            out = Path(parent, "deep", "er", "report")
            out.parent.mkdir(parents=True)
            call_command("study_report", self.study.slug, "--out", str(out), "--bootstrap", "20", stdout=io.StringIO())
            outside = [p for p in Path(parent).rglob("*") if p.is_file() and not p.is_relative_to(out)]
            self.assertEqual(outside, [])
            runs = sorted(p.name for p in (out / "collection" / "runs").iterdir())
            self.assertEqual(len(runs), 3)
            self.assertTrue(any(name.startswith("x-") for name in runs), runs)
            self.assertIn("x-", (out / "reproduce.sh").read_text())
