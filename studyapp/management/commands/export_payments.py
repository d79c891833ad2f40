"""``manage.py export_payments``: the staff-only payments table of a study (CSV, with raw platform ids)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from studyapp.management.studies import find_study
from studyapp.services.data.payments import payments_csv


class Command(BaseCommand):
    help = (
        "Write the payments table of a study as CSV: per annotator the platform id, status, whether the completion "
        "page was shown and its code, the quality rules broken, failed check items and whether the whole submission "
        "was exceptionally fast (more than 3 SD under the mean). Contains raw platform ids: keep it to staff."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("study", help="study name or slug")
        parser.add_argument("-o", "--output", help="file to write (written whole or not at all); default: standard output")

    def handle(self, *args, **opts) -> None:
        text = payments_csv(find_study(opts["study"]))
        if not opts["output"]:
            self.stdout.write(text, ending="")
            return
        target = Path(opts["output"])
        try:
            fd, tmp = tempfile.mkstemp(dir=target.parent if str(target.parent) else ".", prefix=f".{target.name}.", suffix=".tmp")
        except OSError as exc:
            raise CommandError(f"{target}: cannot write there ({exc.strerror})") from None
        try:
            with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
                f.write(text)
            os.replace(tmp, target)
        except OSError as exc:
            Path(tmp).unlink(missing_ok=True)
            raise CommandError(f"{target}: cannot write it ({exc.strerror})") from None
        self.stderr.write(f"{target}: {text.count(chr(10)) - 1} annotators")
