"""Markdown and LaTeX tables (``evaluation.report.tables``; pandas' ``to_markdown``/tabulate and
``Styler.to_latex``/Jinja2) parse back to the frame: rows, columns, rounded numbers, escaped text."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from evaluation.report.tables import to_latex, to_markdown
from tests.evaluation.tables_parse import latex_cells, markdown_cells

FRAME = pd.DataFrame(
    {
        "run_a": ["greedy_rr", "x#1|50%", "a&b $c"],
        "topic": ["251", "007", "all"],
        "mean": [0.51234567, math.nan, 1.0],
        "p_value": [0.01, 1e-5, 0.99996],
        "n": [3, 4, 50],
        "significant": [True, False, True],
    }
)


def test_markdown_parses_to_the_frame() -> None:
    header, body = markdown_cells(to_markdown(FRAME))
    assert header == list(FRAME.columns)
    assert len(body) == len(FRAME) and all(len(row) == FRAME.shape[1] for row in body)
    assert [row[0] for row in body] == ["greedy_rr", "x#1|50%", "a&b $c"]  # the pipe escaped, read back whole
    assert [row[1] for row in body] == ["251", "007", "all"]  # text kept as written, never parsed as a number
    assert [row[2] for row in body] == ["0.5123", "nan", "1.0000"]
    assert [row[3] for row in body] == ["0.0100", "0.0000", "1.0000"]
    assert [row[4] for row in body] == ["3", "4", "50"] and [row[5] for row in body] == ["True", "False", "True"]
    assert markdown_cells(to_markdown(FRAME, digits=2))[1][0][2] == "0.51"


def test_latex_is_a_tabular_with_escaped_text() -> None:
    spec, header, body = latex_cells(to_latex(FRAME, 3))
    assert spec == "llrrrl"
    assert header == ["run\\_a", "topic", "mean", "p\\_value", "n", "significant"]
    assert [row[0] for row in body] == ["greedy\\_rr", "x\\#1\\textbar{}50\\%", "a\\&b \\$c"]
    assert [row[2] for row in body] == ["0.512", "--", "1.000"] and [row[4] for row in body] == ["3", "4", "50"]


def test_latex_spells_out_what_ot1_would_print_as_other_glyphs() -> None:
    """< > | print as an inverted !, an inverted ? and an em dash in LaTeX's default font encoding (OT1)."""
    frame = pd.DataFrame({"run<a>": ["bm25|rm3", "<b>", None], "x": [1.0, 2.0, 3.0]})
    spec, header, body = latex_cells(to_latex(frame, 1))
    assert header == ["run\\textless{}a\\textgreater{}", "x"]
    assert [row[0] for row in body] == ["bm25\\textbar{}rm3", "\\textless{}b\\textgreater{}", "--"]
    assert [row[1] for row in body] == ["1.0", "2.0", "3.0"]


@pytest.mark.parametrize("render", [to_markdown, to_latex])
def test_an_empty_frame_is_a_header_only_table(render) -> None:
    text = render(FRAME.iloc[:0])
    if render is to_markdown:
        header, body = markdown_cells(text)
    else:
        _, header, body = latex_cells(text)
    assert len(header) == FRAME.shape[1] and body == []
