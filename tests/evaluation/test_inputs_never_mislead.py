"""Issue 35, inputs that never mislead: each input kind and each warning of docs/evaluation.md#python-api."""

from __future__ import annotations

import re
import warnings
from collections import namedtuple
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evaluation import (
    EvaluationError,
    EvaluationWarning,
    Run,
    evaluate,
    judgments_from_arrays,
    load_collection,
    read_run,
    runs_from_arrays,
    score_matrix,
)
from evaluation.engine import resolve_measures
from evaluation.exceptions import UnknownMetricError
from evaluation.io.inputs import as_runs

REF = Path(__file__).parent / "data" / "reference"
QRELS = REF / "trec2014" / "qrels.diversity.tsv"
PUBLIC = REF / "runs" / "public"
ScoredDoc = namedtuple("ScoredDoc", ["query_id", "doc_id", "score"])


@pytest.fixture(scope="module")
def collection():
    return load_collection(QRELS)


@pytest.fixture(scope="module")
def runs():
    return [read_run(PUBLIC / f"pub-{name}.run") for name in ("greedyrr", "noisyrel", "random")]


def quiet(function, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EvaluationWarning)
        return function(*args, **kwargs)


def test_a_run_dict_is_ranked_by_score_not_insertion_order(collection) -> None:
    """The issue's silent wrong answer: {nonrel: 3.0, rel: 1.0} ranks nonrel first whatever the order written."""
    topic = "251"
    rel = next(d for d, g in collection.judgments[topic].items() if any(v >= 1 for v in g.values()))
    nonrel = next(d for d, g in collection.judgments[topic].items() if not any(v >= 1 for v in g.values()))
    one = Run("x", {topic: {nonrel: 3.0, rel: 1.0}})
    other = Run("x", {topic: {rel: 1.0, nonrel: 3.0}})
    assert one.lists[topic] == other.lists[topic] == (nonrel, rel)
    assert Run("t", {topic: {"a": 1.0, "c": 1.0, "b": 2}}).lists[topic] == ("b", "c", "a")  # ties: docid descending
    values = [quiet(evaluate, collection, r, "alpha-nDCG@1", per_topic=True) for r in (one, other)]
    assert values[0].equals(values[1])
    assert values[0].query("topic == @topic")["value"].item() == 0.0


@pytest.mark.parametrize("score", [float("nan"), float("inf"), "high", True])
def test_a_run_dict_with_a_bad_score_names_run_topic_and_doc(score) -> None:
    with pytest.raises(EvaluationError, match=r"run x topic 251 doc d2: score .* is not a finite number"):
        Run("x", {"251": {"d1": 1.0, "d2": score}})


@pytest.mark.parametrize(("raw", "reason"), [("nan", "score must be finite, got 'nan'"), ("1e", "score must be a number, got '1e'")])
def test_a_run_file_with_a_bad_score_names_line_topic_and_doc(tmp_path, raw: str, reason: str) -> None:
    path = tmp_path / "bad.run"
    path.write_text(f"251 Q0 d1 1 2.0 x\n252 Q0 d7 1 {raw} x\n")
    with pytest.raises(EvaluationError) as caught:
        read_run(path)
    assert str(caught.value) == f"{path}:2: {reason} (topic 252, doc d7)"


def test_a_dataframe_row_is_named_by_its_index_label(collection) -> None:
    """Not ``run row np.int64(20)``: the label as the user wrote it."""
    frame = pd.DataFrame({"query_id": ["251", "251"], "doc_id": ["d1", "d2"], "score": [2.0, float("nan")]}, index=[10, 20])
    with pytest.raises(ValueError, match=r"^run row 20 \(query_id 251, doc_id d2\): score nan is not a finite number$"):
        evaluate(collection, frame, "P@10")
    qrels = pd.DataFrame({"query_id": ["1"], "doc_id": ["d"], "relevance": [0.5]}, index=pd.Index([7], dtype="int64"))
    with pytest.raises(ValueError, match=r"^qrels row 7 \(query_id 1, doc_id d\): relevance 0.5 is not an integer$"):
        evaluate(qrels, frame, "P@10")


def test_run_dataframe_round_trip_and_save(tmp_path, runs) -> None:
    run = runs[0]
    frame = run.to_dataframe()
    assert list(frame.columns) == ["query_id", "doc_id", "rank", "score", "run"]
    back = Run.from_df(frame)
    assert back.name == run.name and dict(back.lists) == dict(run.lists)
    assert Run.from_df(frame[["query_id", "doc_id", "score"]], name="renamed").name == "renamed"
    run.save(tmp_path / "saved.run")
    again = read_run(tmp_path / "saved.run")
    assert again.name == run.name and dict(again.lists) == dict(run.lists)
    with pytest.raises(EvaluationError, match="holds 2 runs"):
        Run.from_df(pd.concat([frame, runs[1].to_dataframe()]))


@pytest.mark.parametrize(
    ("name", "lists", "field"),
    [
        ("my run", {"1": ("a",)}, "run name 'my run'"),
        ("r", {"1 2": ("a",)}, "topic '1 2'"),
        ("r", {"#1": ("a",)}, "topic '#1'"),
        ("r", {"1": ("a", "d\t2")}, "docid 'd\\t2'"),
        ("r", {"1": ("",)}, "docid ''"),
    ],
)
def test_save_refuses_what_a_run_file_cannot_hold(tmp_path, name: str, lists: dict, field: str) -> None:
    """Not a file that reads back as another run (or not at all): an error naming the field, no file."""
    path = tmp_path / "out.run"
    with pytest.raises(EvaluationError, match=f"^cannot save the run: {re.escape(field)} cannot be a field"):
        Run(name, lists).save(path)
    assert not path.exists()


@pytest.mark.parametrize(
    ("name", "lists", "field"),
    [("r\udc80", {"1": ("a",)}, "run name 'r\\udc80'"), ("r", {"1": ("ok", "d\ud800")}, "docid 'd\\ud800'")],
)
def test_save_refuses_text_utf8_cannot_hold(tmp_path, name: str, lists: dict, field: str) -> None:
    """A lone surrogate (a docid decoded with errors='surrogateescape') was a bare UnicodeEncodeError naming nothing."""
    path = tmp_path / "out.run"
    with pytest.raises(EvaluationError, match=f"^cannot save the run: {re.escape(field)} cannot be written in UTF-8"):
        Run(name, lists).save(path)
    assert not path.exists()


def test_save_round_trips_unicode(tmp_path) -> None:
    """Docids, topics and the run name outside ASCII (CJK, combining marks, emoji, a zero-width space) read back alike."""
    run = Run("日本語run", {"t\u00fc": {"文書ü": 3.0, "e\u0301": 2.0, "\U0001f600": 1.0}, "2": ["zw\u200bx", "\u00df"]})
    run.save(tmp_path / "u.run")
    back = read_run(tmp_path / "u.run")
    assert back.name == run.name and dict(back.lists) == dict(run.lists)


def test_save_into_a_missing_folder_names_the_file_asked_for(tmp_path) -> None:
    """It named the temporary file beside it (No such file or directory: '.../.x.run.rpg38beq.tmp')."""
    path = tmp_path / "missing" / "x.run"
    with pytest.raises(FileNotFoundError) as caught:
        Run("r", {"1": ("a",)}).save(path)
    assert caught.value.filename == str(path) and str(path) in str(caught.value)


def test_save_leaves_out_topics_with_an_empty_list(tmp_path) -> None:
    path = tmp_path / "out.run"
    Run("r", {"1": (), "2": ("b", "a")}).save(path)
    assert dict(read_run(path).lists) == {"2": ("b", "a")}


def test_from_df_takes_other_column_names_as_ranx_does() -> None:
    """PyTerrier's qid/docno, ranx's q_id: named with ranx's keywords; without them the error says how."""
    frame = pd.DataFrame({"qid": ["1", "1", "2"], "docno": ["a", "b", "c"], "query_id": ["x", "x", "x"], "s": [1.0, 2.0, 1.0]})
    run = Run.from_df(frame, "bm25", q_id_col="qid", doc_id_col="docno", score_col="s")
    assert run.name == "bm25" and dict(run.lists) == {"1": ("b", "a"), "2": ("c",)}  # the frame's own query_id column set aside
    with pytest.raises(
        ValueError, match=r"^run DataFrame lacks columns doc_id, score; has qid, docno, query_id, s \(name yours with q_id_col="
    ):
        Run.from_df(frame)
    with pytest.raises(ValueError, match=r"^run DataFrame lacks column sc; has"):
        Run.from_df(frame, q_id_col="qid", doc_id_col="docno", score_col="sc")


def test_a_list_of_dataframes_is_a_list_of_runs(collection, runs) -> None:
    frames = [r.to_dataframe() for r in runs]
    expected = quiet(evaluate, collection, runs, ["alpha-nDCG@10", "ERR-IA@20"])
    got = quiet(evaluate, collection, frames, ["alpha-nDCG@10", "ERR-IA@20"])
    pd.testing.assert_frame_equal(got, expected)


def test_lazy_inputs_give_the_same_scores_and_are_read_run_by_run(collection, runs, tmp_path) -> None:
    measures = resolve_measures(["alpha-nDCG@10", "NRBP"])
    expected = quiet(score_matrix, collection, runs, measures)
    taken = []

    def generator():
        for run in runs:
            taken.append(run.name)
            yield run

    seen = []
    assert np.array_equal(quiet(score_matrix, collection, generator(), measures, on_run=lambda r: seen.append(len(taken))), expected)
    assert seen == [1, 2, 3]  # each run taken only when the engine asked for it

    def rows(run):
        frame = run.to_dataframe()
        for q, d, s in zip(frame["query_id"], frame["doc_id"], frame["score"]):
            yield ScoredDoc(q, d, s)

    lazy = {run.name: rows(run) for run in runs}
    assert np.array_equal(quiet(score_matrix, collection, lazy, measures), expected)
    plain = {run.name: ((q, d, s) for q, d, s in zip(*[run.to_dataframe()[c] for c in ("query_id", "doc_id", "score")])) for run in runs}
    assert np.array_equal(quiet(score_matrix, collection, plain, measures), expected)
    for n, run in enumerate(runs):
        run.save(tmp_path / f"{n}.run")
    (tmp_path / ".hidden").write_text("not a run")
    assert np.array_equal(quiet(score_matrix, collection, tmp_path, measures), expected)
    frame = quiet(evaluate, collection, str(tmp_path), measures)
    assert frame["run"].unique().tolist() == [r.name for r in runs]
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(EvaluationError, match="a directory without run files"):
        evaluate(collection, empty, measures)


def test_a_name_given_twice_in_a_stream_is_an_error(collection, runs) -> None:
    with pytest.raises(EvaluationError, match=f"run name given twice: {runs[0].name}"):
        evaluate(collection, (Run(r.name, r.lists) for r in [runs[0], runs[1], runs[0]]), "alpha-nDCG@10")  # not read from a file


def test_two_run_files_with_one_tag_are_named_in_the_error(collection, runs, tmp_path) -> None:
    """Copies of one system's run file keep its tag: the error names both files, not only the tag."""
    first, second = tmp_path / "bm25-k1.run", tmp_path / "bm25-k2.run"
    runs[0].save(first)
    Run(runs[0].name, runs[1].lists).save(second)
    message = f"run name given twice: {runs[0].name}, the tag column of both {first} and {second} (a run file is named by its tag"
    for given in ([first, second], str(tmp_path)):
        with pytest.raises(EvaluationError, match=re.escape(message)):
            evaluate(collection, given, "alpha-nDCG@10")
    with pytest.raises(EvaluationError, match=re.escape(f"run file given twice: {first} (as {first} and {tmp_path}/./{first.name})")):
        evaluate(collection, [first, f"{tmp_path}/./{first.name}"], "alpha-nDCG@10")
    with pytest.raises(EvaluationError, match=f"^run file given twice: {re.escape(str(first))}$"):
        evaluate(collection, [first, first], "alpha-nDCG@10")


def test_measures_as_one_string_our_objects_and_ir_measures_objects() -> None:
    assert [m.label for m in resolve_measures("alpha-nDCG@10")] == ["alpha-nDCG@10"]
    ir_measures = pytest.importorskip("ir_measures")
    got = resolve_measures([ir_measures.parse_measure("alpha_nDCG@20"), ir_measures.ERR_IA @ 10, "D#-nDCG@10"])
    assert [m.canonical() for m in got] == [m.canonical() for m in resolve_measures(["alpha-nDCG@20", "ERR-IA@10", "D#-nDCG@10"])]
    # ir_measures' trec_eval measures are ours (docs/metrics.md#trec_eval-measures); its ERR is not
    got = resolve_measures([ir_measures.nDCG @ 20, ir_measures.P(rel=2) @ 10, ir_measures.AP @ 10, ir_measures.RR])
    assert [m.canonical() for m in got] == ["nDCG@20", "P(rel=2)@10", "AP(ap_norm=R)@10", "RR"]
    assert [m.label for m in got] == ["nDCG@20", "P(rel=2)@10", "AP@10", "RR"]
    with pytest.raises(UnknownMetricError, match=r"compute it with ir_measures itself \(this package's ERR is NTCIREVAL's"):
        resolve_measures(ir_measures.ERR @ 20)
    with pytest.raises(UnknownMetricError, match=r"compute it with ir_measures itself \(this package's nDCG takes log2"):
        resolve_measures(ir_measures.nDCG(dcg="exp-log2") @ 20)
    with pytest.raises(UnknownMetricError) as caught:  # no word about ERR and RBP where they are not the question
        resolve_measures(ir_measures.Rprec)
    assert (
        str(caught.value)
        == "Rprec is ir_measures' (trec_eval's or gdeval's) Rprec, which this package does not define: compute it with ir_measures itself"
    )


@pytest.mark.parametrize(
    ("name", "ours"),
    [
        ("P@10", "P@10"),
        ("P_10", "P@10"),
        ("RR", "RR"),
        ("MRR@10", "RR@10"),
        ("recip_rank", "RR"),
        ("R@100", "R@100"),
        ("recall_100", "R@100"),
        ("Judged@10", "Judged@10"),
        ("ndcg_cut.20", "nDCG@20"),
        ("ndcg_cut_20", "nDCG@20"),
        ("ndcg", "nDCG"),
        ("map", "AP"),
        ("AP", "AP"),
        ("map_cut_10", "AP(ap_norm=R)@10"),
    ],
)
def test_trec_eval_ad_hoc_names_are_accepted(name: str, ours: str, collection, runs) -> None:
    """Values: tests/evaluation/metrics/test_trec_eval_measures.py (against pytrec_eval and ir_measures)."""
    assert [m.canonical() for m in resolve_measures(name)] == [ours]
    frame = evaluate(collection, runs[:2], name)
    assert list(frame.measure.unique()) == [name] and frame.value.notna().all()


def test_comma_separated_measures_say_what_to_do() -> None:
    with pytest.raises(UnknownMetricError, match=r"looks like several measures; give one per string"):
        resolve_measures("alpha-nDCG@10,ERR-IA@20")
    assert resolve_measures("alpha-nDCG(alpha=0.3,rel=1)@10")[0].params["alpha"] == 0.3  # a comma inside parentheses is fine


@pytest.mark.parametrize("given", ["alpha-nDCG@10 ERR-IA@20", "alpha-nDCG@10  ERR-IA@20", "alpha-nDCG@10, ERR-IA@20"])
def test_blank_separated_measures_in_one_string_say_what_to_do(given: str) -> None:
    """Not 'cannot parse measure': the hint names the two measures the string holds."""
    with pytest.raises(UnknownMetricError, match=r"looks like several measures.*\['alpha-nDCG@10', 'ERR-IA@20'\]"):
        resolve_measures(given)
    (measure,) = resolve_measures("RBU(p=0.99, e=0.05)")  # a blank inside parentheses is one measure
    assert measure.params["p"] == 0.99 and measure.params["e"] == 0.05


def test_topic_mismatches_warn_or_raise(collection, runs) -> None:
    partial = Run("partial", {t: runs[0].lists[t] for t in list(runs[0].lists)[:48]} | {"999": ("x",)})
    with pytest.warns(EvaluationWarning) as caught:
        frame = evaluate(collection, [runs[0], partial], "alpha-nDCG@10")
    messages = [str(w.message) for w in caught]
    missing = [t for t in collection.topic_ids if t not in partial.lists]
    assert (
        f"qrels topics missing from run partial (2: {', '.join(missing)}): scored 0"
        " (topic_set='run_and_qrels' leaves them out; on_topic_mismatch='error' makes this an error)" in messages
    )
    assert "run topic missing from the qrels, not scored: run partial (1: 999) (on_topic_mismatch='error' makes this an error)" in messages
    assert frame.query("run == 'partial'")["value"].item() < frame.query(f"run == '{runs[0].name}'")["value"].item()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        evaluate(collection, [runs[0], partial], "alpha-nDCG@10", on_topic_mismatch="ignore")
    with pytest.raises(EvaluationError, match=r"qrels topics missing from run partial .*on_topic_mismatch='error'"):
        evaluate(collection, [runs[0], partial], "alpha-nDCG@10", on_topic_mismatch="error")
    with pytest.warns(EvaluationWarning) as caught:  # run_and_qrels leaves missing topics out: nothing to say about them
        evaluate(collection, [partial], "alpha-nDCG@10", topic_set="run_and_qrels")
    assert [str(w.message).split(":")[0] for w in caught] == ["run topic missing from the qrels, not scored"]
    with pytest.raises(ValueError, match="on_topic_mismatch must be"):
        evaluate(collection, [partial], "alpha-nDCG@10", on_topic_mismatch="loud")


def test_a_topic_without_relevant_documents_is_not_reported_as_scored_0_when_a_run_lacks_it() -> None:
    """Topic 3 has no relevant document: NaN and left out of the means whatever a run lists, so a run
    lacking it is not 'scored 0' on it; with empty_topic='zero' it is scored 0 and both warnings hold."""
    qrels = {"1": {"a": 1, "b": 0}, "2": {"c": 1}, "3": {"d": 0}}
    run = {"1": {"a": 2.0, "b": 1.0}, "2": {"x": 1.0}}
    with pytest.warns(EvaluationWarning) as caught:
        frame = evaluate(qrels, {"r": run}, "P@1", per_topic=True)
    assert [str(w.message) for w in caught] == ["topic 3 without any relevant document: scored NaN and excluded from means"]
    assert frame.query("topic == 'all'")["value"].item() == 0.5
    with pytest.warns(EvaluationWarning) as caught:
        frame = evaluate(qrels, {"r": run}, "P@1", empty_topic="zero")
    assert [str(w.message).split(":")[0] for w in caught] == ["qrels topic missing from run r (1", "topic 3 without any relevant document"]
    assert frame["value"].item() == pytest.approx(1 / 3)
    with pytest.raises(EvaluationError, match=r"qrels topics missing from run r \(2: 2, 3\)"):
        evaluate(qrels, {"r": {"1": {"a": 1.0}}}, "P@1", empty_topic="zero", on_topic_mismatch="error")
    with pytest.warns(EvaluationWarning, match="topic 3 without any relevant document"):  # nothing scored 0: no error
        evaluate(qrels, {"r": {"1": {"a": 1.0}, "2": {"c": 1.0}}}, "P@1", on_topic_mismatch="error")


def test_negative_grades_are_judged_nonrelevant_in_every_input_kind(runs) -> None:
    """docs/metrics.md#grades-and-gains: a negative grade (TREC's spam -2) is judged nonrelevant, stored as 0."""
    qrels = {"251": {"d1": 1, "d2": -2, "d3": -1, "d4": 0}}
    as_zero = {"251": {"d1": 1, "d2": 0, "d3": 0, "d4": 0}}
    run = {"251": {"d2": 4.0, "d3": 3.0, "d5": 2.5, "d1": 2.0}}
    measures = ["alpha-nDCG@4", "alpha-nDCG'@4"]  # the condensed list keeps judged documents: d2, d3 stay
    pd.testing.assert_frame_equal(evaluate(qrels, run, measures, per_topic=True), evaluate(as_zero, run, measures, per_topic=True))
    frame = pd.DataFrame({"query_id": ["251"] * 4, "doc_id": ["d1", "d2", "d3", "d4"], "relevance": [1, -2, -1, 0]})
    pd.testing.assert_frame_equal(evaluate(frame, run, measures), evaluate(as_zero, run, measures))
    condensed = evaluate(qrels, run, ["alpha-nDCG'@4"], per_topic=True).query("topic == '251'")["value"].item()
    plain = evaluate(qrels, run, ["alpha-nDCG@4"], per_topic=True).query("topic == '251'")["value"].item()
    assert condensed < 1.0 and condensed > plain  # d5 (unjudged) dropped, d2 and d3 (judged, grade < 0) kept


def test_as_runs_of_a_generator_of_scored_docs_is_one_run() -> None:
    docs = (ScoredDoc("1", f"d{n}", float(n)) for n in range(3))
    (run,) = as_runs(docs)
    assert run.name == "run" and run.lists["1"] == ("d2", "d1", "d0")


def test_a_missing_identifier_is_named_by_its_row_or_line(collection) -> None:
    """A None or NaN query_id, doc_id or run in a DataFrame names its row label (as a bad score does);
    the array builders name the line (counted from 0, as their score errors), never a line 'of its chunk'."""
    frame = pd.DataFrame({"query_id": ["251", "251", "252"], "doc_id": ["d1", "d2", "d3"], "score": [3.0, 2.0, 1.0]}, index=[100, 101, 102])
    for column, row in (("doc_id", 101), ("query_id", 102)):
        bad = frame.copy()
        bad[column] = bad[column].astype(object)
        bad.loc[row, column] = None if column == "doc_id" else float("nan")
        with pytest.raises(ValueError, match=rf"^run row {row} \(query_id .*, doc_id .*\): {column} is missing$"):
            evaluate(collection, bad, "P@10")
    qrels = pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", None], "relevance": [1, 2]}, index=[5, 6])
    with pytest.raises(ValueError, match=r"^qrels row 6 \(query_id 1, doc_id (None|nan)\): doc_id is missing$"):
        evaluate(qrels, frame, "P@10")
    with pytest.raises(EvaluationError, match=r"^line 2 \(run r topic None doc c\): every run line needs a run name, a topic and a docid$"):
        runs_from_arrays(["r", "r", "r"], ["1", "1", None], ["a", "b", "c"], [3.0, 2.0, 1.0])
    with pytest.raises(EvaluationError, match=r"^line 1 \(topic None doc b\): every judgment needs a topic and a docid$"):
        judgments_from_arrays(["1", None], ["1", "1"], ["a", "b"], [1, 1])


def test_a_measure_undefined_on_every_topic_is_warned_about(tmp_path) -> None:
    """PMP without intent weights (all equal): NaN on every topic and a NaN mean, said rather than silent."""
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("1 1 a 1\n1 2 b 1\n2 1 c 1\n2 2 d 1\n")
    run = {"1": {"a": 2.0, "b": 1.0}, "2": {"c": 1.0}}
    with pytest.warns(EvaluationWarning, match=r"^measure PMP@10 is NaN on every topic, so is its mean \(PMP: .*pmp_equal=tie"):
        frame = evaluate(qrels, run, ["PMP@10", "P@10"])
    assert np.isnan(frame["value"].iloc[0]) and frame["value"].iloc[1] == pytest.approx(0.15)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        evaluate(qrels, run, ["PMP(pmp_equal=tie)@10", "P@10"])


def test_one_measure_string_with_per_subtopic(collection, runs) -> None:
    """per_subtopic=True took a single measure string letter by letter ("unknown metric 'a'")."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EvaluationWarning)
        one = evaluate(collection, runs[:1], "alpha-nDCG@10", per_subtopic=True)
        listed = evaluate(collection, runs[:1], ["alpha-nDCG@10"], per_subtopic=True)
    assert one.equals(listed) and "251/1" in set(one["topic"])


def test_score_matrix_takes_the_measures_evaluate_takes(collection, runs) -> None:
    """One string, a list of strings, ir_measures objects (as evaluate takes them), not only parsed Measures:
    a string raised AttributeError ('str' object has no attribute 'cutoff')."""
    parsed = score_matrix(collection, runs[:2], resolve_measures(["alpha-nDCG@10", "P@10"]))
    assert np.array_equal(score_matrix(collection, runs[:2], ["alpha-nDCG@10", "P@10"]), parsed, equal_nan=True)
    assert np.array_equal(score_matrix(collection, runs[:2], "alpha-nDCG@10"), parsed[:1], equal_nan=True)
    ir_measures = pytest.importorskip("ir_measures")
    assert np.array_equal(score_matrix(collection, runs[:2], [ir_measures.alpha_nDCG @ 10, ir_measures.P @ 10]), parsed, equal_nan=True)


def test_warnings_point_at_the_callers_line_whatever_the_path(collection, runs, tmp_path) -> None:
    """A warning names the line of the user's call (as Python shows it: file:line), not a line inside this package,
    also through compare(), per_subtopic and a run file read as it is scored."""
    from evaluation import compare

    partial = Run("partial", {t: runs[0].lists[t] for t in list(runs[0].lists)[:3]})
    twice = tmp_path / "twice.run"
    twice.write_text("251 Q0 d1 1 2 t\n251 Q0 d1 2 1 t\n")
    calls = [
        lambda: evaluate(collection, [runs[0], partial], "alpha-nDCG@10"),
        lambda: evaluate(collection, [runs[0], partial], "alpha-nDCG@10", per_subtopic=True),
        lambda: compare(collection, [runs[0], partial], "alpha-nDCG@10"),
        lambda: evaluate(collection, [str(twice)], "alpha-nDCG@10", on_topic_mismatch="ignore"),
    ]
    for call in calls:
        with pytest.warns(EvaluationWarning) as caught:
            call()
        assert {Path(w.filename).name for w in caught} == {Path(__file__).name}, [(w.filename, str(w.message)) for w in caught]


def test_a_ranked_list_naming_a_docid_twice_names_it_and_says_what_to_do() -> None:
    """The error pointed to dedupe_ranked(), which the package does not export or document."""
    with pytest.raises(EvaluationError) as caught:
        Run("x", {"251": ["d3", "d1", "d3", "d9", "d1"]})
    assert str(caught.value) == (
        "run x topic 251: docids d3, d1 listed twice (each document once; to keep first occurrences: list(dict.fromkeys(docids)))"
    )


@pytest.mark.parametrize("per_subtopic", [False, True])
def test_a_measure_asked_twice_is_one_set_of_rows(collection, runs, per_subtopic: bool) -> None:
    """``--measures X X`` wrote every row twice, which ``meta --scores`` then refused as a repeated key."""
    twice = quiet(evaluate, collection, runs[:2], ["ERR-IA@20", "alpha-nDCG@10", "ERR-IA@20"], per_subtopic=per_subtopic)
    once = quiet(evaluate, collection, runs[:2], ["ERR-IA@20", "alpha-nDCG@10"], per_subtopic=per_subtopic)
    assert twice.equals(once)
    assert list(dict.fromkeys(twice["measure"])) == ["ERR-IA@20", "alpha-nDCG@10"]
    assert not twice.duplicated(["run", "topic", "measure"]).any()
    # the same measure under another spelling keeps the spelling asked for, once each
    spelled = quiet(evaluate, collection, runs[:1], ["alpha-nDCG@10", "alpha-nDCG(alpha=0.5)@10"], per_subtopic=per_subtopic)
    assert set(spelled["measure"]) == {"alpha-nDCG@10", "alpha-nDCG(alpha=0.5)@10"}


def test_score_writes_a_measure_asked_twice_once(tmp_path) -> None:
    from evaluation.cli import main

    out = tmp_path / "scores.tsv"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EvaluationWarning)
        code = main(["score", "--qrels", str(QRELS), "--run", str(PUBLIC / "pub-greedyrr.run"), "--per-topic",
                     "--measures", "alpha-nDCG@10", "alpha-nDCG@10,ERR-IA@20", "-o", str(out)])  # fmt: skip
    assert code == 0
    table = pd.read_csv(out, sep="\t", dtype={"topic": str})
    assert not table.duplicated(["run", "topic", "measure"]).any()
    assert sorted(set(table["measure"])) == ["ERR-IA@20", "alpha-nDCG@10"]
