"""``manage.py study_status``: progress of a study as text or JSON."""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandParser

from studyapp.management.studies import find_study
from studyapp.services.analysis.status import render_text, study_status


class Command(BaseCommand):
    help = (
        "Print a study's progress: presentations and answers per level, completeness, annotators, annotators still needed, "
        "and which allocation runs (adaptive: rounds drawn, decided)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("study", help="study name or slug")
        parser.add_argument("--format", choices=["text", "json"], default="text")

    def handle(self, *args, **opts) -> None:
        report = study_status(find_study(opts["study"]))
        self.stdout.write(json.dumps(report, indent=2) if opts["format"] == "json" else render_text(report))
