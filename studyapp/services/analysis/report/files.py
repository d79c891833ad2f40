"""The report as files: the study's collection and answers as the ``evaluation`` command line reads
them, the commands that recompute every table from them, the settings record, and
:func:`write_report`, which writes everything (docs/studyapp.md#study-report)."""

from __future__ import annotations

import io
import json
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from django.contrib.staticfiles import finders

from evaluation.io.scores import render_scores, write_atomic
from evaluation.meta.agreement import CONVENTIONS as AGREEMENT_CONVENTIONS
from evaluation.meta.bestset import CONVENTION as BEST_SET_CONVENTION
from evaluation.meta.intuitiveness import CONVENTIONS as INTUITIVENESS_CONVENTIONS
from evaluation.meta.provenance import settings_record
from evaluation.meta.significance import CONVENTIONS as SIGNIFICANCE_CONVENTIONS
from evaluation.report import plots
from evaluation.report.tables import render_table
from studyapp.models import Study
from studyapp.services.analysis.report.figures import draw_figures, figure_sources, figure_stems
from studyapp.services.analysis.report.page import render_html
from studyapp.services.analysis.study_analysis import StudyAnalysis, StudyCollection
from studyapp.services.data.export import write_rows
from studyapp.services.data.file_names import inside, safe_name

if TYPE_CHECKING:
    from studyapp.services.analysis.report.build import StudyReport

PREFERENCES_FILE = "preferences.csv"  # the preference export (manage.py export_preferences --format csv)
SCORES_FILE = "scores.tsv"
COLLECTION_DIR = "collection"


def candidate_measures(analysis: StudyAnalysis) -> list[str]:
    """The measures compared by the intuitiveness test: every measure but the gold standards."""
    return [m for m in analysis.measures if m not in analysis.gold]


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


def input_files(analysis: StudyAnalysis, rows: list[dict]) -> dict[str, str | bytes]:
    files: dict[str, str | bytes] = dict(collection_files(analysis.data))
    files[SCORES_FILE] = render_scores(analysis.scores, "tsv")
    if rows:
        export = io.StringIO()
        write_rows(iter(rows), "csv", export)  # the rows the analysis read, as export_preferences --format csv writes them
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
            "--correction holm --format csv -o userprefs.csv"
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


def report_settings(study: Study, analysis: StudyAnalysis, commands: list[str]) -> dict:
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
        "userprefs_correction": "holm",
        "primary_level": analysis.primary_level,
        "commands": commands,
    }
    return settings_record("study_report", inputs={"study": study.slug}, options=options, seed=analysis.seed, conventions=conventions)


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
            contents[f"{name}.csv"] = render_table(table, "csv")
        levels = figure_levels if figure_levels is not None else [report.analysis.primary_level] if report.analysis.primary_level else []
        stems = figure_stems(report, levels) if levels else []
        agreement, power = figure_sources(report)
        for stem in stems:
            for fmt, data in draw_figures(stem, agreement, power, plots.FORMATS).items():
                contents[f"figures/{stem}.{fmt}"] = data
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


def reproduce_script(report: StudyReport, python: str | None = None) -> str:
    """The report's commands as a shell script run in its directory, with the interpreter that wrote it
    (``python``, default ``sys.executable``; ``PYTHON=...`` overrides it, ``python3`` when it is gone)."""
    python = python or sys.executable or "python3"
    lines = [
        "#!/bin/sh",
        f"# Recompute every table of the report of study {report.study.name!r} from the files beside this script",
        "# with the evaluation command line alone. PYTHON chooses the interpreter; the default is the one that",
        "# wrote the report, else python3 (it needs `evaluation` importable: pip install diversity-prefs).",
        "set -e",
        'cd "$(dirname "$0")"',
        f"PYTHON=${{PYTHON:-{shlex.quote(python)}}}",
        'command -v "$PYTHON" >/dev/null 2>&1 || PYTHON=python3',
    ]
    lines += [command.replace("python -m evaluation", '"$PYTHON" -m evaluation', 1) for command in report.commands]
    return "\n".join(lines) + "\n"
