"""Memory and speed of reading documents from a WARC archive (import_documents' reader), at two sizes.

Writes a ClueWeb-style WARC file (response records with WARC-TREC-ID, HTML pages of ~40 KB) of
``--size-mb`` megabytes and one of an eighth of that into a temporary folder, reads each in a
fresh process with the reader ``manage.py import_documents`` uses (every tenth document wanted, as
a study's ranked documents are a small part of an archive), and prints per size the records read
per second and the process's peak memory, then a last line
``peak_rss_mb_small=.. peak_rss_mb_large=.. rss_ratio=.. records_per_s=.. peak_rss_mb_bomb=..
peak_rss_mb_truncated=..``: memory is flat when the ratio stays near 1 while the archive grows eightfold.

Then two hostile archives, read the same way: a gzip bomb (one record of ``--bomb-gb`` GB of zeros in a
file of about 1 MB per GB; skipped as over the limit per record, ``--max-record-mb`` of import_documents)
and the small archive gzipped and cut in the middle (its complete records read, the cut reported); each
prints what the reader said and its peak memory, which stays that of the plain archives. The files
are deleted at the end.

    .venv/bin/python benchmarks/bench_import_documents.py [--size-mb 1024] [--gzip] [--bomb-gb 4]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORDS = "search result diversity metric user preference query intent ranking document archive web page crawl".split()


def record(n: int, rng: random.Random) -> bytes:
    docid = f"clueweb12-{n // 10000:04d}wb-{n % 10000:05d}"
    paragraphs = "".join("<p>" + " ".join(rng.choices(WORDS, k=60)) + ".</p>" for _ in range(60))
    body = f"<html><head><title>Page {n}</title></head><body><nav>menu</nav><main>{paragraphs}</main></body></html>".encode()
    http = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n" + body
    head = (
        f"WARC/1.0\r\nWARC-Type: response\r\nWARC-TREC-ID: {docid}\r\nWARC-Target-URI: http://example.org/{n}\r\n"
        f"WARC-Record-ID: <urn:uuid:{n:032x}>\r\nContent-Length: {len(http)}\r\n\r\n"
    )
    return head.encode() + http + b"\r\n\r\n"


def write_archive(path: Path, size_mb: int, compress: bool) -> int:
    rng, n, written = random.Random(1), 0, 0
    opener = gzip.open if compress else open
    with opener(path, "wb") as out:
        while written < size_mb * 1024 * 1024:
            data = record(n, rng)
            out.write(data)
            written += len(data)
            n += 1
    return n


def write_bomb(path: Path, gigabytes: int) -> None:
    """One WARC response record of ``gigabytes`` GB of zeros as one gzip member (about 1 MB per GB)."""
    size = gigabytes * 1024**3
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
    with path.open("wb") as out:
        out.write(compressor.compress(f"WARC/1.0\r\nWARC-Type: response\r\nWARC-TREC-ID: bomb\r\nContent-Length: {size}\r\n\r\n".encode()))
        zeros = bytes(1024 * 1024)
        for _ in range(size // len(zeros)):
            out.write(compressor.compress(zeros))
        out.write(compressor.compress(b"\r\n\r\n") + compressor.flush())


def write_truncated(source: Path, path: Path) -> None:
    """``source`` (a plain WARC file) gzipped in members of 256 KB, cut in the middle."""
    with source.open("rb") as data, path.open("wb") as out:
        for block in iter(lambda: data.read(256 * 1024), b""):
            out.write(gzip.compress(block, 6))
    with path.open("r+b") as out:
        out.truncate(path.stat().st_size // 2)


def read_in_child(path: Path) -> dict:
    """Read ``path`` in a fresh process (its peak memory is the reader's own) with import_documents' reader and
    default limits; what it noted (skipped, truncated) or the error it raised comes back too."""
    code = (
        "import json, resource, sys, time\n"
        "sys.path.insert(0, sys.argv[2])\n"
        "from pathlib import Path\n"
        "from studyapp.exceptions import ImportFailed\n"
        "from studyapp.services.collections.bounded_input import ReadNotes\n"
        "from studyapp.services.collections.document_sources import ReadContext, read_warc\n"
        "counted = [0]\n"
        "def tick(n): counted[0] += n\n"
        "notes = ReadNotes()\n"
        "context = ReadContext(lambda d: d[-5:].isdigit() and int(d[-5:]) % 10 == 0, tick, notes)\n"
        "start = time.perf_counter(); error = ''\n"
        "try:\n"
        "    found = sum(1 for _ in read_warc(Path(sys.argv[1]), context))\n"
        "except ImportFailed as exc:\n"
        "    found, error = 0, str(exc)\n"
        "seconds = time.perf_counter() - start\n"
        "print(json.dumps({'records': counted[0], 'found': found, 'seconds': seconds, 'notes': notes.lines(), 'error': error,\n"
        "                  'peak_rss_mb': resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))\n"
    )
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "studyapp.settings"}
    out = subprocess.run(
        [sys.executable, "-c", code, str(path), str(ROOT)], capture_output=True, text=True, env=env, check=True, timeout=3600
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size-mb", type=int, default=1024, help="size of the large archive (default 1024)")
    parser.add_argument("--gzip", action="store_true", help="write .warc.gz (slower to make) instead of .warc")
    parser.add_argument("--bomb-gb", type=int, default=4, help="what the gzip bomb decompresses to (default 4 GB)")
    args = parser.parse_args()
    if args.size_mb < 8:
        parser.error("--size-mb must be at least 8")
    if args.bomb_gb < 1:
        parser.error("--bomb-gb must be at least 1")
    with tempfile.TemporaryDirectory(prefix="bench-warc-") as folder:
        results = {}
        for label, size in (("small", args.size_mb // 8), ("large", args.size_mb)):
            path = Path(folder) / f"{label}.warc{'.gz' if args.gzip else ''}"
            made = write_archive(path, size, args.gzip)
            got = read_in_child(path)
            results[label] = got
            print(
                f"{label}: {size} MB, {made} records, {got['found']} wanted read in {got['seconds']:.1f} s "
                f"({got['records'] / got['seconds']:.0f} records/s), peak RSS {got['peak_rss_mb']:.0f} MB",
                flush=True,
            )
            path.unlink()
        hostile = {}
        bomb = Path(folder) / "bomb.warc.gz"
        write_bomb(bomb, args.bomb_gb)
        plain, cut = Path(folder) / "small-plain.warc", Path(folder) / "truncated.warc.gz"
        write_archive(plain, args.size_mb // 8, False)
        write_truncated(plain, cut)
        plain.unlink()
        for label, path in (("bomb", bomb), ("truncated", cut)):
            size_mb = path.stat().st_size / 1024 / 1024
            got = read_in_child(path)
            hostile[label] = got
            said = got["error"] or " / ".join(got["notes"]) or "nothing"
            print(f"{label}: {size_mb:.1f} MB file, {got['records']} records, {got['found']} wanted read in {got['seconds']:.1f} s, "
                  f"peak RSS {got['peak_rss_mb']:.0f} MB; the reader said: {said}", flush=True)  # fmt: skip
            path.unlink()
    small, large = results["small"]["peak_rss_mb"], results["large"]["peak_rss_mb"]
    rate = results["large"]["records"] / results["large"]["seconds"]
    print(
        f"peak_rss_mb_small={small:.0f} peak_rss_mb_large={large:.0f} rss_ratio={large / small:.2f} records_per_s={rate:.0f} "
        f"peak_rss_mb_bomb={hostile['bomb']['peak_rss_mb']:.0f} peak_rss_mb_truncated={hostile['truncated']['peak_rss_mb']:.0f}"
    )


if __name__ == "__main__":
    main()
