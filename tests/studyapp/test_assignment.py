"""The assignment engine (``services.participation.allocation``) with injected time: quotas, the k limit, the level
exclusion, spread, balanced and stable sides, lease expiry and late answers (acceptance 3)."""

from __future__ import annotations

from collections import Counter

from django.db import connection
from django.test.utils import CaptureQueriesContext

from studyapp.exceptions import AnnotatorExcluded, StudyClosed, StudyError, StudyFull
from studyapp.models import Annotator, Assignment, Presentation, Study
from studyapp.services.analysis.status import study_status
from studyapp.services.participation import allocation
from studyapp.services.participation.answers import record_answer
from tests.studyapp.base import BaseTestCase, make_toy_study

CAST = ["alice", "bob", "carol", "erin", "frank", "grace"]  # six annotators fill the toy study exactly


class AssignmentTestCase(BaseTestCase):
    def items(self, annotator: Annotator) -> list[Assignment]:
        return list(annotator.assignments.select_related("presentation").order_by("position"))

    # ------------------------------------------------------------------ admission
    def test_it_leases_a_full_quota_on_admission(self) -> None:
        alice = self.arrive("alice")
        items = self.items(alice)
        self.assertEqual([a.position for a in items], [1, 2, 3, 4, 5, 6])
        self.assertEqual(len({a.presentation_id for a in items}), 6)
        self.assertTrue(all(a.lease_expires_at == self.later(minutes=10) for a in items))
        self.assertTrue(all(a.served_at is None for a in items))
        alice.refresh_from_db()
        self.assertEqual(alice.status, Annotator.Status.ACTIVE)

    def test_admission_is_idempotent(self) -> None:
        alice = self.arrive("alice")
        again = allocation.admit(alice, now=self.later(minutes=1), rng=self.rng)
        self.assertEqual([a.pk for a in again], [a.pk for a in self.items(alice)])
        self.assertEqual(Assignment.objects.count(), 6)

    def test_the_same_external_id_is_the_same_annotator(self) -> None:
        first = allocation.register(self.study, external_id="alice", external_ids={"PROLIFIC_PID": "alice"}, now=self.now)
        second = allocation.register(self.study, external_id="alice", now=self.later(minutes=3))
        self.assertEqual(first.pk, second.pk)
        self.assertNotEqual(allocation.register(self.study, now=self.now).pk, allocation.register(self.study, now=self.now).pk)

    def test_it_fills_exactly_k_answers_per_presentation_then_refuses_with_the_screenout_code(self) -> None:
        for name in CAST:
            self.arrive(name)
        counts = allocation.live_counts(self.study, self.now)
        self.assertEqual(len(counts), 18)
        self.assertEqual(set(counts.values()), {2})
        dave = allocation.register(self.study, external_id="dave", now=self.now)
        with self.assertRaises(StudyFull) as ctx:
            allocation.admit(dave, now=self.now, rng=self.rng)
        self.assertEqual(ctx.exception.screenout_code, "TOYFULL")
        dave.refresh_from_db()
        self.assertEqual(dave.status, Annotator.Status.REFUSED)
        self.assertEqual(dave.assignments.count(), 0)
        self.assertEqual(allocation.capacity(self.study, now=self.now).open_slots, 0)

    def test_a_full_quota_is_found_whenever_the_level_exclusion_allows_one(self) -> None:
        # 12 = every (topic, pair) at subtopic level: the level spread alone would take some topic
        # levels and find only 10, so admission falls back to filling first.
        big = make_toy_study("Big quota", items_per_annotator=12)
        self.assertEqual(allocation.capacity(big, now=self.now).newcomers, 2)
        for name in ("alice", "bob"):
            items = self.items(self.arrive(name, study=big))
            self.assertEqual(len(items), 12)
            self.assertEqual({a.presentation.level for a in items}, {"subtopic"})
        self.assertEqual(allocation.capacity(big, now=self.now).unfillable, {"topic": 12})
        with self.assertRaises(StudyFull):
            self.arrive("carol", study=big)  # only topic levels are left: one per (topic, pair), 6 < 12

    def test_capacity_agrees_with_admission_at_every_arrival(self) -> None:
        # Exact for the next newcomer; the count beyond it is a simulation (tie-breaks are random).
        for quota in (5, 8, 9):
            with self.subTest(quota=quota):
                study = make_toy_study(f"Quota {quota}", items_per_annotator=quota)
                for n in range(20):
                    room = allocation.capacity(study, now=self.now)
                    self.assertEqual(room.newcomers > 0, allocation.can_admit(study, now=self.now))
                    try:
                        annotator = self.arrive(f"q{quota}-{n}", study=study)
                    except StudyFull:
                        break
                    self.assertGreater(room.newcomers, 0)
                    self.answer_all(annotator)
                self.assertEqual(room.newcomers, 0)
                self.assertGreater(room.unfillable_slots, 0)  # 36 slots are no multiple of these quotas
                self.assertEqual(room.unfillable_slots, room.open_slots)
                self.assertEqual(room.unfillable_slots, sum(room.unfillable.values()))
                self.assertLess(room.next_quota, quota)

    def test_it_never_gives_one_annotator_a_presentation_twice(self) -> None:
        for name in CAST:
            self.arrive(name)
        pairs = list(Assignment.objects.values_list("annotator_id", "presentation_id"))
        self.assertEqual(len(pairs), len(set(pairs)))

    def test_newcomers_get_the_presentations_that_most_need_answers(self) -> None:
        alice, bob = self.arrive("alice"), self.arrive("bob")
        mine = {a.presentation_id for a in self.items(alice)}
        theirs = {a.presentation_id for a in self.items(bob)}
        self.assertFalse(mine & theirs)  # 12 presentations still had no one when bob came

    def test_a_closed_study_admits_nobody(self) -> None:
        Study.objects.filter(pk=self.study.pk).update(status=Study.Status.CLOSED)
        self.study.refresh_from_db()
        annotator = allocation.register(self.study, external_id="alice", now=self.now)
        with self.assertRaises(StudyClosed) as ctx:
            allocation.admit(annotator, now=self.now)
        self.assertEqual(ctx.exception.screenout_code, "TOYFULL")

    def test_items_are_only_served_after_admission(self) -> None:
        annotator = allocation.register(self.study, external_id="alice", now=self.now)
        with self.assertRaises(StudyError):
            allocation.current_assignment(annotator, now=self.now)

    # ----------------------------------------------------------- spread and sides
    def test_it_spreads_run_pairs_and_levels_over_an_annotators_items(self) -> None:
        for name in CAST:
            annotator = self.arrive(name)
            items = [a.presentation for a in self.items(annotator)]
            with self.subTest(annotator=name):
                self.assertEqual(Counter(p.level for p in items), {"topic": 2, "subtopic": 4})  # the study's 1:2 mix
                self.assertEqual(sorted(Counter((p.run_a_id, p.run_b_id) for p in items).values()), [2, 2, 2])

    def test_no_annotator_sees_the_same_topic_and_pair_at_both_levels(self) -> None:
        for name in CAST:
            annotator = self.arrive(name)
            levels: dict[tuple, set] = {}
            for a in self.items(annotator):
                levels.setdefault(a.presentation.group, set()).add(a.presentation.level)
            self.assertTrue(all(len(v) == 1 for v in levels.values()), levels)

    def test_both_levels_are_allowed_when_the_study_says_so(self) -> None:
        study = make_toy_study("Both levels", items_per_annotator=18, same_pair_both_levels=True)
        alice = self.arrive("alice", study=study)
        self.assertEqual(alice.assignments.count(), 18)  # everything, both levels of every (topic, pair)

    def test_sides_are_balanced_per_annotator(self) -> None:
        for name in CAST:
            annotator = self.arrive(name)
            self.assertEqual(Counter(a.a_on_left for a in self.items(annotator)), {True: 3, False: 3})

    def test_the_item_and_its_sides_are_stable_on_reload(self) -> None:
        alice = self.arrive("alice")
        first = allocation.current_assignment(alice, now=self.later(seconds=5), rng=self.rng)
        again = allocation.current_assignment(alice, now=self.later(minutes=2), rng=self.rng)
        self.assertEqual((again.pk, again.a_on_left, again.presentation_id), (first.pk, first.a_on_left, first.presentation_id))
        self.assertEqual(again.served_at, self.later(seconds=5))  # decision time starts at the first serving
        self.assertEqual(again.left_side(), "a" if first.a_on_left else "b")
        record_answer(again, 2, now=self.later(minutes=3))
        following = allocation.current_assignment(alice, now=self.later(minutes=4), rng=self.rng)
        self.assertEqual(following.position, 2)

    def test_an_annotator_who_answered_everything_has_finished(self) -> None:
        alice = self.arrive("alice")
        self.assertEqual(self.answer_all(alice), 6)
        alice.refresh_from_db()
        self.assertEqual(alice.status, Annotator.Status.FINISHED)
        self.assertIsNotNone(alice.finished_at)
        self.assertIsNone(allocation.current_assignment(alice, now=self.later(hours=1)))

    # ------------------------------------------------------------ leases and time
    def test_progress_keeps_every_open_lease_alive(self) -> None:
        alice = self.arrive("alice")
        allocation.touch(alice, self.later(minutes=8))
        self.assertEqual({a.lease_expires_at for a in self.items(alice)}, {self.later(minutes=18)})

    def test_activity_is_recorded_to_the_resolution_without_a_write_per_request(self) -> None:
        alice = self.arrive("alice")  # admission records her at self.now
        with CaptureQueriesContext(connection) as writes:
            allocation.mark_seen(alice, self.later(seconds=29))
        self.assertEqual(len(writes), 0)
        allocation.mark_seen(alice, self.later(seconds=30))
        self.assertEqual(Annotator.objects.get(pk=alice.pk).last_seen_at, self.later(seconds=30))
        allocation.touch(alice, self.later(minutes=2))  # progress records it too
        self.assertEqual(Annotator.objects.get(pk=alice.pk).last_seen_at, self.later(minutes=2))

    def test_showing_an_item_keeps_only_its_lease_alive(self) -> None:
        alice = self.arrive("alice")
        shown = allocation.current_assignment(alice, now=self.later(minutes=8), rng=self.rng)
        again = allocation.current_assignment(alice, now=self.later(minutes=9), rng=self.rng)
        self.assertEqual(again.pk, shown.pk)
        leases = {a.pk: a.lease_expires_at for a in self.items(alice)}
        self.assertEqual(leases.pop(shown.pk), self.later(minutes=19))
        self.assertEqual(set(leases.values()), {self.later(minutes=10)})  # from admission: not renewed by showing an item

    def test_progress_renews_leases_at_most_once_per_lease_resolution(self) -> None:
        alice = self.arrive("alice")  # leases run to now + 10 min
        allocation.touch(alice, self.later(seconds=30))  # would move them by 30 s: nothing written
        self.assertEqual({a.lease_expires_at for a in self.items(alice)}, {self.later(minutes=10)})
        allocation.touch(alice, self.later(seconds=60))  # by a full LEASE_RESOLUTION: renewed
        self.assertEqual({a.lease_expires_at for a in self.items(alice)}, {self.later(minutes=11)})
        with CaptureQueriesContext(connection) as writes:
            allocation.touch(alice, self.later(seconds=61))
        self.assertEqual(len(writes), 1)
        self.assertEqual({a.lease_expires_at for a in self.items(alice)}, {self.later(minutes=11)})

    def test_progress_with_the_leases_read_skips_the_write_when_none_is_due(self) -> None:
        alice = self.arrive("alice")  # leases run to now + 10 min
        ends = [a.lease_expires_at for a in self.items(alice)]
        for now, leases, writes in (
            (self.later(seconds=30), ends, 0),  # none due: no statement at all
            (self.later(seconds=30), [*ends, self.later(seconds=10)], 0),  # an expired one is not renewed by progress
            (self.later(seconds=60), ends, 1),  # due: written
        ):
            with self.subTest(now=now, leases=len(leases)), CaptureQueriesContext(connection) as queries:
                allocation.touch(alice, now, leases=leases)
            self.assertEqual(len([q for q in queries.captured_queries if q["sql"].startswith('UPDATE "studyapp_assignment"')]), writes)
        self.assertEqual({a.lease_expires_at for a in self.items(alice)}, {self.later(minutes=11)})

    def test_a_reload_right_after_the_last_renewal_writes_nothing(self) -> None:
        alice = self.arrive("alice")
        shown = allocation.current_assignment(alice, now=self.later(minutes=1), rng=self.rng)  # first serve: written
        with CaptureQueriesContext(connection) as queries:
            again = allocation.current_assignment(alice, now=self.later(minutes=1, seconds=20), rng=self.rng)
        self.assertEqual(again.pk, shown.pk)
        self.assertFalse([q for q in queries.captured_queries if q["sql"].startswith("UPDATE")])
        self.assertEqual(Assignment.objects.get(pk=shown.pk).lease_expires_at, self.later(minutes=11))
        allocation.current_assignment(alice, now=self.later(minutes=2, seconds=30), rng=self.rng)  # 90 s later: renewed
        self.assertEqual(Assignment.objects.get(pk=shown.pk).lease_expires_at, self.later(minutes=12, seconds=30))

    def test_an_expired_lease_frees_the_items_for_a_newcomer(self) -> None:
        for name in CAST:
            self.arrive(name)
        # everyone but alice keeps working; alice goes quiet
        for name in CAST[1:]:
            allocation.touch(Annotator.objects.get(external_id=name), self.later(minutes=8))  # they keep answering
        dave = allocation.register(self.study, external_id="dave", now=self.later(minutes=9))
        with self.assertRaises(StudyFull):
            allocation.admit(dave, now=self.later(minutes=9), rng=self.rng)  # alice's lease still runs
        allocation.admit(dave, now=self.later(minutes=11), rng=self.rng)  # ten idle minutes later it has expired
        alice = Annotator.objects.get(external_id="alice")
        self.assertEqual({a.presentation_id for a in self.items(dave)}, {a.presentation_id for a in self.items(alice)})
        self.assertEqual(set(allocation.live_counts(self.study, self.later(minutes=11)).values()), {2})

    def test_a_returning_annotator_keeps_expired_items_that_still_have_room(self) -> None:
        alice = self.arrive("alice")
        first = allocation.current_assignment(alice, now=self.now, rng=self.rng)
        back = allocation.current_assignment(alice, now=self.later(hours=2), rng=self.rng)
        self.assertEqual(back.pk, first.pk)
        self.assertFalse(alice.assignments.filter(released_at__isnull=False).exists())
        self.assertEqual({a.lease_expires_at for a in self.items(alice)}, {self.later(hours=2, minutes=10)})

    def test_a_returning_annotator_loses_items_taken_meanwhile_and_gets_replacements(self) -> None:
        alice, bob = self.arrive("alice"), self.arrive("bob")
        # carol, erin and frank arrive while alice is away: they take what has room, including alice's items
        later = self.later(minutes=30)
        allocation.current_assignment(bob, now=self.later(minutes=25), rng=self.rng)
        for name in ("carol", "erin", "frank"):
            self.arrive(name, now=later)
        taken = {a.presentation_id for a in self.items(alice)} & set(
            Assignment.objects.filter(annotator__external_id__in=["carol", "erin", "frank"]).values_list("presentation_id", flat=True)
        )
        self.assertTrue(taken)
        current = allocation.current_assignment(alice, now=self.later(minutes=31), rng=self.rng)
        self.assertIsNotNone(current)
        counts = allocation.live_counts(self.study, self.later(minutes=31))
        self.assertLessEqual(max(counts.values()), 2)  # never beyond k
        mine = {a.presentation_id: a for a in alice.assignments.all()}
        for pid, a in mine.items():
            others = counts.get(pid, 0) - (1 if a.released_at is None else 0)
            if a.released_at is not None:
                self.assertEqual(others, 2)  # released only because two others hold it now
            elif pid in taken:
                self.assertLess(others, 2)  # kept: it still had room
        self.assertTrue(any(a.released_at for a in mine.values()))
        self.assertEqual(alice.assignments.filter(released_at__isnull=True).count(), 6)  # replacements refill the quota
        self.assertEqual(len(mine), alice.assignments.count())  # still never the same presentation twice

    def test_a_late_answer_is_stored_counted_and_shows_as_over_coverage(self) -> None:
        for name in CAST:
            self.arrive(name)
        for name in CAST[1:]:
            allocation.touch(Annotator.objects.get(external_id=name), self.later(minutes=8))  # they keep answering
        dave = self.arrive("dave", now=self.later(minutes=11))
        alice = Annotator.objects.get(external_id="alice")
        stale = self.items(alice)[0]  # alice's page was still open in her browser
        preference, created = record_answer(stale, -3, client_ms=700000, now=self.later(minutes=12))
        self.assertTrue(created)
        self.assertTrue(preference.late)
        self.assertEqual(self.valid_answers(stale.presentation_id), 1)
        # the two live holders of that presentation answer too: 3 valid answers for k = 2
        self.answer_all(dave, now=self.later(minutes=13))
        other = Assignment.objects.exclude(annotator__in=[alice, dave]).get(presentation_id=stale.presentation_id)
        record_answer(other, 1, now=self.later(minutes=14))
        self.assertEqual(self.valid_answers(stale.presentation_id), 3)
        report = study_status(self.study, now=self.later(minutes=15))
        self.assertEqual(report["answers"]["late"], 1)
        self.assertEqual(report["over_covered"], 1)

    def test_excluded_annotators_free_their_items_and_get_no_more(self) -> None:
        for name in CAST:
            self.arrive(name)
        alice = Annotator.objects.get(external_id="alice")
        self.answer_all(alice)
        Annotator.objects.filter(pk=alice.pk).update(status=Annotator.Status.EXCLUDED)
        self.assertEqual(allocation.capacity(self.study, now=self.later(minutes=1)).open_slots, 6)
        with self.assertRaises(AnnotatorExcluded):
            allocation.current_assignment(alice, now=self.later(minutes=1))
        dave = self.arrive("dave", now=self.later(minutes=1))
        self.assertEqual(dave.assignments.count(), 6)

    # --------------------------------------------------------------- check items
    def test_check_items_are_spread_through_each_sequence(self) -> None:
        study = make_toy_study("With checks", items_per_annotator=10, check_share=0.2)
        for name in ("alice", "bob", "carol"):
            annotator = self.arrive(name, study=study)
            kinds = [a.presentation.kind for a in self.items(annotator)]
            with self.subTest(annotator=name):
                self.assertEqual(len(kinds), 10)
                self.assertEqual([n for n, k in enumerate(kinds) if k != Presentation.Kind.PAIR], [2, 7])
                self.assertEqual(Counter(kinds), {"pair": 8, "identical": 1, "degraded": 1})

    def test_check_items_have_no_answer_limit(self) -> None:
        study = make_toy_study("Checks for all", items_per_annotator=4, check_share=0.5, annotators_per_presentation=1, topics=["1", "2"])
        admitted = 0
        for name in CAST:
            try:
                self.arrive(name, study=study)
                admitted += 1
            except StudyFull:
                break
        self.assertEqual(admitted, 6)  # 18 presentations x k=1 / 2 regular items each = 9, but only 4 checks
        per_check = Counter(
            Assignment.objects.filter(presentation__study=study)
            .exclude(presentation__kind="pair")
            .values_list("presentation_id", flat=True)
        )
        self.assertTrue(all(n >= 2 for n in per_check.values()))  # 12 check items went to 4 check presentations
        self.assertEqual(sum(per_check.values()), 12)
