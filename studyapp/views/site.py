"""The landing page and the friendly error pages (never a stack trace for participants)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render

from studyapp.models import Study
from studyapp.services.rehearsal.demo import STUDY as DEMO_STUDY


def home(request: HttpRequest) -> HttpResponse:
    """Landing page: what the platform is and where to go next."""
    return render(request, "studyapp/home.html", {"demo": Study.objects.filter(name=DEMO_STUDY).first()})


def wants_json(request: HttpRequest) -> bool:
    return "application/json" in request.headers.get("Accept", "")


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    """CSRF_FAILURE_VIEW: a stale or missing token (cookies blocked, a page left open for days)."""
    message = "Your page was open too long or your browser blocks cookies. Please reload the page and try again."
    if wants_json(request):
        return JsonResponse({"error": "csrf", "message": message}, status=403)
    context = {"title": "Please reload the page", "paragraphs": [message]}
    return render(request, "studyapp/annotator/message.html", context, status=403)
