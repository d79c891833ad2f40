"""Must show (issue 33): the preference export has one typed schema in every registered format.

An export with every kind of row (topic and subtopic level, check items, an excluded annotator) is
written in each format of the registry and read back by the library (``evaluation.io.preference_table
.read_export``): every file gives the same DataFrame, typed as the data dictionary says (ids as
strings, nullable integers and booleans, UTC times), equal to the rows the study app exported.
"""

from __future__ import annotations

import random
import tempfile
from pathlib import Path

import pandas as pd

from evaluation.exceptions import FormatError
from evaluation.io.preference_formats import format_names, get_format
from evaluation.io.preference_table import EXPORT_COLUMNS, PANDAS_DTYPES, read_export, with_nulls
from studyapp.services.data.export import ExportOptions, export_rows, write_export
from tests.studyapp.base import NOW, BaseTestCase, make_toy_study
from tests.studyapp.filled import exclude, fill

EVERYTHING = ExportOptions(include_excluded=True, include_checks=True)


class ExportRoundTripTests(BaseTestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        super().setUpTestData()
        cls.study = make_toy_study(name="Round trip", check_share=0.34)
        people = fill(cls.study, ["r1", "r2", "r3"], random.Random(5), NOW)
        exclude(people[-1], "fast: 31 decisions under 10 s")

    def expected(self) -> pd.DataFrame:
        rows = list(with_nulls(export_rows(self.study, EVERYTHING), EXPORT_COLUMNS))
        data = {
            name: pd.Series(
                pd.to_datetime([r[name] for r in rows], utc=True) if kind == "timestamp" else [r[name] for r in rows],
                dtype=PANDAS_DTYPES[kind],
            )
            for name, kind in EXPORT_COLUMNS
        }
        return pd.DataFrame(data)

    def test_every_registered_format_reads_back_to_the_same_typed_frame(self) -> None:
        expected = self.expected()
        self.assertEqual(set(expected["level"]), {"topic", "subtopic"})
        self.assertTrue(expected["check"].any() and not expected["check"].all())
        self.assertTrue(expected["check_kind"].notna().any() and expected["check_kind"].isna().any())
        self.assertFalse(expected["valid"].all())
        folder = Path(tempfile.mkdtemp())
        self.assertGreaterEqual(set(format_names()), {"csv", "jsonl", "parquet"})
        for name in format_names():
            with self.subTest(format=name):
                path = folder / f"export{get_format(name).suffixes[0]}"
                self.assertEqual(write_export(self.study, name, path, EVERYTHING), len(expected))
                got = read_export(path)
                pd.testing.assert_frame_equal(got, expected)
                dtypes = {c: str(got[c].dtype) for c in ("topic", "subtopic", "check", "check_kind")}
                self.assertEqual(dtypes, {"topic": "string", "subtopic": "string", "check": "boolean", "check_kind": "string"})
                self.assertFalse(got["check"].isna().any())  # never null: False on regular items
                self.assertTrue((got["check"] == got["check_kind"].notna()).all())
                self.assertTrue(got.loc[got["level"] == "topic", "subtopic"].isna().all())  # nulls, not "" or NaN
                self.assertTrue(got.loc[got["valid"], "exclusion_reason"].isna().all())
                self.assertEqual(str(got["answered_at"].dtype), "datetime64[us, UTC]")

    def test_a_cell_of_the_wrong_type_names_its_line(self) -> None:
        folder = Path(tempfile.mkdtemp())
        path = folder / "bad.csv"
        write_export(self.study, "csv", path)
        lines = path.read_text().splitlines()
        cells = lines[2].split(",")
        cells[[n for n, _ in EXPORT_COLUMNS].index("value")] = "lots"
        lines[2] = ",".join(cells)
        path.write_text("\n".join(lines) + "\n")
        with self.assertRaisesMessage(FormatError, f"{path}:3: value: 'lots' is not of type int"):
            read_export(path)
