"""pg_timestamps: PostgreSQL timestamps through psycopg's C loader equal what Django's own loader gives."""

from __future__ import annotations

from datetime import UTC

import pytest
from django.db import connection

from studyapp.models import Annotator
from studyapp.pg_timestamps import _utc_c_loader
from tests.studyapp.annotator_base import AnnotatorTestCase

VALUES = [
    "2026-11-24 03:05:06.123456+00",
    "2026-11-24 03:05:06+00",
    "2026-11-24 03:05:06.1+02:30",
    "0001-01-01 00:00:00+00",
    "9999-12-31 23:59:59.999999+00",
    "2024-02-29 12:00:00.000001-11",
]


@pytest.mark.skipif(connection.vendor != "postgresql", reason="a PostgreSQL loader (the PostgreSQL run covers it)")
class CLoaderTests(AnnotatorTestCase):
    def _read(self, loader: type | None) -> list:
        from django.db.backends.postgresql.psycopg_any import register_tzloader

        with connection.cursor() as cursor:
            raw = cursor.cursor
            if loader is None:
                register_tzloader(UTC, raw)  # Django's own loader, on this cursor only
            else:
                raw.adapters.register_loader("timestamptz", loader)
            raw.execute("SELECT " + ", ".join(f"'{v}'::timestamptz" for v in VALUES) + ", NULL::timestamptz")
            return list(raw.fetchone())

    def test_connections_use_it_and_values_equal_djangos(self) -> None:
        connection.ensure_connection()
        loader = _utc_c_loader()
        self.assertIsNotNone(loader, "psycopg[binary] is installed: its C loader should be found")
        self.assertIs(connection.connection.adapters.get_loader(1184, 0), loader)
        fast, django = self._read(loader), self._read(None)
        self.assertEqual(fast, django)
        self.assertIsNone(fast[-1])
        for value in fast[:-1]:
            self.assertIs(value.tzinfo, UTC)

    def test_orm_reads_aware_utc_datetimes(self) -> None:
        got = Annotator.objects.get(pk=self.alice.pk)
        self.assertEqual(got.consented_at, self.alice.consented_at)
        self.assertIs(got.consented_at.tzinfo, UTC)
