"""Import of answers collected elsewhere (services.data.preference_import, manage.py import_preferences).

The export's own files import back with the same data; every bad row is a one-line ``file:line``
error and nothing is stored (all or nothing).
"""

from __future__ import annotations

import io
import random
import tempfile
from collections import Counter
from pathlib import Path

from django.core.management import CommandError, call_command

from studyapp.exceptions import ImportFailed
from studyapp.models import Annotator, Preference
from studyapp.services.data.export import COLUMNS, ExportOptions, export_bytes, export_rows
from studyapp.services.data.preference_import import import_preferences
from tests.studyapp.base import NOW, BaseTestCase, make_toy_study
from tests.studyapp.filled import exclude, fill

HEADER = "level,topic,subtopic,run_a,run_b,value,annotator"
COMPARED = [c for c in COLUMNS if c not in ("study", "presentation", "annotator", "position")]


class ImportTests(BaseTestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        super().setUpTestData()
        cls.annotators = fill(cls.study, ["p1", "p2", "p3", "p4"], random.Random(2), NOW)
        exclude(cls.annotators[0], "fast: 40 decisions under 10 s")
        cls.target = make_toy_study(name="Target study")

    def setUp(self) -> None:
        super().setUp()
        self.folder = Path(tempfile.mkdtemp())

    def write(self, text: str, name: str = "answers.csv") -> Path:
        path = self.folder / name
        path.write_text(text)
        return path

    def stored(self) -> int:
        return Preference.objects.filter(assignment__annotator__study=self.target).count()

    def assert_refused(self, text: str, message: str, name: str = "answers.csv") -> None:
        path = self.write(text, name)
        before = (self.stored(), Annotator.objects.filter(study=self.target).count())
        with self.assertRaises(ImportFailed) as caught:
            import_preferences(self.target, path)
        self.assertIn(message, str(caught.exception))
        self.assertNotIn("\n", str(caught.exception))
        self.assertEqual((self.stored(), Annotator.objects.filter(study=self.target).count()), before)

    def test_an_export_imports_back_with_the_same_data(self) -> None:
        for fmt in ("csv", "jsonl", "parquet"):
            with self.subTest(fmt=fmt):
                target = make_toy_study(name=f"Copy {fmt}")
                options = ExportOptions(include_excluded=True)
                path = self.folder / f"export.{fmt}"
                path.write_bytes(export_bytes(self.study, fmt, options)[0])
                result = import_preferences(target, path)
                original = list(export_rows(self.study, options))
                copied = list(export_rows(target, options))
                self.assertEqual((result.answers, result.annotators, result.excluded), (len(original), 4, 1))
                key = lambda row: (row["answered_at"], row["level"], row["topic"], row["subtopic"], row["run_a"], row["run_b"])  # noqa: E731
                self.assertEqual([[r[c] for c in COMPARED] for r in sorted(copied, key=key)],
                                 [[r[c] for c in COMPARED] for r in sorted(original, key=key)])  # fmt: skip
                # the same people answered the same items, under this study's pseudonyms
                pairs = lambda rows: Counter(Counter(r["annotator"] for r in rows).values())  # noqa: E731
                self.assertEqual(pairs(copied), pairs(original))
                self.assertFalse({r["annotator"] for r in copied} & {r["annotator"] for r in original})
                excluded = Annotator.objects.get(study=target, status=Annotator.Status.EXCLUDED)
                self.assertEqual(excluded.exclusion_reason, "fast: 40 decisions under 10 s")

    def test_check_items_import_back_from_new_and_older_exports(self) -> None:
        source = make_toy_study(name="Checks source", check_share=0.34)
        fill(source, ["k1", "k2"], random.Random(4), NOW)
        options = ExportOptions(include_checks=True)
        original = list(export_rows(source, options))
        self.assertTrue(any(r["check"] for r in original))
        text = export_bytes(source, "csv", options)[0].decode()
        header, *lines = text.splitlines()
        names = header.split(",")
        at, kind_at = names.index("check"), names.index("check_kind")
        older = [",".join(c for n, c in enumerate(header.split(",")) if n != kind_at)]  # before check_kind: check held the kind
        for line in lines:
            cells = line.split(",")
            cells[at] = cells[kind_at]
            older.append(",".join(c for n, c in enumerate(cells) if n != kind_at))
        for name, content in (("new.csv", text), ("older.csv", "\n".join(older) + "\n")):
            with self.subTest(file=name):
                target = make_toy_study(name=f"Checks {name}", check_share=0.34)
                path = self.write(content, name)
                self.assertEqual(import_preferences(target, path).answers, len(original))
                copied = list(export_rows(target, options))
                kinds = lambda rows: Counter((r["check"], r["check_kind"], r["run_a"], r["run_b"], r["value"]) for r in rows)  # noqa: E731
                self.assertEqual(kinds(copied), kinds(original))

    def test_minimal_columns_and_pairs_given_the_other_way_round(self) -> None:
        path = self.write(f"{HEADER}\ntopic,1,,bravo,alpha,3,x1\nsubtopic,1,1,alpha,bravo,-2,x1\ntopic,1,,alpha,bravo,1,x2\n")
        result = import_preferences(self.target, path, now=NOW)
        self.assertEqual((result.answers, result.annotators, result.excluded), (3, 2, 0))
        rows = {(r["annotator"], r["level"]): r for r in export_rows(self.target)}
        values = sorted((r["level"], r["run_a"], r["run_b"], r["value"], r["left_run"]) for r in rows.values())
        self.assertEqual(values, [("subtopic", "alpha", "bravo", -2, "alpha"), ("topic", "alpha", "bravo", -3, "alpha"),
                                  ("topic", "alpha", "bravo", 1, "alpha")])  # fmt: skip
        self.assertEqual(Annotator.objects.filter(study=self.target, status=Annotator.Status.FINISHED).count(), 2)

    def test_bad_rows_are_file_line_errors_and_nothing_is_stored(self) -> None:
        good = "topic,1,,alpha,bravo,1,x1\n"
        cases = [
            (f"{HEADER}\n{good}topic,7,,alpha,bravo,1,x1\n", ":3: the study has no topic-level item 7 alpha vs bravo"),
            (f"{HEADER}\n{good}topic,1,,alpha,bravo,5,x2\n", ":3: value must be in [-4, 4], got 5"),
            (f"{HEADER}\n{good}topic,1,,alpha,bravo,+x,x2\n", ":3: value must be an integer, got '+x'"),
            (f"{HEADER}\n{good}topic,1,,alpha,delta,1,x2\n", ":3: run 'delta' is not a run of the study"),
            (f"{HEADER}\n{good}topic,1,,alpha,alpha,1,x2\n", ":3: run_a and run_b are the same run 'alpha'"),
            (f"{HEADER}\n{good}page,1,,alpha,bravo,1,x2\n", ":3: unknown level 'page'"),
            (f"{HEADER}\n{good}subtopic,1,,alpha,bravo,1,x2\n", ":3: subtopic-level row without a subtopic"),
            (f"{HEADER}\n{good}subtopic,1,3,alpha,bravo,1,x2\n", ":3: the study has no subtopic-level item 1/3 alpha vs bravo"),
            (f"{HEADER}\n{good}topic,1,,bravo,alpha,1,x1\n", ":3: annotator 'x1' answered this item twice (first on line 2)"),
            (f"{HEADER}\n{good}topic,1,,alpha,bravo,1,\n", ":3: annotator must be 1 to 100 characters"),
            (f"{HEADER}\n{good}topic,1,,alpha,bravo,1\n", ":3: expected 7 fields, found 6"),
            ("level,topic,run_a,run_b,value\ntopic,1,alpha,bravo,1\n", ":2: lacks columns subtopic, annotator"),
            (f"{HEADER},left_run,shown_value\ntopic,1,,alpha,bravo,2,x1,bravo,2\n", ":2: shown_value 2 with bravo on the left"),
            (f"{HEADER},left_run\ntopic,1,,alpha,bravo,2,x1,charlie\n", ":2: left_run 'charlie' is neither run of the pair"),
            (f"{HEADER},answered_at\ntopic,1,,alpha,bravo,2,x1,yesterday\n", ":2: answered_at must be an ISO 8601 time"),
            (f"{HEADER},client_ms\ntopic,1,,alpha,bravo,2,x1,-5\n", ":2: client_ms must be in [0, 2147483647], got -5"),
            (f"{HEADER},server_seconds\ntopic,1,,alpha,bravo,2,x1,fast\n", ":2: server_seconds must be a number"),
            (
                f"{HEADER},valid\n{good[:-1]},true\ntopic,2,,alpha,bravo,1,x1,false\n",
                ":3: annotator 'x1' is marked valid on line 2 but not here",
            ),
            (f"{HEADER},valid\n{good[:-1]},maybe\n", ":2: valid must be true or false, got 'maybe'"),
            (f"{HEADER},check\ntopic,1,,alpha,alpha,1,x1,identical\n", ":2: the study has no topic-level check item 1 alpha vs alpha"),
            (
                f"{HEADER},check,check_kind\ntopic,1,,alpha,alpha,1,x1,true,identical\n",
                ":2: the study has no topic-level check item 1 alpha vs alpha",
            ),
            (f"{HEADER},check,check_kind\ntopic,1,,alpha,alpha,1,x1,true,\n", ":2: a check item (check = true) needs its check_kind"),
            (f"{HEADER},check,check_kind\ntopic,1,,alpha,bravo,1,x1,false,degraded\n", ":2: check_kind 'degraded' on a regular item"),
            (f"{HEADER},check,check_kind\ntopic,1,,alpha,bravo,1,x1,maybe,\n", ":2: check must be true or false, got 'maybe'"),
            (f"{HEADER},check,check_kind\ntopic,1,,alpha,alpha,1,x1,true,broken\n", ":2: unknown check kind 'broken'"),
            (f"{HEADER}\n", "no answers"),
            ("", "file is empty"),
        ]
        for text, message in cases:
            with self.subTest(message=message):
                self.assert_refused(text, message)

    def test_jsonl_errors_name_the_line(self) -> None:
        self.assert_refused('{"level": "topic", "topic": "1", "subtopic": "", "run_a": "alpha", "run_b": "bravo", "value": 1, "annotator": "j"}\n'
                            "not json\n", "answers.jsonl:2: not a JSON object", name="answers.jsonl")  # fmt: skip

    def test_importing_twice_is_refused(self) -> None:
        path = self.write(f"{HEADER}\ntopic,1,,alpha,bravo,1,x1\n")
        import_preferences(self.target, path)
        self.assert_refused(f"{HEADER}\ntopic,1,,alpha,bravo,1,x1\n", ":2: annotator 'x1' is already in study 'Target study'")

    def test_an_adaptive_study_takes_no_imported_answers(self) -> None:
        """They were stored beside the draws (660 answers for 600 slots in a try), and the design-weighted estimates
        read them as if the study's draws had offered them."""
        adaptive = make_toy_study(name="Adaptive target", allocation="adaptive")
        path = self.write(f"{HEADER}\ntopic,1,,alpha,bravo,1,x1\n")
        with self.assertRaises(ImportFailed) as caught:
            import_preferences(adaptive, path)
        self.assertIn(
            "study 'Adaptive target' uses adaptive allocation: answers collected elsewhere were not offered", str(caught.exception)
        )
        self.assertIn('"allocation": "uniform"', str(caught.exception))
        self.assertEqual(Preference.objects.filter(assignment__annotator__study=adaptive).count(), 0)
        with self.assertRaisesMessage(CommandError, "uses adaptive allocation"):
            call_command("import_preferences", adaptive.slug, str(path), stdout=io.StringIO())

    def test_command_reports_and_fails_with_one_line(self) -> None:
        path = self.write(f"{HEADER}\ntopic,1,,alpha,bravo,1,x1\ntopic,2,,alpha,charlie,-4,x1\n")
        out = io.StringIO()
        call_command("import_preferences", self.target.slug, str(path), stdout=out)
        self.assertIn("imported 2 answers of 1 annotator (0 excluded) into study 'Target study'", out.getvalue())
        bad = self.write(f"{HEADER}\ntopic,1,,alpha,bravo,9,x2\n", "bad.csv")
        with self.assertRaisesMessage(CommandError, f"{bad}:2: value must be in [-4, 4], got 9"):
            call_command("import_preferences", self.target.slug, str(bad), stdout=io.StringIO())
        with self.assertRaisesMessage(CommandError, "missing.csv: no such file"):
            call_command("import_preferences", self.target.slug, str(self.folder / "missing.csv"), stdout=io.StringIO())
