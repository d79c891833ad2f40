"""Session-wide test set-up.

- The PostgreSQL run of the database tests (``tests/studyapp/test_postgresql.py``) starts in the
  background as soon as collection has selected it, and its test, which waits for that run, goes
  last, so both databases' runs proceed side by side; the browser tests of the participant's flow run
  in it only (``test_postgresql.delegated``), the other browser tests in this session (so would the
  database-free modules of ``CHILD_DATABASE_FREE_MODULES``, a balance valve, empty now); the child leaves the tests of tests/studyapp
  that use no database to this session (``test_postgresql.same_in_both_runs``).
- The tests that mostly wait (load smoke, database waits, killed payment workers: ``tests/test_waiting_run.py``)
  run in a third process started the same way, whose test also goes last and reports its result.
- On PostgreSQL, autovacuum is off for the test database's tables (see :func:`django_db_setup`).
- Passwords set in the tests' own process are hashed with MD5 (see :func:`_fast_password_hashing`).
- Hypothesis examples have no deadline: a property's truth does not depend on the machine's load, and a
  shared or busy CI machine once failed a property test on its default 200 ms deadline.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from django.db import connection
from hypothesis import settings as hypothesis_settings

from tests import test_waiting_run
from tests.studyapp import test_postgresql

hypothesis_settings.register_profile("studyapp", deadline=None)
hypothesis_settings.load_profile("studyapp")


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    last = (test_waiting_run.TEST_ID, test_postgresql.TEST_ID)
    items.sort(key=lambda item: item.nodeid in last)  # stable: everything else keeps its order
    if os.environ.get(test_postgresql.CHILD_VARIABLE) == "1":  # the PostgreSQL child: database tests only of tests/studyapp
        left = [item for item in items if test_postgresql.same_in_both_runs(item)]
        if left:
            config.hook.pytest_deselected(items=left)
            items[:] = [item for item in items if not test_postgresql.same_in_both_runs(item)]
    selected = any(item.nodeid == test_postgresql.TEST_ID for item in items)
    if selected and not config.option.collectonly and test_postgresql.child_will_run():
        # the PostgreSQL child runs the participant-flow browser tests (and test_postgresql.CHILD_DATABASE_FREE_MODULES);
        # each of them runs once per session
        test_postgresql.note_database_tests_left_out(items)  # CHILD_IGNORED_MODULES: the parent's alone
        handed_over = [item for item in items if test_postgresql.delegated(item.path)]
        if handed_over:
            config.hook.pytest_deselected(items=handed_over)
            items[:] = [item for item in items if not test_postgresql.delegated(item.path)]
    if any(item.nodeid == test_waiting_run.TEST_ID for item in items) and not config.option.collectonly:
        waiting = [item for item in items if test_waiting_run.waits(item)]  # run by the waiting run (its test reports)
        if waiting:
            config.hook.pytest_deselected(items=waiting)
            items[:] = [item for item in items if not test_waiting_run.waits(item)]


def pytest_collection_finish(session: pytest.Session) -> None:
    if session.config.option.collectonly:
        return
    if any(item.nodeid == test_waiting_run.TEST_ID for item in session.items):
        test_waiting_run.start()
    if any(item.nodeid == test_postgresql.TEST_ID for item in session.items):
        test_postgresql.start_child()


def pytest_sessionfinish(session: pytest.Session) -> None:
    test_waiting_run.stop()
    test_postgresql.stop_child()


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup, django_db_blocker) -> None:
    """pytest-django's test database; on PostgreSQL with autovacuum off for its tables.

    Every ``TestCase`` rolls its rows back, leaving them dead; autovacuum then vacuums the tables and
    records them as empty (``reltuples = 0``), and the planner, believing one row per table, picks
    nested loops for the thousands of rows the next test writes inside its transaction: a simulated
    study took 6 minutes instead of 20 s. A production database is analyzed with its rows, so this
    is an artefact of the tests; without autovacuum the planner estimates from the tables' sizes.
    """
    if connection.vendor != "postgresql":
        return
    with django_db_blocker.unblock(), connection.cursor() as cursor:
        for table in connection.introspection.table_names(cursor):
            cursor.execute(f"ALTER TABLE {connection.ops.quote_name(table)} SET (autovacuum_enabled = off)")


@pytest.fixture(scope="session", autouse=True)
def _fast_password_hashing() -> Iterator[None]:
    """Passwords set in this process (test users, the demo staff user of ``load_demo``, sign-ins) are hashed with
    MD5 first: PBKDF2's million iterations cost about a second of CPU per password, and the suite sets hundreds
    (every browser test's ``load_demo``, every test user). Hashes PBKDF2 made still verify (the production
    hashers follow). What runs as its own process (``make run``, gunicorn, ``manage.py`` subprocesses) keeps
    the production settings; ``StaffLoginThrottleTestCase`` (test_security.py) sets the same hasher itself."""
    from django.conf import settings
    from django.test import override_settings

    with override_settings(PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher", *settings.PASSWORD_HASHERS]):
        yield


@pytest.fixture(autouse=True)
def _fresh_display_caches() -> None:
    """Item pages' per-process caches start empty in every test: ids are reused once a test's rows are rolled back."""
    from studyapp.services.collections.display_cache import clear_all

    clear_all()


@pytest.fixture(autouse=True)
def _process_cache(settings) -> None:
    """Tests run on each process's own cache (fast, emptied per test by tests/studyapp/conftest.py); the
    shared caches (the database's, Redis) have their own tests in tests/studyapp/test_shared_cache.py."""
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
