"""The study report: "which metric agrees with people?", from the study's rows to HTML, CSV and figures.

:func:`build_report` runs :func:`services.analysis.study_analysis.analyse_study` and lays its results out in six
sections (docs/studyapp.md#study-report):

1. summary: runs, topics, presentations, annotators (valid / excluded and why), answers;
2. the user-preference table of Chen et al. (Table 1) per run pair and level;
3. tau, tau_b, MUP, MUP_b with bootstrap intervals per metric, sorted by MUP, with the
   discriminative power of the study's runs (table and figure, Chen et al. Fig. 2);
4. tau_b per Delta bin x preference subrange with N per cell (Chen et al. Fig. 1);
5. intuitiveness against I-rec, Ef-P, Prec and PMP as ``c1/c2 (N)`` and the tau_b between the MUP
   order and the intuitiveness order;
6. settings, conventions, seeds, versions and the exact ``python -m evaluation`` commands that
   reproduce every table from the files the report writes next to it.

The same :class:`StudyReport` feeds the staff page (``views/report.py``) and ``manage.py
study_report --out DIR`` (:func:`write_report`). Everything is computed before anything is
written, and every file is written atomically.
"""

from __future__ import annotations

import io
import json
import shlex
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pandas as pd
from django.contrib.staticfiles import finders
from django.db.models import Count, Max
from django.template.loader import render_to_string

from evaluation.io.scores import render_scores, write_atomic
from evaluation.meta.agreement import CONVENTIONS as AGREEMENT_CONVENTIONS
from evaluation.meta.bestset import CONVENTION as BEST_SET_CONVENTION
from evaluation.meta.bestset import with_best_set
from evaluation.meta.intuitiveness import CONVENTIONS as INTUITIVENESS_CONVENTIONS
from evaluation.meta.provenance import settings_record
from evaluation.meta.reliability import direction_agreement, krippendorff_alpha
from evaluation.meta.significance import CONVENTIONS as SIGNIFICANCE_CONVENTIONS
from evaluation.report import plots
from evaluation.report.tables import agreement_grid, concordance_matrix, render_table
from studyapp.models import Annotator, Preference, Study
from studyapp.services.analysis.status import study_status
from studyapp.services.analysis.study_analysis import DEFAULT_B, DEFAULT_SEED, LEVELS, StudyAnalysis, StudyCollection, Timer, analyse_study
from studyapp.services.data.csv_safety import escape_frame
from studyapp.services.data.export import export_rows, write_csv
from studyapp.services.data.file_names import inside, safe_name

REPORT_VERSION = 1  # part of the cache key: bump when the report's content changes
STATISTICS = ("MUP", "MUP_b", "tau", "tau_b")
PREFERENCES_FILE = "preferences.csv"  # the preference export (manage.py export_preferences --format csv)
SCORES_FILE = "scores.tsv"
COLLECTION_DIR = "collection"
LEVEL_TITLES = {
    "topic": "topic level (one answer per topic and run pair)",
    "weighted": "weighted (subtopic answers weighted by the kept subtopics' weights)",
    "subtopic": "subtopic level (one answer per subtopic and run pair)",
}


@dataclass
class StudyReport:
    """Everything the report shows, ready to render as a page or to write as files."""

    study: Study
    analysis: StudyAnalysis
    generated_at: str
    summary: dict
    tables: dict[str, pd.DataFrame]  # CSV name (without .csv) -> tidy frame
    inputs: dict[str, str | bytes] = field(default_factory=dict)  # relative path -> content: collection files, preferences, scores
    commands: list[str] = field(default_factory=list)
    settings: dict = field(default_factory=dict)

    @property
    def timer(self) -> Timer:
        return self.analysis.timer


def fingerprint(study: Study) -> str:
    """What the report depends on that changes while a study runs: answers and exclusions (cache key)."""
    answers = Preference.objects.filter(assignment__presentation__study=study).aggregate(n=Count("id"), last=Max("id"))
    excluded = study.annotators.filter(status=Annotator.Status.EXCLUDED).aggregate(n=Count("id"), last=Max("id"))
    return f"v{REPORT_VERSION}-{answers['n']}-{answers['last']}-{excluded['n']}-{excluded['last']}"


def build_report(study: Study, *, B: int = DEFAULT_B, seed: int = DEFAULT_SEED, timer: Timer | None = None) -> StudyReport:
    """Analyse ``study`` and lay the result out as tables, figures, input files and commands."""
    timer = timer or Timer()
    with timer.phase("collection"):
        rows = list(export_rows(study))  # the preference export: read once, analysed and written as is
    analysis = analyse_study(study, B=B, seed=seed, timer=timer, rows=rows)
    with analysis.timer.phase("rendering"):
        report = StudyReport(
            study=study,
            analysis=analysis,
            generated_at=datetime.now(UTC).isoformat(timespec="seconds"),
            summary=_summary(study, analysis),
            tables=_tables(analysis),
        )
        report.inputs = _inputs(analysis, rows)
        report.commands = reproduce_commands(analysis)
        report.settings = _settings(study, analysis, report.commands)
    return report


# -- section 1 -------------------------------------------------------------------------------------


def _summary(study: Study, analysis: StudyAnalysis) -> dict:
    status = study_status(study, capacity_needed=False)
    reasons = (
        study.annotators.filter(status=Annotator.Status.EXCLUDED)
        .values("exclusion_reason")
        .annotate(n=Count("id"))
        .order_by("-n", "exclusion_reason")
    )
    answering = analysis.votes["annotator"].nunique() if len(analysis.votes) else 0
    best = None
    if analysis.primary_level is not None:
        mup = analysis.mup()
        table = analysis.agreement[analysis.primary_level].table
        row = table[(table["measure"] == mup.index[0]) & (table["statistic"] == "MUP") & (table["subset"] == "all")].iloc[0]
        best = {
            "measure": mup.index[0],
            "value": row["value"],
            "low": row["ci_low"],
            "high": row["ci_high"],
            "level": analysis.primary_level,
        }
    chosen = analysis.best_set()
    best_set = None if chosen is None else {**chosen.as_dict(), "level": analysis.primary_level}
    return {
        "reliability": _reliability(analysis.votes),
        "runs": analysis.data.run_names,
        "topics": analysis.data.topics,
        "depth": analysis.data.depth,
        "kept_subtopics": sum(len(w) for w in analysis.data.weights.values()),
        "levels": analysis.data.levels,
        "presentations": status["presentations"],
        "answers": status["answers"],
        "complete": status["complete"],
        "progress": status["progress"],
        "annotators": status["annotators"],
        "annotators_with_valid_answers": answering,
        "exclusions": [(r["exclusion_reason"] or "(no reason recorded)", r["n"]) for r in reasons],
        "pairs": {level: result.n_pairs for level, result in analysis.agreement.items()},
        "best": best,
        "best_set": best_set,  # docs/meta.md#best-set: the metrics whose MUP is not significantly below another's
    }


def _reliability(votes: pd.DataFrame) -> list[dict]:
    """Inter-annotator agreement per level (docs/metrics.md#inter-annotator-agreement): Krippendorff's
    alpha on the canonical -4..4 answers (interval, ordinal) and the share of annotator pairs agreeing
    on the direction; one unit per presentation."""
    out = []
    for level, group in votes.groupby("level", sort=False):
        units = [g.to_numpy() for _, g in group.groupby(["topic", "subtopic", "run_a", "run_b"], sort=False)["value"]]
        share, pairs = direction_agreement(units)
        out.append(
            {
                "level": level,
                "items": len(units),
                "interval": krippendorff_alpha(units, level="interval"),
                "ordinal": krippendorff_alpha(units, level="ordinal"),
                "direction": share,
                "pairs": pairs,
            }
        )
    return sorted(out, key=lambda r: r["level"] != "topic")


# -- tables (CSV) ----------------------------------------------------------------------------------


def _tables(analysis: StudyAnalysis) -> dict[str, pd.DataFrame]:
    tables: dict[str, pd.DataFrame] = {}
    for level, result in analysis.agreement.items():
        chosen = analysis.best_sets.get(level)
        tables[f"agreement-{level}"] = result.table if chosen is None else with_best_set(result.table, chosen)
    if analysis.userprefs is not None:
        tables["userprefs"] = analysis.userprefs
    if analysis.power is not None:
        tables["discpower"] = analysis.power.summary
    if analysis.concordance is not None:
        tables["intuitiveness"] = analysis.concordance
        tables["intuitiveness-matrix"] = intuitiveness_matrix(analysis)
    if analysis.ordering is not None:
        tables["intuitiveness-ordering"] = analysis.ordering
    return tables


def intuitiveness_matrix(analysis: StudyAnalysis) -> pd.DataFrame:
    """Chen et al. Table 2 per gold standard (what ``meta intuitiveness --matrix-out`` writes)."""
    candidates = candidate_measures(analysis)
    blocks = []
    for gold in dict.fromkeys(analysis.concordance["gold"]):
        matrix = concordance_matrix(analysis.concordance, gold, candidates)
        matrix.insert(0, "measure", matrix.index)
        matrix.insert(0, "gold", gold)
        blocks.append(matrix)
    return pd.concat(blocks, ignore_index=True)


def candidate_measures(analysis: StudyAnalysis) -> list[str]:
    return [m for m in analysis.measures if m not in analysis.gold]


# -- section 6: inputs and commands ----------------------------------------------------------------


def collection_files(data: StudyCollection) -> dict[str, str]:
    """The study's collection as the annotators saw it, as files the ``evaluation`` CLI reads.

    NTCIR Dqrels (``topic intent docid Lk``) of the kept subtopics, with intent ``0`` for documents
    judged only for other subtopics (they stay judged, docs/metrics.md#relevance-and-empty-topics);
    the kept subtopics' renormalised weights (``topic intent prob type``, full precision); every run
    cut at the study depth (TREC, score = depth + 1 - rank).
    """
    qrels, intents = [], []
    columns = data.collection.qrels_columns
    topic_of = np.asarray(columns.topics, dtype=object)[columns.topic]
    doc_of = columns.docids[columns.docid]
    intent_names = np.asarray([*columns.intents, "0"], dtype=object)
    intent_of = intent_names[columns.intent]  # -1 (relevant to no intent) reads the "0" at the end
    seen: set[tuple[str, str]] = set()
    for topic, intent, doc, grade in zip(topic_of.tolist(), intent_of.tolist(), doc_of.tolist(), columns.grade.tolist()):
        qrels.append(f"{topic} {intent} {doc} L{grade}")
        seen.add((topic, doc))
    for topic_id, topic in data.collection.topics.items():
        for intent in topic.intents:
            intents.append(f"{topic_id}\t{intent.id}\t{intent.weight!r}\t{intent.type}")
    files = {f"{COLLECTION_DIR}/qrels.txt": "\n".join(qrels) + "\n", f"{COLLECTION_DIR}/intents.tsv": "\n".join(intents) + "\n"}
    for run in data.runs:
        lines = [f"{t} Q0 {doc} {r} {data.depth + 1 - r} {run.name}" for t in data.topics for r, doc in enumerate(run.lists.get(t, ()), 1)]
        files[run_path(run.name)] = "\n".join(lines) + "\n"
    return files


def run_path(name: str) -> str:
    return f"{COLLECTION_DIR}/runs/{safe_name(name)}.run"


def _inputs(analysis: StudyAnalysis, rows: list[dict]) -> dict[str, str | bytes]:
    files: dict[str, str | bytes] = dict(collection_files(analysis.data))
    files[SCORES_FILE] = render_scores(analysis.scores, "tsv")
    if rows:
        export = io.StringIO()
        write_csv(iter(rows), export)  # the rows the analysis read, as export_preferences --format csv writes them
        files[PREFERENCES_FILE] = export.getvalue()
    return files


def reproduce_commands(analysis: StudyAnalysis) -> list[str]:
    """The ``python -m evaluation`` commands that recompute every CSV of the report from its files.

    Run in the report directory; each writes the file of the same name the report wrote.
    """
    q = shlex.quote
    data = analysis.data
    intents = f"{COLLECTION_DIR}/intents.tsv"
    runs = " ".join(f"--run {q(run_path(name))}" for name in data.run_names)
    measures = " ".join(q(m) for m in analysis.measures)
    per_subtopic = " --per-subtopic" if "subtopic" in data.levels else ""
    commands = [
        f"python -m evaluation score --qrels {COLLECTION_DIR}/qrels.txt --intents {intents} {runs} "
        f"--measures {measures} --per-topic{per_subtopic} -o {SCORES_FILE}"
    ]
    boot = f"--bootstrap {analysis.B} --seed {analysis.seed}"
    best = f" --best-set --alpha {analysis.alpha}" if analysis.best_sets else ""
    for level in analysis.agreement:
        weights = f" --intents {intents}" if level == "weighted" else ""
        commands.append(
            f"python -m evaluation meta agreement --scores {SCORES_FILE} --preferences {PREFERENCES_FILE} --level {level}{weights} "
            f"--measures {measures} {boot}{best} --format csv -o agreement-{level}.csv"
        )
    if analysis.userprefs is not None:
        commands.append(
            f"python -m evaluation meta userprefs --preferences {PREFERENCES_FILE} --intents {intents} --alpha {analysis.alpha} "
            "--format csv -o userprefs.csv"
        )
    if analysis.power is not None:
        commands.append(
            f"python -m evaluation meta discpower --scores {SCORES_FILE} --measures {measures} --test bootstrap --B {analysis.B} "
            f"--alpha {analysis.alpha} --seed {analysis.seed} --format csv -o discpower.csv"
        )
    if analysis.concordance is not None:
        gold = " ".join(q(g) for g in analysis.gold)
        candidates = " ".join(q(m) for m in candidate_measures(analysis))
        ordering = (
            f" --agreement agreement-{analysis.primary_level}.csv --ordering-out intuitiveness-ordering.csv"
            if analysis.ordering is not None
            else ""
        )
        commands.append(
            f"python -m evaluation meta intuitiveness --scores {SCORES_FILE} --measures {candidates} --gold {gold} "
            f"--matrix-out intuitiveness-matrix.csv{ordering} --format csv -o intuitiveness.csv"
        )
    return commands


def _settings(study: Study, analysis: StudyAnalysis, commands: list[str]) -> dict:
    conventions = {
        **{f"agreement.{k}": v for k, v in AGREEMENT_CONVENTIONS.items()},
        "agreement.best_set": BEST_SET_CONVENTION,
        **{f"significance.{k}": v for k, v in SIGNIFICANCE_CONVENTIONS.items()},
        **{f"intuitiveness.{k}": v for k, v in INTUITIVENESS_CONVENTIONS.items()},
        "sign": "canonical answers: run pairs in canonical order run_a < run_b by name, positive = run_b preferred (docs/design.md)",
        "valid_answers": "answers of annotators not excluded by quality control, on regular presentations (check items left out)",
        "collection": "the study's topics, its kept subtopics with their renormalised weights, runs cut at the study depth",
    }
    options = {
        "study": study.name,
        "depth": analysis.data.depth,
        "levels": analysis.data.levels,
        "measures": analysis.measures,
        "gold": analysis.gold,
        "B": analysis.B,
        "alpha": analysis.alpha,
        "confidence": 0.95,
        "tau_mode": "pairs",
        "discpower_test": "bootstrap",
        "userprefs_test": "t",
        "primary_level": analysis.primary_level,
        "commands": commands,
    }
    return settings_record("study_report", inputs={"study": study.slug}, options=options, seed=analysis.seed, conventions=conventions)


# -- figures ---------------------------------------------------------------------------------------

FIGURE_KINDS = ("metric-bars", "heatmaps")


def figure_stems(report: StudyReport, levels: list[str] | None = None) -> list[str]:
    """``metric-bars-<level>`` (Chen et al. Fig. 2 with intervals) and ``heatmaps-<level>`` (Fig. 1)
    for each of ``levels`` (default: every level with answers)."""
    levels = [level for level in (levels or LEVELS) if level in report.analysis.agreement]
    return [f"{kind}-{level}" for level in levels for kind in FIGURE_KINDS]


def draw_figure(stem: str, agreement: dict[str, pd.DataFrame], power: pd.DataFrame | None, fmt: str) -> bytes:
    """One figure of the report as PNG or SVG bytes, from the agreement tables per level and the
    discriminative power summary (what the page keeps in its cache)."""
    kind, _, level = stem.rpartition("-")
    if kind not in FIGURE_KINDS or level not in agreement or fmt not in plots.FORMATS:
        raise KeyError(stem)
    table = agreement[level]
    if kind == "metric-bars":
        fig = plots.metric_bars_figure(table, power=power, intervals=True)
    else:
        fig = plots.agreement_heatmaps_figure(table, layout="rows")
    ((_, data),) = plots.render_figure(fig, "figures", stem, formats=(fmt,))
    return data


def figure_sources(report: StudyReport) -> tuple[dict[str, pd.DataFrame], pd.DataFrame | None]:
    power = report.analysis.power.summary if report.analysis.power is not None else None
    return {level: result.table for level, result in report.analysis.agreement.items()}, power


# -- the page --------------------------------------------------------------------------------------


def _fmt(value: float, digits: int = 3) -> str:
    return "–" if value is None or not np.isfinite(value) else f"{value:.{digits}f}"


def _heat_class(value: float) -> str:
    """A CSS class per 0.25 step of a value in [-1, 1] (colours live in report.css: no inline styles)."""
    if value is None or not np.isfinite(value):
        return "heat-na"
    return f"heat-{int(np.clip(np.floor((value + 1) * 4), 0, 7))}"


def _metric_rows(analysis: StudyAnalysis, level: str) -> list[dict]:
    table = analysis.agreement[level].table
    whole = table[table["subset"] == "all"].set_index(["measure", "statistic"])
    power = analysis.power.summary.set_index("measure") if analysis.power is not None else None
    rows = []
    for measure in analysis.mup(level).index:
        cells = []
        for statistic in STATISTICS:
            r = whole.loc[(measure, statistic)]
            cells.append({"value": _fmt(r["value"]), "interval": f"[{_fmt(r['ci_low'])}, {_fmt(r['ci_high'])}]"})
        row = {"measure": measure, "cells": cells, "n": int(whole.loc[(measure, "MUP"), "n"])}
        if power is not None and measure in power.index:
            row["power"] = _fmt(power.loc[measure, "power"])
            row["significant"] = f"{int(power.loc[measure, 'significant'])}/{int(power.loc[measure, 'pairs'])}"
        rows.append(row)
    return rows


def _heatmaps(analysis: StudyAnalysis, level: str) -> list[dict]:
    table = analysis.agreement[level].table
    out = []
    for measure in analysis.mup(level).index:
        values, counts = agreement_grid(table, measure, "tau_b")
        grid = [
            {
                "bin": b,
                "cells": [
                    {"value": _fmt(values.loc[b, s], 2), "n": int(counts.loc[b, s]), "css": _heat_class(values.loc[b, s])}
                    for s in values.columns
                ],
            }
            for b in values.index
        ]
        out.append({"measure": measure, "rows": grid})
    return out


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
                    "p": _fmt(r["p"], 4),
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
                    "heatmaps": _heatmaps(analysis, level),
                    "bars_svg": figure_url(f"metric-bars-{level}", "svg"),
                    "bars_png": figure_url(f"metric-bars-{level}", "png"),
                    "heatmap_svg": figure_url(f"heatmaps-{level}", "svg"),
                    "heatmap_png": figure_url(f"heatmaps-{level}", "png"),
                }
            )
    pref_levels, pref_rows = _userprefs_rows(analysis) if analysis.userprefs is not None else ([], [])
    matrices = []
    if analysis.concordance is not None:
        matrix = report.tables["intuitiveness-matrix"]
        for gold, block in matrix.groupby("gold", sort=False):
            names = list(block["measure"])
            matrices.append({"gold": gold, "columns": names, "rows": [(r["measure"], [r[c] for c in names]) for _, r in block.iterrows()]})
    ordering = []
    if analysis.ordering is not None:
        ordering = [
            {"gold": r.gold, "measures": int(r.measures), "tau_b": _fmt(r.tau_b), "p": _fmt(r.p, 4)} for r in analysis.ordering.itertuples()
        ]
    return {
        "study": report.study,
        "report": report,
        "summary": report.summary,
        "levels": levels,
        "pref_levels": pref_levels,
        "pref_rows": pref_rows,
        "alpha": analysis.alpha,
        "matrices": matrices,
        "ordering": ordering,
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


# -- files -----------------------------------------------------------------------------------------


def write_report(report: StudyReport, out: str | Path, *, figure_levels: list[str] | None = None) -> list[Path]:
    """Write the report into directory ``out`` (created): index.html, report.css, the CSV tables,
    the figures of ``figure_levels`` as PNG and SVG (default: the primary level; the page draws any
    level on demand), the input files, settings.json and reproduce.sh. Everything is rendered in
    memory first; then each file is written atomically."""
    out = Path(out)
    with report.timer.phase("rendering"):
        contents: dict[str, str | bytes] = dict(report.inputs)
        for name, table in report.tables.items():
            contents[f"{name}.csv"] = render_table(escape_frame(table), "csv")
        levels = figure_levels if figure_levels is not None else [report.analysis.primary_level] if report.analysis.primary_level else []
        stems = figure_stems(report, levels) if levels else []
        agreement, power = figure_sources(report)
        for stem in stems:
            for fmt in plots.FORMATS:
                contents[f"figures/{stem}.{fmt}"] = draw_figure(stem, agreement, power, fmt)
        contents["settings.json"] = json.dumps(report.settings, indent=1, allow_nan=False) + "\n"
        contents["reproduce.sh"] = reproduce_script(report)
        contents["report.css"] = Path(finders.find("studyapp/report.css")).read_text()
        drawn = set(stems)
        contents["index.html"] = render_html(
            report, standalone=True, figure_url=lambda stem, fmt: f"figures/{stem}.{fmt}" if stem in drawn else ""
        )
    written = []
    for relative, content in contents.items():
        path = inside(out, relative)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, content)
        written.append(path)
    return written


def reproduce_script(report: StudyReport) -> str:
    lines = [
        "#!/bin/sh",
        f"# Recompute every table of the report of study {report.study.name!r} from the files beside this script",
        "# with the evaluation command line alone (run it in this directory; PYTHON defaults to python).",
        "set -e",
        'cd "$(dirname "$0")"',
    ]
    lines += [command.replace("python -m evaluation", '"${PYTHON:-python}" -m evaluation', 1) for command in report.commands]
    return "\n".join(lines) + "\n"
