"""Thin views; the logic lives in ``studyapp.services``."""
from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render


def home(request: HttpRequest) -> HttpResponse:
    """Landing page: what the platform is and where to go next."""
    return render(request, "studyapp/home.html")
