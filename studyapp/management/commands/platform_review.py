"""``manage.py platform_review STUDY``: review the study's submissions on their platform; sends only with --apply."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from studyapp.exceptions import StudyError
from studyapp.management.studies import find_study
from studyapp.services.access import teams
from studyapp.services.platforms.review_api import ApiError
from studyapp.services.review import decisions, sending
from studyapp.services.wording import count

COLUMNS = ("pseudonym", "suggested", "decision", "category", "bonus", "by", "state", "message / why")


class Command(BaseCommand):
    help = (
        "Show, per submission of a study, the decision its rules suggest (approve, with the study's bonus; reject with "
        "the platform's category and a message from the broken rule; or no action, with why), staff's changes, and what "
        "would be sent to the platform's API. Sends nothing unless given --apply (--dry-run wins). Applying asks the "
        "platform's state first (never sends a decision twice, never pays a bonus twice) and records every call."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("study", help="study name or slug")
        parser.add_argument("--apply", action="store_true", help="store the changes and send the decisions and bonuses")
        parser.add_argument("--dry-run", action="store_true", help="show what would be sent, send and store nothing (wins over --apply)")
        parser.add_argument("--override", action="append", default=[], metavar="PSEUDONYM=DECISION",
                            help="change a decision: approve, skip or reject:CATEGORY:message (repeatable)")  # fmt: skip
        parser.add_argument("--bonus", action="append", default=[], metavar="PSEUDONYM=AMOUNT",
                            help="change the bonus of an approved submission, e.g. 1.50 (0: none; repeatable)")  # fmt: skip
        parser.add_argument("--bonus-settled", action="append", default=[], metavar="PSEUDONYM=paid|unpaid",
                            help="after checking the platform: a bonus payment whose outcome was unknown was paid or not")  # fmt: skip
        parser.add_argument("--user", help="staff user the changes and calls are recorded for (default: none, shown as manage.py)")

    def handle(self, *args, **opts) -> None:
        study = find_study(opts["study"])
        send = opts["apply"] and not opts["dry_run"]
        staff = self._staff(opts["user"], study)
        try:
            overrides = [decisions.parse_override(spec) for spec in opts["override"]]
            bonuses = [decisions.parse_bonus(spec) for spec in opts["bonus"]]
            settled = [self._settled(spec) for spec in opts["bonus_settled"]]
            rows = decisions.review_rows(study)
            decided = decisions.changes(rows, overrides, bonuses)
            settle = [(decisions.row_of(rows, pseudonym), paid) for pseudonym, paid in settled]
        except StudyError as exc:
            raise CommandError(str(exc)) from None
        for row, decision in decided:  # shown as they would be stored
            row.final = decision
        self._table(rows, {row.pseudonym for row, _ in decided})
        if not send:
            steps = sending.plan(rows)
            self.stdout.write("\nWould send (nothing is sent without --apply):" if not opts["dry_run"] else "\nDry run, would send:")
            self._steps([s for s in steps if s.operation != "nothing"] or [sending.Step("-", "nothing", "nothing to send")])
            return
        try:
            clients = sending.clients_for(rows)  # missing credentials: stop before anything is stored
            for row, paid in settle:
                sending.resolve_unknown_bonus(row, paid=paid, staff=staff)
            decisions.store(study, decided, staff)
        except (ApiError, StudyError) as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write("\nSending:")
        steps = sending.apply(study, staff=staff, clients=clients, progress=lambda s: self._steps([s]))
        failed = [s for s in steps if not s.ok]
        self.stdout.write(f"\n{len(steps) - len(failed)} done, {len(failed)} failed; every call is in the audit log.")
        if failed:
            raise CommandError(f"{count(len(failed), 'step')} failed (see above); run again with --apply to retry them")

    def _staff(self, name: str | None, study):
        if not name:
            return None
        user = get_user_model().objects.filter(username=name).first()
        if user is None or not teams.is_member(user, study):
            raise CommandError(f"--user {name!r}: no staff user of that name on the study's team")
        return user

    @staticmethod
    def _settled(spec: str) -> tuple[str, bool]:
        pseudonym, _, state = spec.partition("=")
        if state not in ("paid", "unpaid") or not pseudonym.strip():
            raise StudyError(f"--bonus-settled {spec!r}: write PSEUDONYM=paid or PSEUDONYM=unpaid")
        return pseudonym.strip(), state == "paid"

    def _table(self, rows: list[decisions.Row], changed: set[str]) -> None:
        lines = [COLUMNS]
        for row in rows:
            final, by = row.final, ("staff (this command)" if row.pseudonym in changed else row.decided_by)
            why = final.message or final.note
            lines.append((row.pseudonym, row.suggested.action, final.action, final.category or "-",
                          str(final.bonus) if final.bonus else "-", by, row.state(), why if len(why) <= 70 else why[:69] + "…"))  # fmt: skip
        widths = [max(len(line[i]) for line in lines) for i in range(len(COLUMNS) - 1)]
        for line in lines:
            self.stdout.write("  ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=False)) + "  " + line[-1])

    def _steps(self, steps: list[sending.Step]) -> None:
        for s in steps:
            self.stdout.write(f"  {s.pseudonym}  {s.operation}: {'' if s.ok else 'FAILED: '}{s.text}")
