"""Import answers collected elsewhere into a study (``manage.py import_preferences``; docs/data-dictionary.md#importing).

The file has the export's columns, in any format the export writes (CSV, TSV, JSON Lines,
Parquet: evaluation.io.preference_formats); only ``level topic subtopic run_a
run_b value annotator`` are required. Every row is checked against the study's design before
anything is written (``file:line: reason`` for the first problem, :class:`ImportFailed`), then
annotators, assignments and answers are created in one transaction: all or nothing.

Each imported annotator becomes an annotator of the study with the file's name as its id
(platform none, ``external_ids = {"imported_from": <file name>}``), status ``finished`` or, when
the file marks their rows ``valid=false``, ``excluded`` with the file's reason. A name that is
already an annotator of the study is refused, so importing a file twice is an error, not a
duplicate.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from django.db import transaction

from evaluation.exceptions import FormatError
from evaluation.io.preference_formats import read_records
from evaluation.wording import named
from studyapp.exceptions import ImportFailed
from studyapp.models import Annotator, Assignment, Preference, Presentation, Study
from studyapp.models.annotation import EARLIEST, LATEST, PREFERENCE_MAX, PREFERENCE_MIN
from studyapp.models.study import SUBTOPIC, TOPIC
from studyapp.models.study_settings import Allocation
from studyapp.services import platforms
from studyapp.services.clock import now_or
from studyapp.services.participation.answers import CLIENT_MS_MAX, canonical_value
from studyapp.services.wording import count

REQUIRED = ("level", "topic", "subtopic", "run_a", "run_b", "value", "annotator")
NAME_MAX = Annotator._meta.get_field("external_id").max_length
REASON_MAX = 2000
MS_COLUMNS = ("client_ms", "visible_ms", "first_interaction_ms")
TRUE, FALSE = ("true", "1", "yes"), ("false", "0", "no")


@dataclass
class _Answer:
    line: int
    annotator: str
    presentation: Presentation
    a_on_left: bool
    canonical: int
    server_seconds: float | None
    ms: dict[str, int | None]
    served_at: datetime | None
    answered_at: datetime
    late: bool


@dataclass
class _Person:
    first_line: int
    valid: bool
    reason: str
    answers: list[_Answer] = field(default_factory=list)


@dataclass(frozen=True)
class ImportedPreferences:
    answers: int
    annotators: int
    excluded: int

    def line(self, study: Study) -> str:
        return f"imported {count(self.answers, 'answer')} of {count(self.annotators, 'annotator')} ({self.excluded} excluded) into study {study.name!r}"


def _records(path: Path) -> Iterator[tuple[int, dict[str, str]]]:
    """(line, cells as text) of a file in any registered preference format (the export's formats)."""
    try:
        records = read_records(path)
        yield from records.rows
    except FormatError as exc:
        raise ImportFailed(str(exc)) from None


class _Design:
    """The study's presentations by what a row names."""

    def __init__(self, study: Study) -> None:
        self.study = study
        self.levels = set(study.level_list)
        self.runs = set(study.study_runs.values_list("run__name", flat=True))
        self.presentations: dict[tuple[str, str, str, str, str, str], Presentation] = {}
        for p in Presentation.objects.filter(study=study).select_related("topic", "subtopic", "run_a", "run_b"):
            check = "" if p.kind == Presentation.Kind.PAIR else p.kind
            subtopic = p.subtopic.number if p.subtopic_id else ""
            self.presentations[(p.level, p.topic.topic_id, subtopic, p.run_a.name, p.run_b.name, check)] = p

    def find(self, cells: dict[str, str], where: str) -> tuple[Presentation, bool]:
        """The presentation a row names and whether the row's pair was given the other way round."""
        level, topic, subtopic = cells["level"], cells["topic"], cells["subtopic"]
        run_a, run_b, check = cells["run_a"], cells["run_b"], _check_kind(cells, where)
        if level not in (TOPIC, SUBTOPIC):
            raise ImportFailed(f"{where}: unknown level {level!r}; expected topic or subtopic")
        if level not in self.levels:
            raise ImportFailed(f"{where}: study {self.study.name!r} has no {level}-level items")
        if level == SUBTOPIC and not subtopic:
            raise ImportFailed(f"{where}: subtopic-level row without a subtopic")
        if level == TOPIC and subtopic:
            raise ImportFailed(f"{where}: topic-level row names subtopic {subtopic!r}; set level to subtopic")
        for name in (run_a, run_b):
            if name not in self.runs:
                raise ImportFailed(f"{where}: run {name!r} is not a run of the study ({', '.join(sorted(self.runs))})")
        if run_a == run_b and not check:
            raise ImportFailed(f"{where}: run_a and run_b are the same run {run_a!r} (only check items compare a run with itself)")
        swapped = run_a > run_b
        if swapped:
            run_a, run_b = run_b, run_a
        found = self.presentations.get((level, topic, subtopic, run_a, run_b, check))
        if found is None:
            item = f"{topic}/{subtopic}" if subtopic else topic
            raise ImportFailed(f"{where}: the study has no {level}-level {'check ' if check else ''}item {item} {run_a} vs {run_b}")
        return found, swapped


CHECK_KINDS = (Presentation.Kind.IDENTICAL, Presentation.Kind.DEGRADED)


def _check_kind(cells: dict[str, str], where: str) -> str:
    """The kind of check item a row names (empty for a regular item): ``check`` true/false with the kind
    in ``check_kind``, or, in files exported before ``check`` became a boolean, the kind in ``check``."""
    flag, kind = cells.get("check", "").lower(), cells.get("check_kind", "")
    if flag in CHECK_KINDS and not kind:  # an older export: check held the kind
        flag, kind = "true", flag
    if flag and flag not in TRUE + FALSE:
        raise ImportFailed(f"{where}: check must be true or false, got {flag!r}")
    if kind and kind not in CHECK_KINDS:
        raise ImportFailed(f"{where}: unknown check kind {kind!r}; expected identical, degraded or empty")
    if flag in TRUE and not kind:
        raise ImportFailed(f"{where}: a check item (check = true) needs its check_kind: identical or degraded")
    if flag in FALSE and kind:
        raise ImportFailed(f"{where}: check_kind {kind!r} on a regular item (check = false)")
    return kind


def _integer(cells: dict[str, str], column: str, where: str, low: int, high: int) -> int | None:
    raw = cells.get(column, "").strip()
    if not raw:
        return None
    try:
        number = int(raw)
    except ValueError:
        raise ImportFailed(f"{where}: {column} must be an integer, got {raw!r}") from None
    if not low <= number <= high:
        raise ImportFailed(f"{where}: {column} must be in [{low}, {high}], got {number}")
    return number


def _seconds(cells: dict[str, str], where: str) -> float | None:
    raw = cells.get("server_seconds", "").strip()
    if not raw:
        return None
    try:
        seconds = float(raw)
    except ValueError:
        raise ImportFailed(f"{where}: server_seconds must be a number, got {raw!r}") from None
    if not 0 <= seconds < 1e9:
        raise ImportFailed(f"{where}: server_seconds must be a non-negative number of seconds, got {raw}")
    return seconds


def _time(cells: dict[str, str], column: str, where: str) -> datetime | None:
    raw = cells.get(column, "").strip()
    if not raw:
        return None
    try:
        moment = datetime.fromisoformat(raw)
    except ValueError:
        raise ImportFailed(f"{where}: {column} must be an ISO 8601 time such as 2026-01-05T12:00:00+00:00, got {raw!r}") from None
    moment = moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
    if not EARLIEST <= moment < LATEST:
        raise ImportFailed(f"{where}: {column} must lie between {EARLIEST:%Y-%m-%d} and {LATEST:%Y-%m-%d}, got {raw!r}")
    return moment


def _flag(cells: dict[str, str], column: str, where: str, default: bool) -> bool:
    raw = cells.get(column, "").strip().lower()
    if not raw:
        return default
    if raw not in TRUE + FALSE:
        raise ImportFailed(f"{where}: {column} must be true or false, got {raw!r}")
    return raw in TRUE


def _parse(cells: dict[str, str], where: str, design: _Design, now: datetime) -> tuple[_Answer, bool, str]:
    """One row -> the answer, plus the row's validity and exclusion reason."""
    if "\x00" in "".join(cells.values()):
        raise ImportFailed(f"{where}: contains a NUL character")
    presentation, swapped = design.find(cells, where)
    value = _integer(cells, "value", where, PREFERENCE_MIN, PREFERENCE_MAX)
    if value is None:
        raise ImportFailed(f"{where}: value is empty")
    canonical = -value if swapped else value
    annotator = cells["annotator"].strip()
    if not annotator or len(annotator) > NAME_MAX:
        raise ImportFailed(f"{where}: annotator must be 1 to {NAME_MAX} characters, got {annotator!r}")
    left = cells.get("left_run", "").strip()
    if left and left not in (presentation.run_a.name, presentation.run_b.name):
        raise ImportFailed(f"{where}: left_run {left!r} is neither run of the pair")
    a_on_left = not left or left == presentation.run_a.name
    shown = _integer(cells, "shown_value", where, PREFERENCE_MIN, PREFERENCE_MAX)
    if shown is not None and canonical_value(shown, a_on_left) != canonical:
        raise ImportFailed(
            f"{where}: shown_value {shown} with {left or presentation.run_a.name} on the left does not give the canonical value {canonical}"
        )
    reason = cells.get("exclusion_reason", "").strip()[:REASON_MAX]
    answer = _Answer(
        line=0,
        annotator=annotator,
        presentation=presentation,
        a_on_left=a_on_left,
        canonical=canonical,
        server_seconds=_seconds(cells, where),
        ms={c: _integer(cells, c, where, 0, CLIENT_MS_MAX) for c in MS_COLUMNS},
        served_at=_time(cells, "served_at", where),
        answered_at=_time(cells, "answered_at", where) or now,
        late=_flag(cells, "late", where, False),
    )
    if answer.served_at is None and answer.answered_at - timedelta(seconds=answer.server_seconds or 0) < EARLIEST:
        raise ImportFailed(f"{where}: server_seconds {answer.server_seconds:g} would put the item's serving before {EARLIEST:%Y-%m-%d}")
    return answer, _flag(cells, "valid", where, True), reason


def read_answers(study: Study, path: str | Path, *, now: datetime | None = None) -> dict[str, _Person]:
    """Validate a whole file against ``study``; the answers grouped by annotator (nothing is written)."""
    path = Path(path)
    now = now_or(now)
    design = _Design(study)
    people: dict[str, _Person] = {}
    seen: dict[tuple[str, int], int] = {}
    header_checked = False
    for line, cells in _records(path):
        where = f"{path}:{line}"
        if not header_checked:
            missing = [c for c in REQUIRED if c not in cells and not (c == "subtopic" and study.levels == Study.Levels.TOPIC)]
            if missing:
                raise ImportFailed(f"{where}: lacks {named('column', missing)}; required: {' '.join(REQUIRED)}")
            header_checked = True
        cells = {k: (v or "").strip() for k, v in cells.items()}
        cells.setdefault("subtopic", "")
        answer, valid, reason = _parse(cells, where, design, now)
        answer.line = line
        key = (answer.annotator, answer.presentation.pk)
        if key in seen:
            raise ImportFailed(f"{where}: annotator {answer.annotator!r} answered this item twice (first on line {seen[key]})")
        seen[key] = line
        person = people.setdefault(answer.annotator, _Person(first_line=line, valid=valid, reason=reason))
        if person.valid != valid:
            raise ImportFailed(f"{where}: annotator {answer.annotator!r} is marked valid on line {person.first_line} but not here")
        person.answers.append(answer)
    if not people:
        raise ImportFailed(f"{path}: no answers")
    taken = Annotator.objects.filter(study=study, platform=platforms.ANONYMOUS.key, external_id__in=list(people))
    name = min(taken.values_list("external_id", flat=True), key=lambda n: people[n].first_line, default=None)
    if name is not None:
        raise ImportFailed(f"{path}:{people[name].first_line}: annotator {name!r} is already in study {study.name!r} (imported before?)")
    return people


def import_preferences(study: Study, path: str | Path, *, now: datetime | None = None) -> ImportedPreferences:
    """Validate ``path`` and store its answers in ``study`` in one transaction (all or nothing). An adaptive study takes
    none: its design-weighted estimates rest on which presentations its draws offered (docs/meta.md#adaptive-allocation),
    and answers given elsewhere were not offered by them."""
    if study.allocation == Allocation.ADAPTIVE:
        raise ImportFailed(
            f"study {study.name!r} uses adaptive allocation: answers collected elsewhere were not offered by its draws, and "
            f"its design-weighted estimates would weigh them as if they had been; import them into a uniform study of the "
            f'same design (its configuration with "allocation": "uniform", create_study --config)'
        )
    people = read_answers(study, path, now=now)
    source = Path(path).name
    with transaction.atomic():
        for name, person in people.items():
            times = [a.answered_at for a in person.answers]
            annotator = Annotator.objects.create(
                study=study,
                platform=platforms.ANONYMOUS.key,
                external_id=name,
                external_ids={"imported_from": source},
                status=Annotator.Status.FINISHED if person.valid else Annotator.Status.EXCLUDED,
                exclusion_reason="" if person.valid else (person.reason or f"excluded in {source}"),
                created_at=min(times),
                finished_at=max(times),
            )
            assignments = Assignment.objects.bulk_create(
                [_assignment(annotator, position, answer) for position, answer in enumerate(person.answers, start=1)]
            )
            Preference.objects.bulk_create(
                [_preference(assignment, answer) for assignment, answer in zip(assignments, person.answers, strict=True)]
            )
    total = sum(len(p.answers) for p in people.values())
    return ImportedPreferences(answers=total, annotators=len(people), excluded=sum(not p.valid for p in people.values()))


def _assignment(annotator: Annotator, position: int, answer: _Answer) -> Assignment:
    served = answer.served_at
    if served is None:
        served = answer.answered_at - timedelta(seconds=answer.server_seconds or 0)
    return Assignment(
        annotator=annotator,
        presentation=answer.presentation,
        position=position,
        a_on_left=answer.a_on_left,
        assigned_at=served,
        served_at=served,
        lease_expires_at=answer.answered_at,
    )


def _preference(assignment: Assignment, answer: _Answer) -> Preference:
    shown = answer.canonical if answer.a_on_left else -answer.canonical
    return Preference(
        assignment=assignment,
        value=shown,
        canonical=answer.canonical,
        server_seconds=answer.server_seconds,
        client_ms=answer.ms["client_ms"],
        visible_ms=answer.ms["visible_ms"],
        first_interaction_ms=answer.ms["first_interaction_ms"],
        request_id=f"import:{answer.line}",
        answered_at=answer.answered_at,
        late=answer.late,
    )
