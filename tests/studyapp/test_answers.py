"""``services.participation.answers.record_answer``: shown and canonical values, decision times, idempotency, late answers."""

from __future__ import annotations

from datetime import timedelta

from studyapp.exceptions import AnswerConflict, InvalidAnswer
from studyapp.models import Preference
from studyapp.services.participation import allocation
from studyapp.services.participation.answers import canonical_value, record_answer
from tests.studyapp.base import BaseTestCase


class RecordAnswerTestCase(BaseTestCase):
    def setUp(self) -> None:
        super().setUp()
        self.alice = self.arrive("alice")
        self.item = allocation.current_assignment(self.alice, now=self.later(seconds=10), rng=self.rng)

    def test_canonical_value_follows_the_side_of_run_a(self) -> None:
        self.assertEqual(canonical_value(3, a_on_left=True), 3)  # right (= run_b) better -> run_b preferred
        self.assertEqual(canonical_value(3, a_on_left=False), -3)  # right is run_a -> run_a preferred
        self.assertEqual(canonical_value(0, a_on_left=False), 0)

    def test_it_stores_shown_and_canonical_values_and_both_times(self) -> None:
        preference, created = record_answer(self.item, -2, client_ms=4321, request_id="req-1", now=self.later(seconds=25))
        self.assertTrue(created)
        preference.refresh_from_db()
        self.assertEqual(preference.value, -2)
        self.assertEqual(preference.canonical, -2 if self.item.a_on_left else 2)
        self.assertEqual(preference.server_seconds, 15.0)  # served at +10 s, answered at +25 s
        self.assertEqual(preference.client_ms, 4321)
        self.assertEqual(preference.request_id, "req-1")
        self.assertFalse(preference.late)

    def test_both_orientations_give_the_same_canonical_answer(self) -> None:
        flipped = self.alice.assignments.exclude(a_on_left=self.item.a_on_left).first()
        mine, _ = record_answer(self.item, 4 if self.item.a_on_left else -4, now=self.later(seconds=20))
        theirs, _ = record_answer(flipped, 4 if flipped.a_on_left else -4, now=self.later(seconds=30))
        self.assertEqual((mine.canonical, theirs.canonical), (4, 4))  # both said "run_b much better"

    def test_repeating_a_request_stores_one_answer(self) -> None:
        first, created = record_answer(self.item, 1, request_id="same", now=self.later(seconds=20))
        again, created_again = record_answer(self.item, 1, request_id="same", now=self.later(seconds=21))
        other, created_other = record_answer(self.item, 1, request_id="second-tab", now=self.later(seconds=22))
        self.assertTrue(created)
        self.assertFalse(created_again or created_other)
        self.assertEqual({first.pk, again.pk, other.pk}, {first.pk})
        self.assertEqual(Preference.objects.filter(assignment=self.item).get().value, 1)

    def test_a_different_value_for_an_answered_item_is_refused(self) -> None:
        first, _ = record_answer(self.item, 1, request_id="first", now=self.later(seconds=20))
        for request_id in ("second-tab", "first"):
            with (
                self.subTest(request_id=request_id),
                self.assertRaisesRegex(AnswerConflict, "already answered with \\+1; -4 was not stored") as caught,
            ):
                record_answer(self.item, -4, request_id=request_id, now=self.later(seconds=22))
            self.assertEqual(caught.exception.stored.pk, first.pk)
        self.assertEqual(Preference.objects.filter(assignment=self.item).get().value, 1)

    def test_timings_past_the_column_are_clamped(self) -> None:
        preference, _ = record_answer(self.item, 1, client_ms=10**23, visible_ms=2**31, first_interaction_ms=5, now=self.later(seconds=20))
        preference.refresh_from_db()
        self.assertEqual((preference.client_ms, preference.visible_ms, preference.first_interaction_ms), (2**31 - 1, 2**31 - 1, 5))

    def test_out_of_range_and_malformed_answers_are_refused(self) -> None:
        for value in (5, -5, 1.5, "2", True, None):
            with self.subTest(value=value), self.assertRaises(InvalidAnswer):
                record_answer(self.item, value, now=self.later(seconds=20))  # type: ignore[arg-type]
        for client_ms in (-1, 2.5, "100"):
            with self.subTest(client_ms=client_ms), self.assertRaises(InvalidAnswer):
                record_answer(self.item, 1, client_ms=client_ms, now=self.later(seconds=20))  # type: ignore[arg-type]
        self.assertFalse(Preference.objects.exists())

    def test_an_answer_after_the_lease_expired_is_kept_and_marked_late(self) -> None:
        preference, created = record_answer(self.item, 2, now=self.later(hours=3))
        self.assertTrue(created)
        self.assertTrue(preference.late)
        self.assertEqual(preference.server_seconds, timedelta(hours=3, seconds=-10).total_seconds())

    def test_answering_is_activity_that_extends_the_leases(self) -> None:
        record_answer(self.item, 0, now=self.later(minutes=9))
        leases = set(self.alice.assignments.filter(preference__isnull=True).values_list("lease_expires_at", flat=True))
        self.assertEqual(leases, {self.later(minutes=19)})
