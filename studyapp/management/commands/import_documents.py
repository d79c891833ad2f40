"""``manage.py import_documents``: titles, URLs and text of a collection's ranked documents from WARC files,
HTML folders or JSON Lines (docs/studyapp.md#import_documents)."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError, CommandParser

from studyapp.exceptions import StudyError
from studyapp.services.collections.bounded_input import MB, Limits
from studyapp.services.collections.documents_import import import_documents


class Command(BaseCommand):
    help = (
        "Fill the display data (title, URL, main text for query-biased snippets) of COLLECTION's ranked documents "
        "from SOURCEs: .warc/.warc.gz files (docid from WARC-TREC-ID), folders of <docid>.html files, or JSON Lines "
        '({"docid", "url"?, "title"?, "html"? | "text"?}). Qrels and runs are never touched.'
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("collection", help="name of an imported collection")
        parser.add_argument("sources", nargs="+", metavar="SOURCE", help="WARC file, folder of HTML files or .jsonl file")
        parser.add_argument("--depth", type=int, help="only documents ranked within this depth (default: every ranked document)")
        parser.add_argument(
            "--max-record-mb",
            type=int,
            default=Limits.record_bytes // MB,
            help="skip (and count) records, JSON lines and HTML files larger than this decompressed (default %(default)s)",
        )
        parser.add_argument("--max-file-mb", type=int, default=Limits.file_bytes // MB,
                            help="refuse a source file that decompresses to more than this (default %(default)s)")  # fmt: skip
        parser.add_argument("--no-progress", action="store_true", help="no progress bar")

    def handle(self, *args, **opts) -> None:
        try:
            limits = Limits(record_bytes=opts["max_record_mb"] * MB, file_bytes=opts["max_file_mb"] * MB)
            result = import_documents(
                opts["collection"], opts["sources"], depth=opts["depth"], progress=not opts["no_progress"], limits=limits
            )
        except StudyError as exc:
            raise CommandError(str(exc)) from None
        for line in result.lines():
            self.stdout.write(line)
