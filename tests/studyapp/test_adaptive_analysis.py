"""The analysis of an adaptive study: the report's design-weighted estimates equal a brute-force computation of
the weighted estimator from the stored draws, the report names the allocation, the dashboard shows each run
pair's answers and why (docs/meta.md#adaptive-allocation)."""

from __future__ import annotations

import io
import json
import random
import tempfile
from datetime import timedelta
from io import StringIO
from pathlib import Path
from unittest import mock

import numpy as np
import pandas as pd
import pytest
from django.core.management import call_command
from django.urls import reverse
from django.utils.html import escape

from evaluation.report.tables import render_table
from studyapp.exceptions import StudyFull
from studyapp.management.commands.study_report import console_allocation
from studyapp.models import AllocationGroup, Preference
from studyapp.services.analysis.adaptive import dashboard_view, design_weights_by_group, groups_of, recompute, two_phase_weights
from studyapp.services.analysis.report import build_report, render_html, write_report
from studyapp.services.participation import allocation
from studyapp.services.participation.answers import record_answer
from tests.studyapp.base import NOW, BaseTestCase, import_toy, make_toy_study
from tests.studyapp.test_staff_dashboard import staff_client

# (round, probability, full, chance of being full) of the first four groups; the rest not drawn
DRAWS = [(0, 0.5, True, 1.0), (0, 0.8, True, 0.5), (1, 0.25, True, 0.5), (1, 0.4, False, 0.5)]


def fill_adaptive(study, seed: int = 3) -> None:
    """Annotators until the study is full, answering at random (seeded) with the sign fixed per presentation (a
    preference strength that varies between answers: the first answer and the k answers' mean differ)."""
    rng, n = random.Random(seed), 0
    while True:
        annotator = allocation.register(study, external_id=f"w{n}", now=NOW)
        try:
            allocation.admit(annotator, now=NOW, rng=rng)
        except StudyFull:
            return
        at = NOW
        while (item := allocation.current_assignment(annotator, now=at, rng=rng)) is not None:
            side = (1 if item.presentation_id % 3 else -1) * (1 if item.a_on_left else -1)  # as shown: canonical sign fixed
            record_answer(item, side * rng.randint(1, 4), client_ms=900, request_id=f"a{item.pk}", now=at + timedelta(seconds=1))
            at += timedelta(seconds=3)
        n += 1


class AdaptiveAnalysisTests(BaseTestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.collection = import_toy()
        cls.study = make_toy_study(allocation="adaptive", name="Adaptive analysis", levels=["topic"], items_per_annotator=3)
        groups = groups_of(cls.study).rows
        for group, (number, probability, full, chance) in zip(groups, DRAWS):
            AllocationGroup.objects.filter(pk=group.pk).update(
                drawn_round=number, probability=probability, full=full, full_probability=chance
            )
        fill_adaptive(cls.study)
        cls.report = build_report(cls.study, B=50)

    def test_the_design_weighted_estimates_equal_the_brute_force_weighted_estimator(self) -> None:
        weights, r_star = design_weights_by_group(self.study)
        self.assertEqual(r_star, 1)  # both rounds complete once the study is full
        names = [(g.topic.topic_id, g.run_a.name, g.run_b.name) for g in groups_of(self.study).rows]
        # two-phase weights: entry (the mean over rounds 0 and 1 of 1 if drawn before the round, 1 / q if in it) on
        # every drawn group's first layer; on the full groups also that over the chance of being full
        entry = {names[i]: ((1.0 if number < 1 else 0.0) + (1 / probability)) / 2 for i, (number, probability, _, _) in enumerate(DRAWS)}
        expected_weights = {names[i]: entry[names[i]] / chance for i, (_, _, full, chance) in enumerate(DRAWS) if full}
        self.assertEqual(weights, pytest.approx(expected_weights))
        self.assertEqual(sorted(round(w, 12) for w in expected_weights.values()), [1.5, 2.25, 4.0])
        self.assertEqual(two_phase_weights(self.study).entry, pytest.approx(entry))
        # every group's k-answer mean and its first answer (oldest valid answer), read from the answers themselves
        answers: dict[tuple[str, str, str], list[int]] = {}
        for pref in Preference.objects.filter(assignment__presentation__study=self.study, assignment__presentation__kind="pair").order_by(
            "answered_at", "pk"
        ):
            pres = pref.assignment.presentation
            answers.setdefault((pres.topic.topic_id, pres.run_a.name, pres.run_b.name), []).append(pref.canonical)
        scores = self.report.analysis.scores.set_index(["run", "topic", "measure"])["value"]
        table = self.report.tables["agreement-design-weighted"]
        mup = table[(table["statistic"] == "MUP") & (table["level"] == "topic")].set_index("measure")["value"]
        checked = 0
        for measure, value in mup.items():
            uj = u = 0.0
            for (topic, a, b), e in entry.items():
                d = scores[b, topic, measure] - scores[a, topic, measure]
                s_m = 0.0 if abs(d) <= 1e-12 else np.sign(d)
                first, mean = answers[topic, a, b][0], np.mean(answers[topic, a, b])
                uj += e * s_m * first
                u += e * abs(first)
                if (topic, a, b) in weights:  # the full group's k answers correct its first answer
                    uj += weights[topic, a, b] * (s_m * mean - s_m * first)
                    u += weights[topic, a, b] * (abs(mean) - abs(first))
            if u > 0:
                self.assertAlmostEqual(value, uj / u, places=12, msg=measure)
                checked += 1
        self.assertGreater(checked, 10)
        self.assertEqual(set(table["statistic"]), {"MUP", "MUP_b", "tau_b"})

    def test_the_report_bundle_holds_the_draws_the_design_weighted_table_is_computed_from(self) -> None:
        # allocation-groups.csv beside preferences.csv and scores.tsv: the weighted MUP again from the files alone
        files = self.report.inputs
        groups = pd.read_csv(
            io.StringIO(render_table(self.report.tables["allocation-groups"], "csv")),
            dtype={"topic": str, "full": str},
            keep_default_na=False,
        )
        self.assertEqual(len(groups), 6)
        groups["full_probability"] = groups["full_probability"].astype(float)  # "nan" where not drawn
        self.assertEqual(set(groups["full"]), {"true", "false", ""})  # empty: not drawn
        self.assertEqual(set(groups.loc[groups["full"] == "", "drawn_round"]), {-1})
        r_star = self.report.summary["allocation"]["analysis_round"]
        for row in groups.itertuples():
            drawn = 0 <= row.drawn_round <= r_star
            entry = ((r_star - row.drawn_round) + 1 / row.probability) / (r_star + 1) if drawn else 0.0
            self.assertAlmostEqual(row.entry_weight, entry, places=12)
            self.assertAlmostEqual(row.full_weight, entry / row.full_probability if row.full == "true" else 0.0, places=12)
        weight = {(r.topic, r.run_a, r.run_b): (r.entry_weight, r.full_weight) for r in groups.itertuples()}
        prefs = pd.read_csv(
            io.StringIO(files["preferences.csv"]), dtype={"topic": str, "subtopic": str, "valid": str, "check": str}, keep_default_na=False
        )
        answers: dict[tuple[str, str, str], list[int]] = {}
        for row in prefs[(prefs["level"] == "topic") & (prefs["valid"] == "true") & (prefs["check"] == "false")].itertuples():
            answers.setdefault((row.topic, row.run_a, row.run_b), []).append(row.value)  # file order: the first is the first layer
        scores = pd.read_csv(io.StringIO(files["scores.tsv"]), sep="\t", dtype={"topic": str})
        value = {(r.run, r.topic, r.measure): float(r.value) for r in scores.itertuples()}
        table = self.report.tables["agreement-design-weighted"]
        mup = table[(table["statistic"] == "MUP") & (table["level"] == "topic")].set_index("measure")["value"]
        checked = 0
        for measure, reported in mup.items():
            uj = u = 0.0
            for (topic, a, b), (e, w) in weight.items():
                if e == 0:
                    continue
                d = value[b, topic, measure] - value[a, topic, measure]
                s_m = 0.0 if abs(d) <= 1e-12 else np.sign(d)
                first, mean = answers[topic, a, b][0], np.mean(answers[topic, a, b])
                uj, u = uj + e * s_m * first, u + e * abs(first)
                uj, u = uj + w * s_m * (mean - first), u + w * (abs(mean) - abs(first))
            if u > 0:
                self.assertAlmostEqual(reported, uj / u, places=12, msg=measure)
                checked += 1
        self.assertGreater(checked, 10)
        self.assertNotIn("allocation-groups", build_report(make_toy_study(name="Uniform bundle"), B=20).tables)

    def test_the_report_says_which_allocation_ran(self) -> None:
        allocation_summary = self.report.summary["allocation"]
        self.assertEqual(allocation_summary["kind"], "adaptive")
        self.assertEqual(allocation_summary["analysis_round"], 1)
        self.assertEqual(
            allocation_summary["full"], 3
        )  # the groups drawn full (the dashboard's "full" too; "groups" there counts every group)
        self.assertNotIn("groups", allocation_summary)
        self.assertEqual(allocation_summary["drawn"], 4)  # every drawn group's first layer
        client = staff_client()
        page = client.get(reverse("study_report", args=[self.study.slug])).content.decode()
        self.assertIn("Design-weighted MUP, MUP_b and tau_b", page)
        self.assertIn("every run pair's draw and weights: allocation-groups.csv", page)
        self.assertIn('report/allocation-groups.csv">allocation-groups.csv</a>', page)  # downloadable like every table
        # the intervals shown are nominal 95 % design-based ones, their measured coverage at a data-chosen stop quoted;
        # beside them the look-corrected ones (each look at 1 - 0.05 / 20), with theirs; the decided signal keeps the correction
        self.assertEqual((allocation_summary["level"], allocation_summary["max_looks"]), (0.95, 20))
        self.assertAlmostEqual(allocation_summary["looks_level"], 0.9975)
        self.assertAlmostEqual(allocation_summary["look_alpha"], 0.0025)
        self.assertIn("effective degrees of freedom", allocation_summary["interval"])
        self.assertIn("<code>ci_low</code>, <code>ci_high</code> are nominal 95 % intervals: design-weighted", page)
        self.assertIn(f"they covered {escape(allocation_summary['coverage']['shown'])}", page)
        self.assertIn("are corrected for the looks: level 0.9975 (Bonferroni", page)
        self.assertIn(f"there they covered {escape(allocation_summary['coverage']['looks'])}", page)
        for measured in allocation_summary["coverage"].values():
            self.assertRegex(measured, r"0\.9\d\d")
        # both intervals are in the CSV (the toy study's 2 topics are too few for either: tests/evaluation/meta/test_adaptive.py
        # checks both against a brute-force computation)
        table = self.report.tables["agreement-design-weighted"]
        self.assertEqual(list(table.columns[-4:]), ["ci_low", "ci_high", "ci_low_looks", "ci_high_looks"])
        self.assertTrue((table["ci_low"].isna() == table["ci_low_looks"].isna()).all())
        uniform = make_toy_study(name="Uniform report")
        self.assertEqual(build_report(uniform, B=20).summary["allocation"], {"kind": "uniform", "candidates": []})

    def test_an_adaptive_study_never_recomputed_says_so(self) -> None:
        """It said only 'No round is complete yet', as if rounds had been drawn: its answers all came in need order."""
        study = make_toy_study(allocation="adaptive", name="Never recomputed", levels=["topic"], items_per_annotator=3)
        fill_adaptive(study)
        page = render_html(build_report(study, B=20), standalone=True, figure_url=lambda stem, fmt: "")
        self.assertIn("No round is complete yet (none was drawn: <code>manage.py allocation_priorities</code> did not run", page)
        page = render_html(self.report, standalone=True, figure_url=lambda stem, fmt: "")  # drawn rounds: no such note
        self.assertNotIn("none was drawn", page)

    def test_the_command_says_which_allocation_ran(self) -> None:
        """study_report's console lines named the best set only; the allocation was in the HTML and settings.json."""
        out = Path(self.enterContext(tempfile.TemporaryDirectory()))
        with mock.patch("studyapp.management.commands.study_report.build_report", return_value=self.report):
            said = StringIO()
            call_command("study_report", self.study.slug, "--out", str(out / "r"), stdout=said, stderr=StringIO())
        line = "Allocation: adaptive, analysis round 1, 4 run pairs drawn (3 full): design-weighted MUP, MUP_b and tau_b in"
        self.assertIn(line, said.getvalue())
        self.assertEqual(console_allocation({"kind": "uniform", "candidates": []}), "Allocation: uniform.")
        self.assertIn("none drawn (manage.py allocation_priorities did not run)", console_allocation({"kind": "adaptive", "drawn": 0}))

    def test_the_bundles_settings_json_says_which_allocation_ran(self) -> None:
        """summary['allocation'] was only in Python (build_report); the bundle a reader opens had no trace of it."""
        out = Path(self.enterContext(tempfile.TemporaryDirectory()))
        write_report(self.report, out, figure_levels=[])
        written = json.loads((out / "settings.json").read_text(encoding="utf-8"))["allocation"]
        self.assertEqual(written, json.loads(json.dumps(self.report.summary["allocation"])))
        self.assertEqual((written["kind"], written["analysis_round"], written["drawn"], written["full"]), ("adaptive", 1, 4, 3))

    def test_every_pair_is_listed_with_its_answers_beyond_the_dashboards_100(self) -> None:
        """The dashboard lists the 100 most disputed pairs; the others (1,400 groups on TREC 2014) were nowhere with
        their answers: allocation-groups.csv has every group's answers and slots, and the dashboard links it."""
        table = self.report.tables["allocation-groups"]
        view = dashboard_view(self.study)
        self.assertEqual(len(table), view["groups"])
        by_group = {(r["topic"], r["run_a"], r["run_b"]): (r["answers"], r["slots"]) for r in view["rows"]}
        self.assertEqual({(t, a, b): (n, k) for t, a, b, n, k in table[["topic", "run_a", "run_b", "answers", "slots"]].values}, by_group)
        self.assertEqual(int(table["answers"].sum()), view["answers"])
        client = staff_client()
        link = f'<a href="{reverse("study_report_file", args=[self.study.slug, "allocation-groups.csv"])}">allocation-groups.csv</a>'
        page = client.get(reverse("staff_study", args=[self.study.slug])).content.decode()
        self.assertIn("Every run pair, the most disputed first: answers received and why they were offered", page)
        self.assertIn(link, page)
        with mock.patch("studyapp.services.analysis.adaptive.GROUPS_SHOWN", 2):
            page = client.get(reverse("staff_study", args=[self.study.slug])).content.decode()
        self.assertIn("The 2 most disputed of the 6 run pairs: answers received", page)
        csv = client.get(reverse("study_report_file", args=[self.study.slug, "allocation-groups.csv"])).content.decode()
        self.assertTrue(csv.startswith("topic,run_a,run_b,answers,slots,drawn_round,"))

    def test_the_dashboard_shows_each_pairs_answers_and_why(self) -> None:
        view = dashboard_view(self.study)
        self.assertEqual(view["groups"], 6)
        self.assertEqual((view["drawn"], view["full"]), (4, 3))
        layer = next(r for r in view["rows"] if r["round"] is not None and not r["full"])
        self.assertEqual(layer["wanted"] * self.study.annotators_per_presentation, layer["slots"])  # one answer per presentation
        self.assertEqual(view["answers"], sum(r["answers"] for r in view["rows"]))
        self.assertEqual(view["answers"] - view["outside_draw"], sum(r["answers"] for r in view["rows"] if r["round"] is not None))
        self.assertIsNone(view["decided_at"])  # no recomputation ran, so no look was taken
        self.assertEqual((view["on_disputed"], view["disputed_slots"]), (0.0, 0.0))  # no priorities computed yet
        recompute(self.study, now=NOW, rng=np.random.default_rng(1))
        view = dashboard_view(self.study)
        disputed = [r for r in view["rows"] if r["priority"] > 0]
        self.assertTrue(disputed)
        self.assertAlmostEqual(view["on_disputed"], sum(r["answers"] for r in disputed) / view["answers"])
        self.assertAlmostEqual(view["disputed_slots"], sum(r["slots"] for r in disputed) / view["complete_study"])
        page = staff_client().get(reverse("staff_study", args=[self.study.slug])).content.decode()
        self.assertIn("Adaptive allocation", page)
        self.assertIn("answers received and why they were offered", page)
        self.assertIn("not drawn", page)
        self.assertIn("(first layer)", page)
        self.assertIn("(full)", page)
        self.assertIn("of the answers are on the run pairs the contenders dispute", page)
        self.assertIsNone(dashboard_view(make_toy_study(name="Uniform dashboard")))


class SubtopicLevelAdaptiveAnalysisTests(BaseTestCase):
    """The brute force above at the subtopic and weighted levels, from the bundle's files alone: a subtopic-level
    group's first layer is each subtopic presentation's first answer; at the weighted level (docs/metrics.md#weighted-topic-preference)
    its preference is the kept weights' sum of those first answers, and of the answers' means for its k-answer term."""

    @classmethod
    def setUpTestData(cls) -> None:
        cls.collection = import_toy()
        cls.study = make_toy_study(allocation="adaptive", name="Adaptive subtopics", levels=["subtopic"], items_per_annotator=3)
        for group, (number, probability, full, chance) in zip(groups_of(cls.study).rows, DRAWS):
            AllocationGroup.objects.filter(pk=group.pk).update(
                drawn_round=number, probability=probability, full=full, full_probability=chance
            )
        fill_adaptive(cls.study)
        cls.report = build_report(cls.study, B=50)

    def test_subtopic_and_weighted_levels_equal_the_brute_force_from_the_files(self) -> None:
        files, table = self.report.inputs, self.report.tables["agreement-design-weighted"]
        groups = pd.read_csv(io.StringIO(render_table(self.report.tables["allocation-groups"], "csv")), dtype={"topic": str})
        weight = {(r.topic, r.run_a, r.run_b): (r.entry_weight, r.full_weight) for r in groups.itertuples() if r.entry_weight > 0}
        prefs = pd.read_csv(io.StringIO(files["preferences.csv"]), dtype={"topic": str, "subtopic": str, "valid": str, "check": str})
        prefs = prefs[(prefs["level"] == "subtopic") & (prefs["valid"] == "true") & (prefs["check"] == "false")]
        answers: dict[tuple[str, str, str, str], list[int]] = {}
        for row in prefs.itertuples():  # file order: the first is the first layer
            answers.setdefault((row.topic, row.subtopic, row.run_a, row.run_b), []).append(row.value)
        kept = pd.read_csv(io.StringIO(files["collection/intents.tsv"]), sep="\t", header=None, dtype=str)
        weights = {(t, s): float(w) for t, s, w in kept[[0, 1, 2]].itertuples(index=False)}
        scores = pd.read_csv(io.StringIO(files["scores.tsv"]), sep="\t", dtype={"topic": str})
        value = {(r.run, r.topic, r.measure): float(r.value) for r in scores.itertuples()}

        def sign(x: float) -> float:
            return 0.0 if abs(x) <= 1e-12 else float(np.sign(x))

        checked = 0
        for level in ("subtopic", "weighted"):
            mup = table[(table["statistic"] == "MUP") & (table["level"] == level)].set_index("measure")["value"]
            for measure, reported in mup.dropna().items():
                uj = u = 0.0
                for (topic, a, b), (e, w) in weight.items():
                    subtopics = [s for (t, s) in weights if t == topic]
                    got = [answers.get((topic, s, a, b)) for s in subtopics]
                    if level == "weighted":
                        if not all(got):  # a kept subtopic without an answer: no weighted preference
                            continue
                        firsts = [sum(weights[topic, s] * v[0] for s, v in zip(subtopics, got))]
                        means = [sum(weights[topic, s] * np.mean(v) for s, v in zip(subtopics, got))]
                        signs = [sign(value[b, topic, measure] - value[a, topic, measure])]
                    else:
                        answered = [(s, v) for s, v in zip(subtopics, got) if v]
                        firsts, means = [v[0] for _, v in answered], [np.mean(v) for _, v in answered]
                        signs = [sign(value[b, f"{topic}/{s}", measure] - value[a, f"{topic}/{s}", measure]) for s, _ in answered]
                    for first, mean, s_m in zip(firsts, means, signs):
                        uj += e * abs(first) * s_m * sign(first) + w * (abs(mean) * s_m * sign(mean) - abs(first) * s_m * sign(first))
                        u += e * abs(first) + w * (abs(mean) - abs(first))
                if u > 0:
                    self.assertAlmostEqual(reported, uj / u, places=12, msg=f"{level} {measure}")
                    checked += 1
        self.assertGreater(checked, 20)
