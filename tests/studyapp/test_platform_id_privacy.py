"""Raw platform ids only with the permission, everywhere (services.access.platform_ids): every admin list probed
with every lookup, search and sorting on each field holding ids by a member without the permission tells
nothing; erasure and the retention purge leave no raw id anywhere in the database (every column of every table
searched); masking hides ids of people no longer in the database."""

from __future__ import annotations

import io
from datetime import timedelta
from unittest import mock

from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from studyapp.models import Annotator, PlatformCall
from studyapp.services.access import platform_ids, teams
from studyapp.services.access.teams import set_team
from studyapp.services.data import erasure
from studyapp.services.review import sending
from tests.studyapp.test_platform_review import PlatformReviewTestCase

# Every lookup on the fields themselves; through a relation (which Django's admin refuses unless a filter offers it) a few.
LOOKUPS = ("", "exact", "iexact", "contains", "icontains", "startswith", "istartswith", "endswith", "iendswith",
           "regex", "iregex", "gt", "gte", "lt", "lte", "in", "isnull")  # fmt: skip
RELATED_LOOKUPS = ("startswith", "isnull")
JSON_KEYS = {"external_ids": ("PROLIFIC_PID", "SESSION_ID"), "request": ("path", "body")}
NOTHING = "zz-matches-nothing"


def id_paths(model, depth: int = 2, prefix: str = "", seen: tuple = ()) -> list[tuple[str, int]]:
    """``(path, steps)`` from ``model`` to every field holding raw ids, through relations (``steps`` of them, up to
    ``depth``, never back to a model passed) and into a JSON field's keys."""
    paths = []
    for name in platform_ids.ID_FIELDS.get(model._meta.label, ()):
        paths.append((prefix + name, len(seen)))
        paths += [(f"{prefix}{name}__{key}", 0) for key in JSON_KEYS.get(name, ()) if not seen]
    if len(seen) < depth:
        for field in model._meta.get_fields():
            target = field.related_model if field.is_relation else None
            if target is not None and target is not model and target not in seen:
                paths += id_paths(target, depth, f"{prefix}{field.name}__", (*seen, model))  # a reverse relation: its query name
    return paths


def sorts_by_ids(model_admin, column) -> bool:
    """Does the changelist column ``column`` sort by a field holding raw ids?"""
    attr = column if callable(column) else getattr(model_admin, column, getattr(model_admin.model, column, None))
    order = getattr(attr, "admin_order_field", column if isinstance(column, str) else None)
    return isinstance(order, str) and platform_ids.touches_ids(model_admin.model, order)


class PrivacyTestCase(PlatformReviewTestCase):
    def setUp(self) -> None:
        super().setUp()
        with mock.patch("time.sleep"):
            sending.apply(self.study, clients=self.clients())  # the audit log: paths and bonus lines with raw ids
        User = get_user_model()
        every_permission = Permission.objects.filter(content_type__app_label="studyapp")
        self.member = User.objects.create_user("member", password="pw-membermember", is_staff=True)
        self.idmember = User.objects.create_user("idmember", password="pw-idmemberidmember", is_staff=True)
        for user in (self.member, self.idmember):
            user.user_permissions.set(every_permission)  # all model permissions: only the team decides
        set_team(self.study, "idmember", ["member"], platform_ids=["idmember"])
        self.annotators = list(Annotator.objects.filter(study=self.study).order_by("created_at"))
        self.pid = self.annotators[0].external_id
        self.session = self.annotators[0].external_ids["SESSION_ID"]

    def client_for(self, user) -> Client:
        client = Client()
        client.force_login(user)
        return client


class AdminLookupEnumerationTests(PrivacyTestCase):
    def probe(self, client: Client, url: str, params: dict) -> tuple[int, int | None, list[int]]:
        """(status, number of results, listed primary keys) of a changelist with ``params``."""
        response = client.get(url, params)
        cl = response.context["cl"] if response.status_code == 200 and response.context else None
        if cl is not None and not any(i in str(v) for v in params.values() for i in (self.pid, self.session)):  # not the echo
            self.assertNotIn(self.pid, response.content.decode(), f"{url} {params}")
            self.assertNotIn(self.session, response.content.decode(), f"{url} {params}")
        return response.status_code, (cl.result_count if cl else None), ([o.pk for o in cl.result_list] if cl else [])

    def test_sees_all_ids_comes_from_the_users_own_memberships(self) -> None:
        self.assertFalse(teams.sees_all_platform_ids(self.member))  # idmember's grant on the same study is not member's
        self.assertTrue(teams.sees_all_platform_ids(self.idmember))

    def test_every_admin_list_every_lookup_on_every_id_field_finds_nothing(self) -> None:
        member, idmember = self.client_for(self.member), self.client_for(self.idmember)
        probes = sorted_columns = 0
        for model, model_admin in admin.site._registry.items():
            opts = model._meta
            url = reverse(f"admin:{opts.app_label}_{opts.model_name}_changelist")
            for path, steps in id_paths(model):
                for lookup in LOOKUPS if steps == 0 else RELATED_LOOKUPS:
                    key = f"{path}__{lookup}" if lookup else path
                    values = ("0", "1") if lookup == "isnull" else (self.pid[:1], self.session) if steps == 0 else (self.pid[:1],)
                    answers = {self.probe(member, url, {key: v})[:2] for v in (*values, NOTHING)}
                    probes += len(values) + 1
                    self.assertEqual(len(answers), 1, f"{opts.model_name} ?{key}=: {answers}")  # the same answer, whatever the value
            for query in (self.pid, self.session):  # the admin search
                self.assertEqual(self.probe(member, url, {"q": query})[:2], self.probe(member, url, {"q": NOTHING})[:2], f"{url} q")
            listing = member.get(url)
            columns = listing.context["cl"].list_display if listing.status_code == 200 else []
            for index, column in enumerate(columns):  # sorting by a column (?o=INDEX of the changelist's columns)
                if sorts_by_ids(model_admin, column):
                    sorted_up, sorted_down = (self.probe(member, url, {"o": o})[2] for o in (str(index), f"-{index}"))
                    self.assertEqual(sorted_up, sorted_down, f"{url} o={index}: the order follows the ids")
                    sorted_columns += 1
        self.assertEqual(sorted_columns, 1)  # the annotator list's platform id column
        self.assertGreater(probes, 500)
        # the same probes are answered for a member who may see the ids: the test can tell a leak
        annotators = reverse("admin:studyapp_annotator_changelist")
        counts = {idmember.get(annotators, {"external_id__startswith": v}).context["cl"].result_count for v in (self.pid, NOTHING)}
        self.assertEqual(counts, {0, 1})
        self.assertEqual(idmember.get(annotators, {"q": self.pid}).context["cl"].result_count, 1)
        orders = [[a.pk for a in idmember.get(annotators, {"o": o}).context["cl"].result_list] for o in ("4", "-4")]
        self.assertEqual(orders[0], orders[1][::-1])
        calls = reverse("admin:studyapp_platformcall_changelist")
        found = idmember.get(calls, {"request__path__icontains": self.session}).context["cl"].result_count
        self.assertGreater(found, 0)

    def test_the_old_leak_is_closed(self) -> None:
        """The issue's probe: ``?external_id__startswith=`` on the annotator list answered with a count."""
        url = reverse("admin:studyapp_annotator_changelist")
        response = self.client_for(self.member).get(url, {"external_id__startswith": self.pid[:3]})
        self.assertEqual(response.status_code, 400)


class ErasureTests(PrivacyTestCase):
    def text_holding(self, needle: str) -> list[str]:
        """``table.column`` of every column of every table whose text holds ``needle`` (the whole database): one
        query per table counts the rows holding it in each of its columns."""
        found = []
        with connection.cursor() as cursor:
            q = connection.ops.quote_name
            for table in connection.introspection.table_names(cursor):
                cursor.execute(f"SELECT * FROM {q(table)} WHERE 1 = 0")
                columns = [d[0] for d in cursor.description]
                counts = ", ".join(f"COUNT(CASE WHEN CAST({q(column)} AS TEXT) LIKE %s THEN 1 END)" for column in columns)
                cursor.execute(f"SELECT {counts} FROM {q(table)}", [f"%{needle}%"] * len(columns))
                found += [f"{table}.{column}" for column, n in zip(columns, cursor.fetchone(), strict=True) if n]
        return found

    def test_erasure_leaves_no_raw_id_anywhere_in_the_database(self) -> None:
        erased = self.annotators[:3]
        ids = {i for a in erased for i in platform_ids.own_ids([a], self.study)}
        self.assertGreaterEqual(len(ids), 6)  # participant and submission id each
        for i in ids:
            self.assertTrue(self.text_holding(i), i)  # before: in the annotator row and the audit log
        self.assertIn("platformcall", " ".join(self.text_holding(erased[0].external_ids["SESSION_ID"])))
        erasure.erase(erased[0], source="withdrawal")
        call_command("erase_participant", self.study.slug, erased[1].external_id, stdout=io.StringIO())
        admin_client = self.client_for(get_user_model().objects.create_superuser("root", password="pw-rootrootroot"))
        admin_client.post(
            reverse("admin:studyapp_annotator_changelist"), {"action": "erase_annotators", "_selected_action": [erased[2].pk], "apply": "1"}
        )
        self.assertFalse(Annotator.objects.filter(pk__in=[a.pk for a in erased]).exists())
        for i in sorted(ids):
            self.assertEqual(self.text_holding(i), [], i)
        shared = erased[0].external_ids["STUDY_ID"]  # the platform's study id, in everyone's link, stays
        self.assertTrue(self.text_holding(shared))
        self.assertTrue(PlatformCall.objects.filter(request__path__icontains=erasure.ERASED).exists())
        kept = self.annotators[3]  # the others' ids are untouched
        self.assertTrue(any("platformcall" in t for t in self.text_holding(kept.external_ids["SESSION_ID"])))

    def test_the_purge_pseudonymises_the_audit_log(self) -> None:
        later = timezone.now() + timedelta(days=400)
        old = self.annotators
        ids = platform_ids.own_ids(old, self.study)
        result = erasure.purge_platform_ids(self.study, days=30, now=later)
        self.assertEqual(result.purged, len(old))
        for i in sorted(ids):
            self.assertEqual(self.text_holding(i), [], i)
        kept = Annotator.objects.get(pk=old[0].pk).kept_pseudonym
        self.assertTrue(PlatformCall.objects.filter(request__path__icontains=f"(id of {kept})").exists())

    def test_masking_hides_ids_of_people_no_longer_in_the_database(self) -> None:
        gone = "5f0c2b1a9e8d7c6b5a4f3e2d"  # a Prolific-shaped id that no annotator holds (erased before scrubbing existed)
        worker = "A1B2C3D4E5F6G7"  # an MTurk worker id
        text = f"GET /api/v1/submissions/{gone}/ {worker}"
        self.assertEqual(platform_ids.mask(self.study, text), "GET /api/v1/submissions/(hidden)/ (hidden)")
        self.assertEqual(platform_ids.mask(self.study, f"{self.pid} approve"), "(hidden) approve")
        self.assertEqual(platform_ids.mask(self.study, "FAILED_CHECK APPROVE 0.75"), "FAILED_CHECK APPROVE 0.75")
