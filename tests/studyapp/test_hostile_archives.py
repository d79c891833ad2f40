"""``import_documents`` on archives that try to exhaust the machine or are damaged: a real gzip bomb (a small
file that decompresses to gigabytes), a truncated ``.warc.gz``, a malformed one, over-long JSON lines and
text in other encodings. Each gives one clear line (``file: reason`` with the record number), memory stays
that of one record, and a damaged source writes nothing (docs/studyapp.md#import_documents)."""

from __future__ import annotations

import gzip
import io
import json
import resource
import shutil
import struct
import tempfile
import zlib
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import TestCase

from studyapp.exceptions import ImportFailed
from studyapp.models import Document, RankedItem
from studyapp.services.collections.bounded_input import MB, Limits
from studyapp.services.collections.documents_import import import_documents
from tests.studyapp.base import import_toy
from tests.studyapp.test_import_documents import warc_record

BOMB_GB = 1  # what the bomb decompresses to (from a file of about 1 MB)


def gzip_bomb(path: Path, docid: str) -> None:
    """One WARC response record of BOMB_GB of zeros, gzip-compressed to about 1 MB per GB.

    Deflate restarts after a full flush (RFC 1951 blocks, no reference back past it), so every megabyte of zeros
    compresses to the same bytes: one is compressed and written BOMB_GB * 1024 times, with the CRC-32 and size of
    the whole record in the gzip trailer (RFC 1952), as a level-9 pass over all of it would write (seconds less CPU).
    """
    size = BOMB_GB * 1024 * MB
    head = f"WARC/1.0\r\nWARC-Type: response\r\nWARC-TREC-ID: {docid}\r\nContent-Length: {size}\r\n\r\n".encode()
    tail, zeros = b"\r\n\r\n", bytes(MB)
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)  # raw deflate: the gzip header and trailer are written here
    first = compressor.compress(head) + compressor.flush(zlib.Z_FULL_FLUSH)
    block = compressor.compress(zeros) + compressor.flush(zlib.Z_FULL_FLUSH)
    crc = zlib.crc32(head)
    with path.open("wb") as out:
        out.write(b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff" + first)  # gzip header: deflate, no name, no time
        for _ in range(size // MB):
            out.write(block)
            crc = zlib.crc32(zeros, crc)
        crc = zlib.crc32(tail, crc)
        out.write(compressor.compress(tail) + compressor.flush() + struct.pack("<II", crc, (len(head) + size + len(tail)) % 2**32))


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class HostileArchiveTest(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        import_toy("toy")
        cls.docids = sorted(set(RankedItem.objects.values_list("document__docid", flat=True)))

    def setUp(self) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="studyapp-hostile-"))
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.records = [warc_record(d, f"http://example.org/{d}", f"<title>Page {d}</title><p>text of {d}</p>") for d in self.docids]

    def command(self, *args: str) -> list[str]:
        out = io.StringIO()
        call_command("import_documents", "toy", *args, "--no-progress", stdout=out)
        return out.getvalue().splitlines()

    def stored(self) -> list[tuple[str, str]]:
        return list(Document.objects.filter(docid__in=self.docids).values_list("docid", "title").order_by("docid"))

    @pytest.mark.slow
    def test_a_gzip_bomb_is_skipped_and_counted_with_memory_flat(self) -> None:
        bomb = self.tmp / "bomb.warc.gz"
        gzip_bomb(bomb, self.docids[0])
        self.assertLess(bomb.stat().st_size, 1.1 * MB * BOMB_GB)
        before = peak_rss_mb()
        lines = self.command(str(bomb))
        self.assertLess(peak_rss_mb() - before, 100)  # one chunk at a time, never the record
        self.assertIn(f"Skipped 1 record over 16.0 MB decompressed (--max-record-mb), e.g. {bomb}: record 1 ({self.docids[0]}) "
                      f"({BOMB_GB}.0 GB).", lines)  # fmt: skip
        self.assertTrue(lines[0].startswith("Read 1 records/files/lines; 0 of the"), lines)
        with self.assertRaisesMessage(CommandError, f"{bomb}: record 1: more than 64.0 MB decompressed (--max-file-mb;"):
            self.command(str(bomb), "--max-file-mb", "64")

    def test_a_truncated_archive_is_reported_and_its_complete_records_kept(self) -> None:
        whole = b"".join(gzip.compress(r) for r in self.records)  # one gzip member per record, as WARC files are
        cut = self.tmp / "cut.warc.gz"
        cut.write_bytes(whole[: len(whole) - len(gzip.compress(self.records[-1])) // 2])
        lines = self.command(str(cut))
        n = len(self.records)
        self.assertIn(
            f"{cut}: the archive ends early (the file is truncated), after record {n - 1}; the complete records before it were read.", lines
        )
        self.assertEqual(len([t for _, t in self.stored() if t.startswith("Page ")]), n - 1)
        plain = self.tmp / "cut.warc"
        plain.write_bytes(b"".join(self.records)[:-40])
        self.assertIn(f"{plain}: the archive ends early (the file is truncated), after record {n - 1}; the complete records before it were read.",
                      self.command(str(plain)))  # fmt: skip

    def test_an_archive_cut_inside_a_records_header_is_truncated_not_malformed(self) -> None:
        """Cut after ``WARC/1.0`` and a few header lines of the last record (it was "not a WARC record" before, or the
        cut record was silently dropped)."""
        n = len(self.records)
        for cut_at in (3, 12, 40, 60):
            gz, plain = self.tmp / f"head{cut_at}.warc.gz", self.tmp / f"head{cut_at}.warc"
            partial = self.records[-1][:cut_at]
            self.assertNotIn(b"\r\n\r\n", partial)
            whole = b"".join(gzip.compress(r) for r in self.records[:-1])
            gz.write_bytes(whole + gzip.compress(self.records[-1])[: 10 + cut_at // 4])  # inside the last member
            plain.write_bytes(b"".join(self.records[:-1]) + partial)
            for path in (gz, plain):
                with self.subTest(path=path.name):
                    lines = self.command(str(path))
                    ends = f"{path}: the archive ends early (the file is truncated), after record {n - 1}; the complete records before it were read."
                    self.assertIn(ends, lines)

    def test_malformed_archives_are_one_line_with_the_record_and_write_nothing(self) -> None:
        good = b"".join(gzip.compress(r) for r in self.records[:2])
        corrupt = bytearray(good + gzip.compress(self.records[2]))
        corrupt[len(good) + 20 : len(good) + 40] = b"\xff" * 20  # inside the third record's deflate data
        damaged = self.tmp / "damaged.warc.gz"
        damaged.write_bytes(bytes(corrupt))
        not_warc = self.tmp / "notes.warc.gz"
        not_warc.write_bytes(gzip.compress(b"".join(self.records[:1]) + b"this is not a WARC record\r\n" * 50))
        before = self.stored()
        for path, message in (
            (damaged, f"{damaged}: record 3: not a valid gzip file ("),
            (not_warc, f"{not_warc}: after record 1: not a WARC record (Invalid WARC header)"),
        ):
            with self.subTest(path=path.name), self.assertRaises(CommandError) as caught:
                self.command(str(path))
            self.assertTrue(str(caught.exception).startswith(message), str(caught.exception))
            self.assertEqual(len(str(caught.exception).splitlines()), 1)
        self.assertEqual(self.stored(), before)

    def test_jsonl_in_any_encoding_gzip_and_over_long_lines(self) -> None:
        latin = self.tmp / "latin.jsonl"
        rows = [json.dumps({"docid": d, "title": f"Caf\u00e9 {d}", "text": "na\u00efve"}, ensure_ascii=False) for d in self.docids[:2]]
        latin.write_bytes("\n".join(rows).encode("latin-1") + b"\n")
        lines = self.command(str(latin))
        self.assertIn("2 records or lines not in UTF-8, decoded by their detected encoding, 0 characters replaced, "
                      f"e.g. {latin}:1 (read as cp1252).", lines)  # fmt: skip
        self.assertEqual(self.stored()[0][1], f"Caf\u00e9 {self.docids[0]}")
        big = self.tmp / "big.jsonl.gz"
        huge = json.dumps({"docid": self.docids[0], "text": "x" * (2 * MB)})
        big.write_bytes(gzip.compress((huge + "\n" + rows[1] + "\n").encode()))
        result = import_documents("toy", [big], limits=Limits(record_bytes=MB))
        self.assertEqual((result.read, result.found, result.notes.oversized), (2, 1, 1))
        self.assertIn(f"e.g. {big}:1 (2.0 MB)", result.lines()[1])

    def test_limits_are_checked(self) -> None:
        with self.assertRaisesMessage(ImportFailed, "the limits must allow at least 1 KB per record"):
            Limits(record_bytes=10)
        with self.assertRaisesMessage(CommandError, "a file at least one record long"):
            self.command(str(self.tmp), "--max-record-mb", "10", "--max-file-mb", "5")
