"""Real servers for the fault tests: a scratch PostgreSQL cluster of the test's own (``initdb`` in a temporary
folder, which a test may freeze with SIGSTOP) and the production server (gunicorn with ``gunicorn.conf.py``)
on a free loopback port. Every process started here is stopped by its pid."""

from __future__ import annotations

import http.cookiejar
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.studyapp.test_postgresql import IN_CI

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def children(pid: int) -> list[int]:
    """The pids of ``pid``'s child processes (from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def pg_bin(name: str) -> Path:
    """Debian's PostgreSQL program ``name`` (the newest installed); skips outside CI, fails in CI, without it."""
    found = sorted(Path("/usr/lib/postgresql").glob(f"*/bin/{name}"), key=lambda p: int(p.parts[-3]) if p.parts[-3].isdigit() else 0)
    if not found:
        message = f"no PostgreSQL server programs (/usr/lib/postgresql/*/bin/{name}; Debian's postgresql package)"
        if IN_CI:
            pytest.fail(message)
        pytest.skip(message)
    return found[-1]


class ScratchPostgres:
    """A PostgreSQL cluster in a temporary folder on a free port, trust authentication on loopback only.
    As root, the cluster belongs to the ``postgres`` user (initdb refuses root), as in ``.ci/run``."""

    def __init__(self) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="studyapp-pg-"))
        self.data = self.folder / "data"
        self.port = free_port()
        self.pid = 0
        self.as_user = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        if self.as_user:
            shutil.chown(self.folder, "postgres")

    def _run(self, *command: str) -> None:
        subprocess.run([*self.as_user, *command], cwd=self.folder, check=True, capture_output=True, timeout=120)

    def start(self) -> str:
        """Create and start the cluster; its URL (database ``postgres``, user ``postgres``)."""
        self._run(str(pg_bin("initdb")), "-D", str(self.data), "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8")
        options = f"-p {self.port} -c listen_addresses=127.0.0.1 -c unix_socket_directories={self.folder} -c fsync=off"
        self._run(str(pg_bin("pg_ctl")), "-D", str(self.data), "-o", options, "-l", str(self.folder / "log"), "-w", "-t", "60", "start")
        self.pid = int((self.data / "postmaster.pid").read_text().split()[0])
        return f"postgres://postgres@127.0.0.1:{self.port}/postgres"

    def processes(self) -> list[int]:
        return [self.pid, *children(self.pid)] if self.pid else []

    def freeze(self) -> None:
        """SIGSTOP the server and each of its processes: connections stay open, nothing answers."""
        for pid in self.processes():
            os.kill(pid, signal.SIGSTOP)

    def thaw(self) -> None:
        for pid in self.processes():
            os.kill(pid, signal.SIGCONT)

    def stop(self) -> None:
        """Resume and stop the server by its pid (fast shutdown, then SIGKILL), remove its folder."""
        if self.pid:
            self.thaw()
            os.kill(self.pid, signal.SIGINT)
            deadline = time.monotonic() + 30
            while Path(f"/proc/{self.pid}").exists() and time.monotonic() < deadline:
                time.sleep(0.2)
            if Path(f"/proc/{self.pid}").exists():
                for pid in self.processes():
                    os.kill(pid, signal.SIGKILL)
            self.pid = 0
        shutil.rmtree(self.folder, ignore_errors=True)


class Gunicorn:
    """``gunicorn -c gunicorn.conf.py --preload studyapp.wsgi`` on a free port with the production web settings.

    ``--preload`` only changes how the workers start: the master imports the application once and forks them,
    instead of each worker importing it (a start with 3 workers took 2.3 instead of 12 s of CPU under load). Each
    worker is still a process of its own with its own database connections (Django opens them on first use, nothing
    connects at import) and its own copy of the per-process state, so what a request meets is what it meets in
    production."""

    def __init__(self, database_url: str, workers: int = 2, **env: str) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.env = {**os.environ, "DATABASE_URL": database_url, "DJANGO_SECRET_KEY": "k" * 50, "DJANGO_ALLOWED_HOSTS": "127.0.0.1",
                    "WEB_CONCURRENCY": str(workers), "STUDYAPP_BIND": f"127.0.0.1:{self.port}", **env}  # fmt: skip
        for name in ("STUDYAPP_DB_STATEMENT_TIMEOUT", "STUDYAPP_DB_LOCK_TIMEOUT", "DJANGO_DB_CONNECT_TIMEOUT"):
            if name not in env:
                self.env.pop(name, None)  # gunicorn.conf.py's web defaults, not the test run's
        self.log = tempfile.TemporaryFile()
        self.process: subprocess.Popen | None = None

    def manage(self, *args: str) -> None:
        subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=self.env, check=True, timeout=300, capture_output=True)

    def start(self) -> None:
        command = [sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py", "--preload", "studyapp.wsgi"]
        self.process = subprocess.Popen(command, cwd=ROOT, env=self.env, stdout=subprocess.DEVNULL, stderr=self.log)
        deadline = time.monotonic() + 60
        while True:
            try:
                if fetch(self.base + "/")[0] == 200:
                    return
            except OSError:
                pass
            if time.monotonic() > deadline or self.process.poll() is not None:
                raise AssertionError("gunicorn did not start:\n" + self.output()[-3000:])
            time.sleep(0.5)

    def workers(self) -> set[int]:
        return set(children(self.process.pid)) if self.process is not None else set()

    def output(self) -> str:
        self.log.seek(0)
        return self.log.read().decode(errors="replace")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)


def fetch(url: str, headers: dict[str, str] | None = None, *, opener: urllib.request.OpenerDirector | None = None,
          data: bytes | None = None, timeout: float = 60) -> tuple[int, dict[str, str], bytes, float]:  # fmt: skip
    """Status, headers, body and seconds of one request (redirects not followed when ``opener`` is a
    :func:`participant`'s)."""
    start = time.monotonic()
    request = urllib.request.Request(url, data=data, headers=headers or {})
    try:
        with (opener or urllib.request.build_opener()).open(request, timeout=timeout) as r:
            return r.status, dict(r.headers), r.read(), time.monotonic() - start
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read(), time.monotonic() - start


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):  # noqa: ANN002, ANN003 (urllib's signature)
        return None


def participant(base: str, slug: str, pid: str) -> urllib.request.OpenerDirector:
    """A browser (cookies, no automatic redirects) of a Prolific participant who arrived and consented."""
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()), _NoRedirect())
    status = fetch(f"{base}/s/{slug}/?PROLIFIC_PID={pid}&STUDY_ID=s&SESSION_ID=x{pid}", opener=opener)[0]
    assert status == 302, status
    status, _, page, _ = fetch(f"{base}/s/{slug}/consent/", opener=opener)
    assert status == 200, status
    fields = dict(re.findall(rb'name="(csrfmiddlewaretoken|version)" value="([^"]*)"', page))
    body = b"&".join([b"csrfmiddlewaretoken=" + fields[b"csrfmiddlewaretoken"], b"version=" + fields[b"version"], b"agree=on"])
    status = fetch(f"{base}/s/{slug}/consent/", {"Referer": f"{base}/s/{slug}/consent/"}, opener=opener, data=body)[0]
    assert status == 302, status
    return opener
