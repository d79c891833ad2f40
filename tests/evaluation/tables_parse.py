"""Parse the Markdown and LaTeX tables of ``evaluation.report.tables`` back into cells, so tests check that
the output is a table a reader's tool accepts (markdown-it-py's GFM tables; a LaTeX tabular's structure)."""

from __future__ import annotations

import re

from markdown_it import MarkdownIt

LATEX_SPECIAL = re.compile(r"(?<!\\)[_#%&$]")


def markdown_cells(text: str) -> tuple[list[str], list[list[str]]]:
    """Header and body cells of the one GFM table in ``text``, as markdown-it-py (GFM tables on) reads it."""
    tokens = MarkdownIt("commonmark").enable("table").parse(text)
    rows: list[list[str]] = []
    header_rows = 0
    in_head = False
    for token in tokens:
        if token.type == "thead_open":
            in_head = True
        elif token.type == "thead_close":
            in_head = False
        elif token.type == "tr_open":
            rows.append([])
            header_rows += in_head
        elif token.type == "inline" and rows:
            rows[-1].append(token.content)
    assert header_rows == 1, text
    return rows[0], rows[1:]


def latex_cells(text: str) -> tuple[str, list[str], list[list[str]]]:
    """Column spec, header and body cells of one booktabs ``tabular``; checks its structure: begin/end, the
    three rules, as many cells as columns on every row, no unescaped special character in a cell."""
    lines = text.strip().splitlines()
    spec = re.fullmatch(r"\\begin\{tabular\}\{([lrc]+)\}", lines[0])
    assert spec and lines[-1] == r"\end{tabular}", text
    assert lines[1] == r"\toprule" and lines[3] == r"\midrule" and lines[-2] == r"\bottomrule", text
    rows = []
    for line in [lines[2], *lines[4:-2]]:
        assert line.endswith(r" \\"), line
        cells = [c.strip() for c in re.split(r"(?<!\\)&", line[: -len(r" \\")])]
        assert len(cells) == len(spec.group(1)), line
        assert not any(LATEX_SPECIAL.search(c.replace("&", "")) for c in cells), line
        rows.append(cells)
    return spec.group(1), rows[0], rows[1:]
