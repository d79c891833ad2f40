"""A strict Content-Security-Policy on every page: scripts, styles, images and requests from this site only.

No inline script or style is allowed (no ``'unsafe-inline'``), so injected markup cannot run; pages
keep their code in static files and pass data in ``data-`` attributes. Forms may only post here and
to the submit addresses of the registered platforms (``services.platforms``: MTurk's, for the
completion page of an MTurk assignment). Django's own debug pages
(``DJANGO_DEBUG=1``, error responses) are left without the header: they rely on inline code.
"""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.contrib.auth.middleware import AuthenticationMiddleware
from django.http import HttpRequest, HttpResponse
from django.utils.functional import SimpleLazyObject

from studyapp.services import platforms


def policy(frame_ancestors: tuple[str, ...] = ()) -> str:
    """The header's value; ``form-action`` lists the hosts the registered platforms' completion forms post to,
    ``frame-ancestors`` the origins that may frame this response (none unless given)."""
    return "; ".join(
        [
            "default-src 'self'",
            "script-src 'self'",
            "style-src 'self'",
            "img-src 'self' data:",
            "font-src 'self'",
            "connect-src 'self'",
            " ".join(["form-action 'self'", *platforms.form_action_hosts()]),
            "frame-ancestors " + (" ".join(frame_ancestors) if frame_ancestors else "'none'"),
            "base-uri 'none'",
            "object-src 'none'",
        ]
    )


POLICY = policy()  # with the platforms registered at start-up


class ContentSecurityPolicyMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if not (settings.DEBUG and response.status_code >= 400):
            response.headers.setdefault("Content-Security-Policy", policy())
        return response


class PlatformFrameMiddleware:
    """A participant page that their platform shows in its frame (MTurk) may be framed by that platform's
    origins only (``services.participation.framing``); every other response keeps ``frame-ancestors 'none'``
    and ``X-Frame-Options: DENY``. Placed before the session and CSRF middleware, so it sees their cookies."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        from studyapp.services.participation import framing

        response = self.get_response(request)
        # An error page may not query the database again (it is why the request failed, and a second wait
        # could outlast the worker timeout): it is framed on the link's parameters alone.
        origins = framing.frame_ancestors(request, from_session=response.status_code < 500)
        if origins:
            framing.allow_framing(response, origins, policy(origins))
        return response


class StaffSessionMiddleware(AuthenticationMiddleware):
    """Django's ``AuthenticationMiddleware`` (in its place), and signed-in staff stay signed in only while their
    server-side session lives (services.access.staff_sessions).

    Checked when the request's user is first read (``request.user`` is looked up lazily, as Django's is): a
    request that never asks who is signed in (a participant page, the health check) acts for nobody, so it
    neither decodes the session for it nor queries the staff session. One middleware, not two: each costs
    every request its own calls."""

    def process_request(self, request: HttpRequest) -> None:
        super().process_request(request)
        unchecked = request.user
        request.user = SimpleLazyObject(lambda: _checked_user(request, unchecked))


def _checked_user(request: HttpRequest, unchecked: object) -> object:
    """The request's user once ``staff_sessions.check`` has run (anonymous after it signed them out)."""
    from studyapp.services.access import staff_sessions

    request.user = unchecked  # what check() and logout() read and replace
    staff_sessions.check(request)
    return request.user


class RequestSizeMiddleware:
    """Refuse a request body over ``STUDYAPP_MAX_BODY_BYTES`` from its Content-Length, before anything reads
    it (413), and a body of unknown length (chunked, 411): nothing is spooled to disk. The reverse proxy
    should refuse them first (nginx ``client_max_body_size``); this holds without it."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        limit = settings.STUDYAPP_MAX_BODY_BYTES
        raw = request.META.get("CONTENT_LENGTH") or ""
        if raw:
            try:
                length = int(raw)
            except ValueError:
                return HttpResponse("Bad Content-Length.\n", status=400, content_type="text/plain")
            if length > limit:
                return HttpResponse(f"Request body too large (limit {limit} bytes).\n", status=413, content_type="text/plain")
        elif "chunked" in request.META.get("HTTP_TRANSFER_ENCODING", "").lower():
            return HttpResponse("A request body needs a Content-Length.\n", status=411, content_type="text/plain")
        return self.get_response(request)


class DatabasePauseMiddleware:
    """While this process pauses its database tries (the database just did not answer: ``pg_deadline.paused``),
    every page answers 503 with Retry-After at once instead of waiting seconds for the same silence.
    Placed after WhiteNoise: static files need no database."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        from studyapp import pg_deadline

        if pg_deadline.paused():
            from studyapp.views.site import error_response

            return error_response(request, unavailable=True)
        return self.get_response(request)
