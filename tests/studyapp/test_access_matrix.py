"""Who may see what (services.access.teams): every staff URL of the URLconf and every admin view and
action on study objects, for anonymous visitors, an annotator, staff outside the study's team, a
member, a member allowed to see platform ids, and a superuser."""

from __future__ import annotations

import csv
import io
import json
import tempfile
from pathlib import Path

from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from studyapp import admin as study_admin
from studyapp.models import (
    AllocationGroup,
    AllocationRound,
    Annotator,
    PlatformCall,
    Presentation,
    QualityDecision,
    ReviewDecision,
    StoredPlan,
    Study,
    StudyMember,
)
from studyapp.services.access.teams import set_team
from studyapp.services.data import erasure
from studyapp.services.platforms.review_api import CallRecord
from studyapp.services.quality import control
from studyapp.services.review import jobs
from studyapp.services.review.sending import record_calls
from tests.studyapp.annotator_base import AnnotatorTestCase
from tests.studyapp.base import TOY_CONFIG, BaseTestCase
from tests.studyapp.filled import fill

# Sample values of the URL keywords besides the slug: a new staff URL with keywords fails the test until it gets them here.
SAMPLES = {
    "staff_study_export": {"fmt": "csv"},
    "study_report_figure": {"stem": "metric-bars-topic", "fmt": "svg"},
    "study_report_file": {"name": "agreement-topic.csv"},
}
PARTICIPANT_PREFIX, STAFF_PREFIX = "s/", "staff/"


def staff_routes() -> list[URLPattern]:
    """Every URL pattern of the site outside the admin, checked to be either a participant or a staff page."""
    routes = []
    for pattern in get_resolver().url_patterns:
        if isinstance(pattern, URLResolver):  # admin/: tested through its model admins below
            continue
        route = str(pattern.pattern)
        if route.startswith(STAFF_PREFIX):
            routes.append(pattern)
        else:
            assert route.startswith(PARTICIPANT_PREFIX) or route == "", f"URL {route!r} is neither a participant nor a staff page"
    return routes


class AccessMatrixTest(AnnotatorTestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        super().setUpTestData()
        import random
        from datetime import UTC, datetime

        fill(cls.study, ["pid-one", "pid-two"], random.Random(3), datetime(2026, 1, 6, tzinfo=UTC))
        User = get_user_model()
        every_permission = Permission.objects.filter(content_type__app_label="studyapp")
        cls.users = {}
        for name in ("outsider", "member", "idmember"):
            user = User.objects.create_user(name, password="pw-" + name * 3, is_staff=True)
            user.user_permissions.set(every_permission)  # all model permissions: only the team decides
            cls.users[name] = user
        cls.users["superuser"] = User.objects.create_superuser("root", password="pw-rootrootroot")
        set_team(cls.study, "idmember", ["member"], platform_ids=["idmember"])
        two = Annotator.objects.get(study=cls.study, external_id="pid-two")
        control.exclude(two, staff=cls.users["superuser"], reason="for the log", rule=QualityDecision.Rule.STAFF)
        erasure.erase(
            Annotator.objects.get(study=cls.study, external_id="bob"), source="withdrawal"
        )  # an erasure log entry and a withdrawal mark
        one = Annotator.objects.get(study=cls.study, external_id="pid-one")  # a review decision and an audit log entry naming the raw id
        ReviewDecision.objects.create(study=cls.study, annotator=one, action="approve", decided_at=datetime(2026, 1, 7, tzinfo=UTC))
        record_calls(
            cls.study,
            one,
            "prolific",
            [CallRecord("state", {"method": "GET", "path": "/api/v1/submissions/pid-one/"}, True, 200, '{"participant": "pid-one"}')],
        )
        jobs.enqueue(cls.study, cls.users["member"])  # an Apply of the review page, queued
        presentation = Presentation.objects.filter(study=cls.study).first()  # what adaptive allocation stores
        AllocationRound.objects.create(study=cls.study, number=1, drawn_at=datetime(2026, 1, 7, tzinfo=UTC), answers=3, target=1.0, drawn=1)
        AllocationGroup.objects.create(
            study=cls.study, topic=presentation.topic, run_a=presentation.run_a, run_b=presentation.run_b, drawn_round=1, probability=0.5
        )
        StoredPlan.objects.create(  # what manage.py plan_study stores
            study=cls.study, kind="design", computed_at=datetime(2026, 1, 7, tzinfo=UTC), assumptions={}, table=[], lines="", summary=""
        )

    def client_for(self, role: str) -> Client:
        client = Client()
        if role == "annotator":
            self.sign_in(client, self.alice)
        elif role != "anonymous":
            client.force_login(self.users[role])
        return client

    def staff_urls(self) -> list[str]:
        urls = []
        for pattern in staff_routes():
            keywords = set(pattern.pattern.converters)
            samples = SAMPLES.get(pattern.name, {})
            missing = keywords - {"slug"} - set(samples)
            self.assertFalse(missing, f"{pattern.pattern}: add a sample for {sorted(missing)} to SAMPLES")
            kwargs = {k: self.study.slug if k == "slug" else samples[k] for k in keywords}
            urls.append(reverse(pattern.name, kwargs=kwargs))
        return urls

    def test_the_urlconf_has_the_staff_pages(self) -> None:
        names = {p.name for p in staff_routes()}
        self.assertGreaterEqual(names, {"staff_studies", "staff_study", "staff_study_payments", "staff_study_export", "study_report"})

    def test_anonymous_and_annotators_are_sent_to_the_sign_in(self) -> None:
        for role in ("anonymous", "annotator"):
            client = self.client_for(role)
            for url in self.staff_urls():
                response = client.get(url)
                self.assertEqual(response.status_code, 302, f"{role} {url}")
                self.assertIn("/admin/login/", response["Location"], f"{role} {url}")

    def test_staff_outside_the_team_get_403_on_every_study_url(self) -> None:
        client = self.client_for("outsider")
        for url in self.staff_urls():
            response = client.get(url)
            if url in (reverse("staff_studies"), reverse("staff_study_new")):  # no study's page: the list, the study form
                self.assertEqual(response.status_code, 200)
                self.assertNotContains(response, self.study.name)
            else:
                self.assertEqual(response.status_code, 403, url)

    def test_members_superusers_see_every_url(self) -> None:
        for role in ("member", "idmember", "superuser"):
            client = self.client_for(role)
            for url in self.staff_urls():
                response = client.get(url)
                preview = url.startswith(reverse("staff_preview", args=[self.study.slug]))  # redirects to the preview's current step
                self.assertIn(response.status_code, (200, 302) if preview else (200,), f"{role} {url}")
            self.assertContains(client.get(reverse("staff_studies")), self.study.name)

    def test_platform_ids_only_with_the_permission(self) -> None:
        pids = {"pid-one", "pid-two", "alice", "bob"}
        payments = reverse("staff_study_payments", args=[self.study.slug])
        page = reverse("staff_study", args=[self.study.slug])
        for role, sees in (("member", False), ("idmember", True), ("superuser", True)):
            client = self.client_for(role)
            rows = list(csv.DictReader(io.StringIO(client.get(payments).content.decode())))
            self.assertEqual(len(rows), Annotator.objects.filter(study=self.study).count())
            self.assertEqual("platform_id" in rows[0], sees, role)
            text = client.get(page).content.decode() + client.get(page + "?q=pid").content.decode()
            self.assertEqual(any(p in text for p in pids), sees, role)
            for fmt in ("csv", "jsonl"):
                export = client.get(reverse("staff_study_export", args=[self.study.slug, fmt])).content.decode()
                self.assertFalse(any(p in export for p in pids), f"{role} {fmt}")  # exports never hold them
            changelist = client.get(reverse("admin:studyapp_annotator_changelist")).content.decode()
            self.assertEqual("pid-one" in changelist, sees, role)
            change = client.get(reverse("admin:studyapp_annotator_change", args=[self.alice.pk])).content.decode()
            self.assertEqual("field-external_id" in change, sees, role)  # the annotator's page is read-only: a row, no input
            self.assertNotIn('name="external_id"', change)
            call = client.get(reverse("admin:studyapp_platformcall_change", args=[PlatformCall.objects.get().pk])).content.decode()
            self.assertIn("/api/v1/submissions/", call)
            self.assertEqual("pid-one" in call, sees, role)
            review_page = client.get(reverse("staff_study_review", args=[self.study.slug])).content.decode()
            self.assertIn("/api/v1/submissions/", review_page)
            self.assertEqual(any(p in review_page for p in pids), sees, role)

    def test_admin_study_objects_are_limited_to_the_team(self) -> None:
        scoped = {
            model: ma for model, ma in admin.site._registry.items() if isinstance(ma, study_admin.TeamScoped | study_admin.StudyAdmin)
        }
        self.assertGreaterEqual(len(scoped), 10)
        for role, visible in (("outsider", False), ("member", True), ("superuser", True)):
            client = self.client_for(role)
            for model, model_admin in scoped.items():
                opts = model._meta
                rows = model_admin.get_queryset(self._request(role))
                self.assertEqual(rows.exists(), visible, f"{role} {opts.model_name}")
                changelist = client.get(reverse(f"admin:{opts.app_label}_{opts.model_name}_changelist"))
                self.assertEqual(changelist.status_code, 200, f"{role} {opts.model_name}")
                obj = model._default_manager.first()
                change = client.get(reverse(f"admin:{opts.app_label}_{opts.model_name}_change", args=[obj.pk]))
                self.assertEqual(change.status_code, 200 if visible else 302, f"{role} {opts.model_name}")

    def _request(self, role: str):
        from django.test import RequestFactory

        request = RequestFactory().get("/admin/")
        request.user = self.users[role]
        return request

    def test_admin_actions_do_nothing_to_other_teams_studies(self) -> None:
        target = Annotator.objects.filter(study=self.study, external_id="pid-one").get()
        before = QualityDecision.objects.count()
        outsider = self.client_for("outsider")
        actions = [
            ("admin:studyapp_study_changelist", "export_preferences_csv", self.study.pk, {}),
            ("admin:studyapp_study_changelist", "run_quality_check", self.study.pk, {}),
            ("admin:studyapp_annotator_changelist", "exclude_annotators", target.pk, {"apply": "1", "reason": "outsider"}),
            ("admin:studyapp_annotator_changelist", "reinstate_annotators", target.pk, {"apply": "1", "reason": "outsider"}),
            ("admin:studyapp_annotator_changelist", "erase_annotators", target.pk, {"apply": "1"}),
        ]
        registered = {name for ma in admin.site._registry.values() for name in (ma.actions or [])}
        self.assertLessEqual({a for _, a, _, _ in actions}, registered)
        for url, action, pk, extra in actions:
            response = outsider.post(reverse(url), {"action": action, "_selected_action": [pk], **extra})
            self.assertEqual(response.status_code, 302, action)  # "no items selected": back to the list
            self.assertNotEqual(response.get("Content-Type", "").split(";")[0], "text/csv")
        self.assertEqual(QualityDecision.objects.count(), before)
        self.assertTrue(Annotator.objects.filter(pk=target.pk).exists())
        member = self.client_for("member")
        response = member.post(
            reverse("admin:studyapp_study_changelist"), {"action": "export_preferences_csv", "_selected_action": [self.study.pk]}
        )
        self.assertEqual(response["Content-Type"].split(";")[0], "text/csv")
        member.post(
            reverse("admin:studyapp_annotator_changelist"),
            {"action": "exclude_annotators", "_selected_action": [target.pk], "apply": "1", "reason": "member"},
        )
        self.assertEqual(QualityDecision.objects.count(), before + 1)

    def test_only_owners_change_the_team(self) -> None:
        url = reverse("admin:studyapp_study_change", args=[self.study.pk])
        self.assertNotIn('name="members-0-role"', self.client_for("member").get(url).content.decode())
        self.assertIn('name="members-0-role"', self.client_for("idmember").get(url).content.decode())
        self.assertEqual(StudyMember.objects.get(study=self.study, role="owner").user.username, "idmember")


class CreateStudyTeamTest(BaseTestCase):
    def config(self) -> str:
        path = Path(tempfile.mkdtemp()) / "study.json"
        path.write_text(json.dumps({**TOY_CONFIG, "topics": ["1"]}))
        return str(path)

    def test_owner_members_and_id_permission(self) -> None:
        User = get_user_model()
        for name in ("pi", "ra", "ra2"):
            User.objects.create_user(name, is_staff=True)
        out = io.StringIO()
        call_command("create_study", "--collection", "toy", "--name", "Team study", "--config", self.config(), "--allow-bare-documents", "--owner", "pi",
                     "--member", "ra", "--member", "ra2", "--platform-ids", "pi", stdout=out)  # fmt: skip
        team = {(m.user.username, m.role, m.platform_ids) for m in StudyMember.objects.filter(study__name="Team study")}
        self.assertEqual(team, {("pi", "owner", True), ("ra", "member", False), ("ra2", "member", False)})
        self.assertIn("Owner: pi (may see platform ids)", out.getvalue())

    def test_unknown_or_non_staff_users_create_nothing(self) -> None:
        get_user_model().objects.create_user("visitor")
        for args, message in ((["--owner", "nobody"], "no user 'nobody'"), (["--member", "visitor"], "not staff"),
                              (["--platform-ids", "visitor"], "not the owner or a member")):  # fmt: skip
            with self.assertRaisesMessage(CommandError, message):
                call_command(
                    "create_study",
                    "--collection",
                    "toy",
                    "--name",
                    "Bad team",
                    "--config",
                    self.config(),
                    "--allow-bare-documents",
                    *args,
                    stdout=io.StringIO(),
                )
            self.assertFalse(Study.objects.filter(name="Bad team").exists())
