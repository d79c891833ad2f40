"""Planner statistics are refreshed after an import and a new study (PostgreSQL; nothing elsewhere)."""

from __future__ import annotations

from django.db import connection
from django.test.utils import CaptureQueriesContext

from studyapp.models import Presentation
from studyapp.services.collections.planner_stats import refresh_statistics
from tests.studyapp.base import BaseTestCase, import_toy, make_toy_study


def _analyzed(queries: list[dict]) -> list[str]:
    return [q["sql"] for q in queries if q["sql"].startswith("ANALYZE")]


class PlannerStatisticsTestCase(BaseTestCase):
    def test_a_new_study_leaves_its_presentations_counted_by_the_planner(self) -> None:
        import_toy("toy2")
        with CaptureQueriesContext(connection) as queries:
            study = make_toy_study("Second toy study", collection="toy2")
        analyzed = _analyzed(queries.captured_queries)
        if connection.vendor != "postgresql":
            self.assertEqual(analyzed, [])  # SQLite keeps no statistics that matter here
            return
        self.assertIn(f'ANALYZE "{Presentation._meta.db_table}"', analyzed)
        with connection.cursor() as cursor:
            cursor.execute("SELECT reltuples FROM pg_class WHERE relname = %s", [Presentation._meta.db_table])
            (reltuples,) = cursor.fetchone()
        # the planner now knows at least this study's rows (the setUp study's rows count too)
        self.assertGreaterEqual(reltuples, Presentation.objects.filter(study=study).count())

    def test_an_import_analyzes_the_collection_tables(self) -> None:
        with CaptureQueriesContext(connection) as queries:
            import_toy("toy3")
        analyzed = _analyzed(queries.captured_queries)
        expected = 6 if connection.vendor == "postgresql" else 0
        self.assertEqual(len(analyzed), expected, analyzed)

    def test_no_models_no_statement(self) -> None:
        with CaptureQueriesContext(connection) as queries:
            refresh_statistics()
        self.assertEqual(queries.captured_queries, [])
