"""The entry page's room check reused for a moment while a study has ample room (services.participation.room_check)."""

from __future__ import annotations

from unittest import mock

from django.test import override_settings

from studyapp.exceptions import StudyClosed, StudyFull
from studyapp.models import Study
from studyapp.services.participation import allocation, flow, room_check
from tests.studyapp.annotator_base import AnnotatorTestCase

ROOM = "studyapp.services.participation.allocation.newcomer_room"


class RoomCheckTestCase(AnnotatorTestCase):
    def setUp(self) -> None:
        super().setUp()
        room_check._looks.clear()
        self.quota = self.study.regular_items_per_annotator
        self.checks = self.study.check_items_per_annotator
        self.clock = 1000.0
        patcher = mock.patch("studyapp.services.participation.room_check.time.monotonic", side_effect=lambda: self.clock)
        patcher.start()
        self.addCleanup(patcher.stop)

    def arrivals(self, n: int, room: tuple[int, int]) -> int:
        """``n`` room checks with the database saying ``room``; returns how many asked the database."""
        with mock.patch(ROOM, return_value=room) as asked:
            for _ in range(n):
                flow.check_room(self.study)
        return asked.call_count

    def test_ample_room_is_asked_once_then_reused_while_it_lasts(self) -> None:
        # room for 30 newcomers: reused while more than REUSE_NEWCOMERS (20) of them are left, counted down per arrival
        self.assertEqual(self.arrivals(10, (30 * self.quota, self.checks)), 1)
        self.assertEqual(self.arrivals(1, (30 * self.quota, self.checks)), 1)  # 29 - 9 = 20 left: asked again

    def test_the_answer_is_kept_for_the_setting_only(self) -> None:
        self.assertEqual(self.arrivals(2, (100 * self.quota, self.checks)), 1)
        self.clock += 1.9
        self.assertEqual(self.arrivals(1, (100 * self.quota, self.checks)), 0)
        self.clock += 0.2  # 2.1 s after the look
        self.assertEqual(self.arrivals(1, (100 * self.quota, self.checks)), 1)
        with override_settings(STUDYAPP_ROOM_CHECK_SECONDS=0):
            self.assertEqual(self.arrivals(3, (100 * self.quota, self.checks)), 3)

    def test_little_room_and_no_room_are_asked_every_time(self) -> None:
        self.assertEqual(self.arrivals(3, (20 * self.quota, self.checks)), 3)  # room for 20: not ample
        with self.assertRaises(StudyFull):
            self.arrivals(1, (self.quota - 1, self.checks))
        with mock.patch(ROOM, return_value=(self.quota - 1, self.checks)) as asked:
            for _ in range(2):
                with self.assertRaises(StudyFull):
                    flow.check_room(self.study)
        self.assertEqual(asked.call_count, 2)  # a refusal is never kept

    def test_a_kept_answer_does_not_outlive_a_change_of_the_study(self) -> None:
        self.assertEqual(self.arrivals(1, (100 * self.quota, self.checks)), 1)
        self.study.items_per_annotator += 1  # a bigger quota: another question
        self.assertEqual(self.arrivals(1, (100 * self.quota, self.checks)), 1)
        self.study.status = Study.Status.PAUSED  # the study's own row decides first, every time
        with self.assertRaises(StudyClosed):
            self.arrivals(1, (100 * self.quota, self.checks))

    def test_the_real_room_of_a_full_study_is_refused_on_the_entry_page(self) -> None:
        for name in ("carol", "dave", "erin", "frank"):  # alice, bob and these four fill the toy study's 6 places
            self.consent(self.fresh_client(), name)
        self.assertFalse(allocation.can_admit(self.study))
        with self.assertRaises(StudyFull):
            flow.check_room(self.study)
        response = self.fresh_client().get(self.entry(PROLIFIC_PID="grace"))
        self.assertContains(response, "This study is full")
