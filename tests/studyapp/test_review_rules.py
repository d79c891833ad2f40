"""The rules' suggestion per submission (services.review.suggest), the participant-facing messages in
every study language, the bonus setting, and the Prolific client's retry policy against the local server."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal

from django.test import SimpleTestCase

from studyapp.models import Annotator, QualityDecision, Study
from studyapp.models.study_settings import BY_NAME
from studyapp.services.data.payments import SpeedNorm
from studyapp.services.design.study_config import InvalidStudyConfig, parse_config
from studyapp.services.platforms import MTURK, PROLIFIC
from studyapp.services.platforms.prolific_api import ProlificReviewClient
from studyapp.services.platforms.prolific_api import _seconds as retry_after_seconds
from studyapp.services.platforms.review_api import ApiError, SubmissionRef
from studyapp.services.review.suggest import rule_message, speed_message, suggest
from tests.studyapp.prolific_server import FakeProlific

T0 = datetime(2026, 1, 5, 12, tzinfo=UTC)
NORM = SpeedNorm(finished=40, mean=600.0, sd=60.0)  # exceptionally fast: under 600 - 3 * 60 = 420 s


def annotator(status: str, seconds: float | None = 500) -> Annotator:
    finished = T0 + timedelta(seconds=seconds) if seconds is not None else None
    return Annotator(status=status, consented_at=T0, finished_at=finished, platform="prolific")


def excluded_by(rule: str, counts: dict, detail: str = "the detail", staff: bool = False) -> QualityDecision:
    return QualityDecision(action="exclude", rule="staff" if staff else rule, counts={rule: counts}, detail=detail, reason="by hand")


class SuggestionTests(SimpleTestCase):
    def setUp(self) -> None:
        self.study = Study(language="en", bonus_amount=Decimal("1.25"))

    def test_valid_finishers_are_approved_with_the_bonus(self) -> None:
        d = suggest(self.study, annotator(Annotator.Status.FINISHED), PROLIFIC, None, None, NORM)
        self.assertEqual((d.action, d.bonus, d.category, d.message), ("approve", Decimal("1.25"), "", ""))

    def test_speed_rejects_only_an_exceptionally_fast_submission(self) -> None:
        fast = excluded_by("fast", {"fast": 40, "decisions": 60, "limit": 30}, "fast: 40 of 60 decisions under 10 s (limit 30)")
        d = suggest(self.study, annotator(Annotator.Status.EXCLUDED, seconds=300), PROLIFIC, None, fast, NORM)
        self.assertEqual((d.action, d.category), ("reject", "TOO_QUICKLY"))
        self.assertIn("300 seconds from consent to the last answer", d.message)
        self.assertIn("600 seconds on average", d.message)
        self.assertEqual(d.bonus, 0)
        for seconds in (500, None):  # not exceptionally fast, or not finished: speed alone is no reason
            d = suggest(self.study, annotator(Annotator.Status.EXCLUDED, seconds=seconds), PROLIFIC, None, fast, NORM)
            self.assertEqual((d.action, d.bonus), ("approve", 0))
            self.assertIn("speed alone is no reason to reject", d.note)
        median = excluded_by("median_time", {"median_seconds": 2.0})
        self.assertEqual(suggest(self.study, annotator("excluded", 100), PROLIFIC, None, median, NORM).category, "TOO_QUICKLY")

    def test_each_rule_has_its_category_and_message(self) -> None:
        cases = (
            ("checks", {"failed": 3, "checks": 4, "limit": 1}, "FAILED_CHECK", "you failed 3 of the 4 attention-check items"),
            ("straightline", {"run": 25, "value": 2, "limit": 20}, "LOW_EFFORT", "the same answer 25 times in a row"),
            ("side_bias", {"share": 0.95, "answers": 40, "limit": 0.9}, "LOW_EFFORT", "95% of your 40 answers"),
            ("newrule", {}, "OTHER", "shown before the first item: the detail."),
        )
        for rule, counts, category, words in cases:
            with self.subTest(rule=rule):
                d = suggest(self.study, annotator("excluded"), PROLIFIC, None, excluded_by(rule, counts), NORM)
                self.assertEqual((d.action, d.category), ("reject", category))
                self.assertIn(words, d.message)
                self.assertGreaterEqual(len(d.message), 100)

    def test_failed_checks_reject_only_as_many_as_the_platform_allows(self) -> None:
        # Prolific: at least two failed checks on a submission of 5 minutes or more, one on a shorter one
        one = excluded_by("checks", {"failed": 1, "checks": 2, "limit": 0}, "checks: 1 of 2 check items failed (limit 0)")
        d = suggest(self.study, annotator("excluded", seconds=500), PROLIFIC, None, one, NORM)
        self.assertEqual((d.action, d.bonus, d.message), ("approve", 0, ""))
        self.assertIn("allows a rejection only for at least 2", d.note)
        self.assertEqual(suggest(self.study, annotator("excluded", seconds=None), PROLIFIC, None, one, NORM).action, "approve")
        short = suggest(self.study, annotator("excluded", seconds=240), PROLIFIC, None, one, NORM)
        self.assertEqual((short.action, short.category), ("reject", "FAILED_CHECK"))
        two = excluded_by("checks", {"failed": 2, "checks": 2, "limit": 1})
        self.assertEqual(suggest(self.study, annotator("excluded", seconds=500), PROLIFIC, None, two, NORM).action, "reject")
        self.assertEqual(suggest(self.study, annotator("excluded", seconds=500), MTURK, None, one, NORM).action, "reject")

    def test_another_rule_broken_at_the_exclusion_can_be_the_reason(self) -> None:
        # excluded for fast decisions (no reason on Prolific unless exceptionally fast), but 2 of 2 checks failed too
        both = QualityDecision(
            action="exclude",
            rule="fast",
            detail="fast: 16 of 16 decisions under 10 s (limit 15); checks: 2 of 2 check items failed (limit 1)",
            counts={"fast": {"fast": 16, "decisions": 16, "limit": 15}, "checks": {"failed": 2, "checks": 2, "limit": 1}},
        )
        d = suggest(self.study, annotator("excluded", seconds=500), PROLIFIC, None, both, NORM)
        self.assertEqual((d.action, d.category), ("reject", "FAILED_CHECK"))
        self.assertIn("you failed 2 of the 2 attention-check items", d.message)
        both.counts["checks"]["failed"] = 1  # neither reason holds on Prolific: approve, and say why for each
        d = suggest(self.study, annotator("excluded", seconds=500), PROLIFIC, None, both, NORM)
        self.assertEqual(d.action, "approve")
        self.assertIn("speed alone is no reason to reject", d.note)
        self.assertIn("1 failed check,", d.note)

    def test_no_action_with_the_reason(self) -> None:
        for status, words in (
            (Annotator.Status.NEW, "not started"),
            (Annotator.Status.ACTIVE, "not finished"),
            (Annotator.Status.REFUSED, "study full"),
            (Annotator.Status.SCREENED, "comprehension check"),
        ):
            d = suggest(self.study, annotator(status, None), PROLIFIC, None, None, NORM)
            self.assertEqual(d.action, "skip")
            self.assertIn(words, d.note)
        d = suggest(self.study, annotator("excluded"), PROLIFIC, None, excluded_by("checks", {}, staff=True), NORM)
        self.assertEqual(d.action, "skip")
        self.assertIn("by staff (by hand): choose the decision", d.note)

    def test_messages_in_every_language_reach_prolifics_minimum(self) -> None:
        for language in Study.Language.values:
            study = Study(language=language)
            with self.subTest(language=language):
                messages = [
                    speed_message(study, PROLIFIC, 1, SpeedNorm(3, 9.0, 1.0)),
                    rule_message(study, PROLIFIC, "checks", {"failed": 2, "checks": 2, "limit": 1}, ""),
                    rule_message(study, PROLIFIC, "straightline", {"run": 9, "limit": 8}, ""),
                    rule_message(study, PROLIFIC, "side_bias", {"share": 1, "answers": 9, "limit": 0.8}, ""),
                    rule_message(study, PROLIFIC, "other", {}, "x"),
                ]
                for message in messages:
                    self.assertGreaterEqual(len(message), 100, message)
                    self.assertLessEqual(len(message), PROLIFIC.message_max)
                if language != "en":
                    self.assertFalse(messages[1].startswith("Your submission"), messages[1])  # translated


class BonusSettingTests(SimpleTestCase):
    def test_amounts(self) -> None:
        base = {"runs": ["a", "b"]}
        self.assertEqual(parse_config(base).bonus_amount, Decimal("0.00"))
        self.assertEqual(parse_config({**base, "bonus_amount": 1.5}).bonus_amount, Decimal("1.50"))
        self.assertEqual(parse_config({**base, "bonus_amount": "2.25", "bonus_reason": " thanks "}).bonus_reason, "thanks")
        for value, words in ((1.505, "at most two decimal places"), (-1, "between 0 and 100"), (101, "between 0 and 100"),
                             (True, "an amount like 1.50"), ("lots", "an amount like 1.50"), ("NaN", "an amount like 1.50")):  # fmt: skip
            with self.subTest(value=value), self.assertRaisesMessage(InvalidStudyConfig, words):
                parse_config({**base, "bonus_amount": value})
        self.assertEqual(BY_NAME["bonus_amount"].problem(Decimal("3.10")), None)


class ProlificClientTests(SimpleTestCase):
    def setUp(self) -> None:
        self.api = FakeProlific("tok").__enter__()
        self.addCleanup(self.api.__exit__, None, None, None)
        self.api.add("S1", "P1", "ST")
        self.sleeps: list[float] = []
        self.client = ProlificReviewClient("tok", self.api.url, sleep=self.sleeps.append)
        self.ref = SubmissionRef("P1", "S1", "ST")

    def test_state_and_transitions(self) -> None:
        self.assertEqual(self.client.state(self.ref)[0], "awaiting")
        self.assertEqual(self.client.state(SubmissionRef("P9", "S9", "ST"))[0], "returned")  # 404: gone
        records = self.client.approve(self.ref)
        self.assertEqual((records[0].operation, records[0].ok, records[0].status), ("approve", True, 200))
        self.assertEqual(
            records[0].request, {"method": "POST", "path": "/api/v1/submissions/S1/transition/", "body": {"action": "APPROVE"}}
        )
        self.assertEqual(self.client.state(self.ref)[0], "approved")
        with self.assertRaises(ApiError) as caught:
            self.client.reject(self.ref, "OTHER", "x" * 100)
        self.assertEqual(caught.exception.status, 400)
        self.assertIn("cannot transition a submission in status APPROVED", caught.exception.message)
        self.assertEqual(self.sleeps, [])  # a 400 is not retried
        self.assertNotIn("tok", repr(self.client))

    def test_retries_are_bounded_and_honour_retry_after(self) -> None:
        self.api.fail("GET", "/S1/", 429, times=2, retry_after=3)
        state, records = self.client.state(self.ref)
        self.assertEqual(state, "awaiting")
        self.assertEqual(self.sleeps, [3.0, 3.0])
        self.assertEqual([r.status for r in records], [429, 429, 200])
        self.api.fail("GET", "/S1/", 503, times=3)
        with self.assertRaises(ApiError) as caught:
            self.client.state(self.ref)
        self.assertEqual((caught.exception.status, len(caught.exception.records)), (503, 3))
        self.api.fail("GET", "/S1/", 429, retry_after=3600)  # longer than we wait: shown, not waited for
        with self.assertRaisesMessage(ApiError, "429 Too Many Requests: retry after 3600 s"):
            self.client.state(self.ref)
        self.assertEqual(len(self.sleeps), 4)

    def test_retry_after_as_seconds_or_http_date(self) -> None:
        now = datetime(2026, 11, 26, 12, 0, 0, tzinfo=UTC)
        self.assertEqual(retry_after_seconds("7", now), 7.0)
        self.assertEqual(retry_after_seconds("Thu, 26 Nov 2026 12:00:05 GMT", now), 5.0)
        self.assertEqual(retry_after_seconds("Thu, 26 Nov 2026 11:59:00 GMT", now), 0.0)  # in the past: at once
        self.assertEqual(retry_after_seconds("-3", now), 0.0)
        for unreadable in ("soon", "", None):
            self.assertIsNone(retry_after_seconds(unreadable, now))

    def test_a_pay_call_is_repeated_only_when_it_was_not_carried_out(self) -> None:
        self.api.fail("POST", "/pay/", 502)
        self.client.pay_bonuses([(self.ref, Decimal("1.00"), "t1")])
        self.assertEqual(self.api.paid, [("S1", Decimal("1.00"))])
        self.api.fail("POST", "/pay/", 500, carried_out=True)
        with self.assertRaises(ApiError) as caught:
            self.client.pay_bonuses([(self.ref, Decimal("2.00"), "t2")])
        self.assertTrue(caught.exception.outcome_unknown)
        self.assertIn("outcome unknown", caught.exception.message)
        self.assertEqual(len(self.api.calls("POST", "/pay/")), 3)  # 502, 200, then the 500 once
        self.assertEqual(self.client.bonus_batches["t2"], self.api.calls("POST", "/pay/")[-1].path.split("/")[4])

    def test_bad_bonuses(self) -> None:
        with self.assertRaisesMessage(ApiError, "must be more than 0"):
            self.client.pay_bonuses([(self.ref, Decimal("0"), "t")])
        with self.assertRaisesMessage(ApiError, "the link had no STUDY_ID"):
            self.client.pay_bonuses([(SubmissionRef("P1", "S1"), Decimal("1"), "t")])
        with self.assertRaisesMessage(ApiError, "400 Bad Request: ids not in the study: S7"):
            self.client.pay_bonuses([(SubmissionRef("P7", "S7", "ST"), Decimal("1"), "t")])
        self.assertEqual(self.api.paid, [])
