"""Quality control (``services.quality.control``): the fast rule live in the answer's transaction, the log,
re-evaluation with changed settings, reinstatement, staff decisions and the further signals."""

from __future__ import annotations

from datetime import timedelta

from django.contrib.auth import get_user_model
from django.db.models import Count

from studyapp.exceptions import AnnotatorExcluded
from studyapp.models import Annotator, Assignment, Preference, QualityDecision, Study
from studyapp.services.analysis.status import study_status
from studyapp.services.participation import allocation, flow
from studyapp.services.participation.answers import record_answer
from studyapp.services.participation.sequence import Sequence
from studyapp.services.quality import control, rules
from tests.studyapp.base import BaseTestCase, make_toy_study


class QualityTestCase(BaseTestCase):
    """The toy study with a small fast rule: more than 2 decisions under 10 s exclude."""

    def setUp(self) -> None:
        super().setUp()
        Study.objects.filter(pk=self.study.pk).update(fast_limit=2, fast_threshold_seconds=10)
        self.study.refresh_from_db()
        self.clock = self.now

    def decide(self, annotator: Annotator, seconds: float, value: int = 1, **extra) -> Assignment | None:
        """Serve the current item of ``annotator`` and answer it ``seconds`` later (server time)."""
        item = allocation.current_assignment(annotator, now=self.clock, rng=self.rng)
        if item is None:
            return None
        self.clock += timedelta(seconds=seconds)
        sequence = Sequence.of(annotator)
        record_answer(item, value, request_id=f"r{item.pk}", now=self.clock, **extra)
        flow.after_answer(annotator, sequence, item.pk, now=self.clock)  # what the answer view does next
        self.clock += timedelta(seconds=1)
        annotator.refresh_from_db()
        return item

    def decide_all(self, annotator: Annotator, times: list[float], values: list[int] | None = None) -> None:
        for n, seconds in enumerate(times):
            self.decide(annotator, seconds, values[n] if values else 1)

    def set(self, **settings) -> None:
        Study.objects.filter(pk=self.study.pk).update(**settings)
        self.study.refresh_from_db()

    def counted(self) -> dict[int, int]:
        """Answers that count per presentation (valid answers only)."""
        rows = Assignment.objects.filter(presentation__study=self.study, preference__isnull=False).valid()
        return dict(rows.values("presentation_id").annotate(n=Count("id")).values_list("presentation_id", "n"))


class FastRuleTestCase(QualityTestCase):
    def test_exactly_at_the_limit_is_not_excluded(self) -> None:
        alice = self.arrive("alice")
        self.decide_all(alice, [3, 3, 30, 30, 30, 30])
        self.assertEqual(alice.status, Annotator.Status.FINISHED)
        self.assertFalse(QualityDecision.objects.exists())
        signals = control.annotator_signals(self.study)[0]
        self.assertEqual((signals.fast, signals.decisions, signals.breaches), (2, 6, ()))

    def test_crossing_the_limit_excludes_at_once_frees_the_leases_and_keeps_the_answers(self) -> None:
        alice = self.arrive("alice")
        self.decide_all(alice, [3, 30, 9.9])
        self.assertEqual(alice.status, Annotator.Status.ACTIVE)
        answered = self.decide(alice, 1)
        self.assertEqual(alice.status, Annotator.Status.EXCLUDED)
        self.assertIsNone(alice.finished_at)
        self.assertEqual(flow.next_step(alice), flow.EXCLUDED)
        decision = QualityDecision.objects.get()
        self.assertEqual((decision.action, decision.rule, decision.staff, decision.annotator), ("exclude", "fast", None, alice))
        self.assertEqual(decision.detail, "fast: 3 of 4 decisions under 10 s (limit 2)")
        self.assertEqual(decision.counts["fast"], {"fast": 3, "decisions": 4, "threshold_seconds": 10.0, "limit": 2, "time": "server"})
        self.assertEqual(decision.decided_at, self.clock - timedelta(seconds=1))
        self.assertEqual(alice.exclusion_reason, decision.detail)
        # Never deleted: 4 answers stay, the last one included; the 2 unanswered items were freed.
        self.assertEqual(Preference.objects.filter(assignment__annotator=alice).count(), 4)
        self.assertTrue(Preference.objects.filter(assignment=answered).exists())
        self.assertEqual(sorted(decision.released), sorted(alice.assignments.filter(preference__isnull=True).values_list("pk", flat=True)))
        self.assertEqual(len(decision.released), 2)
        self.assertFalse(alice.assignments.open().exists())
        # Her answers no longer count: nothing is taken on any presentation.
        self.assertEqual(self.counted(), {})
        self.assertEqual(allocation.live_counts(self.study, self.clock), {})
        report = study_status(self.study, now=self.clock)
        self.assertEqual((report["answers"]["total"], report["answers"]["from_excluded"]), (0, 4))

    def test_the_reopened_presentations_go_to_newcomers_until_k_valid_answers_each(self) -> None:
        cheat = self.arrive("cheat")
        self.decide_all(cheat, [1, 1, 1])
        self.assertEqual(cheat.status, Annotator.Status.EXCLUDED)
        for n in range(6):  # the toy study fits exactly 6 annotators of 6 items with k = 2
            self.decide_all(self.arrive(f"honest{n}"), [20] * 6)
        self.assertEqual(sorted(self.counted().values()), [2] * 18)
        self.assertFalse(allocation.can_admit(self.study, now=self.clock))

    def test_a_slow_answer_costs_no_query_when_only_the_fast_rule_excludes(self) -> None:
        alice = self.arrive("alice")
        slow = Preference.objects.get(assignment=self.decide(alice, 30))
        fast = Preference.objects.get(assignment=self.decide(alice, 3))
        alice = Annotator.objects.select_related("study").get(pk=alice.pk)
        with self.assertNumQueries(0):
            self.assertIsNone(control.apply_live(alice, slow))
        with self.assertNumQueries(1):  # a fast one: the annotator's answers are read
            self.assertIsNone(control.apply_live(alice, fast))
        limit = self.study.fast_limit
        with self.assertNumQueries(0):  # not while her answers (as the caller counted them) cannot exceed the limit
            self.assertIsNone(control.apply_live(alice, fast, answers_given=limit))
        with self.assertNumQueries(1):
            self.assertIsNone(control.apply_live(alice, fast, answers_given=limit + 1))
        self.set(straightline_limit=5)  # another excluding rule: every answer is judged
        alice = Annotator.objects.select_related("study").get(pk=alice.pk)
        with self.assertNumQueries(1):
            self.assertIsNone(control.apply_live(alice, slow))

    def test_retries_and_double_submits_count_once(self) -> None:
        alice = self.arrive("alice")
        for _ in range(2):
            item = allocation.current_assignment(alice, now=self.clock, rng=self.rng)
            for repeat in range(3):  # the same answer sent three times (a retry, a double click, another request id)
                record_answer(item, 1, request_id=f"r{item.pk}-{repeat % 2}", now=self.clock + timedelta(seconds=1 + repeat))
            self.clock += timedelta(seconds=30)
        alice.refresh_from_db()
        self.assertEqual(alice.status, Annotator.Status.ACTIVE)
        self.assertEqual(control.annotator_signals(self.study)[0].fast, 2)
        self.decide(alice, 1)
        self.assertEqual(alice.status, Annotator.Status.EXCLUDED)

    def test_the_browser_visible_time_when_the_study_says_so(self) -> None:
        self.set(fast_time=Study.FastTime.VISIBLE)
        alice = self.arrive("alice")
        self.decide(alice, 60, visible_ms=2000)  # slow for the server, fast while visible
        self.decide(alice, 60, visible_ms=20000)
        self.decide(alice, 2)  # no browser time: the server's
        self.decide(alice, 60, visible_ms=9999)
        self.assertEqual(alice.status, Annotator.Status.EXCLUDED)
        decision = QualityDecision.objects.get()
        self.assertEqual(decision.counts["fast"]["time"], "visible")
        self.assertEqual(decision.detail, "fast: 3 of 4 decisions under 10 s (limit 2)")

    def test_excluded_on_the_last_answer_keeps_the_completion_page(self) -> None:
        alice = self.arrive("alice")
        self.decide_all(alice, [30, 30, 30, 1, 1, 1])
        self.assertEqual(alice.status, Annotator.Status.EXCLUDED)
        self.assertIsNotNone(alice.finished_at)
        self.assertEqual(QualityDecision.objects.get().released, [])
        self.assertEqual(flow.next_step(alice), flow.DONE)

    def test_an_answer_arriving_after_the_exclusion_is_stored_and_not_counted(self) -> None:
        alice = self.arrive("alice")
        first = allocation.current_assignment(alice, now=self.clock, rng=self.rng)
        self.decide_all(alice, [1, 1, 1])
        _, created = record_answer(first, 1, request_id="late-one", now=self.clock)  # a repeat arriving after the exclusion
        self.assertFalse(created)
        item = Assignment.objects.get(pk=QualityDecision.objects.get().released[0])
        late, created = record_answer(item, 3, request_id="in-flight", now=self.clock)  # its page was open: still stored
        self.assertTrue(created)
        self.assertEqual(QualityDecision.objects.count(), 1)
        self.assertEqual(Preference.objects.filter(assignment__annotator=alice).count(), 4)
        self.assertEqual(self.counted(), {})


class QualityCheckTestCase(QualityTestCase):
    def setUp(self) -> None:
        super().setUp()
        self.staff = get_user_model().objects.create_user("staff", is_staff=True)  # no password: no slow hashing
        self.ann = {}
        for name, times in (("slow", [30] * 6), ("four", [1, 1, 30, 30, 30, 30]), ("quick", [5] * 6)):
            self.set(fast_limit=10)  # nobody excluded while answering
            self.ann[name] = self.arrive(name)
            self.decide_all(self.ann[name], times)

    def status(self, name: str) -> str:
        return Annotator.objects.get(pk=self.ann[name].pk).status

    def check(self, dry_run: bool = False) -> control.QualityReport:
        return control.quality_check(self.study, dry_run=dry_run, now=self.clock)

    def test_a_stricter_rule_excludes_and_reopens_a_looser_one_reinstates(self) -> None:
        self.set(fast_limit=1)
        report = self.check()
        self.assertEqual([s.pseudonym for s, _ in report.excluded], [self.ann["four"].pseudonym, self.ann["quick"].pseudonym])
        self.assertEqual(report.excluded[1][1], "fast: 6 of 6 decisions under 10 s (limit 1)")
        self.assertEqual((self.status("slow"), self.status("four"), self.status("quick")), ("finished", "excluded", "excluded"))
        self.assertEqual(sum(self.counted().values()), 6)  # only slow's answers count
        self.assertEqual(flow.next_step(Annotator.objects.get(pk=self.ann["quick"].pk)), flow.DONE)  # they finished
        self.set(fast_limit=2)
        report = self.check()
        self.assertEqual([s.pseudonym for s in report.reinstated], [self.ann["four"].pseudonym])
        self.assertEqual((report.still_excluded, self.status("four"), self.status("quick")), (1, "finished", "excluded"))
        self.assertEqual(sum(self.counted().values()), 12)
        log = list(QualityDecision.objects.filter(annotator=self.ann["four"]).values_list("action", "rule"))
        self.assertEqual(log, [("exclude", "fast"), ("reinstate", "rules")])
        self.assertEqual(self.check().excluded, [])  # nothing changes a second time

    def test_a_dry_run_writes_nothing(self) -> None:
        self.set(fast_limit=1)
        report = self.check(dry_run=True)
        self.assertEqual(len(report.excluded), 2)
        self.assertIn("dry run: nothing written", report.lines()[0])
        self.assertIn("  would exclude: 2", report.lines())
        self.assertFalse(QualityDecision.objects.exists())
        self.assertEqual({self.status(n) for n in self.ann}, {"finished"})

    def test_the_rules_leave_staff_decisions_alone(self) -> None:
        control.exclude(self.ann["slow"], rule="staff", staff=self.staff, reason="copied answers", now=self.clock)
        self.set(fast_limit=1)
        self.check()
        control.reinstate(self.ann["quick"], staff=self.staff, reason="checked by hand: fast but careful", now=self.clock)
        report = self.check()
        self.assertEqual((report.excluded, report.reinstated, report.left_to_staff), ([], [], 2))
        self.assertEqual((self.status("slow"), self.status("four"), self.status("quick")), ("excluded", "excluded", "finished"))
        staff_log = QualityDecision.objects.filter(staff=self.staff).order_by("id")
        self.assertEqual([(d.action, d.rule, d.reason) for d in staff_log],
                         [("exclude", "staff", "copied answers"), ("reinstate", "staff", "checked by hand: fast but careful")])  # fmt: skip

    def test_reinstating_a_mid_study_exclusion_gives_the_freed_items_back_or_replaces_them(self) -> None:
        self.set(fast_limit=2)
        dave = self.arrive("dave")
        self.decide_all(dave, [1, 1, 1])
        self.assertEqual(dave.status, Annotator.Status.EXCLUDED)
        freed = QualityDecision.objects.get(annotator=dave).released
        control.reinstate(dave, staff=self.staff, reason="network trouble", now=self.clock)
        dave.refresh_from_db()
        self.assertEqual((dave.status, dave.exclusion_reason, dave.finished_at), (Annotator.Status.ACTIVE, "", None))
        self.assertEqual(set(dave.assignments.expired(self.clock).values_list("pk", flat=True)), set(freed))
        self.decide_all(dave, [30, 30, 30])
        self.assertEqual((dave.status, dave.assignments.filter(preference__isnull=False).count()), (Annotator.Status.FINISHED, 6))

    def test_annotators_without_items_cannot_be_excluded(self) -> None:
        screened = self.arrive("screened")
        flow.check_comprehension(screened, {})
        flow.check_comprehension(screened, {})
        self.assertEqual(screened.status, Annotator.Status.SCREENED)
        self.assertIsNone(control.exclude(screened, rule="staff", staff=self.staff, reason="x", now=self.clock))
        screened.refresh_from_db()
        self.assertEqual((screened.status, screened.finished_at, flow.next_step(screened)), ("screened", None, flow.SCREENED))
        self.assertFalse(QualityDecision.objects.exists())

    def test_exclude_and_reinstate_twice_change_nothing(self) -> None:
        self.assertIsNotNone(control.exclude(self.ann["slow"], rule="staff", staff=self.staff, reason="x", now=self.clock))
        self.assertIsNone(control.exclude(self.ann["slow"], rule="staff", staff=self.staff, reason="x", now=self.clock))
        self.assertIsNotNone(control.reinstate(self.ann["slow"], staff=self.staff, reason="y", now=self.clock))
        self.assertIsNone(control.reinstate(self.ann["slow"], staff=self.staff, reason="y", now=self.clock))
        self.assertEqual(QualityDecision.objects.count(), 2)


class SignalTestCase(QualityTestCase):
    """Check items, straight-lining, side bias and median time: reported always, excluding only when set."""

    @classmethod
    def setUpTestData(cls) -> None:
        super().setUpTestData()
        # The check rule switched off (reported only); its default (1) is tested in test_the_default_check_rule_excludes_live.
        cls.checked = make_toy_study("Checked study", items_per_annotator=6, check_share=0.5, check_fail_limit=None)

    def setUp(self) -> None:
        super().setUp()
        self.study = self.checked
        self.set(fast_limit=100)

    def answer_by_kind(self, annotator: Annotator, check_values: dict[str, int], regular: int, seconds: float = 20) -> None:
        """Answer checks with ``check_values[kind]`` (canonical) and regular items with ``regular`` (as shown)."""
        while (item := allocation.current_assignment(annotator, now=self.clock, rng=self.rng)) is not None:
            kind = item.presentation.kind
            shown = regular if kind == "pair" else (check_values[kind] if item.a_on_left else -check_values[kind])
            self.clock += timedelta(seconds=seconds)
            sequence = Sequence.of(annotator)
            record_answer(item, shown, request_id=f"r{item.pk}", now=self.clock)
            flow.after_answer(annotator, sequence, item.pk, now=self.clock)
        annotator.refresh_from_db()

    def signals(self, annotator: Annotator) -> control.AnnotatorSignals:
        return next(s for s in control.annotator_signals(self.study) if s.annotator_id == annotator.pk)

    def test_check_items_are_scored_and_exclude_only_above_the_limit(self) -> None:
        good, bad = self.arrive("good", study=self.checked), self.arrive("bad", study=self.checked)
        self.answer_by_kind(good, {"identical": 0, "degraded": -3}, 2)
        self.answer_by_kind(bad, {"identical": 4, "degraded": 2}, 2)
        self.assertEqual((self.signals(good).checks, self.signals(good).checks_failed), (3, 0))
        self.assertEqual((self.signals(bad).checks, self.signals(bad).checks_failed), (3, 3))
        self.assertEqual(bad.status, Annotator.Status.FINISHED)  # no limit set: reported only
        self.set(check_fail_limit=2)
        report = control.quality_check(self.study, now=self.clock)
        self.assertEqual([(s.pseudonym, d) for s, d in report.excluded], [(bad.pseudonym, "checks: 3 of 3 check items failed (limit 2)")])
        self.set(check_fail_limit=3)
        self.assertEqual(len(control.quality_check(self.study, now=self.clock).reinstated), 1)

    def test_the_default_check_rule_excludes_live(self) -> None:
        """Two failed check items exclude by default (Prolific: at least two failed attention checks in a study of five minutes or more)."""
        study = make_toy_study("Default checks", items_per_annotator=6, check_share=0.5)
        self.assertEqual(study.check_fail_limit, 1)
        self.study = study
        annotator = self.arrive("careless", study=study)
        with self.assertRaises(AnnotatorExcluded):
            self.answer_by_kind(annotator, {"identical": 4, "degraded": 2}, 2)
        annotator.refresh_from_db()
        self.assertEqual(annotator.status, Annotator.Status.EXCLUDED)
        decision = QualityDecision.objects.get(annotator=annotator)
        self.assertEqual((decision.rule, decision.counts["checks"]["failed"]), ("checks", 2))

    def test_zero_on_a_degraded_check_is_not_the_wrong_side(self) -> None:
        annotator = self.arrive("zero", study=self.checked)
        self.answer_by_kind(annotator, {"identical": 0, "degraded": 0}, 1)
        self.assertEqual(self.signals(annotator).checks_failed, 0)

    def test_straight_lining_side_bias_and_median_time(self) -> None:
        annotator = self.arrive("same", study=self.checked)
        self.answer_by_kind(annotator, {"identical": 0, "degraded": 0}, -3, seconds=4)
        s = self.signals(annotator)
        self.assertEqual((s.decisions, s.median_seconds), (6, 4.0))
        regular_run = s.longest_run
        self.assertGreaterEqual(regular_run, 1)
        values = list(annotator.assignments.order_by("position").values_list("preference__value", flat=True))
        self.assertEqual(regular_run, rules.longest_run(values)[0])
        self.assertEqual(s.breaches, ())
        self.set(median_seconds_min=5, side_bias_limit=0.6)
        self.study.straightline_limit = regular_run - 1  # in memory: a limit of 0 is outside the settings' (and the database's) bounds
        s = self.signals(annotator)
        # 6 decisions are too few to judge side bias and median time (MIN_DECISIONS): only straight-lining breaks.
        self.assertEqual([b.rule for b in s.breaches], ["straightline"])

    def test_helpers_on_hand_made_sequences(self) -> None:
        self.assertEqual(rules.longest_run([1, 1, -2, -2, -2, 0]), (3, -2))
        self.assertEqual(rules.longest_run([]), (0, None))
        study = Study(fast_threshold_seconds=10, fast_limit=100, side_bias_limit=0.8, median_seconds_min=5)
        answers = [control.Answer(n, -2 if n % 10 else 3, 0, 4.0, None, "pair", None) for n in range(1, 21)]
        s = control.signals_of(study, Annotator(pseudonym="X"), answers)
        self.assertEqual((s.left_share, s.median_seconds), (0.9, 4.0))
        self.assertEqual([b.rule for b in s.breaches], ["side_bias", "median_time"])
        self.assertEqual(s.breaches[0].detail, "side bias: 90% of 20 non-zero answers on the left (limit 80%)")
        self.assertEqual(s.breaches[1].detail, "median time: 4.0 s over 20 decisions (minimum 5 s)")


class QualitySettingsTestCase(BaseTestCase):
    def test_the_configuration_keys_are_checked_and_stored(self) -> None:
        from studyapp.exceptions import InvalidStudyConfig
        from studyapp.services.design.study_config import parse_config

        config = parse_config({"runs": ["a", "b"], "fast_time": "visible", "check_fail_limit": 1, "straightline_limit": None,
                               "side_bias_limit": 0.9, "median_seconds_min": 2.5})  # fmt: skip
        self.assertEqual((config.fast_time, config.check_fail_limit, config.straightline_limit), ("visible", 1, None))
        self.assertEqual((config.side_bias_limit, config.median_seconds_min), (0.9, 2.5))
        defaults = parse_config({"runs": ["a", "b"]})
        # The default check rule: two failed check items exclude (docs/annotator.md#fair-rules).
        self.assertEqual((defaults.fast_time, defaults.check_fail_limit, defaults.side_bias_limit), ("server", 1, None))
        with self.assertRaises(InvalidStudyConfig) as caught:
            parse_config({"runs": ["a", "b"], "fast_time": "client", "check_fail_limit": -1, "straightline_limit": 0,
                          "side_bias_limit": 0.4, "median_seconds_min": 0})  # fmt: skip
        self.assertEqual(len(caught.exception.errors), 5)
        self.assertIn('fast_time must be one of server, visible, got "client"', caught.exception.errors)
        study = make_toy_study("Strict", fast_time="visible", check_fail_limit=0, side_bias_limit=0.75)
        self.assertEqual(
            (study.fast_time, study.check_fail_limit, study.side_bias_limit, study.straightline_limit), ("visible", 0, 0.75, None)
        )
