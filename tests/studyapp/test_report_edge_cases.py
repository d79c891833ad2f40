"""The study report of unusual studies, end to end: the staff page, ``manage.py study_report`` and the
dashboard's preview of a study with one topic."""

from __future__ import annotations

import io
import tempfile
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.core.management import call_command
from django.urls import reverse

from studyapp.services.analysis.report import build_report
from studyapp.services.rehearsal.simulation import Plan, simulate_annotators
from tests.studyapp.base import BaseTestCase, make_toy_study

TRUTH = "D#-nDCG@10"


class OneTopicTestCase(BaseTestCase):
    """One topic: no bootstrap over topics and no discriminative power, but every other section."""

    @classmethod
    def setUpTestData(cls) -> None:
        super().setUpTestData()
        cls.one = make_toy_study("One topic", topics=["1"], items_per_annotator=3)
        simulate_annotators(cls.one, Plan(truth=TRUTH, noise=0.5, fast_share=0.0, seed=4))

    def setUp(self) -> None:
        super().setUp()
        cache.clear()
        self.staff = self.client_class()
        self.staff.force_login(get_user_model().objects.create_superuser("staff", "staff@example.org", "pw-for-tests"))

    def test_staff_page(self) -> None:
        response = self.staff.get(reverse("study_report", args=[self.one.slug]))
        self.assertEqual(response.status_code, 200)
        for section in ("summary", "preferences", "agreement", "heatmaps", "intuitiveness", "settings"):
            self.assertContains(response, f'<section id="{section}">')
        self.assertContains(response, "discriminative power needs at least 2 topics, got 1")  # said, not a 500
        self.assertContains(response, '<table class="data metrics" id="metrics-topic"')
        for stem in ("metric-bars-topic", "heatmaps-subtopic"):
            figure = self.staff.get(reverse("study_report_figure", args=[self.one.slug, stem, "svg"]))
            self.assertEqual(figure.status_code, 200, stem)
        self.assertEqual(self.staff.get(reverse("study_report_file", args=[self.one.slug, "discpower.csv"])).status_code, 404)

    def test_command(self) -> None:
        with tempfile.TemporaryDirectory() as folder:
            out, err = io.StringIO(), io.StringIO()
            call_command("study_report", self.one.slug, "--out", f"{folder}/r", "--bootstrap", "20", stdout=out, stderr=err)
            self.assertIn("index.html", out.getvalue())
            self.assertIn("note: discriminative power needs at least 2 topics, got 1", err.getvalue())
            index = (Path(folder) / "r" / "index.html").read_text()
            self.assertIn('<section id="intuitiveness">', index)
            self.assertTrue((Path(folder) / "r" / "agreement-topic.csv").is_file())

    def test_one_topic_statistics(self) -> None:
        report = build_report(self.one, B=20)
        analysis = report.analysis
        self.assertIsNone(analysis.power)
        self.assertEqual(analysis.agreement["topic"].n_topics, 1)
        self.assertEqual(report.summary["pairs"]["topic"], 3)
        self.assertNotIn("discpower", report.tables)

    def test_dashboard(self) -> None:
        response = self.staff.get(reverse("staff_study", args=[self.one.slug]))
        self.assertEqual(response.status_code, 200)
        self.assertContains(response, "Which metric agrees so far")
