"""Which platform may show a participant's page in its frame (MTurk's ExternalQuestion), and the
cookies such a page needs.

Every page refuses framing (``X-Frame-Options: DENY``, CSP ``frame-ancestors 'none'``) except a
study page of a participant whose platform declares :attr:`~studyapp.services.platforms.base.Platform.frame_ancestors`: the
link carries that platform's parameters (the arrival, MTurk's preview), or this browser's pending
arrival or annotator in the study came from it. Only those responses list the platform's origins.

In a frame on another site the browser sends only ``SameSite=None; Secure`` cookies, so those
responses mark the session and CSRF cookies so (HTTPS only: MTurk requires an https ExternalURL).
Every other protection stays: the CSRF token is still checked on each post, the session still
binds one annotator, and the participant's own pages elsewhere keep ``SameSite=Lax``
(docs/annotator.md#security).
"""

from __future__ import annotations

from http.cookies import Morsel

from django.conf import settings
from django.http import HttpRequest, HttpResponse

from studyapp.services.participation import sessions


class PartitionedMorsel(Morsel):
    """A cookie with the ``Partitioned`` attribute (CHIPS; Python's ``http.cookies`` knows it only from 3.14)."""

    def OutputString(self, attrs: list[str] | None = None) -> str:  # noqa: N802 (Morsel's name)
        return super().OutputString(attrs) + "; Partitioned"


PARTICIPANT_ROUTE = "s/<slug:slug>/"  # where the participant pages live (studyapp/urls.py); staff pages never framed


def frame_ancestors(request: HttpRequest, from_session: bool = True) -> tuple[str, ...]:
    """The origins that may frame the response to ``request`` (empty: none may); without ``from_session``
    only the link's parameters count (no database query: the error pages)."""
    match = getattr(request, "resolver_match", None)
    if match is None or not (match.route or "").startswith(PARTICIPANT_ROUTE) or "slug" not in match.kwargs:
        return ()
    platform = sessions.platform_of(request, match.kwargs["slug"], from_session=from_session)
    return tuple(platform.frame_ancestors) if platform is not None else ()


def allow_framing(response: HttpResponse, origins: tuple[str, ...], policy: str) -> None:
    """Let ``origins`` frame ``response``: no X-Frame-Options, CSP ``policy`` (with those frame-ancestors),
    and the cookies it sets sent in their frame (``SameSite=None; Secure``)."""
    if "X-Frame-Options" in response.headers:
        del response.headers["X-Frame-Options"]
    if "Content-Security-Policy" in response.headers:
        response.headers["Content-Security-Policy"] = policy
    for name in (settings.SESSION_COOKIE_NAME, settings.CSRF_COOKIE_NAME):
        if name in response.cookies:
            morsel = PartitionedMorsel()
            morsel.update(response.cookies[name])
            morsel.set(name, response.cookies[name].value, response.cookies[name].coded_value)
            morsel["samesite"], morsel["secure"] = "None", True
            dict.__setitem__(response.cookies, name, morsel)
