"""Browser tests: real Chromium (Debian's ``/usr/bin/chromium``) driven by Playwright against a live server.

``.ci/run`` installs Chromium (``apt-get install chromium``) and the ``playwright`` package comes from
``requirements-dev.txt``; ``playwright install`` is never needed. In CI (``CI=true``) a missing
browser or package fails every test here; elsewhere they are skipped with the reason.

The live server is pytest-django's ``live_server`` (Django's threaded ``LiveServerThread`` on a free
port, static files from the finders) over the test database. Each test is transactional: the demo
collection is loaded, the test creates its own small study, and everything is flushed afterwards.

Screenshots and measurements go to ``test-artifacts/`` (git-ignored; those of the PostgreSQL run to
``test-artifacts/postgresql/``).
"""

from __future__ import annotations

import itertools
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.studyapp.conftest import empty_cache  # noqa: F401 (an autouse fixture: the throttling counts start empty)

IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
CHROMIUM = os.environ.get("STUDYAPP_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run"]
ROOT = Path(__file__).resolve().parents[2]
# The PostgreSQL run (tests/studyapp/test_postgresql.py), going on at the same time, sets a folder of its own.
ARTIFACTS = Path(os.environ.get("STUDYAPP_TEST_ARTIFACTS") or ROOT / "test-artifacts")


def unavailable(reason: str) -> None:
    if IN_CI:
        pytest.fail(f"the browser tests must run in CI (CI=true), but {reason}", pytrace=False)
    pytest.skip(
        f"browser tests skipped: {reason}. Install Chromium (`apt-get install chromium`, expected at {CHROMIUM}) and "
        "`pip install -r requirements-dev.txt` (never `playwright install`); with CI=true this fails instead"
    )


def require_playwright() -> None:
    """Call at the top of a test module, before importing playwright (skips the module outside CI)."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        if IN_CI:
            raise
        pytest.skip(
            "browser tests skipped: the playwright package is not installed (`pip install -r requirements-dev.txt`); "
            "with CI=true this fails instead",
            allow_module_level=True,
        )


# How long an expect(...) assertion waits, as long as the pages' own timeout (tests/browser/annotator.py):
# CI runs the PostgreSQL copy of these tests beside the SQLite ones on two cores, where an admission can
# take longer than playwright's default of 5 s.
EXPECT_TIMEOUT_MS = 15_000


@pytest.fixture(scope="package")
def browser() -> Iterator:
    """One Chromium for the whole folder (each test opens its own contexts: separate cookies and storage)."""
    try:
        from playwright.sync_api import Error, expect, sync_playwright
    except ImportError:
        unavailable("the playwright package is not installed")
    expect.set_options(timeout=EXPECT_TIMEOUT_MS)
    if not os.access(CHROMIUM, os.X_OK):
        unavailable(f"{CHROMIUM} does not exist or is not executable")
    # Playwright's synchronous API keeps an asyncio loop in this thread; the ORM calls of the tests are
    # still plain synchronous code, so Django's async-safety guard is lifted while the browser runs.
    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    try:
        with sync_playwright() as playwright:
            try:
                chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            except Error as exc:
                unavailable(f"Chromium at {CHROMIUM} did not start: {str(exc).splitlines()[0]}")
            yield chromium
            chromium.close()
    finally:
        if previous is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous


@pytest.fixture
def server(browser, live_server) -> str:
    """pytest-django's live server (threaded, static files from the finders) with the demo loaded; its URL.

    ``live_server`` makes the test transactional: what it writes is committed (the server thread sees
    it) and flushed afterwards.
    """
    from studyapp.services.rehearsal.demo import load_demo

    load_demo(staff_password="browser-tests")
    return live_server.url


_numbers = itertools.count(1)


@pytest.fixture
def make_study(server):
    """Create a small study on the demo collection (4 items per annotator, Prolific redirect); returns it."""
    from studyapp.services.design.study_config import parse_config
    from studyapp.services.design.study_design import create_study

    def make(**changes):
        config = {
            "runs": ["demo-diversity", "demo-relevance", "demo-weak"],
            "topics": ["101", "102"],
            "subtopics_per_topic": 3,
            "depth": 10,
            "annotators_per_presentation": 2,
            "items_per_annotator": 4,
            "lease_minutes": 20,
            "consent_version": "e2e-1",
            "completion_code": "E2E-DONE",
            "screenout_code": "E2E-FULL",
            "redirect_url": "https://app.prolific.com/submissions/complete?cc={code}",
            **changes,
        }
        return create_study("demo", f"Browser study {next(_numbers)}", parse_config(config)).study

    return make


@pytest.fixture(scope="package")
def artifacts() -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS


def screenshot(page, artifacts: Path, name: str) -> None:
    """The whole page from its top into ``test-artifacts/name``; with ``STUDYAPP_UPDATE_SCREENSHOTS=1`` also into docs/screenshots/."""
    page.evaluate("() => window.scrollTo(0, 0)")
    page.screenshot(path=artifacts / name, full_page=True)
    if os.environ.get("STUDYAPP_UPDATE_SCREENSHOTS") == "1":
        (ROOT / "docs" / "screenshots").mkdir(exist_ok=True)
        shutil.copyfile(artifacts / name, ROOT / "docs" / "screenshots" / name)
