"""The report's figures (matplotlib through ``evaluation.report.plots``), drawn from its tables.

The staff page draws a figure on its first request and caches it (``views/report.py``); the report
directory holds those of the levels asked for (:func:`studyapp.services.analysis.report.files.write_report`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from evaluation.report import plots
from studyapp.services.analysis.study_analysis import LEVELS

if TYPE_CHECKING:
    from studyapp.services.analysis.report.build import StudyReport

FIGURE_KINDS = ("metric-bars", "heatmaps")


def figure_stems(report: StudyReport, levels: list[str] | None = None) -> list[str]:
    """``metric-bars-<level>`` (Chen et al. Fig. 2 with intervals) and ``heatmaps-<level>`` (Fig. 1)
    for each of ``levels`` (default: every level with answers)."""
    levels = [level for level in (levels or LEVELS) if level in report.analysis.agreement]
    return [f"{kind}-{level}" for level in levels for kind in FIGURE_KINDS]


def draw_figure(stem: str, agreement: dict[str, pd.DataFrame], power: pd.DataFrame | None, fmt: str) -> bytes:
    """One figure of the report as PNG or SVG bytes, from the agreement tables per level and the
    discriminative power summary (what the page keeps in its cache)."""
    return draw_figures(stem, agreement, power, (fmt,))[fmt]


def draw_figures(stem: str, agreement: dict[str, pd.DataFrame], power: pd.DataFrame | None, formats: tuple[str, ...]) -> dict[str, bytes]:
    """The figure ``stem`` built once and rendered in each of ``formats`` (PNG, SVG): format -> bytes."""
    kind, _, level = stem.rpartition("-")
    if kind not in FIGURE_KINDS or level not in agreement or not set(formats) <= set(plots.FORMATS):
        raise KeyError(stem)
    table = agreement[level]
    if kind == "metric-bars":
        fig = plots.metric_bars_figure(table, power=power, intervals=True, both_mup_b=True)
    else:
        fig = plots.agreement_heatmaps_figure(table, layout="rows")
    # both lay themselves out (constrained layout; the rows heatmap sets its margins): no second, cropping pass
    rendered = plots.render_figure(fig, "figures", stem, formats=formats, tight=False)
    return {path.suffix[1:]: data for path, data in rendered}


def figure_sources(report: StudyReport) -> tuple[dict[str, pd.DataFrame], pd.DataFrame | None]:
    """What the figures are drawn from: the agreement table per level and the discriminative power summary."""
    power = report.analysis.power.summary if report.analysis.power is not None else None
    return {level: result.table for level, result in report.analysis.agreement.items()}, power
