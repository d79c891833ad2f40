"""Per-process caches of what item pages show, each entry kept a short time.

An item page draws the query, the information need(s) and two result lists. They come from a few
hundred (topic, run) pages that thousands of item views share, and a study's design never changes, so
each server process keeps what it read and drew for ``STUDYAPP_DISPLAY_CACHE_SECONDS`` (60; 0 = off,
always off with ``DJANGO_DEBUG=1``). An edit in the admin (a document's title, a subtopic's text) shows
on item pages within that time. Each cache holds at most ``size`` entries; the oldest go first.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

from django.conf import settings

T = TypeVar("T")

_ALL: list[TimedCache | DrawnCache] = []


class TimedCache(Generic[T]):
    """A dict of computed values that live ``STUDYAPP_DISPLAY_CACHE_SECONDS`` each, at most ``size`` of them."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._entries: dict[Hashable, tuple[float, T]] = {}
        _ALL.append(self)

    def get(self, key: Hashable, compute: Callable[[], T]) -> T:
        """The value of ``key``: the kept one while it is fresh, else ``compute()`` (then kept)."""
        entry = self.peek(key)
        if entry is not None:
            return entry
        value = compute()
        self.put(key, value)
        return value

    def peek(self, key: Hashable) -> T | None:
        """The kept value of ``key`` while it is fresh, else None (always None when the cache is off)."""
        entry = self._entries.get(key)
        if entry is not None and entry[0] > time.monotonic() and _enabled():
            return entry[1]
        return None

    def put(self, key: Hashable, value: T) -> None:
        """Keep ``value`` for ``key`` (nothing is kept when the cache is off)."""
        if not _enabled():
            return
        self._entries.pop(key, None)  # re-inserted last: the dict's order is the entries' age
        self._entries[key] = (time.monotonic() + settings.STUDYAPP_DISPLAY_CACHE_SECONDS, value)
        while len(self._entries) > self.size:
            del self._entries[next(iter(self._entries))]

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        self._entries.clear()


class DrawnCache(Generic[T]):
    """Values drawn from their inputs, looked up by the inputs themselves (at most ``size``; the oldest go first).

    An input that changes is a new key, so what is kept can never be stale: no time limit. Item pages draw
    a result list again when its :class:`TimedCache` entry ran out, after reading its lines again (an edit
    in the admin shows); an unchanged list (the common case) is then not drawn a second time. Off when the
    display caches are off (``DJANGO_DEBUG=1``: template edits show at once).
    """

    def __init__(self, size: int) -> None:
        self.size = size
        self._entries: dict[Hashable, T] = {}
        _ALL.append(self)

    def get(self, key: Hashable, draw: Callable[[], T]) -> T:
        """The value drawn before for ``key``, else ``draw()`` (then kept)."""
        if not _enabled():
            return draw()
        value = self._entries.get(key)
        if value is None:
            value = draw()
            self._entries[key] = value
            while len(self._entries) > self.size:
                del self._entries[next(iter(self._entries))]
        return value

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        self._entries.clear()


def _enabled() -> bool:
    return settings.STUDYAPP_DISPLAY_CACHE_SECONDS > 0 and not settings.DEBUG


def clear_all() -> None:
    """Forget every cached entry of this process (tests; a command that changed display data in bulk)."""
    for cache in _ALL:
        cache.clear()
