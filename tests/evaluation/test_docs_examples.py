"""Every Python example of docs/evaluation.md runs as written, as a newcomer pastes it.

Each ```python block runs alone in a fresh folder holding the files it names: the demo collection as
``qrels.txt``, ``Iprob.txt``, ``topics.xml`` and its runs (the Python API example), else TREC 2014 as
``qrels.diversity.tsv`` and public runs re-tagged ``a``, ``b`` and ``bm25``. Nothing is defined for
a block beforehand: a name it uses without making it is a failure here.
"""

from __future__ import annotations

import os
import re
import warnings
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "evaluation.md"
REFERENCE = REPO / "tests" / "evaluation" / "data" / "reference"
DEMO = REPO / "studyapp" / "demo"
BLOCKS = re.findall(r"^```python\n(.*?)^```", DOC.read_text(encoding="utf-8"), re.S | re.M)


def _retagged(source: Path, target: Path, tag: str) -> None:
    lines = source.read_text().splitlines()
    target.write_text("".join(" ".join(line.split()[:5] + [tag]) + "\n" for line in lines))


def _files_for(code: str, folder: Path) -> None:
    """The files the block names, with data that fits them."""
    if "qrels.txt" in code:
        for name, target in (("qrels.txt", "qrels.txt"), ("intents.tsv", "Iprob.txt"), ("topics.xml", "topics.xml")):
            (folder / target).write_bytes((DEMO / name).read_bytes())
        runs = sorted((DEMO / "runs").glob("*.run"))
    else:
        (folder / "qrels.diversity.tsv").write_bytes((REFERENCE / "trec2014" / "qrels.diversity.tsv").read_bytes())
        runs = [REFERENCE / "runs" / "public" / f"pub-{name}.run" for name in ("greedyrr", "noisyrel", "random")]
    for source, tag in zip(runs, ("a", "b", "bm25")):
        _retagged(source, folder / f"{tag}.run", tag)


def test_the_doc_has_python_examples() -> None:
    assert len(BLOCKS) >= 4


@pytest.mark.parametrize("code", BLOCKS, ids=[f"block{n}" for n in range(len(BLOCKS))])
def test_python_example_runs_as_written(code: str, tmp_path, capsys) -> None:
    if "ir_measures" in code:
        pytest.importorskip("ir_measures")
    _files_for(code, tmp_path)
    here = os.getcwd()
    os.chdir(tmp_path)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the examples' topic warnings are the documented behaviour
            exec(compile(code, f"{DOC.name} example", "exec"), {"__name__": "__doc_example__"})
    finally:
        os.chdir(here)
    if "print(" in code:
        assert capsys.readouterr().out.strip()
