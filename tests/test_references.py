"""Every definition a reader is pointed to is in the repository.

No code, document, template or ``--help`` text refers to a document outside the repository, and
every link into docs/metrics.md or docs/design.md names a heading that exists.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from evaluation.cli import build_parser as score_parser
from evaluation.meta.cli import build_parser as meta_parser

REPO = Path(__file__).resolve().parents[1]
SEARCHED = ("evaluation", "studyapp", "docs", "benchmarks", "tests", "README.md", "Makefile", ".ci")
# Every file is read as text (data files such as *.qrels and *.run carry comments too), except these.
BINARY_SUFFIXES = {".png", ".jpg", ".jpeg", ".gif", ".ico", ".webp", ".pdf", ".gz", ".zip", ".parquet", ".sqlite3", ".pyc"}
# Written in pieces so that this file does not match itself.
OUTSIDE = [
    re.compile(r"\.\./" + "shared"),
    re.compile(r"(?<![\w-])" + "shared/"),
    re.compile("spec" + r"\s*§", re.IGNORECASE),
    re.compile("register" + r" #\d"),
    re.compile("DESIGN" + r"\.md"),
]
LINK = re.compile(r"(?:docs/)?(metrics|design)\.md#([\w-]+)")


def _files() -> list[Path]:
    found = []
    for name in SEARCHED:
        path = REPO / name
        candidates = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
        for file in candidates:
            if file.suffix.lower() not in BINARY_SUFFIXES and "__pycache__" not in file.parts and file.stat().st_size < 2_000_000:
                found.append(file)
    return found


FILES = _files()


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        return ""


def _help_texts() -> dict[str, str]:
    """The rendered ``--help`` of every command and subcommand of both CLIs (unwrapped: argparse
    breaks long lines at hyphens, which would cut anchors apart)."""
    texts = {}
    for prog, parser in (("evaluation", score_parser()), ("evaluation meta", meta_parser())):
        texts[prog] = _unwrapped_help(parser)
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    texts[f"{prog} {name}"] = _unwrapped_help(sub)
    return texts


def _unwrapped_help(parser: argparse.ArgumentParser) -> str:
    parser.formatter_class = lambda prog: argparse.RawDescriptionHelpFormatter(prog, width=10_000)
    return parser.format_help()


def heading_anchors(markdown: str) -> set[str]:
    """GitHub's anchors for the headings of ``markdown``: lower case, punctuation dropped, spaces to '-'."""
    anchors = set()
    in_code = False
    for line in markdown.splitlines():
        if line.startswith("```"):
            in_code = not in_code
        match = None if in_code else re.match(r"#{1,6}\s+(.*)", line)
        if match:
            anchors.add(re.sub(r"[^\w\- ]", "", match.group(1).strip().lower()).replace(" ", "-"))
    return anchors


def test_heading_anchors_follow_github_rules() -> None:
    assert heading_anchors("## DIN-measures and P+Q\n### alpha#-IA and x\n```\n# not a heading\n```\n### MUP_b") == {
        "din-measures-and-pq",
        "alpha-ia-and-x",
        "mup_b",
    }


def test_the_searched_tree_is_not_empty() -> None:
    names = {f.relative_to(REPO).as_posix() for f in FILES}
    assert {"docs/metrics.md", "evaluation/metrics/base.py", "README.md", "tests/evaluation/data/toy.qrels"} <= names
    assert len(FILES) > 100


@pytest.mark.parametrize("pattern", OUTSIDE, ids=lambda p: p.pattern)
def test_nothing_refers_to_a_document_outside_the_repository(pattern: re.Pattern[str]) -> None:
    hits = [
        f"{path.relative_to(REPO)}:{number}: {line.strip()}"
        for path in FILES
        if path != Path(__file__).resolve()
        for number, line in enumerate(_text(path).splitlines(), start=1)
        if pattern.search(line)
    ]
    hits += [f"{prog} --help: {line.strip()}" for prog, text in _help_texts().items() for line in text.splitlines() if pattern.search(line)]
    assert not hits, "references outside the repository:\n" + "\n".join(hits)


def test_every_link_into_the_definitions_names_a_real_heading() -> None:
    anchors = {doc: heading_anchors((REPO / "docs" / f"{doc}.md").read_text()) for doc in ("metrics", "design")}
    sources = [(str(path.relative_to(REPO)), _text(path)) for path in FILES]
    sources += [(f"{prog} --help", text) for prog, text in _help_texts().items()]
    used = [(where, doc, anchor) for where, text in sources for doc, anchor in LINK.findall(text)]
    dangling = [f"{where}: {doc}.md#{anchor}" for where, doc, anchor in used if anchor not in anchors[doc]]
    assert not dangling, "links to headings that do not exist:\n" + "\n".join(sorted(set(dangling)))
    assert len(used) > 100  # the code and docs do link into the definitions


def test_a_dangling_link_would_be_found() -> None:
    anchors = heading_anchors((REPO / "docs" / "metrics.md").read_text())
    assert "paired-bootstrap" in anchors
    assert "paired-bootstrap-test" not in anchors
