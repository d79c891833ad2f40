"""pg_timestamps: PostgreSQL timestamps through psycopg's C loader equal what Django's own loader gives.

The tests open their own Django connection to the PostgreSQL server of ``STUDYAPP_TEST_POSTGRES_URL``
(whatever database the suite runs on), so they run in the SQLite run as well; without that server
they skip, except in CI, where they fail (``.ci/run`` starts PostgreSQL and sets the variable).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC
from unittest import mock

import dj_database_url
import pytest
from django.db import connections
from django.db.backends.postgresql.psycopg_any import register_tzloader
from psycopg.pq import Format

from studyapp.pg_timestamps import _django_loader_only, _utc_c_loader, django_internals_problem, use_c_loader
from tests.studyapp.test_postgresql import postgres_url

TIMESTAMPTZ = 1184
VALUES = [
    "2026-11-24 03:05:06.123456+00",
    "2026-11-24 03:05:06+00",
    "2026-11-24 03:05:06.1+02:30",
    "0001-01-01 00:00:00+00",
    "9999-12-31 23:59:59.999999+00",
    "2024-02-29 12:00:00.000001-11",
]


@pytest.fixture
def pg(django_db_blocker) -> Iterator:
    """A fresh Django connection to the test PostgreSQL server (its connection_created signal fires).

    Its own database access, beside the suite's test database: pytest-django's blocker is lifted for it.
    """
    from django.db.backends.postgresql.base import DatabaseWrapper

    url = postgres_url()

    settings = connections.configure_settings({"default": dj_database_url.parse(url)})["default"]
    wrapper = DatabaseWrapper(settings, alias="pg_timestamps")
    with django_db_blocker.unblock():
        wrapper.ensure_connection()
        yield wrapper
        wrapper.close()


def _read(wrapper, loader: type | None) -> list:
    """VALUES and a NULL read with ``loader`` (None: Django's own loader), on one cursor."""
    with wrapper.cursor() as cursor:
        raw = cursor.cursor
        if loader is None:
            register_tzloader(UTC, raw)
        else:
            raw.adapters.register_loader("timestamptz", loader)
        raw.execute("SELECT " + ", ".join(f"'{v}'::timestamptz" for v in VALUES) + ", NULL::timestamptz")
        return list(raw.fetchone())


def test_a_new_connection_uses_it_and_its_values_equal_djangos(pg) -> None:
    loader = _utc_c_loader()
    assert loader is not None, "psycopg[binary] is installed: its C loader should be found"
    assert pg.connection.adapters.get_loader(TIMESTAMPTZ, Format.TEXT) is loader
    fast, django = _read(pg, loader), _read(pg, None)
    assert fast == django
    assert fast[-1] is None
    assert all(value.tzinfo is UTC for value in fast[:-1])
    with pg.cursor() as cursor:  # through Django's cursor, as the ORM reads
        cursor.execute("SELECT %s::timestamptz", [VALUES[0]])
        assert cursor.fetchone()[0] == django[0]


def test_a_session_in_another_time_zone_keeps_djangos_loader(pg) -> None:
    register_tzloader(UTC, pg.connection)  # Django's loader again on this connection
    before = pg.connection.adapters.get_loader(TIMESTAMPTZ, Format.TEXT)
    with pg.cursor() as cursor:
        cursor.execute("SET TIME ZONE 'Europe/Paris'")
    use_c_loader(None, pg)
    assert pg.connection.adapters.get_loader(TIMESTAMPTZ, Format.TEXT) is before


class _FakeConnection:
    """What :func:`use_c_loader` reads of a new UTC PostgreSQL connection (no server needed)."""

    vendor = "postgresql"
    timezone = UTC

    def __init__(self) -> None:
        self.connection = mock.Mock()
        self.connection.info.parameter_status.return_value = "UTC"


@pytest.fixture
def fresh_check() -> Iterator[None]:
    _django_loader_only.cache_clear()
    yield
    _django_loader_only.cache_clear()


def test_the_current_django_is_what_the_c_loader_expects(fresh_check) -> None:
    assert django_internals_problem() == ""
    connection = _FakeConnection()
    use_c_loader(None, connection)
    registered = connection.connection.adapters.register_loader.call_args_list
    assert registered == ([mock.call("timestamptz", _utc_c_loader())] if _utc_c_loader() is not None else [])


def test_a_changed_backend_keeps_djangos_loader_with_one_warning(fresh_check) -> None:
    from django.db.backends.postgresql.base import DatabaseWrapper

    def create_cursor(self, name=None):  # a newer Django that no longer compares the loader's time zone
        return None

    with mock.patch.object(DatabaseWrapper, "create_cursor", create_cursor):
        assert django_internals_problem() == "DatabaseWrapper.create_cursor no longer compares the loader's timezone"
        first, second = _FakeConnection(), _FakeConnection()
        with pytest.warns(RuntimeWarning, match="PostgreSQL timestamps keep Django's loader") as caught:
            use_c_loader(None, first)
            use_c_loader(None, second)
    assert len(caught) == 1
    first.connection.adapters.register_loader.assert_not_called()
    second.connection.adapters.register_loader.assert_not_called()
