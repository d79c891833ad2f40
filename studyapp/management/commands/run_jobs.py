"""``manage.py run_jobs``: the job worker. Runs the review page's Apply jobs (services.review.jobs) one after the
other, waiting for new ones; ``--once`` stops when none is left. Run one or more beside the web server."""

from __future__ import annotations

import time

from django.core.management.base import BaseCommand, CommandParser
from django.db import close_old_connections

from studyapp.services.review import jobs, leases
from studyapp.services.wording import count


class Command(BaseCommand):
    help = "Run the queued jobs (the review page's Apply), waiting for more; --once: until none is left."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--once", action="store_true", help="run what is queued, then stop (cron, tests)")
        parser.add_argument("--poll", type=float, default=2.0, metavar="SECONDS", help="how often to look for a job (default 2)")
        parser.add_argument("--stale", type=float, metavar="SECONDS",
                            help="take over a running job whose worker was silent this long (default STUDYAPP_JOB_STALE_SECONDS, 30); "
                                 "one whose process on this host has ended is taken over at once")  # fmt: skip

    def handle(self, *args, **opts) -> None:
        worker = leases.worker_name()
        self.stdout.write(f"job worker {worker}: waiting for jobs" + (" (until none is left)" if opts["once"] else ""))
        while True:
            job = jobs.claim(worker, opts["stale"])
            if job is None:
                if opts["once"]:
                    return
                time.sleep(opts["poll"])
                close_old_connections()  # a long wait: a connection past its age or broken is renewed
                continue
            self.stdout.write(f"job {job.pk}: apply {job.study.name} (attempt {job.attempts})")
            job = jobs.run(job)
            self.stdout.write(
                f"job {job.pk}: {job.status}, {count(job.steps_done, 'step')} done, {job.steps_failed} failed{': ' + job.error if job.error else ''}"
            )
