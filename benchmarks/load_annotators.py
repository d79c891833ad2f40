"""Load benchmark: simulated annotators go through whole sessions against the production server.

Starts gunicorn with the project's ``gunicorn.conf.py`` on 127.0.0.1 (a free port) against a
database of its own (PostgreSQL: a database ``<name>_load`` next to the one in ``--postgres-url``,
created and dropped here; SQLite: a temporary file), imports a collection, creates one study per
scenario and runs annotators over HTTP through entry, consent, instructions, practice, the check
questions, every item and the completion page, with a bounded asyncio client (a cap on open
connections, a deadline per request and per scenario). Afterwards it checks the database:

* every answer the server acknowledged is stored exactly once, with the value sent;
* no presentation has more than k valid answers;
* nobody was given a presentation twice;
* every finished annotator was shown the completion code (and everyone shown it is finished).

Scenarios (each prints one result line; the last line sums them up)::

    paced  500 annotators arriving over 60 s, 5-15 s per page, for 100 s (goal: p95 item page and
           answer < 100 ms, entry and consent < 300 ms, 0 errors)
    burst  200 annotators at once, 0-50 ms between requests, to the end   (goal: >= 250 requests/s, 0 errors)
    slowloris (--slowloris) the paced scenario through nginx with the repository's proxy settings while 50 slow
           connections (headers a line, bodies a byte at a time) stay open against it (goal: p95 item < 100 ms, 0 errors),
           after the same scenario through the same proxy without them ("proxied", the reference of the same run)

``--allocation adaptive`` creates the studies with adaptive allocation (issue 32) and runs ``manage.py
allocation_priorities --every`` (``--recompute-seconds``: 10, with ``--smoke`` 2) beside the server during each
scenario, from its first recomputation on, as in production (``load_adaptive.py``). Before the paced scenario its
study is taken through the services (no HTTP) to its first complete analysis round, so the recomputations during it
take the best set, weigh the disputes and draw rounds while the annotators answer; after each scenario a line gives
how many recomputations ran, with a complete analysis round in how many, their CPU and time, and whether the
invariants held after them.

The full run uses the TREC 2014 diversity collection of the repository's reference data with all
8 public runs (3,976 regular presentations, like a real study). ``--smoke`` runs both scenarios
tiny on the bundled demo collection (about 20 s), its gunicorn with ``--preload`` (the master imports the
application once and forks its workers, instead of each worker importing it: about 2 s of CPU a worker, which
the tiny scenarios would otherwise spend mostly on starting servers); ``--fault`` runs annotators on the demo collection,
kills the server (master and workers, ``kill -9`` by pid) while they answer, restarts it and checks
the invariants. ``--two-instances`` (small too, also ``--preload``) starts two gunicorns on two ports (as on two machines) sharing one
PostgreSQL database and one Redis (``--redis-url``, the cache of both), sends 24 annotators alternately
to them, checks the invariants, then tries the rate limits across both: 2 x 10 newcomers from one
address (exactly 10 admitted) and 2 x 5 wrong passwords for one user name (locked from the 6th).
Every process started here is stopped by its pid, also on errors and Ctrl-C.

    .venv/bin/python benchmarks/load_annotators.py                      # PostgreSQL at $STUDYAPP_TEST_POSTGRES_URL
    .venv/bin/python benchmarks/load_annotators.py --only burst --workers 3    # one scenario, a worker count
    .venv/bin/python benchmarks/load_annotators.py --database sqlite --smoke
    .venv/bin/python benchmarks/load_annotators.py --fault --postgres-url postgres://user:pw@127.0.0.1/db
    .venv/bin/python benchmarks/load_annotators.py --two-instances --redis-url redis://127.0.0.1:6379/0
    .venv/bin/python benchmarks/load_annotators.py --slowloris [--smoke]          # needs Debian's nginx

Each scenario's line also gives the CPU per request of the server, of this client and of everything else
(the database, the kernel) and the machine's idle share: near 0 % the 2 cores, not the server's
workers, are the limit.

Exit status 0 when the invariants hold and no request failed, 1 otherwise, 2 on bad usage.
Timing goals are reported, never asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlencode, urlsplit

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "tests" / "evaluation" / "data" / "reference"
HOST = "127.0.0.1"
REQUEST_TIMEOUT = 30.0  # seconds; a slower answer counts as an error
# After kill -9 the new master listens at once but its workers take seconds to boot (longer on a busy
# machine): connections made meanwhile wait in the listen queue, so the fault scenario allows more. (With
# --preload, as in --smoke, the master imports the application before it listens: connections are refused
# meanwhile and the annotators try again.)
FAULT_REQUEST_TIMEOUT = 120.0
MAX_CONNECTIONS = 256  # open connections of the client at once


@dataclass(frozen=True)
class Scenario:
    name: str
    annotators: int
    arrival_seconds: float  # arrivals spread evenly over this time (0: all at once)
    item_think: tuple[float, float]  # seconds between seeing an item and answering it
    page_think: tuple[float, float]  # seconds on each onboarding page
    duration: float  # the scenario stops here (seconds after the first arrival), finished or not
    study: str  # which study configuration
    fault: bool = False  # kill -9 the server while annotators answer, then restart it


FULL = [
    Scenario("paced", 500, 60.0, (5.0, 15.0), (5.0, 15.0), 100.0, "trec"),
    Scenario("burst", 200, 0.0, (0.0, 0.05), (0.0, 0.05), 150.0, "trec"),
]
SMOKE = [
    Scenario("paced", 16, 4.0, (0.1, 0.4), (0.05, 0.2), 7.0, "demo"),
    Scenario("burst", 10, 0.0, (0.0, 0.05), (0.0, 0.05), 20.0, "demo"),
]
FAULT = [Scenario("fault", 16, 0.0, (0.0, 0.05), (0.0, 0.05), 45.0, "demo", fault=True)]
# Two app instances (two gunicorns on two ports, as on two machines) on one PostgreSQL and one Redis; the
# annotators alternate between them, then the rate limits are tried across both (see check_shared_limits).
TWO = [Scenario("two", 24, 3.0, (0.0, 0.1), (0.0, 0.1), 60.0, "demo")]
SHARED_ARRIVAL_LIMIT = 10  # STUDYAPP_ARRIVALS_PER_CLIENT of both instances in the two-instance scenario
# The paced annotators through the documented proxy (nginx with deploy/nginx/studyapp-proxy.conf) while
# SLOW_CONNECTIONS slow clients stay connected to it (benchmarks/nginx_proxy.py); --smoke: tiny, on the demo.
# The same annotators through the same proxy without slow connections run first: the reference of the same run.
SLOWLORIS = [Scenario(name, 500, 60.0, (5.0, 15.0), (5.0, 15.0), 100.0, "trec") for name in ("proxied", "slowloris")]
SLOWLORIS_SMOKE = [Scenario(name, 16, 4.0, (0.1, 0.4), (0.05, 0.2), 12.0, "demo") for name in ("proxied", "slowloris")]
SLOW_CONNECTIONS = 50

# fast_limit far above the quota and no check rule: simulated annotators answer fast and ignore check items by
# design and must not be excluded for it
STUDIES = {
    # all 8 public runs (28 pairs) x the 49 topics every run covers x (1 + up to 3 subtopics) = 3,976 presentations
    "trec": {
        "runs": None,
        "subtopics_per_topic": 3,
        "annotators_per_presentation": 3,
        "items_per_annotator": 20,
        "check_share": 0.1,
        "fast_limit": 10000,
        "check_fail_limit": None,
    },  # fmt: skip
    "demo": {
        "runs": None,
        "subtopics_per_topic": 3,
        "annotators_per_presentation": 3,
        "items_per_annotator": 8,
        "check_share": 0.125,
        "fast_limit": 10000,
        "check_fail_limit": None,
    },  # fmt: skip
}
CODE = "LOADDONE"


# -- the database ---------------------------------------------------------------------------------


class Database:
    """The benchmark's own database: created before Django starts, dropped at the end."""

    def __init__(self, kind: str, postgres_url: str, workdir: Path, *, suffix: str = "_load") -> None:
        self.kind = kind
        if kind == "sqlite":
            self.url = f"sqlite:///{workdir / 'load.sqlite3'}"
            self.admin_url = ""
            return
        parts = urlsplit(postgres_url)
        self.name = parts.path.strip("/") + suffix
        self.admin_url = parts._replace(scheme="postgresql").geturl()
        self.url = parts._replace(path="/" + self.name).geturl()

    def _admin(self, sql: str) -> None:
        import psycopg

        with psycopg.connect(self.admin_url, autocommit=True, connect_timeout=10) as conn:
            conn.execute(sql)

    def create(self) -> None:
        if self.kind == "postgres":
            self.drop()
            self._admin(f'CREATE DATABASE "{self.name}"')

    def drop(self) -> None:
        """Drop the database; sessions left over (a server that did not stop) are ended first.

        A plain DROP first: it ends an autovacuum worker by itself, which ``WITH (FORCE)`` refuses to do
        for a role that is not a superuser (PostgreSQL 15).
        """
        if self.kind == "postgres":
            import psycopg

            try:
                self._admin(f'DROP DATABASE IF EXISTS "{self.name}"')
            except psycopg.errors.ObjectInUse:
                self._admin(f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)')

    def release(self, workdir: Path) -> None:
        """At the end of a run: close Django's connections (if Django was set up), drop the database, remove ``workdir``."""
        try:
            from django.db import connections

            connections.close_all()
        except Exception:  # noqa: BLE001 - Django may not be set up yet
            pass
        self.drop()
        shutil.rmtree(workdir, ignore_errors=True)


def check_database_arguments(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Refuse (usage error) ``--database postgres`` without a usable ``--postgres-url``."""
    if args.database == "postgres" and not args.postgres_url:
        parser.error("PostgreSQL needs --postgres-url or STUDYAPP_TEST_POSTGRES_URL (or use --database sqlite)")
    parts = urlsplit(args.postgres_url)
    if args.database == "postgres" and (parts.scheme not in ("postgres", "postgresql") or not parts.path.strip("/")):
        parser.error(f"--postgres-url must be postgres://user:password@host:port/database, got {args.postgres_url!r}")


def prepare_studies(scenarios: list[Scenario], allocation: str | dict[str, str] = "uniform") -> dict[str, dict]:
    """Migrate, import the collection(s) and create one study per scenario (with that ``allocation``, or per scenario
    name from a dict); returns slug and k per scenario."""
    from django.core.management import call_command

    from studyapp.models import Presentation
    from studyapp.services.collections.importing import import_collection
    from studyapp.services.design.study_config import parse_config
    from studyapp.services.design.study_design import create_study
    from studyapp.services.rehearsal.demo import DEMO_DIR
    from studyapp.services.rehearsal.demo import RUNS as DEMO_RUNS

    call_command("migrate", verbosity=0, interactive=False)
    runs = {}
    for kind in sorted({s.study for s in scenarios}):
        started = time.monotonic()
        if kind == "trec":
            files = sorted((REFERENCE / "runs" / "public").glob("*.run"))
            trec = REFERENCE / "trec2014"
            import_collection("trec", qrels=trec / "qrels.diversity.tsv", intents=trec / "intent_probs.tsv", runs=files)
            runs[kind] = sorted(f.stem for f in files)
        else:
            files = [DEMO_DIR / "runs" / f"{name}.run" for name in DEMO_RUNS]
            import_collection("demo", qrels=DEMO_DIR / "qrels.txt", intents=DEMO_DIR / "intents.tsv", topics=DEMO_DIR / "topics.xml",
                              docs=DEMO_DIR / "docs.jsonl", runs=files)  # fmt: skip
            runs[kind] = sorted(DEMO_RUNS)
        print(f"setup: collection {kind} imported in {time.monotonic() - started:.1f} s", flush=True)
    studies = {}
    for scenario in scenarios:
        config = {**STUDIES[scenario.study], "runs": runs[scenario.study], "completion_code": CODE, "screenout_code": "LOADFULL",
                  "allocation": allocation if isinstance(allocation, str) else allocation[scenario.name]}  # fmt: skip
        study = create_study(scenario.study, f"Load {scenario.name}", parse_config(config)).study
        regular = Presentation.objects.filter(study=study, kind=Presentation.Kind.PAIR).count()
        studies[scenario.name] = {"slug": study.slug, "pk": study.pk, "k": study.annotators_per_presentation, "presentations": regular}
        print(f"setup: study for {scenario.name}: {regular} regular presentations, {study.items_per_annotator} items each", flush=True)
    return studies


# -- the server -----------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def children(pid: int) -> list[int]:
    """Direct children of ``pid`` (Linux /proc)."""
    found = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            pass
    return found


class Server:
    """gunicorn with the project's configuration; stopped (or killed) by pid, never by name."""

    def __init__(
        self,
        database_url: str,
        port: int,
        workers: int | None,
        workdir: Path,
        extra_env: dict[str, str] | None = None,
        *,
        preload: bool = False,
    ) -> None:
        self.port = port
        self.preload = preload  # gunicorn --preload: the master imports the application once, its workers are forks of it
        self.log = workdir / f"gunicorn-{port}.log"
        self.env = {
            **os.environ,
            "DATABASE_URL": database_url,
            "STUDYAPP_BIND": f"{HOST}:{port}",
            "DJANGO_DEBUG": "0",
            "DJANGO_ALLOWED_HOSTS": HOST,
            "DJANGO_SECRET_KEY": secrets.token_urlsafe(40),
            "STUDYAPP_STATIC_FROM_APPS": "1",
            "DJANGO_LOG_LEVEL": "WARNING",
            # as behind one reverse proxy: each simulated participant has an address of its own (X-Forwarded-For)
            "STUDYAPP_PROXY_HOPS": "1",
        }
        if workers:
            self.env["WEB_CONCURRENCY"] = str(workers)
        self.env.update(extra_env or {})
        self.process: subprocess.Popen | None = None
        self.workers: list[int] = []

    def start(self) -> None:
        with self.log.open("a") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "gunicorn", "-c", str(ROOT / "gunicorn.conf.py"), *(["--preload"] if self.preload else []), "studyapp.wsgi"],
                cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
            )  # fmt: skip
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"gunicorn exited with status {self.process.returncode}:\n{self.tail()}")
            try:
                with socket.create_connection((HOST, self.port), timeout=1) as s:
                    s.sendall(f"GET /s/no-such-study/ HTTP/1.0\r\nHost: {HOST}\r\n\r\n".encode())
                    if s.recv(12).startswith(b"HTTP/1."):
                        break
            except OSError:
                time.sleep(0.2)
        else:
            raise RuntimeError(f"gunicorn did not answer within 60 s:\n{self.tail()}")
        expected = int(self.env.get("WEB_CONCURRENCY") or 0)
        while time.monotonic() < deadline and len(children(self.process.pid)) < expected:
            time.sleep(0.1)  # every worker booted, so the first requests measure serving, not booting
        self.workers = children(self.process.pid)

    def pids(self) -> list[int]:
        if self.process is None:
            return []
        return [self.process.pid, *children(self.process.pid), *self.workers]

    def kill9(self) -> None:
        """``kill -9`` the master and every worker, by pid."""
        for pid in dict.fromkeys(self.pids()):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if self.process is not None:
            self.process.wait(timeout=10)
        self.process = None

    def stop(self) -> None:
        """Graceful stop (TERM to the master), then ``kill -9`` whatever is left, by pid."""
        if self.process is None:
            return
        pids = self.pids()
        try:
            self.process.send_signal(signal.SIGTERM)
            self.process.wait(timeout=25)
        except (subprocess.TimeoutExpired, ProcessLookupError):
            pass
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if self.process.poll() is None:
            self.process.wait(timeout=10)
        self.process = None

    def cpu_seconds(self) -> float:
        """CPU time (user + system) used so far by the master and its workers, live or gone (Linux /proc).

        Workers recycled after ``max_requests`` are reaped by the master, which then holds their CPU time
        in its children's fields; counting live workers alone made the figure drop (even below zero).
        """
        total = 0
        master = self.process.pid if self.process is not None else None
        for pid in dict.fromkeys(self.pids()):
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            total += int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15 of stat)
            if pid == master:
                total += int(fields[13]) + int(fields[14])  # cutime, cstime: reaped workers (fields 16 and 17)
        return total / os.sysconf("SC_CLK_TCK")

    def tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""


# -- the client -----------------------------------------------------------------------------------


class ServerDown(Exception):
    """No connection (the server is being restarted in the fault scenario)."""


@dataclass
class Response:
    status: int
    headers: dict[str, str]
    cookies: dict[str, str]
    body: str

    @property
    def location(self) -> str:
        return urlsplit(self.headers.get("location", "")).path


@dataclass
class Stats:
    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    errors: Counter = field(default_factory=Counter)
    error_samples: list[str] = field(default_factory=list)
    requests: int = 0
    retries: int = 0
    acknowledged: dict[int, int] = field(default_factory=dict)  # assignment id -> value the server said it stored
    told_finished: set[str] = field(default_factory=set)  # platform ids whose last answer's reply said finished
    shown_code: set[str] = field(default_factory=set)  # platform ids that saw the completion code
    stopped: set[str] = field(default_factory=set)  # platform ids stopped by the scenario's end mid-session
    prepared: set[str] = field(default_factory=set)  # platform ids that answered through the services before the scenario
    refused: set[str] = field(default_factory=set)
    started: float = 0.0
    ended: float = 0.0
    server_cpu: float = 0.0  # seconds of CPU the server used during the scenario
    client_cpu: float = 0.0  # and this client
    machine_idle: float = 0.0  # share of the machine's CPU time left idle during the scenario (0-1)
    machine_busy: float = 0.0  # seconds of CPU the whole machine used (server, client, database, kernel, others)

    def error(self, kind: str, message: str) -> None:
        self.errors[kind] += 1
        if len(self.error_samples) < 8:
            self.error_samples.append(f"{kind}: {message}")

    def p95(self, kind: str) -> float:
        values = sorted(self.latencies.get(kind, []))
        return values[min(len(values) - 1, int(0.95 * len(values)))] * 1000 if values else float("nan")


class Unexpected(Exception):
    pass


COMPREHENSION_RIGHT: dict[str, str] = {}  # filled from the app's own questions once Django is set up


class Annotator:
    """One simulated participant with their own cookies, going through the whole session."""

    def __init__(self, client: Client, pid: str, scenario: Scenario, slug: str, rng: random.Random) -> None:
        self.client, self.pid, self.scenario, self.rng = client, pid, scenario, rng
        self.base = f"/s/{slug}/"
        self.cookies: dict[str, str] = {}
        self.address = f"10.{rng.randrange(256)}.{rng.randrange(256)}.{rng.randrange(1, 255)}"

    async def think(self, span: tuple[float, float]) -> None:
        await asyncio.sleep(self.rng.uniform(*span))

    async def call(self, kind: str, method: str, path: str, form: dict | None = None, *, accept_json: bool = False) -> Response:
        response = await self.client.request(kind, method, path, self.cookies, form, accept_json=accept_json, address=self.address)
        for name, value in response.cookies.items():
            if value:
                self.cookies[name] = value
            else:
                self.cookies.pop(name, None)
        if response.status >= 500:
            raise Unexpected(f"{method} {path}: HTTP {response.status}")
        return response

    def expect(self, response: Response, status: int, where: str = "") -> None:
        if response.status != status or (where and not response.location.startswith(self.base + where)):
            raise Unexpected(f"expected {status} {where}, got {response.status} {response.location} {response.body[:200]!r}")

    async def run(self) -> None:
        ids = {"PROLIFIC_PID": self.pid, "STUDY_ID": "load", "SESSION_ID": f"s-{self.pid}"}
        entry = await self.call("entry", "GET", self.base + "?" + urlencode(ids))
        if entry.status == 200 and "full" in entry.body:
            self.client.stats.refused.add(self.pid)
            return
        self.expect(entry, 302, "consent/")
        page = await self.call("consent", "GET", self.base + "consent/")
        self.expect(page, 200)
        version = re.search(r'name="version" value="([^"]*)"', page.body)
        await self.think(self.scenario.page_think)
        consented = await self.call(
            "consent", "POST", self.base + "consent/", {"agree": "on", "version": version.group(1) if version else "1"}
        )
        if consented.status == 200 and "full" in consented.body:
            self.client.stats.refused.add(self.pid)
            return
        self.expect(consented, 302, "instructions/")
        self.expect(await self.call("onboarding", "GET", self.base + "instructions/"), 200)
        await self.think(self.scenario.page_think)
        self.expect(await self.call("onboarding", "POST", self.base + "instructions/"), 302, "practice/")
        self.expect(await self.call("onboarding", "GET", self.base + "practice/"), 200)
        await self.think(self.scenario.page_think)
        self.expect(await self.call("onboarding", "POST", self.base + "practice/", {"value": self.rng.choice([-3, 3])}), 302, "practice/")
        self.expect(await self.call("onboarding", "GET", self.base + "practice/"), 200)
        self.expect(await self.call("onboarding", "GET", self.base + "check/"), 200)
        await self.think(self.scenario.page_think)
        self.expect(await self.call("onboarding", "POST", self.base + "check/", COMPREHENSION_RIGHT), 302, "item/")
        following = await self.call("item", "GET", self.base + "item/")
        self.expect(following, 302)
        path = following.location
        while not path.endswith("/done/"):
            page = await self.call("item", "GET", path)
            self.expect(page, 200)
            pk = int(path.rstrip("/").split("/")[-1])
            await self.think(self.scenario.item_think)
            value = self.rng.randint(-4, 4)
            form = {"value": value, "request_id": f"{self.pid}-{pk}", "client_ms": 5000, "visible_ms": 5000, "first_interaction_ms": 900}
            reply = await self.call("answer", "POST", path + "answer/", form, accept_json=True)
            self.expect(reply, 200)
            data = json.loads(reply.body)
            if not data.get("stored") or data.get("value") != value:
                raise Unexpected(f"answer to {pk} not stored as sent: {data}")
            self.client.stats.acknowledged[pk] = value
            if data.get("finished"):
                self.client.stats.told_finished.add(self.pid)
            path = urlsplit(data["next"]).path
        done = await self.call("done", "GET", path)
        self.expect(done, 200)
        if CODE not in done.body:
            raise Unexpected("the completion page shows no completion code")
        self.client.stats.shown_code.add(self.pid)


class Client:
    """A minimal HTTP/1.0 client on asyncio (one connection per request, as sync workers close them anyway)."""

    def __init__(self, port: int, stats: Stats, *, retry_until: float = 0.0) -> None:
        self.port, self.stats = port, stats
        self.slots = asyncio.Semaphore(MAX_CONNECTIONS)
        self.retry_until = retry_until  # fault scenario: retry refused connections until then (monotonic)
        self.timeout = REQUEST_TIMEOUT

    async def request(
        self, kind: str, method: str, path: str, cookies: dict, form: dict | None, *, accept_json: bool, address: str
    ) -> Response:
        while True:
            try:
                return await self._once(kind, method, path, cookies, form, accept_json=accept_json, address=address)
            except ServerDown:
                if time.monotonic() > self.retry_until:
                    raise
                self.stats.retries += 1
                await asyncio.sleep(0.2)

    async def _once(
        self, kind: str, method: str, path: str, cookies: dict, form: dict | None, *, accept_json: bool, address: str
    ) -> Response:
        body = urlencode(form or {}).encode() if method == "POST" else b""
        head = [f"{method} {path} HTTP/1.0", f"Host: {HOST}:{self.port}", "User-Agent: load-annotators", f"X-Forwarded-For: {address}"]
        if cookies:
            head.append("Cookie: " + "; ".join(f"{k}={v}" for k, v in cookies.items()))
        if method == "POST":
            head += ["Content-Type: application/x-www-form-urlencoded", f"Content-Length: {len(body)}"]
            head.append(f"X-CSRFToken: {cookies.get('csrftoken', '')}")
        if accept_json:
            head.append("Accept: application/json")
        raw = ("\r\n".join(head) + "\r\n\r\n").encode() + body
        async with self.slots:
            started = time.perf_counter()
            try:
                async with asyncio.timeout(self.timeout):  # no extra task per call, unlike wait_for: a cheaper client
                    reader, writer = await asyncio.open_connection(HOST, self.port)
            except TimeoutError:
                raise  # a server too slow to accept: an error, never retried (TimeoutError is an OSError)
            except OSError as exc:
                raise ServerDown(f"{type(exc).__name__}: {exc}") from None
            try:
                writer.write(raw)
                async with asyncio.timeout(self.timeout):
                    data = await reader.read(-1)
            except TimeoutError:
                raise
            except OSError as exc:
                raise ServerDown(f"{type(exc).__name__}: {exc}") from None
            finally:
                writer.close()
            elapsed = time.perf_counter() - started
        if b"\r\n\r\n" not in data:
            raise ServerDown("connection closed without a (complete) reply")
        self.stats.requests += 1
        self.stats.latencies[kind].append(elapsed)
        head_bytes, _, payload = data.partition(b"\r\n\r\n")
        lines = head_bytes.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        headers: dict[str, str] = {}
        new_cookies: dict[str, str] = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            name, value = name.strip().lower(), value.strip()
            if name == "set-cookie":
                pair, *attributes = value.split(";")
                cookie, _, cookie_value = pair.partition("=")
                # a deleted cookie (Max-Age=0, expires in 1970); the attributes alone, never the value,
                # which may contain "1970" by chance
                attrs = {a.partition("=")[0].strip().lower(): a.partition("=")[2].strip() for a in attributes}
                expired = attrs.get("max-age") == "0" or "1970" in attrs.get("expires", "")
                new_cookies[cookie.strip()] = "" if expired else cookie_value.strip().strip('"')
            else:
                headers[name] = value
        return Response(status, headers, new_cookies, payload.decode("utf-8", errors="replace"))


def machine_times() -> tuple[int, int]:
    """The machine's busy and idle CPU time so far (clock ticks over all cores, /proc/stat; idle includes I/O wait).

    An idle share near 0 during a burst means the machine's cores are the limit (the database and this
    client share them with the server); a large one means the server waits (too few workers, locks).
    """
    fields = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + fields[4]  # idle, iowait
    return sum(fields[:8]) - idle, idle  # user nice system idle iowait irq softirq steal (guest is inside user)


async def run_scenario(scenario: Scenario, study: dict, servers: list[Server], seed: int) -> Stats:
    """Run ``scenario``; with several servers the annotators alternate between them (one each)."""
    stats = Stats()
    rng = random.Random(seed)
    server = servers[0]
    clients = [Client(s.port, stats) for s in servers]
    client = clients[0]
    if scenario.fault:
        client.timeout = FAULT_REQUEST_TIMEOUT
    stats.started = time.monotonic()
    end = {"at": stats.started + scenario.duration}  # the fault scenario adds the restart time
    cpu_before, client_before, machine_before = sum(s.cpu_seconds() for s in servers), time.process_time(), machine_times()

    async def one(index: int) -> None:
        if scenario.arrival_seconds:
            await asyncio.sleep(index * scenario.arrival_seconds / scenario.annotators)
        pid = f"{scenario.name}{index:04d}{secrets.token_hex(3)}"
        try:
            await Annotator(clients[index % len(clients)], pid, scenario, study["slug"], random.Random(rng.random())).run()
        except asyncio.CancelledError:
            stats.stopped.add(pid)
            raise
        except ServerDown as exc:
            stats.error("connection", str(exc))
        except TimeoutError:
            stats.error("timeout", f"no reply within {client.timeout:.0f} s")
        except Unexpected as exc:
            stats.error("unexpected", str(exc))

    async def fault() -> None:
        # kill -9 once a third of the expected answers are acknowledged, restart at once
        target = scenario.annotators * STUDIES[scenario.study]["items_per_annotator"] // 3
        while len(stats.acknowledged) < target and time.monotonic() < end["at"]:
            await asyncio.sleep(0.02)
        client.retry_until = time.monotonic() + 60
        killed = time.monotonic()
        server.kill9()
        print(f"fault: killed the server (kill -9) after {len(stats.acknowledged)} acknowledged answers; restarting", flush=True)
        await asyncio.get_running_loop().run_in_executor(None, server.start)
        end["at"] += time.monotonic() - killed  # the time the server was down does not count

    tasks = [asyncio.ensure_future(one(i)) for i in range(scenario.annotators)]
    if scenario.fault:
        tasks.append(asyncio.ensure_future(fault()))
    pending = set(tasks)
    while pending and time.monotonic() < end["at"]:
        _, pending = await asyncio.wait(pending, timeout=min(1.0, max(0.0, end["at"] - time.monotonic())))
    for task in pending:
        task.cancel()
    await asyncio.gather(*pending, return_exceptions=True)
    stats.ended = time.monotonic()
    # CPU per request is what capacity follows on a busy machine; a restarted server (fault) starts from 0
    stats.server_cpu = sum(s.cpu_seconds() for s in servers) - (0.0 if scenario.fault else cpu_before)
    stats.client_cpu = time.process_time() - client_before
    busy, idle = (after - before for after, before in zip(machine_times(), machine_before))
    stats.machine_idle = idle / max(1e-9, busy + idle)
    stats.machine_busy = busy / os.sysconf("SC_CLK_TCK")
    return stats


# -- limits across instances ----------------------------------------------------------------------


async def check_shared_limits(servers: list[Server], slug: str) -> tuple[str, bool]:
    """Try the rate limits across the instances: newcomers from one address alternate between the servers
    (2 x the arrival limit of each), then sign-in failures of one user name (2 x STUDYAPP_LOGIN_FAILURES).
    Shared counts admit exactly the limit over both; per-instance counts would admit twice as many."""
    from django.conf import settings

    stats = Stats()
    clients = [Client(s.port, stats) for s in servers]
    address = f"172.{secrets.randbelow(200) + 16}.{secrets.randbelow(256)}.{secrets.randbelow(254) + 1}"  # fresh each run
    admitted = refused = 0
    for n in range(2 * SHARED_ARRIVAL_LIMIT):
        path = f"/s/{slug}/?" + urlencode(
            {"PROLIFIC_PID": f"limit{n:03d}{secrets.token_hex(3)}", "STUDY_ID": "load", "SESSION_ID": f"s{n}"}
        )
        response = await clients[n % len(clients)].request("entry", "GET", path, {}, None, accept_json=False, address=address)
        if response.status == 429:
            refused += 1
        elif response.status in (200, 302):
            admitted += 1
    failures = settings.STUDYAPP_LOGIN_FAILURES
    user = f"nobody-{secrets.token_hex(4)}"
    locked_at = None
    for n in range(2 * failures):
        c = clients[n % len(clients)]
        cookies: dict[str, str] = {}
        form_page = await c.request("login", "GET", "/admin/login/", cookies, None, accept_json=False, address=address)
        cookies.update({k: v for k, v in form_page.cookies.items() if v})
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form_page.body)
        form = {"username": user, "password": "wrong-password", "csrfmiddlewaretoken": token.group(1) if token else ""}
        reply = await c.request("login", "POST", "/admin/login/", cookies, form, accept_json=False, address=f"10.9.{n}.1")
        if "Too many failed sign-ins" in reply.body and locked_at is None:
            locked_at = n + 1
    held = admitted == SHARED_ARRIVAL_LIMIT and refused == SHARED_ARRIVAL_LIMIT and locked_at == failures + 1
    line = (
        f"limits: servers={len(servers)} arrivals_admitted={admitted} arrivals_refused={refused} arrival_limit={SHARED_ARRIVAL_LIMIT}"
        f" login_locked_at_attempt={locked_at} login_failure_limit={failures} held={'yes' if held else 'NO'}"
    )
    return line, held


# -- the invariants -------------------------------------------------------------------------------


def check_invariants(study: dict, stats: Stats) -> list[str]:
    """What must hold after any run, crash or not; returns the violations (empty: all hold)."""
    from django.db import connections
    from django.db.models import Count

    from studyapp.models import Annotator, Assignment, Preference, Presentation

    connections.close_all()  # a fresh connection: the server may have been killed meanwhile
    problems = []
    stored = dict(Preference.objects.filter(assignment__annotator__study_id=study["pk"]).values_list("assignment_id", "value"))
    missing = [pk for pk in stats.acknowledged if pk not in stored]
    wrong = [pk for pk, value in stats.acknowledged.items() if pk in stored and stored[pk] != value]
    if missing or wrong:
        problems.append(f"acknowledged answers missing {len(missing)}, stored with another value {len(wrong)}")
    twice = Preference.objects.values("assignment_id").annotate(n=Count("id")).filter(n__gt=1).count()
    if twice:
        problems.append(f"{twice} assignments have more than one answer")
    over = (
        Preference.objects.filter(assignment__presentation__study_id=study["pk"], assignment__presentation__kind=Presentation.Kind.PAIR)
        .exclude(assignment__annotator__status=Annotator.Status.EXCLUDED)
        .values("assignment__presentation_id")
        .annotate(n=Count("id"))
        .filter(n__gt=study["k"])
        .count()
    )
    if over:
        problems.append(f"{over} presentations have more than k={study['k']} valid answers")
    duplicate = (
        Assignment.objects.filter(annotator__study_id=study["pk"])
        .values("annotator_id", "presentation_id")
        .annotate(n=Count("id"))
        .filter(n__gt=1)
    )
    if duplicate.exists():
        problems.append(f"{duplicate.count()} (annotator, presentation) pairs given twice")
    finished = set(Annotator.objects.filter(study_id=study["pk"], status=Annotator.Status.FINISHED).values_list("external_id", flat=True))
    finished -= stats.prepared  # never sent a request: no page to have been shown
    not_shown = finished - stats.shown_code - stats.stopped  # those stopped by the scenario's end never asked for the page
    untold = finished - stats.told_finished - stats.stopped  # a reply lost when the scenario stopped is no fault
    if not_shown or untold or stats.shown_code - finished or stats.told_finished - finished:
        problems.append(
            f"finished but not shown the code: {len(not_shown)}; shown the code but not finished: {len(stats.shown_code - finished)};"
            f" finished but not told so: {len(untold)}; told but not finished: {len(stats.told_finished - finished)}"
        )
    return problems


# -- main -----------------------------------------------------------------------------------------


def report(scenario: Scenario, stats: Stats, problems: list[str], database: str, workers: str) -> str:
    seconds = max(1e-9, stats.ended - stats.started)
    kinds = " ".join(f"p95_{kind}_ms={stats.p95(kind):.0f}" for kind in ("entry", "consent", "onboarding", "item", "answer", "done"))
    return (
        f"{scenario.name}: database={database} workers={workers} annotators={scenario.annotators} seconds={seconds:.1f}"
        f" requests={stats.requests} rps={stats.requests / seconds:.0f} {kinds} answers={len(stats.acknowledged)}"
        f" finished={len(stats.shown_code)} refused={len(stats.refused)} errors={sum(stats.errors.values())}"
        f" server_cpu_ms_per_request={1000 * stats.server_cpu / max(1, stats.requests):.1f}"
        f" client_cpu_ms_per_request={1000 * stats.client_cpu / max(1, stats.requests):.1f}"
        f" other_cpu_ms_per_request={1000 * (stats.machine_busy - stats.server_cpu - stats.client_cpu) / max(1, stats.requests):.1f}"
        f" machine_idle_pct={100 * stats.machine_idle:.0f}"
        f" retries={stats.retries} invariants={'ok' if not problems else 'FAILED'}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--database", choices=["postgres", "sqlite"], default="postgres", help="which database to run against (default postgres)"
    )
    parser.add_argument("--postgres-url", default=os.environ.get("STUDYAPP_TEST_POSTGRES_URL", ""),
                        help="a PostgreSQL server whose user may create databases (default $STUDYAPP_TEST_POSTGRES_URL); "
                        "the benchmark uses its own database <name>_load")  # fmt: skip
    parser.add_argument("--smoke", action="store_true", help="both scenarios tiny, on the demo collection (about 20 s)")
    parser.add_argument("--fault", action="store_true",
                        help="kill -9 the server while annotators answer, restart it, check the invariants (alone, or after --smoke)")  # fmt: skip
    parser.add_argument("--two-instances", action="store_true",
                        help="two gunicorns (two ports) on one PostgreSQL and one Redis: annotators alternate between them, "
                        "then the rate limits are tried across both (needs --redis-url)")  # fmt: skip
    parser.add_argument("--redis-url", default=os.environ.get("STUDYAPP_TEST_REDIS_URL", ""),
                        help="the Redis both instances share with --two-instances (default $STUDYAPP_TEST_REDIS_URL)")  # fmt: skip
    parser.add_argument("--slowloris", action="store_true",
                        help=f"the paced scenario through nginx (deploy/nginx/studyapp-proxy.conf) while {SLOW_CONNECTIONS} slow "
                        "connections stay open against it (tiny with --smoke); last line slowloris_p95_item_ms=.. slowloris_errors=..")  # fmt: skip
    parser.add_argument("--workers", type=int, default=None, help="gunicorn workers (default: WEB_CONCURRENCY or gunicorn.conf.py)")
    parser.add_argument("--only", choices=[s.name for s in FULL], help="run one scenario of the full benchmark (no summary line)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--allocation", choices=["uniform", "adaptive"], default="uniform",
                        help="the studies' allocation (default uniform); adaptive runs manage.py allocation_priorities every "
                        "--recompute-seconds beside the server during each scenario")  # fmt: skip
    parser.add_argument("--recompute-seconds", type=float, default=None,
                        help="with --allocation adaptive: allocation_priorities --every (default 10; 2 with --smoke)")  # fmt: skip
    args = parser.parse_args(argv)
    check_database_arguments(parser, args)
    if args.workers is not None and args.workers < 1:
        parser.error("--workers must be at least 1")
    if args.recompute_seconds is not None and args.recompute_seconds <= 0:
        parser.error("--recompute-seconds must be positive")
    if args.only and (args.smoke or args.fault):
        parser.error("--only picks a scenario of the full run; it does not combine with --smoke or --fault")
    if args.two_instances and (args.smoke or args.fault or args.only):
        parser.error("--two-instances runs its own scenario; it does not combine with --smoke, --fault or --only")
    if args.two_instances and (args.database != "postgres" or not args.redis_url.startswith(("redis://", "rediss://"))):
        parser.error("--two-instances needs PostgreSQL and --redis-url redis://HOST:PORT/DB (or STUDYAPP_TEST_REDIS_URL)")
    scenarios = TWO if args.two_instances else (SMOKE if args.smoke else [] if args.fault else FULL) + (FAULT if args.fault else [])
    scenarios = [s for s in scenarios if not args.only or s.name == args.only]
    if args.slowloris and (args.fault or args.only or args.two_instances):
        parser.error("--slowloris runs its own scenario (with --smoke: tiny); it does not combine with --fault, --only or --two-instances")
    if args.slowloris:
        scenarios = SLOWLORIS_SMOKE if args.smoke else SLOWLORIS

    workdir = Path(tempfile.mkdtemp(prefix="load-annotators-"))
    database = Database(args.database, args.postgres_url, workdir)
    servers: list[Server] = []
    proxy = None  # nginx of --slowloris
    try:
        database.create()
        os.environ["DATABASE_URL"] = database.url
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "studyapp.settings")
        sys.path.insert(0, str(ROOT))
        import django

        django.setup()
        from django.db import connections

        from studyapp.services.participation.onboarding import COMPREHENSION

        COMPREHENSION_RIGHT.update({q.key: q.correct for q in COMPREHENSION})
        studies = prepare_studies(scenarios, args.allocation)
        prepared: dict[str, set[str]] = {}
        if args.allocation == "adaptive":
            from load_adaptive import PREPARED, Recomputer, complete_first_round

            from studyapp.models import Annotator as Participant

            for name in [s.name for s in scenarios if s.name in ("paced", "proxied", "slowloris")]:
                print(f"setup: {name}: {complete_first_round(studies[name]['pk'], args.seed)}", flush=True)
                ids = Participant.objects.filter(study_id=studies[name]["pk"], external_id__startswith=PREPARED)
                prepared[name] = set(ids.values_list("external_id", flat=True))
        connections.close_all()
        shared = (
            {"STUDYAPP_CACHE_URL": args.redis_url, "STUDYAPP_ARRIVALS_PER_CLIENT": str(SHARED_ARRIVAL_LIMIT)} if args.two_instances else {}
        )
        if args.slowloris:  # nginx appends the address the client sent as its own: one more hop to trust
            shared = {"STUDYAPP_PROXY_HOPS": "2"}
        for _ in range(2 if args.two_instances else 1):
            servers.append(Server(database.url, free_port(), args.workers, workdir, shared, preload=args.smoke or args.two_instances))
            servers[-1].start()
        targets: list = servers
        if args.slowloris:
            from nginx_proxy import Nginx, Proxied, slowloris

            proxy = Nginx(HOST, free_port(), servers[0].port, workdir)
            proxy.start()
            targets = [Proxied(servers[0], proxy.port)]
            print(f"setup: nginx on {HOST}:{proxy.port} (deploy/nginx/studyapp-proxy.conf) in front of gunicorn", flush=True)
        workers = "+".join(str(len(s.workers)) for s in servers)
        ports = ", ".join(str(s.port) for s in servers)
        cache = "redis" if args.two_instances else "database"
        print(f"setup: gunicorn on {HOST}:{ports}, {workers} workers, database {args.database}, cache {cache}", flush=True)
        results, all_problems = {}, []
        limits_held = True
        for n, scenario in enumerate(scenarios):
            recomputer = None
            if args.allocation == "adaptive":
                every = args.recompute_seconds or (2.0 if args.smoke else 10.0)
                recomputer = Recomputer(database.url, studies[scenario.name]["slug"], every, workdir)
                print(
                    f"setup: {scenario.name}: allocation_priorities --every {every:g} beside the server: {recomputer.start()}", flush=True
                )
            try:
                if args.slowloris and scenario.name == "proxied":
                    stats = asyncio.run(run_scenario(scenario, studies[scenario.name], targets, args.seed + n))
                elif args.slowloris:
                    work = run_scenario(scenario, studies[scenario.name], targets, args.seed + n)
                    stats, slow = asyncio.run(slowloris(HOST, proxy.port, SLOW_CONNECTIONS, work))
                    print(f"  slowloris: {SLOW_CONNECTIONS} slow connections kept open ({slow.opened} opened,"
                          f" {slow.dropped_by_proxy} dropped by the proxy's timeouts and reopened)", flush=True)  # fmt: skip
                else:
                    stats = asyncio.run(run_scenario(scenario, studies[scenario.name], servers, args.seed + n))
            finally:
                recomputed = recomputer.stop() if recomputer is not None else ""
            stats.prepared = prepared.get(scenario.name, set())
            problems = check_invariants(studies[scenario.name], stats)
            print(report(scenario, stats, problems, args.database, workers), flush=True)
            if recomputed:
                print(f"  {scenario.name}: allocation adaptive: {recomputed}; invariants after them:"
                      f" {'ok' if not problems else 'FAILED'}", flush=True)  # fmt: skip
            for line in problems + stats.error_samples:
                print(f"  {scenario.name}: {line}", flush=True)
            results[scenario.name] = stats
            all_problems += problems
            if args.two_instances:
                line, limits_held = asyncio.run(check_shared_limits(servers, studies[scenario.name]["slug"]))
                print(line, flush=True)
        verdict = "ok" if not all_problems else "FAILED"
        errors = sum(sum(s.errors.values()) for s in results.values())
        if "fault" in results:
            fault = results["fault"]
            print(f"fault_answers={len(fault.acknowledged)} fault_finished={len(fault.shown_code)} fault_retries={fault.retries}"
                  f" fault_errors={sum(fault.errors.values())} invariants={verdict}")  # fmt: skip
        if "two" in results:
            two = results["two"]
            print(f"two_instances: servers={len(servers)} database=postgres cache=redis answers={len(two.acknowledged)}"
                  f" finished={len(two.shown_code)} errors={sum(two.errors.values())} invariants={verdict}"
                  f" limits={'held' if limits_held else 'BROKEN'}")  # fmt: skip
        if "slowloris" in results:
            slow_run, reference = results["slowloris"], results["proxied"]
            print(f"slowloris_p95_item_ms={slow_run.p95('item'):.0f} slowloris_errors={sum(slow_run.errors.values())}"
                  f" slowloris_p95_answer_ms={slow_run.p95('answer'):.0f} slow_connections={SLOW_CONNECTIONS}"
                  f" reference_p95_item_ms={reference.p95('item'):.0f} reference_errors={sum(reference.errors.values())}"
                  f" invariants={verdict}")  # fmt: skip
        if "paced" in results and "burst" in results:
            paced, burst = results["paced"], results["burst"]
            burst_rps = burst.requests / max(1e-9, burst.ended - burst.started)
            print(
                f"paced_p95_item_ms={paced.p95('item'):.0f} paced_p95_answer_ms={paced.p95('answer'):.0f}"
                f" paced_p95_entry_ms={max(paced.p95('entry'), paced.p95('consent')):.0f} paced_errors={sum(paced.errors.values())}"
                f" burst_rps={burst_rps:.0f} burst_errors={sum(burst.errors.values())} invariants={verdict}"
            )
        return 0 if verdict == "ok" and errors == 0 and limits_held else 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 1
    finally:
        if proxy is not None:
            proxy.stop()
        for server in servers:
            server.stop()
        database.release(workdir)


if __name__ == "__main__":
    sys.exit(main())
