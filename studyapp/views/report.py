"""The study report for staff: the page, its figures and its CSV tables (the study's team only).

The report is computed once per state of the study and cached: the cache key holds the answer
count, the last answer and the exclusions (``services.analysis.report.fingerprint``), so a reload is cheap
and a new answer or a quality-control decision gives a fresh report.
"""

from __future__ import annotations

from django.contrib.admin.views.decorators import staff_member_required
from django.core.cache import cache
from django.http import Http404, HttpRequest, HttpResponse
from django.urls import reverse

from studyapp.models import Study
from studyapp.services.access.teams import member_study
from studyapp.services.data.file_names import safe_name

CACHE_SECONDS = 24 * 3600
FIGURE_TYPES = {"svg": "image/svg+xml", "png": "image/png"}


def cached_report(study: Study) -> dict:
    """The rendered page, the CSV tables and what the figures are drawn from, for ``study`` in its
    current state (computed at most once per state)."""
    # imported here, not at start: docs/contributing.md#lazy-evaluation-imports
    from evaluation.report.tables import render_table
    from studyapp.services.analysis.report import build_report, figure_sources, fingerprint, render_html

    key = f"study-report:{study.pk}:{fingerprint(study)}"
    entry = cache.get(key)
    if entry is None:
        report = build_report(study)
        html = render_html(
            report, standalone=False, figure_url=lambda stem, fmt: reverse("study_report_figure", args=[study.slug, stem, fmt])
        )
        agreement, power = figure_sources(report)
        entry = {
            "key": key,
            "html": html,
            "tables": {f"{name}.csv": render_table(table, "csv") for name, table in report.tables.items()},
            "agreement": agreement,
            "power": power,
        }
        cache.set(key, entry, CACHE_SECONDS)
    return entry


@staff_member_required
def page(request: HttpRequest, slug: str) -> HttpResponse:
    study = member_study(request.user, slug)
    return HttpResponse(cached_report(study)["html"])


@staff_member_required
def figure(request: HttpRequest, slug: str, stem: str, fmt: str) -> HttpResponse:
    """One figure, drawn on first request from the cached report and then cached itself."""
    # imported here, not at start: docs/contributing.md#lazy-evaluation-imports
    from studyapp.services.analysis.report import draw_figure

    study = member_study(request.user, slug)
    if fmt not in FIGURE_TYPES:
        raise Http404("no such figure")
    entry = cached_report(study)
    key = f"{entry['key']}:{stem}.{fmt}"
    data = cache.get(key)
    if data is None:
        try:
            data = draw_figure(stem, entry["agreement"], entry["power"], fmt)
        except KeyError:
            raise Http404("no such figure") from None
        cache.set(key, data, CACHE_SECONDS)
    return HttpResponse(data, content_type=FIGURE_TYPES[fmt])


@staff_member_required
def table(request: HttpRequest, slug: str, name: str) -> HttpResponse:
    study = member_study(request.user, slug)
    text = cached_report(study)["tables"].get(name)
    if text is None:
        raise Http404("no such table")
    response = HttpResponse(text, content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{safe_name(study.slug)}-{safe_name(name)}"'
    return response
