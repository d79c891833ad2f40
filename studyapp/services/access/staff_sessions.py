"""Staff sessions that end on the server (models.staff.StaffSession): started at sign-in, checked on
every signed-in request, ended by signing out, by a password change and by ``STUDYAPP_STAFF_SESSION_SECONDS``
(default 8 hours; participants' sessions keep Django's two weeks)."""

from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta

from django.conf import settings
from django.contrib import auth
from django.contrib.auth import logout
from django.http import HttpRequest
from django.utils import timezone

from studyapp.models.staff import StaffSession

SESSION_KEY = "_studyapp_staff_session"


def _digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def start(request: HttpRequest, user) -> None:
    """A new server-side session for ``user`` signing in with ``request`` (the user's expired ones are dropped)."""
    now = timezone.now()
    seconds = settings.STUDYAPP_STAFF_SESSION_SECONDS
    StaffSession.objects.filter(user=user, expires_at__lte=now).delete()
    key = secrets.token_urlsafe(32)
    StaffSession.objects.create(key_digest=_digest(key), user=user, created_at=now, expires_at=now + timedelta(seconds=seconds))
    request.session[SESSION_KEY] = key
    request.session.set_expiry(seconds)  # the cookie ends with it, too


def end(request: HttpRequest) -> None:
    """Delete the server-side session of ``request`` (signing out)."""
    key = request.session.get(SESSION_KEY) if hasattr(request, "session") else None
    if key:
        StaffSession.objects.filter(key_digest=_digest(key)).delete()


def end_all(user) -> int:
    """Delete every server-side session of ``user`` (a password change); returns how many."""
    return StaffSession.objects.filter(user=user).delete()[0]


def check(request: HttpRequest) -> None:
    """Sign ``request`` out unless its server-side session exists, belongs to its user and has not expired."""
    if not hasattr(request, "session") or auth.SESSION_KEY not in request.session:
        return  # nobody signed in (every participant request): no user to look up
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return
    key = request.session.get(SESSION_KEY)
    if key and StaffSession.objects.filter(key_digest=_digest(key), user=user, expires_at__gt=timezone.now()).exists():
        return
    logout(request)
