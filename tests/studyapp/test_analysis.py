"""``services.analysis.study_analysis``: the study's collection as shown, its scores, the valid answers and the meta-evaluation."""

from __future__ import annotations

import math
from datetime import timedelta

import numpy as np

from evaluation.engine import evaluate
from evaluation.meta.agreement import agreement_with_users
from evaluation.meta.levels import preference_items
from evaluation.metrics import REGISTRY
from studyapp.models import Annotator, Assignment, Preference, Presentation, StudySubtopic
from studyapp.services.analysis.study_analysis import (
    analyse_study,
    gold_measures,
    study_collection,
    study_measures,
    study_scores,
    study_votes,
)
from studyapp.services.collections.evaluation_bridge import to_evaluation_collection
from studyapp.services.data.pseudonyms import pseudonym
from studyapp.services.participation import allocation
from studyapp.services.participation.answers import canonical_value, record_answer
from tests.studyapp.base import BaseTestCase, make_toy_study

CAST = ("alice", "bob", "carol", "erin", "frank", "grace")  # the toy study holds exactly six annotators
TRUTH = "D#-nDCG@10"


class AnalysisTestCase(BaseTestCase):
    def answer_by_truth(self, study, truth: str = TRUTH, names=CAST) -> None:
        """Every annotator answers every item with 2 x the sign of the truth metric's difference (canonical)."""
        data = study_collection(study)
        scores, _ = study_scores(data, [truth])
        value = {(r.run, r.topic): r.value for r in scores.itertuples()}
        at = self.now
        for name in names:
            annotator = self.arrive(name, study=study)
            while (item := allocation.current_assignment(annotator, now=at, rng=self.rng)) is not None:
                p = item.presentation
                key = p.topic.topic_id if p.subtopic is None else f"{p.topic.topic_id}/{p.subtopic.number}"
                canonical = int(2 * np.sign(value[p.run_b.name, key] - value[p.run_a.name, key]))
                shown = canonical_value(canonical, item.a_on_left)  # the mapping is its own inverse
                record_answer(item, shown, request_id=f"r{item.pk}", now=at + timedelta(seconds=20))
                at += timedelta(seconds=30)

    def test_collection_is_what_the_annotators_saw(self) -> None:
        study = make_toy_study("Shallow", depth=3)
        data = study_collection(study)
        self.assertEqual(data.topics, ["1", "2"])
        self.assertEqual(data.run_names, ["alpha", "bravo", "charlie"])
        self.assertEqual(
            [list(run.lists["1"]) for run in data.runs],
            [["t1-d1", "t1-d2", "t1-d3"], ["t1-d6", "t1-d3", "t1-d1"], ["t1-d8", "t1-d7", "t1-d6"]],
        )
        # kept subtopics and weights are the study's rows; the same rule as the collection's top-k
        stored = {
            (s.study_topic.topic.topic_id, s.subtopic.number): s.weight for s in StudySubtopic.objects.filter(study_topic__study=study)
        }
        got = {(t, i.id): i.weight for t, topic in data.collection.topics.items() for i in topic.intents}
        self.assertEqual(got, stored)
        self.assertEqual(set(got), {("1", "1"), ("1", "2"), ("2", "1"), ("2", "2")})
        top = to_evaluation_collection(study.collection, ["1", "2"]).keep_top_intents(2)
        self.assertEqual({t: [(i.id, i.weight) for i in topic.intents] for t, topic in top.topics.items()},
                         {t: [(i.id, i.weight) for i in topic.intents] for t, topic in data.collection.topics.items()})  # fmt: skip
        # t1-d6 is relevant only to the dropped subtopic 3: still judged, relevant to nothing kept
        self.assertEqual(data.collection.judgments["1"]["t1-d6"], {"1": 0, "2": 0})
        self.assertEqual(data.weights["1"], {"1": 0.5 / 0.8, "2": 0.3 / 0.8})

    def test_scores_cover_topics_and_subtopics_at_the_depth(self) -> None:
        study = make_toy_study("Shallow", depth=3)
        data = study_collection(study)
        measures = study_measures(3)
        judging = [name for name, spec in REGISTRY.items() if "judging" in spec.tags]
        self.assertEqual(judging, ["Judged"])  # how much was judged, not how good: no place in a preference study
        self.assertEqual(len(measures), len(REGISTRY) - 1)
        self.assertNotIn("Judged@3", measures)
        self.assertIn("P@3", measures)
        self.assertIn("alpha-nDCG@3", measures)
        self.assertIn("NRBP@3", measures)
        self.assertEqual(gold_measures(3), ["I-rec@3", "Ef-P@3", "Prec@3", "PMP@3"])
        scores, notes = study_scores(data, ["I-rec@3", "Prec@3"])
        self.assertEqual(notes, [])
        topics = set(scores["topic"])
        self.assertEqual(topics, {"1", "2", "1/1", "1/2", "2/1", "2/2", "all"})
        value = {(r.run, r.topic, r.measure): r.value for r in scores.itertuples()}
        # topic 1, top 3: alpha d1 (sub 1) d2 (sub 1) d3 (sub 2); bravo d6 (dropped sub 3 only) d3 d1; charlie nothing
        self.assertEqual([value[run, "1", "I-rec@3"] for run in ("alpha", "bravo", "charlie")], [1.0, 1.0, 0.0])
        self.assertAlmostEqual(value["bravo", "1", "Prec@3"], 2 / 3)
        self.assertEqual(value["bravo", "1/1", "I-rec@3"], 1.0)
        self.assertEqual(value["charlie", "1/2", "I-rec@3"], 0.0)
        # the mean rows are over topics only
        self.assertAlmostEqual(value["alpha", "all", "Prec@3"], np.mean([value["alpha", t, "Prec@3"] for t in ("1", "2")]))

    def test_topic_only_study_has_no_subtopic_rows(self) -> None:
        study = make_toy_study("Topics only", levels=["topic"], items_per_annotator=3)
        scores, _ = study_scores(study_collection(study), ["I-rec@10"])
        self.assertEqual(set(scores["topic"]), {"1", "2", "all"})

    def test_votes_are_valid_canonical_answers_of_regular_items(self) -> None:
        alice, bob = self.arrive("alice"), self.arrive("bob")
        self.answer_all(alice, value=3)
        self.answer_all(bob, value=-2)
        votes = study_votes(self.study)
        self.assertEqual(len(votes), 12)
        self.assertEqual(list(votes.columns), ["level", "topic", "subtopic", "run_a", "run_b", "annotator", "value", "line"])
        for row in votes.itertuples():
            self.assertLess(row.run_a, row.run_b)
            self.assertEqual(row.subtopic == "", row.level == "topic")
        stored = {pseudonym(self.study, p.assignment.annotator): 0 for p in Preference.objects.all()}
        for p in Preference.objects.select_related("assignment__annotator"):
            self.assertEqual(p.canonical, p.value if p.assignment.a_on_left else -p.value)
            stored[pseudonym(self.study, p.assignment.annotator)] += p.canonical
        self.assertEqual(votes.groupby("annotator")["value"].sum().to_dict(), stored)
        # an excluded annotator's answers are left out, and so are check items
        Annotator.objects.filter(pk=bob.pk).update(status=Annotator.Status.EXCLUDED)
        item = Assignment.objects.filter(annotator=alice).first()
        check = Presentation.objects.create(
            study=self.study, kind=Presentation.Kind.IDENTICAL, level="topic", topic=item.presentation.topic,
            run_a=item.presentation.run_a, run_b=item.presentation.run_a, expected_sign=0,
        )  # fmt: skip
        extra = Assignment.objects.create(annotator=alice, presentation=check, position=99, a_on_left=True, assigned_at=self.now,
                                          lease_expires_at=self.later(hours=1))  # fmt: skip
        record_answer(extra, 4, now=self.later(minutes=1))
        votes = study_votes(self.study)
        self.assertEqual(set(votes["annotator"]), {pseudonym(self.study, alice)})
        self.assertEqual(len(votes), 6)

    def test_no_answers_yet(self) -> None:
        analysis = analyse_study(self.study, B=50)
        self.assertEqual(analysis.agreement, {})
        self.assertIsNone(analysis.primary_level)
        self.assertIsNone(analysis.userprefs)
        self.assertIsNotNone(analysis.power)
        self.assertEqual(set(analysis.power.summary["measure"]), set(analysis.measures))
        self.assertEqual(set(analysis.timer.seconds), {"collection", "scoring", "meta"})

    def test_full_analysis_recovers_the_truth(self) -> None:
        self.answer_by_truth(self.study)
        analysis = analyse_study(self.study, B=200, seed=7)
        self.assertEqual(set(analysis.agreement), {"topic", "weighted", "subtopic"})
        self.assertEqual(analysis.primary_level, "topic")
        for level in ("topic", "subtopic"):
            mup = analysis.mup(level)
            self.assertEqual(mup[TRUTH], 1.0, level)  # every answer follows the truth's sign
            self.assertEqual(mup.iloc[0], 1.0)
        # the same numbers as evaluation.meta on the same inputs (nothing recomputed by hand)
        items = preference_items(analysis.votes, "subtopic")
        again = agreement_with_users(items, analysis.scores, analysis.measures, B=200, rng=7)
        self.assertTrue(again.table.equals(analysis.agreement["subtopic"].table))
        self.assertEqual(analysis.agreement["topic"].seed, 7)
        self.assertEqual(analysis.agreement["topic"].n_pairs, 6)
        self.assertEqual(analysis.agreement["subtopic"].n_pairs, 12)
        table = analysis.userprefs
        self.assertEqual(set(table["level"]), {"subtopic", "weighted", "topic"})
        self.assertEqual(len(table), 9)  # 3 run pairs x 3 levels
        self.assertEqual(set(analysis.concordance["gold"]), {"I-rec@10", "Ef-P@10", "Prec@10", "PMP@10", "all"})
        self.assertEqual(list(analysis.ordering["gold"]), ["I-rec@10", "Ef-P@10", "Prec@10", "PMP@10", "all"])
        self.assertEqual(len(analysis.power.summary), len(REGISTRY) - 1)  # every metric but Judged, the ad hoc baselines included
        self.assertTrue(all(math.isfinite(v) for v in analysis.power.summary["power"]))

    def test_scores_equal_the_engine_on_the_collection(self) -> None:
        data = study_collection(self.study)
        scores, _ = study_scores(data, ["alpha-nDCG@10"])
        direct = evaluate(data.collection, data.runs, ["alpha-nDCG@10"], per_topic=True, per_subtopic=True)
        self.assertTrue(scores.equals(direct))
