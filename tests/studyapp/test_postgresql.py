"""The whole database-using suite again on a real PostgreSQL: every module of ``tests/studyapp`` and
the browser tests of ``tests/browser``, in a child pytest whose DATABASE_URL is
``$STUDYAPP_TEST_POSTGRES_URL`` (SQLite hides length limits, NUL bytes, locking and isolation
differences that PostgreSQL enforces).

``.ci/run`` installs and starts PostgreSQL and sets that variable. In CI (``CI=true``) a missing
variable or an unreachable server fails the run; elsewhere the test is skipped with the reason.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import dj_database_url
import pytest

ROOT = Path(__file__).resolve().parents[2]
SUITES = [ROOT / "tests" / "studyapp", ROOT / "tests" / "browser"]
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
# The child run takes a few minutes on an idle 2-core machine (far longer when the machine is shared);
# the limit only stops a hung run.
TIMEOUT_SECONDS = 1800


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


@pytest.mark.slow
def test_database_tests_pass_on_postgresql() -> None:
    url = postgres_url()
    import psycopg

    try:
        psycopg.connect(url.replace("postgres://", "postgresql://", 1), connect_timeout=10).close()
    except psycopg.OperationalError as exc:
        pytest.fail(f"PostgreSQL at STUDYAPP_TEST_POSTGRES_URL is unavailable: {exc}")
    env = {**os.environ, "DATABASE_URL": url}
    command = [sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider", *map(str, SUITES), f"--ignore={__file__}"]
    result = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=TIMEOUT_SECONDS)
    # pytest's summary (which tests failed) is on stdout; the server log lines on stderr come after it.
    failed = [line for line in result.stdout.splitlines() if line.startswith(("FAILED", "ERROR"))]
    tail = "\n".join([*failed, *result.stdout.splitlines()[-40:], "--- stderr ---", *result.stderr.splitlines()[-20:]])
    assert result.returncode == 0, f"database tests failed on PostgreSQL:\n{tail}"
    assert "[postgresql]" in result.stdout, f"the concurrency test did not run on PostgreSQL:\n{tail}"
    if IN_CI:  # nothing skipped quietly (the browser tests included)
        assert "skipped" not in result.stdout.strip().splitlines()[-1], f"tests were skipped on PostgreSQL:\n{tail}"
    print(tail)
