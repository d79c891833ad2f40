"""The report as a page: its six sections laid out as template context (``templates/studyapp/report/``).

Numbers are formatted here ("–" where a value is undefined); colours are CSS classes (report.css),
never inline styles (the site's Content-Security-Policy forbids them).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import numpy as np
from django.template.loader import render_to_string

from evaluation.meta.agreement import SUBRANGES
from evaluation.meta.bestset import MIN_TOPICS
from evaluation.report.tables import agreement_grid
from studyapp.services.analysis.report import intuitiveness
from studyapp.services.analysis.study_analysis import LEVELS, StudyAnalysis, is_ad_hoc

if TYPE_CHECKING:
    from studyapp.services.analysis.report.build import StudyReport

STATISTICS = ("MUP", "MUP_b", "MUP_b_published", "tau", "tau_b")  # the columns of section 3, in order
STATISTIC_LABELS = {  # column headers (the CSV keeps the statistic names)
    "MUP": "MUP",
    "MUP_b": "MUP_b (τ_b-consistent)",
    "MUP_b_published": "MUP_b (Formula 3)",
    "tau": "τ",
    "tau_b": "τ_b",
}
LEVEL_TITLES = {
    "topic": "topic level (one answer per topic and run pair)",
    "weighted": "weighted (subtopic answers weighted by the kept subtopics' weights)",
    "subtopic": "subtopic level (one answer per subtopic and run pair)",
}


def _fmt(value: float | None, digits: int = 3) -> str:
    return "–" if value is None or not np.isfinite(value) else f"{value:.{digits}f}"


def _interval(low: float, high: float) -> str:
    """``[low, high]``, or ``[–]`` where there is no interval (too few topics, docs/meta.md#confidence-intervals)."""
    return "[–]" if not (np.isfinite(low) and np.isfinite(high)) else f"[{_fmt(low)}, {_fmt(high)}]"


def _heat_class(value: float) -> str:
    """A CSS class per 0.25 step of a value in [-1, 1] (colours live in report.css: no inline styles)."""
    if value is None or not np.isfinite(value):
        return "heat-na"
    return f"heat-{int(np.clip(np.floor((value + 1) * 4), 0, 7))}"


def _heat_cell(value: float, n: int) -> dict:
    """One heatmap cell: the value ("–" without pairs), N and its colour class."""
    value = value if n > 0 else np.nan
    return {"value": _fmt(value, 2), "n": int(n), "css": _heat_class(value)}


def _metric_rows(analysis: StudyAnalysis, level: str) -> list[dict]:
    """Section 3: every statistic with its interval, n, the best-set column and the discriminative power."""
    table = analysis.agreement[level].table
    whole = table[table["subset"] == "all"].set_index(["measure", "statistic"])
    power = analysis.power.summary.set_index("measure") if analysis.power is not None else None
    chosen = analysis.best_sets.get(level)
    best = chosen.table.set_index("measure") if chosen is not None else None
    rows = []
    for measure in analysis.mup(level).index:
        n = int(whole.loc[(measure, "MUP"), "n"])
        cells = []
        for statistic in STATISTICS:
            r = whole.loc[(measure, statistic)] if (measure, statistic) in whole.index else None
            defined = r is not None and n > 0 and np.isfinite(r["value"])
            cells.append(
                {"value": _fmt(r["value"]) if defined else "–", "interval": _interval(r["ci_low"], r["ci_high"]) if defined else ""}
            )
        row = {"measure": measure, "adhoc": is_ad_hoc(measure), "cells": cells, "n": n, "best": None}
        if best is not None and measure in best.index:
            row["best"] = {"in": bool(best.loc[measure, "in_best_set"]), "p": _fmt(best.loc[measure, "p_best"]), "claim": chosen.claim}
        if power is not None and measure in power.index:
            row["power"] = _fmt(power.loc[measure, "power"])
            row["significant"] = f"{int(power.loc[measure, 'significant'])}/{int(power.loc[measure, 'pairs'])}"
        rows.append(row)
    return rows


def _subranges(analysis: StudyAnalysis, level: str) -> list[dict]:
    """Chen et al. Fig. 1(c): tau_b per preference subrange over all run pairs, one row per metric (MUP order)."""
    table = analysis.agreement[level].table
    rows = table[(table["statistic"] == "tau_b") & table["subset"].isin(SUBRANGES)].set_index(["measure", "subset"])
    return [
        {"measure": m, "cells": [_heat_cell(rows.loc[(m, s), "value"], rows.loc[(m, s), "n"]) for s in SUBRANGES]}
        for m in analysis.mup(level).index
    ]


def _heatmaps(analysis: StudyAnalysis, level: str) -> list[dict]:
    """Chen et al. Fig. 1(a, b): tau_b per Delta bin x preference subrange, one grid per metric (MUP order)."""
    table = analysis.agreement[level].table
    out = []
    for measure in analysis.mup(level).index:
        values, counts = agreement_grid(table, measure, "tau_b")
        grid = [{"bin": b, "cells": [_heat_cell(values.loc[b, s], counts.loc[b, s]) for s in values.columns]} for b in values.index]
        out.append({"measure": measure, "rows": grid})
    return out


def best_set_summary(summary: dict) -> dict | None:
    """What section 1 says about the best set (docs/meta.md#best-set), or None without one.

    ``claim`` False: too few topics to tell metrics apart (the set is every defined metric), so
    the page names no set, only the highest MUP so far.
    """
    chosen, best = summary.get("best_set"), summary.get("best")
    if chosen is None or best is None:
        return None
    rows = {r["measure"]: r for r in chosen["rows"]}
    return {
        **chosen,
        "min_topics": MIN_TOPICS,
        "pairs": summary["pairs"].get(chosen["level"], 0),
        "members": [{"measure": m, "mup": _fmt(rows[m]["mup"]), "p": _fmt(rows[m]["p_best"])} for m in chosen["measures"]],
        "leader": {"measures": chosen["leaders"], "value": _fmt(best["value"]), "interval": _interval(best["low"], best["high"])},
    }


def _userprefs_rows(analysis: StudyAnalysis) -> tuple[list[str], list[dict]]:
    table = analysis.userprefs
    levels = [level for level in ("subtopic", "weighted", "topic") if level in set(table["level"])]
    rows = []
    for (run_a, run_b), group in table.groupby(["run_a", "run_b"], sort=True):
        by_level = group.set_index("level")
        cells = []
        for level in levels:
            if level not in by_level.index:
                cells.append(None)
                continue
            r = by_level.loc[level]
            cells.append(
                {
                    "preferred": r["preferred"],
                    "mean": _fmt(r["mean"], 2),
                    "p": _fmt(r["p_adjusted"], 4),  # what "significant" is judged by
                    "p_raw": _fmt(r["p"], 4),
                    "n": int(r["n"]),
                    "significant": bool(r["significant"]),
                }
            )
        rows.append({"run_a": run_a, "run_b": run_b, "cells": cells})
    return levels, rows


def report_context(report: StudyReport, figure_url) -> dict:
    """Template context of the report; ``figure_url(stem, fmt)`` says where a figure is served ("" for none)."""
    analysis = report.analysis
    levels = []
    for level in LEVELS:
        if level in analysis.agreement:
            levels.append(
                {
                    "name": level,
                    "title": LEVEL_TITLES[level],
                    "pairs": analysis.agreement[level].n_pairs,
                    "topics": analysis.agreement[level].n_topics,
                    "metrics": _metric_rows(analysis, level),
                    "best_set": analysis.best_sets.get(level),
                    "subranges": _subranges(analysis, level),
                    "heatmaps": _heatmaps(analysis, level),
                    "bars_svg": figure_url(f"metric-bars-{level}", "svg"),
                    "bars_png": figure_url(f"metric-bars-{level}", "png"),
                    "heatmap_svg": figure_url(f"heatmaps-{level}", "svg"),
                    "heatmap_png": figure_url(f"heatmaps-{level}", "png"),
                }
            )
    pref_levels, pref_rows = _userprefs_rows(analysis) if analysis.userprefs is not None else ([], [])
    return {
        "study": report.study,
        "report": report,
        "summary": report.summary,
        "best_set": best_set_summary(report.summary),
        "statistic_labels": [STATISTIC_LABELS[s] for s in STATISTICS],
        "subrange_names": SUBRANGES,
        "levels": levels,
        "pref_levels": pref_levels,
        "pref_rows": pref_rows,
        "alpha": analysis.alpha,
        "matrices": intuitiveness.matrices(report),
        "ordering": intuitiveness.ordering(report),
        "gold": analysis.gold,
        "primary_level": analysis.primary_level,
        "commands": report.commands,
        "settings": report.settings,
        "settings_json": json.dumps(report.settings, indent=1),
        "notes": analysis.notes,
        "timings": {k: f"{v:.2f}" for k, v in report.timer.seconds.items()},
        "csv_files": [f"{name}.csv" for name in report.tables],
    }


def render_html(report: StudyReport, *, standalone: bool, figure_url) -> str:
    """The report as HTML: ``standalone`` for the file (relative links), else the staff page."""
    template = "studyapp/report/standalone.html" if standalone else "studyapp/report/page.html"
    return render_to_string(template, report_context(report, figure_url))
