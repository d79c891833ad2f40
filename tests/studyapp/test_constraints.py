"""Database constraints, the last guard behind the services: each invalid row is refused by the database."""

from __future__ import annotations

from django.db import IntegrityError, transaction

from studyapp.models import Assignment, Judgment, Preference, Presentation, StudySubtopic, Subtopic
from tests.studyapp.base import BaseTestCase


class ConstraintTestCase(BaseTestCase):
    def setUp(self) -> None:
        super().setUp()
        self.alice = self.arrive("alice")
        self.item = self.alice.assignments.select_related("presentation").first()

    def assert_refused(self, create) -> None:
        with self.assertRaises(IntegrityError), transaction.atomic():
            create()

    def preference(self, **fields) -> Preference:
        values = {"assignment": self.item, "value": 1, "canonical": 1, "answered_at": self.now, **fields}
        return Preference.objects.create(**values)

    def test_one_assignment_per_annotator_and_presentation(self) -> None:
        self.assert_refused(
            lambda: Assignment.objects.create(
                annotator=self.alice,
                presentation=self.item.presentation,
                position=99,
                a_on_left=True,
                assigned_at=self.now,
                lease_expires_at=self.now,
            )  # fmt: skip
        )

    def test_one_position_per_annotator(self) -> None:
        other = Presentation.objects.filter(study=self.study).exclude(assignments__annotator=self.alice).first()
        self.assert_refused(
            lambda: Assignment.objects.create(
                annotator=self.alice, presentation=other, position=1, a_on_left=True, assigned_at=self.now, lease_expires_at=self.now
            )
        )

    def test_one_answer_per_assignment(self) -> None:
        self.preference()
        self.assert_refused(lambda: self.preference(value=2, canonical=2))

    def test_answer_values_are_in_range_and_consistently_reoriented(self) -> None:
        self.assert_refused(lambda: self.preference(value=5, canonical=5))
        self.assert_refused(lambda: self.preference(value=-5, canonical=-5))
        self.assert_refused(lambda: self.preference(value=2, canonical=3))
        self.assert_refused(lambda: self.preference(server_seconds=-1.0))
        self.preference(value=-4, canonical=4)

    def test_presentations_are_consistent(self) -> None:
        p = Presentation.objects.filter(study=self.study, level="subtopic").first()
        base = {"study": self.study, "topic": p.topic, "run_a": p.run_a, "run_b": p.run_b}
        self.assert_refused(lambda: Presentation.objects.create(**base, level="topic", subtopic=p.subtopic))  # topic level has no subtopic
        self.assert_refused(lambda: Presentation.objects.create(**base, level="subtopic"))  # subtopic level needs one
        self.assert_refused(lambda: Presentation.objects.create(**{**base, "run_b": p.run_a}, level="topic"))  # a pair needs two runs
        self.assert_refused(
            lambda: Presentation.objects.create(**base, level="topic", kind="identical", expected_sign=0)
        )  # a check uses one run
        self.assert_refused(lambda: Presentation.objects.create(**base, level="subtopic", subtopic=p.subtopic))  # duplicate

    def test_collection_rows_are_consistent(self) -> None:
        sub = Subtopic.objects.filter(topic__collection=self.collection).first()
        judgment = Judgment.objects.filter(subtopic=sub).first()
        self.assert_refused(lambda: Judgment.objects.create(topic=sub.topic, subtopic=sub, document=judgment.document, grade=1))
        self.assert_refused(lambda: Judgment.objects.create(topic=sub.topic, subtopic=None, document=judgment.document, grade=2))
        self.assert_refused(lambda: Subtopic.objects.create(topic=sub.topic, number="99", weight=-0.1))
        self.assert_refused(lambda: Subtopic.objects.create(topic=sub.topic, number="98", type="web"))
        kept = StudySubtopic.objects.first()
        self.assert_refused(lambda: StudySubtopic.objects.filter(pk=kept.pk).update(weight=1.5))
