"""A study on a collection imported without intents (uniform weights, PMP undefined on most topics).

The demo collection is imported without its ``intents.tsv`` and the simulated demo study's design
(``studyapp/demo/simulated.json``: 6 topics, 3 subtopics, both levels) is created on it. PMP@10
is then undefined on every topic with more than one relevant kept subtopic; the analysis must
leave those topics out for PMP only, so the report still has its topic-level and weighted-level
agreement, discriminative power, intuitiveness and ordering tables, the staff report page every section,
and the preview a ranking (one fill of the study serves the three).
"""

from __future__ import annotations

import re

import numpy as np
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.urls import reverse

from studyapp.exceptions import StudyFull
from studyapp.services.analysis.preview import study_preview
from studyapp.services.analysis.report import build_report
from studyapp.services.analysis.study_analysis import study_collection, study_scores
from studyapp.services.collections.importing import import_collection
from studyapp.services.design.study_config import read_config
from studyapp.services.design.study_design import create_study
from studyapp.services.rehearsal.demo import DEMO_DIR, RUNS
from tests.studyapp import test_analysis
from tests.studyapp.base import BaseTestCase

PMP = "PMP@10"


def uniform_study():
    """The demo collection imported without its intents file, and the simulated demo study's design on it."""
    import_collection(
        "demo-uniform",
        qrels=DEMO_DIR / "qrels.txt",
        topics=DEMO_DIR / "topics.xml",
        docs=DEMO_DIR / "docs.jsonl",
        runs=[DEMO_DIR / "runs" / f"{name}.run" for name in RUNS],
    )
    return create_study("demo-uniform", "Uniform weights", read_config(DEMO_DIR / "simulated.json")).study


def fill_by_truth(test: BaseTestCase, study, most: int = 30) -> None:
    """Newcomers answer by the truth's sign (``test_analysis.answer_by_truth``) until the study is full."""
    for i in range(most):
        try:
            test_analysis.AnalysisTestCase.answer_by_truth(test, study, names=[f"u{i}"])
        except StudyFull:
            return


class UniformWeightsStudyTest(BaseTestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        super().setUpTestData()
        cls.uniform = uniform_study()

    def test_pmp_is_undefined_on_some_topics_only_for_itself(self) -> None:
        data = study_collection(self.uniform)
        weights = {t: sorted(set(w.values())) for t, w in data.weights.items()}
        self.assertTrue(all(len(w) == 1 for w in weights.values()), weights)  # uniform kept weights everywhere
        scores, _ = study_scores(data, [PMP, "alpha-nDCG@10"])
        per_topic = scores[scores["topic"].isin(data.topics)]
        undefined = per_topic.loc[(per_topic["measure"] == PMP) & per_topic["value"].isna(), "topic"].nunique()
        self.assertGreater(undefined, 0)
        self.assertFalse(per_topic.loc[per_topic["measure"] == "alpha-nDCG@10", "value"].isna().any())

    def test_report_and_its_staff_page_have_every_section(self) -> None:
        fill_by_truth(self, self.uniform)
        report = build_report(self.uniform, B=100, seed=3)
        analysis = report.analysis  # the report's own analysis (build_report runs analyse_study once)
        self.assertIn("topic", analysis.agreement)
        self.assertIn("weighted", analysis.agreement)
        self.assertEqual(analysis.primary_level, "topic")
        self.assertTrue(any(f"{PMP} is undefined on" in note and "kept intent weights are all equal" in note for note in analysis.notes))
        self.assertFalse(any("every topic has NaN" in note for note in analysis.notes), analysis.notes)
        # power: every measure on every topic but PMP, which rests on its own topics
        power = analysis.power.summary.set_index("measure")
        n_topics = len(analysis.data.topics)
        self.assertEqual(power.loc["alpha-nDCG@10", "topics"], n_topics)
        self.assertLess(power.loc[PMP, "topics"], n_topics)
        self.assertTrue(np.isfinite(power.drop(index=PMP)["power"]).all())
        # agreement: PMP's n counts only its pairs, the truth is still first
        table = analysis.agreement["topic"].table
        all_mup = table[(table["statistic"] == "MUP") & (table["subset"] == "all")].set_index("measure")
        self.assertEqual(all_mup.loc["D#-nDCG@10", "value"], 1.0)
        self.assertLess(all_mup.loc[PMP, "n"], all_mup.loc["alpha-nDCG@10", "n"])
        # intuitiveness and the ordering exist; rows with PMP as gold count its topics only
        self.assertIsNotNone(analysis.concordance)
        self.assertIsNotNone(analysis.ordering)
        pmp_rows = analysis.concordance[analysis.concordance["gold"] == PMP]
        self.assertTrue((pmp_rows["topics"] < n_topics).all())
        irec_rows = analysis.concordance[analysis.concordance["gold"] == "I-rec@10"]
        self.assertTrue((irec_rows["topics"] == n_topics).all())

        for name in (
            "agreement-topic",
            "agreement-weighted",
            "discpower",
            "intuitiveness",
            "intuitiveness-matrix",
            "intuitiveness-ordering",
        ):
            self.assertIn(name, report.tables)
            self.assertFalse(report.tables[name].empty, name)

        preview = study_preview(self.uniform, n_sim=20)
        topic = next(level for level in preview.levels if level.level == "topic")
        self.assertTrue(topic.ranking)
        self.assertEqual(topic.ranking[0].mup, 1.0)

        self.check_the_staff_page()

    def check_the_staff_page(self) -> None:
        """The staff page of the filled study (its own report, the page's defaults): topic-level, weighted-level and
        subtopic-level agreement, discriminative power and intuitiveness; PMP, undefined on most topics, only for itself."""
        cache.clear()
        staff = self.client_class()
        staff.force_login(get_user_model().objects.create_superuser("staff", "staff@example.org", "pw-for-tests"))
        html = staff.get(reverse("study_report", args=[self.uniform.slug])).content.decode()
        for level in ("topic", "weighted", "subtopic"):
            self.assertTrue(f'id="metrics-{level}"' in html, level)
            self.assertTrue(f'id="subranges-{level}"' in html, level)
        row = re.search(r"<td>alpha-nDCG@10</td>(.*?)</tr>", html, re.S).group(1)
        power = re.findall(r"<td>(.*?)</td>", row, re.S)[-1]
        self.assertRegex(power, r"^\d\.\d{3} <small>\d+/10</small>$")  # discriminative power over the 10 run pairs
        pmp, other = (re.search(rf"<td>{m}</td>(?:\s*<td>.*?</td>){{5}}\s*<td>(\d+)</td>", html, re.S) for m in ("PMP@10", "alpha-nDCG@10"))
        self.assertLess(int(pmp.group(1)), int(other.group(1)))  # PMP rests on fewer run pairs (n), the others on all
        self.assertEqual(html.count('<table class="data matrix">'), 5)  # Table 2 for I-rec, Ef-P, Prec, PMP and all
        self.assertTrue("cell-wise (Chen et al.)" in html)
        self.assertFalse("Not enough metrics or runs for the concordance test" in html)
