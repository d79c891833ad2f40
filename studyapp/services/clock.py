"""The one clock of the services: time is injected (``now=...``) so tests need no sleeping."""

from __future__ import annotations

from datetime import datetime

from django.utils import timezone


def now_or(now: datetime | None) -> datetime:
    """``now`` when given, else the current time (timezone-aware)."""
    return now if now is not None else timezone.now()
