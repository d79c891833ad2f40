"""The tests that mostly wait, in a pytest process of their own beside the SQLite session and the PostgreSQL child.

:data:`WAITING` are tests whose time goes to waiting for other processes rather than to this one's CPU: the load
benchmark in small (gunicorn, nginx and paced annotators that think between pages; tests/test_load_smoke.py), the
database-wait tests against a locked table and a frozen server (lock and connect timeouts met on purpose;
:data:`tests.studyapp.test_postgresql.PARENT_ONLY`) and the payment-fault tests (``manage.py`` processes killed by pid
while the local Prolific server holds their call; tests/studyapp/test_payment_faults.py, on SQLite here; the
PostgreSQL child runs them on PostgreSQL as before). Run in the session's own process they kept one of CI's two
cores idle for minutes (the measurement of 05:21 on 28 Nov: under 40 % of their time on a CPU, children included);
in a third process their waits overlap the other two runs' work.

``tests/conftest.py`` starts this run as soon as collection has selected :data:`TEST_ID` (:func:`start`), hands it
the waiting tests (the session deselects them: each runs once per session) and moves the test to the end, where it
waits for the run and fails with the run's failures and output if anything failed, or, in CI (``CI=true``), was
skipped. The run is a plain pytest of these node ids on its own SQLite test database, temporary folders and free
ports (every server of these tests binds a port the system chose; the load benchmark's PostgreSQL database is
named after the session's and made once at a time, in this run only). When the session ends first (``-x``,
Ctrl-C) :func:`stop` stops it by its pid. Run alone (``pytest tests/test_load_smoke.py``) these tests run in the
session as before.

These tests assert no timing but what they check (a 503 within the 5 s the web settings promise, a lock wait of
about 2 s, nginx's 10 s header timeout); the CPU work beside them is what it was beside the PostgreSQL child.
"""

from __future__ import annotations

import pytest

from tests.studyapp import test_postgresql

WAITING = (
    "tests/test_load_smoke.py",
    "tests/studyapp/test_payment_faults.py",
    *test_postgresql.PARENT_ONLY,
)
TEST_ID = "tests/test_waiting_run.py::test_waiting_tests_pass"
# The run takes about 4 minutes on a quiet 2-core machine, far longer on a shared one; the limit stops a hung run only.
TIMEOUT_SECONDS = 1800

_run: test_postgresql.ChildRun | None = None


def waits(item: pytest.Item) -> bool:
    """Is ``item`` one of :data:`WAITING` (a whole module or a test of one)?"""
    return item.nodeid.split("::")[0] in WAITING or item.nodeid in WAITING


def start() -> None:
    """Start the waiting run now (once)."""
    global _run
    if _run is None:
        _run = test_postgresql.ChildRun("waiting", list(WAITING), {test_postgresql.CHILD_VARIABLE: "waiting"})


def stop() -> None:
    """Stop the run if it still runs (the session ended before the test collected its result)."""
    if _run is not None:
        _run.stop()


@pytest.mark.slow
def test_waiting_tests_pass() -> None:
    start()  # already running unless this test was called some other way
    assert _run is not None
    result = _run.wait(timeout=TIMEOUT_SECONDS)
    if result is None:
        pytest.fail(f"the waiting run did not finish within {TIMEOUT_SECONDS} s and was stopped")
    tail = test_postgresql.summary(result)
    assert result.returncode == 0, f"the waiting tests failed (exit status {result.returncode}):\n{tail}"
    test_postgresql.check_nothing_skipped(result, "in the waiting run")
    print(tail)
