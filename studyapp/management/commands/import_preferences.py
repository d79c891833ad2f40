"""``manage.py import_preferences``: answers collected elsewhere, with the export's columns, into a study."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError, CommandParser

from studyapp.exceptions import ImportFailed
from studyapp.management.studies import find_study
from studyapp.services.data.preference_import import import_preferences


class Command(BaseCommand):
    help = (
        "Import answers collected elsewhere (CSV, TSV or JSON Lines with the columns of export_preferences; "
        "docs/data-dictionary.md#importing). Every row is checked first; nothing is stored unless all are valid."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("study", help="study name or slug")
        parser.add_argument("file", help="the answers: level topic subtopic run_a run_b value annotator [+ optional export columns]")

    def handle(self, *args, **opts) -> None:
        study = find_study(opts["study"])
        try:
            result = import_preferences(study, opts["file"])
        except ImportFailed as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(result.line(study))
