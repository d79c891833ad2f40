"""Export of preference data (services.data.export, manage.py export_preferences; docs/data-dictionary.md).

Must show: the export is read as it is by ``python -m evaluation meta agreement`` (through the command
line) with the same numbers as computing from the database; CSV, JSONL and Parquet hold the same
data; pseudonyms are stable within a study and differ across studies; no platform id in the default
export.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
from django.core.management import CommandError, call_command

from evaluation.cli import main as evaluation_main
from evaluation.meta.agreement import agreement_with_users
from evaluation.meta.levels import preference_items
from studyapp.models import Annotator, Preference, Presentation
from studyapp.services.data.export import COLUMNS, ExportOptions, cell_text, export_bytes, export_rows
from studyapp.services.data.pseudonyms import pseudonym
from tests.studyapp.base import NOW, BaseTestCase, make_toy_study, toy_files
from tests.studyapp.filled import exclude, fill

NAMES = ["prolific-aa11", "prolific-bb22", "prolific-cc33", "prolific-dd44", "prolific-ee55", "prolific-ff66"]
ROOT_DIR = Path(__file__).resolve().parents[2]
MEASURES = ["alpha-nDCG@5", "D-nDCG@5", "I-rec@5", "P-IA@5"]


def run_cli(*args: str) -> str:
    """``python -m evaluation ARGS`` as its own process; its standard output (the error output when it fails)."""
    result = subprocess.run([sys.executable, "-m", "evaluation", *args], capture_output=True, text=True, cwd=ROOT_DIR)
    assert result.returncode == 0, result.stderr
    return result.stdout


def parse_csv(content: bytes) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(content.decode())))


def as_text(rows: list[dict]) -> list[dict[str, str]]:
    return [{c: cell_text(row[c]) for c in COLUMNS} for row in rows]


class ExportTestCase(BaseTestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        super().setUpTestData()
        cls.annotators = fill(cls.study, NAMES, random.Random(11), NOW)
        exclude(cls.annotators[-1], "fast: 31 decisions under 10 s")

    def export(self, *args: str) -> str:
        out, err = io.StringIO(), io.StringIO()
        call_command("export_preferences", self.study.slug, *args, stdout=out, stderr=err)
        return out.getvalue()


class ExportRowsTests(ExportTestCase):
    def test_one_row_per_valid_answer_with_the_canonical_sign(self) -> None:
        rows = list(export_rows(self.study))
        valid = Preference.objects.filter(assignment__presentation__study=self.study).exclude(
            assignment__annotator__status=Annotator.Status.EXCLUDED
        )
        self.assertEqual(len(rows), valid.count())
        self.assertGreater(len(rows), 20)
        by_key = {
            (p.assignment.presentation_id, pseudonym(self.study, p.assignment.annotator)): p
            for p in valid.select_related("assignment__annotator")
        }
        for row in rows:
            self.assertEqual(list(row), list(COLUMNS))
            self.assertLess(row["run_a"], row["run_b"])
            self.assertTrue(row["valid"])
            self.assertIs(row["check"], False)
            self.assertEqual(row["check_kind"], "")
            # value is canonical: positive = run_b preferred; as clicked it is relative to the left run
            self.assertEqual(row["value"], row["shown_value"] if row["left_run"] == row["run_a"] else -row["shown_value"])
            stored = by_key[(row["presentation"], row["annotator"])]
            self.assertEqual(row["position"], stored.assignment.position)
            self.assertEqual(row["value"], stored.canonical)
            self.assertEqual(row["shown_value"], stored.value)
            self.assertEqual(row["subtopic"] == "", row["level"] == "topic")
        self.assertEqual({r["level"] for r in rows}, {"topic", "subtopic"})
        self.assertEqual({r["left_run"] == r["run_a"] for r in rows}, {True, False})

    def test_excluded_annotators_only_on_request_with_their_reason(self) -> None:
        default = list(export_rows(self.study))
        everything = list(export_rows(self.study, ExportOptions(include_excluded=True)))
        excluded = [r for r in everything if not r["valid"]]
        self.assertEqual(len(everything), len(default) + len(excluded))
        self.assertEqual(len(excluded), self.annotators[-1].assignments.count())
        self.assertEqual({r["exclusion_reason"] for r in excluded}, {"fast: 31 decisions under 10 s"})
        self.assertEqual({r["exclusion_reason"] for r in default}, {""})

    def test_level_filter(self) -> None:
        for level in ("topic", "subtopic"):
            rows = list(export_rows(self.study, ExportOptions(level=level)))
            self.assertTrue(rows)
            self.assertEqual({r["level"] for r in rows}, {level})
        with self.assertRaisesMessage(ValueError, "level must be topic or subtopic"):
            ExportOptions(level="weighted")

    def test_empty_study_exports_a_header_only(self) -> None:
        empty = make_toy_study(name="Empty study")
        content, count = export_bytes(empty, "csv")
        self.assertEqual(count, 0)
        self.assertEqual(content.decode(), ",".join(COLUMNS) + "\n")
        content, count = export_bytes(empty, "parquet")
        self.assertEqual(pq.read_table(io.BytesIO(content)).num_rows, 0)


class FormatTests(ExportTestCase):
    def test_csv_jsonl_and_parquet_hold_the_same_data(self) -> None:
        options = ExportOptions(include_excluded=True)
        expected = as_text(list(export_rows(self.study, options)))
        csv_rows = parse_csv(export_bytes(self.study, "csv", options)[0])
        jsonl_rows = [json.loads(line) for line in export_bytes(self.study, "jsonl", options)[0].decode().splitlines()]
        parquet = pq.read_table(io.BytesIO(export_bytes(self.study, "parquet", options)[0]))
        self.assertEqual(parquet.schema.names, list(COLUMNS))
        self.assertEqual(str(parquet.schema.field("value").type), "int64")
        self.assertEqual(str(parquet.schema.field("answered_at").type), "timestamp[us, tz=UTC]")
        self.assertEqual(csv_rows, expected)
        self.assertEqual([{c: cell_text(v) for c, v in row.items()} for row in jsonl_rows], expected)
        self.assertEqual(as_text(parquet.to_pylist()), expected)
        self.assertIsInstance(jsonl_rows[0]["value"], int)
        self.assertIsInstance(jsonl_rows[0]["valid"], bool)

    def test_command_writes_stdout_and_files_atomically(self) -> None:
        self.assertEqual(parse_csv(self.export().encode()), as_text(list(export_rows(self.study))))
        lines = self.export("--format", "jsonl", "--level", "topic").splitlines()
        self.assertEqual({json.loads(line)["level"] for line in lines}, {"topic"})
        folder = Path(tempfile.mkdtemp())
        target = folder / "prefs.parquet"
        err = io.StringIO()
        call_command("export_preferences", self.study.name, "--format", "parquet", "-o", str(target), stderr=err)
        self.assertEqual(pq.read_table(target).num_rows, len(list(export_rows(self.study))))
        self.assertIn("exported", err.getvalue())
        self.assertEqual([p.name for p in folder.iterdir()], ["prefs.parquet"])  # no temporary file left

    def test_command_errors_are_one_line(self) -> None:
        cases = [
            ([self.study.slug, "--format", "parquet"], "give -o FILE"),
            (["no-such-study"], "no study named 'no-such-study'"),
            ([self.study.slug, "-o", "/nonexistent-folder/x.csv"], "does not exist"),
            ([self.study.slug, "-o", tempfile.gettempdir()], "is a folder"),
        ]
        for args, message in cases:
            with self.subTest(args=args), self.assertRaisesMessage(CommandError, message) as caught:
                call_command("export_preferences", *args, stdout=io.StringIO(), stderr=io.StringIO())
            self.assertNotIn("\n", str(caught.exception))

    def test_check_items_are_left_out_unless_asked(self) -> None:
        study = make_toy_study(name="With checks", check_share=0.34)
        fill(study, ["c1", "c2"], random.Random(3), NOW)
        default = list(export_rows(study))
        with_checks = list(export_rows(study, ExportOptions(include_checks=True)))
        checks = [r for r in with_checks if r["check"]]
        self.assertTrue(checks)
        self.assertEqual(len(with_checks), len(default) + len(checks))
        self.assertTrue(all(r["check"] is True for r in checks))
        self.assertTrue({r["check_kind"] for r in checks} <= {Presentation.Kind.IDENTICAL, Presentation.Kind.DEGRADED})
        self.assertTrue(all(r["check_kind"] == "" for r in with_checks if not r["check"]))
        self.assertTrue(all(r["run_a"] == r["run_b"] for r in checks))
        self.assertFalse(any(r["check"] for r in default))


class PseudonymTests(ExportTestCase):
    def test_stable_within_a_study_and_different_across_studies(self) -> None:
        first = {r["annotator"] for r in export_rows(self.study)}
        again = {r["annotator"] for r in export_rows(self.study)}
        self.assertEqual(first, again)
        self.assertEqual(len(first), len(NAMES) - 1)
        other = make_toy_study(name="Other study")
        fill(other, NAMES[:2], random.Random(5), NOW)
        in_other = {r["annotator"] for r in export_rows(other)}
        self.assertEqual(len(in_other), 2)
        self.assertFalse(in_other & first)
        self.assertNotEqual(self.study.pseudonym_secret, other.pseudonym_secret)
        # same participant, same pseudonym on every answer of theirs
        alice = self.annotators[0]
        rows = [r for r in export_rows(self.study) if r["annotator"] == pseudonym(self.study, alice)]
        self.assertEqual(len(rows), alice.assignments.count())

    def test_no_platform_id_in_the_default_export(self) -> None:
        for fmt in ("csv", "jsonl", "parquet"):
            content, _ = export_bytes(self.study, fmt)
            for annotator in self.annotators:
                for secret in (annotator.external_id, annotator.pseudonym, annotator.token):
                    self.assertNotIn(secret.encode(), content, f"{fmt} contains {secret!r}")


class RoundTripTests(ExportTestCase):
    """export -> python -m evaluation meta agreement (a subprocess) == agreement computed from the database."""

    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        cls.folder = Path(tempfile.mkdtemp(prefix="studyapp-roundtrip-"))
        cls.addClassCleanup(shutil.rmtree, cls.folder, True)
        # the toy runs' scores (files only, no database): one `python -m evaluation score` process for both tests
        f = toy_files()
        cls.scores = cls.folder / "scores.tsv"
        runs = [arg for name in ("alpha", "bravo", "charlie") for arg in ("--run", str(f[name]))]
        run_cli(
            "score", "--qrels", str(f["qrels"]), "--intents", str(f["intents"]), *runs,
            "--measures", *MEASURES, "--per-topic", "--per-subtopic", "-o", str(cls.scores),
        )  # fmt: skip

    def votes_from_database(self) -> pd.DataFrame:
        rows = []
        answers = Preference.objects.filter(assignment__presentation__study=self.study, assignment__presentation__kind="pair").exclude(
            assignment__annotator__status=Annotator.Status.EXCLUDED
        )
        for answer in answers.select_related("assignment__presentation__topic", "assignment__presentation__subtopic",
                                             "assignment__presentation__run_a", "assignment__presentation__run_b"):  # fmt: skip
            p = answer.assignment.presentation
            subtopic = p.subtopic.number if p.subtopic_id else ""
            rows.append(
                (p.level, p.topic.topic_id, subtopic, p.run_a.name, p.run_b.name, str(answer.assignment.annotator_id), answer.canonical, 0)
            )
        return pd.DataFrame(rows, columns=["level", "topic", "subtopic", "run_a", "run_b", "annotator", "value", "line"])

    def test_agreement_from_the_export_equals_agreement_from_the_database(self) -> None:
        folder, scores = self.folder, self.scores
        score_frame = pd.read_csv(scores, sep="\t", dtype={"topic": str})
        votes = self.votes_from_database()
        for level in ("topic", "subtopic"):
            with self.subTest(level=level):
                exported = folder / f"prefs-{level}.csv"
                call_command("export_preferences", self.study.slug, "--level", level, "-o", str(exported), stderr=io.StringIO())
                table = pd.read_csv(io.StringIO(run_cli("meta", "agreement", "--scores", str(scores), "--preferences", str(exported),
                                                             "--level", level)), sep="\t")  # fmt: skip
                direct = agreement_with_users(preference_items(votes, level), score_frame, MEASURES).table
                merged = table.merge(direct, on=["measure", "statistic", "subset"], suffixes=("_cli", "_db"))
                self.assertEqual(len(merged), len(direct))
                self.assertEqual(len(merged), len(table))
                self.assertTrue((merged["n_cli"] == merged["n_db"]).all())
                pd.testing.assert_series_equal(merged["value_cli"], merged["value_db"], check_names=False, rtol=1e-9)
                n_all = merged[(merged["statistic"] == "tau") & (merged["subset"] == "all")]["n_cli"].iloc[0]
                self.assertEqual(n_all, len(preference_items(votes, level)))
                self.assertGreater(n_all, 3)

    def test_jsonl_and_parquet_exports_give_the_agreement_table_of_the_csv(self) -> None:
        """The three formats read by the command line's own entry point (in this process: the test above crosses
        the process boundary) give the same table, byte for byte."""
        tables = {}
        for fmt in ("csv", "jsonl", "parquet"):
            exported = self.folder / f"prefs.{fmt}"
            call_command("export_preferences", self.study.slug, "--format", fmt, "-o", str(exported), stderr=io.StringIO())
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                code = evaluation_main(
                    ["meta", "agreement", "--scores", str(self.scores), "--preferences", str(exported), "--level", "topic"]
                )
            self.assertEqual(code, 0, fmt)
            tables[fmt] = out.getvalue()
        self.assertGreater(len(tables["csv"].splitlines()), 10)
        self.assertEqual(tables["jsonl"], tables["csv"])
        self.assertEqual(tables["parquet"], tables["csv"])


def test_data_dictionary_describes_every_column_in_order() -> None:
    text = (ROOT_DIR / "docs" / "data-dictionary.md").read_text()
    table = text.split("## Columns", 1)[1].split("\n## ", 1)[0]
    documented = [line.split("|")[1].strip().strip("`") for line in table.splitlines() if line.startswith("| `")]
    assert documented == list(COLUMNS)
