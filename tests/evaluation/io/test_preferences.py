"""Preferences reader: canonical orientation, annotator averaging, errors with file:line."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from evaluation.exceptions import FormatError
from evaluation.io.preferences import aggregate_preferences, read_preferences


def write(tmp_path: Path, text: str, name: str = "prefs.tsv") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_it_reads_and_canonicalises_pairs(tmp_path: Path) -> None:
    path = write(tmp_path, "topic\trun_a\trun_b\tvalue\n1\tsysB\tsysA\t3\n1\tsysA\tsysB\t-1\n2\tx\ty\t0\n")
    votes = read_preferences(path)
    assert list(votes.columns) == ["level", "topic", "subtopic", "run_a", "run_b", "annotator", "value", "line"]
    first = votes.iloc[0]
    # given as (sysB, sysA, +3: sysA preferred) -> canonical (sysA, sysB, -3)
    assert (first["run_a"], first["run_b"], first["value"], first["line"]) == ("sysA", "sysB", -3, 2)
    assert votes["level"].tolist() == ["topic"] * 3
    assert votes["value"].dtype == np.int64


def test_annotators_are_averaged_from_integer_sums(tmp_path: Path) -> None:
    text = "topic,run_a,run_b,value,annotator\n1,a,b,1,u1\n1,b,a,1,u2\n1,a,b,0,u3\n2,a,b,2,u1\n2,a,b,1,u2\n"
    items = aggregate_preferences(read_preferences(write(tmp_path, text, "p.csv")))
    assert items[["topic", "n", "total"]].values.tolist() == [["1", 3, 0], ["2", 2, 3]]
    assert items["p"].tolist() == [0.0, 1.5]  # topic 1 is an exact user tie


def test_subtopic_level_rows(tmp_path: Path) -> None:
    text = "topic\trun_a\trun_b\tvalue\tlevel\tsubtopic\n1\ta\tb\t2\tsubtopic\t1\n1\ta\tb\t-1\tsubtopic\t2\n1\ta\tb\t1\t\t\n"
    votes = read_preferences(write(tmp_path, text))
    assert votes[["level", "subtopic"]].values.tolist() == [["subtopic", "1"], ["subtopic", "2"], ["topic", ""]]
    assert len(aggregate_preferences(votes)) == 3


def test_extra_columns_and_blank_lines_are_ignored(tmp_path: Path) -> None:
    text = "\ntopic\tleft\trun_a\trun_b\tvalue\tseconds\n1\ta\ta\tb\t4\t12.5\n\n"
    votes = read_preferences(write(tmp_path, text))
    assert votes["value"].tolist() == [4] and votes["line"].tolist() == [3]


@pytest.mark.parametrize(
    "body, line, reason",
    [
        ("1\ta\tb\t5\n", 2, "in \\[-4, 4\\]"),
        ("1\ta\tb\t-5\n", 2, "in \\[-4, 4\\]"),
        ("1\ta\tb\t1.5\n", 2, "integer"),
        ("1\ta\tb\tx\n", 2, "integer"),
        ("1\ta\tb\t1\n1\ta\ta\t1\n", 3, "same run"),
        ("1\ta\tb\n", 2, "expected 4 fields"),
        ("\ta\tb\t1\n", 2, "topic is empty"),
    ],
)
def test_bad_rows_name_file_and_line(tmp_path: Path, body: str, line: int, reason: str) -> None:
    path = write(tmp_path, "topic\trun_a\trun_b\tvalue\n" + body)
    with pytest.raises(FormatError, match=f"prefs.tsv:{line}: .*{reason}") as caught:
        read_preferences(path)
    assert caught.value.line == line


def test_unknown_level_and_missing_subtopic(tmp_path: Path) -> None:
    head = "topic\trun_a\trun_b\tvalue\tlevel\tsubtopic\n"
    with pytest.raises(FormatError, match=":2: unknown level 'intent'"):
        read_preferences(write(tmp_path, head + "1\ta\tb\t1\tintent\t1\n"))
    with pytest.raises(FormatError, match=":2: subtopic-level row without a subtopic"):
        read_preferences(write(tmp_path, head + "1\ta\tb\t1\tsubtopic\t\n"))
    with pytest.raises(FormatError, match=":2: topic-level row names subtopic"):
        read_preferences(write(tmp_path, head + "1\ta\tb\t1\ttopic\t3\n"))


def test_same_annotator_twice_on_one_item(tmp_path: Path) -> None:
    text = "topic\trun_a\trun_b\tvalue\tannotator\n1\ta\tb\t1\tu1\n1\tb\ta\t2\tu1\n"
    with pytest.raises(FormatError, match=":3: annotator 'u1' answered this item twice \\(first on line 2\\)"):
        read_preferences(write(tmp_path, text))


def test_missing_columns_and_empty_files(tmp_path: Path) -> None:
    with pytest.raises(FormatError, match=":1: header lacks column value"):
        read_preferences(write(tmp_path, "topic\trun_a\trun_b\n1\ta\tb\n"))
    with pytest.raises(FormatError, match="file is empty"):
        read_preferences(write(tmp_path, "\n\n"))
    with pytest.raises(FormatError, match="no preference rows"):
        read_preferences(write(tmp_path, "topic\trun_a\trun_b\tvalue\n"))
    with pytest.raises(FormatError, match="no such file"):
        read_preferences(tmp_path / "absent.tsv")


def test_check_items_are_refused_and_regular_rows_of_a_check_column_read(tmp_path: Path) -> None:
    regular = "topic,run_a,run_b,value,check,check_kind\n1,a,b,2,false,\n2,a,b,-1,,\n"
    assert read_preferences(write(tmp_path, regular, "regular.csv"))["value"].tolist() == [2, -1]
    for name, row in (("new.csv", "3,a,a,0,true,identical"), ("old.csv", "3,a,a,0,identical,")):  # old: check held the kind
        with pytest.raises(FormatError, match=rf"{name}:4: check item \(check = '(true|identical)'\)"):
            read_preferences(write(tmp_path, regular + row + "\n", name))
