"""Newcomers arriving at once (issue 32): each choice locks a few spare rows beyond what it needs, so rows another
arrival holds or just filled cost a new choice only when more fail than there are spares, and a new choice reads the
counts again. Replayed deterministically (``benchmarks/bench_admission.py``'s ``replay_arrivals``: the locks are
replayed as SKIP LOCKED would answer, not taken), so the counts are the same on SQLite and PostgreSQL."""

from __future__ import annotations

import random
from collections import Counter
from datetime import timedelta
from unittest import mock

import numpy as np
from django.db import transaction

from benchmarks.bench_admission import Contention, replay_arrivals
from benchmarks.load_annotators import STUDIES
from studyapp.models import Annotator, Assignment, Presentation
from studyapp.services.analysis.adaptive import recompute
from studyapp.services.collections.importing import import_collection
from studyapp.services.design.study_config import parse_config
from studyapp.services.design.study_design import create_study
from studyapp.services.participation import allocation
from studyapp.services.participation.allocation import choice
from studyapp.services.rehearsal.demo import DEMO_DIR, RUNS
from tests.studyapp.base import NOW, BaseTestCase, make_toy_study

ARRIVALS, IN_FLIGHT = 60, 3


class Undo(Exception):
    def __init__(self, found: Contention) -> None:
        self.found = found


class ArrivalsAtOnceTests(BaseTestCase):
    """The load benchmark's demo study (480 presentations, k = 3, 7 regular items and 1 check item each)."""

    @classmethod
    def setUpTestData(cls) -> None:
        import_collection("demo", qrels=DEMO_DIR / "qrels.txt", intents=DEMO_DIR / "intents.tsv", topics=DEMO_DIR / "topics.xml",
                          runs=[DEMO_DIR / "runs" / f"{name}.run" for name in RUNS])  # fmt: skip
        config = {**STUDIES["demo"], "runs": list(RUNS), "completion_code": "DONE", "screenout_code": "FULL"}
        cls.adaptive = create_study("demo", "Adaptive at once", parse_config({**config, "allocation": "adaptive"})).study
        cls.uniform = create_study("demo", "Uniform at once", parse_config(config)).study

    def replay(self, study, *, undo: bool = False) -> Contention:
        if not undo:
            return replay_arrivals(study, ARRIVALS, IN_FLIGHT, now=NOW, seed=1)
        try:
            with transaction.atomic():
                raise Undo(replay_arrivals(study, ARRIVALS, IN_FLIGHT, now=NOW, seed=1))
        except Undo as undone:
            return undone.found

    def test_spare_rows_cut_the_rechoices_and_every_invariant_holds(self) -> None:
        recompute(self.adaptive, now=NOW, rng=np.random.default_rng(1))
        drawn = allocation.pool.offered_groups(self.adaptive)
        self.assertTrue(drawn)
        for study in (self.adaptive, self.uniform):
            with self.subTest(allocation=study.allocation):
                with mock.patch.object(choice, "SPARE", 0):
                    without = self.replay(study, undo=True)
                found = self.replay(study)
                self.assertEqual((len(found.choices), found.refused), (ARRIVALS, 0))
                # measured: adaptive 23 admissions chose again (34 re-choices) without spares, 6 (6) with them;
                # uniform 9 (9) and 0
                self.assertGreater(without.rechoosing, 0)  # the replay does contend
                self.assertLessEqual(2 * found.rechoices, without.rechoices)
                self.assertLessEqual(2 * found.rechoosing, without.rechoosing)
                self.assert_every_invariant(study)
        # the drawn groups still come first: every presentation of the drawn round has its depth of leases
        counts = allocation.live_counts(self.adaptive, NOW)
        design = allocation.pool.design_of(self.adaptive)
        for group, (depth, _, _) in drawn.items():
            for item in design.groups[group]:
                self.assertGreaterEqual(counts.get(item.id, 0), depth, item)

    def assert_every_invariant(self, study) -> None:
        k = study.annotators_per_presentation
        counts = allocation.live_counts(study, NOW)
        self.assertLessEqual(max(counts.values()), k)  # at most k per presentation, leases included
        rows = list(
            Assignment.objects.filter(annotator__study=study).values_list(
                "annotator_id", "presentation_id", "presentation__kind", "presentation__level", "presentation__topic_id",
                "presentation__run_a_id", "presentation__run_b_id", "a_on_left", "position",
            )
        )  # fmt: skip
        self.assertEqual(len({(a, p) for a, p, *_ in rows}), len(rows))  # never one presentation twice to one person
        self.assertEqual(len({(a, pos) for a, *_, pos in rows}), len(rows))
        per_annotator: dict[int, list] = {}
        for row in rows:
            per_annotator.setdefault(row[0], []).append(row)
        self.assertEqual(len(per_annotator), Annotator.objects.filter(study=study, status=Annotator.Status.ACTIVE).count())
        for held in per_annotator.values():
            regular = [r for r in held if r[2] == Presentation.Kind.PAIR]
            self.assertEqual(len(regular), study.regular_items_per_annotator)
            self.assertEqual(len(held) - len(regular), study.check_items_per_annotator)
            levels: dict[tuple, set] = {}
            for r in regular:
                levels.setdefault(r[4:7], set()).add(r[3])
            self.assertTrue(all(len(v) == 1 for v in levels.values()))  # one level per (topic, run pair)
            sides = Counter(r[7] for r in held)
            self.assertLessEqual(abs(sides[True] - sides[False]), 1)  # counterbalanced

    def test_one_arrival_at_a_time_never_chooses_again(self) -> None:
        found = replay_arrivals(self.uniform, 20, 1, now=NOW, seed=2)
        self.assertEqual((found.rechoices, found.skipped, found.serialised), (0, 0, 0))
        with self.assertRaisesMessage(ValueError, "at least 1"):
            replay_arrivals(self.uniform, 1, 0, now=NOW, seed=2)


class SpareRowsTests(BaseTestCase):
    """The toy study with k = 1: 18 presentations, one answer each."""

    @classmethod
    def setUpTestData(cls) -> None:
        super().setUpTestData()
        cls.single = make_toy_study(name="Single", annotators_per_presentation=1, items_per_annotator=3)

    def test_spares_do_not_change_what_a_lone_arrival_gets(self) -> None:
        design = allocation.pool.design_of(self.study)
        for seed in range(5):
            tiebreak = choice.tiebreaks(design.regular, random.Random(seed))
            options = dict(counts={}, k=2, history=allocation.pool.History(), unavailable=set(), tiebreak=tiebreak,
                           same_pair_both_levels=False)  # fmt: skip
            alone = choice.greedy(design, 4, **options)
            spared = choice.greedy(design, 4, spare=3, **options)
            self.assertEqual(spared[:4], alone)
            self.assertEqual(len(spared), 7)
            self.assertEqual(len({c.id for c in spared}), len(spared))

    def test_a_new_choice_reads_the_counts_again(self) -> None:
        """Rows filled by others after the counts were read: the next choice takes none of them."""
        study, design = self.single, allocation.pool.design_of(self.single)
        other = allocation.register(study, external_id="other", now=NOW)
        other.status = Annotator.Status.ACTIVE
        other.save(update_fields=["status"])
        calls: list[list[int]] = []

        def lock(ids: list[int]) -> set[int]:
            calls.append(ids)
            if len(calls) == 1:  # meanwhile another arrival committed: it filled all but 4 of the 18 presentations
                keep = [c.id for c in design.regular if c.id not in ids and c.level == "topic"][:4]  # 4 groups' topic level
                self.assertGreaterEqual(len(keep), 3)
                lease = NOW + timedelta(minutes=10)
                Assignment.objects.bulk_create(
                    Assignment(annotator=other, presentation_id=c.id, position=n + 1, a_on_left=True, assigned_at=NOW, lease_expires_at=lease)
                    for n, c in enumerate(c for c in design.regular if c.id not in keep)
                )  # fmt: skip
            return set(ids)

        me = allocation.register(study, external_id="me", now=NOW)
        history, _ = allocation.admission.history_of(me, design.by_id)
        picked, contended = choice.pick_regular(study, design, 3, history, NOW, random.Random(3), lock)
        self.assertFalse(contended)
        self.assertGreaterEqual(len(calls), 2)
        full = allocation.live_counts(study, NOW, calls[1])
        self.assertEqual([pid for pid in calls[1] if full.get(pid, 0) >= 1], [])  # chosen from fresh counts
        self.assertEqual(len(picked), 3)
        self.assertEqual(len(calls), 2)
