"""``manage.py study_status``: progress of a study as text or JSON."""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db.models import Q

from studyapp.models import Study
from studyapp.services.status import render_text, study_status


class Command(BaseCommand):
    help = "Print a study's progress: presentations and answers per level, completeness, annotators, annotators still needed."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("study", help="study name or slug")
        parser.add_argument("--format", choices=["text", "json"], default="text")

    def handle(self, *args, **opts) -> None:
        study = Study.objects.filter(Q(name=opts["study"]) | Q(slug=opts["study"])).select_related("collection").first()
        if study is None:
            known = ", ".join(Study.objects.values_list("name", flat=True)) or "none"
            raise CommandError(f"no study named {opts['study']!r} (known: {known})")
        report = study_status(study)
        self.stdout.write(json.dumps(report, indent=2) if opts["format"] == "json" else render_text(report))
