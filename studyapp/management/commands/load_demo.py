"""``manage.py load_demo``: the bundled demo collection and study, plus a staff login (idempotent)."""

from __future__ import annotations

import os

from django.core.management.base import BaseCommand, CommandError, CommandParser

from studyapp.exceptions import StudyError
from studyapp.services.rehearsal.demo import load_demo


class Command(BaseCommand):
    help = "Import the demo collection, create the demo study and a staff user if missing; print the links."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--staff-password",
            default=os.environ.get("DEMO_STAFF_PASSWORD") or None,
            help="set this password for the staff user (default: $DEMO_STAFF_PASSWORD, else a random one on creation)",
        )
        parser.add_argument(
            "--no-simulated-study",
            action="store_true",
            help="skip the completed simulated study (created once: simulated annotators answer it through the pages, about 20 s)",
        )
        parser.add_argument(
            "--base-url",
            default=f"http://127.0.0.1:{os.environ.get('PORT') or 8000}",
            help="where the server runs, for the printed links (default: http://127.0.0.1:$PORT, PORT defaulting to 8000)",
        )

    def handle(self, *args, **opts) -> None:
        base = opts["base_url"].rstrip("/")
        if not base.startswith(("http://", "https://")):
            raise CommandError(f"--base-url must start with http:// or https://, got {opts['base_url']!r}")
        try:
            result = load_demo(staff_password=opts["staff_password"], simulated=not opts["no_simulated_study"])
        except StudyError as exc:
            raise CommandError(str(exc)) from None
        for line in result.notes:
            self.stdout.write(line)
        self.stdout.write(f"Demo collection: {'imported' if result.collection_created else 'already loaded'}.")
        self.stdout.write(f"Demo study: {result.study.name} ({'created' if result.study_created else 'already there'}).")
        link = f"{base}/s/{result.study.slug}/"
        self.stdout.write(f"Annotator link: {link}  (a Prolific participant: {link}?PROLIFIC_PID=test1&STUDY_ID=demo&SESSION_ID=s1)")
        if result.simulated is not None:
            state = "created and answered by simulated annotators" if result.simulated_created else "already there"
            self.stdout.write(f"Simulated study: {result.simulated.name} ({state}).")
            self.stdout.write(f"Study report (staff): {base}/staff/{result.simulated.slug}/report/")
        if not result.staff_username:
            self.stdout.write("Staff login: none created (production settings); use `python manage.py createsuperuser`")
        elif result.staff_password:
            self.stdout.write(f"Staff login: {base}/admin/  user {result.staff_username!r}  password {result.staff_password!r}")
        else:
            self.stdout.write(
                f"Staff login: {base}/admin/  user {result.staff_username!r}  (password unchanged; set one with "
                f"`python manage.py changepassword {result.staff_username}` or `load_demo --staff-password ...`)"
            )
