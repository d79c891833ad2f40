"""Thin views; the logic lives in ``studyapp.services``."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from studyapp.models import Study
from studyapp.services.assignment import capacity


def home(request: HttpRequest) -> HttpResponse:
    """Landing page: what the platform is and where to go next."""
    return render(request, "studyapp/home.html")


def study_entry(request: HttpRequest, slug: str) -> HttpResponse:
    """Where annotators arrive (``/s/<slug>/``). For now: the study and its room; the annotator pages come next."""
    study = get_object_or_404(Study, slug=slug)
    return render(request, "studyapp/study_entry.html", {"study": study, "capacity": capacity(study)})
