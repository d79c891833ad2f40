"""The report as a page: its six sections laid out as template context (``templates/studyapp/report/``).

Numbers are formatted here ("–" where a value is undefined); colours are CSS classes (report.css),
never inline styles (the site's Content-Security-Policy forbids them).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import numpy as np
from django.template.loader import render_to_string

from evaluation.meta.agreement import BINS, SUBRANGES
from evaluation.meta.bestset import MIN_TOPICS
from studyapp.services.analysis.report import intuitiveness
from studyapp.services.analysis.study_analysis import LEVELS, StudyAnalysis, is_ad_hoc
from studyapp.services.wording import rounded

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
    return rounded(None if value is None else float(value), digits)


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


def _lookup(table) -> dict[tuple[str, str, str], tuple[int, float, float, float]]:
    """(measure, statistic, subset) -> (n, value, ci_low, ci_high) of an agreement table, read once
    (a dictionary instead of thousands of pandas lookups: the page lays out every cell)."""
    columns = [table[c].tolist() for c in ("measure", "statistic", "subset", "n", "value", "ci_low", "ci_high")]
    return {(m, st, su): (int(n), v, lo, hi) for m, st, su, n, v, lo, hi in zip(*columns)}


def _metric_rows(analysis: StudyAnalysis, level: str, cells: dict) -> list[dict]:
    """Section 3: every statistic with its interval, n, the best-set column and the discriminative power."""
    power = analysis.power.summary.set_index("measure").to_dict("index") if analysis.power is not None else {}
    chosen = analysis.best_sets.get(level)
    best = chosen.table.set_index("measure").to_dict("index") if chosen is not None else {}
    rows = []
    for measure in analysis.mup(level).index:
        n = cells[measure, "MUP", "all"][0]
        shown = []
        for statistic in STATISTICS:
            _, value, low, high = cells.get((measure, statistic, "all"), (0, np.nan, np.nan, np.nan))
            defined = n > 0 and np.isfinite(value)
            shown.append({"value": _fmt(value) if defined else "–", "interval": _interval(low, high) if defined else ""})
        row = {"measure": measure, "adhoc": is_ad_hoc(measure), "cells": shown, "n": n, "best": None}
        if measure in best:
            mine = best[measure]
            row["best"] = {
                "in": chosen.claim and bool(mine["in_best_set"]),
                "p": _fmt(mine["p_best"]),
                "claim": chosen.claim,
                "undefined": str(mine["status"]).startswith("undefined"),
                "entry": mine["entry"],
                "twins": str(mine["entry"]).count(" = "),  # other metrics merged into this one's entry
            }
        if measure in power:
            row["power"] = _fmt(power[measure]["power"])
            row["significant"] = f"{int(power[measure]['significant'])}/{int(power[measure]['pairs'])}"
        rows.append(row)
    return rows


def _subranges(analysis: StudyAnalysis, level: str, cells: dict) -> list[dict]:
    """Chen et al. Fig. 1(c): tau_b per preference subrange over all run pairs, one row per metric (MUP order)."""
    return [
        {"measure": m, "cells": [_heat_cell(cells[m, "tau_b", s][1], cells[m, "tau_b", s][0]) for s in SUBRANGES]}
        for m in analysis.mup(level).index
    ]


def _heatmaps(analysis: StudyAnalysis, level: str, cells: dict) -> list[dict]:
    """Chen et al. Fig. 1(a, b): tau_b per Delta bin x preference subrange, one grid per metric (MUP order)."""
    return [
        {
            "measure": m,
            "rows": [
                {"bin": b, "cells": [_heat_cell(cells[m, "tau_b", f"{b}:{s}"][1], cells[m, "tau_b", f"{b}:{s}"][0]) for s in SUBRANGES]}
                for b in BINS
            ],
        }
        for m in analysis.mup(level).index
    ]


def best_set_summary(summary: dict) -> dict | None:
    """What section 1 says about the best set (docs/meta.md#best-set), or None without one.

    ``claim`` False: too few topics to tell metrics apart, so the page names no set, only the
    highest MUP so far. Members are entries (metrics with the same sign on every pair merged).
    """
    chosen, best = summary.get("best_set"), summary.get("best")
    if chosen is None or best is None:
        return None
    rows = {r["entry"]: r for r in reversed(chosen["rows"])}  # an entry's first metric's row
    return {
        **chosen,
        "min_topics": MIN_TOPICS,
        "pairs": summary["pairs"].get(chosen["level"], 0),
        "members": [{"measure": e, "mup": _fmt(rows[e]["mup"]), "p": _fmt(rows[e]["p_best"])} for e in chosen["entries"]],
        "undefined_named": sorted(chosen["undefined"]),
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
            cells = _lookup(analysis.agreement[level].table)
            levels.append(
                {
                    "name": level,
                    "title": LEVEL_TITLES[level],
                    "pairs": analysis.agreement[level].n_pairs,
                    "topics": analysis.agreement[level].n_topics,
                    "metrics": _metric_rows(analysis, level, cells),
                    "best_set": analysis.best_sets.get(level),
                    "subranges": _subranges(analysis, level, cells),
                    "heatmaps": _heatmaps(analysis, level, cells),
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
