"""Must-show 1 of issue 30: bonuses paid exactly once under every fault of the local Prolific server (slow answers,
a connection dropped after the request was received, 5xx, Retry-After, a worker killed mid-call with SIGKILL),
through the apply of ``platform_review --apply`` (in this process and as a real process killed by pid) and the
review page's job worker (``manage.py run_jobs``, killed the same way, then taken over by another at once); the
server counts the payments, and every request it received is in the audit log.

Every test here runs on SQLite and, in the PostgreSQL child run of ``test_postgresql.py`` (CI), on PostgreSQL: the
killed processes then work on a scratch database of that server (:class:`ScratchDatabase`), and each killed-process
test prints ``[postgresql] payment faults: ...``, which the parent requires in the child's output."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from contextlib import closing
from pathlib import Path
from unittest import mock

from django.db import connection

from studyapp.models import Annotator, PlatformCall, ReviewDecision
from studyapp.services.platforms.prolific_api import ProlificReviewClient
from studyapp.services.review import audit, decisions, sending
from tests.studyapp.test_platform_review import PAY, SETUP, TOKEN, TRANSITION, PlatformReviewTestCase

ROOT = Path(__file__).resolve().parents[2]


def audit_misses(requests, calls) -> list[str]:
    """The requests the server received that no audit row names (method and path), with their count."""
    logged = Counter((c.get("method"), c.get("path")) for c in calls)
    received = Counter((r.method, r.path.split("?")[0]) for r in requests)
    return [f"{m} {p} x{n - logged[(m, p)]}" for (m, p), n in received.items() if logged[(m, p)] < n]


def audit_extra(requests, calls) -> list[str]:
    """The audit rows beyond the requests the server received (a request logged twice), with their count."""
    logged = Counter((c.get("method"), c.get("path")) for c in calls)
    received = Counter((r.method, r.path.split("?")[0]) for r in requests)
    return [f"{m} {p} x{n - received[(m, p)]}" for (m, p), n in logged.items() if received[(m, p)] < n]


class FaultTests(PlatformReviewTestCase):
    """Each fault on the pay call (or the set-up), then applies until nothing is due: every bonus paid once."""

    def prolific(self) -> dict:
        return {"prolific": ProlificReviewClient(TOKEN, self.api.url, sleep=self.sleeps.append, timeout=1.0)}

    def apply_until_settled(self, rounds: int = 3) -> list[sending.Step]:
        steps = []
        for _ in range(rounds):
            steps += sending.apply(self.study, clients=self.prolific())
        return steps

    def assert_paid_once_and_logged(self) -> None:
        finished = {a.external_ids["SESSION_ID"] for a in self.annotators if a.status == Annotator.Status.FINISHED}
        self.assertEqual(len(finished), 6)
        self.assertEqual({sid: self.api.payments_of(sid) for sid in finished}, dict.fromkeys(finished, 1))
        self.assertEqual(len(self.api.paid), 6)
        paid = ReviewDecision.objects.filter(bonus_paid_at__isnull=False)
        self.assertEqual(paid.count(), 6)
        self.assertFalse(ReviewDecision.objects.filter(bonus_unknown=True).exists())
        logged = PlatformCall.objects.values_list("request", flat=True)
        self.assertEqual(audit_misses(self.api.requests, logged), [])  # every request received has its row
        self.assertEqual(audit_extra(self.api.requests, logged), [])  # and only one
        self.assertFalse(PlatformCall.objects.filter(response=audit.SENT).exists())  # each completed or annotated
        self.assertEqual(sending.still_due(self.study), 0)

    def test_a_slow_answer_outlasting_the_timeout(self) -> None:
        self.api.fail("POST", PAY, delay=2.5)  # paid at once, answered after the client gave up (1 s)
        first = sending.apply(self.study, clients=self.prolific())
        self.assertTrue(any("outcome unknown" in s.text for s in first), first)
        self.assertEqual(ReviewDecision.objects.filter(bonus_unknown=True).count(), 6)  # never free to send again
        steps = self.apply_until_settled()
        self.assertTrue(any("found paid on Prolific" in s.text for s in steps), steps)
        self.assertEqual(len(self.api.calls("POST", PAY)), 1)
        self.assert_paid_once_and_logged()

    def test_a_connection_dropped_after_the_request_was_received(self) -> None:
        self.api.fail("POST", PAY, drop=True)
        self.apply_until_settled()
        self.assertEqual(len(self.api.calls("POST", PAY)), 1)
        self.assert_paid_once_and_logged()
        checks = PlatformCall.objects.filter(operation="bonus_check", ok=True)
        self.assertEqual(checks.count(), 6)  # asked once per bonus, then recorded as paid

    def test_a_500_after_paying(self) -> None:
        self.api.fail("POST", PAY, 500, carried_out=True)
        self.apply_until_settled()
        self.assert_paid_once_and_logged()

    def test_503_and_retry_after_are_waited_for(self) -> None:
        self.api.fail("POST", PAY, 503)  # not carried out: retried at once
        self.api.fail("POST", PAY, 429, retry_after=3)
        self.apply_until_settled()
        self.assertIn(3.0, self.sleeps)
        self.assertEqual(len(self.api.calls("POST", PAY)), 3)
        self.assert_paid_once_and_logged()

    def test_an_outage_outlasting_the_retries_pays_later_through_the_same_bulk_bonus(self) -> None:
        self.api.fail("POST", PAY, 503, times=3)
        first = sending.apply(self.study, clients=self.prolific())
        self.assertTrue(any("tried again on the next apply" in s.text for s in first))
        self.assertFalse(ReviewDecision.objects.filter(bonus_unknown=True).exists())  # a clean "not carried out"
        self.apply_until_settled()
        self.assertEqual(len(self.api.calls("POST", SETUP)), 1)
        self.assert_paid_once_and_logged()

    def test_a_lost_set_up_answer_is_never_paid(self) -> None:
        self.api.fail("POST", SETUP, drop=True)  # Prolific set up a bulk bonus whose id we never learn
        self.apply_until_settled()
        self.assertEqual(len(self.api.bulk), 2)  # the orphan stays unpaid; the second is paid
        self.assert_paid_once_and_logged()

    def test_what_the_platform_cannot_tell_is_left_to_staff(self) -> None:
        self.api.fail("POST", PAY, drop=True)
        self.api.lists_bonuses = False  # Prolific pays asynchronously: the bonus is not listed yet
        steps = self.apply_until_settled()
        self.assertTrue(any("does not show whether it was paid" in s.text for s in steps))
        self.assertEqual(len(self.api.calls("POST", PAY)), 1)
        self.assertEqual(ReviewDecision.objects.filter(bonus_unknown=True).count(), 6)
        for row in decisions.review_rows(self.study):
            if row.record is not None and row.record.bonus_unknown:
                sending.resolve_unknown_bonus(row, paid=True)
        self.assertEqual(len(self.api.paid), 6)

    def test_an_interrupt_during_the_pay_call_leaves_the_outcome_unknown(self) -> None:
        """Ctrl-C or SystemExit while waiting for the answer: the marker committed before the call stays."""
        for stop in (KeyboardInterrupt, SystemExit):
            with self.subTest(stop.__name__):
                ReviewDecision.objects.all().delete()
                self.api.paid.clear()
                original = ProlificReviewClient._send

                def interrupted(client, method, path, body, original=original, stop=stop):
                    if path.endswith("/pay/"):
                        original(client, method, path, body)  # the platform pays; the answer never gets back
                        raise stop()
                    return original(client, method, path, body)

                with mock.patch.object(ProlificReviewClient, "_send", interrupted), self.assertRaises(stop):
                    sending.apply(self.study, clients=self.prolific())
                self.assertEqual(ReviewDecision.objects.filter(bonus_unknown=True).count(), 6)
                self.assertEqual(PlatformCall.objects.filter(response=audit.SENT).count() >= 1, True)
                sending.apply(self.study, clients=self.prolific())
                self.assertEqual(len(self.api.paid), 6)
                self.assertEqual(ReviewDecision.objects.filter(bonus_paid_at__isnull=False).count(), 6)


SETUP_SCRIPT = """
import json
from studyapp.models import Annotator
from studyapp.services.quality.control import quality_check
from studyapp.services.rehearsal.simulation import Plan, simulate_annotators
from tests.studyapp.base import import_toy, make_toy_study
import_toy()
study = make_toy_study(name="Review study", check_share=0.34, fast_limit=1000, check_fail_limit=None)
simulate_annotators(study, Plan(truth="D#-nDCG@10", noise=0.5, fast_share=0.4, seed=4))
study.check_fail_limit, study.bonus_amount = 0, "0.75"
study.save()
quality_check(study)
rows = [[a.external_ids["SESSION_ID"], a.external_id, a.external_ids["STUDY_ID"], a.status] for a in Annotator.objects.filter(study=study)]
print("STUDY=" + json.dumps({"slug": study.slug, "annotators": rows}))
"""


class ScratchDatabase:
    """A database of its own for the ``manage.py`` processes of one test, on the engine the tests run on: a file for
    SQLite, a fresh database on the same server for PostgreSQL (dropped afterwards); with ``template``, a copy of
    that one (the file copied; PostgreSQL's ``CREATE DATABASE ... TEMPLATE``)."""

    def __init__(self, folder: Path, template: ScratchDatabase | None = None) -> None:
        self.vendor, self.folder = connection.vendor, folder
        if self.vendor == "postgresql":
            given = connection.settings_dict
            self.server = {"host": given["HOST"] or "127.0.0.1", "port": given["PORT"] or 5432, "user": given["USER"],
                           "password": given["PASSWORD"], "dbname": given["NAME"]}  # fmt: skip
            self.name = f"{given['NAME']}_payfaults_{uuid.uuid4().hex[:8]}"
            self._admin(f'CREATE DATABASE "{self.name}"' + (f' TEMPLATE "{template.name}"' if template else ""))
            self.url = f"postgres://{given['USER']}:{given['PASSWORD']}@{self.server['host']}:{self.server['port']}/{self.name}"
        else:
            self.url = f"sqlite:///{folder / 'db.sqlite3'}"
            if template is not None:  # SQLite's backup: the pages still in the template's write-ahead log too
                with (
                    closing(sqlite3.connect(template.folder / "db.sqlite3")) as source,
                    closing(sqlite3.connect(folder / "db.sqlite3")) as copy,
                ):
                    source.backup(copy)

    def rows(self, sql: str) -> list[tuple]:
        if self.vendor == "postgresql":
            import psycopg

            with psycopg.connect(**{**self.server, "dbname": self.name}) as db:
                return [tuple(r) for r in db.execute(sql).fetchall()]
        with sqlite3.connect(self.folder / "db.sqlite3") as db:
            return list(db.execute(sql))

    def drop(self) -> None:
        if self.vendor == "postgresql":
            self._admin(f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)')
        shutil.rmtree(self.folder, ignore_errors=True)

    def _admin(self, sql: str) -> None:
        import psycopg

        with psycopg.connect(**self.server, autocommit=True) as db:
            db.execute(sql)


def manage(env: dict[str, str], *args: str, check: bool = True) -> str:
    """``manage.py`` run as its own process with ``env``; its standard output (a failure shows both streams)."""
    result = subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    if check:
        assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def scratch_environment(db: ScratchDatabase, key: Path) -> dict[str, str]:
    return {**os.environ, "DATABASE_URL": db.url, "DJANGO_SECRET_KEY_FILE": str(key), "PROLIFIC_API_TOKEN": TOKEN,
            "STUDYAPP_CACHE_URL": "locmem"}  # fmt: skip


_reviewed: list[tuple[ScratchDatabase, dict]] = []


def reviewed_study() -> tuple[ScratchDatabase, dict]:
    """The migrated scratch database with the reviewed study of :data:`SETUP_SCRIPT` (and what it printed), made by
    ``manage.py`` processes once per module: each test works on a copy of it (:class:`ScratchDatabase`), as
    fresh as if it had migrated and set up its own (the migration and the simulated study took most of a test)."""
    if not _reviewed:
        folder = Path(tempfile.mkdtemp(prefix="studyapp-payfaults-template-"))
        template = ScratchDatabase(folder)
        try:
            env = scratch_environment(template, folder / "key")
            manage(env, "migrate", "--noinput")
            out = manage(env, "shell", "-c", SETUP_SCRIPT)
        except BaseException:
            template.drop()
            raise
        _reviewed.append((template, json.loads(out.split("STUDY=", 1)[1].splitlines()[0])))
    return _reviewed[0]


def tearDownModule() -> None:  # noqa: N802 (unittest's name, which pytest calls too)
    while _reviewed:
        _reviewed.pop()[0].drop()


class KilledWorkerTestCase(PlatformReviewTestCase):
    """A real ``manage.py`` process on a scratch database (:class:`ScratchDatabase`), killed with SIGKILL (by pid)
    while the pay call waits."""

    def setUp(self) -> None:
        super().setUp()
        template, data = reviewed_study()
        self.tmp = Path(tempfile.mkdtemp(prefix="studyapp-payfaults-"))
        self.db = ScratchDatabase(self.tmp, template)
        self.addCleanup(self.db.drop)
        self.env = {**scratch_environment(self.db, template.folder / "key"), "PROLIFIC_API_URL": self.api.url}
        self.slug = data["slug"]
        self.api.submissions.clear()
        for session, participant, study_ref, _ in data["annotators"]:
            self.api.add(session, participant, study_ref)
        self.finished = {s for s, _, _, status in data["annotators"] if status == "finished"}

    def manage(self, *args: str, check: bool = True) -> str:
        return manage(self.env, *args, check=check)

    def start(self, *args: str) -> subprocess.Popen:
        return subprocess.Popen([sys.executable, "manage.py", *args], cwd=ROOT, env=self.env, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True)  # fmt: skip

    def kill_when_paying(self, process: subprocess.Popen) -> None:
        """SIGKILL ``process`` once the server holds its pay request (already carried out, the answer delayed)."""
        deadline = time.monotonic() + 120
        while not self.api.calls("POST", PAY) and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.1)
        self.assertTrue(self.api.calls("POST", PAY), "the worker never sent the pay call")
        os.kill(process.pid, signal.SIGKILL)
        self.assertEqual(process.wait(timeout=30), -signal.SIGKILL)

    def audit(self) -> list[dict]:
        return [r if isinstance(r, dict) else json.loads(r) for (r,) in self.db.rows("SELECT request FROM studyapp_platformcall")]

    def calls(self) -> list[tuple]:
        """``(request, operation, ok, status, response)`` of every audit row."""
        rows = self.db.rows("SELECT request, operation, ok, status, response FROM studyapp_platformcall")
        return [(r if isinstance(r, dict) else json.loads(r), op, bool(ok), status, text) for r, op, ok, status, text in rows]

    def decisions(self) -> list[tuple]:
        """``(pay sent with its outcome unknown, paid)`` per decision with a bonus."""
        rows = self.db.rows("SELECT bonus_unknown, bonus_paid_at IS NOT NULL FROM studyapp_reviewdecision WHERE bonus > 0")
        return [(int(unknown), int(paid)) for unknown, paid in rows]

    def claims(self) -> list[tuple]:
        """``(claimed since, by)`` of every decision claimed by an apply."""
        return self.db.rows("SELECT claimed_at, claimed_by FROM studyapp_reviewdecision WHERE claimed_at IS NOT NULL")

    def assert_paid_once(self) -> None:
        self.assertEqual(len(self.finished), 6)
        self.assertEqual({s: self.api.payments_of(s) for s in self.finished}, dict.fromkeys(self.finished, 1))
        self.assertEqual(len(self.api.paid), 6)
        self.assertEqual(len(self.api.calls("POST", PAY)), 1)
        self.assertEqual(sorted(self.decisions()), [(0, 1)] * 6)
        self.assertEqual(audit_misses(self.api.requests, self.audit()), [])  # every request received has its row
        self.assertEqual(audit_extra(self.api.requests, self.audit()), [])  # and only one
        self.assertEqual(self.db.rows(f"SELECT COUNT(*) FROM studyapp_platformcall WHERE response = '{audit.SENT}'"), [(0,)])
        self.assertEqual(self.claims(), [])  # nothing left claimed
        print(f"[{self.db.vendor}] payment faults: {self.id().rpartition('.')[2]}: {len(self.api.paid)} bonuses paid once each")


class KilledCommandTests(KilledWorkerTestCase):
    def test_platform_review_apply_killed_mid_pay(self) -> None:
        self.api.fail("POST", PAY, delay=60)  # paid at once; the answer would come after a minute
        self.kill_when_paying(self.start("platform_review", self.slug, "--apply"))
        self.assertEqual(sorted(self.decisions()), [(1, 0)] * 6)  # "pay sent", outcome unknown: committed before the call
        self.assertIn({"method": "POST", "path": self.api.calls("POST", PAY)[0].path, "body": {}}, self.audit())
        out = self.manage("platform_review", self.slug, "--apply")
        self.assertIn("found paid on Prolific", out)
        self.assert_paid_once()
        self.assertEqual(len(self.api.calls("POST", TRANSITION)), 9)  # each decision sent once


class KilledJobWorkerTests(KilledWorkerTestCase):
    """The review page's path: its Apply queues a job (services.review.jobs.enqueue, as the page does) that the job worker
    ``manage.py run_jobs`` runs; the worker is killed mid-call, and another, started next, takes the job and the dead
    worker's claims over at once (its process is gone: services.review.leases), not after the stale bound: that is
    set to 600 s for it, so only the ended process can free them."""

    def job(self) -> tuple:
        return self.db.rows("SELECT status, attempts, steps_failed FROM studyapp_reviewjob")[0]

    def enqueue(self) -> None:
        enqueue = f"from studyapp.models import Study\nfrom studyapp.services.review import jobs\njobs.enqueue(Study.objects.get(slug={self.slug!r}))"
        self.manage("shell", "-c", enqueue)

    def take_over(self) -> str:
        """Run a second worker until nothing is left; the seconds it took are printed."""
        started = time.monotonic()
        self.env["STUDYAPP_JOB_STALE_SECONDS"] = "600"
        out = self.manage("run_jobs", "--once")
        took = time.monotonic() - started
        print(f"[{self.db.vendor}] payment faults: the second worker finished the job {took:.1f} s after the first was killed")
        self.assertLess(took, 60, out)  # well under a minute, not the stale bound
        self.assertIn("(attempt 2)", out)
        self.assertRegex(out, r"job \d+: done, \d+ steps? done, 0 failed")
        return out

    def test_the_job_worker_killed_mid_pay(self) -> None:
        self.enqueue()
        self.api.fail("POST", PAY, delay=60)
        self.kill_when_paying(self.start("run_jobs", "--poll", "0.2"))
        self.assertEqual(self.job()[:2], ("running", 1))  # its worker is gone
        self.assertEqual(sorted(self.decisions()), [(1, 0)] * 6)  # pay sent, outcome unknown
        self.assertEqual(len(self.claims()), 6)  # still claimed by the dead worker
        self.take_over()
        self.assertEqual(self.job(), ("done", 2, 0))
        self.assert_paid_once()
        self.assertEqual(len(self.api.calls("POST", TRANSITION)), 9)  # each decision sent once
        self.assertEqual(len(self.api.calls("GET", r"/submissions/[^/]+/$")), 9 + 6)  # states, then the 6 bonus checks

    def test_the_job_worker_killed_mid_transition(self) -> None:
        """Killed while a decision's approve call waits (Prolific carried it out): its claim must not block the decision."""
        self.enqueue()
        self.api.fail("POST", TRANSITION, delay=60)
        process = self.start("run_jobs", "--poll", "0.2")
        deadline = time.monotonic() + 120
        while not self.api.calls("POST", TRANSITION) and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.1)
        os.kill(process.pid, signal.SIGKILL)
        self.assertEqual(process.wait(timeout=30), -signal.SIGKILL)
        self.assertEqual(len(self.claims()), 1)  # the decision being sent
        self.assertEqual(self.api.paid, [])
        cut = self.api.calls("POST", TRANSITION)[0].path
        sent = [r[1:] for r in self.calls() if r[0].get("path") == cut]
        self.assertEqual(sent, [("approve", False, None, audit.SENT)])  # logged before it went out
        out = self.take_over()
        self.assertEqual(self.job(), ("done", 2, 0))
        self.assertIn(
            "already approved on Prolific: nothing sent", "".join(r for (r,) in self.db.rows("SELECT log FROM studyapp_reviewjob"))
        )
        # Every call that changes state is logged before it goes out: the transition cut by the kill has its row, which
        # the next apply, finding it carried out on the platform (above, so it sent nothing), annotated (no second row).
        cut_rows = [r for r in self.calls() if r[0].get("path") == cut]
        transitions = [r[1:] for r in cut_rows if r[1] in ("approve", "reject")]
        self.assertEqual(len(transitions), 1, cut_rows)
        self.assertEqual(transitions[0][0], "approve")
        self.assertIsNone(transitions[0][2])  # its answer never came
        self.assertIn("its answer was lost", transitions[0][3])
        self.assertIn("approved on Prolific", transitions[0][3])
        self.assert_paid_once()
        self.assertEqual(len(self.api.calls("POST", TRANSITION)), 9, out)  # the interrupted one not sent again
