"""The review interface shared by the platforms' clients (services.platforms.review_api) and the
adapters' review hooks: submission references from the stored link, rejection categories."""

from __future__ import annotations

from django.test import SimpleTestCase

from studyapp.models import Annotator
from studyapp.services.platforms import ANONYMOUS, PROLIFIC
from studyapp.services.platforms.review_api import ApiError, CallRecord, SubmissionRef, short


class ReviewApiTests(SimpleTestCase):
    def test_api_error_carries_status_and_retry(self) -> None:
        err = ApiError("429 Too Many Requests: retry after 2 s", status=429, retry_after=2.0, retryable=True)
        self.assertEqual(str(err), "429 Too Many Requests: retry after 2 s")
        self.assertEqual((err.status, err.retry_after, err.retryable, err.records), (429, 2.0, True, []))
        self.assertFalse(ApiError("401 Unauthorized", status=401).retryable)

    def test_records_are_frozen_and_answers_short(self) -> None:
        record = CallRecord("approve", {"method": "POST"}, True, 200, short("x" * 900))
        self.assertEqual(len(record.response), 500)
        with self.assertRaises(AttributeError):
            record.ok = False  # type: ignore[misc]

    def test_prolific_ref_from_the_link(self) -> None:
        annotator = Annotator(
            platform="prolific", external_id="P1", external_ids={"PROLIFIC_PID": "P1", "STUDY_ID": "S9", "SESSION_ID": "X7"}
        )
        self.assertEqual(PROLIFIC.submission_ref(annotator), SubmissionRef("P1", "X7", "S9"))
        self.assertIsNone(PROLIFIC.submission_ref(Annotator(platform="prolific", external_id="P1", external_ids={"PROLIFIC_PID": "P1"})))
        codes = [code for code, _ in PROLIFIC.rejection_categories]
        self.assertIn("TOO_QUICKLY", codes)
        self.assertIn("FAILED_CHECK", codes)
        self.assertEqual(len(codes), 12)

    def test_anonymous_has_no_review(self) -> None:
        self.assertIsNone(ANONYMOUS.submission_ref(Annotator(platform="", external_ids={})))
        self.assertIsNone(ANONYMOUS.review_client())
        self.assertEqual(ANONYMOUS.rejection_categories, ())
