"""Counting attempts per client in the cache: staff sign-in failures, and newcomers arriving at a study.

A fixed window per key: the first counted attempt opens a window of ``window`` seconds; once
``limit`` attempts were counted in it, :func:`wait_seconds` says how long is left. The counts live in
Django's cache (see ``settings.CACHES``); keys are hashed, so user names and addresses are not kept
in clear text. The window's end is the counter's expiry: the database cache reads it back
(``cache_backends.DatabaseCache.expires_at``), so opening a window is one write; other caches keep it
in a second entry (``<key>:until``).
"""

from __future__ import annotations

import hashlib
import ipaddress
import math
import time
import unicodedata
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import cache


@dataclass(frozen=True)
class Limit:
    """At most ``limit`` counted attempts per ``window`` seconds for each key of ``name``."""

    name: str
    limit: int
    window: int


def _key(limit: Limit, who: str) -> str:
    return f"throttle:{limit.name}:{hashlib.sha256(who.encode()).hexdigest()[:32]}"


def _open_window(key: str, limit: Limit) -> None:
    """Note when the window just opened at ``key`` ends, unless the cache can tell a key's expiry itself."""
    if not hasattr(cache, "expires_at"):
        cache.set(key + ":until", time.time() + limit.window, timeout=limit.window)


def count(limit: Limit, who: str) -> int:
    """Count one attempt of ``who``; returns the attempts counted in the current window, this one included."""
    key = _key(limit, who)
    if cache.add(key, 1, timeout=limit.window):
        _open_window(key, limit)
        return 1
    try:
        return cache.incr(key)
    except ValueError:  # the window ended between add and incr: this attempt opens a new one
        cache.set(key, 1, timeout=limit.window)
        _open_window(key, limit)
        return 1


def wait_seconds(limit: Limit, who: str) -> int:
    """0 while ``who`` is under the limit, else the seconds until the window ends (at least 1)."""
    key = _key(limit, who)
    if (cache.get(key) or 0) < limit.limit:
        return 0
    expires_at = getattr(cache, "expires_at", None)
    until = (expires_at(key) if expires_at is not None else cache.get(key + ":until")) or time.time() + limit.window
    return max(1, math.ceil(until - time.time()))


def reset(limit: Limit, who: str) -> None:
    cache.delete_many([_key(limit, who), _key(limit, who) + ":until"])


def client_address(meta: dict) -> str:
    """The client's IP address: ``REMOTE_ADDR``, or behind ``STUDYAPP_PROXY_HOPS`` reverse proxies the
    address the outermost of them put into ``X-Forwarded-For`` (entries further left can be forged)."""
    hops = settings.STUDYAPP_PROXY_HOPS
    forwarded = [a.strip() for a in meta.get("HTTP_X_FORWARDED_FOR", "").split(",") if a.strip()]
    if hops and len(forwarded) >= hops:
        return forwarded[-hops]
    return meta.get("REMOTE_ADDR", "") or "unknown"


def minutes(seconds: int) -> str:
    """``"1 minute"``, ``"15 minutes"``: a wait as people read it (rounded up)."""
    n = max(1, math.ceil(seconds / 60))
    return f"{n} minute{'s' if n != 1 else ''}"


# -- staff sign-in ------------------------------------------------------------------------------------


def _login_limits() -> tuple[Limit, Limit]:
    failures, window = settings.STUDYAPP_LOGIN_FAILURES, settings.STUDYAPP_LOGIN_WINDOW_SECONDS
    return Limit("login-user", failures, window), Limit("login-address", 4 * failures, window)


def login_name(username: str) -> str:
    """The user name as sign-in limits count it: Unicode NFKC (what Django's sign-in form does to the name
    before it looks the user up), then casefolded, so ``ｍember`` and ``MEMBER`` count as ``member``."""
    return unicodedata.normalize("NFKC", username).strip().casefold()


def login_attempt(username: str, address: str) -> int:
    """Count a sign-in attempt before its password is checked; 0 when it may go ahead, else the seconds until
    this user name or address may try again. Counting first (one atomic increment, ``cache.incr``) means
    parallel attempts cannot all pass a check made before any of them failed: the limit holds for them too."""
    by_user, by_address = _login_limits()
    name = login_name(username)
    if count(by_user, name) > by_user.limit or count(by_address, address) > by_address.limit:
        return max(wait_seconds(by_user, name), wait_seconds(by_address, address), 1)
    return 0


def login_succeeded(username: str, address: str) -> None:
    """A right password: the user name's failures are forgotten and the attempt does not count against the address."""
    by_user, by_address = _login_limits()
    reset(by_user, login_name(username))
    try:
        cache.decr(_key(by_address, address))
    except ValueError:  # the window ended meanwhile
        pass


# -- newcomers arriving at a study --------------------------------------------------------------------


def client_network(address: str) -> str:
    """What arrivals are counted per: an IPv4 address, or the /64 network of an IPv6 address (one
    subscriber usually holds a whole /64, so counting single IPv6 addresses would count nothing)."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip)


def arrival_wait_seconds(study_id: int, address: str) -> int:
    """Count a newcomer arriving at study ``study_id`` from ``address``: 0 when admitted, else the seconds
    until that client may start again (at most ``STUDYAPP_ARRIVALS_PER_CLIENT`` newcomers per client
    and study within ``STUDYAPP_ARRIVALS_WINDOW_SECONDS``; a limit of 0 turns the check off)."""
    per_client = settings.STUDYAPP_ARRIVALS_PER_CLIENT
    if not per_client:
        return 0
    limit = Limit("arrival", per_client, settings.STUDYAPP_ARRIVALS_WINDOW_SECONDS)
    who = f"{study_id}:{client_network(address)}"
    return wait_seconds(limit, who) if count(limit, who) > per_client else 0
