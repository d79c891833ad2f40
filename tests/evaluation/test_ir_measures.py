"""ir_measures interoperability (docs/evaluation.md#ir_measures): its measure strings are accepted as
aliases, and the ``evaluation`` provider computes our measures inside ir_measures, equal to its
pyndeval provider on the measures both define (TREC 2014, the 8 public runs, per topic)."""

from __future__ import annotations

from functools import cache

import ir_measures
import pytest

from evaluation import evaluate, load_collection, read_run
from evaluation.exceptions import UnknownMetricError
from evaluation.ir_measures_provider import PROVIDER_NAME, ir_measures_name, register_provider
from evaluation.metrics import parse_measure
from tests.evaluation.golden import REFERENCE

QRELS = REFERENCE / "trec2014" / "qrels.diversity.tsv"
RUNS = sorted((REFERENCE / "runs" / "public").glob("*.run"))
TOL = 1e-9
SHARED = [f"{name}@{k}" for name in ("alpha_nDCG", "alpha_DCG", "ERR_IA", "nERR_IA", "P_IA", "StRecall") for k in (5, 10, 20)] + [
    "NRBP",
    "nNRBP",
    "AP_IA",
    "alpha_nDCG(alpha=0.3)@10",
    "NRBP(beta=0.8)",
]  # judged_only=True is left out: ir_measures 0.4.3's pyndeval provider fails on it (TypeError)


@cache
def qrels() -> tuple:
    return tuple(ir_measures.read_trec_qrels(str(QRELS)))


@cache
def run(path: str) -> tuple:
    return tuple(ir_measures.read_trec_run(path))


@pytest.mark.parametrize("path", RUNS, ids=[p.stem for p in RUNS])
def test_our_provider_equals_pyndeval_on_the_shared_measures(path) -> None:
    """Per topic to 1e-9, ties ordered as pyndeval orders them (score desc, docid asc)."""
    ours = register_provider(order="pyndeval")
    measures = [ir_measures.parse_measure(text) for text in SHARED]
    assert all(ours.supports(m) for m in measures)
    # one pyndeval call per (alpha, beta): ir_measures 0.4.3 hands the run to its second pyndeval
    # invocation as an exhausted iterator (every value 0), so parameter groups must not share a call
    groups: dict[tuple, list] = {}
    for m in measures:
        groups.setdefault(tuple(m[p] if p in m.SUPPORTED_PARAMS else None for p in ("alpha", "beta")), []).append(m)
    theirs = {
        (m.query_id, str(m.measure)): m.value
        for group in groups.values()
        for m in ir_measures.pyndeval.iter_calc(group, qrels(), run(str(path)))
    }
    mine = {(m.query_id, str(m.measure)): m.value for m in ours.iter_calc(measures, qrels(), run(str(path)))}
    assert theirs.keys() == mine.keys()
    assert len({topic for topic, _ in mine}) == 50
    bad = {key: (theirs[key], mine[key]) for key in theirs if not abs(theirs[key] - mine[key]) <= TOL}
    assert not bad, list(bad.items())[:5]


def test_calc_aggregate_computes_our_measures() -> None:
    """Through ir_measures' default pipeline, by their ir_measures names; the same means as ``evaluate``."""
    register_provider()
    pairs = {
        "D_sharp_nDCG@10": "D#-nDCG@10",
        "DIN_sharp_Q(gamma=0.3)@10": "DIN#-Q(gamma=0.3)@10",
        "P_plus_Q_sharp@10": "P+Q#@10",
        "RBU": "RBU",
        "RBU(p=0.99,e=0.05)@20": "RBU(p=0.99,e=0.05)@20",
        "alpha_sharp_IA(avg='geom')@10": "alpha#-IA(avg=geom)@10",
        "S_RR_100": "S-RR@100%",
        "D_nDCG(judged_only=True)@10": "D-nDCG'@10",
        "Prec@5": "Prec@5",
        "PMP(pmp_tie='union')@5": "PMP(pmp_tie=union)@5",
        "EBR@10": "EBR@10",
    }
    measures = {ir_measures.parse_measure(text): ours for text, ours in pairs.items()}
    path = str(RUNS[0])
    got = ir_measures.calc_aggregate(list(measures), qrels(), run(path))
    frame = evaluate(load_collection(QRELS), [read_run(path)], list(pairs.values()))
    want = dict(zip(frame["measure"], frame["value"]))
    for measure, ours in measures.items():
        assert got[measure] == pytest.approx(want[ours], abs=TOL), str(measure)


def test_registration_is_idempotent_and_names_are_identifiers() -> None:
    first = register_provider()
    second = register_provider(order="rank")
    pipeline = [p for p in ir_measures.DefaultPipeline.providers if p.NAME == PROVIDER_NAME]
    assert pipeline == [second] and ir_measures.providers.registry[PROVIDER_NAME] is second and first is not second
    assert ir_measures_name("D#-nDCG") == "D_sharp_nDCG"
    assert ir_measures_name("P+Q#") == "P_plus_Q_sharp"
    assert ir_measures_name("S-RR@100%") == "S_RR_100"
    assert ir_measures_name("alpha#-IA") == "alpha_sharp_IA"
    # ir_measures' own nDCG (trec_eval's) keeps its name; ours is not offered under it
    assert not second.supports(ir_measures.parse_measure("nDCG@10"))
    assert not second.supports(ir_measures.parse_measure("alpha_nDCG(rel=2)@10"))  # relevance is grade >= 1 here
    with pytest.raises(UnknownMetricError, match="D#-nDCG needs a cutoff, e.g. D_sharp_nDCG@10"):
        ir_measures.providers.registry[PROVIDER_NAME].evaluator([ir_measures.parse_measure("D_sharp_nDCG")], qrels())


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("alpha_nDCG@10", "alpha-nDCG@10"),
        ("α_nDCG@10", "alpha-nDCG@10"),
        ("alpha_nDCG(alpha=0.5,judged_only=True)@10", "alpha-nDCG'@10"),
        ("alpha_nDCG(judged_only=False,rel=1)@10", "alpha-nDCG@10"),
        ("ERR_IA@20", "ERR-IA@20"),
        ("nERR_IA@20", "nERR-IA@20"),
        ("NRBP", "NRBP"),
        ("NRBP(alpha=0.3,beta=0.8)", "NRBP(alpha=0.3,beta=0.8)"),
        ("P_IA@10", "P-IA@10"),
        ("StRecall@10", "I-rec@10"),
        ("AP_IA", "MAP-IA"),
        ("MAP_IA", "MAP-IA"),
        ("alpha_DCG@5", "alpha-DCG@5"),
        ("nDCG@10", "nDCG@10"),
    ],
)
def test_ir_measures_spellings_are_aliases(text: str, canonical: str) -> None:
    assert parse_measure(text).canonical() == canonical


def test_unknown_names_get_the_closest_known_ones() -> None:
    with pytest.raises(UnknownMetricError, match=r"unknown metric 'alpha_nDGC'; did you mean alpha-nDCG") as caught:
        parse_measure("alpha_nDGC@10")
    assert caught.value.suggestions[0] == "alpha-nDCG"
    with pytest.raises(UnknownMetricError) as caught:
        parse_measure("Dsharp-nDCG@10")
    assert "D#-nDCG" in caught.value.suggestions
    with pytest.raises(UnknownMetricError) as caught:
        parse_measure("zzzz@10")
    assert caught.value.suggestions == [] and "`python -m evaluation metrics`" in str(caught.value)
    with pytest.raises(UnknownMetricError, match="rel must be one of 1"):
        parse_measure("alpha_nDCG(rel=2)@10")
    with pytest.raises(UnknownMetricError, match="judged_only must be bool"):
        parse_measure("alpha_nDCG(judged_only=maybe)@10")
