"""The admin: every model's list and change pages load for staff, and studies are created from a JSON
configuration through the same service as ``create_study``. Plus the landing page."""

from __future__ import annotations

from html.parser import HTMLParser

from django.apps import apps
from django.contrib.auth import get_user_model
from django.urls import reverse

from studyapp import models as m
from studyapp.models import Presentation, ReviewDecision, Study
from studyapp.services.access.teams import set_team
from studyapp.services.data import erasure
from studyapp.services.participation import flow
from studyapp.services.platforms.review_api import CallRecord
from studyapp.services.quality import control
from studyapp.services.rehearsal.demo import SIMULATED_STUDY
from studyapp.services.rehearsal.demo import STUDY as DEMO_STUDY
from studyapp.services.review import jobs
from studyapp.services.review.sending import record_calls
from tests.studyapp.base import BaseTestCase, make_toy_study


class FormFields(HTMLParser):
    """What a browser would post from a page's form: inputs, checked boxes, selected options, text areas."""

    def __init__(self) -> None:
        super().__init__()
        self.data: dict[str, str] = {}
        self._select = self._textarea = None

    def handle_starttag(self, tag: str, attrs: list) -> None:
        a = dict(attrs)
        name = a.get("name")
        if tag == "input" and name and a.get("type") not in ("submit", "checkbox", "radio", "file"):
            self.data[name] = a.get("value") or ""
        elif tag == "input" and name and a.get("type") in ("checkbox", "radio") and "checked" in a:
            self.data[name] = a.get("value") or "on"
        elif tag == "select":
            self._select = name
        elif tag == "option" and self._select and "selected" in a:
            self.data[self._select] = a.get("value") or ""
        elif tag == "textarea":
            self._textarea = name
            self.data[name] = ""

    def handle_data(self, data: str) -> None:
        if self._textarea:
            self.data[self._textarea] += data

    def handle_endtag(self, tag: str) -> None:
        if tag == "select":
            self._select = None
        elif tag == "textarea":
            self.data[self._textarea] = self.data[self._textarea].removeprefix("\n")
            self._textarea = None


class AdminTestCase(BaseTestCase):
    def setUp(self) -> None:
        super().setUp()
        self.staff = get_user_model().objects.create_superuser("staff", "staff@example.org", "pw-for-tests")
        self.client.force_login(self.staff)
        set_team(self.study, "staff")
        alice = self.arrive("alice")
        flow.give_consent(self.study, alice, flow.Arrival(), self.study.consent_version, now=self.now)
        self.answer_all(alice)
        control.exclude(alice, rule="staff", staff=self.staff, reason="a log entry for the admin pages", now=self.later(hours=1))
        erasure.erase(self.arrive("withdrawn"), source="command", now=self.later(hours=2))  # an entry of the erasure log
        erasure.erase(self.arrive("gone"), source="withdrawal", now=self.later(hours=2))  # ... and a withdrawn participant
        ReviewDecision.objects.create(study=self.study, annotator=alice, action="approve", decided_at=self.later(hours=3))
        record_calls(
            self.study, alice, "prolific", [CallRecord("approve", {"method": "POST", "path": "/x/"}, False, 503, "busy")], self.staff
        )
        presentation = m.Presentation.objects.filter(study=self.study).first()  # what adaptive allocation stores
        m.AllocationRound.objects.create(study=self.study, number=1, drawn_at=self.now, answers=3, target=1.0, drawn=1)
        m.AllocationGroup.objects.create(
            study=self.study, topic=presentation.topic, run_a=presentation.run_a, run_b=presentation.run_b, drawn_round=1, probability=0.5
        )
        jobs.enqueue(self.study, self.staff)  # an Apply of the review page, queued
        m.StoredPlan.objects.create(  # what manage.py plan_study stores
            study=self.study,
            kind="design",
            computed_at=self.now,
            assumptions={"truth": "D#-nDCG@10"},
            table=[{"participants": 4}],
            lines="Plan for ...",
            summary="Recommended: none in the grid",
        )

    def test_every_model_has_a_working_list_and_change_page(self) -> None:
        for model in apps.get_app_config("studyapp").get_models():
            name = model._meta.model_name
            with self.subTest(model=name):
                response = self.client.get(reverse(f"admin:studyapp_{name}_changelist"))
                self.assertEqual(response.status_code, 200)
                obj = model.objects.first()
                self.assertIsNotNone(obj)
                self.assertEqual(self.client.get(reverse(f"admin:studyapp_{name}_change", args=[obj.pk])).status_code, 200)

    def test_what_participants_and_imports_recorded_is_read_only(self) -> None:
        """Staff read a running study's rows but never add or edit them (issue 33): the pages have no Save."""
        alice = m.Annotator.objects.get(external_id="alice")
        assignment, presentation = alice.assignments.first(), m.Presentation.objects.filter(study=self.study).first()
        item = m.RankedItem.objects.filter(run__collection=self.study.collection).first()
        judgment = m.Judgment.objects.filter(topic__collection=self.study.collection).first()
        rows = {"annotator": alice, "assignment": assignment, "consent": alice.consents.first(), "presentation": presentation,
                "studyrun": self.study.study_runs.first(), "studytopic": self.study.study_topics.first(),
                "rankeditem": item, "judgment": judgment, "topic": presentation.topic, "run": presentation.run_a,
                "subtopic": m.Subtopic.objects.filter(topic=presentation.topic).first()}  # fmt: skip
        for name, obj in rows.items():
            with self.subTest(model=name):
                self.assertEqual(self.client.get(reverse(f"admin:studyapp_{name}_add")).status_code, 403)
                page = self.client.get(reverse(f"admin:studyapp_{name}_change", args=[obj.pk]))
                self.assertEqual(page.status_code, 200)
                self.assertNotContains(page, 'name="_save"')
                self.assertEqual(self.client.post(reverse(f"admin:studyapp_{name}_change", args=[obj.pk]), {}).status_code, 403)
        listing = self.client.get(reverse("admin:studyapp_annotator_changelist")).content.decode()
        self.assertIn("exclude_annotators", listing)  # the actions that change annotators through the services stay
        self.assertNotIn("delete_selected", self.client.get(reverse("admin:studyapp_rankeditem_changelist")).content.decode())
        fresh = m.Collection.objects.create(name="not studied")  # a collection no study uses yet can still be corrected
        run = m.Run.objects.create(collection=fresh, name="r")
        topic = m.Topic.objects.create(collection=fresh, topic_id="t")
        doc = m.Document.objects.create(collection=fresh, docid="d")
        loose = m.RankedItem.objects.create(run=run, topic=topic, document=doc, rank=1)
        self.assertContains(self.client.get(reverse("admin:studyapp_rankeditem_change", args=[loose.pk])), 'name="_save"')
        for name, obj in (("topic", topic), ("run", run)):
            self.assertContains(self.client.get(reverse(f"admin:studyapp_{name}_change", args=[obj.pk])), 'name="_save"')
        topic_page = self.client.get(reverse("admin:studyapp_topic_change", args=[presentation.topic.pk])).content.decode()
        self.assertNotIn('name="subtopics-0-weight"', topic_page)  # the studied topic's subtopics: read-only inline

    def test_count_columns_show_the_related_rows_and_sort_by_them(self) -> None:
        page = self.client.get(reverse("admin:studyapp_collection_changelist"))
        self.assertContains(page, f'<td class="field-n_topics">{self.collection.topics.count()}</td>', html=True)
        self.assertContains(page, f'<td class="field-n_runs">{self.collection.runs.count()}</td>', html=True)
        url = reverse("admin:studyapp_presentation_changelist")
        column = self.client.get(url).context["cl"].list_display.index("n_answers")
        expected = sorted(p.assignments.filter(preference__isnull=False).count() for p in Presentation.objects.all())
        self.assertGreater(expected[-1], 0)
        for order, values in ((str(column), expected), (f"-{column}", expected[::-1])):
            with self.subTest(order=order):
                rows = self.client.get(url, {"o": order}).context["cl"].result_list
                self.assertEqual([row._n_answers for row in rows], values)

    def test_list_search_and_filters(self) -> None:
        url = reverse("admin:studyapp_document_changelist")
        response = self.client.get(url, {"q": "Jaguar facts"})
        self.assertContains(response, "t1-d1")
        self.assertNotContains(response, "t2-d3")
        response = self.client.get(reverse("admin:studyapp_presentation_changelist"), {"level__exact": "topic"})
        self.assertContains(response, "6 presentations")

    def test_design_fields_are_read_only_after_creation(self) -> None:
        response = self.client.get(reverse("admin:studyapp_study_change", args=[self.study.pk]))
        self.assertNotContains(response, 'name="depth"')
        self.assertContains(response, 'name="status"')

    def test_the_slug_help_text_survives_the_admin_html(self) -> None:
        response = self.client.get(reverse("admin:studyapp_study_change", args=[self.study.pk]))
        self.assertContains(
            response, "<div>part of the annotators' address: /s/demo-study/ for the slug demo-study</div>"
        )  # admin help is HTML
        self.assertNotContains(response, "/s//")

    def test_the_home_page_links_the_demo_study_and_the_admin(self) -> None:
        self.client.logout()
        response = self.client.get(reverse("home"))
        self.assertContains(response, reverse("admin:index"))
        self.assertContains(response, f'href="{reverse("staff_studies")}"')  # the staff pages too
        self.assertNotContains(response, "Try the demo study")  # no demo loaded in this test
        self.assertNotContains(response, "simulated demo study")
        for name in (DEMO_STUDY, SIMULATED_STUDY):  # what make run leaves
            make_toy_study(name=name)
        response = self.client.get(reverse("home"))
        self.assertContains(response, f'href="{reverse("study_entry", args=["demo-study"])}"')
        self.assertContains(response, f'href="{reverse("study_report", args=["demo-study-simulated"])}"')

    # -- editing a study: the same rules as the JSON configuration ---------------------------------------

    def edit_study(self, **changes: str):
        url = reverse("admin:studyapp_study_change", args=[self.study.pk])
        form = FormFields()
        form.feed(self.client.get(url).content.decode())
        return self.client.post(url, {**form.data, **changes})

    def test_staff_can_edit_the_consent_and_completion_settings(self) -> None:
        redirect = "https://app.prolific.com/submissions/complete?cc={code}"
        response = self.edit_study(consent_version=" 2 ", completion_code="NEWCODE", redirect_url=redirect)
        self.assertRedirects(response, reverse("admin:studyapp_study_changelist"), fetch_redirect_response=False)
        self.study.refresh_from_db()
        self.assertEqual((self.study.consent_version, self.study.completion_code, self.study.redirect_url), ("2", "NEWCODE", redirect))

    def test_edits_breaking_the_configuration_rules_are_refused_with_the_same_reasons(self) -> None:
        cases = [
            ({"redirect_url": "https://app.prolific.com/submissions/complete?cc=FIXED"}, "redirect_url must contain {code}"),
            ({"redirect_url": "https://p.example/?cc={code}", "completion_code": ""}, "contains {code} but no completion_code"),
            ({"redirect_url": "ftp://p.example/{code}"}, "redirect_url must be an http(s):// URL"),
            ({"completion_code": "has space"}, "completion_code must be 1-100 letters"),
            ({"consent_version": "   "}, "This field is required"),  # the model requires it; blank is stripped to empty
            ({"consent_text": " "}, "consent_text must not be empty or blank"),
            ({"instructions": ""}, "instructions must not be empty or blank"),
            ({"excluded_exit": "screenout", "screenout_code": ""}, "needs a screenout_code to give the excluded participants"),
            ({"language": "fr"}, "Select a valid choice"),
            ({"min_viewport_width": "100"}, "min_viewport_width must be between 240 and 3840, got 100"),
        ]
        before = Study.objects.filter(pk=self.study.pk).values().get()
        for changes, reason in cases:
            with self.subTest(changes=changes):
                response = self.edit_study(**changes)
                self.assertEqual(response.status_code, 200)  # the form again, with the reason
                self.assertContains(response, reason.replace("'", "&#x27;"))
                self.assertEqual(Study.objects.filter(pk=self.study.pk).values().get(), before)


class StaffStudyFormTestCase(BaseTestCase):
    """Who may use the study form of the staff pages (the form itself: tests/studyapp/test_study_form.py)."""

    def setUp(self) -> None:
        super().setUp()
        self.staff = get_user_model().objects.create_superuser("maker", "maker@example.org", "pw-for-tests")
        self.client.force_login(self.staff)
        self.url = reverse("staff_study_new")

    def test_only_staff_who_may_add_studies(self) -> None:
        plain = get_user_model().objects.create_user("helper", password="pw-for-tests", is_staff=True)
        self.client.force_login(plain)
        self.assertEqual(self.client.get(self.url).status_code, 403)
        self.assertNotContains(self.client.get(reverse("staff_studies")), f'href="{self.url}"')
        self.client.logout()
        self.assertEqual(self.client.get(self.url).status_code, 302)  # the staff sign-in
