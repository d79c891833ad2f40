"""Sequence.of: the annotator's assignments in position order with their answers, read with SQL built once."""

from __future__ import annotations

from django.db.models import F

from studyapp import compiled_queries
from studyapp.models import Assignment
from studyapp.services.participation.sequence import Sequence
from tests.studyapp.annotator_base import AnnotatorTestCase

FIELDS = (
    "pk",
    "annotator_id",
    "presentation_id",
    "position",
    "a_on_left",
    "assigned_at",
    "served_at",
    "lease_expires_at",
    "released_at",
    "answer_id",
)


class SequenceTests(AnnotatorTestCase):
    def test_it_reads_what_the_orm_reads_in_position_order(self) -> None:
        for _ in range(2):
            self.answer(self.client, self.serve(self.client))
        compiled_queries._BUILT.clear()
        for annotator in (self.alice, self.bob):
            with self.subTest(annotator=annotator.pseudonym):
                got = Sequence.of(annotator).assignments
                expected = list(annotator.assignments.annotate(answer_id=F("preference__id")).order_by("position"))
                self.assertEqual(
                    [tuple(getattr(a, f) for f in FIELDS) for a in got], [tuple(getattr(a, f) for f in FIELDS) for a in expected]
                )
                self.assertTrue(all(a.annotator is annotator for a in got))  # no query for a row's annotator
        answered = [a.answer_id is not None for a in Sequence.of(self.alice).assignments]
        self.assertEqual(answered.count(True), 2)

    def test_someone_without_assignments_has_an_empty_sequence(self) -> None:
        Assignment.objects.filter(annotator=self.bob).delete()
        with self.assertNumQueries(1):
            self.assertEqual(Sequence.of(self.bob).assignments, [])
