"""The ``candidate_metrics`` study setting: checked against the metrics the report scores at the study's depth, frozen
with the design, and, on an adaptive study, the metrics its contenders, dispute weights, ``disputed_by`` and decided
signal are computed over (docs/studyapp.md#how-annotators-get-items, docs/meta.md#adaptive-allocation)."""

from __future__ import annotations

import json
import tempfile
from io import StringIO
from pathlib import Path
from unittest import mock

import numpy as np
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import SimpleTestCase
from django.urls import reverse

from evaluation.meta import adaptive
from studyapp.exceptions import InvalidStudyConfig
from studyapp.models import AllocationGroup, Study
from studyapp.models.study_settings import BY_NAME, candidate_list, scored_metrics
from studyapp.services.analysis.adaptive import differences, groups_of, recompute
from studyapp.services.analysis.preview import study_scores_cached
from studyapp.services.analysis.report import build_report
from studyapp.services.analysis.study_analysis import study_measures
from studyapp.services.design.study_config import parse_config, setting_problems
from tests.studyapp.base import NOW, TOY_CONFIG, BaseTestCase, import_toy, make_toy_study
from tests.studyapp.test_adaptive_analysis import DRAWS, fill_adaptive

CANDIDATES = "alpha-nDCG@10, P-IA@10,ERR@10"  # three sign patterns on the toy study's six run pairs


def refused(**values) -> list[str]:
    with SimpleTestCase().assertRaises(InvalidStudyConfig) as caught:
        parse_config({**TOY_CONFIG, **values})
    return caught.exception.errors


class CandidateConfigTests(SimpleTestCase):
    def test_a_list_of_scored_metrics_is_taken_and_empty_means_every_metric(self) -> None:
        config = parse_config({**TOY_CONFIG, "candidate_metrics": CANDIDATES})
        self.assertEqual(candidate_list(config.candidate_metrics), ["alpha-nDCG@10", "P-IA@10", "ERR@10"])
        self.assertEqual(parse_config(TOY_CONFIG).candidate_metrics, "")  # the default: every metric the report scores
        self.assertEqual(candidate_list(parse_config({**TOY_CONFIG, "candidate_metrics": " , "}).candidate_metrics), [])
        self.assertEqual(scored_metrics(10), study_measures(10))  # the names the report scores, known without scoring
        self.assertGreater(len(scored_metrics(10)), 40)
        self.assertEqual(BY_NAME["candidate_metrics"].frozen, True)

    def test_an_unknown_name_is_refused_with_the_closest_known_one(self) -> None:
        [error] = refused(candidate_metrics="alpha-nDCG@10,nERR-IA@1O")
        self.assertEqual(
            error,
            "candidate_metrics: unknown metric 'nERR-IA@1O' (did you mean 'nERR-IA@10'?); the names are the report's at the "
            f"study's depth 10, e.g. {scored_metrics(10)[0]}",
        )
        [error] = refused(candidate_metrics="alpha-nDCG@10,nERR-IA@10", depth=5)  # the names follow the study's depth
        self.assertIn("unknown metric 'alpha-nDCG@10' (did you mean 'alpha-nDCG@5'?)", error)
        self.assertIn("'nERR-IA@10' (did you mean 'nERR-IA@5'?)", error)
        self.assertEqual(parse_config({**TOY_CONFIG, "depth": 5, "candidate_metrics": "alpha-nDCG@5,nERR-IA@5"}).depth, 5)
        [error] = refused(candidate_metrics="alpha-nDCG@10,zzzz")
        self.assertIn(f"'zzzz' ({len(scored_metrics(10))} metrics are scored)", error)
        # an invalid depth is reported once, not again as every name being unknown
        self.assertEqual(refused(candidate_metrics="alpha-nDCG@10,nERR-IA@10", depth=0), ["depth must be between 1 and 100, got 0"])

    def test_one_name_and_duplicates_are_refused(self) -> None:
        self.assertEqual(
            refused(candidate_metrics="nDCG@10"),
            ["candidate_metrics needs at least 2 metrics to decide among, got only nDCG@10 (empty: every metric the report scores)"],
        )
        self.assertEqual(refused(candidate_metrics="nDCG@10, nDCG@10"), ["candidate_metrics lists nDCG@10 more than once"])
        self.assertEqual(setting_problems({"candidate_metrics": 3}), [("candidate_metrics", "candidate_metrics must be a string, got 3")])
        # a JSON configuration's natural list: the message says how to write it instead of only 'must be a string'
        said = 'candidate_metrics must be a string, got a list: write it as one comma-separated string, "nDCG@10,alpha-nDCG@10"'
        self.assertEqual(refused(candidate_metrics=["nDCG@10", "alpha-nDCG@10"]), [said])


class CandidateStudyTests(BaseTestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.collection = import_toy()
        cls.study = make_toy_study(
            allocation="adaptive", name="Candidates", levels=["topic"], items_per_annotator=3, candidate_metrics=CANDIDATES
        )
        for group, (number, probability, full, chance) in zip(groups_of(cls.study).rows, DRAWS):
            AllocationGroup.objects.filter(pk=group.pk).update(
                drawn_round=number, probability=probability, full=full, full_probability=chance
            )
        fill_adaptive(cls.study)

    def test_the_contenders_and_disputed_by_are_over_exactly_the_candidates(self) -> None:
        names = candidate_list(CANDIDATES)
        d, measures = differences(self.study, groups_of(self.study))
        self.assertEqual(measures, names)
        self.assertEqual(d.shape, (3, 6))  # a row per candidate, a column per group (2 topics x 3 run pairs)
        self.assertGreater(len(study_scores_cached(self.study)["measures"]), 40)  # the report still scores every metric
        seen, real = {}, adaptive.contenders

        def spy(d, p, measures, **options):
            seen["measures"] = list(measures)
            return real(d, p, measures, **options)

        with mock.patch("studyapp.services.analysis.adaptive.adaptive.contenders", side_effect=spy):
            result = recompute(self.study, now=NOW, rng=np.random.default_rng(1))
        self.assertEqual(seen["measures"], names)
        self.assertEqual(result.analysis_round, 1)
        self.assertTrue(result.contenders)
        members = {m for entry in result.contenders for m in entry.split(" = ")}  # same sign on every judged pair: one entry
        self.assertLessEqual(members, set(names))
        disputed = [g.disputed_by for g in AllocationGroup.objects.filter(study=self.study) if g.disputed_by]
        self.assertTrue(disputed)  # some pair is ordered differently by the three
        for why in disputed:
            self.assertLessEqual(set(why.split(", ")), set(names))
        with_all = make_toy_study(allocation="adaptive", name="Every metric", levels=["topic"], items_per_annotator=3)
        recompute(with_all, now=NOW, rng=np.random.default_rng(1))  # the same pairs, every metric contending
        everyone = {m for g in AllocationGroup.objects.filter(study=with_all) for m in g.disputed_by.split(", ") if m}
        self.assertTrue(everyone - set(names))  # other metrics dispute them there
        # the report scores every metric and says which were the candidates
        report = build_report(self.study, B=20)
        self.assertEqual(report.summary["allocation"]["candidates"], names)
        self.assertGreater(len(report.analysis.measures), 40)
        page = self.client_for_staff().get(reverse("study_report", args=[self.study.slug])).content.decode()
        self.assertIn("Candidate metrics (<code>candidate_metrics</code>): alpha-nDCG@10, P-IA@10, ERR@10", page)

    def test_before_a_complete_round_the_command_and_dashboard_name_the_candidates_not_every_metric(self) -> None:
        study = make_toy_study(allocation="adaptive", name="Fresh", levels=["topic"], items_per_annotator=3, candidate_metrics=CANDIDATES)
        out = StringIO()
        call_command("allocation_priorities", study.slug, stdout=out)
        said = "the candidate metrics alpha-nDCG@10, P-IA@10, ERR@10 (no complete round yet)"
        self.assertIn(f"contenders: {said};", out.getvalue())
        page = self.client_for_staff().get(reverse("staff_study", args=[study.slug])).content.decode()
        self.assertIn(f"Contenders the last round steered by: {said}.", page)
        self.assertNotIn("every metric (no complete round yet)", page)

    def test_without_candidates_every_scored_metric_contends(self) -> None:
        study = make_toy_study(allocation="adaptive", name="All metrics", levels=["topic"], items_per_annotator=3)
        self.assertEqual(differences(study, groups_of(study))[1], study_scores_cached(study)["measures"])
        self.assertEqual(build_report(study, B=20).summary["allocation"]["candidates"], [])

    def test_the_setting_is_frozen_in_the_admin(self) -> None:
        client = self.client_for_staff()
        url = reverse("admin:studyapp_study_change", args=[self.study.pk])
        page = client.get(url).content.decode()
        self.assertNotIn('name="candidate_metrics"', page)  # shown, not editable
        self.assertIn(CANDIDATES.split("  #")[0], page)
        data = {k: ("" if v is None else v) for k, v in Study.objects.filter(pk=self.study.pk).values()[0].items()}
        client.post(url, {**data, "candidate_metrics": "nDCG@10,RBU@10"})
        self.study.refresh_from_db()
        self.assertEqual(self.study.candidate_metrics, CANDIDATES)

    def test_create_study_takes_the_key_from_its_json(self) -> None:
        folder = Path(self.enterContext(tempfile.TemporaryDirectory()))
        for name, value in (("Named candidates", "alpha-nDCG@10,nERR-IA@10"), ("Bad candidates", "alpha-nDCG@10,nERR-IA@11")):
            path = folder / f"{name}.json"
            config = {"runs": ["alpha", "bravo"], "levels": ["topic"], "items_per_annotator": 2, "allocation": "adaptive"}
            path.write_text(json.dumps({**config, "candidate_metrics": value}))
            args = ["create_study", "--collection", self.collection.name, "--name", name, "--config", str(path), "--allow-bare-documents"]
            if name.startswith("Bad"):
                with self.assertRaisesMessage(CommandError, "unknown metric 'nERR-IA@11' (did you mean 'nERR-IA@10'?)"):
                    call_command(*args, stdout=StringIO())
                self.assertFalse(Study.objects.filter(name=name).exists())
            else:
                call_command(*args, stdout=StringIO())
                self.assertEqual(Study.objects.get(name=name).candidate_metrics, value)

    def client_for_staff(self):
        user = get_user_model().objects.create_superuser(f"staff{get_user_model().objects.count()}", "s@example.org", "pw-for-tests")
        self.client.force_login(user)
        return self.client
