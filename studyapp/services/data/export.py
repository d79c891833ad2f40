"""Export a study's answers: one row per answer, as CSV, JSON Lines or Parquet (docs/data-dictionary.md).

The rows are read as they are by ``python -m evaluation meta agreement --preferences``: ``value`` is
the canonical answer (positive = run_b preferred, pairs in canonical order run_a < run_b,
docs/metrics.md#run-pairs-and-signs), ``level``/``topic``/``subtopic`` name the item and
``annotator`` is a keyed pseudonym (services.data.pseudonyms), never the platform id. The value as
clicked is ``shown_value`` with ``left_run`` on the left.

By default the export holds what the analysis reads: valid answers to regular presentations.
``include_excluded`` adds the answers of excluded annotators (``valid`` false, with the reason);
``include_checks`` adds check items (``check`` names their kind; their run_a equals run_b, so
such a file is not an input of ``meta agreement``). The command ``export_preferences``, the admin
action and the dashboard downloads all call :func:`export_bytes` / :func:`write_export`.
"""

from __future__ import annotations

import csv
import io
import json
import os
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, TextIO

import pyarrow as pa
import pyarrow.parquet as pq

from studyapp.models import Annotator, Preference, Presentation, Study
from studyapp.models.study import SUBTOPIC, TOPIC
from studyapp.services.data.csv_safety import escape_row
from studyapp.services.data.file_names import safe_name
from studyapp.services.data.pseudonyms import pseudonym

FORMATS = ("csv", "jsonl", "parquet")
CONTENT_TYPES = {
    "csv": "text/csv; charset=utf-8",
    "jsonl": "application/x-ndjson; charset=utf-8",
    "parquet": "application/vnd.apache.parquet",
}

# (column, Arrow type): the order of the columns in every format (docs/data-dictionary.md describes each).
SCHEMA = pa.schema(
    [
        ("study", pa.string()),
        ("presentation", pa.int64()),
        ("level", pa.string()),
        ("topic", pa.string()),
        ("subtopic", pa.string()),
        ("run_a", pa.string()),
        ("run_b", pa.string()),
        ("left_run", pa.string()),
        ("shown_value", pa.int64()),
        ("value", pa.int64()),
        ("check", pa.string()),
        ("annotator", pa.string()),
        ("position", pa.int64()),
        ("server_seconds", pa.float64()),
        ("client_ms", pa.int64()),
        ("visible_ms", pa.int64()),
        ("first_interaction_ms", pa.int64()),
        ("late", pa.bool_()),
        ("valid", pa.bool_()),
        ("exclusion_reason", pa.string()),
        ("served_at", pa.timestamp("us", tz="UTC")),
        ("answered_at", pa.timestamp("us", tz="UTC")),
    ]
)
COLUMNS = tuple(SCHEMA.names)

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
            "check": "" if p.kind == Presentation.Kind.PAIR else p.kind,
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


def cell_text(value: Any) -> str:
    """A value as CSV writes it: empty for missing, ``true``/``false``, ISO 8601 for times."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, datetime):
        return value.isoformat()
    return str(value)


def _json_value(value: Any) -> Any:
    return value.isoformat() if isinstance(value, datetime) else value


def write_csv(rows: Iterator[Row], stream: TextIO) -> int:
    writer = csv.writer(stream, lineterminator="\n")
    writer.writerow(COLUMNS)
    count = 0
    for row in rows:
        writer.writerow(escape_row([cell_text(row[c]) for c in COLUMNS]))
        count += 1
    return count


def write_jsonl(rows: Iterator[Row], stream: TextIO) -> int:
    count = 0
    for row in rows:
        stream.write(json.dumps({c: _json_value(row[c]) for c in COLUMNS}, ensure_ascii=False) + "\n")
        count += 1
    return count


def write_parquet(rows: Iterator[Row], sink) -> int:
    table = pa.Table.from_pylist(list(rows), schema=SCHEMA)
    pq.write_table(table, sink)
    return table.num_rows


def _write(study: Study, fmt: str, binary, options: ExportOptions) -> int:
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    rows = export_rows(study, options)
    if fmt == "parquet":
        return write_parquet(rows, binary)
    text = io.TextIOWrapper(binary, encoding="utf-8", newline="")
    count = (write_csv if fmt == "csv" else write_jsonl)(rows, text)
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
    return f"{safe_name(study.slug)}-preferences.{fmt}"
