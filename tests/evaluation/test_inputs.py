"""The conversion layer (evaluation/io/inputs.py): evaluate() and score_matrix() give the same numbers
whether qrels and runs come as files, our objects, pandas DataFrames with ir_datasets/ir_measures
column names, pytrec_eval-style dicts or ir_measures' Qrel/ScoredDoc tuples; other inputs are clear
TypeErrors/ValueErrors."""

from __future__ import annotations

from collections import namedtuple
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evaluation import evaluate, load_collection, read_run, score_matrix
from evaluation.io.inputs import as_collection, as_runs
from evaluation.metrics import parse_measure

REF = Path(__file__).parent / "data" / "reference"
QRELS = REF / "trec2014" / "qrels.diversity.tsv"
RUNS = [REF / "runs" / "public" / "pub-greedyrr.run", REF / "runs" / "public" / "pub-mixed-ties.run"]
MEASURES = ["alpha-nDCG@10", "ERR-IA@20", "D#-nDCG@10", "I-rec@5", "NRBP", "P-IA@10"]
# ir_measures' named tuples, field for field (the real ones are used too when ir_measures is installed)
Qrel = namedtuple("Qrel", ["query_id", "doc_id", "relevance", "iteration"])
ScoredDoc = namedtuple("ScoredDoc", ["query_id", "doc_id", "score"])


def qrels_frame() -> pd.DataFrame:
    frame = pd.read_csv(QRELS, sep=r"\s+", header=None, names=["query_id", "iteration", "doc_id", "relevance"], dtype=str)
    frame["relevance"] = frame["relevance"].astype(int)
    return frame


def run_frame(path: Path) -> pd.DataFrame:
    frame = pd.read_csv(path, sep=r"\s+", header=None, names=["query_id", "Q0", "doc_id", "rank", "score", "run"], dtype={"query_id": str})
    return frame[["query_id", "doc_id", "score", "run"]]


def nested_qrels(frame: pd.DataFrame) -> dict:
    out: dict = {}
    for q, s, d, r in frame[["query_id", "iteration", "doc_id", "relevance"]].itertuples(index=False):
        out.setdefault(q, {}).setdefault(s, {})[d] = int(r)
    return out


def nested_run(frame: pd.DataFrame) -> dict:
    out: dict = {}
    for q, d, s in frame[["query_id", "doc_id", "score"]].itertuples(index=False):
        out.setdefault(q, {})[d] = float(s)
    return out


def input_kinds(qrel_type=Qrel, doc_type=ScoredDoc) -> dict[str, tuple]:
    q = qrels_frame()
    runs = [run_frame(p) for p in RUNS]
    names = [r["run"].iloc[0] for r in runs]
    return {
        "files": (str(QRELS), [str(p) for p in RUNS]),
        "objects": (load_collection(QRELS), [read_run(p) for p in RUNS]),
        "frames": (q, pd.concat(runs, ignore_index=True)),
        "frames by name": (q.drop(columns=[]), {n: r.drop(columns="run") for n, r in zip(names, runs, strict=True)}),
        "dicts": (nested_qrels(q), {n: nested_run(r) for n, r in zip(names, runs, strict=True)}),
        "tuples": (
            [qrel_type(*row) for row in q[["query_id", "doc_id", "relevance", "iteration"]].itertuples(index=False)],
            {
                n: [doc_type(*row) for row in r[["query_id", "doc_id", "score"]].itertuples(index=False)]
                for n, r in zip(names, runs, strict=True)
            },
        ),
    }


def test_every_input_kind_gives_the_same_scores() -> None:
    kinds = input_kinds()
    expected = evaluate(*kinds["objects"], MEASURES, per_topic=True)
    assert len(expected) > 100 and expected["value"].notna().all()
    for kind, (qrels, runs) in kinds.items():
        frame = evaluate(qrels, runs, MEASURES, per_topic=True)
        pd.testing.assert_frame_equal(frame, expected, obj=kind)
        matrix = score_matrix(qrels, runs, [parse_measure(m) for m in MEASURES])
        np.testing.assert_array_equal(matrix, score_matrix(*kinds["objects"], [parse_measure(m) for m in MEASURES]), err_msg=kind)


def test_the_real_ir_measures_tuples() -> None:
    ir_measures = pytest.importorskip("ir_measures", reason="ir_measures (a test-only dependency) is not installed")
    kinds = input_kinds(ir_measures.Qrel, ir_measures.ScoredDoc)
    pd.testing.assert_frame_equal(evaluate(*kinds["tuples"], MEASURES), evaluate(*kinds["objects"], MEASURES))


def test_single_runs_and_one_subtopic_qrels() -> None:
    """pytrec_eval's two-level qrels (one subtopic "0"), an unnamed run, identifiers that are numbers."""
    qrels = {"1": {"a": 1, "b": 0, "c": 2}, "2": {"x": 1}}
    run = {"1": {"a": 0.5, "c": 0.9, "z": 0.1}, "2": {"y": 1.0, "x": 0.5}}
    by_dict = evaluate(qrels, run, ["alpha-nDCG@3", "I-rec@3"], per_topic=True)
    frame = pd.DataFrame([(1, "a", 1), (1, "b", 0), (1, "c", 2), (2, "x", 1)], columns=["query_id", "doc_id", "relevance"])
    docs = [ScoredDoc(q, d, s) for q, ds in run.items() for d, s in ds.items()]
    pd.testing.assert_frame_equal(evaluate(frame, docs, ["alpha-nDCG@3", "I-rec@3"], per_topic=True), by_dict)
    assert set(by_dict["run"]) == {"run"}
    assert by_dict.query("topic == '2' and measure == 'I-rec@3'")["value"].item() == 1.0
    assert [r.name for r in as_runs([run, run])] == ["run1", "run2"]
    # plain (query_id, doc_id, score) tuples: one run, as ScoredDoc ones, also as a generator
    plain = [(q, d, s) for q, ds in run.items() for d, s in ds.items()]
    pd.testing.assert_frame_equal(evaluate(frame, plain, ["alpha-nDCG@3", "I-rec@3"], per_topic=True), by_dict)
    pd.testing.assert_frame_equal(evaluate(frame, iter(plain), ["alpha-nDCG@3", "I-rec@3"], per_topic=True), by_dict)
    assert [r.name for r in as_runs({"a": plain, "b": (row for row in plain)})] == ["a", "b"]
    assert as_collection(qrels).topics["1"].intent_ids == ["0"]


def test_wrong_kinds_are_clear_errors() -> None:
    qrels, runs = input_kinds()["objects"]
    with pytest.raises(TypeError, match=r"qrels must be a Collection, a qrels file path, a DataFrame .*; got int"):
        evaluate(42, runs, MEASURES)
    with pytest.raises(TypeError, match=r"runs must be a Run, a run file path, .*; got float"):
        evaluate(qrels, [runs[0], 1.5], MEASURES)
    with pytest.raises(TypeError, match=r"runs must be .*; got set"):
        evaluate(qrels, {"a": {"d1", "d2"}}, MEASURES)
    with pytest.raises(ValueError, match=r"qrels DataFrame lacks column relevance; has query_id, doc_id, grade"):
        evaluate(pd.DataFrame({"query_id": ["1"], "doc_id": ["d"], "grade": [1]}), runs, MEASURES)
    with pytest.raises(ValueError, match=r"run DataFrame lacks column score"):
        evaluate(qrels, pd.DataFrame({"query_id": ["1"], "doc_id": ["d"]}), MEASURES)
    with pytest.raises(ValueError, match=r"qrels row 0 \(query_id 1, doc_id d\): relevance 0.5 is not an integer"):
        evaluate(pd.DataFrame({"query_id": ["1"], "doc_id": ["d"], "relevance": [0.5]}), runs, MEASURES)
    with pytest.raises(ValueError, match=r"run row 0 \(query_id 251, doc_id d\): score 'high' is not a finite number"):
        evaluate(qrels, pd.DataFrame({"query_id": ["251"], "doc_id": ["d"], "score": ["high"]}), MEASURES)
    with pytest.raises(TypeError, match=r"query '1' maps to list"):
        as_collection({"1": ["a", "b"]})
