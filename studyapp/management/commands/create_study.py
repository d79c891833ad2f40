"""``manage.py create_study``: design a study over an imported collection from a JSON configuration."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from studyapp.exceptions import InvalidStudyConfig, StudyError
from studyapp.models.study_settings import Allocation
from studyapp.services.access.teams import set_team
from studyapp.services.analysis.decided_signal import creation_lines
from studyapp.services.collections.bare_documents import MAX_BARE_SHARE
from studyapp.services.design.study_config import parse_config, read_json
from studyapp.services.design.study_design import config_problems, create_study


class Command(BaseCommand):
    help = "Create a study (runs, topics, kept subtopics, presentations) from a JSON configuration file."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--collection", required=True, help="name of an imported collection")
        parser.add_argument("--name", required=True, help="study name (unique; its slug is the annotator link)")
        parser.add_argument("--config", required=True, help="study.json (keys in docs/studyapp.md)")
        parser.add_argument(
            "--base-url",
            default="",
            help="the site's public address for the printed links (default STUDYAPP_BASE_URL; without either the links are paths)",
        )
        parser.add_argument(
            "--max-bare-share",
            type=float,
            default=MAX_BARE_SHARE,
            metavar="SHARE",
            help=f"refuse the study when more than this share (0..1) of the documents it shows have no display data (default {MAX_BARE_SHARE})",
        )
        parser.add_argument(
            "--allow-bare-documents", action="store_true", help="create the study whatever share of its documents lack display data"
        )
        parser.add_argument(
            "--owner", metavar="USER", help="staff user who owns the study and manages its team (docs/studyapp.md#study-teams)"
        )
        parser.add_argument(
            "--plan",
            action="store_true",
            help="also print the planning table (manage.py plan_study: best-set size and cost per participant count)",
        )
        parser.add_argument("--reward", default="0", help="with --plan: reward per participant for the cost column")
        parser.add_argument("--member", action="append", default=[], metavar="USER", help="staff user on the study's team (repeatable)")
        parser.add_argument(
            "--platform-ids",
            action="append",
            default=[],
            metavar="USER",
            help="let this owner or member see raw platform ids, e.g. to pay (repeatable)",
        )

    def handle(self, *args, **opts) -> None:
        share = opts["max_bare_share"]
        if not 0 <= share <= 1:
            raise CommandError(f"--max-bare-share must be between 0 and 1, got {share}")
        try:
            raw = read_json(opts["config"])
            problems = config_problems(opts["collection"], opts["name"], raw)  # all at once, with suggestions
            if problems:
                raise InvalidStudyConfig(problems)
            config = parse_config(raw)
            with transaction.atomic():  # a study with a team that could not be made is not created either
                summary = create_study(
                    opts["collection"], opts["name"], config, max_bare_share=None if opts["allow_bare_documents"] else share
                )
                team = set_team(summary.study, opts["owner"], opts["member"], opts["platform_ids"])
        except StudyError as exc:
            raise CommandError(str(exc)) from None
        base = opts["base_url"]
        if base and not base.startswith(("http://", "https://")):
            raise CommandError(f"--base-url must start with http:// or https://, got {base!r}")
        for line in summary.lines(base) + team:
            self.stdout.write(line)
        if summary.study.allocation == Allocation.ADAPTIVE:
            for line in creation_lines(summary.study.slug, summary.topics, summary.study.candidate_metrics):
                self.stdout.write(line)
        if opts["plan"]:
            from django.core.management import call_command

            call_command("plan_study", summary.study.slug, "--reward", opts["reward"], stdout=self.stdout, stderr=self.stderr)
        else:
            self.stdout.write(
                f"Before recruiting: manage.py plan_study {summary.study.slug} --reward AMOUNT prints the expected best-set size, "
                "the chance of a single entry and the cost for a grid of participant counts (or create with --plan)."
            )
        if not team:
            self.stdout.write("No team yet: only superusers see it on the staff pages (add --owner/--member, or a team in the admin).")
