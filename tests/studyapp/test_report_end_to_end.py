"""End to end on the demo collection: simulated annotators through the real pages, following a truth
metric, 10% fast cheaters; quality control; the report. The cheaters are excluded, the truth metric
is first by MUP, every section is there, and the report's numbers are those of ``python -m
evaluation meta agreement`` run on the exported preferences and the report's scores."""

from __future__ import annotations

import io
import os
import tempfile
from pathlib import Path

import pytest
from django.core.management import call_command
from django.test import TestCase

from evaluation.cli import main as evaluation_main
from studyapp.models import Annotator
from studyapp.services.analysis.report import build_report, render_html, write_report
from studyapp.services.design.study_config import parse_config
from studyapp.services.design.study_design import create_study
from studyapp.services.rehearsal.demo import load_demo
from studyapp.services.rehearsal.simulation import Plan, simulate_annotators

TRUTH = "D#-nDCG@10"
B, SEED = 200, 3
CONFIG = {
    "runs": ["demo-diversity", "demo-mixed", "demo-random", "demo-relevance", "demo-weak"],
    "topic_rule": {"count": 4, "min_subtopics": 3},
    "subtopics_per_topic": 3,
    "annotators_per_presentation": 2,
    "items_per_annotator": 20,
    "fast_threshold_seconds": 10,
    "fast_limit": 10,
    "check_share": 0.1,
}


@pytest.mark.slow
class EndToEndTestCase(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        load_demo()
        cls.study = create_study("demo", "End to end", parse_config(CONFIG)).study
        cls.result = simulate_annotators(cls.study, Plan(truth=TRUTH, noise=0.1, fast_share=0.1, seed=11))

    def test_cheaters_excluded_truth_first_and_the_cli_agrees(self) -> None:
        # A cheater who arrived as the study filled up may have made too few decisions to break the rule
        # (more than fast_limit under the threshold); every other cheater is excluded, and nobody honest.
        caught = {o.pid for o in self.result.outcomes if o.fast and o.answers > CONFIG["fast_limit"]}
        self.assertGreaterEqual(len(caught), 1)
        call_command("quality_check", self.study.slug, stdout=io.StringIO())
        excluded = set(Annotator.objects.filter(study=self.study, status=Annotator.Status.EXCLUDED).values_list("external_id", flat=True))
        self.assertEqual(excluded, caught)
        self.assertLessEqual(excluded, set(self.result.fast_pids()))

        report = build_report(self.study, B=B, seed=SEED)
        analysis = report.analysis
        for level in ("topic", "subtopic"):
            mup = analysis.mup(level)
            self.assertEqual(mup[TRUTH], mup.max(), level)  # first by MUP (metrics that agree on every pair tie)
        html = render_html(report, standalone=True, figure_url=lambda stem, fmt: "")
        for section in ("summary", "preferences", "agreement", "heatmaps", "intuitiveness", "settings"):
            self.assertIn(f'<section id="{section}">', html)
        self.assertIn(f"{len(caught)} excluded", html)

        with tempfile.TemporaryDirectory() as folder:
            out = Path(folder)
            write_report(report, out, figure_levels=[])  # the tables and inputs the CLI reads (figures: test_report)
            call_command("export_preferences", self.study.slug, "--format", "csv", "-o", str(out / "export.csv"), stdout=io.StringIO())
            before = os.getcwd()
            os.chdir(out)
            try:
                for level in ("topic", "weighted", "subtopic"):
                    argv = ["meta", "agreement", "--scores", "scores.tsv", "--preferences", "export.csv", "--level", level,
                            "--bootstrap", str(B), "--seed", str(SEED), "--best-set", "--format", "csv", "-o", f"cli-{level}.csv"]  # fmt: skip
                    if level == "weighted":
                        argv += ["--intents", "collection/intents.tsv"]
                    self.assertEqual(evaluation_main(argv), 0)
                    self.assertEqual((out / f"cli-{level}.csv").read_text(), (out / f"agreement-{level}.csv").read_text(), level)
            finally:
                os.chdir(before)
