"""Compiled queries: a queryset's SQL compiled once per connection gives the same instances as the queryset,
and when Django's internals differ from what the module expects, every query runs through the ORM (one warning)."""

from __future__ import annotations

import warnings
from datetime import UTC, datetime, timedelta
from unittest import mock

from django.db import IntegrityError, connection, connections, transaction
from django.db.models import F, Model
from django.db.models import query as django_query
from django.db.models.signals import post_init, post_save
from django.test import RequestFactory
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from studyapp import compiled_queries
from studyapp.compiled_queries import CompiledQuery, OrmQuery, compiled, compiled_update
from studyapp.models import Annotator, Assignment, Preference, Study
from studyapp.services.participation.sessions import TOKENS, resolve
from tests.studyapp.annotator_base import AnnotatorTestCase


def _fields(obj) -> dict:
    return {f.attname: getattr(obj, f.attname) for f in type(obj)._meta.concrete_fields}


class CompiledQueryTests(AnnotatorTestCase):
    def setUp(self) -> None:
        super().setUp()
        compiled_queries._BUILT.clear()
        Study.objects.filter(pk=self.study.pk).update(config={"note": "ü", "nested": [1, 2.5, None]})

    def _by_tokens(self, count: int) -> CompiledQuery[Annotator]:
        placeholders = [f"t{i}" for i in range(count)]
        return CompiledQuery.of(Annotator.objects.select_related("study").filter(token__in=placeholders).order_by("pk"), placeholders)

    def test_instances_equal_the_querysets_with_related_objects_and_converted_values(self) -> None:
        tokens = [self.alice.token, self.bob.token]
        expected = list(Annotator.objects.select_related("study").filter(token__in=tokens).order_by("pk"))
        with self.assertNumQueries(1):
            got = self._by_tokens(2).fetch(tokens)
            self.assertEqual([_fields(a) for a in got], [_fields(a) for a in expected])
            self.assertEqual([_fields(a.study) for a in got], [_fields(a.study) for a in expected])  # no query: cached
        self.assertEqual(got[0].study.config, {"note": "ü", "nested": [1, 2.5, None]})  # the JSON converter ran
        self.assertIsNotNone(got[0].created_at.tzinfo)  # so did the datetime one (SQLite stores text)
        self.assertFalse(got[0]._state.adding)
        self.assertEqual(got[0]._state.db, "default")
        got[0].save(update_fields=["exclusion_reason"])  # an instance like any other

    def test_annotations_are_attributes(self) -> None:
        query = CompiledQuery.of(
            Assignment.objects.filter(annotator_id=-1).annotate(answer_id=F("preference__id")).order_by("position"), [-1]
        )
        got = query.fetch([self.alice.pk])
        expected = list(self.alice.assignments.annotate(answer_id=F("preference__id")).order_by("position"))
        self.assertEqual([(_fields(a), a.answer_id) for a in got], [(_fields(a), a.answer_id) for a in expected])
        self.assertEqual(len(got), self.study.items_per_annotator)

    def test_no_rows_and_unknown_values(self) -> None:
        self.assertEqual(self._by_tokens(1).fetch(["no such token"]), [])
        self.assertEqual(self._by_tokens(1).fetch(["' OR 1=1 --"]), [])  # a value, never SQL

    def test_values_come_in_the_placeholders_order_whatever_the_sqls(self) -> None:
        query = CompiledQuery.of(Annotator.objects.filter(token="t", pseudonym="p").order_by(), ["p", "t"])
        self.assertEqual([a.pk for a in query.fetch([self.alice.pseudonym, self.alice.token])], [self.alice.pk])
        self.assertEqual(query.fetch([self.alice.token, self.alice.pseudonym]), [])

    def test_parameters_that_are_not_the_placeholders_are_refused(self) -> None:
        with self.assertRaisesRegex(ValueError, "not its placeholders"):
            CompiledQuery.of(Annotator.objects.filter(token="a", status="active"), ["a"])  # 'active' would be frozen in
        with self.assertRaisesRegex(ValueError, "not its placeholders"):
            CompiledQuery.of(Annotator.objects.filter(token="a"), ["b"])
        with self.assertRaisesRegex(ValueError, "not its placeholders"):
            CompiledQuery.of(Annotator.objects.filter(token="a", pseudonym="a"), ["a", "a"])  # placeholders must be distinct

    def test_built_once_per_connection_and_key(self) -> None:
        calls = []

        def make(*tokens: str):
            calls.append(tokens)
            return Annotator.objects.select_related("study").filter(token__in=tokens).order_by("pk")

        for _ in range(3):
            self.assertEqual(compiled("k", make, ["t0"]).fetch([self.alice.token])[0].pk, self.alice.pk)
        compiled("other key", make, ["t0"])
        self.assertEqual(calls, [("t0",), ("t0",)])  # made with the placeholders, once per key
        self.assertIn(connections["default"], compiled_queries._BUILT)

    def test_resolve_finds_the_session_annotator_of_the_slug_only(self) -> None:
        other = Study.objects.create(name="Other", slug="other", collection=self.study.collection)
        request = RequestFactory().get("/")
        request.session = {TOKENS: {str(self.study.pk): self.alice.token, str(other.pk): self.bob.token}}
        with self.assertNumQueries(1):
            study, annotator = resolve(request, self.study.slug)
        self.assertEqual((study.pk, annotator.pk), (self.study.pk, self.alice.pk))
        request = RequestFactory().get("/")
        request.session = {TOKENS: {str(self.study.pk): "forged"}}
        with self.assertNumQueries(2):  # the token finds nobody, then the study by its slug
            study, annotator = resolve(request, self.study.slug)
        self.assertEqual((study.pk, annotator), (self.study.pk, None))
        request.session = {}
        self.assertEqual(resolve(request, "no-such-study"), (None, None))


def _state(obj) -> dict:
    """An instance's whole dictionary, its ModelState's too (what a later save or related access reads; the state's
    ``fields_cache`` is made on first access, an empty one is the same as none)."""
    return {**{k: v for k, v in vars(obj).items() if k != "_state"}, "_state": {"fields_cache": {}, **vars(obj._state)}}


class InstanceMakerTests(AnnotatorTestCase):
    """Rows of plain models are made without Model.__init__: exactly the instances from_db makes."""

    def setUp(self) -> None:
        super().setUp()
        compiled_queries._BUILT.clear()

    def _sequence(self) -> CompiledQuery[Assignment]:
        return CompiledQuery.of(
            Assignment.objects.filter(annotator_id=-1).annotate(answer_id=F("preference__id")).order_by("position"), [-1]
        )

    def test_the_same_dictionaries_as_from_db_with_related_objects(self) -> None:
        tokens = [self.alice.token, self.bob.token]
        query = CompiledQuery.of(Annotator.objects.select_related("study").filter(token__in=["t0", "t1"]).order_by("pk"), ["t0", "t1"])
        self.assertIsNotNone(compiled_queries.instance_maker(Annotator, "default", tuple(query.init_list)))
        self.assertTrue(query.readable)
        fast = query.fetch(tokens)
        with mock.patch.object(compiled_queries, "_signals_quiet", lambda: False):  # Django's own from_db and populate()
            slow = query.fetch(tokens)
        self.assertEqual([_state(a) for a in fast], [_state(a) for a in slow])
        self.assertEqual([_state(a.study) for a in fast], [_state(a.study) for a in slow])
        self.assertEqual([vars(a._state)["fields_cache"].keys() for a in fast], [{"study"}, {"study"}])
        self.assertIs(fast[0].study._state.fields_cache.get("annotators"), None)  # a forward relation: no reverse cache
        rows = self._sequence().fetch([self.alice.pk])
        with mock.patch.object(compiled_queries, "_signals_quiet", lambda: False):
            expected = self._sequence().fetch([self.alice.pk])
        self.assertEqual([_state(a) for a in rows], [_state(a) for a in expected])
        self.assertEqual(len(rows), self.study.items_per_annotator)
        rows[0].lease_expires_at = rows[0].lease_expires_at  # an instance like any other: saved, related read
        rows[0].save(update_fields=["lease_expires_at"])
        self.assertEqual(rows[0].annotator.pk, self.alice.pk)

    def test_a_receiver_of_post_init_gets_its_call(self) -> None:
        seen = []

        def receiver(sender, instance, **kwargs) -> None:
            seen.append(type(instance).__name__)

        post_init.connect(receiver, sender=Assignment)
        self.addCleanup(post_init.disconnect, receiver, sender=Assignment)
        self.assertEqual(len(self._sequence().fetch([self.alice.pk])), self.study.items_per_annotator)
        self.assertEqual(seen, ["Assignment"] * self.study.items_per_annotator)

    def test_models_and_rows_it_does_not_make(self) -> None:
        attnames = tuple(f.attname for f in Assignment._meta.concrete_fields)
        self.assertIsNotNone(compiled_queries.instance_maker(Assignment, "default", attnames))
        self.assertIsNone(compiled_queries.instance_maker(Assignment, "default", attnames[:-1]))  # a deferred column
        self.assertIsNone(compiled_queries.instance_maker(Assignment, "default", attnames[::-1]))  # another order

        def own_init(self, *args, **kwargs) -> None:
            Model.__init__(self, *args, **kwargs)

        maker = compiled_queries.instance_maker
        for name, value in (("__init__", own_init), ("position", property(lambda self: 0, lambda self, value: None))):
            maker.cache_clear()
            self.addCleanup(maker.cache_clear)
            with mock.patch.object(Assignment, name, value, create=False):  # its own __init__; an attribute with a setter
                self.assertIsNone(maker(Assignment, "default", attnames), name)
        maker.cache_clear()
        self.assertIsNotNone(maker(Assignment, "default", attnames))


class CompiledUpdateTests(AnnotatorTestCase):
    """An UPDATE compiled once per connection runs the SQL QuerySet.update runs, with the values prepared as the ORM does."""

    def setUp(self) -> None:
        super().setUp()
        compiled_queries._BUILT.clear()

    def _update(self, pk: int, now, lease):
        return Assignment.objects.filter(pk=pk, released_at__isnull=True, lease_expires_at__gt=now), {"lease_expires_at": lease}

    def _placeholders(self):
        field = Assignment._meta.get_field("lease_expires_at")
        return [(Assignment._meta.pk, -1), (field, datetime(2001, 1, 1, tzinfo=UTC)), (field, datetime(2002, 1, 1, tzinfo=UTC))]

    def test_the_same_statement_and_rows_as_queryset_update(self) -> None:
        rows = list(self.alice.assignments.order_by("position"))
        now = timezone.now()
        Assignment.objects.filter(pk=rows[1].pk).update(lease_expires_at=now - timedelta(minutes=1))  # expired: not changed
        update = compiled_update("lease", self._update, self._placeholders())
        self.assertIsInstance(update, compiled_queries.CompiledUpdate)
        lease = now + timedelta(minutes=30)
        for row, expected in ((rows[0], 1), (rows[1], 0), (rows[2], 1)):
            queryset, changes = self._update(row.pk, now, lease)
            with CaptureQueriesContext(connection) as orm:
                with transaction.atomic():
                    self.assertEqual(queryset.update(**changes), expected)
                    transaction.set_rollback(True)
            with CaptureQueriesContext(connection) as ours:
                self.assertEqual(update.run([row.pk, now, lease]), expected)
            self.assertEqual([q["sql"] for q in ours], [q["sql"] for q in orm if q["sql"].startswith("UPDATE")])
        self.assertEqual(Assignment.objects.get(pk=rows[0].pk).lease_expires_at, lease)
        self.assertEqual(Assignment.objects.get(pk=rows[1].pk).lease_expires_at, now - timedelta(minutes=1))
        self.assertIs(compiled_update("lease", self._update, self._placeholders()), update)  # once per connection and key

    def test_values_that_are_not_the_placeholders_are_refused(self) -> None:
        def frozen(pk, now, lease):
            return Assignment.objects.filter(pk=pk, position=3, lease_expires_at__gt=now), {"lease_expires_at": lease}

        with self.assertRaisesRegex(ValueError, "not its placeholders"):
            compiled_update("frozen", frozen, self._placeholders())
        same = [self._placeholders()[0], self._placeholders()[1], self._placeholders()[1]]
        with self.assertRaisesRegex(ValueError, "not its placeholders"):
            compiled_update("same", self._update, same)  # placeholders must be distinct

    def test_the_fallback_runs_the_orm(self) -> None:
        row = self.alice.assignments.order_by("position").first()
        lease = timezone.now() + timedelta(minutes=30)
        with mock.patch.object(compiled_queries, "_orm_only", lambda: True):
            update = compiled_update("lease", self._update, self._placeholders())
            self.assertIsInstance(update, compiled_queries.OrmUpdate)
            self.assertEqual(update.run([row.pk, timezone.now(), lease]), 1)
        self.assertEqual(Assignment.objects.get(pk=row.pk).lease_expires_at, lease)


class CompiledInsertTests(AnnotatorTestCase):
    """create(): the INSERT of Model.objects.create compiled once per connection, the same row and instance."""

    def setUp(self) -> None:
        super().setUp()
        compiled_queries._BUILT.clear()
        self.rows = list(self.alice.assignments.order_by("position"))
        self.values = {"value": 3, "canonical": -3, "server_seconds": 1.5, "client_ms": None, "visible_ms": 7, "request_id": "r1"}

    def _row(self, pk: int) -> dict:
        return {k: v for k, v in Preference.objects.filter(pk=pk).values().get().items() if k not in ("id", "assignment_id")}

    def test_the_same_statement_row_and_instance_as_the_orm(self) -> None:
        now = timezone.now()
        with CaptureQueriesContext(connection) as orm:
            expected = Preference.objects.create(assignment=self.rows[0], answered_at=now, **self.values)
        expected_row = self._row(expected.pk)
        Preference.objects.filter(pk=expected.pk).delete()  # the same item again: the same statement
        with CaptureQueriesContext(connection) as ours:
            got = compiled_queries.create(Preference, assignment=self.rows[0], answered_at=now, **self.values)
        self.assertIsInstance(compiled_queries._BUILT[connections["default"]][("insert", Preference)], compiled_queries.CompiledInsert)
        self.assertEqual([q["sql"] for q in ours], [q["sql"] for q in orm])
        self.assertEqual(self._row(got.pk), expected_row)
        self.assertGreater(got.pk, expected.pk)
        stored = Preference.objects.get(pk=got.pk)
        self.assertEqual(_state(stored), {**_state(got), "_state": {"fields_cache": {}, "adding": False, "db": "default"}})
        self.assertEqual((got._state.adding, got._state.db, got.assignment), (False, "default", self.rows[0]))
        self.assertEqual(got.late, False)  # a field's default

    def test_a_second_answer_to_an_item_is_refused_by_the_database(self) -> None:
        now = timezone.now()
        compiled_queries.create(Preference, assignment=self.rows[0], answered_at=now, **self.values)
        with self.assertRaises(IntegrityError), transaction.atomic():
            compiled_queries.create(Preference, assignment=self.rows[0], answered_at=now, **self.values)
        with self.assertRaisesRegex(ValueError, "unsaved related object"):
            compiled_queries.create(Preference, assignment=Assignment(), answered_at=now, **self.values)

    def test_receivers_and_the_fallback_get_the_orm(self) -> None:
        seen = []

        def receiver(sender, instance, created, **kwargs) -> None:
            seen.append((instance.pk, created))

        post_save.connect(receiver, sender=Preference)
        self.addCleanup(post_save.disconnect, receiver, sender=Preference)
        got = compiled_queries.create(Preference, assignment=self.rows[0], answered_at=timezone.now(), **self.values)
        self.assertEqual(seen, [(got.pk, True)])
        post_save.disconnect(receiver, sender=Preference)
        with mock.patch.object(compiled_queries, "_orm_only", lambda: True):
            other = compiled_queries.create(Preference, assignment=self.rows[1], answered_at=timezone.now(), **self.values)
        self.assertEqual(self._row(other.pk)["value"], 3)
        self.assertNotIn(connections["default"], compiled_queries._BUILT)  # neither compiled anything


_POPULATORS = django_query.get_related_populators


def _populators_of_a_newer_django(klass_info, select, db, *, extra=None):
    """A changed signature (the ORM itself keeps working with it)."""
    return _POPULATORS(klass_info, select, db)


class DjangoInternalsTests(AnnotatorTestCase):
    def setUp(self) -> None:
        super().setUp()
        compiled_queries._orm_only.cache_clear()
        self.addCleanup(compiled_queries._orm_only.cache_clear)

    def test_the_current_django_is_what_the_module_expects(self) -> None:
        self.assertEqual(compiled_queries.django_internals_problem(), "")
        self.assertIsInstance(compiled("sequence-check", lambda pk: Assignment.objects.filter(annotator_id=pk), [-1]), CompiledQuery)

    def test_a_changed_internal_falls_back_to_the_orm_with_one_warning(self) -> None:
        def make(*tokens: str):
            return Annotator.objects.select_related("study").filter(token__in=tokens).order_by("pk")

        with mock.patch("django.db.models.query.get_related_populators", _populators_of_a_newer_django):
            self.assertIn("get_related_populators takes (klass_info, select, db, extra)", compiled_queries.django_internals_problem())
            with self.assertWarnsRegex(RuntimeWarning, "compiled queries are off, every query runs through the ORM"):
                query = compiled("fallback", make, ["t0", "t1"])
            self.assertIsInstance(query, OrmQuery)
            with warnings.catch_warnings():
                warnings.simplefilter("error")  # the warning came once: further queries are silent
                again = compiled("fallback", make, ["t0", "t1"])
                got = again.fetch([self.alice.token, self.bob.token])
        expected = list(make(self.alice.token, self.bob.token))
        self.assertEqual([_fields(a) for a in got], [_fields(a) for a in expected])
        self.assertEqual([a.study.slug for a in got], [self.study.slug] * 2)

    def test_the_pages_still_work_on_the_fallback(self) -> None:
        with mock.patch.object(compiled_queries, "_orm_only", lambda: True):
            response = self.client.get(self.url("study_next_item"), follow=True)
        self.assertEqual(response.status_code, 200)
