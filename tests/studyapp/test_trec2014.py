"""Acceptance 1: the TREC 2014 Web track diversity qrels + intents with the eight public runs, and a
study over 5 runs, the 10 topics with the fewest subtopics >= 3, k_sub = 3, both levels:
10 pairs x 10 topics x (1 + 3) = 400 presentations, with renormalised weights."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

from django.test import TestCase

from evaluation.loading import load_collection
from studyapp.models import Collection, Judgment, Presentation, RankedItem, Run, StudySubtopic, Subtopic, Topic
from studyapp.services.collections.importing import import_collection
from studyapp.services.design.study_config import parse_config
from studyapp.services.design.study_design import create_study

# The repository's reference data (tests/evaluation/data/reference, provenance in its README).
REFERENCE = Path(os.environ.get("DIVERSITY_REFERENCE", Path(__file__).resolve().parents[1] / "evaluation" / "data" / "reference"))
TREC = REFERENCE / "trec2014"
RUNS = sorted((REFERENCE / "runs" / "public").glob("*.run"))
FIVE = ["pub-greedyrr", "pub-noisyrel", "pub-random", "pub-relfirst", "pub-unjudged"]
CONFIG = {"runs": FIVE, "topic_rule": {"count": 10, "min_subtopics": 3}, "subtopics_per_topic": 3, "levels": ["topic", "subtopic"]}


class Trec2014TestCase(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        assert TREC.is_dir() and len(RUNS) == 8, f"reference data not found under {REFERENCE}"
        cls.summary = import_collection("trec2014", qrels=TREC / "qrels.diversity.tsv", intents=TREC / "intent_probs.tsv", runs=RUNS)
        cls.design = create_study("trec2014", "TREC 2014 study", parse_config(CONFIG))

    def test_the_import_matches_the_files(self) -> None:
        collection = Collection.objects.get(name="trec2014")
        self.assertEqual(Topic.objects.filter(collection=collection).count(), 50)
        self.assertEqual(Subtopic.objects.filter(topic__collection=collection).count(), 156)
        self.assertEqual(Judgment.objects.filter(topic__collection=collection).count(), 43840)
        self.assertEqual(Run.objects.filter(collection=collection).count(), 8)
        # pub-short has no lines for topic 270 (reference README)
        self.assertFalse(RankedItem.objects.filter(run__name="pub-short", topic__topic_id="270").exists())
        self.assertEqual(RankedItem.objects.filter(run__name="pub-relfirst", topic__topic_id="251").count(), 20)
        first = RankedItem.objects.get(run__name="pub-greedyrr", topic__topic_id="251", rank=1)
        self.assertEqual(first.document.docid, "clueweb12-1201wb-37-08347")

    def test_it_yields_exactly_400_presentations(self) -> None:
        study = self.design.study
        pairs = Presentation.objects.filter(study=study, kind=Presentation.Kind.PAIR)
        self.assertEqual(pairs.count(), 400)
        self.assertEqual(pairs.filter(level="topic").count(), 100)
        self.assertEqual(pairs.filter(level="subtopic").count(), 300)
        self.assertEqual(self.design.presentations, {"topic": 100, "subtopic": 300, "check": 0, "total": 400})
        self.assertEqual(len(set(pairs.values_list("run_a__name", "run_b__name"))), 10)
        per_topic = Counter(pairs.values_list("topic__topic_id", flat=True))
        self.assertEqual(set(per_topic.values()), {40})  # 10 pairs x (1 + 3)
        for a, b in pairs.values_list("run_a__name", "run_b__name").distinct():
            self.assertLess(a, b)

    def test_it_chooses_the_10_topics_with_fewest_subtopics_at_least_3(self) -> None:
        chosen = list(self.design.study.study_topics.values_list("topic__topic_id", flat=True))
        # one topic with 3 subtopics, five with 4, then the first four (collection order) of the eight with 5
        self.assertEqual(sorted(chosen), ["253", "255", "257", "258", "260", "265", "270", "285", "290", "297"])

    def test_kept_weights_are_renormalised(self) -> None:
        kept = StudySubtopic.objects.filter(study_topic__study=self.design.study).select_related("study_topic__topic", "subtopic")
        by_topic: dict[str, list[tuple[str, float]]] = {}
        for s in kept:
            by_topic.setdefault(s.study_topic.topic.topic_id, []).append((s.subtopic.number, s.weight))
        self.assertEqual(len(by_topic), 10)
        for topic, rows in by_topic.items():
            with self.subTest(topic=topic):
                self.assertEqual(len(rows), 3)
                self.assertAlmostEqual(sum(w for _, w in rows), 1.0)
                # uniform 1/n in the file -> the three lowest ids kept, 1/3 each after renormalisation
                self.assertEqual([n for n, _ in rows], ["1", "2", "3"])
                for _, w in rows:
                    self.assertAlmostEqual(w, 1 / 3)


class Trec2014LinearWeightsTestCase(TestCase):
    """With the non-uniform (linear) intent probabilities the kept weights are w_i / sum(kept w)."""

    @classmethod
    def setUpTestData(cls) -> None:
        import_collection("trec2014-din", qrels=TREC / "qrels.diversity.tsv", intents=TREC / "intent_probs_din.tsv", runs=RUNS[:5])
        runs = sorted(Run.objects.filter(collection__name="trec2014-din").values_list("name", flat=True))
        config = {**CONFIG, "runs": runs[:5]}
        cls.design = create_study("trec2014-din", "TREC 2014 linear", parse_config(config))

    def test_weights_match_the_evaluation_package_and_the_hand_computation(self) -> None:
        reference = load_collection(TREC / "qrels.diversity.tsv", TREC / "intent_probs_din.tsv")
        kept_reference = reference.keep_top_intents(3)
        rows = StudySubtopic.objects.filter(study_topic__study=self.design.study).select_related("study_topic__topic", "subtopic")
        checked = 0
        for row in rows:
            topic = row.study_topic.topic.topic_id
            expected = {i.id: i.weight for i in kept_reference.topics[topic].intents}
            self.assertAlmostEqual(row.weight, expected[row.subtopic.number])
            checked += 1
        self.assertEqual(checked, 30)
        # topic 253 has 4 intents weighted 0.4, 0.3, 0.2, 0.1: keeping 3 gives 0.4/0.9, 0.3/0.9, 0.2/0.9
        t253 = {r.subtopic.number: r.weight for r in rows if r.study_topic.topic.topic_id == "253"}
        self.assertEqual(set(t253), {"1", "2", "3"})
        for number, raw in (("1", 0.4), ("2", 0.3), ("3", 0.2)):
            self.assertAlmostEqual(t253[number], raw / 0.9)
        # the kept types come from the intents file (subtopic 3 is nav)
        self.assertEqual(Subtopic.objects.get(topic__collection__name="trec2014-din", topic__topic_id="253", number="3").type, "nav")
