"""read_run's two paths agree: pandas' C reader for plain files, the validating line reader for the rest."""

from __future__ import annotations

import warnings

import pytest

from evaluation.exceptions import EvaluationWarning, FormatError
from evaluation.io.runs import ORDERS, _plain_columns, _read_run_lines, read_run

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


@pytest.mark.parametrize("order", ORDERS)
def test_plain_files_read_the_same_by_both_paths(tmp_path, order) -> None:
    path = tmp_path / "a.run"
    path.write_text(PLAIN)
    assert _plain_columns(path) is not None  # the fast path is taken: quotes and "NA" are plain docids
    fast, slow, fast_warnings, slow_warnings = both(path, order=order)
    assert fast.name == slow.name == "tagA"
    assert dict(fast.lists) == dict(slow.lists)
    assert fast_warnings == slow_warnings == ["run tagA topic 2: duplicate docid(s) x; kept the highest-ranked occurrence"]


def test_other_files_go_through_the_line_reader(tmp_path) -> None:
    commented = tmp_path / "c.run"
    commented.write_text("# a comment\n" + PLAIN)
    assert _plain_columns(commented) is None
    plain = tmp_path / "p.run"
    plain.write_text(PLAIN)
    with pytest.warns(EvaluationWarning, match="duplicate docid"):
        assert dict(read_run(commented).lists) == dict(read_run(plain).lists)
    comma = tmp_path / "comma.run"
    comma.write_text("1 Q0 d1 1 1,5 t\n")
    assert _plain_columns(comma) is None and read_run(comma).lists["1"] == ("d1",)
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
