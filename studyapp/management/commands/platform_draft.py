"""``manage.py platform_draft STUDY --platform prolific|mturk``: open the study on a recruitment platform
through its API (a Prolific draft study, an MTurk HIT); prints the call and sends nothing unless ``--apply``."""

from __future__ import annotations

import json
from decimal import Decimal, InvalidOperation

from django.core.management.base import BaseCommand, CommandError, CommandParser

from studyapp.management.studies import find_study
from studyapp.services.platforms.base import DraftOptions
from studyapp.services.platforms.review_api import ApiError
from studyapp.services.review import drafts
from studyapp.services.review.setup import base_url


def amount(text: str) -> Decimal:
    try:
        value = Decimal(text)
    except InvalidOperation:
        raise ValueError(f"not an amount: {text!r}") from None
    if not value.is_finite():
        raise ValueError(f"not an amount: {text!r}")
    return value


class Command(BaseCommand):
    help = (
        "Open a study on Prolific (an unpublished draft study) or MTurk (a HIT with the study as its ExternalQuestion) "
        "with the set-up page's values: the link, the places still needed, the completion code. Prints the call and "
        "sends nothing unless --apply. MTurk has no drafts: the HIT is created in the requester sandbox unless "
        "--production. Credentials come from the environment (PROLIFIC_API_TOKEN; AWS credentials for MTurk)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("study", help="study name or slug")
        parser.add_argument("--platform", required=True, help="prolific or mturk")
        parser.add_argument(
            "--reward", required=True, help="pay per participant (Prolific: the workspace's currency; MTurk: US dollars), e.g. 2.50"
        )
        parser.add_argument("--minutes", required=True, type=int, help="estimated minutes to finish the study")
        parser.add_argument("--title", default="", help="shown to participants (default: the study's name)")
        parser.add_argument("--description", default="", help="shown to participants (default: a short description of the task)")
        parser.add_argument("--keywords", default="", help="MTurk: comma-separated search keywords")
        parser.add_argument("--lifetime-days", type=int, default=7, help="MTurk: days the HIT can be accepted (default 7)")
        parser.add_argument("--base-url", default="", help="the site's public address (default: STUDYAPP_BASE_URL)")
        parser.add_argument("--apply", action="store_true", help="send the call (default: only print it)")
        parser.add_argument("--production", action="store_true", help="MTurk: create the HIT in production, not the sandbox")

    def handle(self, *args, **opts) -> None:
        study = find_study(opts["study"])
        try:
            base = opts["base_url"] or base_url(None)
            options = DraftOptions(
                reward=amount(opts["reward"]),
                minutes=opts["minutes"],
                title=opts["title"],
                description=opts["description"],
                keywords=opts["keywords"],
                lifetime_days=opts["lifetime_days"],
            )
            draft = drafts.plan(study, opts["platform"], base, options)
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        where = drafts.destination(draft, opts["production"])
        self.stdout.write(f"{draft.operation}{where}\n{json.dumps(draft.body, indent=2, ensure_ascii=False)}\n{draft.note}")
        if not opts["apply"]:
            self.stdout.write("Dry run: nothing sent (add --apply to send it).")
            return
        try:
            created, _ = drafts.create(study, draft, production=opts["production"])
        except ApiError as error:
            raise CommandError(f"{draft.operation} failed: {error}") from None
        self.stdout.write(created)
