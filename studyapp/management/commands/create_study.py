"""``manage.py create_study``: design a study over an imported collection from a JSON configuration."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError, CommandParser

from studyapp.exceptions import StudyError
from studyapp.services.design.study_config import read_config
from studyapp.services.design.study_design import create_study


class Command(BaseCommand):
    help = "Create a study (runs, topics, kept subtopics, presentations) from a JSON configuration file."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--collection", required=True, help="name of an imported collection")
        parser.add_argument("--name", required=True, help="study name (unique; its slug is the annotator link)")
        parser.add_argument("--config", required=True, help="study.json (keys in docs/studyapp.md)")

    def handle(self, *args, **opts) -> None:
        try:
            summary = create_study(opts["collection"], opts["name"], read_config(opts["config"]))
        except StudyError as exc:
            raise CommandError(str(exc)) from None
        for line in summary.lines():
            self.stdout.write(line)
