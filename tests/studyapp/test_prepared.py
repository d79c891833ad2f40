"""Prepared: a queryset's SQL built once per connection gives the same instances as the queryset."""

from __future__ import annotations

from django.db import connections
from django.db.models import F
from django.test import RequestFactory

from studyapp import prepared as prepared_module
from studyapp.models import Annotator, Assignment, Study
from studyapp.prepared import Prepared, prepared
from studyapp.services.participation.sessions import TOKENS, resolve
from tests.studyapp.annotator_base import AnnotatorTestCase


def _fields(obj) -> dict:
    return {f.attname: getattr(obj, f.attname) for f in type(obj)._meta.concrete_fields}


class PreparedTests(AnnotatorTestCase):
    def setUp(self) -> None:
        super().setUp()
        prepared_module._BUILT.clear()
        Study.objects.filter(pk=self.study.pk).update(config={"note": "ü", "nested": [1, 2.5, None]})

    def _by_tokens(self, count: int) -> Prepared[Annotator]:
        placeholders = [f"t{i}" for i in range(count)]
        return Prepared.of(Annotator.objects.select_related("study").filter(token__in=placeholders).order_by("pk"), placeholders)

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
        query = Prepared.of(Assignment.objects.filter(annotator_id=-1).annotate(answer_id=F("preference__id")).order_by("position"), [-1])
        got = query.fetch([self.alice.pk])
        expected = list(self.alice.assignments.annotate(answer_id=F("preference__id")).order_by("position"))
        self.assertEqual([(_fields(a), a.answer_id) for a in got], [(_fields(a), a.answer_id) for a in expected])
        self.assertEqual(len(got), self.study.items_per_annotator)

    def test_no_rows_and_unknown_values(self) -> None:
        self.assertEqual(self._by_tokens(1).fetch(["no such token"]), [])
        self.assertEqual(self._by_tokens(1).fetch(["' OR 1=1 --"]), [])  # a value, never SQL

    def test_values_come_in_the_placeholders_order_whatever_the_sqls(self) -> None:
        query = Prepared.of(Annotator.objects.filter(token="t", pseudonym="p").order_by(), ["p", "t"])
        self.assertEqual([a.pk for a in query.fetch([self.alice.pseudonym, self.alice.token])], [self.alice.pk])
        self.assertEqual(query.fetch([self.alice.token, self.alice.pseudonym]), [])

    def test_parameters_that_are_not_the_placeholders_are_refused(self) -> None:
        with self.assertRaisesRegex(ValueError, "not its placeholders"):
            Prepared.of(Annotator.objects.filter(token="a", status="active"), ["a"])  # 'active' would be frozen in
        with self.assertRaisesRegex(ValueError, "not its placeholders"):
            Prepared.of(Annotator.objects.filter(token="a"), ["b"])
        with self.assertRaisesRegex(ValueError, "not its placeholders"):
            Prepared.of(Annotator.objects.filter(token="a", pseudonym="a"), ["a", "a"])  # placeholders must be distinct

    def test_built_once_per_connection_and_key(self) -> None:
        calls = []

        def build() -> Prepared[Annotator]:
            calls.append(1)
            return self._by_tokens(1)

        for _ in range(3):
            self.assertEqual(prepared("k", build).fetch([self.alice.token])[0].pk, self.alice.pk)
        prepared("other key", build)
        self.assertEqual(len(calls), 2)
        self.assertIn(connections["default"], prepared_module._BUILT)

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
