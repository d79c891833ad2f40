"""Who is sending a study's review, and whether they are still alive: the leases of review jobs and decisions.

A worker (the job worker ``manage.py run_jobs``, or ``platform_review --apply``) is named ``host:pid``
(:func:`worker_name`). What it holds, a running :class:`~studyapp.models.ReviewJob` or a claimed
:class:`~studyapp.models.ReviewDecision`, carries that name and a time the worker refreshes every
:data:`HEARTBEAT_SECONDS` from a thread of its own (:class:`Heartbeat`), also while a platform call blocks it.
What it holds is free again as soon as (:func:`lost`)

- the holder is a process of this host that has ended (killed, crashed: :func:`is_gone`), or
- its heartbeat is older than ``STUDYAPP_JOB_STALE_SECONDS`` (30: six missed beats; a worker on another
  machine, or a machine lost).

Taking a decision over never pays twice: the "pay sent" marker is set only by the decision's current holder and
only while no payment's outcome is pending (:class:`.paying.Intent`), and a payment whose answer the dead worker
never got is asked about on the platform before anything else (:func:`.paying.ask_unknown`).
"""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Callable, Iterable
from datetime import datetime, timedelta
from pathlib import Path

from django.conf import settings
from django.db import DatabaseError, connection
from django.db.models import Q

HEARTBEAT_SECONDS = 5.0


def worker_name() -> str:
    """This process as a holder: ``host:pid``."""
    return f"{socket.gethostname()}:{os.getpid()}"


def stale_seconds(override: float | None = None) -> float:
    """How long a holder may stay silent before what it holds is taken over (``STUDYAPP_JOB_STALE_SECONDS``)."""
    return float(override if override is not None else settings.STUDYAPP_JOB_STALE_SECONDS)


def is_gone(worker: str) -> bool:
    """Is ``worker`` a process of this host that has ended? False for another host's (only its heartbeat tells)."""
    host, _, pid_text = worker.rpartition(":")
    if host != socket.gethostname() or not pid_text.isdigit():
        return False
    pid = int(pid_text)
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # a process of another user has that pid: alive
        return False
    try:  # killed but not yet reaped by its parent (a zombie): it holds nothing any more
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] == "Z"
    except (OSError, IndexError):
        return False


def gone_among(workers: Iterable[str]) -> list[str]:
    """The holders among ``workers`` whose process has ended (see :func:`is_gone`)."""
    return [w for w in set(workers) if w and is_gone(w)]


def lost(time_field: str, worker_field: str, holders: Iterable[str], now: datetime, stale: float | None = None) -> Q:
    """The rows whose holder (``worker_field``, one of ``holders``) fell silent (``time_field`` older than the stale
    bound) or has ended."""
    silent = Q(**{f"{time_field}__lt": now - timedelta(seconds=stale_seconds(stale))})
    gone = gone_among(holders)
    return silent | Q(**{f"{worker_field}__in": gone}) if gone else silent


class Heartbeat:
    """Calls ``beat`` every :data:`HEARTBEAT_SECONDS` from its own thread (and database connection) until stopped:
    ``with Heartbeat(touch): ...`` keeps what the worker holds alive while the ``with`` block blocks on a platform."""

    def __init__(self, beat: Callable[[], object], seconds: float | None = None) -> None:
        self.beat, self.seconds = beat, seconds or HEARTBEAT_SECONDS
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True, name="review-heartbeat")

    def __enter__(self) -> Heartbeat:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopped.set()
        self.thread.join(timeout=10)

    def _run(self) -> None:
        try:
            while not self.stopped.wait(self.seconds):
                try:
                    self.beat()
                except DatabaseError:  # a busy or lost database: the next beat tries again (on a new connection)
                    connection.close_if_unusable_or_obsolete()
        finally:
            if not connection.in_atomic_block:  # this thread's own connection (a test's shared one stays open)
                connection.close()
