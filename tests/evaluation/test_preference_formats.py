"""The preference-format registry's readers (evaluation/io/preference_formats.py): CSV, TSV, JSON Lines
and Parquet files with the same answers read to the same votes; a file is recognised by its suffix,
else by its first bytes; bad files are ``file:line`` errors."""

from __future__ import annotations

import dataclasses
import io
import json

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from evaluation.exceptions import FormatError
from evaluation.io.preference_formats import format_names, format_of, get_format, read_records, register
from evaluation.io.preferences import read_preferences

ROWS = [
    {"level": "topic", "topic": "1", "subtopic": "", "run_a": "bravo", "run_b": "alpha", "value": 3, "annotator": "x1", "valid": True},
    {"level": "subtopic", "topic": "1", "subtopic": "2", "run_a": "alpha", "run_b": "bravo", "value": -2, "annotator": "x1", "valid": True},
    {"level": "topic", "topic": "10", "subtopic": "", "run_a": "alpha", "run_b": "charlie", "value": 0, "annotator": "x2", "valid": False},
]
COLUMNS = [("level", "string"), ("topic", "string"), ("subtopic", "string"), ("run_a", "string"), ("run_b", "string"),
           ("value", "int"), ("annotator", "string"), ("valid", "bool")]  # fmt: skip


def written(tmp_path, fmt: str, name: str | None = None):
    spec = get_format(fmt)
    path = tmp_path / (name or f"prefs{spec.suffixes[0]}")
    with open(path, "wb") as binary:
        if spec.binary:
            count = spec.write(iter(ROWS), COLUMNS, binary)
        else:
            text = io.TextIOWrapper(binary, encoding="utf-8", newline="")
            count = spec.write(iter(ROWS), COLUMNS, text)
            text.flush()
            text.detach()
    assert count == len(ROWS)
    return path


def test_the_three_registered_formats() -> None:
    assert format_names()[:3] == ("csv", "jsonl", "parquet")
    assert get_format("parquet").binary and not get_format("csv").binary
    with pytest.raises(ValueError, match="unknown preference format 'xlsx'; known: csv, jsonl, parquet"):
        get_format("xlsx")


def test_every_format_reads_to_the_same_votes(tmp_path) -> None:
    csv_votes = read_preferences(written(tmp_path, "csv"))
    assert csv_votes[["run_a", "run_b", "value"]].values.tolist() == [
        ["alpha", "bravo", -3],
        ["alpha", "bravo", -2],
        ["alpha", "charlie", 0],
    ]
    tsv = tmp_path / "prefs.tsv"
    tsv.write_text(written(tmp_path, "csv").read_text().replace(",", "\t"))
    for path in (tsv, written(tmp_path, "jsonl"), written(tmp_path, "parquet")):
        votes = read_preferences(path)
        pd.testing.assert_frame_equal(votes.drop(columns="line"), csv_votes.drop(columns="line"))
    # text formats count lines (the header is line 1 of a CSV), Parquet counts rows
    assert read_preferences(written(tmp_path, "csv"))["line"].tolist() == [2, 3, 4]
    assert read_preferences(written(tmp_path, "jsonl"))["line"].tolist() == [1, 2, 3]
    assert read_preferences(written(tmp_path, "parquet"))["line"].tolist() == [1, 2, 3]


def test_every_registered_format_writes_what_the_readers_read_back(tmp_path) -> None:
    """Every format of the registry, not a fixed list: one registered later is held to the same round trip."""
    csv_votes = read_preferences(written(tmp_path, "csv"))
    for fmt in format_names():
        path = written(tmp_path, fmt)
        assert format_of(path).name == fmt
        votes = read_preferences(path)
        pd.testing.assert_frame_equal(votes.drop(columns="line"), csv_votes.drop(columns="line"), obj=fmt)


def test_a_name_or_a_suffix_is_registered_once() -> None:
    csv = get_format("csv")
    with pytest.raises(ValueError, match="preference format 'csv' is already registered"):
        register(csv)
    with pytest.raises(ValueError, match=r"preference format 'pipes': suffix \.tsv \(csv\), \.pq \(parquet\) is taken"):
        register(dataclasses.replace(csv, name="pipes", suffixes=(".psv", ".tsv", ".pq")))
    assert "pipes" not in format_names()


def test_cells_are_text_whatever_the_format(tmp_path) -> None:
    for fmt in format_names():
        records = read_records(written(tmp_path, fmt))
        assert records.columns == [name for name, _ in COLUMNS]
        rows = [cells for _, cells in records.rows]
        assert rows[0]["value"] == "3" and rows[2]["valid"] == "false" and rows[0]["subtopic"] == "", fmt


def test_a_file_without_a_known_suffix_is_recognised_by_its_content(tmp_path) -> None:
    for fmt in format_names():
        path = written(tmp_path, fmt, name=f"{fmt}-export.dat")
        assert format_of(path).name == fmt
        assert len(read_preferences(path)) == len(ROWS)


def test_bad_files_name_file_and_line(tmp_path) -> None:
    jsonl = tmp_path / "bad.jsonl"
    jsonl.write_text(json.dumps(ROWS[0]) + "\n[1, 2]\n")
    with pytest.raises(FormatError, match=r"bad\.jsonl:2: not a JSON object"):
        read_preferences(jsonl)
    jsonl.write_text(json.dumps(ROWS[0]) + "\n" + json.dumps({**ROWS[1], "value": 7}) + "\n")
    with pytest.raises(FormatError, match=r"bad\.jsonl:2: value must be in \[-4, 4\], got 7"):
        read_preferences(jsonl)
    no_value = tmp_path / "no-value.parquet"
    pq.write_table(pa.Table.from_pylist([{k: v for k, v in ROWS[0].items() if k != "value"}]), no_value)
    with pytest.raises(FormatError, match=r"no-value\.parquet: header lacks column value"):
        read_preferences(no_value)
    bad_value = tmp_path / "bad-value.parquet"
    pq.write_table(pa.Table.from_pylist([ROWS[0], {**ROWS[1], "value": 9}]), bad_value)
    with pytest.raises(FormatError, match=r"bad-value\.parquet:2: value must be in \[-4, 4\], got 9"):
        read_preferences(bad_value)
    broken = tmp_path / "broken.parquet"
    broken.write_bytes(b"PAR1 not really")
    with pytest.raises(FormatError, match=r"broken\.parquet: not a readable Parquet file"):
        read_preferences(broken)
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n\n")
    with pytest.raises(FormatError, match=r"empty\.jsonl: file is empty"):
        read_preferences(empty)
    with pytest.raises(FormatError, match=r"missing\.parquet: no such file"):
        read_preferences(tmp_path / "missing.parquet")
