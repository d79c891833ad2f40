"""trec_eval's ad hoc measures (docs/metrics.md#trec_eval-measures) against pytrec_eval and ir_measures
(test-only oracles) on the TREC 2014 diversity qrels and the eight public runs, per topic and in the mean.

The oracles get the ad hoc view of the qrels our metrics take: one grade per judged document, its highest
grade over the subtopics (negative grades read as 0, docs/metrics.md#grades-and-gains), and the run files'
own scores, which they order as trec_eval does (score descending, ties by docid descending), as our
default run order does.
"""

from __future__ import annotations

import re
from collections import defaultdict
from functools import cache
from pathlib import Path

import ir_measures
import numpy as np
import pandas as pd
import pytest
import pytrec_eval

from evaluation import evaluate, load_collection, read_run
from evaluation.collection import Collection
from evaluation.exceptions import UnknownMetricError
from evaluation.metrics import parse_measure
from tests.evaluation.golden import REFERENCE

TOL = 1e-12
RUN_FILES = sorted((REFERENCE / "runs" / "public").glob("*.run"))

# our measure -> (pytrec_eval's measure key, its relevance_level)
PYTREC = {
    "P@5": ("P_5", 1),
    "P@10": ("P_10", 1),
    "P@20": ("P_20", 1),
    "P(rel=2)@10": ("P_10", 2),
    "R@10": ("recall_10", 1),
    "R@100": ("recall_100", 1),
    "R(rel=2)@100": ("recall_100", 2),
    "RR": ("recip_rank", 1),
    "RR(rel=2)": ("recip_rank", 2),
    "RR@1000": ("recip_rank", 1),  # deeper than every list: the whole list
    "AP": ("map", 1),
    "AP(rel=2)": ("map", 2),
    "AP(ap_norm=R,rel=2)@20": ("map_cut_20", 2),
    "AP(ap_norm=R)@10": ("map_cut_10", 1),
    "AP(ap_norm=R)@100": ("map_cut_100", 1),
    "nDCG": ("ndcg", 1),
    "nDCG@10": ("ndcg_cut_10", 1),
    "nDCG@20": ("ndcg_cut_20", 1),
    "Success@5": ("success_5", 1),
    "Success(rel=3)@10": ("success_10", 3),
}
# trec_eval's spellings -> ours
SPELLINGS = {
    "P_10": "P@10",
    "P.10": "P@10",
    "recall_100": "R@100",
    "recip_rank": "RR",
    "map": "AP",
    "map_cut_10": "AP(ap_norm=R)@10",
    "ndcg": "nDCG",
    "ndcg_cut_20": "nDCG@20",
    "ndcg_cut.20": "nDCG@20",
    "success_5": "Success@5",
    "MRR@10": "RR@10",
    "MAP": "AP",
}
# ir_measures' names -> ours (ir_measures: the user's spelling of the same measure)
IR_MEASURES = {
    "P@10": "P@10",
    "P(rel=2)@10": "P(rel=2)@10",
    "R@100": "R@100",
    "RR": "RR",
    "RR@10": "RR@10",
    "MRR@10": "RR@10",
    "AP": "AP",
    "AP@10": "AP(ap_norm=R)@10",
    "AP(rel=2)": "AP(rel=2)",
    "nDCG": "nDCG",
    "nDCG@20": "nDCG@20",
    "Judged@10": "Judged@10",
    "Judged@20": "Judged@20",
    "Success@5": "Success@5",
    # judged_only: trec_eval's -J, our condensed list
    "P(judged_only=True)@10": "P'@10",
    "AP(judged_only=True)": "AP'",
    "nDCG(judged_only=True)@20": "nDCG'@20",
    "RR(judged_only=True)": "RR'",
}


@cache
def data() -> tuple[Collection, dict[str, dict[str, int]], dict[str, dict[str, dict[str, float]]]]:
    """Our collection, the oracles' qrels (max grade per document) and runs (file scores)."""
    collection = load_collection(REFERENCE / "trec2014" / "qrels.diversity.tsv")
    qrels = {t: {d: max(g.values(), default=0) for d, g in docs.items()} for t, docs in collection.judgments.items()}
    runs: dict[str, dict[str, dict[str, float]]] = {}
    for path in RUN_FILES:
        run: dict[str, dict[str, float]] = defaultdict(dict)
        for line in path.read_text().splitlines():
            topic, _, doc, _, score, _ = line.split()
            run[topic].setdefault(doc, float(score))
        runs[path.stem] = dict(run)
    return collection, qrels, runs


@cache
def ours(measures: tuple[str, ...], order: str = "score") -> pd.DataFrame:
    collection, _, _ = data()
    runs = [read_run(path, order=order) for path in RUN_FILES]
    frame = evaluate(collection, runs, list(measures), per_topic=True, topic_set="run_and_qrels", on_topic_mismatch="ignore")
    return frame.set_index(["run", "topic", "measure"])["value"]


def _compare(got: pd.Series, measure: str, run: str, expected: dict[str, float]) -> None:
    """Every topic of ``expected`` (the oracle's: topics in the run and the qrels) and the mean over them."""
    for topic, want in expected.items():
        assert got[(run, topic, measure)] == pytest.approx(want, abs=TOL), (measure, run, topic)
    assert got[(run, "all", measure)] == pytest.approx(np.mean(list(expected.values())), abs=TOL), (measure, run)


def test_the_data_hold_the_hard_cases() -> None:
    """Ties in scores, several subtopics per document with different grades, unjudged documents, grade 0 judged."""
    collection, qrels, runs = data()
    judgments = collection.judgments
    assert any(len(set(g.values())) > 1 for docs in judgments.values() for g in docs.values())
    assert any(g == 0 for docs in qrels.values() for g in docs.values())
    tied = [run for run, topics in runs.items() if any(len(set(s.values())) < len(s) for s in topics.values())]
    assert tied
    assert any(d not in qrels.get(t, {}) for topics in runs.values() for t, s in topics.items() for d in s)
    # every topic the runs and the qrels share has a relevant document (else ours is NaN, trec_eval's 0)
    assert all(any(g >= 1 for g in qrels[t].values()) for topics in runs.values() for t in topics if t in qrels)


@pytest.mark.parametrize("measure", sorted(PYTREC))
def test_equals_pytrec_eval_per_topic_and_mean(measure: str) -> None:
    key, level = PYTREC[measure]
    _, qrels, runs = data()
    got = ours(tuple(PYTREC))
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {key.rsplit("_", 1)[0] if key[-1].isdigit() else key}, relevance_level=level)
    for run, scores in runs.items():
        expected = {t: values[key] for t, values in evaluator.evaluate({t: s for t, s in scores.items() if t in qrels}).items()}
        assert expected
        _compare(got, measure, run, expected)


@pytest.mark.parametrize("spelling", sorted(SPELLINGS))
def test_trec_eval_spellings_are_the_same_measure(spelling: str) -> None:
    assert parse_measure(spelling).canonical() == parse_measure(SPELLINGS[spelling]).canonical()
    assert parse_measure(spelling).label == spelling  # output keeps the requested spelling
    got = ours((spelling, SPELLINGS[spelling]))
    for run in data()[2]:
        a, b = got.xs(spelling, level="measure").loc[run], got.xs(SPELLINGS[spelling], level="measure").loc[run]
        assert np.array_equal(a.to_numpy(), b.to_numpy(), equal_nan=True)


@pytest.mark.parametrize("name", sorted(IR_MEASURES))
def test_equals_ir_measures_per_topic_and_mean_and_takes_its_measure_objects(name: str) -> None:
    """ir_measures' value for its measure object; our value for the object itself and for our spelling.
    ir_measures' Judged and RR@k (its judged and msmarco providers; RR without a cutoff is pytrec_eval's)
    break score ties by docid ascending, so they are compared on runs read with that order (``order="pyndeval"``)."""
    _, qrels, runs = data()
    measure = ir_measures.parse_measure(name)
    order = "pyndeval" if name.startswith("Judged") or "RR@" in name else "score"
    got = ours((IR_MEASURES[name], measure) if str(measure) != IR_MEASURES[name] else (measure,), order)
    for run, scores in runs.items():
        shared = {t: s for t, s in scores.items() if t in qrels}
        expected = {m.query_id: m.value for m in ir_measures.iter_calc([measure], qrels, shared) if m.query_id in shared}
        assert set(expected) == set(shared)  # (ir_measures adds 0 for the qrels' other topics in some providers)
        _compare(got, IR_MEASURES[name], run, expected)
        _compare(got, str(measure), run, expected)


def test_judged_counts_grade_zero_and_ignores_the_missing_tail() -> None:
    """Judged@k: judged documents at any grade (0 included) over min(k, list length)."""
    collection, qrels, _ = data()
    topic = next(t for t, docs in qrels.items() if sum(g == 0 for g in docs.values()) >= 2 and sum(g >= 1 for g in docs.values()) >= 1)
    zero = [d for d, g in qrels[topic].items() if g == 0][:2]
    rel = next(d for d, g in qrels[topic].items() if g >= 1)
    run = {"r": {topic: {zero[0]: 3.0, "unjudged-x": 2.0, zero[1]: 1.0, rel: 0.5}}}
    frame = evaluate(collection, run, ["Judged@2", "Judged@10", "Judged", "P@10", "RR"], per_topic=True, topic_set="run_and_qrels")
    values = frame[frame.topic == topic].set_index("measure")["value"]
    assert values["Judged@2"] == 0.5 and values["Judged@10"] == 0.75 and values["Judged"] == 0.75
    assert values["P@10"] == 0.1 and values["RR"] == 0.25


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("P", "P needs a cutoff, e.g. P@10"),
        ("ndcg_cut", "trec_eval's ndcg_cut needs a cutoff"),
        ("map_10", "write map_cut_10"),
        ("P(rel=0)@10", "rel must be >= 1"),
        ("AP(ap_norm=X)@10", "ap_norm must be one of min, R"),
        ("P@10,RR", "looks like several measures"),
        ("nDCG@20'", "nDCG: cutoff must be a positive integer, got \"20'\" (the condensed list's ' goes before the cutoff: nDCG'@20)"),
    ],
)
def test_bad_spellings_say_what_to_write(text: str, message: str) -> None:
    with pytest.raises(UnknownMetricError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_measure(text)


def test_tagged_adhoc_so_exclude_tag_drops_them() -> None:
    from evaluation.metrics import REGISTRY, default_measures

    names = {"P", "R", "RR", "Success", "Judged", "AP", "nDCG"}
    assert all("adhoc" in REGISTRY[name].tags for name in names)
    listed = {m.spec.name for m in default_measures()}
    kept = {m.spec.name for m in default_measures() if "adhoc" not in m.spec.tags}  # bench_metrics.py --exclude-tag adhoc
    assert names <= listed and not names & kept and kept


def test_the_docs_table_lists_exactly_the_registered_trec_eval_measures() -> None:
    """docs/metrics.md#trec_eval-measures: one row per measure form, each parsing to a registered metric
    whose cutoff rule allows the form; every metric tagged tool:trec_eval has a row."""
    from evaluation.metrics import REGISTRY

    text = (Path(__file__).resolve().parents[3] / "docs" / "metrics.md").read_text()
    section = text.split("### trec_eval measures", 1)[1].split("\n### ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    names = set()
    for row in rows:
        for form in re.findall(r"`([^`]+)`", row.split("|")[1]):
            if form == "rel":
                continue  # the parameter
            spec = parse_measure(form.replace("@k", "@10")).spec
            names.add(spec.name)
    tagged = {name for name, spec in REGISTRY.items() if "tool:trec_eval" in spec.tags}
    assert tagged <= names and names <= set(REGISTRY)
    for row in rows:
        for spelling in re.findall(r"`([^`]+)`", row.split("|")[3]):
            assert parse_measure(spelling.replace("_k", "_10").replace(".k", ".10").replace("@k", "@10")).spec.name in names


def test_negative_grades_are_nonrelevant_and_judged_as_in_trec_eval(tmp_path) -> None:
    """A spam grade (-2) reads as 0 (docs/metrics.md#grades-and-gains): trec_eval, given the raw negative
    grade, scores P, RR, AP and nDCG the same; the document stays judged (Judged@k counts it)."""
    qrels_file = tmp_path / "q.qrels"
    qrels_file.write_text("q1 1 spam -2\nq1 1 good 2\nq1 2 good 1\nq1 1 zero 0\nq1 2 other 1\n")
    run = {"q1": {"spam": 3.0, "good": 2.0, "unjudged": 1.5, "zero": 1.0}}
    raw = {"q1": {"spam": -2, "good": 2, "zero": 0, "other": 1}}  # highest grade per document, the -2 kept
    keys = {"P@5": "P_5", "RR": "recip_rank", "AP": "map", "nDCG": "ndcg", "nDCG@5": "ndcg_cut_5"}
    theirs = pytrec_eval.RelevanceEvaluator(raw, {"P", "recip_rank", "map", "ndcg", "ndcg_cut"}).evaluate(run)["q1"]
    frame = evaluate(load_collection(qrels_file), run, [*keys, "Judged@4"], per_topic=True)
    values = frame[frame.topic == "q1"].set_index("measure")["value"]
    for ours_name, key in keys.items():
        assert values[ours_name] == pytest.approx(theirs[key], abs=TOL), ours_name
    assert values["Judged@4"] == 0.75


def test_trec_eval_topics_and_mean_with_empty_topic_zero_and_the_runs_topics() -> None:
    """trec_eval scores a run topic without a relevant document 0 and averages over the run's judged
    topics: ``empty_topic="zero", topic_set="run_and_qrels"`` (docs/metrics.md#trec_eval-measures)."""
    qrels = {"q1": {"a": 1, "b": 0}, "q2": {"c": 0, "d": 0}, "q3": {"e": 1}}
    run = {"q1": {"a": 2.0, "b": 1.0}, "q2": {"c": 1.0}, "q4": {"x": 1.0}}
    keys = {"P@5": "P_5", "AP": "map", "nDCG": "ndcg", "RR": "recip_rank", "R@5": "recall_5"}
    theirs = pytrec_eval.RelevanceEvaluator(qrels, {"P_5", "map", "ndcg", "recip_rank", "recall_5"}).evaluate(run)
    with pytest.warns(UserWarning):
        frame = evaluate(qrels, run, list(keys), per_topic=True, empty_topic="zero", topic_set="run_and_qrels")
    got = frame.set_index(["topic", "measure"])["value"]
    assert set(frame.topic) == {*theirs, "all"}
    for ours_name, key in keys.items():
        for topic, values in theirs.items():
            assert got[(topic, ours_name)] == pytest.approx(values[key], abs=TOL)
        assert got[("all", ours_name)] == pytest.approx(np.mean([v[key] for v in theirs.values()]), abs=TOL)


RANX = {
    "ndcg@10": "nDCG@10",
    "map@10": "AP(ap_norm=R)@10",
    "mrr@10": "RR@10",
    "precision@5": "P@5",
    "recall@20": "R@20",
    "hit_rate@3": "Success@3",
}


def test_ranx_spellings_are_ranxs_values() -> None:
    """ranx's metric names (what its compare and evaluate take) are our measures with ranx's values: map@k is
    trec_eval's map_cut (over R), not NTCIREVAL's AP@k, which a 'did you mean AP' used to suggest."""
    from tests.evaluation.test_compare import ranx_uncompiled

    ranx = ranx_uncompiled()
    collection = load_collection(REFERENCE / "trec2014" / "qrels.diversity.tsv")
    qrels = {t: {d: max(g.values()) for d, g in docs.items() if max(g.values()) >= 1} for t, docs in collection.judgments.items()}
    for path in RUN_FILES[:3]:
        run = read_run(path)
        scored = {t: {d: float(len(docs) - i) for i, d in enumerate(docs)} for t, docs in run.lists.items() if t in qrels}
        theirs = ranx.evaluate(ranx.Qrels(qrels), ranx.Run(scored), list(RANX), make_comparable=True)
        ours = evaluate(collection, {run.name: scored}, [*RANX, *RANX.values(), "mrr"], empty_topic="zero")
        value = dict(zip(ours["measure"], ours["value"]))
        for spelling, measure in RANX.items():
            assert value[spelling] == pytest.approx(theirs[spelling], abs=1e-12), (path.name, spelling)
            assert value[spelling] == value[measure]
        assert value["mrr"] == pytest.approx(ranx.evaluate(ranx.Qrels(qrels), ranx.Run(scored), "mrr", make_comparable=True), abs=1e-12)


@pytest.mark.parametrize("name", ["hits@10", "f1@10", "r-precision", "ndcg_burges@10", "dcg@10"])
def test_ranx_metrics_not_defined_here_point_to_ranx(name: str) -> None:
    with pytest.raises(UnknownMetricError, match=f"ranx's {name.split('@')[0]} is not defined here: compute it with ranx or ir_measures"):
        parse_measure(name)
