"""``manage.py erase_participant STUDY PID``: erase one participant's data on request (docs/studyapp.md#withdrawal-and-erasure)."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError, CommandParser

from studyapp.exceptions import StudyError
from studyapp.management.studies import find_study
from studyapp.models import ErasureLog
from studyapp.services.data.erasure import erase, find_participant
from studyapp.services.wording import count


class Command(BaseCommand):
    help = (
        "Erase everything recorded about one participant of a study (consents, items, answers, quality decisions); "
        "their unanswered and answered places re-open for others. The erasure log keeps only counts and the time."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("study", help="study name or slug")
        parser.add_argument("pid", help="the participant's platform id (Prolific PID, MTurk worker id) or internal code")

    def handle(self, *args, **opts) -> None:
        study = find_study(opts["study"])
        try:
            entry = erase(find_participant(study, opts["pid"]), source=ErasureLog.Source.COMMAND)
        except StudyError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(
            f"Erased: {count(entry.answers, 'answer')} and {count(entry.assignments, 'item')} of one participant of {study.name!r}."
        )
