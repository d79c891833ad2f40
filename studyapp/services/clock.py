"""The one clock of the services: time is injected (``now=...``) so tests need no sleeping.

:func:`simulated` sets the time every service reads while it is active (in this thread or task
only): the annotator simulator (``services.rehearsal.simulation``) drives the real views with it, so
decision times, leases and quality control see simulated time, not the machine's.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import datetime

from django.utils import timezone

_simulated: ContextVar[datetime | None] = ContextVar("studyapp_simulated_now", default=None)


def now_or(now: datetime | None) -> datetime:
    """``now`` when given, else the simulated time when one is set, else the current time (timezone-aware)."""
    if now is not None:
        return now
    simulated = _simulated.get()
    return simulated if simulated is not None else timezone.now()


@contextmanager
def simulated(at: datetime) -> Iterator[None]:
    """Within the block, services that are not given ``now`` read ``at`` (timezone-aware)."""
    if timezone.is_naive(at):
        raise ValueError("the simulated time must be timezone-aware")
    token = _simulated.set(at)
    try:
        yield
    finally:
        _simulated.reset(token)
