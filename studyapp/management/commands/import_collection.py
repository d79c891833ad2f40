"""``manage.py import_collection``: load qrels, intents, topics, display data and runs in one transaction."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError, CommandParser

from evaluation.exceptions import EvaluationError
from evaluation.io.inputs import run_paths
from studyapp.exceptions import StudyError
from studyapp.services.collections.importing import import_collection


class Command(BaseCommand):
    help = "Import a test collection (qrels + optional intents/topics/display data) and its runs; all or nothing."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--name", required=True, help="collection name (unique)")
        parser.add_argument("--qrels", required=True, help="TREC diversity qrels or NTCIR Dqrels")
        parser.add_argument("--intents", help="intent weights: topic intent prob [inf|nav]")
        parser.add_argument(
            "--topics",
            help="topic file: TREC topic XML, NTCIR topic XML or NTCIR tab-separated text (queries, descriptions, subtopic texts)",
        )
        parser.add_argument("--docs", help="display data: JSONL {docid,title,url,snippet} or TSV with those columns")
        parser.add_argument(
            "--run",
            action="extend",
            nargs="+",
            required=True,
            dest="runs",
            metavar="FILE",
            help="TREC run files (several after one --run, e.g. a shell glob runs/*.run, or a directory of run files; repeatable)",
        )
        parser.add_argument("--description", default="", help="free text shown in the admin")
        parser.add_argument("--replace", action="store_true", help="replace an existing collection of that name")

    def handle(self, *args, **opts) -> None:
        try:
            summary = import_collection(
                opts["name"],
                qrels=opts["qrels"],
                runs=run_paths(opts["runs"]),  # a directory stands for its run files, as in diversity-eval score
                intents=opts["intents"],
                topics=opts["topics"],
                docs=opts["docs"],
                replace=opts["replace"],
                description=opts["description"],
            )
        except (StudyError, EvaluationError) as exc:  # EvaluationError: a --run directory without run files
            raise CommandError(str(exc)) from None
        for line in summary.lines():
            self.stdout.write(line)
