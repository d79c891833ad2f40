"""``manage.py export_preferences``: a study's answers in any registered preference format (CSV, JSON Lines, Parquet, ...; docs/data-dictionary.md)."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from evaluation.io.preference_formats import get_format
from studyapp.management.studies import find_study
from studyapp.services.data.export import ExportOptions, export_formats, export_rows, write_export, write_rows
from studyapp.services.wording import count as plural


class Command(BaseCommand):
    help = (
        "Export a study's answers, one row per answer (docs/data-dictionary.md); readable as is by "
        "'python -m evaluation meta agreement --preferences'. Default: valid answers to regular items, both levels, CSV on stdout."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("study", help="study name or slug")
        formats = export_formats()
        binary = [name for name in formats if get_format(name).binary]
        parser.add_argument(
            "--format",
            choices=formats,
            default="csv",
            help=f"one of {', '.join(formats)} (default csv; {', '.join(binary) or 'none'} need -o)",
        )
        parser.add_argument("--level", choices=["topic", "subtopic"], help="only this level (default: every level of the study)")
        parser.add_argument("--include-excluded", action="store_true", help="add the answers of excluded annotators (valid=false)")
        parser.add_argument("--include-checks", action="store_true", help="add check items (not an input of meta agreement)")
        parser.add_argument("-o", "--output", metavar="FILE", help="write here (atomically) instead of standard output")

    def handle(self, *args, **opts) -> None:
        study = find_study(opts["study"])
        fmt, output = opts["format"], opts["output"]
        options = ExportOptions(level=opts["level"], include_excluded=opts["include_excluded"], include_checks=opts["include_checks"])
        if output is None:
            if get_format(fmt).binary:
                raise CommandError(f"--format {fmt} writes a binary file: give -o FILE")
            count = write_rows(export_rows(study, options), fmt, self.stdout)
        else:
            path = Path(output)
            if not path.parent.is_dir():
                raise CommandError(f"{output}: the folder {str(path.parent)!r} does not exist")
            if path.is_dir():
                raise CommandError(f"{output}: is a folder; give a file name")
            try:
                count = write_export(study, fmt, path, options)
            except OSError as exc:
                raise CommandError(f"{output}: {exc.strerror or exc}") from None
        self.stderr.write(f"exported {plural(count, 'answer')} of study {study.name!r}" + (f" to {output}" if output else ""))
