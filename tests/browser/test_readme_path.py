"""Must show (issue 33): README's path for a new user, from ``make run`` to the demo report's reproduce.sh.

Run from the ``make run`` / ``make test`` environment (``.venv``, where ``make venv`` installed the
repository itself): ``make run`` on a free port with a database of its own starts the server and
prints the staff login; in Chromium the home page leads to the staff pages (sign-in) and to the
simulated demo study's report; then ``manage.py study_report`` writes the report folder and its
``reproduce.sh``, run from another folder with nothing but ``/usr/bin:/bin`` on the PATH, recomputes
every table byte for byte with the interpreter that wrote it (.venv's python).

Elsewhere (another virtual environment) it is skipped, in CI (``CI=true``, where ``make test`` runs
it in ``.venv``) it fails.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.browser.conftest import IN_CI, ROOT, require_playwright

require_playwright()

from playwright.sync_api import expect  # noqa: E402

from tests.browser.annotator import Participant  # noqa: E402

VENV = ROOT / ".venv"
STAFF_LOGIN = re.compile(r"Staff login: (\S+)\s+user '(\w+)'\s+password '([^']+)'")
START_SECONDS = 600  # make run: migrate, the demo and its simulated study (about 20 s on a quiet machine), the server


def in_make_run_environment() -> bool:
    return Path(sys.prefix).resolve() == VENV.resolve()


def free_port() -> int:
    """``STUDYAPP_TEST_PORT`` when set (a port range of one's own on a shared machine), else a free one."""
    if os.environ.get("STUDYAPP_TEST_PORT"):
        return int(os.environ["STUDYAPP_TEST_PORT"])
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for_server(url: str, process: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"make run ended with status {process.returncode}:\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(url, timeout=5) as response:  # noqa: S310 - our own loopback server
                if response.status == 200:
                    return
        except OSError:
            pass
        time.sleep(1)
    pytest.fail(f"make run did not serve {url} within {START_SECONDS} s:\n{log.read_text()[-3000:]}")


def test_from_make_run_to_the_demo_reports_reproduce_sh(browser, db, tmp_path) -> None:
    if not in_make_run_environment():
        reason = f"run it in the make run environment ({VENV}, e.g. `make test`); this is {sys.prefix}"
        if IN_CI:
            pytest.fail(reason, pytrace=False)
        pytest.skip(reason)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
        "DJANGO_SECRET_KEY": "readme-path-test-key-" + "x" * 40,
        "MAKEFLAGS": "",
    }
    log = tmp_path / "make-run.log"
    with log.open("w") as out:
        process = subprocess.Popen(
            ["make", "run", "HOST=127.0.0.1", f"PORT={port}"], cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: the server and its autoreloader stop together
        )  # fmt: skip
    try:
        wait_for_server(f"{base}/", process, log)
        printed = log.read_text()
        assert f"Open {base}/" in printed
        assert f"Annotator link: {base}/s/demo-study/" in printed  # the port make run was given, never 8000
        login = STAFF_LOGIN.search(printed)
        assert login is not None, printed[-2000:]
        assert login.group(1) == f"{base}/admin/"
        user, password = login.group(2), login.group(3)

        staff = Participant(browser, base, viewport={"width": 1280, "height": 900})
        try:
            page = staff.page
            page.goto(f"{base}/")
            page.get_by_role("link", name="Staff pages").click()
            page.get_by_label("Username").fill(user)
            page.get_by_label("Password").fill(password)
            page.get_by_role("button", name="Log in").click()
            expect(page.get_by_role("heading", name="Studies")).to_be_visible()
            expect(page.get_by_role("link", name="Demo study (simulated)").first).to_be_visible()
            page.goto(f"{base}/")
            page.get_by_role("link", name="The report of the simulated demo study").click()
            expect(page.get_by_role("heading", name="Which metric agrees with people?")).to_be_visible(timeout=300_000)
            expect(page.locator("pre.commands")).to_contain_text("python -m evaluation meta agreement")
            assert page.evaluate("document.documentElement.scrollWidth") <= 1280
            assert staff.errors == [], f"script errors: {staff.errors}"
        finally:
            staff.close()
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=30)

    # README: `.venv/bin/python manage.py study_report demo-study-simulated --out report/` (fewer resamples: faster)
    folder = tmp_path / "report"
    subprocess.run(
        [str(VENV / "bin" / "python"), "manage.py", "study_report", "demo-study-simulated", "--out", str(folder), "--bootstrap", "200"],
        cwd=ROOT, env=env, check=True, capture_output=True, timeout=900,
    )  # fmt: skip
    tables = {p.name: p.read_bytes() for p in folder.iterdir() if p.suffix == ".csv" and p.name != "preferences.csv"}
    tables["scores.tsv"] = (folder / "scores.tsv").read_bytes()
    assert {"agreement-topic.csv", "userprefs.csv", "discpower.csv", "intuitiveness.csv"} <= set(tables)
    for name in tables:
        (folder / name).unlink()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    bare = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "LANG": "C.UTF-8"}  # no .venv on the PATH, no PYTHONPATH
    run = subprocess.run(["sh", str(folder / "reproduce.sh")], cwd=elsewhere, env=bare, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr[-3000:]
    assert f"PYTHON=${{PYTHON:-{VENV / 'bin' / 'python'}}}" in (folder / "reproduce.sh").read_text()
    for name, content in tables.items():
        assert (folder / name).read_bytes() == content, name
