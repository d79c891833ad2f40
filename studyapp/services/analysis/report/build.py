"""The study report: "which metric agrees with people?", from the study's rows to tables.

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

The same :class:`StudyReport` feeds the staff page (``views/report.py``, laid out by
:mod:`.page`) and ``manage.py study_report --out DIR`` (:func:`.files.write_report`). Everything is
computed before anything is written, and every file is written atomically.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime

import pandas as pd
from django.db.models import Count, Max

from evaluation.meta.bestset import with_best_set
from evaluation.meta.reliability import direction_agreement, krippendorff_alpha
from evaluation.report.tables import concordance_matrix
from studyapp.models import Annotator, Preference, Study
from studyapp.models.study_settings import candidate_list
from studyapp.services.analysis.adaptive import weighted_agreement
from studyapp.services.analysis.report.allocation_file import ALLOCATION_TABLE, allocation_groups_table
from studyapp.services.analysis.report.files import candidate_measures, input_files, report_settings, reproduce_commands
from studyapp.services.analysis.status import study_status
from studyapp.services.analysis.study_analysis import DEFAULT_B, DEFAULT_SEED, StudyAnalysis, Timer, analyse_study
from studyapp.services.data.export import export_rows
from studyapp.services.design.study_config import study_config

REPORT_VERSION = 3  # part of the cache key: bump when the report's content changes
STUDY_FILE = "study.json"  # the study's configuration as it stands (create_study --config takes it)


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
        design = weighted_agreement(study, analysis.votes, analysis.scores, analysis.measures, list(analysis.agreement))
        report.summary["allocation"] = {
            "kind": study.allocation,
            "candidates": candidate_list(study.candidate_metrics),  # [] = every metric scored was a candidate
            **({k: v for k, v in design.items() if k != "table"} if design else {}),
        }
        if design and design["table"] is not None:
            report.tables["agreement-design-weighted"] = design["table"]
        if design:
            report.tables[ALLOCATION_TABLE] = allocation_groups_table(study)
        report.inputs = input_files(analysis, rows)
        report.inputs[STUDY_FILE] = json.dumps(study_config(study), indent=1, ensure_ascii=False) + "\n"
        report.commands = reproduce_commands(analysis)
        report.settings = report_settings(study, analysis, report.commands)
        report.settings["allocation"] = report.summary["allocation"]  # which allocation ran, in the bundle's settings.json
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
