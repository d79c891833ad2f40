"""The load benchmark in small: the production server (gunicorn) on loopback, simulated annotators through
whole sessions, then ``kill -9`` of the server while they answer and a restart; every database invariant
must hold afterwards (``benchmarks/load_annotators.py --smoke --fault``), on SQLite and on PostgreSQL.

PostgreSQL comes from ``STUDYAPP_TEST_POSTGRES_URL`` (the benchmark creates and drops its own database
next to that one): required in CI (``CI=true``), skipped elsewhere with the reason. Timings are only
reported, never asserted.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.studyapp.test_postgresql import postgres_url

ROOT = Path(__file__).resolve().parents[1]
BENCHMARK = ROOT / "benchmarks" / "load_annotators.py"
TIMEOUT_SECONDS = 240  # stops a hung run only; the benchmark bounds itself (about 25 s per database)


def run_benchmark(*args: str) -> tuple[int, list[str]]:
    result = subprocess.run([sys.executable, str(BENCHMARK), *args], cwd=ROOT, capture_output=True, text=True, timeout=TIMEOUT_SECONDS)
    lines = (result.stdout + result.stderr).strip().splitlines()
    return result.returncode, lines


def fields(line: str) -> dict[str, str]:
    return dict(part.split("=", 1) for part in line.split() if "=" in part)


def assert_smoke_and_fault(code: int, lines: list[str]) -> None:
    output = "\n".join(lines[-40:])
    assert code == 0, f"benchmark failed:\n{output}"
    summary = next((fields(line) for line in lines if line.startswith("paced_p95_item_ms=")), None)
    fault = next((fields(line) for line in lines if line.startswith("fault_answers=")), None)
    assert summary is not None and fault is not None, f"no result lines:\n{output}"
    assert summary["invariants"] == "ok" and fault["invariants"] == "ok", output
    assert summary["paced_errors"] == "0" and summary["burst_errors"] == "0" and fault["fault_errors"] == "0", output
    assert any(line.startswith("fault: killed the server (kill -9)") for line in lines), output
    assert int(fault["fault_retries"]) > 0, f"no request met the killed server:\n{output}"
    assert int(fault["fault_finished"]) > 0 and int(fault["fault_answers"]) > 0, output
    for name in ("paced", "burst", "fault"):
        line = next(line for line in lines if line.startswith(f"{name}: database="))
        assert fields(line)["invariants"] == "ok", output


@pytest.mark.slow
def test_smoke_and_kill9_on_sqlite() -> None:
    assert_smoke_and_fault(*run_benchmark("--database", "sqlite", "--smoke", "--fault"))


@pytest.mark.slow
def test_smoke_and_kill9_on_postgresql() -> None:
    url = postgres_url()  # fails in CI without PostgreSQL, skips elsewhere
    assert_smoke_and_fault(*run_benchmark("--database", "postgres", "--postgres-url", url, "--smoke", "--fault"))


def test_bad_usage_is_one_line_and_status_2() -> None:
    code, lines = run_benchmark("--database", "postgres", "--postgres-url", "")
    assert code == 2 and lines[-1].endswith("PostgreSQL needs --postgres-url or STUDYAPP_TEST_POSTGRES_URL (or use --database sqlite)")
    code, lines = run_benchmark("--database", "postgres", "--postgres-url", "mysql://x/y")
    assert code == 2 and "must be postgres://" in lines[-1], lines


@pytest.mark.slow
def test_two_instances_share_one_database_and_one_redis() -> None:
    """Two gunicorns, one PostgreSQL, one Redis: the invariants hold and the rate limits count across both."""
    from tests.studyapp.test_shared_cache import redis_url

    url, redis = postgres_url(), redis_url()  # each fails in CI without its server, skips elsewhere
    code, lines = run_benchmark("--two-instances", "--postgres-url", url, "--redis-url", redis, "--workers", "2")
    output = "\n".join(lines[-20:])
    summary = next((fields(line) for line in lines if line.startswith("two_instances:")), None)
    limits = next((fields(line) for line in lines if line.startswith("limits:")), None)
    assert code == 0 and summary is not None and limits is not None, output
    assert summary["invariants"] == "ok" and summary["limits"] == "held" and summary["errors"] == "0", output
    assert (limits["arrivals_admitted"], limits["arrivals_refused"]) == (limits["arrival_limit"],) * 2, output
    assert int(limits["login_locked_at_attempt"]) == int(limits["login_failure_limit"]) + 1, output


def nginx_or_skip() -> str:
    """Debian's nginx (.ci/run installs it): required in CI, the test skipped elsewhere without it."""
    from benchmarks.nginx_proxy import nginx_binary
    from tests.studyapp.test_postgresql import IN_CI

    binary = nginx_binary()
    if not binary:
        message = "nginx is not installed (Debian package nginx; .ci/run installs it)"
        if IN_CI:
            pytest.fail(message)
        pytest.skip(message)
    return binary


@pytest.mark.slow
def test_slowloris_behind_the_documented_proxy() -> None:
    """The smoke-sized paced annotators through nginx (deploy/nginx/studyapp-proxy.conf) while 50 slow connections
    stay open: every request answered, the invariants hold, the slow header senders dropped by the proxy."""
    nginx_or_skip()
    code, lines = run_benchmark("--database", "sqlite", "--smoke", "--slowloris")
    output = "\n".join(lines[-20:])
    summary = fields(lines[-1]) if lines and lines[-1].startswith("slowloris_p95_item_ms=") else None
    assert code == 0 and summary is not None, output
    assert (summary["slowloris_errors"], summary["invariants"], summary["slow_connections"]) == ("0", "ok", "50"), output
    kept = next(line for line in lines if "slow connections kept open" in line)
    assert int(kept.split("(")[1].split()[0]) >= 50, kept  # every slow connection was opened


@pytest.mark.slow
def test_the_proxy_limits_bodies_and_slow_headers() -> None:
    """nginx with the repository's proxy settings in front of a stand-in upstream: a body over 1 MB is refused
    (413) before the upstream sees it, a header sent too slowly is dropped (408) after the 10 s timeout."""
    import http.server
    import socket
    import tempfile
    import threading
    import time
    from pathlib import Path

    from benchmarks.nginx_proxy import Nginx
    from tests.studyapp.live_server import free_port

    nginx_or_skip()
    seen: list[str] = []

    class Upstream(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            seen.append(self.path)
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    upstream = http.server.HTTPServer(("127.0.0.1", free_port()), Upstream)
    threading.Thread(target=upstream.serve_forever, daemon=True).start()
    proxy = Nginx("127.0.0.1", free_port(), upstream.server_port, Path(tempfile.mkdtemp()))
    try:
        proxy.start()

        def exchange(data: bytes) -> tuple[bytes, float]:
            started = time.monotonic()
            with socket.create_connection(("127.0.0.1", proxy.port), timeout=30) as s:
                s.sendall(data)
                try:
                    reply = s.recv(200)
                except ConnectionResetError:  # reset_timedout_connection: a timed-out client gets a reset
                    reply = b""
                return reply, time.monotonic() - started

        big = b"POST /big HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % (2 * 1024 * 1024)
        assert exchange(big)[0].startswith(b"HTTP/1.1 413"), "a body over 1 MB passed"
        small = b"POST /small HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"
        assert exchange(small)[0].startswith(b"HTTP/1.1 200")
        reply, seconds = exchange(b"GET /slow HTTP/1.1\r\nHost: x\r\n")  # the header never ends
        assert reply.startswith(b"HTTP/1.1 408") or reply == b"", reply
        assert 9 < seconds < 20, seconds
        assert seen == ["/small"]
    finally:
        proxy.stop()
        upstream.shutdown()
