"""The database-using suite again on a real PostgreSQL: ``tests/studyapp`` (but the modules without a database
test, :data:`CHILD_IGNORED_MODULES`) and the browser tests that walk the participant's flow
(:data:`CHILD_BROWSER_MODULES`), in a child pytest whose
DATABASE_URL is ``$STUDYAPP_TEST_POSTGRES_URL`` (SQLite hides length limits, NUL bytes, locking and
isolation differences that PostgreSQL enforces). The child may also take database-free library modules
(:data:`CHILD_DATABASE_FREE_MODULES`, none now) off the parent, so both finish at about the same time.

Each browser test runs once per session: while the child runs, the parent (SQLite) leaves those flow
modules to it (:func:`delegated`) and keeps the pages' presentation tests (layout, languages,
dashboard, Content-Security-Policy), so the two cores share the browser work instead of doing it twice.
Without PostgreSQL, or with ``STUDYAPP_UPDATE_SCREENSHOTS=1`` (only the parent writes docs/screenshots),
the parent runs every browser test itself.

``.ci/run`` installs and starts PostgreSQL and sets that variable. In CI (``CI=true``) a missing
variable or an unreachable server fails the run; elsewhere the test is skipped with the reason.

The child runs beside the rest of the session: ``tests/conftest.py`` starts it as soon as collection
has selected this test (:func:`start_child`) and moves the test to the end of the session, where it
waits for the child and reports its result. So the SQLite run and the PostgreSQL run share the two
cores of a CI machine instead of taking turns. If the session ends first (``-x``, Ctrl-C, an
internal error), :func:`stop_child` stops the child by its pid.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import dj_database_url
import pytest

ROOT = Path(__file__).resolve().parents[2]
# The browser tests of the participant's flow (answers, leases, sessions: what the database decides), run
# on PostgreSQL by the child; the other browser tests check presentation and stay with the parent.
CHILD_BROWSER_MODULES = (
    "test_answering.py",
    "test_completion.py",
    "test_comprehension_check.py",
    "test_entry_links.py",
    "test_full_session.py",
    "test_mturk_frame.py",
    "test_progressive_enhancement.py",
    "test_report_page.py",
)
# Library modules that use neither test database, run by the child in the parent's stead so the two cores finish
# together (a balance valve). At first: the parent's own tests (evaluation, browser presentation, load smoke, README paths and the SQLite
# run) took about 200 s longer than the child's (.ci/run on a quiet 2-core machine: the parent 895 s, the
# child 700 s), and the second core sat idle meanwhile. These took about 80 s there (ranx's JIT compilation in a
# fresh environment most of it, no longer done: test_compare runs ranx uncompiled); like the browser modules, each
# runs once per session.
CHILD_DATABASE_FREE_MODULES: tuple[str, ...] = (
    # The measurement of 00:51-01:17 on 28 Nov (d8551ec, CI=true, nice 10 under load 5-10, per-test CPU of both runs):
    # with ranx no longer compiled in the child (~75 s of its CPU) the parent's own tests ended 103 s after the child's
    # (1,554 s against 1,451 s; CPU: parent 782 s with its subprocesses, child 534 s), and a dozen library modules and
    # the README's commands came here.
    # Since 28 Nov 06:00 the waiting tests (load smoke, database waits, killed payment workers; about 220 s of the
    # parent's time in CI, where the child ended 35 s after the parent's own tests at 696 s) run in a third process
    # (tests/test_waiting_run.py), and the parent took every one of them back: in the full run of 05:49-06:17 (CI=true,
    # nice 10, the machine at load 6-7 with other work) the child still ended 124 s after the parent's own tests
    # (1,685 s against 1,568 s); the last two, the ranx comparison and the command line's tests, took 21 s of its time.
    # Empty now; a module named here moves to the child again when the parent becomes the longer run.
)
# Modules of tests/studyapp without a single database test (no TestCase, no db fixture): what they check does not
# depend on the database, so the child leaves them to the parent instead of running them a second time (about 30 s
# of the child's run; test_compile_translations also writes the .mo files, which two runs at once would race for).
# The parent's collection notes any database test in them (:func:`uses_database`), and the test below then fails:
# such a test must run on PostgreSQL too, so its module leaves this list.
CHILD_IGNORED_MODULES = (
    "tests/studyapp/test_architecture.py",
    "tests/studyapp/test_cjk_typography.py",
    "tests/studyapp/test_compile_translations.py",
    "tests/studyapp/test_docs_registries.py",
    "tests/studyapp/test_fragments.py",
    "tests/studyapp/test_mturk_api.py",
    "tests/studyapp/test_review_api.py",
    "tests/studyapp/test_review_rules.py",
    "tests/studyapp/test_wording.py",
)
# pytest-django orders each run's tests as Django does, whatever the order here: the database tests (TestCase) first,
# then those with a live server (the browser tests), then those without a database. So the child's browser tests
# run in its middle, beside the parent's own browser and database tests; the load and kill -9 smoke tests (gunicorn
# workers and a load generator on the same two cores once held a framed participant's admission step beyond the
# pages' 15 s) run in the waiting run (tests/test_waiting_run.py), which starts with the session and is over long
# before the child's browser tests begin on a quiet machine.
SUITES = [
    *(ROOT / "tests" / "browser" / name for name in CHILD_BROWSER_MODULES),
    ROOT / "tests" / "studyapp",
    *(ROOT / path for path in CHILD_DATABASE_FREE_MODULES),
]
# Tests that start their own servers against PostgreSQL (the URL of this session) run once, in the parent's session
# (its waiting run, tests/test_waiting_run.py, when that runs): the child deselects them (a skip there would hide a
# test the parent does run).
PARENT_ONLY = (
    "tests/studyapp/test_database_waits.py::test_locked_tables_answer_503_within_seconds_and_kill_no_worker",
    "tests/studyapp/test_database_waits.py::test_a_frozen_database_answers_503_within_5_s_and_kills_no_worker",
)
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
# Set in the child's environment: its collection leaves the tests of tests/studyapp that use no database to the parent
# (:func:`same_in_both_runs`).
CHILD_VARIABLE = "STUDYAPP_TEST_POSTGRESQL_CHILD"
# The child run takes a few minutes on an idle 2-core machine (far longer when the machine is shared);
# the limit only stops a hung run.
TIMEOUT_SECONDS = 1800
TEST_ID = "tests/studyapp/test_postgresql.py::test_database_tests_pass_on_postgresql"


class ChildRun:
    """A child pytest (the PostgreSQL run, the waiting run), started at once; its output goes to temporary files (a
    pipe nobody reads while the parent runs its own tests would fill up and stall the child)."""

    def __init__(self, name: str, arguments: list[str], env: dict[str, str]) -> None:
        # Each run's screenshots and measurements go to a folder of its own (test-artifacts/<name>), and only the
        # parent's SQLite run may update docs/screenshots: the runs write at the same time.
        env = {**os.environ, "STUDYAPP_TEST_ARTIFACTS": str(ROOT / "test-artifacts" / name), **env}
        env.pop("STUDYAPP_UPDATE_SCREENSHOTS", None)
        command = [sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider", *arguments]
        self.stdout = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace", prefix=f"studyapp-{name}-", suffix=".out")
        self.stderr = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace", prefix=f"studyapp-{name}-", suffix=".err")
        self.process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=self.stdout, stderr=self.stderr)
        self.started = time.monotonic()

    def wait(self, timeout: float) -> subprocess.CompletedProcess | None:
        """The finished run's exit status and output; None when it did not finish within ``timeout`` seconds
        of its start (it is stopped then)."""
        try:
            self.process.wait(timeout=max(0.0, self.started + timeout - time.monotonic()))
        except subprocess.TimeoutExpired:
            self.stop()
            return None
        return subprocess.CompletedProcess(self.process.args, self.process.returncode, self._read(self.stdout), self._read(self.stderr))

    def stop(self) -> None:
        """Stop the child by its pid if it still runs: SIGTERM, then SIGKILL after 10 s. Its live servers
        are threads of it; its Playwright driver ends (closing Chromium) when the child's pipe to it closes."""
        for sig in (signal.SIGTERM, signal.SIGKILL):
            if self.process.poll() is not None:
                return
            self.process.send_signal(sig)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                continue

    @staticmethod
    def _read(file) -> str:
        file.seek(0)
        return file.read()


_child: ChildRun | None = None
# Database tests the parent's collection found in CHILD_IGNORED_MODULES (node ids): each would miss its PostgreSQL run.
database_tests_left_out: list[str] = []


def uses_database(item: pytest.Item) -> bool:
    """Does the test use the database (a Django ``TransactionTestCase``/``TestCase``, the ``django_db`` mark, or the
    ``db``/``transactional_db``/``live_server`` fixtures; pytest-django's own reading)?"""
    from django.test import TransactionTestCase

    cls = getattr(item, "cls", None)
    if cls is not None and issubclass(cls, TransactionTestCase):
        return True
    fixtures = set(getattr(item, "fixturenames", ()))
    return item.get_closest_marker("django_db") is not None or bool(fixtures & {"db", "transactional_db", "live_server"})


def same_in_both_runs(item: pytest.Item) -> bool:
    """Is ``item`` a test of tests/studyapp that uses no database (:func:`uses_database`)? The database the run is on
    cannot change its outcome (settings are read from a fresh environment, PostgreSQL-only tests open their own
    connection to ``STUDYAPP_TEST_POSTGRES_URL`` in either run), so the child leaves it to the parent: in the
    measurement of 02:51-03:20 on 28 Nov these (production-settings checks in fresh processes, Redis, registries) took
    about 21 s of the child's CPU a second time."""
    return item.path.resolve().is_relative_to(ROOT / "tests" / "studyapp") and not uses_database(item)


def note_database_tests_left_out(items: list[pytest.Item]) -> None:
    """Remember the database tests of :data:`CHILD_IGNORED_MODULES` among ``items`` (see :data:`database_tests_left_out`)."""
    ignored = {ROOT / path for path in CHILD_IGNORED_MODULES}
    database_tests_left_out[:] = [item.nodeid for item in items if item.path.resolve() in ignored and uses_database(item)]


def postgres_url() -> str:
    url = os.environ.get("STUDYAPP_TEST_POSTGRES_URL", "")
    if not url:
        message = "STUDYAPP_TEST_POSTGRES_URL is not set (.ci/run starts PostgreSQL and sets it)"
        if IN_CI:
            pytest.fail(f"PostgreSQL is required in CI: {message}")
        pytest.skip(f"{message}; in CI (CI=true) this test fails instead of skipping")
    if not dj_database_url.parse(url)["ENGINE"].endswith("postgresql"):
        pytest.fail(f"STUDYAPP_TEST_POSTGRES_URL is not a PostgreSQL URL: {url}")
    return url


def reachable_postgres_url() -> str:
    """The URL of a PostgreSQL that answers; fails or skips (see :func:`postgres_url`) otherwise."""
    url = postgres_url()
    import psycopg

    try:
        psycopg.connect(url.replace("postgres://", "postgresql://", 1), connect_timeout=10).close()
    except psycopg.OperationalError as exc:
        pytest.fail(f"PostgreSQL at STUDYAPP_TEST_POSTGRES_URL is unavailable: {exc}")
    return url


def delegated(path: Path) -> bool:
    """Is the test module at ``path`` one the PostgreSQL child runs in the parent's stead?"""
    if path.parent == ROOT / "tests" / "browser" and path.name in CHILD_BROWSER_MODULES:
        return True
    return path.resolve() in {ROOT / module for module in CHILD_DATABASE_FREE_MODULES}


def child_will_run() -> bool:
    """Will the child start (PostgreSQL configured and answering), taking over :func:`delegated` modules?
    Not when screenshots are to be updated: only the parent writes them."""
    if os.environ.get("STUDYAPP_UPDATE_SCREENSHOTS") == "1":
        return False
    try:
        reachable_postgres_url()
    except (pytest.fail.Exception, pytest.skip.Exception):
        return False
    return True


def child_arguments() -> list[str]:
    """The child's pytest arguments: :data:`SUITES` but this module, :data:`PARENT_ONLY` and :data:`CHILD_IGNORED_MODULES`."""
    return [*map(str, SUITES), f"--ignore={__file__}", *(f"--deselect={test}" for test in PARENT_ONLY),
            *(f"--ignore={ROOT / path}" for path in CHILD_IGNORED_MODULES)]  # fmt: skip


def summary(result: subprocess.CompletedProcess) -> str:
    """A finished child run's failures, the end of its output and of its error output (server log lines come there)."""
    failed = [line for line in result.stdout.splitlines() if line.startswith(("FAILED", "ERROR"))]
    return "\n".join([*failed, *result.stdout.splitlines()[-40:], "--- stderr ---", *result.stderr.splitlines()[-20:]])


def check_nothing_skipped(result: subprocess.CompletedProcess, what: str) -> None:
    """In CI (``CI=true``) a child run may skip nothing: its last line (pytest's counts) names no skip."""
    if IN_CI:
        assert "skipped" not in result.stdout.strip().splitlines()[-1], f"tests were skipped {what}:\n{summary(result)}"


def start_child() -> None:
    """Start the child run now if PostgreSQL is there (called once collection is done); when it is
    not, nothing starts and the test itself fails or skips with the reason."""
    global _child
    if _child is None:
        try:
            _child = ChildRun("postgresql", child_arguments(), {"DATABASE_URL": reachable_postgres_url(), CHILD_VARIABLE: "1"})
        except (pytest.fail.Exception, pytest.skip.Exception):
            pass


def stop_child() -> None:
    """Stop a child still running (the session ended before the test collected its result)."""
    if _child is not None:
        _child.stop()


@pytest.mark.slow
def test_database_tests_pass_on_postgresql() -> None:
    reachable_postgres_url()
    start_child()  # already running unless this test was called some other way
    assert _child is not None
    assert not database_tests_left_out, f"database tests in CHILD_IGNORED_MODULES never run on PostgreSQL: {database_tests_left_out}"
    result = _child.wait(timeout=TIMEOUT_SECONDS)
    if result is None:
        pytest.fail(f"the PostgreSQL run did not finish within {TIMEOUT_SECONDS} s and was stopped")
    tail = summary(result)
    assert result.returncode == 0, f"database tests failed on PostgreSQL (exit status {result.returncode}):\n{tail}"
    assert "[postgresql]" in result.stdout, f"the concurrency test did not run on PostgreSQL:\n{tail}"
    # the killed-process payment tests (test_payment_faults.py) on a scratch database of the same server
    assert "[postgresql] payment faults:" in result.stdout, f"the killed-worker payment tests did not run on PostgreSQL:\n{tail}"
    check_nothing_skipped(result, "on PostgreSQL")  # the browser tests included
    print(tail)
