"""The landing page and the friendly error pages (never a stack trace for participants)."""

from __future__ import annotations

import logging
import sys

from django.conf import settings
from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.template import loader
from django.utils.translation import gettext

from studyapp import pg_deadline
from studyapp.models import Study


def home(request: HttpRequest) -> HttpResponse:
    """Landing page: what the platform is and where to go next (the demo study, the staff pages, the
    simulated demo study's report when ``make run`` made them)."""
    # imported here, not at start: docs/contributing.md#lazy-evaluation-imports
    from studyapp.services.rehearsal.demo import SIMULATED_STUDY
    from studyapp.services.rehearsal.demo import STUDY as DEMO_STUDY

    demos = {s.name: s for s in Study.objects.filter(name__in=[DEMO_STUDY, SIMULATED_STUDY]).only("name", "slug")}
    return render(request, "studyapp/home.html", {"demo": demos.get(DEMO_STUDY), "simulated": demos.get(SIMULATED_STUDY)})


def wants_json(request: HttpRequest) -> bool:
    return "application/json" in request.headers.get("Accept", "")


logger = logging.getLogger(__name__)


def server_error(request: HttpRequest) -> HttpResponse:
    """handler500: a database that does not answer (statement or connection timeout, server gone, disk
    full) is "try again shortly" (503 with Retry-After), anything else "something went wrong" (500);
    JSON for the page script's requests, a static page otherwise (no database needed to draw either).
    A database that did not answer at all pauses this process's tries (``pg_deadline.pause``)."""
    error = sys.exc_info()[1]
    if pg_deadline.not_answering(error):
        pg_deadline.pause()
    return error_response(request, unavailable=isinstance(error, OperationalError | InterfaceError))


def error_response(request: HttpRequest, *, unavailable: bool) -> HttpResponse:
    """The 503 ("try again shortly", Retry-After) or 500 answer, JSON for the page script's requests."""
    status = 503 if unavailable else 500
    message = (
        "The server is busy. Your previous answers are saved; please try again in a moment."
        if unavailable
        else "Sorry, the server could not answer. Your previous answers are saved. Please reload the page in a moment."
    )
    if wants_json(request):
        response: HttpResponse = JsonResponse({"error": "unavailable" if unavailable else "server", "message": message}, status=status)
    else:
        response = HttpResponse(loader.get_template(f"{status}.html").render(), status=status)
    if unavailable:
        response["Retry-After"] = str(settings.STUDYAPP_RETRY_AFTER_SECONDS)
    return response


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    """CSRF_FAILURE_VIEW: a stale or missing token (cookies blocked, a page left open for days)."""
    if wants_json(request):
        message = gettext("Your page was open too long or your browser blocks cookies. Please reload the page and try again.")
        return JsonResponse({"error": "csrf", "message": message}, status=403)
    return render(request, "studyapp/annotator/messages/csrf.html", {"kind": "csrf"}, status=403)
