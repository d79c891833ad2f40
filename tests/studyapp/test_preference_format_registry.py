"""The preference-format registry is the one place a format is added (issue 25): a dummy format
registered here is offered by ``export_preferences --format``, listed and served by the staff
dashboard's downloads, read back by ``evaluation``'s preference reader and by the import."""

from __future__ import annotations

import io
import random
import tempfile
from collections.abc import Iterator
from pathlib import Path

from django.core.management import call_command
from django.urls import reverse

from evaluation.exceptions import FormatError
from evaluation.io.preference_formats import PreferenceFormat, Records, cell_text, register, unregister
from evaluation.io.preferences import read_preferences
from studyapp.services.data.export import COLUMNS, export_rows
from studyapp.services.data.preference_import import import_preferences
from tests.studyapp.base import NOW, BaseTestCase, make_toy_study
from tests.studyapp.filled import fill
from tests.studyapp.test_staff_dashboard import staff_client


def write_pipes(rows, columns, stream) -> int:
    """'Pipe-separated values': a header line, then one line per row."""
    names = [name for name, _ in columns]
    stream.write("|".join(names) + "\n")
    count = 0
    for row in rows:
        stream.write("|".join(cell_text(row[c]) for c in names) + "\n")
        count += 1
    return count


def read_pipes(path: Path) -> Records:
    lines = path.read_text(encoding="utf-8").splitlines()
    if not lines:
        raise FormatError(path, 0, "file is empty")
    header = lines[0].split("|")

    def rows() -> Iterator[tuple[int, dict[str, str]]]:
        for number, line in enumerate(lines[1:], start=2):
            yield number, dict(zip(header, line.split("|"), strict=True))

    return Records(header, 1, rows())


PIPES = PreferenceFormat("psv", (".psv",), "text/x-psv; charset=utf-8", write_pipes, read_pipes, lambda head: False, label="pipes")


class DummyFormatTests(BaseTestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        super().setUpTestData()
        fill(cls.study, ["p1", "p2", "p3"], random.Random(7), NOW)

    def setUp(self) -> None:
        register(PIPES)
        self.addCleanup(unregister, "psv")
        self.folder = Path(tempfile.mkdtemp())

    def test_export_command_writes_it_to_stdout_and_to_a_file(self) -> None:
        out = io.StringIO()
        call_command("export_preferences", self.study.slug, "--format", "psv", stdout=out, stderr=io.StringIO())
        lines = out.getvalue().splitlines()
        self.assertEqual(lines[0], "|".join(COLUMNS))
        self.assertEqual(len(lines) - 1, len(list(export_rows(self.study))))
        target = self.folder / "prefs.psv"
        call_command("export_preferences", self.study.slug, "--format", "psv", "-o", str(target), stderr=io.StringIO())
        self.assertEqual(target.read_text(), out.getvalue())

    def test_dashboard_lists_and_serves_it(self) -> None:
        staff = staff_client()
        page = staff.get(reverse("staff_study", args=[self.study.slug])).content.decode()
        link = reverse("staff_study_export", args=[self.study.slug, "psv"])
        self.assertIn(f'href="{link}"', page)
        response = staff.get(link)
        self.assertEqual(response.status_code, 200)
        self.assertEqual(response["Content-Type"], "text/x-psv; charset=utf-8")
        self.assertIn(f'filename="{self.study.slug}-preferences.psv"', response["Content-Disposition"])
        self.assertEqual(response.content.decode().splitlines()[0], "|".join(COLUMNS))

    def test_evaluation_reads_it_like_the_csv_and_the_import_takes_it(self) -> None:
        for fmt in ("csv", "psv"):
            call_command(
                "export_preferences", self.study.slug, "--format", fmt, "-o", str(self.folder / f"prefs.{fmt}"), stderr=io.StringIO()
            )
        from_pipes = read_preferences(self.folder / "prefs.psv")
        from_csv = read_preferences(self.folder / "prefs.csv")
        self.assertGreater(len(from_csv), 10)
        self.assertEqual(from_pipes.to_dict("records"), from_csv.to_dict("records"))
        copy = make_toy_study(name="Copy psv")
        result = import_preferences(copy, self.folder / "prefs.psv")
        self.assertEqual(result.answers, len(from_csv))

    def test_gone_once_unregistered(self) -> None:
        unregister("psv")
        staff = staff_client()
        self.assertEqual(staff.get(reverse("staff_study_export", args=[self.study.slug, "psv"])).status_code, 404)
        self.assertNotIn("psv", staff.get(reverse("staff_study", args=[self.study.slug])).content.decode())
