"""``manage.py purge_platform_ids [STUDY ...] [--older-than DAYS]``: the retention limit on raw platform ids."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError, CommandParser

from evaluation._argtypes import positive_int
from studyapp.exceptions import StudyError
from studyapp.management.studies import find_study
from studyapp.models import Study
from studyapp.services.data.erasure import purge_platform_ids


class Command(BaseCommand):
    help = (
        "Remove the raw platform ids (and arrival parameters) of participants last seen more than DAYS days ago; "
        "their answers stay under the same export pseudonym. Default DAYS: the study's platform_id_retention_days, "
        "else STUDYAPP_PLATFORM_ID_RETENTION_DAYS (90). Run it daily, e.g. from cron."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("studies", nargs="*", metavar="STUDY", help="study names or slugs (default: every study)")
        parser.add_argument("--older-than", type=positive_int, metavar="DAYS", help="days since the participant was last seen")

    def handle(self, *args, **opts) -> None:
        studies = [find_study(s) for s in opts["studies"]] or list(Study.objects.order_by("pk"))
        for study in studies:
            try:
                self.stdout.write(purge_platform_ids(study, days=opts["older_than"]).line())
            except StudyError as exc:
                raise CommandError(str(exc)) from None
