"""read_run's paths agree: a C reader for plain files (pyarrow's, or pandas' without pyarrow or when
pyarrow declines a file), the validating line reader for the rest."""

from __future__ import annotations

import sys
import warnings

import numpy as np
import pytest

from evaluation.exceptions import EvaluationWarning, FormatError
from evaluation.io import _run_columns
from evaluation.io._run_columns import arrow_columns, pandas_columns, plain_columns
from evaluation.io.runs import ORDERS, _read_run_lines, read_run

PLAIN = """\
1 Q0 d3 1 2.5 tagA
1 Q0 "q 2 2.5 tagA
1 Q0 NA 3 1.0 tagA
1 Q0 d1 4 1.0 tagA
2 Q0 x 2 0.5 tagA
2 Q0 y 1 0.7 tagA
2 Q0 x 3 0.1 tagA
"""


def both(path, **options):
    with warnings.catch_warnings(record=True) as fast_warnings:
        warnings.simplefilter("always")
        fast = read_run(path, **options)
    with warnings.catch_warnings(record=True) as slow_warnings:
        warnings.simplefilter("always")
        slow = _read_run_lines(path, order=options.get("order", "score"), on_duplicate_doc="keep_first", name=options.get("name"))
    return fast, slow, [str(w.message) for w in fast_warnings], [str(w.message) for w in slow_warnings]


@pytest.fixture(params=["pyarrow", "pandas"])
def c_reader(request, monkeypatch):
    """Each C reader in turn: pyarrow's (when installed), and pandas' as when pyarrow is missing."""
    if request.param == "pyarrow":
        pytest.importorskip("pyarrow")
    else:
        monkeypatch.setattr(_run_columns, "arrow_columns", lambda path: None)
    return request.param


@pytest.mark.parametrize("order", ORDERS)
def test_plain_files_read_the_same_by_both_paths(tmp_path, order, c_reader) -> None:
    path = tmp_path / "a.run"
    path.write_text(PLAIN)
    assert plain_columns(path) is not None  # the fast path is taken: quotes and "NA" are plain docids
    fast, slow, fast_warnings, slow_warnings = both(path, order=order)
    assert fast.name == slow.name == "tagA"
    assert dict(fast.lists) == dict(slow.lists)
    assert fast_warnings == slow_warnings == ["run tagA topic 2: duplicate docid x; kept the highest-ranked occurrence"]


def test_other_files_go_through_the_line_reader(tmp_path, c_reader) -> None:
    commented = tmp_path / "c.run"
    commented.write_text("# a comment\n" + PLAIN)
    assert plain_columns(commented) is None
    plain = tmp_path / "p.run"
    plain.write_text(PLAIN)
    with pytest.warns(EvaluationWarning, match="duplicate docid"):
        assert dict(read_run(commented).lists) == dict(read_run(plain).lists)
    comma = tmp_path / "comma.run"
    comma.write_text("1 Q0 d1 1 1,5 t\n")
    assert plain_columns(comma) is None and read_run(comma).lists["1"] == ("d1",)
    short = tmp_path / "short.run"
    short.write_text("1 Q0 d1 1 1.5 t\n1 Q0 d2 2\n")
    with pytest.raises(FormatError, match=r"short\.run:2: expected 6 columns"):
        read_run(short)
    repeated = tmp_path / "repeated.run"
    repeated.write_text("1 Q0 d1 1 1.5 t\n1 Q0 d2 1 1.0 t\n")
    with pytest.raises(FormatError, match=r"repeated\.run:2: rank 1 repeated for topic 1"):
        read_run(repeated, order="rank")
    duplicate = tmp_path / "duplicate.run"
    duplicate.write_text("1 Q0 d1 1 1.5 t\n1 Q0 d1 2 1.0 t\n")
    with pytest.raises(FormatError, match=r"duplicate\.run:2: docid d1 repeated"):
        read_run(duplicate, on_duplicate_doc="error")
    with pytest.warns(EvaluationWarning, match="duplicate docid"):
        assert read_run(duplicate).lists["1"] == ("d1",)


def test_a_file_with_several_tags_is_read_as_one_run_with_a_warning(tmp_path, c_reader) -> None:
    """Concatenated run files: one run per file, as trec_eval reads it, but never merged in silence."""
    path = tmp_path / "two.run"
    path.write_text("1 Q0 d1 1 2 runA\n1 Q0 d2 2 1 runA\n2 Q0 d3 1 1 runB\n")
    assert plain_columns(path) is None  # the C readers leave it to the line reader
    with pytest.warns(EvaluationWarning) as caught:
        run = read_run(path)
    assert [str(w.message) for w in caught] == [
        f"{path}: 2 run tags in one file (runA, runB): read as one run runA; give each run its own file"
    ]
    assert run.name == "runA" and dict(run.lists) == {"1": ("d1", "d2"), "2": ("d3",)}
    one = tmp_path / "one.run"
    one.write_text("1 Q0 d1 1 2 runA\n2 Q0 d3 1 1 runA\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert plain_columns(one) is not None and read_run(one).name == "runA"


def _same(a, b) -> bool:
    return (
        all(np.array_equal(x, y) for x, y in zip(a[:4], b[:4])) and a[4] == b[4] and all(x.dtype == y.dtype for x, y in zip(a[:4], b[:4]))
    )


def test_both_c_readers_give_the_same_columns(tmp_path) -> None:
    """One space, one tab, a BOM, CRLF line ends, blank lines, exponents and negative zero: the same
    strings, ranks and scores from pyarrow's reader and pandas'."""
    pytest.importorskip("pyarrow")
    lines = ["1 Q0 d3 1 2.5 tagA", '1 Q0 "q 2 1e-3 tagA', "1 Q0 NA 3 -0 tagA", "", "22 Q0 x,y 01 0.1000000000000000055511151231257827 tagA"]
    for name, text in {
        "space.run": "\n".join(lines) + "\n",
        "tab.run": "\n".join(line.replace(" ", "\t") for line in lines),
        "bom.run": "\ufeff" + "\r\n".join(lines) + "\r\n",
    }.items():
        path = tmp_path / name
        path.write_text(text, encoding="utf-8", newline="")
        arrow, pandas = arrow_columns(path), pandas_columns(path)
        assert arrow is not None and pandas is not None and _same(arrow, pandas), name
        assert arrow[0].tolist() == ["1", "1", "1", "22"] and arrow[1].tolist() == ["d3", '"q', "NA", "x,y"]
        assert arrow[2].tolist() == [1, 2, 3, 1] and arrow[3].tolist() == [2.5, 0.001, -0.0, 0.1] and arrow[4] == "tagA"


def test_both_c_readers_agree_on_a_file_read_in_several_blocks(tmp_path) -> None:
    """pyarrow reads a file in blocks of about 1 MB, each with its own topic dictionary."""
    pytest.importorskip("pyarrow")
    path = tmp_path / "big.run"
    path.write_text("".join(f"{n // 997} Q0 doc-{n % 1009:04d}-{n} {n % 997 + 1} {-n / 7!r} big\n" for n in range(40_000)))
    assert path.stat().st_size > 1_500_000  # more than one block
    arrow, pandas = arrow_columns(path), pandas_columns(path)
    assert arrow is not None and pandas is not None and _same(arrow, pandas)


@pytest.mark.parametrize(
    ("text", "pandas_reads_it"),
    [
        ("1 Q0 d1 1 1.5 t\n1  Q0 d2 2 1.0 t\n", True),  # two spaces: pandas' whitespace runs only
        ("1 Q0 d1 1 1.5 t \n", True),  # a trailing space
        (" 1 Q0 d1 1 1.5 t\n", True),  # a leading space
        ("1 Q0 d1 1 1.5 t\n1\tQ0 d2 2 1.0 t\n", True),  # a tab on a later line only
        ("1  d1 1 1.5 t\n", False),  # five fields: empty for pyarrow (two spaces), short for pandas
        ("# 1 Q0 d1 1 1.5\n1 Q0 d1 1 1.5 t\n", False),  # a comment line with six fields
        ("1 Q0 d1 1 nan t\n", False),
        ("1 Q0 d1 first 1.5 t\n", False),  # a rank that is not a number
        ("1 Q0 d1 1 1.5 t\n1 Q0 d2 2\n", False),
        ("", False),
    ],
)
def test_pyarrow_declines_what_it_cannot_read_exactly(tmp_path, text: str, pandas_reads_it: bool) -> None:
    """Anything but one space or one tab between six non-empty fields is left to pandas' reader (or the line reader)."""
    pytest.importorskip("pyarrow")
    path = tmp_path / "odd.run"
    path.write_text(text)
    assert arrow_columns(path) is None
    assert (pandas_columns(path) is not None) == pandas_reads_it
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EvaluationWarning)
        try:
            slow = _read_run_lines(path, order="score", on_duplicate_doc="keep_first", name=None)
        except FormatError:
            with pytest.raises(FormatError):
                read_run(path)
        else:
            assert dict(read_run(path).lists) == dict(slow.lists)


def test_without_pyarrow_pandas_reads_the_file(tmp_path, monkeypatch) -> None:
    """pyarrow is an optional dependency: without it, pandas' reader serves and the lists are the same."""
    path = tmp_path / "a.run"
    path.write_text(PLAIN)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EvaluationWarning)
        expected = dict(read_run(path).lists)
        for name in ("pyarrow", "pyarrow.csv", "pyarrow.compute"):
            monkeypatch.setitem(sys.modules, name, None)  # import raises ImportError
        assert arrow_columns(path) is None
        assert _same(plain_columns(path), pandas_columns(path))
        assert dict(read_run(path).lists) == expected


@pytest.mark.parametrize(
    "text",
    [
        "1 Q0 doc a 1 2.0 t\n1 Q0 doc b 2 1.0 t\n",  # a docid with a blank on every line
        "1 Q0 d1 1 2.0 t extra\n",  # a seventh field on every line
        "1  Q0 d1 1 2.0 t x\n",  # pyarrow declines the double space; pandas must not take it either
    ],
)
def test_seven_fields_on_every_line_are_an_error_not_a_shifted_read(tmp_path, c_reader, text: str) -> None:
    """pandas' reader makes a file whose every line has one field more than the names its index (the
    topic column), and read the rest shifted: topic 'Q0'. The line reader names the line instead."""
    path = tmp_path / "seven.run"
    path.write_text(text)
    assert plain_columns(path) is None
    with pytest.raises(FormatError, match=r"seven\.run:1: expected 6 columns .* found 7"):
        read_run(path)
