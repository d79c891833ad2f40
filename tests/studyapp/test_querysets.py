"""The lease states named once as QuerySet methods: open, live, expired, taking a slot, valid, working."""

from __future__ import annotations

from datetime import timedelta

from studyapp.models import Annotator, Assignment
from studyapp.services import platforms
from studyapp.services.participation.answers import record_answer
from tests.studyapp.base import BaseTestCase


class LeaseStatesTest(BaseTestCase):
    def setUp(self) -> None:
        super().setUp()
        self.alice = self.arrive("alice")  # 6 items, leases until now + 10 minutes
        self.items = list(self.alice.assignments.order_by("position"))
        self.answered, self.released = self.items[0], self.items[1]
        record_answer(self.answered, 2, now=self.now)
        Assignment.objects.filter(pk=self.released.pk).update(released_at=self.now)
        self.mine = Assignment.objects.filter(annotator=self.alice)

    def ids(self, qs) -> set[int]:
        return set(qs.values_list("pk", flat=True))

    def test_open_leaves_out_answered_and_released(self) -> None:
        self.assertEqual(self.ids(self.mine.open()), {a.pk for a in self.items[2:]})

    def test_live_and_expired_split_the_open_ones_at_the_lease_end(self) -> None:
        end = self.items[2].lease_expires_at
        self.assertEqual(self.ids(self.mine.live(end - timedelta(seconds=1))), {a.pk for a in self.items[2:]})
        self.assertEqual(self.ids(self.mine.live(end)), set())  # a lease ending exactly now is over
        self.assertEqual(self.ids(self.mine.expired(end)), {a.pk for a in self.items[2:]})
        self.assertEqual(self.ids(self.mine.expired(end - timedelta(seconds=1))), set())

    def test_taking_slot_counts_answers_forever_and_leases_while_live(self) -> None:
        self.assertEqual(self.ids(self.mine.taking_slot(self.now)), {self.answered.pk} | {a.pk for a in self.items[2:]})
        self.assertEqual(self.ids(self.mine.taking_slot(self.later(days=1))), {self.answered.pk})

    def test_released_lease_takes_no_slot_even_before_its_end(self) -> None:
        self.assertNotIn(self.released.pk, self.ids(self.mine.taking_slot(self.now)))

    def test_valid_leaves_out_excluded_annotators(self) -> None:
        bob = self.arrive("bob")
        Annotator.objects.filter(pk=bob.pk).update(status=Annotator.Status.EXCLUDED)
        everyone = Assignment.objects.filter(annotator__study=self.study)
        self.assertEqual(self.ids(everyone.valid()), {a.pk for a in self.items})
        self.assertEqual(everyone.count(), 12)

    def test_related_manager_has_the_methods(self) -> None:
        self.assertEqual(self.ids(self.alice.assignments.open()), self.ids(self.mine.open()))

    def test_working_annotators_hold_a_live_lease(self) -> None:
        bob = self.arrive("bob")
        study = Annotator.objects.filter(study=self.study)
        self.assertEqual(set(study.working(self.now)), {self.alice, bob})
        self.assertEqual(set(study.working(self.later(minutes=11))), set())  # both leases ran out
        bob.assignments.update(released_at=self.now)
        self.assertEqual(set(study.working(self.now)), {self.alice})
        Annotator.objects.filter(pk=self.alice.pk).update(status=Annotator.Status.FINISHED)
        self.assertEqual(set(study.working(self.now)), set())  # only active annotators work


class ChoicesTest(BaseTestCase):
    def test_statuses_are_text_choices_with_the_stored_values(self) -> None:
        self.assertEqual(Annotator.Status.values, ["new", "active", "finished", "refused", "excluded", "screened"])
        self.assertEqual(list(platforms.REGISTRY), ["", "prolific", "mturk"])  # the keys Annotator.platform stores
        self.assertEqual(self.study.Status.values, ["open", "paused", "closed"])
        self.assertEqual(self.study.status, self.study.Status.OPEN)
        self.assertEqual(self.study.presentations.first().Kind.values, ["pair", "identical", "degraded"])

    def test_status_constraint_uses_the_choices(self) -> None:
        from django.db import IntegrityError, transaction

        annotator = self.arrive("alice")
        with self.assertRaises(IntegrityError), transaction.atomic():
            Annotator.objects.filter(pk=annotator.pk).update(status="bogus")
