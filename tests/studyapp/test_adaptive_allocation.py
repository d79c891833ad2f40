"""Adaptive allocation in the study app: the setting, the stored draws, admission offering drawn groups first,
every allocation invariant (the load benchmark's own checks) and the command (docs/meta.md#adaptive-allocation)."""

from __future__ import annotations

import warnings
from collections import Counter
from datetime import timedelta
from io import StringIO
from unittest import mock

import numpy as np
from django.core.management import call_command
from django.core.management.base import CommandError

from benchmarks.load_adaptive import summary
from benchmarks.load_annotators import Stats, check_invariants
from evaluation.exceptions import EvaluationWarning
from studyapp.exceptions import StudyFull
from studyapp.models import AllocationGroup, AllocationRound, Annotator, Assignment, Presentation
from studyapp.services.analysis.adaptive import analysis_round, design_weights_by_group, groups_of, recompute, round_due
from studyapp.services.participation import allocation
from tests.studyapp.base import NOW, BaseTestCase, import_toy, make_toy_study


class AdaptiveAllocationTests(BaseTestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.collection = import_toy()
        cls.study = make_toy_study(allocation="adaptive", check_share=0.17, name="Adaptive toy")
        cls.uniform = make_toy_study(name="Uniform toy")

    def gen(self, seed: int = 1) -> np.random.Generator:
        return np.random.default_rng(seed)

    def test_the_setting_defaults_to_uniform_and_is_stored(self) -> None:
        self.assertEqual(self.uniform.allocation, "uniform")
        self.assertEqual(self.study.allocation, "adaptive")
        self.assertEqual(self.study.config["allocation"], "adaptive")
        self.assertIsNone(allocation.pool.offered_groups(self.uniform))
        with self.assertRaisesMessage(ValueError, "uniform allocation"):
            recompute(self.uniform)

    def test_recompute_creates_the_groups_and_draws_a_round_with_known_probabilities(self) -> None:
        result = recompute(self.study, now=self.now, rng=self.gen())
        groups = AllocationGroup.objects.filter(study=self.study)
        self.assertEqual(groups.count(), 6)  # 2 topics x 3 run pairs
        self.assertEqual((result.drew, result.analysis_round), (0, None))
        self.assertTrue(all(0 < g.probability <= 1 for g in groups))  # every group had a positive chance
        self.assertEqual(result.drawn_groups, groups.filter(drawn_round=0).count())
        drawn_round = AllocationRound.objects.get(study=self.study, number=0)
        self.assertAlmostEqual(drawn_round.target, sum(g.probability for g in groups))
        again = recompute(self.study, now=self.now, rng=self.gen())  # drawn groups still open: no new round
        self.assertIsNone(again.drew if result.drawn_groups else None)

    def test_admission_offers_the_drawn_groups_first(self) -> None:
        ensure = groups_of(self.study)  # the groups exist, none drawn
        first = ensure.rows[0]
        AllocationGroup.objects.filter(pk=first.pk).update(drawn_round=0, probability=0.5, priority=2.0)
        allocation.pool.OFFERS.clear()  # a draw by hand, without a round: admission would keep the draws it read last
        k = self.study.annotators_per_presentation
        self.assertEqual(allocation.pool.offered_groups(self.study), {(first.topic_id, first.run_a_id, first.run_b_id): (k, 2.0, 0)})
        annotator = self.arrive("alice")
        got = Counter(
            (a.presentation.topic_id, a.presentation.run_a_id, a.presentation.run_b_id)
            for a in Assignment.objects.filter(annotator=annotator, presentation__kind=Presentation.Kind.PAIR).select_related(
                "presentation"
            )
        )
        # one level of the drawn group per annotator: its topic-level item or its two subtopic items, all taken first
        self.assertGreaterEqual(got[first.topic_id, first.run_a_id, first.run_b_id], 1)
        levels = set(
            Assignment.objects.filter(
                annotator=annotator, presentation__topic_id=first.topic_id, presentation__run_a_id=first.run_a_id,
                presentation__run_b_id=first.run_b_id,
            ).values_list("presentation__level", flat=True)
        )  # fmt: skip
        expected = Presentation.objects.filter(
            study=self.study, topic_id=first.topic_id, run_a_id=first.run_a_id, run_b_id=first.run_b_id, level__in=levels
        ).count()
        self.assertEqual(got[first.topic_id, first.run_a_id, first.run_b_id], expected)

    def test_a_first_layer_group_is_offered_first_for_one_answer_per_presentation_only(self) -> None:
        design = allocation.pool.design_of(self.study)
        group = design.regular[0].group
        k = self.study.annotators_per_presentation
        counts = {c.id: 1 for c in design.regular if c.group == group}  # one answer on each of its presentations

        def first_pick(depth: int):
            return allocation.choice.greedy(
                design, 1, counts=counts, k=k, history=allocation.pool.History(), unavailable=set(),
                tiebreak={c.id: 0.0 for c in design.regular}, same_pair_both_levels=self.study.same_pair_both_levels,
                first=allocation.pool.Offer.of(design, {group: (depth, 0.5, 0)}),
            )[0]  # fmt: skip

        self.assertEqual(first_pick(k).group, group)  # full: still offered before the unanswered others
        others = {c.group for c in design.regular if c.group != group}

        def pick(depths: dict) -> tuple:
            return allocation.choice.greedy(
                design, 1, counts=counts, k=k, history=allocation.pool.History(), unavailable=set(),
                tiebreak={c.id: 0.0 for c in design.regular}, same_pair_both_levels=self.study.same_pair_both_levels,
                first=allocation.pool.Offer.of(design, depths),
            )[0].group  # fmt: skip

        other = sorted(others)[0]
        # a drawn group's first layer before another's second answer
        self.assertEqual(pick({group: (1, 0.5, 0), other: (1, 0.1, 0)}), other)
        self.assertEqual(pick({group: (1, 0.5, 0)}), group)  # a drawn group's second answer before the groups not drawn
        counts.update({c.id: 1 for c in design.regular if c.group == other})  # both first layers done
        self.assertEqual(pick({group: (1, 0.5, 0), other: (1, 0.9, 0)}), other)  # further answers: the most disputed now first
        self.assertEqual(pick({group: (1, 0.5, 0), other: (1, 0.2, 0)}), group)
        # the rounds complete in order: an older round's group below its depth (1 of k answers) before a newer
        # round's unanswered one, whatever their probabilities
        third = sorted(others)[1]
        self.assertEqual(pick({group: (k, 0.1, 0), third: (k, 0.9, 1)}), group)
        self.assertEqual(pick({group: (k, 0.9, 1), third: (k, 0.1, 0)}), third)
        self.assertEqual(pick({group: (k, 0.9, 2), third: (k, 0.1, 3)}), group)  # by age, not by number
        groups_of(self.study)  # the groups exist
        AllocationGroup.objects.filter(study=self.study).update(drawn_round=0, probability=0.5, priority=1.25, full=False)
        self.assertEqual(set(allocation.pool.offered_groups(self.study).values()), {(1, 1.25, 0)})  # ordered by dispute weight now

    def test_every_allocation_invariant_holds_through_a_whole_adaptive_study(self) -> None:
        stats, rng, n = Stats(), self.gen(5), 0
        while True:
            recompute(self.study, now=self.later(minutes=n), rng=rng)
            try:
                annotator = self.arrive(f"p{n}", now=self.later(minutes=n))
            except StudyFull:
                break
            at = self.later(minutes=n, seconds=5)
            while (item := allocation.current_assignment(annotator, now=at, rng=self.rng)) is not None:
                value = int(rng.integers(-4, 5))
                allocation_answer(item, value, at)
                stats.acknowledged[item.pk] = value
                at += timedelta(seconds=2)
            n += 1
            self.assertLess(n, 40, "the study never filled")
        finished = set(Annotator.objects.filter(study=self.study, status=Annotator.Status.FINISHED).values_list("external_id", flat=True))
        stats.shown_code, stats.told_finished = set(finished), set(finished)
        with mock.patch("django.db.connections.close_all"):  # the benchmark reopens its connection; a test keeps its transaction
            problems = check_invariants({"pk": self.study.pk, "k": self.study.annotators_per_presentation}, stats)
        self.assertEqual(problems, [])
        # what the benchmark does not check: sides balanced per annotator, the check items in every quota, every slot used
        for annotator in Annotator.objects.filter(study=self.study, status=Annotator.Status.FINISHED):
            sides = Counter(annotator.assignments.values_list("a_on_left", flat=True))
            self.assertLessEqual(abs(sides[True] - sides[False]), 1)
            checks = annotator.assignments.exclude(presentation__kind=Presentation.Kind.PAIR).count()
            self.assertEqual(checks, self.study.check_items_per_annotator)
        self.assertEqual(len(finished), n)
        room = allocation.capacity(self.study, now=self.later(minutes=n))
        self.assertEqual(room.newcomers, 0)  # full as uniform allocation fills it: what is left no full quota can hold
        self.assertGreater(self.study.allocation_rounds.count(), 0)
        groups = groups_of(self.study)
        weights, r_star = design_weights_by_group(self.study)
        self.assertEqual(r_star, analysis_round(groups))
        self.assertTrue(all(w > 0 for w in weights.values()))  # pooled over the rounds: a group drawn late with q near 1 weighs < 1
        drawn = groups.drawn_round >= 0
        self.assertTrue(drawn.all())  # every group was drawn in some round before the study filled
        # full with the default share where the contenders dispute the group at its draw, for sure where they do not
        self.assertLessEqual(set(np.unique(groups.full_probability[drawn])), {recompute.__globals__["FULL"], 1.0})
        undisputed = drawn & (groups.full_probability == 1.0)
        self.assertTrue(groups.full[undisputed].all())

    def test_once_nothing_undrawn_is_disputed_a_round_is_drawn_once_per_rounds_answers(self) -> None:
        groups = groups_of(self.study)
        n = len(groups.rows)
        available, disputed, calm = np.ones(n, dtype=bool), np.ones(n), np.zeros(n)
        self.assertTrue(round_due(self.study, groups, calm, available, 10.0))  # no round drawn yet
        AllocationRound.objects.create(
            study=self.study, number=0, drawn_at=self.now, answers=int(groups.answers.sum()), target=1.0, drawn=1
        )
        self.assertTrue(round_due(self.study, groups, disputed, available, 10.0))  # disputed groups left: at once
        self.assertFalse(round_due(self.study, groups, calm, available, 10.0))  # none: wait for a round's worth of answers
        self.assertFalse(round_due(self.study, groups, disputed, np.zeros(n, dtype=bool), 10.0))  # disputed but drawn: none left
        groups.answers[0] += 9
        self.assertFalse(round_due(self.study, groups, calm, available, 10.0))
        groups.answers[0] += 1
        self.assertTrue(round_due(self.study, groups, calm, available, 10.0))

    def test_the_decided_signal_looks_once_per_draw_and_at_most_max_looks_times(self) -> None:
        from types import SimpleNamespace

        def always_decided(d, p, measures, **options):  # a best set that would say "decided" at every recomputation
            return SimpleNamespace(
                members=tuple(measures), entries=tuple(measures[:2]), decided=True, chosen=SimpleNamespace(leaders=tuple(measures[:1]))
            )

        def undraw_all_but_one(number: int) -> None:  # leave groups to draw; the next round is number + 1
            rows = AllocationGroup.objects.filter(study=self.study)
            rows.update(drawn_round=-1)
            first, second = rows.order_by("pk").values_list("pk", flat=True)[:2]
            rows.filter(pk=first).update(drawn_round=0, probability=0.5)  # the mocked analysis round 0 has a group to weigh
            rows.filter(pk=second).update(drawn_round=number, probability=0.5)

        service = "studyapp.services.analysis.adaptive"
        first = recompute(self.study, now=self.now, rng=self.gen())  # no complete round yet: no best set
        self.assertEqual((first.drew, first.decided), (0, False))
        with (
            mock.patch(f"{service}.adaptive.contenders", side_effect=always_decided),
            mock.patch(f"{service}.analysis_round", return_value=0),
        ):
            again = recompute(self.study, now=self.now, rng=self.gen())  # round 0's slots still open: no draw, no look
            self.assertEqual((again.drew, again.decided), (None, False))
            forced = (mock.patch(f"{service}.round_due", return_value=True), mock.patch(f"{service}.RESERVE", 1e9))
            undraw_all_but_one(0)
            with forced[0], forced[1], mock.patch(f"{service}.MAX_LOOKS", 1):  # round 1 is past the looks: no look
                late = recompute(self.study, now=self.now, rng=self.gen())
            self.assertEqual((late.drew, late.decided), (1, False))
            undraw_all_but_one(1)
            with forced[0], forced[1]:
                look = recompute(self.study, now=self.now, rng=self.gen())  # round 2 < MAX_LOOKS: a look, and it decides
            self.assertEqual((look.drew, look.decided), (2, True))
        self.assertEqual(list(self.study.allocation_rounds.filter(decided=True).values_list("number", flat=True)), [2])

    def test_admission_reads_the_draws_once_per_round(self) -> None:
        design = allocation.pool.design_of(self.study)
        recompute(self.study, now=self.now, rng=self.gen())
        offer = allocation.pool.offer_of(self.study, design)
        self.assertEqual(offer, allocation.pool.Offer.of(design, allocation.pool.offered_groups(self.study)))
        drawn = {c.id for g in allocation.pool.offered_groups(self.study) for c in design.groups[g]}
        self.assertEqual(set(offer.depth), drawn)
        self.assertTrue(drawn)
        with self.assertNumQueries(1):  # the last round's number, not the drawn groups
            self.assertIs(allocation.pool.offer_of(self.study, design), offer)
        AllocationGroup.objects.filter(study=self.study, drawn_round__lt=0).update(drawn_round=1, probability=0.25)
        AllocationRound.objects.create(study=self.study, number=1, drawn_at=self.now, answers=0, target=1.0, drawn=1)
        again = allocation.pool.offer_of(self.study, design)  # a new round: read afresh
        self.assertIsNot(again, offer)
        self.assertEqual(set(again.depth), {c.id for c in design.regular})
        # the place: the highest probability at the draw first, equal probabilities share it
        places = {allocation.pool.offered_groups(self.study)[c.group][1]: again.place[c.id] for c in design.regular}
        self.assertEqual(places, {q: n for n, q in enumerate(sorted(places, reverse=True))})
        self.assertIsNone(allocation.pool.offer_of(self.uniform, allocation.pool.design_of(self.uniform)))

    def test_the_command_skips_turns_with_few_new_answers_and_prints_its_cpu(self) -> None:
        out = StringIO()
        states = iter([(0, 0), (0, 1), (5, 1), (40, 1), (40, 1)])  # before/after the 1st, two turns, after the 2nd
        with (
            mock.patch("studyapp.management.commands.allocation_priorities.state", side_effect=lambda study: next(states)),
            mock.patch("studyapp.management.commands.allocation_priorities.time.sleep") as sleep,
            mock.patch("studyapp.management.commands.allocation_priorities.os.nice") as nice,
        ):
            call_command("allocation_priorities", self.study.slug, "--every", "5", "--times", "2", "--min-answers", "30", stdout=out)
        lines = out.getvalue().strip().splitlines()
        self.assertEqual(len(lines), 2)  # (5, 1): 5 new answers < 30, skipped; (40, 1): recomputed
        self.assertRegex(lines[0], r"; \d+ ms, \d+ ms CPU$")
        self.assertEqual(sleep.call_count, 2)  # after the 1st recomputation and the skipped turn
        nice.assert_called_once_with(10)  # periodic: at low priority beside the server
        for bad in (["--min-answers", "0"], ["--nice", "20"], ["--nice", "-1"]):
            with self.assertRaises(CommandError):
                call_command("allocation_priorities", self.study.slug, "--every", "1", *bad, stdout=StringIO())

    def test_an_interrupt_ends_the_repetitions_with_a_line_not_a_traceback(self) -> None:
        """'--every: repeat ... until interrupted': Ctrl-C printed a KeyboardInterrupt traceback from time.sleep."""
        out = StringIO()
        with (
            mock.patch("studyapp.management.commands.allocation_priorities.time.sleep", side_effect=[None, KeyboardInterrupt]),
            mock.patch("studyapp.management.commands.allocation_priorities.os.nice"),
        ):
            call_command("allocation_priorities", self.study.slug, "--every", "5", "--min-answers", "1", stdout=out)
        lines = out.getvalue().strip().splitlines()
        self.assertEqual(lines[-1], f"{self.study.name}: stopped by an interrupt after 1 recomputation")

    def test_a_warning_of_the_recomputation_is_shown_once_per_process(self) -> None:
        """A study without candidate_metrics on data with equal intent weights warned 'PMP@10 is undefined on 20 of 20
        topics' (2 lines, a path inside studyapp) at every recomputation of --every, for as long as the study ran."""
        real = recompute

        def warning_recompute(study):
            warnings.warn("PMP@10 is undefined on 2 of 2 topics", EvaluationWarning, stacklevel=1)
            return real(study, now=NOW, rng=np.random.default_rng(1))

        out, err, states = StringIO(), StringIO(), iter([(0, 0), (0, 1), (40, 1), (40, 2), (80, 2), (80, 3)])
        with (
            mock.patch("studyapp.management.commands.allocation_priorities.recompute", side_effect=warning_recompute),
            mock.patch("studyapp.management.commands.allocation_priorities.state", side_effect=lambda study: next(states)),
            mock.patch("studyapp.management.commands.allocation_priorities.time.sleep"),
            mock.patch("studyapp.management.commands.allocation_priorities.os.nice"),
        ):
            call_command(
                "allocation_priorities", self.study.slug, "--every", "5", "--times", "3", "--min-answers", "1", stdout=out, stderr=err
            )
        self.assertEqual(len(out.getvalue().strip().splitlines()), 3)
        self.assertEqual(err.getvalue().count("PMP@10 is undefined on 2 of 2 topics"), 1)

    def test_the_command_prints_one_line_per_recomputation_not_the_logs_copy_too(self) -> None:
        """recompute's INFO line ("study 'X': analysis round ...") came on stderr beside the command's own, near-identical line."""
        with self.assertNoLogs("studyapp.services.analysis.adaptive", level="INFO"):
            call_command("allocation_priorities", self.study.slug, stdout=StringIO())
        with self.assertLogs("studyapp.services.analysis.adaptive", level="INFO"):  # other callers keep it
            recompute(self.study, now=NOW, rng=np.random.default_rng(1))

    def test_the_command_recomputes_and_refuses_a_uniform_study(self) -> None:
        out = StringIO()
        call_command("allocation_priorities", self.study.slug, stdout=out)
        self.assertIn("drew round 0", out.getvalue())
        self.assertIn("every metric (no complete round yet)", out.getvalue())
        # the load benchmark's summary of the recomputations beside the server reads these lines
        said = summary(out.getvalue().splitlines(), 10)
        self.assertRegex(said, r"^1 recomputation while .*, 0 with a complete analysis round \(none; decided in 0\), rounds drawn: 0;")
        self.assertIn("no recomputation", summary(["Traceback (most recent call last):"], 10))
        with self.assertRaisesMessage(CommandError, "uniform allocation"):
            call_command("allocation_priorities", self.uniform.slug, stdout=StringIO())
        with self.assertRaisesMessage(CommandError, "must not be negative"):
            call_command("allocation_priorities", self.study.slug, "--every", "-1", stdout=StringIO())
        for option in ("--times", "--min-answers"):  # were ignored without --every
            with self.assertRaisesMessage(CommandError, "give --every too"):
                call_command("allocation_priorities", self.study.slug, option, "2", stdout=StringIO())


def allocation_answer(item: Assignment, value: int, at) -> None:
    from studyapp.services.participation.answers import record_answer

    record_answer(item, value, client_ms=1000, request_id=f"r{item.pk}", now=at)


def test_the_decided_signal_can_fire_on_a_study_of_more_than_twelve_topics() -> None:
    """Each look's best set tests at look_alpha (0.0025 over 20 looks); with random sign flips (above 12 topics) its
    smallest p_best is 1 / (B + 1) + 0.1 alpha, so the recomputation's B must reach below the look's level."""
    from evaluation.meta import adaptive
    from studyapp.services.analysis import adaptive as service

    look = adaptive.look_alpha(0.05, service.MAX_LOOKS)
    assert service.B >= adaptive.fewest_flips(look) == 444
