"""``manage.py quality_check``: re-evaluate every annotator of a study with its current quality settings."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandParser

from studyapp.management.studies import find_study
from studyapp.services.quality.control import quality_check


class Command(BaseCommand):
    help = (
        "Re-evaluate every annotator of a study with the current quality settings: exclude those who now break an "
        "excluding rule (their presentations re-open), reinstate those a rule excluded and no rule excludes any more "
        "(never those staff decided on). Every change is logged as a quality decision."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("study", help="study name or slug")
        parser.add_argument("--dry-run", action="store_true", help="report what would change, write nothing")

    def handle(self, *args, **opts) -> None:
        report = quality_check(find_study(opts["study"]), dry_run=opts["dry_run"])
        self.stdout.write("\n".join(report.lines()))
