"""The command line of issue 2, called as ``evaluation.cli.main(argv)`` (plus one real subprocess).

Collection used by most tests: the toy topic T1 of docs/metrics.md#the-toy-topic, a one-intent topic T2 whose
relevant document e1 the run puts at rank 2, and T3 with a judged-nonrelevant document only.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from io import StringIO
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evaluation.cli import main
from evaluation.io.scores import read_scores
from evaluation.metrics import REGISTRY, default_measures
from tests.evaluation.toy import TOY_IPROB, TOY_LIST, TOY_QRELS

REPO = Path(__file__).resolve().parents[2]
P4 = 5e-5
P6 = 5e-7

# FIXTURES ===========================================================================================


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    qrels = tmp_path / "qrels.Dqrels"
    qrels.write_text(TOY_QRELS.read_text() + "T2 1 e1 L1\nT2 1 e2 L0\nT3 0 f1 L0\n")
    intents = tmp_path / "iprob"
    intents.write_text(TOY_IPROB.read_text())
    run = tmp_path / "toy.run"
    lines = [f"T1 Q0 {d} {n} {10 - n} toy" for n, d in enumerate(TOY_LIST, start=1)]
    lines += ["T2 Q0 e2 1 2 toy", "T2 Q0 e1 2 1 toy", "T3 Q0 f1 1 1 toy"]
    run.write_text("\n".join(lines) + "\n")
    other = tmp_path / "other.run"
    # no T2, T3; T9 is not in the qrels (ignored, docs/metrics.md#runs)
    other.write_text("T1 Q0 d1 1 3 other\nT1 Q0 d4 2 2 other\nT1 Q0 d5 3 1 other\nT9 Q0 z 1 1 other\n")
    return {"qrels": qrels, "intents": intents, "run": run, "other": other, "dir": tmp_path}


def score(files: dict[str, Path], *args: str, intents: bool = True, runs: tuple[str, ...] = ("run",)) -> list[str]:
    argv = ["score", "--qrels", str(files["qrels"])]
    if intents:
        argv += ["--intents", str(files["intents"])]
    for r in runs:
        argv += ["--run", str(files[r])]
    return argv + list(args)


def run_cli(capsys, argv: list[str]) -> tuple[int, str, str]:
    status = main(argv)
    out, err = capsys.readouterr()
    return status, out, err


def table(text: str) -> pd.DataFrame:
    lines = text.splitlines()
    assert lines[0] == "run\ttopic\tmeasure\tvalue"
    rows = [line.split("\t") for line in lines[1:]]
    frame = pd.DataFrame(rows, columns=["run", "topic", "measure", "value"])
    frame["value"] = frame["value"].astype(float)
    return frame


def lookup(frame: pd.DataFrame, run: str, topic: str, measure: str) -> float:
    row = frame[(frame.run == run) & (frame.topic == topic) & (frame.measure == measure)]
    assert len(row) == 1, (run, topic, measure, frame)
    return float(row.value.iloc[0])


# TESTS: scoring =====================================================================================


def test_requested_measure_strings_are_echoed_verbatim(files, capsys) -> None:
    requested = ["alpha-nDCG(alpha=0.3)@10", "D-nDCG'@5", "RBU(p=0.99,e=0.05)", "D#-nDCG(gamma=0.5)@5", "strec@5"]
    status, out, err = run_cli(capsys, score(files, "--measures", *requested, "--per-topic"))
    assert status == 0
    frame = table(out)
    assert list(dict.fromkeys(frame.measure)) == requested
    assert lookup(frame, "toy", "T1", "D-nDCG'@5") == pytest.approx(0.6169, abs=P4)  # docs/metrics.md#condensed-lists
    assert lookup(frame, "toy", "T1", "D#-nDCG(gamma=0.5)@5") == pytest.approx(0.6003, abs=P4)
    assert lookup(frame, "toy", "T1", "strec@5") == pytest.approx(2 / 3, abs=1e-12)


def test_per_topic_rows_and_mean_rows(files, capsys) -> None:
    status, out, err = run_cli(capsys, score(files, "--measures", "I-rec@5", "P-IA@5", "--per-topic", runs=("run", "other")))
    assert status == 0
    frame = table(out)
    assert set(zip(frame.run, frame.topic)) == {(r, t) for r in ("toy", "other") for t in ("T1", "T2", "T3", "all")}
    assert len(frame) == 2 * 2 * 4
    # T3 has no relevant document: NaN, out of the mean (docs/metrics.md#relevance-and-empty-topics)
    assert math.isnan(lookup(frame, "toy", "T3", "I-rec@5"))
    assert lookup(frame, "toy", "T2", "I-rec@5") == 1.0
    assert lookup(frame, "toy", "all", "I-rec@5") == pytest.approx((2 / 3 + 1) / 2, abs=1e-12)
    # a topic missing from a run scores 0 and stays in the mean (docs/metrics.md#runs)
    assert lookup(frame, "other", "T2", "I-rec@5") == 0.0
    assert lookup(frame, "other", "all", "I-rec@5") == pytest.approx((1.0 + 0.0) / 2, abs=1e-12)
    for m in ("I-rec@5", "P-IA@5"):
        for r in ("toy", "other"):
            per_topic = [lookup(frame, r, t, m) for t in ("T1", "T2")]
            assert lookup(frame, r, "all", m) == pytest.approx(np.mean(per_topic), abs=1e-12)


def test_without_per_topic_only_mean_rows(files, capsys) -> None:
    status, out, _ = run_cli(capsys, score(files, "--measures", "I-rec@5", "D-nDCG@5", runs=("run", "other")))
    assert status == 0
    frame = table(out)
    assert set(frame.topic) == {"all"}
    assert len(frame) == 4


def test_topics_without_relevant_documents_are_named_in_a_warning(files, capsys) -> None:
    status, out, err = run_cli(capsys, score(files, "--measures", "alpha-nDCG@5", "nNRBP", "--per-topic"))
    assert status == 0
    assert err.count("\n") == 1 and err.startswith("warning:") and "T3" in err and "T1" not in err and "T2" not in err
    frame = table(out)
    assert math.isnan(lookup(frame, "toy", "T3", "nNRBP"))
    assert not math.isnan(lookup(frame, "toy", "all", "nNRBP"))


def test_empty_topic_zero_option_keeps_the_topic(files, capsys) -> None:
    status, out, err = run_cli(capsys, score(files, "--measures", "I-rec@5", "--per-topic", "--empty-topic", "zero"))
    assert status == 0 and "T3" in err
    frame = table(out)
    assert lookup(frame, "toy", "T3", "I-rec@5") == 0.0
    assert lookup(frame, "toy", "all", "I-rec@5") == pytest.approx((2 / 3 + 1 + 0) / 3, abs=1e-12)


def test_topic_set_run_and_qrels(files, capsys) -> None:
    status, out, _ = run_cli(capsys, score(files, "--measures", "I-rec@5", "--per-topic", "--topic-set", "run_and_qrels", runs=("other",)))
    assert status == 0
    frame = table(out)
    assert set(frame.topic) == {"T1", "all"}  # the run has T1 only
    assert lookup(frame, "other", "all", "I-rec@5") == 1.0


def test_a_clean_run_writes_nothing_on_stderr(files, capsys) -> None:
    """No warning to give and not a TTY: no progress bar either. (With the intents' weights: without them
    PMP has no most popular intent and is NaN on every topic, which is warned about.)"""
    clean = files["dir"] / "clean.run"
    clean.write_text("".join(line + "\n" for line in files["run"].read_text().splitlines() if line.startswith("T1 ")))
    argv = ["score", "--qrels", str(TOY_QRELS), "--run", str(clean), "--measures", "all"]
    status, out, err = run_cli(capsys, [*argv, "--intents", str(TOY_IPROB)])
    assert status == 0 and err == ""
    status, out, err = run_cli(capsys, argv)
    assert status == 0 and err.startswith("warning: measures PMP@5, PMP@10, PMP@20, PMP'@5, PMP'@10, PMP'@20 are NaN on every topic")


def test_topics_a_run_and_the_qrels_do_not_share_are_warned_about_or_refused(files, capsys) -> None:
    """The toy qrels have T1 only; the run has T1-T3, the other run T1 and T9 (issue: never silent)."""
    argv = ["score", "--qrels", str(TOY_QRELS), "--run", str(files["run"]), "--run", str(files["other"]), "--measures", "alpha-nDCG@5"]
    status, _, err = run_cli(capsys, argv)
    assert status == 0
    assert err.splitlines() == [
        "warning: run topics missing from the qrels, not scored: run toy (2: T2, T3), run other (1: T9)"
        " (--on-topic-mismatch error makes this an error)",
    ]
    status, _, err = run_cli(capsys, ["score", "--qrels", str(files["qrels"]), "--run", str(files["other"]), "--measures", "alpha-nDCG@5"])
    assert (
        err.splitlines()[0] == "warning: qrels topic missing from run other (1: T2): scored 0"
        " (--topic-set run_and_qrels leaves them out; --on-topic-mismatch error makes this an error)"
    )  # T3, without a relevant document, is NaN for every run: not 'scored 0'
    assert err.splitlines()[2] == "warning: topic T3 without any relevant document: scored NaN and excluded from means"
    status, _, err = run_cli(capsys, [*argv, "--on-topic-mismatch", "error"])
    assert status == 2 and err.startswith("error: run topics missing from the qrels") and "(--on-topic-mismatch error)" in err
    assert "on_topic_mismatch" not in err  # the command line names its own options, not the library's keywords
    status, _, err = run_cli(capsys, [*argv, "--on-topic-mismatch", "ignore"])
    assert status == 0 and err == ""


@pytest.mark.parametrize("fmt", ["tsv", "csv", "json"])
def test_output_formats_parse_back(files, capsys, fmt: str) -> None:
    measures = ["alpha-nDCG(alpha=0.3)@10", "D-nDCG'@5", "RBU(p=0.99,e=0.05)"]
    status, stdout_text, _ = run_cli(capsys, score(files, "--measures", *measures, "--per-topic", "--format", fmt))
    assert status == 0
    out = files["dir"] / f"scores.{fmt}"
    status, printed, _ = run_cli(capsys, score(files, "--measures", *measures, "--per-topic", "--format", fmt, "-o", str(out)))
    assert status == 0 and printed == ""
    assert out.read_text() == stdout_text
    back = read_scores(out)
    reference = table(run_cli(capsys, score(files, "--measures", *measures, "--per-topic"))[1])
    assert back[["run", "topic", "measure"]].values.tolist() == reference[["run", "topic", "measure"]].values.tolist()
    assert np.array_equal(back.value.to_numpy(), reference.value.to_numpy(), equal_nan=True)
    if fmt == "json":
        records = json.loads(out.read_text())
        assert records[0].keys() == {"run", "topic", "measure", "value"}
    if fmt == "csv":
        assert out.read_text().splitlines()[0] == "run,topic,measure,value"


# TESTS: errors ======================================================================================


def _bad(files: dict[str, Path], name: str, text: str) -> Path:
    path = files["dir"] / name
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("case", "needle"),
    [
        ("qrels", ":2: expected 4 columns"),
        ("qrels-dup", ":2: duplicate judgment"),
        ("intents", ":2: probabilities of topic T1 sum to"),
        ("run", ":2: score must be a number, got 'x' (topic T1, doc d2)"),
        ("run-nan", ":2: score must be finite, got 'nan' (topic T1, doc d2)"),
        ("run-dup", ":2: docid d1 repeated"),
        ("missing", ": no such file"),
        ("measure", "trec_eval's bpref is not defined here: compute it with ir_measures"),
        ("typo", "unknown metric 'alpha_nDGC'; did you mean alpha-nDCG, alpha-DCG?"),
        ("param", "unknown parameter 'zeta'"),
        ("rbu-p1-jar", "RBU: parameter p must be < 1.0, got '1'"),
        ("rbu-p1-paper", "RBU: parameter p must be < 1.0, got '1'"),
    ],
)
def test_errors_exit_2_with_one_line_and_no_output_file(files, capsys, case: str, needle: str) -> None:
    out = files["dir"] / "out.tsv"
    measures = ["I-rec@5"]
    argv_files = dict(files)
    extra: list[str] = []
    if case == "qrels":
        argv_files["qrels"] = _bad(files, "bad.qrels", "T1 1 d1 L1\nT1 1 d2\n")
    elif case == "qrels-dup":
        argv_files["qrels"] = _bad(files, "bad.qrels", "T1 1 d1 L1\nT1 1 d1 L2\n")
    elif case == "intents":
        argv_files["intents"] = _bad(files, "bad.iprob", "T1 1 0.9 nav\nT1 2 0.3 inf\n")
    elif case == "run":
        argv_files["run"] = _bad(files, "bad.run", "T1 Q0 d1 1 1 r\nT1 Q0 d2 2 x r\n")
    elif case == "run-nan":
        argv_files["run"] = _bad(files, "bad.run", "T1 Q0 d1 1 1 r\nT1 Q0 d2 2 nan r\n")
    elif case == "run-dup":
        argv_files["run"] = _bad(files, "bad.run", "T1 Q0 d1 1 2 r\nT1 Q0 d1 2 1 r\n")
        extra = ["--on-duplicate-doc", "error"]
    elif case == "missing":
        argv_files["run"] = files["dir"] / "does-not-exist.run"
    elif case == "measure":
        measures = ["I-rec@5", "bpref"]
    elif case == "typo":  # an ir_measures spelling with a typo: the closest names (difflib)
        measures = ["alpha_nDGC@10"]
    elif case == "param":
        measures = ["alpha-nDCG(zeta=1)@5"]
    elif case.startswith("rbu-p1"):  # p = 1: every list 0 on the jar scale, a division by 1 - p on the paper scale
        measures = ["RBU(p=0.99)", f"RBU(p=1,rbu_scale={case.rsplit('-', 1)[1]})"]
    status, stdout_text, err = run_cli(capsys, score(argv_files, "--measures", *measures, "-o", str(out), *extra))
    assert status == 2
    assert stdout_text == ""
    assert err.count("\n") == 1, err
    assert err.startswith("error: ") and needle in err, err
    if case in ("qrels", "qrels-dup", "intents", "run", "run-dup", "missing"):
        bad_file = {"qrels": "qrels", "qrels-dup": "qrels", "intents": "intents", "run": "run", "run-dup": "run", "missing": "run"}[case]
        assert str(argv_files[bad_file]) in err  # names the file
    assert not out.exists()
    assert not [p for p in files["dir"].iterdir() if p.name.startswith(".out.tsv")]  # no temporary left behind


def test_ir_measures_spellings_score_like_ours(files, capsys) -> None:
    """ir_measures' names and parameters are aliases (docs/metrics.md#measure-names): the same values, the
    requested string kept in the measure column."""
    status, out, _ = run_cli(
        capsys, score(files, "--measures", "alpha_nDCG(alpha=0.5,judged_only=True)@5", "alpha-nDCG'@5", "StRecall@5", "I-rec@5")
    )
    assert status == 0
    values = dict(zip(table(out).measure, table(out).value))
    assert values["alpha_nDCG(alpha=0.5,judged_only=True)@5"] == values["alpha-nDCG'@5"]
    assert values["StRecall@5"] == values["I-rec@5"]


def test_an_error_keeps_an_existing_output_file_untouched(files, capsys) -> None:
    out = files["dir"] / "out.tsv"
    out.write_text("previous\n")
    status, _, _ = run_cli(capsys, score(files, "--measures", "nope@5", "-o", str(out)))
    assert status == 2 and out.read_text() == "previous\n"


@pytest.mark.parametrize("target", ["missing-dir/out.tsv", "."], ids=["missing-directory", "is-a-directory"])
def test_an_unwritable_output_path_is_a_one_line_error(files, capsys, target: str) -> None:
    out = files["dir"] / target
    status, stdout_text, err = run_cli(capsys, score(files, "--measures", "I-rec@5", "-o", str(out)))
    assert status == 2 and stdout_text == ""
    assert err.count("\n") == 1 and err.startswith("error: ") and str(out) in err


@pytest.mark.parametrize(
    "argv",
    [
        ["score", "--qrels", "q", "--run", "r", "--measures", "I-rec@5", "--order", "random"],
        ["score", "--qrels", "q", "--run", "r"],
        ["score", "--qrels", "q", "--run", "r", "--measures", "I-rec@5", "--keep-intents", "0"],
        ["nonsense"],
        [],
    ],
)
def test_usage_errors_are_one_line_with_status_2(capsys, argv: list[str]) -> None:
    """Usage problems read like every other error: one ``error:`` line, no usage block, exit 2."""
    status, stdout_text, err = run_cli(capsys, argv)
    assert status == 2 and stdout_text == ""
    assert err.count("\n") == 1 and err.startswith("error: python -m evaluation")


# TESTS: ordering and collection transforms ==========================================================


def test_order_option(files, capsys) -> None:
    """Tied scores: default score desc/docno desc puts d5 first, pyndeval d1, rank and file follow the file."""
    run = _bad(files, "tied.run", "T1 Q0 d5 2 1.0 r\nT1 Q0 d1 1 1.0 r\n")
    firsts = {}
    for order in ("score", "pyndeval", "rank", "file"):
        argv = [
            "score",
            "--qrels",
            str(TOY_QRELS),
            "--intents",
            str(TOY_IPROB),
            "--run",
            str(run),
            "--measures",
            "D-nDCG@1",
            "--order",
            order,
        ]
        status, out, _ = run_cli(capsys, argv)
        assert status == 0
        firsts[order] = round(lookup(table(out), "r", "all", "D-nDCG@1") * 1.3, 9)  # GG of the rank-1 document
    assert firsts == {"score": 0.8, "pyndeval": 1.3, "rank": 1.3, "file": 0.8}  # GG(d5) = 0.8, GG(d1) = 1.3


def _mean(capsys, argv: list[str], measure: str) -> float:
    status, out, _ = run_cli(capsys, argv)
    assert status == 0
    return lookup(table(out), "toy", "T1", measure)


def test_weights_uniform_reproduces_the_ndeval_family(files, capsys) -> None:
    """docs/metrics.md#the-toy-topic ndeval rows use uniform weights; --weights uniform over the Iprob file gives them."""
    measures = ["P-IA@5", "alpha-nDCG@5", "ERR-IA@5", "NRBP"]
    argv = score(files, "--measures", *measures, "--per-topic", "--weights", "uniform")
    status, out, _ = run_cli(capsys, argv)
    frame = table(out)
    expected = {"P-IA@5": 0.266667, "alpha-nDCG@5": 0.553928, "ERR-IA@5": 0.387292, "NRBP": 0.358398}
    for m, v in expected.items():
        assert lookup(frame, "toy", "T1", m) == pytest.approx(v, abs=P6), m
    # with the original weights P-IA differs (0.32, docs/metrics.md#coverage-and-set-metrics)
    assert _mean(capsys, score(files, "--measures", "P-IA@5", "--per-topic"), "P-IA@5") == pytest.approx(0.32, abs=1e-12)


def test_weights_linear(files, capsys) -> None:
    """docs/metrics.md#simplified-collections: weights 0.5 > 0.3 > 0.2 become 3/6, 2/6, 1/6: P-IA@5 = (3/6·2 + 2/6·2)/5."""
    value = _mean(capsys, score(files, "--measures", "P-IA@5", "--per-topic", "--weights", "linear"), "P-IA@5")
    assert value == pytest.approx((3 / 6 * 2 + 2 / 6 * 2) / 5, abs=1e-12)


def test_keep_intents_renormalises_and_removes_intents(files, capsys) -> None:
    """--keep-intents 2 keeps intents 1 (0.5) and 2 (0.3) as 0.625/0.375; intent 3 leaves every denominator."""
    argv = score(files, "--measures", "I-rec@5", "D-nDCG@5", "I-rec'@5", "--per-topic", "--keep-intents", "2")
    status, out, _ = run_cli(capsys, argv)
    frame = table(out)
    assert lookup(frame, "toy", "T1", "I-rec@5") == 1.0  # 2 of 2 kept intents covered (was 2/3)
    # GG: d1 1.625, d2 1.125, d3 0.625, d5 0.75, d7 0.625, d4 0 (judged, relevant only to intent 3)
    disc = 1 / np.log2(np.arange(2, 7))
    run_gains = np.array([0.625, 0, 1.625, 0, 1.125])
    ideal = np.array([1.625, 1.125, 0.75, 0.625, 0.625])
    assert lookup(frame, "toy", "T1", "D-nDCG@5") == pytest.approx((run_gains * disc).sum() / (ideal * disc).sum(), abs=1e-12)


def test_keep_intents_ties_go_to_the_lower_intent_id(files, capsys) -> None:
    """Uniform toy weights: keeping 1 intent keeps intent 1, whose relevant docs are d1, d3, d7."""
    argv = [
        "score",
        "--qrels",
        str(TOY_QRELS),
        "--run",
        str(files["run"]),
        "--measures",
        "Prec@5",
        "P-IA@5",
        "--per-topic",
        "--keep-intents",
        "1",
    ]
    status, out, _ = run_cli(capsys, argv)
    frame = table(out)
    assert lookup(frame, "toy", "T1", "P-IA@5") == pytest.approx(2 / 5, abs=1e-12)  # d3, d1 in the top 5
    assert lookup(frame, "toy", "T1", "Prec@5") == pytest.approx(2 / 5, abs=1e-12)  # d2 no longer relevant


def test_binary_grades(files, capsys) -> None:
    """--binary: every grade >= 1 becomes 1 (docs/metrics.md#simplified-collections), so GG = sum of the weights of the relevant intents."""
    value = _mean(capsys, score(files, "--measures", "D-nDCG@5", "--per-topic", "--binary"), "D-nDCG@5")
    disc = 1 / np.log2(np.arange(2, 7))
    run_gains = np.array([0.5, 0, 0.8, 0, 0.3])  # d3, d6, d1, dX, d2
    ideal = np.array([0.8, 0.5, 0.5, 0.5, 0.3])  # d1; d3, d5, d7; d2 (then d4 0.2)
    assert value == pytest.approx((run_gains * disc).sum() / (ideal * disc).sum(), abs=1e-12)
    # and I-rec does not change
    assert _mean(capsys, score(files, "--measures", "I-rec@5", "--per-topic", "--binary"), "I-rec@5") == pytest.approx(2 / 3)


# TESTS: metrics, all, difficulty, module entry point ================================================


def test_metrics_lists_every_registered_metric(capsys) -> None:
    status, out, _ = run_cli(capsys, ["metrics"])
    assert status == 0
    headers = [line for line in out.splitlines() if line and not line.startswith(" ")]
    listed = [h.removesuffix("[@k]").removesuffix("@k") for h in headers]  # Name@k, Name[@k] or Name
    assert listed == list(REGISTRY)
    for spec in REGISTRY.values():
        assert spec.citation in out
        for name, param in spec.params.items():
            assert f"{name}={param.default}" in out
    status, out, _ = run_cli(capsys, ["metrics", "--format", "tsv"])
    frame = pd.read_csv(StringIO(out), sep="\t")
    assert list(frame.name) == list(REGISTRY)


def test_measures_all(files, capsys) -> None:
    status, out, _ = run_cli(capsys, ["score", "--qrels", str(TOY_QRELS), "--run", str(files["run"]), "--measures", "all"])
    assert status == 0
    labels = set(table(out).measure)
    assert labels == {m.canonical() for m in default_measures()}
    for name, spec in REGISTRY.items():
        if spec.cutoff in ("required", "either"):
            for k in (5, 10, 20):
                assert f"{name}@{k}" in labels and f"{name}'@{k}" in labels, name
        else:
            assert name in labels and f"{name}'" in labels, name


def test_difficulty_command(files, capsys) -> None:
    status, out, _ = run_cli(capsys, ["difficulty", "--qrels", str(TOY_QRELS)])
    assert status == 0
    frame = pd.read_csv(StringIO(out), sep="\t")
    row = frame.iloc[0]
    assert row.topic == "T1" and row.xi == 2 and row.dd == pytest.approx(0.8132, abs=P4)
    assert row.smr == "1:0.264706 2:0.264706 3:0.470588"
    status, out, _ = run_cli(capsys, ["difficulty", "--qrels", str(TOY_QRELS), "--dd-exponent-offset", "1", "--format", "json"])
    assert json.loads(out)[0]["dd"] == pytest.approx(0.8998, abs=P4)


def test_golbus_topic_86_through_the_cli(tmp_path: Path, capsys) -> None:
    """docs/metrics.md#alpha-ia-and-diversity-difficulty: R_T = 82, R = (78, 62, 60), xi = 1 -> dd 0.897; smr 0.087, 0.435, 0.478."""
    lines = [f"86 1 doc{d:03d} 1" for d in range(78)]
    lines += [f"86 2 doc{d:03d} 1" for d in list(range(58)) + list(range(78, 82))]
    lines += [f"86 3 doc{d:03d} 1" for d in list(range(56)) + list(range(78, 82))]
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("\n".join(lines) + "\n")
    status, out, _ = run_cli(capsys, ["difficulty", "--qrels", str(qrels)])
    row = pd.read_csv(StringIO(out), sep="\t").iloc[0]
    assert row.xi == 1 and row.dd == pytest.approx(0.897, abs=5e-4)
    smr = [float(x.split(":")[1]) for x in row.smr.split()]
    assert smr == pytest.approx([0.087, 0.435, 0.478], abs=5e-4)


def test_python_dash_m_evaluation_help() -> None:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    done = subprocess.run([sys.executable, "-m", "evaluation", "--help"], cwd=REPO, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0
    assert "score" in done.stdout and "metrics" in done.stdout and "difficulty" in done.stdout


def test_score_help_lists_its_options(capsys) -> None:
    """``score --help`` through the entry point ``python -m evaluation`` calls (the test above runs the module itself)."""
    status, out, _ = run_cli(capsys, ["score", "--help"])
    assert status == 0
    for option in (
        "--qrels",
        "--intents",
        "--topics",
        "--run",
        "--measures",
        "--order",
        "--per-topic",
        "--format",
        "-o",
        "--keep-intents",
        "--weights",
        "--binary",
    ):
        assert option in out, option


def test_python_dash_m_evaluation_score_error_status(tmp_path: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    bad = tmp_path / "bad.qrels"
    bad.write_text("T1 1 d1\n")
    done = subprocess.run(
        [sys.executable, "-m", "evaluation", "score", "--qrels", str(bad), "--run", str(bad), "--measures", "I-rec@5"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.strip().splitlines() == [f"error: {bad}:1: expected 4 columns (topic subtopic docid grade), found 3"]


# TESTS: per-subtopic scores (subtopic-level agreement) =============================================


def test_per_subtopic_scores_each_subtopic_alone(files, capsys) -> None:
    """--per-subtopic: topic '<topic>/<subtopic>' holds the metric on that subtopic alone (weight 1)."""
    status, out, _ = run_cli(capsys, score(files, "--measures", "I-rec@1", "I-rec@7", "D-nDCG@3", "--per-topic", "--per-subtopic"))
    assert status == 0
    frame = table(out)
    got = {(t, m): v for t, m, v in zip(frame["topic"], frame["measure"], frame["value"])}
    # T1 list d3 d6 d1 dX d2 d7 d5: d3 is relevant to intent 1 only, d5 (rank 7) is intent 3's first
    assert (got["T1/1", "I-rec@1"], got["T1/3", "I-rec@1"], got["T1/3", "I-rec@7"]) == (1.0, 0.0, 1.0)
    # intent 1 alone: gains 1, 0, 2 at ranks 1-3; ideal 2, 1, 1 (d1, d3, d7); discount 1/log2(r + 1)
    dcg, ideal = 1 + 2 / math.log2(4), 2 + 1 / math.log2(3) + 1 / math.log2(4)
    assert got["T1/1", "D-nDCG@3"] == pytest.approx(dcg / ideal, abs=1e-12)


@pytest.mark.parametrize(
    ("flags", "topics"),
    [
        (["--per-topic", "--per-subtopic"], ["T1", "T2", "T3", "T1/1", "T1/2", "T1/3", "T2/1", "all"]),
        (["--per-subtopic"], ["T1/1", "T1/2", "T1/3", "T2/1", "all"]),
        (["--per-topic"], ["T1", "T2", "T3", "all"]),
        ([], ["all"]),
    ],
)
def test_per_topic_and_per_subtopic_rows_combine(files, capsys, flags: list[str], topics: list[str]) -> None:
    """Each flag adds its own rows; per run come the topic rows, the subtopic rows, then the mean rows
    (topic 'all', always the mean over the topics, whatever the flags)."""
    status, out, _ = run_cli(capsys, score(files, "--measures", "I-rec@5", *flags, runs=("run", "other")))
    assert status == 0
    frame = table(out)
    assert list(dict.fromkeys(frame["run"])) == ["toy", "other"]
    for _, rows in frame.groupby("run", sort=False):
        assert list(rows["topic"]) == topics
    status, plain, _ = run_cli(capsys, score(files, "--measures", "I-rec@5", "--per-topic", runs=("run", "other")))
    by_topic = table(plain).set_index(["run", "topic"])["value"]
    combined = frame.set_index(["run", "topic"])["value"]
    for key in by_topic.index:
        if key in combined.index:  # topic rows and means are those of a plain --per-topic run
            assert combined[key] == pytest.approx(by_topic[key], nan_ok=True)


def test_per_subtopic_collection_keeps_judged_documents_and_weights_one() -> None:
    from evaluation import load_collection

    col = load_collection(TOY_QRELS, TOY_IPROB)
    split = col.per_subtopic()
    assert split.topic_ids == ["T1/1", "T1/2", "T1/3"]
    assert split.weights("T1/2") == {"2": 1.0}
    assert split.judged_documents("T1/3") == col.judged_documents("T1")  # d6, and documents of other intents stay judged
    assert split.relevant_documents("T1/3") == ["d4", "d5"]


def test_per_subtopic_scores_feed_subtopic_level_agreement(files, capsys) -> None:
    """The pipeline of docs/meta.md: score --per-subtopic, then meta agreement --level subtopic."""
    scores = files["dir"] / "sub.tsv"
    status, _, _ = run_cli(
        capsys, score(files, "--measures", "I-rec@1", "--per-topic", "--per-subtopic", "-o", str(scores), runs=("run", "other"))
    )
    assert status == 0
    prefs = files["dir"] / "prefs.tsv"
    # I-rec@1 per subtopic (run: d3 first, other: d1 first): T1/1 1 vs 1, T1/2 0 vs 1, T1/3 0 vs 0
    prefs.write_text("topic\trun_a\trun_b\tvalue\tlevel\tsubtopic\nT1\tother\ttoy\t-2\tsubtopic\t2\nT1\tother\ttoy\t3\tsubtopic\t1\n")
    out_path = files["dir"] / "agreement.tsv"
    status, _, err = run_cli(
        capsys, ["meta", "agreement", "--scores", str(scores), "--preferences", str(prefs), "--level", "subtopic", "-o", str(out_path)]
    )
    assert status == 0, err
    result = pd.read_csv(out_path, sep="\t")
    row = result[(result["statistic"] == "tau") & (result["subset"] == "all")].iloc[0]
    # T1/2: users prefer 'other' (run_a) and I-rec@1 does too (1 > 0): concordant; T1/1: metric tie -> tau counts 0
    assert row["n"] == 2 and row["value"] == pytest.approx(0.5)


def test_difficulty_options_dd_intents_and_smr_depth(tmp_path: Path, capsys) -> None:
    """docs/metrics.md#alpha-ia-and-diversity-difficulty: d_max = |I+|/|I| with --dd-intents listed (a 4th intent without relevant documents);
    smr at depth k = 1 is proportional to 1 - R_i/R_T (R_T = 6, R = (3, 3, 2) -> 0.3, 0.3, 0.4)."""
    iprob = tmp_path / "iprob"
    iprob.write_text(TOY_IPROB.read_text() + "T1 4 0.0 inf\n")
    argv = ["difficulty", "--qrels", str(TOY_QRELS), "--intents", str(iprob), "--dd-intents", "listed", "--smr-depth", "1"]
    status, out, _ = run_cli(capsys, argv)
    assert status == 0
    row = pd.read_csv(StringIO(out), sep="\t").iloc[0]
    d_mean = 1 - ((1 - 3 / 6) ** 2 + (1 - 3 / 6) ** 2 + (1 - 2 / 6) ** 2) / 3  # xi = 2
    assert row.d_max == pytest.approx(0.75) and row.d_mean == pytest.approx(d_mean)
    assert row.dd == pytest.approx(2 * 0.75 * d_mean / (0.75 + d_mean))
    assert row.smr == "1:0.3 2:0.3 3:0.4"


def test_one_warnings_printer_serves_both_command_lines(capsys) -> None:
    """Distinct user-facing warnings once each, on one line; other kinds (deprecations) are not printed."""
    import warnings

    from evaluation import cli
    from evaluation._argtypes import print_warnings
    from evaluation.meta import cli as meta_cli

    assert cli.print_warnings is print_warnings and meta_cli.print_warnings is print_warnings
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.warn("topic 7 has\n no relevant document", UserWarning, stacklevel=1)
        warnings.warn("topic 7 has no relevant   document", UserWarning, stacklevel=1)
        warnings.warn("old API", DeprecationWarning, stacklevel=1)
    print_warnings(caught)
    assert capsys.readouterr().err == "warning: topic 7 has no relevant document\n"


def test_discpower_on_a_per_subtopic_scores_file_counts_topics_only(files, capsys) -> None:
    """Subtopic rows '<topic>/<subtopic>' are read by subtopic-level agreement only: discpower over a
    `score --per-topic --per-subtopic` file sees the topics, the same as over a plain --per-topic file."""
    both, plain = files["dir"] / "both.tsv", files["dir"] / "plain.tsv"
    for path, flags in ((both, ["--per-topic", "--per-subtopic"]), (plain, ["--per-topic"])):
        status, _, _ = run_cli(capsys, score(files, "--measures", "I-rec@5", *flags, "-o", str(path), runs=("run", "other")))
        assert status == 0
    outputs = []
    for path in (both, plain):
        status, out, err = run_cli(capsys, ["meta", "discpower", "--scores", str(path), "--B", "200", "--seed", "3"])
        assert status == 0, err
        outputs.append(out)
    assert outputs[0] == outputs[1]


def test_evaluate_per_subtopic_matches_the_cli(files, capsys) -> None:
    from evaluation import evaluate, load_collection, read_run

    col = load_collection(files["qrels"], files["intents"])
    runs = [read_run(files["run"]), read_run(files["other"])]
    frame = evaluate(col, runs, ["I-rec@5", "D-nDCG@3"], per_topic=True, per_subtopic=True)
    status, out, _ = run_cli(
        capsys, score(files, "--measures", "I-rec@5", "D-nDCG@3", "--per-topic", "--per-subtopic", runs=("run", "other"))
    )
    assert status == 0
    cli = table(out)
    assert list(cli["topic"]) == list(frame["topic"]) and list(cli["run"]) == list(frame["run"])
    assert np.allclose(cli["value"].to_numpy(float), frame["value"].to_numpy(float), equal_nan=True, rtol=0, atol=1e-15)


def test_score_csv_is_spreadsheet_safe_and_reads_back(capsys, tmp_path) -> None:
    """docs/data-dictionary.md#spreadsheet-safe-csv promises it of every CSV table of the command line; score's CSV wrote
    a run named '=1+2' as a formula. read_scores (meta --scores) takes the escaped name back as it was."""
    run = tmp_path / "formula.run"
    run.write_text("T1 Q0 d1 1 2 =1+2\nT1 Q0 d2 2 1 =1+2\n")
    out = tmp_path / "scores.csv"
    status, _, err = run_cli(
        capsys, ["score", "--qrels", str(TOY_QRELS), "--run", str(run), "--measures", "alpha-nDCG@5", "--format", "csv", "-o", str(out)]
    )
    assert status == 0, err
    assert out.read_text().splitlines()[1].startswith("'=1+2,all,alpha-nDCG@5,")
    assert read_scores(out)["run"].tolist() == ["=1+2"]


def test_difficulty_json_keeps_every_digit(capsys) -> None:
    """pandas' to_json wrote 10 decimals (0.6687863722 for 0.6687863722202951); the JSON now equals the TSV."""
    argv = ["difficulty", "--qrels", str(TOY_QRELS)]
    status, tsv, err = run_cli(capsys, argv)
    assert status == 0, err
    status, out, err = run_cli(capsys, [*argv, "--format", "json"])
    assert status == 0, err
    exact = pd.read_csv(StringIO(tsv), sep="\t", dtype={"topic": str}, float_precision="round_trip")
    assert [r["d_mean"] for r in json.loads(out)] == exact["d_mean"].tolist()
