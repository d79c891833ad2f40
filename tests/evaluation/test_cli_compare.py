"""Issue 35's command line: several run files after one --run, --version, the program's name,
comma-separated measures, --format markdown|latex and the compare sub-command."""

from __future__ import annotations

import json
import os
import sys
from io import StringIO
from pathlib import Path

import pandas as pd
import pytest

from evaluation import __version__
from evaluation.cli import main
from evaluation.compare import COLUMNS
from tests.evaluation.tables_parse import latex_cells, markdown_cells

REF = Path(__file__).parent / "data" / "reference"
QRELS = REF / "trec2014" / "qrels.diversity.tsv"
RUNS = [REF / "runs" / "public" / f"pub-{n}.run" for n in ("greedyrr", "noisyrel", "random")]


def run_cli(capsys, argv: list[str]) -> tuple[int, str, str]:
    status = main(argv)
    out, err = capsys.readouterr()
    return status, out, err


def test_version_and_the_program_name(capsys, monkeypatch) -> None:
    monkeypatch.setattr(sys, "argv", ["/usr/local/bin/diversity-eval"])
    status, out, _ = run_cli(capsys, ["--version"])
    assert status == 0 and out == f"diversity-eval {__version__}\n"
    status, out, _ = run_cli(capsys, ["--help"])
    assert status == 0 and out.startswith("usage: diversity-eval ")
    status, _, err = run_cli(capsys, ["score"])
    assert status == 2 and err.startswith("error: diversity-eval score: the following arguments are required")
    status, _, err = run_cli(capsys, ["score", "--qrels", str(QRELS), "--run", str(RUNS[0]), "--measures", "alpha_nDGC@10"])
    assert status == 2 and err.endswith("(`diversity-eval metrics` lists them all)\n")  # the program the user runs
    monkeypatch.setattr(sys, "argv", ["/x/evaluation/__main__.py"])
    status, out, _ = run_cli(capsys, ["--help"])
    assert out.startswith("usage: python -m evaluation ")
    status, _, err = run_cli(capsys, ["score", "--qrels", str(QRELS), "--run", str(RUNS[0]), "--measures", "alpha_nDGC@10"])
    assert status == 2 and err.endswith("(`python -m evaluation metrics` lists them all)\n")


def test_several_runs_after_one_flag_and_comma_separated_measures(capsys) -> None:
    status, one_flag, err = run_cli(
        capsys, ["score", "--qrels", str(QRELS), "--run", *map(str, RUNS), "--measures", "alpha-nDCG@10,ERR-IA@20"]
    )
    assert status == 0, err
    argv = ["score", "--qrels", str(QRELS), "--measures", "alpha-nDCG@10", "ERR-IA@20"]
    for path in RUNS:
        argv += ["--run", str(path)]
    status, flags, _ = run_cli(capsys, argv)
    assert one_flag == flags
    frame = pd.read_csv(StringIO(flags), sep="\t")
    assert frame["run"].unique().tolist() == ["pub-greedyrr", "pub-noisyrel", "pub-random"]
    assert frame["measure"].unique().tolist() == ["alpha-nDCG@10", "ERR-IA@20"]
    status, _, err = run_cli(
        capsys, ["score", "--qrels", str(QRELS), "--run", str(RUNS[0]), "--measures", "alpha-nDCG(alpha=0.3,rel=1)@10"]
    )
    assert status == 0, err
    for quoted in ("alpha-nDCG@10 ERR-IA@20", " alpha-nDCG@10, ERR-IA@20 "):  # one quoted argument holding both
        status, out, err = run_cli(capsys, ["score", "--qrels", str(QRELS), "--run", *map(str, RUNS), "--measures", quoted])
        assert status == 0 and out == one_flag, err
    status, out, err = run_cli(capsys, ["score", "--qrels", str(QRELS), "--run", str(RUNS[0]), "--measures", "RBU(p=0.99, e=0.05)"])
    assert status == 0 and pd.read_csv(StringIO(out), sep="\t")["measure"].tolist() == ["RBU(p=0.99, e=0.05)"], err


@pytest.mark.parametrize("fmt", ["markdown", "latex"])
def test_score_as_a_table_for_papers(capsys, fmt: str) -> None:
    status, out, err = run_cli(
        capsys, ["score", "--qrels", str(QRELS), "--run", str(RUNS[0]), "--measures", "alpha-nDCG@10", "--format", fmt]
    )
    assert status == 0, err
    if fmt == "markdown":
        header, body = markdown_cells(out)
    else:
        spec, header, body = latex_cells(out)
        assert spec == "lllr"
    assert header == ["run", "topic", "measure", "value"] and body == [["pub-greedyrr", "all", "alpha-nDCG@10", "0.8919"]]


def test_compare_command(capsys, tmp_path) -> None:
    argv = ["compare", "--qrels", str(QRELS), "--run", *map(str, RUNS), "--measures", "alpha-nDCG@20", "--baseline", "pub-greedyrr"]
    status, out, err = run_cli(capsys, [*argv, "--test", "t", "--correction", "bonferroni"])
    assert status == 0, err
    frame = pd.read_csv(StringIO(out), sep="\t")
    assert list(frame.columns) == COLUMNS
    assert frame["run_b"].tolist() == ["pub-noisyrel", "pub-random"] and (frame["diff"] < 0).all()
    assert (frame["p_adjusted"] == (frame["p_value"] * 2).clip(upper=1)).all()
    status, out, _ = run_cli(
        capsys, [*argv, "--test", "randomisation", "--permutations", "500", "--format", "markdown", "-o", str(tmp_path / "t.md")]
    )
    assert status == 0 and out == ""
    header, body = markdown_cells((tmp_path / "t.md").read_text())
    assert header == COLUMNS and [row[2] for row in body] == ["pub-noisyrel", "pub-random"]
    status, _, err = run_cli(capsys, [*argv[:-2], "--baseline", "nope"])
    assert status == 2 and err.startswith("error: baseline 'nope' is not among the runs")
    status, by_name, err = run_cli(capsys, argv)
    assert status == 0, err
    status, by_file, err = run_cli(capsys, [*argv[:-2], "--baseline", os.path.relpath(RUNS[0])])  # its file, as another path
    assert status == 0 and by_file == by_name, err


@pytest.mark.parametrize(
    ("option", "value", "expected"), [("--alpha", "2", "a number in (0, 1)"), ("--permutations", "0", "a positive integer")]
)
def test_compare_refuses_a_level_or_draw_count_that_means_nothing(capsys, option: str, value: str, expected: str) -> None:
    argv = ["compare", "--qrels", str(QRELS), "--run", *map(str, RUNS[:2]), "--measures", "P@10", option, value]
    status, out, err = run_cli(capsys, argv)
    assert status == 2 and out == "" and err.endswith(f"argument {option}: expected {expected}, got '{value}'\n")


def test_a_directory_after_run_stands_for_its_run_files(capsys, tmp_path) -> None:
    """As evaluate(collection, directory): every file not starting with '.', in name order."""
    folder = tmp_path / "runs"
    folder.mkdir()
    for path in RUNS[:2]:
        (folder / path.name).write_text(path.read_text())
    (folder / ".hidden").write_text("not a run\n")
    argv = ["score", "--qrels", str(QRELS), "--measures", "P@10"]
    status, by_dir, err = run_cli(capsys, [*argv, "--run", str(folder)])
    assert status == 0, err
    status, by_files, _ = run_cli(capsys, [*argv, "--run", *map(str, RUNS[:2])])
    assert by_dir == by_files and pd.read_csv(StringIO(by_dir), sep="\t")["run"].tolist() == ["pub-greedyrr", "pub-noisyrel"]
    status, out, err = run_cli(capsys, ["compare", *argv[1:], "--run", str(folder), "--baseline", str(folder / RUNS[1].name)])
    assert status == 0 and pd.read_csv(StringIO(out), sep="\t")[["run_a", "run_b"]].values.tolist() == [["pub-noisyrel", "pub-greedyrr"]], (
        err
    )
    empty = tmp_path / "empty"
    empty.mkdir()
    status, _, err = run_cli(capsys, [*argv, "--run", str(empty)])
    assert status == 2 and err == f"error: {empty}: a directory without run files\n"


def test_two_run_files_with_one_tag_are_refused_with_the_reason(capsys, tmp_path) -> None:
    copy = tmp_path / "copy.run"
    copy.write_text(RUNS[0].read_text())
    for command in ("score", "compare"):
        status, _, err = run_cli(capsys, [command, "--qrels", str(QRELS), "--run", str(RUNS[0]), str(copy), "--measures", "P@10"])
        assert status == 2
        assert err == (
            f"error: run name given twice: pub-greedyrr, the tag column of both {RUNS[0]} and {copy}"
            " (a run file is named by its tag column: give each file its own tag)\n"
        )


def test_compare_json_is_exact_and_csv_is_spreadsheet_safe(capsys, tmp_path) -> None:
    """pandas' to_json wrote 10 decimals (a p-value of 1e-13 became 0.0, an infinite effect size null) and to_csv left a
    run named '=1+2' a formula; compare's tables now go through the command line's one table writer."""
    lines = RUNS[0].read_text().splitlines()
    formula = tmp_path / "formula.run"
    formula.write_text("".join(" ".join([*line.split()[:5], "=1+2"]) + "\n" for line in lines))
    argv = ["compare", "--qrels", str(QRELS), "--run", str(formula), str(RUNS[1]), "--measures", "alpha-nDCG@20", "nDCG@20"]
    status, tsv, err = run_cli(capsys, argv)
    assert status == 0, err
    status, out, err = run_cli(capsys, [*argv, "--format", "json"])
    assert status == 0, err
    records, exact = json.loads(out), pd.read_csv(StringIO(tsv), sep="\t", float_precision="round_trip")
    assert [r["p_value"] for r in records] == exact["p_value"].tolist()  # every digit, as the TSV (4.19e-11 was 0.0)
    assert min(r["p_value"] for r in records) < 1e-10 and [r["run_a"] for r in records] == ["=1+2", "=1+2"]
    status, out, err = run_cli(capsys, [*argv, "--format", "csv"])
    assert status == 0 and out.splitlines()[1].split(",")[1] == "'=1+2", err
