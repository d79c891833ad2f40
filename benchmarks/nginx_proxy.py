"""The documented production set-up's proxy for the load benchmark, and slow clients to throw at it.

:class:`Nginx` runs Debian's nginx as a process of its own (a prefix and configuration in a temporary
folder, ``daemon off``, stopped by its pid) in front of one gunicorn, with the repository's proxy settings
(``deploy/nginx/studyapp-proxy.conf``, included as production includes it). :func:`slowloris` keeps
``count`` slow connections open against it while the annotators run: half send a request header a line
at a time, half a request body a few bytes at a time, each reopened when the proxy drops it.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")

ROOT = Path(__file__).resolve().parent.parent
PROXY_CONF = ROOT / "deploy" / "nginx" / "studyapp-proxy.conf"
SLOW_PAUSE = (2.0, 5.0)  # seconds between the slow clients' bytes (under the proxy's 10 s timeouts)

CONFIG = """worker_processes 1;
pid {prefix}/nginx.pid;
error_log {prefix}/error.log warn;
daemon off;
events {{ worker_connections 1024; }}
http {{
    access_log off;
    client_body_temp_path {prefix}/client_body;
    proxy_temp_path {prefix}/proxy;
    fastcgi_temp_path {prefix}/fastcgi;
    uwsgi_temp_path {prefix}/uwsgi;
    scgi_temp_path {prefix}/scgi;
    upstream studyapp_app {{ server {host}:{upstream}; }}
    server {{
        listen {host}:{port};
        include {proxy_conf};
    }}
}}
"""


def nginx_binary() -> str:
    """Debian's nginx (package ``nginx``); empty when it is not installed."""
    return shutil.which("nginx") or ("/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else "")


class Nginx:
    """nginx on ``host:port`` proxying to gunicorn at ``host:upstream``, in a prefix of its own under ``workdir``."""

    def __init__(self, host: str, port: int, upstream: int, workdir: Path) -> None:
        self.host, self.port, self.upstream = host, port, upstream
        self.prefix = workdir / f"nginx-{port}"
        self.prefix.mkdir(parents=True)
        self.prefix.chmod(0o755)  # started as root, its workers run as nobody and write their temporary files here
        self.config = self.prefix / "nginx.conf"
        self.config.write_text(CONFIG.format(prefix=self.prefix, host=host, port=port, upstream=upstream, proxy_conf=PROXY_CONF))
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        binary = nginx_binary()
        if not binary:
            raise RuntimeError("nginx is not installed (Debian: apt-get install nginx)")
        command = [binary, "-p", str(self.prefix), "-c", str(self.config), "-e", str(self.prefix / "error.log")]
        checked = subprocess.run([*command, "-t", "-q"], capture_output=True, text=True, timeout=30)
        if checked.returncode != 0:
            raise RuntimeError(f"nginx refuses its configuration:\n{checked.stderr.strip()}")
        self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT, start_new_session=True)
        import socket

        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"nginx exited with status {self.process.returncode}: {self.tail()}")
            try:
                socket.create_connection((self.host, self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError(f"nginx did not listen within 30 s: {self.tail()}")

    def tail(self) -> str:
        log = self.prefix / "error.log"
        return log.read_text()[-2000:] if log.exists() else ""

    def stop(self) -> None:
        """SIGQUIT (graceful) to the master by its pid, SIGKILL after 10 s; its workers end with it."""
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGQUIT)
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)  # its own session: the master and its workers only
            self.process.wait(timeout=10)


@dataclass
class Proxied:
    """A gunicorn as the annotators see it: through the proxy's port; its CPU is still gunicorn's."""

    server: object
    port: int

    def cpu_seconds(self) -> float:
        return self.server.cpu_seconds()  # type: ignore[attr-defined]


@dataclass
class SlowStats:
    opened: int = 0  # connections opened (the first ``count`` and every reopening)
    dropped_by_proxy: int = 0  # closed by the proxy (its timeouts), then reopened


async def _slow_client(host: str, port: int, index: int, until: float, stats: SlowStats) -> None:
    """One slow client: a header sent line by line (even ``index``) or a body byte by byte (odd), reopened when dropped."""
    import random

    rng = random.Random(index)
    while time.monotonic() < until:
        try:
            reader, writer = await asyncio.open_connection(host, port)
        except OSError:
            await asyncio.sleep(0.5)
            continue
        stats.opened += 1
        try:
            if index % 2 == 0:
                writer.write(f"GET /?slow={index} HTTP/1.1\r\nHost: {host}\r\n".encode())
                chunks = (f"X-Slow-{n}: {'a' * 20}\r\n".encode() for n in range(10_000))
            else:
                writer.write(f"POST /s/slow/ HTTP/1.1\r\nHost: {host}\r\nContent-Length: 100000\r\n"
                             "Content-Type: application/x-www-form-urlencoded\r\n\r\n".encode())  # fmt: skip
                chunks = (b"a" for _ in range(100_000))
            for chunk in chunks:
                await writer.drain()
                try:
                    await asyncio.wait_for(reader.read(1), timeout=rng.uniform(*SLOW_PAUSE))
                    break  # the proxy answered (408) or closed the connection: reopen
                except TimeoutError:
                    pass
                if time.monotonic() >= until:
                    return
                writer.write(chunk)
            stats.dropped_by_proxy += 1
        except OSError:
            stats.dropped_by_proxy += 1
        finally:
            writer.close()


async def slowloris(host: str, port: int, count: int, work: Coroutine[Any, Any, T]) -> tuple[T, SlowStats]:
    """Open ``count`` slow connections against ``host:port``, then run ``work`` while they stay open (each
    reopened when the proxy drops it); ``work``'s result and what the slow clients met."""
    stats = SlowStats()
    until = time.monotonic() + 24 * 3600  # they end when the work does
    clients = [asyncio.ensure_future(_slow_client(host, port, i, until, stats)) for i in range(count)]
    while stats.opened < count and not any(c.done() for c in clients):
        await asyncio.sleep(0.05)
    try:
        result = await work
    finally:
        for task in clients:
            task.cancel()
        await asyncio.gather(*clients, return_exceptions=True)
    return result, stats
