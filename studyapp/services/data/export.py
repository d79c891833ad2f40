"""Export a study's answers: one row per answer, in every format of the preference-format registry
(CSV, JSON Lines, Parquet: :mod:`evaluation.io.preference_formats`, where a new format is added; docs/data-dictionary.md).

The rows are read as they are by ``python -m evaluation meta agreement --preferences``: ``value`` is
the canonical answer (positive = run_b preferred, pairs in canonical order run_a < run_b,
docs/metrics.md#run-pairs-and-signs), ``level``/``topic``/``subtopic`` name the item and
``annotator`` is a keyed pseudonym (services.data.pseudonyms), never the platform id. The value as
clicked is ``shown_value`` with ``left_run`` on the left.

By default the export holds what the analysis reads: valid answers to regular presentations.
``include_excluded`` adds the answers of excluded annotators (``valid`` false, with the reason);
``include_checks`` adds check items (``check`` true, ``check_kind`` names their kind; their run_a
equals run_b, so such a file is not an input of ``meta agreement``). The command ``export_preferences``, the admin
action and the dashboard downloads all call :func:`export_bytes` / :func:`write_export`.
"""

from __future__ import annotations

import io
import os
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from evaluation.io.preference_formats import Column, cell_text, format_names, get_format
from evaluation.io.preference_table import EXPORT_COLUMNS, with_nulls
from evaluation.io.spreadsheet import escape_cell
from studyapp.models import Annotator, Preference, Presentation, Study
from studyapp.models.study import SUBTOPIC, TOPIC
from studyapp.services.data.file_names import safe_name
from studyapp.services.data.pseudonyms import pseudonym

FIELDS: tuple[Column, ...] = EXPORT_COLUMNS  # docs/data-dictionary.md describes each column
COLUMNS = tuple(name for name, _ in FIELDS)

Row = dict[str, Any]


@dataclass(frozen=True)
class ExportOptions:
    """Which answers to export: levels (None = all of the study), excluded annotators, check items."""

    level: str | None = None
    include_excluded: bool = False
    include_checks: bool = False

    def __post_init__(self) -> None:
        if self.level not in (None, TOPIC, SUBTOPIC):
            raise ValueError(f"level must be topic or subtopic, got {self.level!r}")


def _answers(study: Study, options: ExportOptions):
    qs = Preference.objects.filter(assignment__presentation__study=study)
    if options.level is not None:
        qs = qs.filter(assignment__presentation__level=options.level)
    if not options.include_checks:
        qs = qs.filter(assignment__presentation__kind=Presentation.Kind.PAIR)
    if not options.include_excluded:
        qs = qs.exclude(assignment__annotator__status=Annotator.Status.EXCLUDED)
    return qs.select_related(
        "assignment__annotator",
        "assignment__presentation__topic",
        "assignment__presentation__subtopic",
        "assignment__presentation__run_a",
        "assignment__presentation__run_b",
    ).order_by("answered_at", "pk")


def export_rows(study: Study, options: ExportOptions = ExportOptions()) -> Iterator[Row]:
    """The rows of the export, oldest answer first, with the columns of :data:`COLUMNS`."""
    names: dict[int, str] = {}
    for answer in _answers(study, options).iterator(chunk_size=2000):
        assignment = answer.assignment
        p, annotator = assignment.presentation, assignment.annotator
        if annotator.pk not in names:
            names[annotator.pk] = pseudonym(study, annotator)
        excluded = annotator.status == Annotator.Status.EXCLUDED
        yield {
            "study": study.slug,
            "presentation": p.pk,
            "level": p.level,
            "topic": p.topic.topic_id,
            "subtopic": p.subtopic.number if p.subtopic_id else "",
            "run_a": p.run_a.name,
            "run_b": p.run_b.name,
            "left_run": (p.run_a if assignment.a_on_left else p.run_b).name,
            "shown_value": answer.value,
            "value": answer.canonical,
            "check": p.kind != Presentation.Kind.PAIR,
            "check_kind": "" if p.kind == Presentation.Kind.PAIR else p.kind,
            "annotator": names[annotator.pk],
            "position": assignment.position,
            "server_seconds": answer.server_seconds,
            "client_ms": answer.client_ms,
            "visible_ms": answer.visible_ms,
            "first_interaction_ms": answer.first_interaction_ms,
            "late": answer.late,
            "valid": not excluded,
            "exclusion_reason": annotator.exclusion_reason if excluded else "",
            "served_at": assignment.served_at,
            "answered_at": answer.answered_at,
        }


VOTE_FIELDS = {  # export column -> the answer's field: what the analysis reads (services.analysis.study_analysis.study_votes)
    "level": "assignment__presentation__level",
    "topic": "assignment__presentation__topic__topic_id",
    "subtopic": "assignment__presentation__subtopic__number",
    "run_a": "assignment__presentation__run_a__name",
    "run_b": "assignment__presentation__run_b__name",
    "value": "canonical",
}


def vote_rows(study: Study) -> Iterator[Row]:
    """The default export's rows cut to the columns of :data:`VOTE_FIELDS` and ``annotator``, in the same
    order, read as plain values (no model objects: a tenth of the time of :func:`export_rows`)."""
    names: dict[int, str] = {}
    fields = [*VOTE_FIELDS.values(), "assignment__annotator_id", "assignment__annotator__platform", "assignment__annotator__external_id",
              "assignment__annotator__kept_pseudonym"]  # fmt: skip
    for *values, annotator_id, platform, external_id, kept in (
        _answers(study, ExportOptions()).values_list(*fields).iterator(chunk_size=2000)
    ):
        if annotator_id not in names:
            names[annotator_id] = pseudonym(
                study, Annotator(pk=annotator_id, platform=platform, external_id=external_id, kept_pseudonym=kept)
            )
        row = dict(zip(VOTE_FIELDS, values, strict=True))
        row["subtopic"] = row["subtopic"] or ""
        row["annotator"] = names[annotator_id]
        yield row


def _spreadsheet_safe(row: Row) -> Row:
    """The row with its text cells escaped for spreadsheets (evaluation.io.spreadsheet)."""
    return {column: escape_cell(value) if isinstance(value, str) else value for column, value in row.items()}


def write_rows(rows: Iterator[Row], fmt: str, stream: TextIO) -> int:
    """Rows of :data:`COLUMNS` in the text format ``fmt`` to a text stream (standard output, the report's
    copy); a format that spreadsheets open gets its text cells escaped (docs/data-dictionary.md#spreadsheet-safe-csv)."""
    spec = get_format(fmt)
    return spec.write(with_nulls(map(_spreadsheet_safe, rows) if spec.spreadsheet else rows, FIELDS), FIELDS, stream)


def _write(study: Study, fmt: str, binary, options: ExportOptions) -> int:
    rows = export_rows(study, options)
    if get_format(fmt).binary:
        return get_format(fmt).write(with_nulls(rows, FIELDS), FIELDS, binary)
    text = io.TextIOWrapper(binary, encoding="utf-8", newline="")
    count = write_rows(rows, fmt, text)
    text.flush()
    text.detach()
    return count


def export_bytes(study: Study, fmt: str, options: ExportOptions = ExportOptions()) -> tuple[bytes, int]:
    """The whole export in memory (downloads); returns (content, number of rows)."""
    buffer = io.BytesIO()
    count = _write(study, fmt, buffer, options)
    return buffer.getvalue(), count


def write_export(study: Study, fmt: str, path: str | Path, options: ExportOptions = ExportOptions()) -> int:
    """Write the export to ``path`` atomically (a temporary file in the same folder, then renamed); returns the row count."""
    path = Path(path)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as binary:
            count = _write(study, fmt, binary, options)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return count


def download_name(study: Study, fmt: str) -> str:
    return f"{safe_name(study.slug)}-preferences{get_format(fmt).suffixes[0]}"


def export_formats() -> tuple[str, ...]:
    """The formats an export can be written in: every registered one, at the time of asking."""
    return format_names()


def content_type(fmt: str) -> str:
    return get_format(fmt).content_type


__all__ = [
    "COLUMNS",
    "FIELDS",
    "ExportOptions",
    "cell_text",
    "content_type",
    "download_name",
    "export_bytes",
    "export_formats",
    "write_rows",
]
