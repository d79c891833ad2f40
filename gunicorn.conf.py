"""gunicorn settings of ``make serve`` (production); every value can be overridden from the environment.

Sync workers answer one request at a time and close the connection afterwards (no keep-alive), so
requests spread over all worker processes; with kept-alive connections (gthread) a client stays on
the worker that accepted it and one process ends up doing most of the work. Put a reverse proxy with
TLS in front (README, "Running a real study"): it keeps client connections alive and buffers slow
clients, which sync workers need.
"""

import multiprocessing
import os


def _env_int(name: str, default: int, minimum: int) -> int:
    """``name`` from the environment as an integer of at least ``minimum``; else one line and exit status 1."""
    raw = os.environ.get(name, "")
    try:
        value = int(raw) if raw else default
    except ValueError:
        raise SystemExit(f"gunicorn.conf.py: {name} must be an integer, got {raw!r}") from None
    if value < minimum:
        raise SystemExit(f"gunicorn.conf.py: {name} must be at least {minimum}, got {value}")
    return value


bind = os.environ.get("STUDYAPP_BIND", "127.0.0.1:8000")
# cores + 1: the work is CPU in Python, and PostgreSQL usually shares the machine. On 2 cores the load
# benchmark's burst served 221-259 requests/s with 3 workers and 202-215 with 5 (alternating runs):
# more processes than cores only add switching. Sweep WEB_CONCURRENCY on the machine you deploy to.
workers = _env_int("WEB_CONCURRENCY", multiprocessing.cpu_count() + 1, minimum=1)
worker_class = "sync"
timeout = _env_int("STUDYAPP_WORKER_TIMEOUT", 30, minimum=1)
graceful_timeout = 20
# The web workers' database waits end long before the worker timeout (settings.py reads these): a locked
# table, a slow statement or a frozen server then answers 503 with Retry-After within a few seconds instead
# of getting the worker killed (docs/studyapp.md "When the database is slow"). Commands keep longer limits.
os.environ.setdefault("STUDYAPP_DB_LOCK_TIMEOUT", "2")
os.environ.setdefault("STUDYAPP_DB_STATEMENT_TIMEOUT", "3")
os.environ.setdefault("DJANGO_DB_CONNECT_TIMEOUT", "3")
_statement = _env_int("STUDYAPP_DB_STATEMENT_TIMEOUT", 3, minimum=0)
_db_worst = 2 * (_statement + 1) + _env_int("DJANGO_DB_CONNECT_TIMEOUT", 3, minimum=2)  # a health check, a reconnect, a query
if not _statement or _db_worst >= timeout:
    raise SystemExit(f"gunicorn.conf.py: STUDYAPP_DB_STATEMENT_TIMEOUT (not 0) and DJANGO_DB_CONNECT_TIMEOUT must let a request "
                     f"end before the worker timeout ({timeout} s); the worst case takes {_db_worst} s")  # fmt: skip
# Recycle a worker after this many requests (a safety valve for memory; its caches are bounded anyway),
# staggered so they do not restart together. A restart costs the worker's start (about a second of CPU)
# and its warm caches: at 5,000 the load benchmark's burst restarted every worker once and served
# 262 requests/s against 366 without restarts (same code, same machine, back to back).
max_requests = _env_int("STUDYAPP_MAX_REQUESTS", 100_000, minimum=0)  # 0: never
max_requests_jitter = max_requests // 10
accesslog = os.environ.get("STUDYAPP_ACCESS_LOG") or None
errorlog = "-"
