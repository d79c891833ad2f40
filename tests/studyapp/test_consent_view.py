"""``/s/<slug>/consent/``: the versioned text, what is stored on acceptance, admission, refusal and CSRF."""

from __future__ import annotations

import hashlib
from unittest import mock

from studyapp.models import Annotator, Consent, Study
from tests.studyapp.annotator_base import AnnotatorTestCase


class ConsentTestCase(AnnotatorTestCase):
    def arrive(self, pid: str = "carol"):  # type: ignore[override]
        client = self.fresh_client()
        client.get(self.entry(PROLIFIC_PID=pid, SESSION_ID=f"s-{pid}"))
        return client

    def test_it_shows_the_text_and_its_version(self) -> None:
        Study.objects.filter(pk=self.study.pk).update(consent_text="We study <b>search</b>.\n\nYou may stop at any time.")
        response = self.arrive().get(self.url("study_consent"))
        self.assertContains(response, "We study &lt;b&gt;search&lt;/b&gt;.")
        self.assertContains(response, "Consent text version 1")
        self.assertContains(response, 'name="version" value="1"')
        self.assertContains(response, "csrfmiddlewaretoken")

    def test_accepting_stores_version_time_and_text_digest_and_leases_the_quota(self) -> None:
        consent = Consent.objects.get(annotator=self.alice)
        self.assertEqual(consent.version, "1")
        self.assertEqual(consent.text_sha256, hashlib.sha256(self.study.consent_text.encode()).hexdigest())
        self.assertEqual(self.alice.consent_version, "1")
        self.assertIsNotNone(self.alice.consented_at)
        self.assertEqual(self.alice.status, Annotator.Status.ACTIVE)
        self.assertEqual(self.alice.assignments.count(), self.study.items_per_annotator)

    def test_it_continues_with_the_instructions(self) -> None:
        client = self.arrive()
        response = client.post(self.url("study_consent"), {"agree": "on", "version": "1"})
        self.assertRedirects(response, self.url("study_instructions"))

    def test_without_the_tick_nothing_is_stored(self) -> None:
        client = self.arrive()
        response = client.post(self.url("study_consent"), {"version": "1"})
        self.assertContains(response, "Please tick the box", status_code=400)
        self.assertFalse(Annotator.objects.filter(external_id="carol").exists())

    def test_declining_stores_nothing(self) -> None:
        client = self.arrive()
        response = client.post(self.url("study_consent"), {"decline": "1", "version": "1"})
        self.assertContains(response, "You did not agree to take part")
        self.assertFalse(Annotator.objects.filter(external_id="carol").exists())

    def test_a_form_of_an_older_version_is_not_accepted(self) -> None:
        client = self.arrive()
        client.get(self.url("study_consent"))
        Study.objects.filter(pk=self.study.pk).update(consent_version="2", consent_text="New text about the study.")
        response = client.post(self.url("study_consent"), {"agree": "on", "version": "1"})
        self.assertContains(response, "was updated while this page was open", status_code=409)
        self.assertContains(response, "New text about the study.", status_code=409)
        self.assertContains(response, 'name="version" value="2"', status_code=409)
        self.assertFalse(Annotator.objects.filter(external_id="carol").exists())
        client.post(self.url("study_consent"), {"agree": "on", "version": "2"})
        self.assertEqual(Annotator.objects.get(external_id="carol").consent_version, "2")

    def test_a_new_version_asks_everyone_working_to_consent_again_and_keeps_the_history(self) -> None:
        Study.objects.filter(pk=self.study.pk).update(consent_version="2", consent_text="Version two.")
        response = self.client.get(self.url("study_next_item"))
        self.assertRedirects(response, self.url("study_consent"), fetch_redirect_response=False)
        page = self.client.get(self.url("study_consent"))
        self.assertContains(page, "has changed since you agreed")
        self.assertContains(page, "Version two.")
        response = self.client.post(self.url("study_consent"), {"agree": "on", "version": "2"})
        self.assertRedirects(response, self.url("study_next_item"), fetch_redirect_response=False)
        self.assertEqual(list(Consent.objects.filter(annotator=self.alice).values_list("version", flat=True)), ["1", "2"])
        self.alice.refresh_from_db()
        self.assertEqual(self.alice.consent_version, "2")
        self.assertEqual(self.alice.assignments.count(), 6)  # the same items, no second admission

    def test_a_study_that_filled_up_meanwhile_refuses_with_the_screenout_code(self) -> None:
        client = self.arrive()
        client.get(self.url("study_consent"))
        for name in ("dave", "erin", "frank", "grace"):
            self.consent(self.fresh_client(), name)
        response = client.post(self.url("study_consent"), {"agree": "on", "version": "1"})
        self.assertContains(response, "This study is full")
        self.assertContains(response, "TOYFULL")

    def test_admission_can_refuse_after_the_capacity_check(self) -> None:
        client = self.arrive()
        for name in ("dave", "erin", "frank", "grace"):
            self.consent(self.fresh_client(), name)
        with mock.patch("studyapp.services.participation.flow.check_room"):  # as if the check had run just before the last place went
            response = client.post(self.url("study_consent"), {"agree": "on", "version": "1"})
        self.assertContains(response, "This study is full")
        self.assertContains(response, "TOYFULL")
        carol = Annotator.objects.get(external_id="carol")
        self.assertEqual(carol.status, Annotator.Status.REFUSED)
        self.assertEqual(carol.assignments.count(), 0)
        self.assertContains(self.fresh_client().get(self.entry(PROLIFIC_PID="carol", SESSION_ID="s-carol")), "This study is full")

    def test_it_requires_a_csrf_token(self) -> None:
        client = self.fresh_client(enforce_csrf_checks=True)
        client.get(self.entry(PROLIFIC_PID="carol", SESSION_ID="s-carol"))
        response = client.post(self.url("study_consent"), {"agree": "on", "version": "1"})
        self.assertContains(response, "Please reload the page", status_code=403)
        self.assertFalse(Annotator.objects.filter(external_id="carol").exists())

    def test_coming_straight_here_starts_at_the_entry(self) -> None:
        response = self.fresh_client().get(self.url("study_consent"))
        self.assertRedirects(response, self.url("study_entry"), fetch_redirect_response=False)

    def test_a_closed_study_takes_no_consent(self) -> None:
        client = self.arrive()
        Study.objects.filter(pk=self.study.pk).update(status=Study.Status.CLOSED)
        response = client.post(self.url("study_consent"), {"agree": "on", "version": "1"})
        self.assertContains(response, "This study is closed")
        self.assertFalse(Annotator.objects.filter(external_id="carol").exists())
