"""A deadline, kept by the client, on every wait for PostgreSQL's answer.

PostgreSQL's ``statement_timeout`` and ``lock_timeout`` (settings.py) cancel a statement that runs or
waits for a lock too long, but only a running server can cancel. A frozen server (stopped process, hung
disk, paused machine) keeps the connection open and its kernel acknowledges every packet, so TCP
keepalives and ``tcp_user_timeout`` notice nothing and a worker would wait until gunicorn kills it.

Here each wait of a Django connection for the server (a query and its rows, a commit or rollback, the
health check's ``SELECT 1``) gives up after ``settings.STUDYAPP_DB_WAIT_SECONDS`` (the statement timeout
plus one second: a running server has answered by then): the connection is closed, its state being
unknown, and :class:`DatabaseNotAnswering` is raised, an ``OperationalError``, which the error page
answers with 503 and Retry-After (``views.site.server_error``). psycopg's ``Connection.wait`` takes the
timeout (psycopg 3.2 and later); with an older psycopg this module steps aside and says so once.

A server that did not answer (this deadline, or the connect timeout) will hardly answer the next
request either: for ``STUDYAPP_DB_PAUSE_SECONDS`` the process then answers 503 at once without trying
(:func:`paused`, ``middleware.DatabasePauseMiddleware``), so requests queued behind a worker do not
each wait seconds; the first request after the pause tries again.
"""

from __future__ import annotations

import functools
import inspect
import time
from typing import Any

from django.conf import settings
from django.db import OperationalError
from django.db.backends.base.base import BaseDatabaseWrapper

from studyapp.django_internals import step_aside


class DatabaseNotAnswering(OperationalError):
    """PostgreSQL did not answer within ``STUDYAPP_DB_WAIT_SECONDS``; the connection was closed."""


_paused_until = 0.0  # monotonic time until which this process does not try the database


def pause() -> None:
    """The database did not answer: do not try it again in this process for ``STUDYAPP_DB_PAUSE_SECONDS``."""
    global _paused_until
    _paused_until = time.monotonic() + settings.STUDYAPP_DB_PAUSE_SECONDS


def paused() -> bool:
    return _paused_until > 0.0 and time.monotonic() < _paused_until


def not_answering(error: BaseException | None) -> bool:
    """Is ``error`` a database that did not answer at all (this deadline, or psycopg's connect timeout)?"""
    return isinstance(error, DatabaseNotAnswering) or (isinstance(error, OperationalError) and "timeout expired" in str(error))


@functools.cache
def deadline_connection_class() -> type | None:
    """psycopg's Connection with a deadline on :meth:`wait`; None (after one warning) when psycopg lacks
    what it needs (``Connection.wait(timeout=)`` and ``errors._WaitTimeout``)."""
    import psycopg
    from psycopg import errors

    wait_timeout = getattr(errors, "_WaitTimeout", None)
    problem = ""
    if wait_timeout is None or "timeout" not in inspect.signature(psycopg.Connection.wait).parameters:
        problem = f"psycopg {psycopg.__version__} has no Connection.wait(timeout=)"

    if step_aside(problem, "no client-side deadline on PostgreSQL waits", __name__):
        return None

    class DeadlineConnection(psycopg.Connection):
        __slots__ = ()  # the same layout as psycopg.Connection, so a connection's class can be swapped

        def wait(self, gen: Any, interval: float = 0.1, timeout: float | None = None) -> Any:
            seconds = settings.STUDYAPP_DB_WAIT_SECONDS
            try:
                return super().wait(gen, interval=interval, timeout=timeout if timeout is not None else seconds)
            except wait_timeout:
                self.close()  # mid-protocol: nothing more can be read or sent on it
                pause()
                raise DatabaseNotAnswering(f"the database did not answer within {seconds} s") from None

    return DeadlineConnection


def add_deadline(sender: Any, connection: BaseDatabaseWrapper, **kwargs: Any) -> None:
    """``connection_created`` receiver: give a new PostgreSQL connection the deadline (when one is set)."""
    if connection.vendor != "postgresql" or not settings.STUDYAPP_DB_WAIT_SECONDS:
        return
    import psycopg

    raw = connection.connection
    cls = deadline_connection_class()
    if cls is not None and type(raw) is psycopg.Connection:
        raw.__class__ = cls
