"""``services.analysis.preview``: the live MUP ranking and the separation estimate of a running study."""

from __future__ import annotations

import random
import re
import tempfile
from pathlib import Path
from unittest import mock

import numpy as np
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils.html import escape

from evaluation.meta.agreement import agreement_with_users
from evaluation.meta.bestset import best_set_with_users
from evaluation.meta.levels import preference_items
from evaluation.metrics import REGISTRY
from studyapp.models import Annotator, Study
from studyapp.services.analysis import preview as live
from studyapp.services.analysis.study_analysis import analyse_study, mup_order, study_collection, study_measures, study_scores, study_votes
from studyapp.services.collections.importing import import_collection
from studyapp.services.data.export import export_rows, vote_rows
from studyapp.services.design.study_config import parse_config
from studyapp.services.design.study_design import create_study
from studyapp.services.participation import allocation
from studyapp.services.participation.answers import canonical_value, record_answer
from studyapp.services.rehearsal.simulation import Plan, TruthModel
from tests.studyapp import test_staff_dashboard as dashboard_tests
from tests.studyapp.base import NOW, BaseTestCase
from tests.studyapp.filled import answer_everything, exclude

TRUTH = "D#-nDCG@10"


def truthful(study: Study, noise: float, seed: int = 0):
    """A ``fill`` chooser: answers by the simulator's user model with TRUTH planted (services.rehearsal.simulation)."""
    model = TruthModel(study, Plan(truth=TRUTH, noise=noise))
    generator = np.random.default_rng(seed)
    return lambda item, rng: canonical_value(model.canonical(item.presentation, False, generator), item.a_on_left)


def fill_by_truth(study: Study, names: list[str], noise: float, seed: int = 0) -> list[Annotator]:
    """``filled.fill`` with answers that follow TRUTH."""
    choose, rng, at, people = truthful(study, noise, seed), random.Random(seed), NOW, []
    for name in names:
        people.append(allocation.register(study, platform="prolific", external_id=name, now=at))
        allocation.admit(people[-1], now=at, rng=rng)
        at = answer_everything(people[-1], rng, at, choose=choose)
    return people


class PreviewTestCase(BaseTestCase):
    def setUp(self) -> None:
        super().setUp()
        cache.clear()


class FewAnswersTests(PreviewTestCase):
    def test_no_answers(self) -> None:
        preview = live.study_preview(self.study)
        self.assertEqual(preview.answers, 0)
        self.assertEqual([(lv.level, lv.ranking, lv.note) for lv in preview.levels],
                         [("topic", [], "no valid topic-level answers yet"), ("subtopic", [], "no valid subtopic-level answers yet")])  # fmt: skip
        self.assertIsNone(preview.separation)
        self.assertEqual(preview.sentence, "No valid answers yet.")

    def test_one_answer(self) -> None:
        alice = self.arrive("alice")
        item = allocation.current_assignment(alice, now=self.now, rng=self.rng)
        record_answer(item, 3, request_id="one", now=self.later(seconds=20))
        preview = live.study_preview(self.study)
        self.assertEqual(preview.answers, 1)
        level = next(lv for lv in preview.levels if lv.level == item.presentation.level)
        self.assertEqual((level.answers, level.pairs, level.topics), (1, 1, 1))
        self.assertEqual(len(level.ranking), len(REGISTRY) - 1)  # every metric but Judged, the ad hoc baselines included
        for row in level.ranking:  # one pair: every metric agrees (1), disagrees (-1) or ties it (0); one topic: no interval
            self.assertIn(row.mup, (1.0, -1.0, 0.0))
            self.assertEqual((row.low, row.high), (None, None))
        self.assertEqual(level.ranking[0].mup, 1.0)
        self.assertIsNone(preview.separation)
        self.assertIn("Too few answers for a separation estimate (1 ", preview.sentence)

    def test_a_new_answer_refreshes_the_cached_preview(self) -> None:
        alice = self.arrive("alice")
        with mock.patch.object(live, "study_preview", wraps=live.study_preview) as computed:
            self.assertEqual(live.cached_preview(self.study).answers, 0)
            self.assertEqual(live.cached_preview(self.study).answers, 0)
            self.assertEqual(computed.call_count, 1)
            item = allocation.current_assignment(alice, now=self.now, rng=self.rng)
            record_answer(item, -2, request_id="first", now=self.later(seconds=20))
            self.assertEqual(live.cached_preview(self.study).answers, 1)
            self.assertEqual(computed.call_count, 2)

    def test_only_ties_so_far(self) -> None:
        self.answer_all(self.arrive("alice"), value=0)
        preview = live.study_preview(self.study)
        self.assertTrue(all(lv.ranking == [] and "tie" in lv.note for lv in preview.levels))
        self.assertEqual(preview.sentence, "No metric ranking yet, so no separation estimate.")


class RankingTests(PreviewTestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        super().setUpTestData()
        cls.people = fill_by_truth(cls.study, [f"pid-{n}" for n in range(6)], noise=0.5)

    def test_the_ranking_is_evaluation_metas_and_the_reports(self) -> None:
        preview = live.study_preview(self.study)
        votes = study_votes(self.study)
        data = study_collection(self.study)
        measures = study_measures(data.depth)
        scores, _ = study_scores(data, measures)
        report = analyse_study(self.study)  # B = 1000, seed 1: the report's agreement
        self.assertEqual((preview.B, preview.seed), (report.B, report.seed))
        self.assertEqual([lv.level for lv in preview.levels], ["topic", "subtopic"])
        for level in preview.levels:
            with self.subTest(level=level.level):
                items = preference_items(votes[votes["level"] == level.level], level.level)
                expected = mup_order(agreement_with_users(items, scores, measures, B=1000, rng=1).table)
                in_report = mup_order(report.agreement[level.level].table)
                got = [(r.measure, r.mup, r.low, r.high) for r in level.ranking]
                for table in (expected, in_report):
                    self.assertEqual([m for m, *_ in got], list(table.index))
                    shown = [[np.nan if x is None else x for x in v] for _, *v in got]  # None: no interval
                    np.testing.assert_allclose(shown, table[["value", "ci_low", "ci_high"]].to_numpy(), rtol=0, atol=1e-12)
                self.assertEqual(level.pairs, len(items))
                self.assertEqual(level.answers, int((votes["level"] == level.level).sum()))
                self.assertEqual(level.answers, 6 * 2 if level.level == "topic" else 12 * 2)  # presentations x k
                self.assertEqual(level.topics, 2)
                self.assertEqual(len(level.top), live.SHOWN)
                self.assertEqual((level.top[0].low, level.top[0].high), (None, None))  # 2 topics: too few for an interval
                chosen = best_set_with_users(items, scores, measures, B=1000, rng=1)  # the report's best set
                self.assertEqual(level.best_set_measures, list(report.best_set(level.level).measures))
                self.assertEqual(level.best_set_measures, list(chosen.measures))
                self.assertEqual([r.measure for r in level.ranking if r.in_best_set], [m for m, *_ in got if m in chosen])

    def test_the_answers_read_are_the_exports(self) -> None:
        exclude(self.people[3], "by staff: tests")
        lean = list(vote_rows(self.study))
        self.assertEqual(len(lean), 30)
        self.assertEqual(lean, [{column: row[column] for column in lean[0]} for row in export_rows(self.study)])
        self.assertEqual(set(lean[0]), {"level", "topic", "subtopic", "run_a", "run_b", "value", "annotator"})

    def test_excluded_answers_leave_the_ranking(self) -> None:
        before = live.study_preview(self.study)
        exclude(self.people[0], "by staff: tests")
        after = live.study_preview(self.study)
        self.assertEqual(after.answers, before.answers - 6)

    def test_cached_until_a_new_answer_or_exclusion(self) -> None:
        with mock.patch.object(live, "study_preview", wraps=live.study_preview) as computed:
            first = live.cached_preview(self.study)
            self.assertEqual(live.cached_preview(self.study).answers, first.answers)
            self.assertEqual(computed.call_count, 1)
            exclude(self.people[1], "by staff: tests")
            self.assertEqual(live.cached_preview(self.study).answers, first.answers - 6)
            self.assertEqual(computed.call_count, 2)
            Annotator.objects.filter(pk=self.people[1].pk).update(status=Annotator.Status.FINISHED, exclusion_reason="")
            self.assertEqual(live.cached_preview(self.study).answers, first.answers)
            self.assertEqual(computed.call_count, 2)  # reinstated: the first state again, still cached
            exclude(self.people[2], "by staff: tests")
            live.cached_preview(self.study)
            self.assertEqual(computed.call_count, 3)

    def test_the_query_count_does_not_grow_with_the_answers(self) -> None:
        live.study_scores_cached(self.study)  # the scores are cached once per study

        def queries() -> int:
            with CaptureQueriesContext(connection) as captured:
                live.study_preview(self.study)
            return len(captured)

        with_all = queries()
        for person in self.people[2:]:
            exclude(person, "by staff: tests")
        self.assertEqual(queries(), with_all)
        self.assertLessEqual(with_all, 2)  # the answers, in one query (and the pseudonym key)


def synthetic_study(name: str, seed: int = 0) -> Study:
    """12 topics, 3 weighted subtopics each, 4 runs of different quality, topic level, k = 3: 72 items, 216 answers."""
    rng = np.random.default_rng(seed)
    folder = Path(tempfile.mkdtemp(prefix="studyapp-preview-"))
    qrels, intents, runs = [], [], {f"run{r}": [] for r in range(4)}
    for t in range(1, 13):
        intents += [f"{t}\t{s + 1}\t{w}" for s, w in enumerate((0.5, 0.3, 0.2))]
        grades = np.where(rng.random((20, 3)) < 0.3, rng.integers(1, 4, size=(20, 3)), 0)
        qrels += [f"{t} {s + 1} t{t}-d{d} {grades[d, s]}" for s in range(3) for d in range(20)]
        gain = grades @ np.array([0.5, 0.3, 0.2])
        for quality, run in zip((1.5, 0.8, 0.3, 0.0), runs):
            ranked = np.argsort(-(quality * gain + rng.normal(0, 1, 20)))[:10]
            runs[run] += [f"{t} Q0 t{t}-d{d} {rank + 1} {10 - rank} {run}" for rank, d in enumerate(ranked)]
    (folder / "qrels.txt").write_text("\n".join(qrels) + "\n")
    (folder / "intents.tsv").write_text("\n".join(intents) + "\n")
    for run, lines in runs.items():
        (folder / f"{run}.run").write_text("\n".join(lines) + "\n")
    import_collection(name, qrels=folder / "qrels.txt", intents=folder / "intents.tsv", runs=[folder / f"{run}.run" for run in runs])
    config = {
        "runs": list(runs),
        "topic_rule": {"count": 12},
        "levels": ["topic"],
        "annotators_per_presentation": 3,
        "items_per_annotator": 24,
    }
    return create_study(name, f"{name} study", parse_config(config)).study


class SeparationTests(PreviewTestCase):
    def estimate(self, noise: float) -> live.Preview:
        study = synthetic_study(f"noise{noise:g}".replace(".", "-"))
        fill_by_truth(study, [f"{study.slug}-{n}" for n in range(9)], noise=noise, seed=3)
        return live.study_preview(study)

    def test_low_noise_is_separated_now_and_more_noise_needs_more_answers(self) -> None:
        quiet, noisy = self.estimate(0.3), self.estimate(2.5)
        for preview in (quiet, noisy):
            self.assertEqual(preview.separation_level, "topic")
            self.assertEqual(preview.separation.answers_now, 216)
            self.assertEqual(preview.separation.answers_full, 216)
        self.assertLess(quiet.noise, noisy.noise)
        self.assertEqual(quiet.separation.leader, quiet.levels[0].ranking[0].measure)
        self.assertTrue(quiet.separation.separated_now, quiet.sentence)
        self.assertEqual(quiet.separation.more_answers, 0)
        self.assertIn("the answers at hand would separate it", quiet.sentence)
        for preview in (quiet, noisy):  # the sentence states its assumption, and the best set's word on it
            self.assertIn(f"Assuming {preview.separation.leader}, the leader so far, is the metric the users follow", preview.sentence)
            self.assertRegex(preview.sentence, r"(alone is in the best set|does not test that assumption|no best set yet)")
        self.assertGreater(quiet.separation.rate_now, noisy.separation.rate_now)
        self.assertFalse(noisy.separation.separated_now, noisy.sentence)
        self.assertIn("even the full study (216 answers)", noisy.sentence)


NAN = re.compile(r"\bnan\b", re.IGNORECASE)


class DashboardTests(PreviewTestCase):
    def page(self, client, name: str) -> str:
        response = client.get(reverse(name, args=[self.study.slug]))
        self.assertEqual(response.status_code, 200)
        return response.content.decode()

    def test_an_empty_study_says_so(self) -> None:
        for name in ("staff_study", "staff_study_live"):
            html = self.page(dashboard_tests.staff_client(), name)
            self.assertIn("Which metric agrees so far", html)
            self.assertIn("No valid answers yet.", html)
            self.assertNotIn("preview-ranking", html)
            self.assertIsNone(NAN.search(html))

    def test_a_running_study_shows_the_ranking_the_sentence_and_the_report(self) -> None:
        fill_by_truth(self.study, ["pid-0", "pid-1", "pid-2"], noise=0.5)
        preview = live.cached_preview(self.study)
        for name in ("staff_study", "staff_study_live"):
            html = self.page(dashboard_tests.staff_client(), name)
            dashboard_tests.DashboardPagesTests.assert_no_inline_code(self, html)
            self.assertEqual(html.count('<table class="numbers preview-ranking">'), 2)  # topic and subtopic level
            for level in preview.levels:
                top = level.top[0]
                self.assertIn(f"<td>{top.measure}</td>", html)
                self.assertIsNone(top.low)  # two topics: no interval, a dash (docs/meta.md#confidence-intervals)
                self.assertRegex(html, rf"<td>{re.escape(top.measure)}</td>\s*<td[^>]*>[^<]*</td>\s*<td[^>]*>–</td>")
                self.assertIn(f"on {level.answers} valid answers to {level.pairs} run pairs", html)
            self.assertIn(escape(preview.sentence), html)
            self.assertIn(f'href="{reverse("study_report", args=[self.study.slug])}"', html)
            self.assertIsNone(NAN.search(html))

    def test_staff_only(self) -> None:
        fill_by_truth(self.study, ["pid-0", "pid-1"], noise=0.5)
        plain = Client()
        plain.force_login(get_user_model().objects.create_user("plain", "p@example.org", "pw-for-tests"))
        for client in (Client(), plain):
            for name in ("staff_study", "staff_study_live"):
                response = client.get(reverse(name, args=[self.study.slug]))
                self.assertEqual(response.status_code, 302)
                self.assertTrue(response["Location"].startswith(reverse("admin:login")))
                self.assertNotIn(b"MUP", response.content)
