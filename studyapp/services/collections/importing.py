"""Import a test collection (qrels, intents, topics, display data, runs) into the database.

All files are read and validated by the evaluation readers first; only then is anything written,
in one transaction. Any problem raises :class:`ImportFailed` with ``file:line: reason`` and
leaves the database as it was. That includes values the database could not store as given (an id
longer than its column, a grade past the column's range, a NUL character): they are refused before
writing, the same way on SQLite (which would store them) and PostgreSQL (which would fail).
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import NoReturn

from django.db import DatabaseError, connection, transaction
from django.db.backends.base.operations import BaseDatabaseOperations
from django.db.models import Model

import evaluation.collection
import evaluation.io.runs
from evaluation.exceptions import EvaluationError, FormatError
from evaluation.io.documents import DocumentInfo, read_documents
from evaluation.io.runs import read_run
from evaluation.loading import load_collection
from studyapp.exceptions import ImportFailed
from studyapp.models import Collection, Document, Judgment, RankedItem, Run, Subtopic, Topic
from studyapp.models.study_settings import BY_NAME
from studyapp.services.collections.bare_documents import BareDocuments, bare_documents
from studyapp.services.collections.planner_stats import refresh_statistics
from studyapp.services.wording import count

BATCH = 2000
NAME_MAX = Collection._meta.get_field("name").max_length
RUN_NAME_MAX = Run._meta.get_field("name").max_length
DOCID_MAX = Document._meta.get_field("docid").max_length
TOPIC_ID_MAX = Topic._meta.get_field("topic_id").max_length
INTENT_ID_MAX = Subtopic._meta.get_field("number").max_length
# The range Django gives the grade's column type on every backend (SQLite would store more).
GRADE_MIN, GRADE_MAX = BaseDatabaseOperations.integer_field_ranges[Judgment._meta.get_field("grade").get_internal_type()]


@dataclass
class ImportSummary:
    """What an import wrote, and what it noticed but accepted."""

    collection: Collection
    topics: int = 0
    subtopics: int = 0
    documents: int = 0
    documents_with_display_data: int = 0
    judgments: int = 0
    runs: int = 0
    ranked_items: int = 0
    warnings: list[str] = field(default_factory=list)
    bare: BareDocuments | None = None  # ranked documents within the default depth without display data

    def lines(self) -> list[str]:
        out = [
            f"Imported collection {self.collection.name!r}: {self.topics} topics, {self.subtopics} subtopics, "
            f"{self.judgments} judgments, {self.documents} documents ({self.documents_with_display_data} with display data), "
            f"{self.runs} runs with {self.ranked_items} ranked items."
        ]
        if self.bare is not None:
            out.append(("warning: " if self.bare.bare else "") + self.bare.line())
        out += [f"warning: {w}" for w in self.warnings]
        return out


@dataclass
class _Parsed:
    collection: evaluation.collection.Collection
    runs: list[tuple[str, evaluation.io.runs.Run]]
    documents: dict[str, DocumentInfo]
    warnings: list[str]


def _read_all(qrels: str | Path, intents, topics, docs, runs: Sequence[str | Path]) -> _Parsed:
    """Read and cross-check every file; nothing touches the database here."""
    if not runs:
        raise ImportFailed("at least one --run file is needed")
    _refuse_nul_characters([p for p in (qrels, intents, topics, docs, *runs) if p])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            collection = load_collection(qrels, intents, topics)
            parsed_runs = [(str(path), read_run(path)) for path in runs]
            documents = read_documents(docs) if docs else {}
        except EvaluationError as exc:  # FormatError included: its str() is "path:line: reason"
            raise ImportFailed(str(exc)) from None
    notes = [str(w.message) for w in caught]
    names: dict[str, str] = {}
    for path, run in parsed_runs:
        tagged = _column_is(5, run.name)
        if run.name in names:
            _fail(path, tagged, f"run name {run.name!r} is also the name of {names[run.name]}")
        if len(run.name) > RUN_NAME_MAX:
            _fail(path, tagged, f"run name longer than {RUN_NAME_MAX} characters")
        names[run.name] = path
        known = [t for t in run.lists if t in collection.topics]
        if not known:
            _fail(path, _column_is(0, next(iter(run.lists), "")), f"none of the run's topics is in the qrels ({qrels})")
        unknown = sorted(set(run.lists) - set(collection.topics))
        if unknown:
            notes.append(
                f"{path}: ignored {count(len(unknown), 'topic')} not in the qrels: {', '.join(unknown[:5])}"
                + (" ..." if len(unknown) > 5 else "")
            )
    long_ids = [d for d in _all_docids(collection, [r for _, r in parsed_runs], documents) if len(d) > DOCID_MAX]
    if long_ids:
        docid = long_ids[0]
        reason = f"docid longer than {DOCID_MAX} characters ({len(docid)}, {count(len(long_ids), 'such docid')} in all): {docid[:60]}..."
        _fail_where_found([qrels, *(p for p, _ in parsed_runs), *([docs] if docs else [])], _mentions(docid), reason)
    _check_column_limits(collection, qrels, [p for p in (qrels, intents, topics) if p])
    if docs:
        _check_display_text(documents, docs)
    return _Parsed(collection, parsed_runs, documents, notes)


def _refuse_nul_characters(paths: Sequence[str | Path]) -> None:
    """A NUL byte anywhere is refused (PostgreSQL cannot store it in text, SQLite would keep it silently)."""
    for path in paths:
        try:
            data = Path(path).read_bytes()
        except OSError:
            continue  # the reader reports a missing or unreadable file with its own message
        at = data.find(b"\0")
        if at >= 0:
            line = data.count(b"\n", 0, at) + 1
            raise ImportFailed(str(FormatError(path, line, "NUL character (byte 0) in the file; the database cannot store it")))


def _check_column_limits(collection: evaluation.collection.Collection, qrels: str | Path, files: list[str | Path]) -> None:
    """Ids longer than their column and grades outside it are refused with the line that holds them."""
    for tid, topic in collection.topics.items():
        if len(tid) > TOPIC_ID_MAX:
            _fail_where_found(files, _mentions(tid), f"topic id longer than {TOPIC_ID_MAX} characters ({len(tid)}): {tid[:40]}...")
        for intent in topic.intents:
            if len(intent.id) > INTENT_ID_MAX:
                reason = f"subtopic id longer than {INTENT_ID_MAX} characters ({len(intent.id)}): {intent.id[:40]}..."
                _fail_where_found(files, _mentions(intent.id), reason)
    for tid, docs in collection.judgments.items():
        for doc, grades in docs.items():
            for intent, grade in grades.items():
                if not GRADE_MIN <= grade <= GRADE_MAX:
                    found = _qrels_line(tid, intent, doc)
                    _fail(qrels, found, f"grade {grade} is outside the storable range {GRADE_MIN}..{GRADE_MAX}")


def _qrels_line(topic: str, intent: str, doc: str) -> Callable[[str], bool]:
    def found(line: str) -> bool:
        fields = line.split()
        return fields[:3] == [topic, intent, doc] and not line.lstrip().startswith("#")

    return found


def _check_display_text(documents: dict[str, DocumentInfo], path: str | Path) -> None:
    """Text the database cannot store as given: a NUL character (written ``\\u0000`` in JSON) or an
    unpaired surrogate (``\\ud800``), which are not characters of UTF-8 text."""
    for info in documents.values():
        for name in ("docid", "title", "url", "snippet"):
            value = getattr(info, name)
            problem = (
                "a NUL character" if "\0" in value else "an unpaired surrogate" if any("\ud800" <= ch <= "\udfff" for ch in value) else ""
            )
            if problem:
                _fail(
                    path, _mentions(info.docid), f"the {name} of document {info.docid!r} contains {problem}; the database cannot store it"
                )


def _line_of(path: str | Path, found: Callable[[str], bool]) -> int:
    """The number of the first line of ``path`` for which ``found`` holds (0: none)."""
    lines = Path(path).read_text(encoding="utf-8-sig", errors="replace").split("\n")  # \n only, as the readers
    return next((n for n, line in enumerate(lines, start=1) if found(line)), 0)


def _fail(path: str | Path, found: Callable[[str], bool], reason: str) -> NoReturn:
    """Refuse the import with ``path:line: reason``, the line being the first one ``found`` picks."""
    raise ImportFailed(str(FormatError(path, _line_of(path, found), reason)))


def _fail_where_found(paths: Sequence[str | Path], found: Callable[[str], bool], reason: str) -> NoReturn:
    for path in paths:
        if _line_of(path, found):
            _fail(path, found, reason)
    raise ImportFailed(reason)  # not reached: the value was read from one of these files


def _column_is(index: int, value: str) -> Callable[[str], bool]:
    """Picks a whitespace-separated line whose column ``index`` is ``value`` (run files, qrels)."""

    def found(line: str) -> bool:
        fields = line.split()
        return len(fields) > index and fields[index] == value and not line.lstrip().startswith("#")

    return found


def _mentions(docid: str) -> Callable[[str], bool]:
    """Picks a line that contains ``docid`` as written in a run, a qrels, a TSV or a JSONL file."""
    escaped = json.dumps(docid)[1:-1]
    return lambda line: docid in line or escaped in line


def _all_docids(
    collection: evaluation.collection.Collection, runs: list[evaluation.io.runs.Run], documents: dict[str, DocumentInfo]
) -> list[str]:
    seen: dict[str, None] = dict.fromkeys(documents)
    for docs in collection.judgments.values():
        seen.update(dict.fromkeys(docs))
    for run in runs:
        for topic, docs in run.lists.items():
            if topic in collection.topics:
                seen.update(dict.fromkeys(docs))
    return list(seen)


def import_collection(
    name: str,
    *,
    qrels: str | Path,
    runs: Sequence[str | Path],
    intents: str | Path | None = None,
    topics: str | Path | None = None,
    docs: str | Path | None = None,
    replace: bool = False,
    description: str = "",
) -> ImportSummary:
    """Import a collection named ``name``; refuses an existing name unless ``replace``."""
    name = (name or "").strip()
    if not name:
        raise ImportFailed("the collection needs a non-empty --name")
    if len(name) > NAME_MAX:
        raise ImportFailed(f"the collection name is longer than {NAME_MAX} characters")
    existing = Collection.objects.filter(name=name).first()
    if existing is not None and not replace:
        raise ImportFailed(f"a collection named {name!r} exists already; use --replace to overwrite it")
    parsed = _read_all(qrels, intents, topics, docs, runs)
    source = {
        "qrels": str(qrels),
        "intents": str(intents) if intents else None,
        "topics": str(topics) if topics else None,
        "docs": str(docs) if docs else None,
        "runs": [p for p, _ in parsed.runs],
    }
    try:
        with transaction.atomic():
            if existing is not None:
                studies = list(existing.studies.values_list("name", flat=True))
                if studies:
                    raise ImportFailed(f"collection {name!r} is used by studies {', '.join(studies)}; delete them before replacing it")
                existing.delete()
            collection = Collection.objects.create(name=name, description=description, source=source)
            summary = _write(collection, parsed)
    except (DatabaseError, OverflowError) as exc:  # a limit the checks above do not know: nothing was written
        raise ImportFailed(f"the database refused the collection, nothing was imported: {exc}".strip()) from None
    refresh_statistics(Topic, Subtopic, Document, Judgment, Run, RankedItem)
    return summary


def _insert(model: type[Model], fields: list[str], rows: list[tuple]) -> None:
    """Plain executemany: bulk_create builds a model instance per row, which dominates the time of
    an import (a TREC collection has 10^5 judgments); these rows need no signals or defaults."""
    meta = model._meta
    columns = ", ".join(connection.ops.quote_name(meta.get_field(f).column) for f in fields)
    sql = f"INSERT INTO {connection.ops.quote_name(meta.db_table)} ({columns}) VALUES ({', '.join(['%s'] * len(fields))})"
    with connection.cursor() as cursor:
        for start in range(0, len(rows), BATCH):
            cursor.executemany(sql, rows[start : start + BATCH])


def _write(collection: Collection, parsed: _Parsed) -> ImportSummary:
    col = parsed.collection
    summary = ImportSummary(collection, warnings=parsed.warnings)
    Topic.objects.bulk_create(
        [
            Topic(collection=collection, topic_id=t.id, query=t.query, description=t.description, position=n)
            for n, t in enumerate(col.topics.values())
        ]
    )
    topic_pk = dict(Topic.objects.filter(collection=collection).values_list("topic_id", "pk"))
    Subtopic.objects.bulk_create(
        [
            Subtopic(topic_id=topic_pk[t.id], number=i.id, text=i.text, weight=i.weight, type=i.type or Subtopic.Type.INF, position=n)
            for t in col.topics.values()
            for n, i in enumerate(t.intents)
        ],
        batch_size=BATCH,
    )
    subtopic_pk = {
        (t, number): pk
        for t, number, pk in Subtopic.objects.filter(topic__collection=collection).values_list("topic__topic_id", "number", "pk")
    }
    docids = _all_docids(col, [r for _, r in parsed.runs], parsed.documents)
    info = parsed.documents
    blank = DocumentInfo("")
    _insert(
        Document,
        ["collection", "docid", "title", "url", "snippet"],
        [(collection.pk, d, info.get(d, blank).title, info.get(d, blank).url, info.get(d, blank).snippet) for d in docids],
    )
    doc_pk = dict(Document.objects.filter(collection=collection).values_list("docid", "pk"))
    judgments: list[tuple] = []
    for tid, docs in col.judgments.items():
        for doc, grades in docs.items():
            if not grades:  # judged, relevant to no intent
                judgments.append((topic_pk[tid], None, doc_pk[doc], 0))
            judgments += [(topic_pk[tid], subtopic_pk[tid, intent], doc_pk[doc], grade) for intent, grade in grades.items()]
    _insert(Judgment, ["topic", "subtopic", "document", "grade"], judgments)
    items: list[tuple] = []
    for path, run in parsed.runs:
        row = Run.objects.create(collection=collection, name=run.name, source=Path(path).name)
        for tid, docs in run.lists.items():
            if tid in topic_pk:
                items += [(row.pk, topic_pk[tid], rank, doc_pk[d]) for rank, d in enumerate(docs, start=1)]
    _insert(RankedItem, ["run", "topic", "rank", "document"], items)
    summary.topics = len(topic_pk)
    summary.subtopics = len(subtopic_pk)
    summary.documents = len(doc_pk)
    summary.documents_with_display_data = sum(1 for d in docids if d in info)
    summary.judgments = len(judgments)
    summary.runs = len(parsed.runs)
    summary.ranked_items = len(items)
    depth = BY_NAME["depth"].default  # what a study shows unless its configuration says otherwise
    summary.bare = bare_documents(collection.name, Run.objects.filter(collection=collection).values_list("pk", flat=True), None, depth)
    return summary
