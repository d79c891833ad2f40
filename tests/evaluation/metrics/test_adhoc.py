"""The ad hoc baselines (docs/metrics.md#ad-hoc-baselines) against pyNTCIREVAL, a hand-worked topic, and RBU.

pyNTCIREVAL is an independent port of NTCIREVAL's ad hoc measures (MSnDCG, Q, AP, ERR, nERR, RBP): it
takes relevance levels with a gain per level. A per-document gain (the highest grade, or the global
gain sum_i w_i g_i) becomes a level by numbering the topic's distinct gains; ``err_gmax=scale`` adds
the scale's maximum as an empty top level, so pyNTCIREVAL's ``maxgrade`` is our ``G``.
"""

from __future__ import annotations

import dataclasses
from functools import cache

import numpy as np
import pytest
from pyNTCIREVAL.metrics import AP, ERR, RBP, MSnDCG, QMeasure, nERR

from evaluation import build_collection, evaluate, load_collection, read_run, score_matrix
from evaluation.collection import Collection
from evaluation.io.runs import Run
from evaluation.metrics import parse_measure
from evaluation.metrics import reference as ref
from evaluation.metrics import reference_adhoc as ref_adhoc
from tests.evaluation.golden import REFERENCE

TOL = 1e-9
CUTOFFS = (1, 5, 10, 20)
PUBLIC_RUNS = sorted((REFERENCE / "runs" / "public").glob("*.run"))


@cache
def trec2014() -> tuple[Collection, tuple[Run, ...]]:
    """TREC 2014 diversity judgments with the (non-uniform) intent probabilities, the 8 public runs."""
    col = load_collection(REFERENCE / "trec2014" / "qrels.diversity.tsv", REFERENCE / "trec2014" / "intent_probs_din.tsv")
    return col, tuple(read_run(path) for path in PUBLIC_RUNS)


def _levels(topic: ref.RefTopic, gain: str, err_gmax: str) -> tuple[dict[str, int], list[float], list[int]]:
    """pyNTCIREVAL's view of one topic: level per judged document, gain per level, judged documents per level."""
    gains = {d: ref_adhoc.doc_gain(topic, d, gain) for d in topic.grades}
    values = sorted({g for g in gains.values() if g > 0})
    if err_gmax == "scale":
        top = ref_adhoc.adhoc_top(topic, gain, "scale")
        assert top >= values[-1]
        if top > values[-1]:
            values.append(top)  # an empty top level: pyNTCIREVAL's maxgrade becomes the scale maximum
    level = {d: values.index(g) + 1 if g > 0 else 0 for d, g in gains.items()}
    xrelnum = [sum(1 for v in level.values() if v == n) for n in range(len(values) + 1)]
    return level, values, xrelnum


def _oracle(name: str, levels: tuple[dict[str, int], list[float], list[int]], docs: list[str], k: int) -> float:
    if not docs:
        return 0.0  # pyNTCIREVAL cannot take an empty list; an empty list scores 0 (docs/metrics.md#runs)
    level, grades, xrelnum = levels
    ranked = [(d, level.get(d)) for d in docs]  # None: unjudged (gain 0)
    if name == "nDCG":
        metric = MSnDCG(xrelnum, grades, cutoff=k)
    elif name == "Q":
        metric = QMeasure(xrelnum, grades, beta=1.0, cutoff=k)
    elif name == "AP":
        metric = AP(xrelnum, grades, cutoff=k)
    elif name == "nERR":
        metric = nERR(xrelnum, grades, cutoff=k)
    else:
        metric = ERR(xrelnum, grades) if name == "ERR" else RBP(xrelnum, grades, 0.8)
        metric.cutoff = k
    return float(metric.compute(ranked))


@pytest.mark.parametrize("condensed", [False, True], ids=["raw", "condensed"])
@pytest.mark.parametrize(("gain", "err_gmax"), [("max", "topic"), ("max", "scale"), ("global", "topic")])
def test_pyntcireval_reproduces_the_ad_hoc_baselines_on_trec2014(gain: str, err_gmax: str, condensed: bool) -> None:
    col, runs = trec2014()
    names = ["nDCG", "Q", "AP", "ERR", "nERR", "RBP"]
    texts = {}
    for name in names:
        params = (
            [f"gain={gain}"] + ([f"err_gmax={err_gmax}"] if name in ("ERR", "nERR", "RBP") else []) + (["p=0.8"] if name == "RBP" else [])
        )
        for k in CUTOFFS:
            texts[name, k] = f"{name}({','.join(params)}){chr(39) if condensed else ''}@{k}"
    measures = [parse_measure(text) for text in texts.values()]
    assert all(m.condensed == condensed for m in measures)
    values = score_matrix(col, list(runs), measures)
    checked = 0
    for t, tid in enumerate(col.topic_ids):
        topic = ref.RefTopic.of(col, tid)
        levels = _levels(topic, gain, err_gmax)
        for r, run in enumerate(runs):
            docs = list(run.lists.get(tid, []))
            if condensed:
                docs = ref.condense(topic, docs)
            for m, (name, k) in enumerate(texts):
                want = _oracle(name, levels, docs, k)
                assert values[m, r, t] == pytest.approx(want, abs=TOL), (texts[name, k], run.name, tid)
                checked += 1
    assert checked == 50 * 8 * len(texts)


def test_a_worked_topic() -> None:
    """One intent, grades d1 = 2, d2 = 0, d3 = 1, d4 = 2 (G = 2), run d1 d2 d3, cutoff 3; ideal 2, 2, 1.

    Stopping probabilities p = g/(G+1): 2/3, 0, 1/3, so the user stops at rank 1 with 2/3 and at rank 3
    with 1/3 * 1/3 = 1/9. Blended ratios BR(1) = (2 + 1)/(2 + 1) = 1, BR(3) = (3 + 2)/(5 + 3) = 5/8.
    """
    col = build_collection({"q": {"d1": {"1": 2}, "d2": {"1": 0}, "d3": {"1": 1}, "d4": {"1": 2}}})
    run = Run("r", {"q": ["d1", "d2", "d3"]})
    expected = {
        "EBR@3": 1 * 2 / 3 + 5 / 8 * 1 / 9,
        "iRBU@3": 0.8 * 2 / 3 + 0.8**3 / 9,
        "iRBU(p=0.5)@1": 0.5 * 2 / 3,
        "ERR@3": 2 / 3 + 1 / 9 / 3,
        "nERR@3": (2 / 3 + 1 / 27) / (2 / 3 + (1 / 3) * (2 / 3) / 2 + (1 / 9) * (1 / 3) / 3),
        "AP@3": (1 / 1 + 2 / 3) / 3,
        "Q@3": (1 + 5 / 8) / 3,
        "RBP(p=0.5)@3": 0.5 * (2 + 0.25 * 1) / 2,
        "nDCG@3": (2 + 1 / 2) / (2 + 2 / np.log2(3) + 1 / 2),
        "EBR(err_gmax=scale)@3": 1 * 2 / 5 + 5 / 8 * (3 / 5) * (1 / 5),  # G = 4: p = 2/5, 0, 1/5
    }
    values = score_matrix(col, [run], [parse_measure(m) for m in expected])[:, 0, 0]
    assert values == pytest.approx(list(expected.values()), abs=1e-12)


def test_irbu_is_rbu_of_one_intent_without_effort() -> None:
    """On the TREC 2014 topics with one subtopic (weight 1), iRBU with the scale's G equals RBU on the
    paper's scale with NTCIREVAL's linear relevance g/(G+1) and no effort: two independent kernels."""
    col, runs = trec2014()
    single = [t for t in col.topic_ids if len(col.topics[t].intents) == 1]
    assert len(single) == 24
    sub = col.restrict_topics(single)
    for k in (5, 20):
        frame = evaluate(
            sub,
            list(runs),
            [f"iRBU(err_gmax=scale,p=0.9)@{k}", f"RBU(p=0.9,e=0,rbu_scale=paper,rbu_relevance=ntcir_linear)@{k}"],
            per_topic=True,
        )
        table = frame.pivot_table(index=["run", "topic"], columns="measure", values="value")
        assert len(table) == 8 * 25  # 24 topics and the mean row
        np.testing.assert_allclose(table.iloc[:, 0], table.iloc[:, 1], atol=TOL, rtol=0)


def test_global_gain_makes_ndcg_and_q_the_d_measures() -> None:
    col, runs = trec2014()
    measures = [parse_measure(m) for m in ("nDCG(gain=global)@10", "D-nDCG@10", "Q(gain=global)@10", "D-Q@10")]
    values = score_matrix(col, list(runs), measures)
    np.testing.assert_allclose(values[0], values[1], atol=TOL, rtol=0)
    np.testing.assert_allclose(values[2], values[3], atol=TOL, rtol=0)


def test_baselines_ignore_intents_but_not_grades() -> None:
    """A document relevant to two intents counts once, with its highest grade (gain=max): two lists that
    differ only in how many intents their documents cover score the same, unlike a diversity metric."""
    col = build_collection({"q": {"a": {"1": 2, "2": 2}, "b": {"1": 2}, "c": {"2": 1}}})
    runs = [Run("covers_both", {"q": ["a", "c"]}), Run("one_intent", {"q": ["b", "c"]})]
    measures = [parse_measure(f"{name}@2") for name in ("nDCG", "Q", "AP", "ERR", "nERR", "RBP", "EBR", "iRBU", "alpha-nDCG")]
    values = score_matrix(col, runs, measures)[:, :, 0]
    np.testing.assert_array_equal(values[:-1, 0], values[:-1, 1])
    assert values[-1, 0] > values[-1, 1]


def test_ad_hoc_measure_strings() -> None:
    m = parse_measure("RBP(p=0.8)@10")
    assert (m.name, m.params["p"], m.params["gain"], m.cutoff) == ("RBP", 0.8, "max", 10)
    assert parse_measure("nDCG(gain=max)'@5").canonical() == "nDCG'@5"
    assert parse_measure("Q-measure@10").name == "Q"
    assert dataclasses.replace(parse_measure("iRBU@10"), condensed=True).canonical() == "iRBU'@10"
