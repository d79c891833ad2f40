"""Library objects print short in a notebook or a log: counts, never every judgment or ranked list (issue 33)."""

from __future__ import annotations

from evaluation.collection import Collection, Intent, Topic
from evaluation.io.runs import RankedLists, Run
from evaluation.loading import load_collection
from tests.evaluation.toy import TOY_IPROB, TOY_QRELS, toy_collection, toy_run


def test_a_collection_prints_its_counts() -> None:
    collection = toy_collection()
    text = repr(collection)
    assert text.startswith("Collection(") and len(text) < 120, text
    judged = sum(len(g) for docs in collection.judgments.values() for g in docs.values())
    assert f"{len(collection.topics)} topics" in text and f"{judged} judgments" in text
    loaded = load_collection(TOY_QRELS, TOY_IPROB)  # the column store of qrels read from files
    assert repr(loaded).endswith(f"{judged} judgments)") and len(repr(loaded)) < 120
    big = Collection(
        {f"t{n}": Topic(f"t{n}", (Intent("1", 0.5), Intent("2", 0.5))) for n in range(200)},
        {f"t{n}": {f"d{k}": {"1": 1, "2": 0} for k in range(100)} for n in range(200)},
        name="big",
    )
    assert repr(big) == "Collection('big', 200 topics, 400 intents, 40000 judgments)"


def test_a_run_prints_its_name_topics_and_depth() -> None:
    run = toy_run("alpha")
    assert repr(run) == f"Run('alpha', {len(run.lists)} topics, depth {run.depth})"
    flat = RankedLists.of({"t1": ("a", "b", "c"), "t2": ("d",)})
    assert repr(flat) == "RankedLists(2 topics, 4 ranked documents)"
    assert repr(Run("r", flat)) == "Run('r', 2 topics, depth 3)"


def test_a_measure_and_a_metric_print_their_names() -> None:
    from evaluation.metrics import REGISTRY, parse_measure

    assert repr(parse_measure("alpha-nDCG(alpha=0.3)@10")) == "Measure('alpha-nDCG(alpha=0.3)@10')"
    assert repr(parse_measure("ndcg_cut.20")) == "Measure('ndcg_cut.20': nDCG@20)"
    assert repr(REGISTRY["P"]) == "MetricSpec('P', cutoff='required', params=(rel=1), tags=['adhoc', 'binary', 'tool:trec_eval'])"
    assert all(len(repr(spec)) < 250 for spec in REGISTRY.values())  # never the kernel or the docs of each parameter
