"""PostgreSQL timestamps read by psycopg's C parser: the same values as Django's loader, 10x cheaper.

Django reads every ``timestamptz`` value with a loader written in Python (it parses the text and sets
the connection's time zone): about 3 µs a value against 0.3 µs for psycopg's C loader. Item pages and
answers read about ninety timestamps each (the annotator's sequence), which made it 6% of the server's
CPU under load. When Django's connection time zone is UTC (``USE_TZ`` with the default database
``TIME_ZONE``) and the session's is too (Django sets it on connecting), the C loader gives equal
datetimes with the same ``datetime.timezone.utc``, so each new connection gets it, wrapped to carry
the ``timezone`` attribute Django's cursors compare. Anything else keeps Django's loader.

That relies on how Django's PostgreSQL backend works inside (its ``BaseTzLoader.timezone``, compared
by ``DatabaseWrapper.create_cursor``); :func:`django_internals_problem` checks it once per process,
and when it differs (a Django upgrade) every connection keeps Django's loader, with one warning.
"""

from __future__ import annotations

import inspect
from datetime import UTC
from functools import cache
from typing import Any

from django.db.backends.base.base import BaseDatabaseWrapper

from studyapp.django_internals import step_aside


def django_internals_problem() -> str:
    """What differs in Django's PostgreSQL backend from what the C loader relies on ('' when nothing does)."""
    try:
        from django.db.backends.postgresql import base, psycopg_any

        if "timezone" not in vars(psycopg_any.BaseTzLoader):
            return "psycopg_any.BaseTzLoader has no timezone attribute"
        if "tzloader.timezone" not in inspect.getsource(base.DatabaseWrapper.create_cursor):
            return "DatabaseWrapper.create_cursor no longer compares the loader's timezone"
        if not hasattr(base.DatabaseWrapper, "timezone"):
            return "DatabaseWrapper has no timezone"
    except (AttributeError, ImportError, OSError, TypeError) as exc:
        return f"Django's PostgreSQL backend cannot be read ({exc})"
    return ""


@cache
def _django_loader_only() -> bool:
    """Is Django's backend not what this module expects? Checked once per process (warns once when so)."""
    return step_aside(django_internals_problem(), "PostgreSQL timestamps keep Django's loader", "studyapp/pg_timestamps.py")


@cache
def _utc_c_loader() -> type | None:
    """psycopg's C text loader of timestamptz wrapped for Django, or None without the compiled extension."""
    import psycopg
    from psycopg.adapt import Loader
    from psycopg.pq import Format

    c_loader = psycopg.adapters.get_loader(psycopg.adapters.types["timestamptz"].oid, Format.TEXT)
    if c_loader is None or c_loader.__module__.startswith("psycopg."):
        return None

    class UtcTimestamptzLoader(Loader):
        """Delegates to the C loader; ``timezone`` tells Django's cursors that no override is needed."""

        timezone = UTC

        def __init__(self, oid: int, context: Any = None) -> None:
            super().__init__(oid, context)
            self._load = c_loader(oid, context).load

        def load(self, data: Any) -> Any:
            return self._load(data)

    return UtcTimestamptzLoader


def use_c_loader(sender: Any, connection: BaseDatabaseWrapper, **kwargs: Any) -> None:
    """``connection_created`` receiver: register the C loader on a UTC PostgreSQL connection."""
    if connection.vendor != "postgresql" or connection.timezone is not UTC or _django_loader_only():
        return
    raw = connection.connection
    loader = _utc_c_loader()
    if loader is not None and raw.info.parameter_status("TimeZone") == "UTC":
        raw.adapters.register_loader("timestamptz", loader)
