"""A slow, locked or frozen database costs a request seconds, never a worker (docs/studyapp.md "When the
database is slow"): the web workers' limits (gunicorn.conf.py) and the commands' (settings.py), no query on
the error path, a locked table (``LOCK TABLE`` from another connection) and a frozen server (SIGSTOP of a
scratch cluster's processes) against the production server: every request answered 503 with Retry-After
within 5 s, the same workers alive afterwards."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from pathlib import Path

import pytest
from django.db import OperationalError, connection
from django.test import Client

from tests.studyapp.annotator_base import JSON, AnnotatorTestCase
from tests.studyapp.live_server import ROOT, Gunicorn, ScratchPostgres, fetch, participant
from tests.studyapp.test_postgresql import postgres_url
from tests.studyapp.test_settings import default_settings

PG = "postgres://u:p@127.0.0.1:5432/db"
ANSWER_WITHIN = 5.0  # seconds: every request under a database fault
RETRY_AFTER = "30"


def web_environment() -> dict[str, str]:
    """The variables gunicorn.conf.py sets for the web workers (it runs in a child: nothing leaks here)."""
    code = "import os, runpy; runpy.run_path('gunicorn.conf.py'); print(repr({k: v for k, v in os.environ.items() if 'DB' in k}))"
    clean = {"PATH": "/usr/bin:/bin"}
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=clean, capture_output=True, text=True, check=True, timeout=60)
    return eval(result.stdout)  # noqa: S307 (a dict literal we printed)


def test_web_workers_wait_seconds_and_commands_longer() -> None:
    key = Path(tempfile.mkdtemp()) / "key"
    web_env = web_environment()
    assert web_env == {"STUDYAPP_DB_LOCK_TIMEOUT": "2", "STUDYAPP_DB_STATEMENT_TIMEOUT": "3", "DJANGO_DB_CONNECT_TIMEOUT": "3"}
    web = default_settings(key, DATABASE_URL=PG, **web_env)
    options = web["DATABASES"]["default"]["OPTIONS"]
    assert options["options"] == "-c lock_timeout=2000 -c statement_timeout=3000"
    assert (options["connect_timeout"], options["keepalives"], options["tcp_user_timeout"]) == (3, 1, 20000)
    assert web["STUDYAPP_DB_WAIT_SECONDS"] == 4  # the client's deadline: one second after the server's
    commands = default_settings(key, DATABASE_URL=PG)
    assert commands["DATABASES"]["default"]["OPTIONS"]["options"] == "-c lock_timeout=30000 -c statement_timeout=600000"
    assert (commands["DATABASES"]["default"]["OPTIONS"]["connect_timeout"], commands["STUDYAPP_DB_WAIT_SECONDS"]) == (5, 601)
    unlimited = default_settings(key, DATABASE_URL=PG, STUDYAPP_DB_LOCK_TIMEOUT="0", STUDYAPP_DB_STATEMENT_TIMEOUT="0")
    assert "options" not in unlimited["DATABASES"]["default"]["OPTIONS"] and unlimited["STUDYAPP_DB_WAIT_SECONDS"] == 0
    with pytest.raises(Exception, match="DJANGO_DB_CONNECT_TIMEOUT must be at least 2, got 1"):
        default_settings(key, DATABASE_URL=PG, DJANGO_DB_CONNECT_TIMEOUT="1")


def test_gunicorn_refuses_database_waits_that_outlast_the_worker() -> None:
    command = [sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py", "--check-config", "studyapp.wsgi"]
    for env, shown in (({"STUDYAPP_DB_STATEMENT_TIMEOUT": "20"}, "takes 45 s"), ({"STUDYAPP_DB_STATEMENT_TIMEOUT": "0"}, "takes 5 s")):
        result = subprocess.run(command, cwd=ROOT, env={"PATH": "/usr/bin:/bin", **env}, capture_output=True, text=True, timeout=60)
        assert result.returncode == 1 and shown in result.stderr and "before the worker timeout (30 s)" in result.stderr, result.stderr


class ErrorPathTest(AnnotatorTestCase):
    def test_no_query_after_the_database_failed(self) -> None:
        """The item page fails on its first read of an item (as under a lock timeout): the 503 page is drawn
        without another query (before, the framing middleware read the annotator again: a second wait)."""
        after_failure: list[str] = []

        def failing(execute, sql, params, many, context):  # noqa: ANN001 (Django's execute wrapper)
            if after_failure or "studyapp_assignment" in sql:
                after_failure.append(sql)
                raise OperationalError("canceling statement due to lock timeout")
            return execute(sql, params, many, context)

        client = Client(raise_request_exception=False)
        self.sign_in(client, self.alice)
        for headers in ({}, JSON):
            after_failure.clear()
            with connection.execute_wrapper(failing):
                response = client.get(self.url("study_next_item"), **headers)
            self.assertEqual((response.status_code, response["Retry-After"]), (503, RETRY_AFTER))
            self.assertEqual(len(after_failure), 1, after_failure)  # the failing query only


class PauseTest(AnnotatorTestCase):
    def test_a_paused_process_answers_503_at_once_without_a_query(self) -> None:
        from studyapp import pg_deadline

        self.addCleanup(setattr, pg_deadline, "_paused_until", 0.0)
        self.assertTrue(pg_deadline.not_answering(OperationalError("connection timeout expired")))
        self.assertFalse(pg_deadline.not_answering(OperationalError("canceling statement due to lock timeout")))
        pg_deadline.pause()  # as after the client's deadline or a connect timeout
        with self.assertNumQueries(0):
            script = self.client.get(self.url("study_next_item"), **JSON)
            page = self.client.get(self.url("study_next_item"))
        self.assertEqual((script.status_code, script["Retry-After"], script.json()["error"]), (503, RETRY_AFTER, "unavailable"))
        self.assertContains(page, "Please try again shortly", status_code=503)
        pg_deadline._paused_until = 0.0
        self.assertNotEqual(self.client.get(self.url("study_next_item")).status_code, 503)


def answered_unavailable(result: tuple[int, dict[str, str], bytes, float], what: str) -> None:
    status, headers, body, seconds = result
    assert (status, headers.get("Retry-After")) == (503, RETRY_AFTER), (what, status, headers, body[:300])
    assert seconds < ANSWER_WITHIN, (what, seconds)


@pytest.mark.slow
def test_locked_tables_answer_503_within_seconds_and_kill_no_worker() -> None:
    """The production server on PostgreSQL (web limits of gunicorn.conf.py); a table locked by another
    session: the page and the script get 503 with Retry-After in about 2 s (the lock timeout), once per
    request (the annotator table was read again on the error page: 2 waits), and no worker is killed."""
    import psycopg

    url = postgres_url()  # fails in CI without PostgreSQL, skips elsewhere
    base = url.replace("postgres://", "postgresql://", 1)
    name = f"studyapp_locked_{time.time_ns()}"
    server = Gunicorn(url.rsplit("/", 1)[0] + "/" + name, workers=2)
    with psycopg.connect(base, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        server.manage("migrate", "-v", "0")
        server.manage("load_demo", "--no-simulated-study")
        server.start()
        workers = server.workers()
        browser = participant(server.base, "demo-study", "locked1")
        item = f"{server.base}/s/demo-study/item/"
        assert fetch(item, opener=browser)[0] in (200, 302)
        with psycopg.connect(base.rsplit("/", 1)[0] + "/" + name) as lock:
            for table, page, headers in (
                ("studyapp_study", server.base + "/", {}),
                ("studyapp_study", server.base + "/", {"Accept": "application/json"}),
                ("studyapp_annotator", item, {}),
                ("studyapp_annotator", item, {"Accept": "application/json"}),
            ):
                lock.execute(f"LOCK TABLE {table} IN ACCESS EXCLUSIVE MODE")  # held until the rollback
                result = fetch(page, headers, opener=browser)
                lock.rollback()
                print(f"locked {table}: {page} {headers} answered {result[0]} in {result[3]:.2f} s")
                answered_unavailable(result, table)
                assert 1.5 < result[3] < 3.5, (table, result[3])  # one lock wait of 2 s, not two
                if headers:
                    assert json.loads(result[2])["error"] == "unavailable"
        assert fetch(item, opener=browser)[0] in (200, 302)  # the locks are gone: answered again
        assert server.workers() == workers and "WORKER TIMEOUT" not in server.output()
    finally:
        server.stop()
        with psycopg.connect(base, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.mark.slow
def test_a_frozen_database_answers_503_within_5_s_and_kills_no_worker() -> None:
    """A scratch cluster of this test's own, every process of it stopped (SIGSTOP): connections stay open and
    nothing answers (PostgreSQL's own timeouts cannot fire). Home page, a newcomer's link and a participant's
    item page (as the page script asks for it): one request per worker (answered by the client's deadline
    on the kept connection), then three per worker at once (answered at once: each worker pauses its tries
    after a database that did not answer; without the pause the last would wait 9 s), then, the pause
    over, one per worker again (the connect timeout). Every request gets 503 with Retry-After within 5 s,
    no worker is killed, and the site answers again once the server resumes."""
    postgres_url()  # in CI PostgreSQL is required; elsewhere the test needs its programs only
    with ExitStack() as stack:
        cluster = ScratchPostgres()
        stack.callback(cluster.stop)
        server = Gunicorn(cluster.start(), workers=3, STUDYAPP_ARRIVALS_PER_CLIENT="0")
        stack.callback(server.stop)
        server.manage("migrate", "-v", "0")
        server.manage("load_demo", "--no-simulated-study")
        server.start()
        browser = participant(server.base, "demo-study", "frozen1")
        item = f"{server.base}/s/demo-study/item/"
        requests = [
            (server.base + "/", {}, None),
            (server.base + "/s/demo-study/?PROLIFIC_PID=newcomer&STUDY_ID=s&SESSION_ID=n", {}, None),
            (item, {"Accept": "application/json"}, browser),
        ]
        with ThreadPoolExecutor(6) as pool:  # every worker with an open connection
            assert {r[0] for r in pool.map(lambda r: fetch(r[0], r[1], opener=r[2]), requests * 4)} <= {200, 302}
        workers = server.workers()
        assert len(workers) == 3
        cluster.freeze()
        try:
            # one request per worker: each waits for the database once (the client's deadline on its kept
            # connection, 4 s), then the worker pauses its tries (STUDYAPP_DB_PAUSE_SECONDS, 5 s)
            rounds = [("deadline", requests), ("paused", requests * 3), ("connect", requests)]
            for name, batch in rounds:
                if name == "connect":
                    time.sleep(5.5)  # the pause is over: the next try connects anew and meets the connect timeout (3 s)
                with ThreadPoolExecutor(len(batch)) as pool:
                    results = list(pool.map(lambda r: fetch(r[0], r[1], opener=r[2], timeout=40), batch))
                for (page, _, _), result in zip(batch, results, strict=True):
                    print(f"frozen database, {name}: {page} answered {result[0]} in {result[3]:.2f} s")
                    answered_unavailable(result, page)
        finally:
            cluster.thaw()
        deadline = time.monotonic() + 20  # answered again once the workers' pauses are over
        while fetch(server.base + "/")[0] != 200:
            assert time.monotonic() < deadline, "the site did not answer again after the database resumed"
            time.sleep(0.5)
        assert fetch(item, opener=browser)[0] in (200, 302)
        assert server.workers() == workers and "WORKER TIMEOUT" not in server.output(), server.output()[-2000:]
