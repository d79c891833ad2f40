"""Benchmark: the server's CPU per annotator request, measured in-process (docs/annotator.md, README "Running a real study").

Runs simulated annotators one after another through whole sessions with Django's test client
against the production stack (DEBUG off, the production middleware, signed-cookie sessions, the
cached template loader, CSRF enforced, persistent database connections, the shared file cache of
the throttle) on the load benchmark's "trec" study (TREC 2014 with all 8 public runs: 3,976
regular presentations, 20 items per annotator, k = 3). Each request's CPU time is taken with
``time.process_time`` (this process only: the view, the ORM, the templates and the test client;
the database server's own work is the separate ``db_ms`` column, read from its process on this
machine when it is visible, else blank).

Printed per request type: count, mean CPU ms, median, the ratio to a reference request
measured in the same run (``ping``: a view that returns "ok" through the same middleware with the
same cookies), the database server's CPU ms, the SQL statements and the writing commits per request (transactions
that wrote or locked a row: with PostgreSQL's default ``synchronous_commit`` each waits for its log to reach the
disk, so on a busy disk they, not the CPU, set the latency), and with ``--calls``
the Python function calls per request: two runs on a noisy machine compare by the ratios, the
statements and the calls. The last line sums up the
requests the load benchmark sends (all but the heartbeats, which its annotators do not send):
``cpu_ms_per_request=.. ping_ms=.. session_cpu_ms=.. ratio_per_request=.. sql_per_request=.. commits_per_request=..``
(`` calls_per_request=..`` with ``--calls``).

    .venv/bin/python benchmarks/bench_requests.py                         # PostgreSQL at $STUDYAPP_TEST_POSTGRES_URL
    .venv/bin/python benchmarks/bench_requests.py --database sqlite
    .venv/bin/python benchmarks/bench_requests.py --profile item          # cProfile of the item pages
    .venv/bin/python benchmarks/bench_requests.py --allocation adaptive --calls   # adaptive allocation's admission

With ``--allocation adaptive`` the study allocates adaptively and the priorities are recomputed (what
``manage.py allocation_priorities`` does beside the server) before the first session and after every session,
outside the measured requests; a line before the last gives the CPU of a recomputation and the draws, and the last
line ends with `` recompute_cpu_ms=..``. ``--warmup`` sessions take the study further before the measurement.

The benchmark uses a database of its own (PostgreSQL: ``<name>_bench`` next to the one in
``--postgres-url``, created and dropped here; SQLite: a temporary file). Times are reported, never
asserted.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import re
import secrets
import statistics
import sys
import tempfile
import time
import types
import warnings
from collections import defaultdict
from pathlib import Path
from urllib.parse import urlencode, urlsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import load_annotators  # noqa: E402 - the load benchmark's database, study and answers

KINDS = (
    "ping",
    "entry",
    "consent_get",
    "consent_post",
    "instructions_get",
    "instructions_post",
    "practice_get",
    "practice_post",
    "check_get",
    "check_post",
    "next_item",
    "item",
    "heartbeat",
    "answer",
    "done",
)


# Statements that write (or lock rows, which PostgreSQL also records in its log): a transaction with one of them
# waits at its commit for the log to reach the disk (synchronous_commit, the default); one that only reads does not.
WRITES = re.compile(r"^\s*(INSERT|UPDATE|DELETE)\b|\bFOR (NO KEY )?UPDATE\b|\bFOR (KEY )?SHARE\b", re.IGNORECASE)


def backend_cpu_ms(pid: int | None) -> float | None:
    """CPU ms used so far by the database server process ``pid`` (Linux /proc), None when not visible."""
    if pid is None:
        return None
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return 1000 * (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Meter:
    """Per request type: CPU of this process (``process_time``) and of the database server's backend
    process, SQL statements, writing commits (transactions that wrote or locked a row: each waits for the disk
    at its commit) and (``calls``) Python function calls: the counts do not depend on how busy the machine is."""

    def __init__(self, profile_kind: str = "", *, calls: bool = False) -> None:
        self.cpu: dict[str, list[float]] = defaultdict(list)
        self.db: dict[str, float] = defaultdict(float)
        self.queries: dict[str, int] = defaultdict(int)
        self.commits: dict[str, int] = defaultdict(int)
        self.committed = self._committed  # one object, so a transaction's callback is recognised (count_commit)
        self.calls: dict[str, int] | None = defaultdict(int) if calls else None
        self.db_visible = True
        self.profile_kind = profile_kind
        self.profiler = cProfile.Profile(time.process_time) if profile_kind else None  # CPU, not waiting
        self.backend: int | None = None

    def find_backend(self) -> None:
        from django.db import connection

        if connection.vendor == "postgresql":
            connection.ensure_connection()
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_backend_pid()")
                self.backend = cursor.fetchone()[0]
        self.db_visible = backend_cpu_ms(self.backend) is not None

    def count_query(self, execute, sql, params, many, context):
        self.queries[self.kind] += 1
        result = execute(sql, params, many, context)
        if WRITES.search(sql) and context["cursor"].rowcount != 0:  # a statement that changed or locked no row wrote nothing
            self.count_commit(context["connection"])
        return result

    def count_commit(self, connection) -> None:
        """One writing commit: now for a statement in autocommit, else when its outermost transaction commits
        (once per transaction, however many statements wrote in it; nothing when it rolls back)."""
        if not connection.in_atomic_block:
            self.commits[self.kind] += 1
        elif not any(func is self.committed for _, func, _ in connection.run_on_commit):
            connection.on_commit(self.committed)

    def _committed(self) -> None:
        self.commits[self.kind] += 1

    def measure(self, kind: str, call):
        from django.db import connection

        self.kind = kind
        profiler = self.profiler if kind == self.profile_kind else cProfile.Profile() if self.calls is not None else None
        db_before = backend_cpu_ms(self.backend)
        with connection.execute_wrapper(self.count_query):
            if profiler is not None:
                profiler.enable()
            started = time.process_time()
            response = call()
            spent = time.process_time() - started
            if profiler is not None:
                profiler.disable()
        db_after = backend_cpu_ms(self.backend)
        self.cpu[kind].append(1000 * spent)
        if db_before is not None and db_after is not None:
            self.db[kind] += db_after - db_before
        if self.calls is not None and profiler is not self.profiler:
            self.calls[kind] += pstats.Stats(profiler).total_calls
        return response


class Session:
    """One simulated annotator: the load benchmark's path through the pages, with the test client."""

    def __init__(self, slug: str, index: int, meter: Meter, handler) -> None:
        from django.test import Client

        address = f"10.{index // 250 % 256}.{index % 250 + 1}.{1 + index // 64000}"
        self.client = Client(enforce_csrf_checks=True, headers={"X-Forwarded-For": address})
        self.client.handler = handler  # one middleware chain for all, as in a server process (no per-client start-up)
        self.base = f"/s/{slug}/"
        self.pid = f"bench{index:05d}{secrets.token_hex(3)}"
        self.meter = meter
        self.ping_every = 4  # the reference request, interleaved with the real ones (same cookies, same moment)
        self.calls = 0

    def csrf(self) -> dict:
        token = self.client.cookies.get("csrftoken")
        return {"HTTP_X_CSRFTOKEN": token.value if token else ""}

    def call(self, kind: str, method: str, path: str, data: dict | None = None, *, expect: int, json: bool = False):
        self.calls += 1
        if self.calls % self.ping_every == 0:
            self.meter.measure("ping", lambda: self.client.get("/bench/ping/"))
        extra = {"HTTP_ACCEPT": "application/json"} if json else {}
        if method == "GET":
            response = self.meter.measure(kind, lambda: self.client.get(path, **extra))
        else:
            body = urlencode(data or {})  # as the pages' script (URLSearchParams) and the load benchmark send forms
            response = self.meter.measure(
                kind, lambda: self.client.post(path, body, content_type="application/x-www-form-urlencoded", **extra, **self.csrf())
            )
        if response.status_code != expect:
            body = response.content[:300]
            raise RuntimeError(f"{method} {path}: expected {expect}, got {response.status_code} {response.get('Location', '')} {body!r}")
        return response

    def run(self, answers: dict[str, str]) -> bool:
        """The whole session; False when the study was full at entry or consent."""
        ids = {"PROLIFIC_PID": self.pid, "STUDY_ID": "bench", "SESSION_ID": f"s-{self.pid}"}
        entry = self.call("entry", "GET", self.base + "?" + urlencode(ids), expect=302)
        if not entry["Location"].endswith("consent/"):
            return False
        page = self.call("consent_get", "GET", self.base + "consent/", expect=200)
        version = re.search(r'name="version" value="([^"]*)"', page.content.decode())
        consented = self.call(
            "consent_post", "POST", self.base + "consent/", {"agree": "on", "version": version.group(1) if version else "1"}, expect=302
        )
        if not consented["Location"].endswith("instructions/"):
            return False
        self.call("instructions_get", "GET", self.base + "instructions/", expect=200)
        self.call("instructions_post", "POST", self.base + "instructions/", expect=302)
        self.call("practice_get", "GET", self.base + "practice/", expect=200)
        self.call("practice_post", "POST", self.base + "practice/", {"value": 3}, expect=302)
        self.call("practice_get", "GET", self.base + "practice/", expect=200)
        self.call("check_get", "GET", self.base + "check/", expect=200)
        self.call("check_post", "POST", self.base + "check/", answers, expect=302)
        path = self.call("next_item", "GET", self.base + "item/", expect=302)["Location"]
        while not path.endswith("/done/"):
            self.call("item", "GET", path, expect=200)
            pk = int(path.rstrip("/").split("/")[-1])
            self.call("heartbeat", "POST", self.base + "heartbeat/", {"item": pk}, expect=200, json=True)
            form = {"value": 2, "request_id": f"{self.pid}-{pk}", "client_ms": 5000, "visible_ms": 5000, "first_interaction_ms": 900}
            reply = self.call("answer", "POST", path + "answer/", form, expect=200, json=True).json()
            path = urlsplit(reply["next"]).path
        done = self.call("done", "GET", path, expect=200)
        if load_annotators.CODE not in done.content.decode():
            raise RuntimeError("the completion page shows no completion code")
        return True


def bench_urlconf() -> types.ModuleType:
    """The project's URLs plus the reference view ``/bench/ping/`` (through the same middleware)."""
    from django.http import HttpResponse
    from django.urls import path

    from studyapp import urls

    def ping(request):
        return HttpResponse("ok", content_type="text/plain")

    module = types.ModuleType("bench_urls")
    module.urlpatterns = [path("bench/ping/", ping), *urls.urlpatterns]
    return module


class Recomputations:
    """``--allocation adaptive``: what ``manage.py allocation_priorities`` does beside the server, run here between
    sessions (outside the measured requests) with the CPU of each recomputation (``time.process_time``)."""

    def __init__(self, study_pk: int) -> None:
        self.study_pk = study_pk
        self.cpu: list[float] = []
        self.rounds = 0
        self.analysis_round: int | None = None

    def run(self) -> None:
        from studyapp.models import Study
        from studyapp.services.analysis.adaptive import recompute

        study = Study.objects.get(pk=self.study_pk)
        started = time.process_time()
        with warnings.catch_warnings():  # the metrics' warnings about the collection, once per recomputation
            warnings.simplefilter("ignore")
            done = recompute(study)
        self.cpu.append(1000 * (time.process_time() - started))
        self.rounds += done.drew is not None
        self.analysis_round = done.analysis_round

    def summary(self) -> str:
        from studyapp.models import AllocationGroup

        drawn = AllocationGroup.objects.filter(study_id=self.study_pk, drawn_round__gte=0).count()
        groups = AllocationGroup.objects.filter(study_id=self.study_pk).count()
        later = self.cpu[1:] or self.cpu
        return (
            f"adaptive: {len(self.cpu)} recomputations (the first {self.cpu[0]:.0f} ms CPU with the study's scores, then mean"
            f" {statistics.mean(later):.0f} ms, max {max(later):.0f} ms); {self.rounds} rounds drawn, {drawn} of {groups} groups drawn,"
            f" analysis round {self.analysis_round} (the last complete one)"
        )


def recompute(recomputer: Recomputations | None) -> None:
    if recomputer is not None:
        recomputer.run()


def report(meter: Meter, sessions: int, elapsed: float, recomputer: Recomputations | None = None) -> None:
    ping = statistics.mean(meter.cpu["ping"])
    calls = f" {'calls':>7}" if meter.calls is not None else ""
    print(f"{'request':<18} {'n':>5} {'cpu_ms':>7} {'median':>7} {'x_ping':>7} {'db_ms':>6} {'sql':>5} {'commits':>7}{calls}")
    for kind in KINDS:
        values = meter.cpu.get(kind)
        if not values:
            continue
        mean, n = statistics.mean(values), len(values)
        db = f"{meter.db[kind] / n:6.2f}" if meter.db_visible and meter.backend else "     -"
        calls = f" {meter.calls[kind] / n:7.0f}" if meter.calls is not None else ""
        print(
            f"{kind:<18} {n:5d} {mean:7.2f} {statistics.median(values):7.2f} {mean / ping:7.2f} {db} {meter.queries[kind] / n:5.2f}"
            f" {meter.commits[kind] / n:7.2f}{calls}"
        )
    # the load benchmark's requests (its annotators send no heartbeats): what its CPU per request follows
    real = [v for kind, values in meter.cpu.items() if kind not in ("ping", "heartbeat") for v in values]
    per_request = statistics.mean(real)
    per_session = sum(real) / max(1, sessions)
    print(f"sessions={sessions} requests={len(real)} (heartbeats and pings apart) seconds={elapsed:.1f}")
    if recomputer is not None:
        print(recomputer.summary())
    mix = [kind for kind in meter.cpu if kind not in ("ping", "heartbeat")]
    sql = sum(meter.queries[kind] for kind in mix) / len(real)
    commits = sum(meter.commits[kind] for kind in mix) / len(real)
    calls = f" calls_per_request={sum(meter.calls[kind] for kind in mix) / len(real):.0f}" if meter.calls is not None else ""
    print(
        f"cpu_ms_per_request={per_request:.2f} ping_ms={ping:.2f} session_cpu_ms={per_session:.0f}"
        f" ratio_per_request={per_request / ping:.2f} sql_per_request={sql:.2f} commits_per_request={commits:.2f}{calls}"
        + (f" recompute_cpu_ms={statistics.mean(recomputer.cpu[1:] or recomputer.cpu):.0f}" if recomputer is not None else "")
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--database", choices=["postgres", "sqlite"], default="postgres", help="default postgres")
    parser.add_argument("--postgres-url", default=os.environ.get("STUDYAPP_TEST_POSTGRES_URL", ""),
                        help="a PostgreSQL server whose user may create databases (default $STUDYAPP_TEST_POSTGRES_URL); "
                        "the benchmark uses its own database <name>_bench")  # fmt: skip
    parser.add_argument("--annotators", type=int, default=40, help="whole sessions, one after another (default 40)")
    parser.add_argument("--warmup", type=int, default=3, help="sessions run first and not counted (default 3)")
    parser.add_argument("--profile", choices=[k for k in KINDS if k != "ping"], help="print a cProfile of this request type")
    parser.add_argument("--profile-lines", type=int, default=35)
    parser.add_argument("--profile-out", type=Path, help="also write --profile's statistics to this file (pstats, e.g. for snakeviz)")
    parser.add_argument("--allocation", choices=["uniform", "adaptive"], default="uniform",
                        help="the study's allocation (default uniform); adaptive recomputes the priorities (manage.py "
                        "allocation_priorities's work) before the first session and after every session, outside the measured "
                        "requests, and prints the CPU of a recomputation")  # fmt: skip
    parser.add_argument("--calls", action="store_true",
                        help="also count Python function calls per request (deterministic; the CPU times then include the counting)")  # fmt: skip
    args = parser.parse_args(argv)
    load_annotators.check_database_arguments(parser, args)
    if args.annotators < 1 or args.warmup < 0:
        parser.error("--annotators must be at least 1 and --warmup at least 0")
    if args.profile_out and not args.profile:
        parser.error("--profile-out needs --profile")

    workdir = Path(tempfile.mkdtemp(prefix="bench-requests-"))
    database = load_annotators.Database(args.database, args.postgres_url, workdir, suffix="_bench")
    try:
        database.create()
        # the production server's environment, as the load benchmark starts it
        os.environ.update(
            {
                "DATABASE_URL": database.url,
                "DJANGO_DEBUG": "0",
                "DJANGO_ALLOWED_HOSTS": "testserver",
                "DJANGO_SECRET_KEY": secrets.token_urlsafe(40),
                "DJANGO_LOG_LEVEL": "WARNING",
                "STUDYAPP_PROXY_HOPS": "1",
            }
        )
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "studyapp.settings")
        import django

        django.setup()
        from django.test.client import ClientHandler
        from django.test.utils import override_settings

        from studyapp.services.participation.onboarding import COMPREHENSION

        scenario = load_annotators.Scenario("bench", args.annotators, 0.0, (0, 0), (0, 0), 0.0, "trec")
        study = load_annotators.prepare_studies([scenario], args.allocation)["bench"]
        recomputer = Recomputations(study["pk"]) if args.allocation == "adaptive" else None
        answers = {q.key: q.correct for q in COMPREHENSION}
        meter = Meter(args.profile or "", calls=args.calls)
        with override_settings(ROOT_URLCONF=bench_urlconf()):
            handler = ClientHandler(enforce_csrf_checks=True)
            warm = Meter()
            for index in range(args.warmup):
                recompute(recomputer)
                Session(study["slug"], 10**6 + index, warm, handler).run(answers)
            meter.find_backend()
            started, sessions = time.monotonic(), 0
            for index in range(args.annotators):
                recompute(recomputer)
                if not Session(study["slug"], index, meter, handler).run(answers):
                    print(f"annotator {index}: the study was full; stopping", flush=True)
                    break
                sessions += 1
            elapsed = time.monotonic() - started
        report(meter, sessions, elapsed, recomputer)
        if meter.profiler is not None:
            print(f"\ncProfile of {args.profile} ({len(meter.cpu[args.profile])} requests), by own time:")
            stats = pstats.Stats(meter.profiler)
            if args.profile_out:
                stats.dump_stats(args.profile_out)
            stats.sort_stats("tottime").print_stats(args.profile_lines)
            print(f"cProfile of {args.profile}, the project's functions by cumulative time:")
            stats.sort_stats("cumulative").print_stats(str(ROOT / "studyapp"), args.profile_lines)
        return 0
    finally:
        database.release(workdir)


if __name__ == "__main__":
    sys.exit(main())
