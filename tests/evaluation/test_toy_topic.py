"""The toy-topic table of docs/metrics.md#the-toy-topic (every row) and the published checks of docs/metrics.md#d-measures, docs/metrics.md#alpha-ia-and-diversity-difficulty and docs/metrics.md#condensed-lists.

Tolerances follow the precision printed in the spec: 4 decimals -> abs 5e-5, 6 decimals -> 5e-7
(docs/metrics.md#means-and-precision: ``0.5·10^-p``), exact fractions -> 1e-12. ndeval-family rows use uniform weights
(the qrels loaded without the Iprob file, as pyndeval sees them).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from evaluation import EvaluationError, EvaluationWarning, FormatError, Intent, Run, build_collection, evaluate, read_run
from evaluation.arrays import build_ranking, table_for
from evaluation.difficulty import difficulty, difficulty_frame
from evaluation.metrics.alphasharp import per_subtopic
from evaluation.metrics.dmeasures import p_plus
from tests.evaluation.toy import one_hot, score, toy_collection, toy_run, toy_uniform, toy_write_run

P4 = 5e-5  # value printed with 4 decimals
P6 = 5e-7  # value printed with 6 decimals
EXACT = 1e-12

# FIXTURES ===========================================================================================


@pytest.fixture(scope="module")
def weighted_scores() -> dict[str, float]:
    """Every docs/metrics.md#the-toy-topic measure computed with the toy weights, in one evaluate() call."""
    return _scores(toy_collection(), WEIGHTED_ROWS)


@pytest.fixture(scope="module")
def uniform_scores() -> dict[str, float]:
    return _scores(toy_uniform(), UNIFORM_ROWS)


def _scores(collection, rows) -> dict[str, float]:
    frame = evaluate(collection, [toy_run()], [m for m, _, _ in rows], per_topic=True)
    per_topic = frame[frame.topic == "T1"]
    return dict(zip(per_topic.measure, per_topic.value))


# (measure string, value in docs/metrics.md#the-toy-topic, tolerance); toy weights 0.5/0.3/0.2
WEIGHTED_ROWS = [
    ("I-rec@5", 0.6667, P4),
    ("D-nDCG@5", 0.5340, P4),
    ("D-Q@5", 0.3797, P4),
    ("D#-nDCG@5", 0.6003, P4),
    ("D#-Q@5", 0.5232, P4),
    ("DIN-nDCG@5", 0.3558, P4),
    ("DIN-Q@5", 0.3248, P4),
    ("DIN#-nDCG@5", 0.5112, P4),
    ("nDCG-IA@5", 0.4240, P4),
    ("IA-ERR@5", 0.2995, P4),
    ("IA-nERR@5", 0.3937, P4),
    ("IA-ERR(err_gmax=scale)@5", 0.2021, P4),
    ("IA-nERR(err_gmax=scale)@5", 0.3818, P4),
    ("P+Q@5", 0.4220, P4),
    ("RBP-IA@5", 0.051793, P6),
    ("Prec@5", 0.6, EXACT),
    ("PMP@5", 0.4, EXACT),
    ("Ef-P@5", 0.6, EXACT),
    ("Ef-P@7", 4 / 7, EXACT),  # spec: 0.5714
    ("Prec@7", 5 / 7, EXACT),  # docs/metrics.md#coverage-and-set-metrics: Prec@7 = 5/7 while Ef-P@7 = 4/7
    ("P-IA@5", 0.32, EXACT),  # weighted: (0.5·2 + 0.3·2)/5
    ("S-RR@100%", 1 / 7, EXACT),  # 0.142857
    ("RBU", 0.063744, P6),  # jar, p = 0.8, e = 0.03, whole list (jar prints 0.0637)
    ("RBU(p=0.8,e=0.03)", 0.063744, P6),
    ("RBU@5", 0.064446, P6),
    # "paper scale: 0.174016" is the paper's p^i scale *with* NTCIREVAL's linear g/(G+1) relevance
    # (G = 4): with the jar's exponential relevance the paper scale gives 0.254976 instead.
    ("RBU(rbu_scale=paper,rbu_relevance=ntcir_linear)", 0.174016, P6),
    ("D-nDCG'@5", 0.6169, P4),
    ("D-Q'@5", 0.5581, P4),
    ("I-rec'@5", 0.6667, P4),
]

# uniform weights (qrels without Iprob): the ndeval family and the alpha#-IA rows of docs/metrics.md#alpha-ia-and-diversity-difficulty
UNIFORM_ROWS = [
    ("P-IA@5", 4 / 15, EXACT),  # 0.266667 (= pyndeval)
    ("ERR-IA@5", 0.387292, P6),
    ("nERR-IA@5", 0.517520, P6),
    ("alpha-DCG@5", 0.426617, P6),
    ("alpha-nDCG@5", 0.553928, P6),
    ("NRBP", 0.358398, P6),
    ("nNRBP", 0.484169, P6),
    ("MAP-IA", 0.393651, P6),
    ("I-rec@5", 0.666667, P6),  # ndeval strec@5
    ("strec@5", 0.666667, P6),
    ("ERR-IA@20", 0.437675, P6),
    ("alpha-nDCG@20", 0.680791, P6),
    ("ERR-IA(ndeval_rank1_quirk=true)@1", 1.0, EXACT),  # pyndeval's unnormalised @1
    ("alpha-DCG(ndeval_rank1_quirk=true)@1", 1.0, EXACT),
    ("ERR-IA@1", 1 / 3, EXACT),  # the formula
    ("alpha-DCG@1", 1 / 3, EXACT),
    ("alpha-nDCG(alpha=0.5)@5", 0.553928, P6),
    ("alpha#-IA(alpha=0.5,lambda=0.5,disc=dcg,avg=micro)@5", 0.5582, P4),
    ("alpha#-IA(alpha=0.5,avg=geom)@5", 0.3414, P4),
    ("alpha#-IA(alpha=0.5,avg=cascade)@5", 0.6103, P4),
    # SMR average 0.3571 of docs/metrics.md#alpha-ia-and-diversity-difficulty: 0.5 · 2/3 + 0.5 · 0.3571
    ("alpha#-IA(alpha=0.5,avg=smr)@5", 0.5 * (2 / 3) + 0.5 * 0.3571, P4),
    ("PMP@5", math.nan, None),  # meaningless with uniform weights and M+ > 1 (docs/metrics.md#coverage-and-set-metrics)
    ("PMP(pmp_equal=tie)@5", 0.4, EXACT),  # every intent tied for the top, lowest id: intent 1 (d3, d1) in the top 5
    ("PMP(pmp_equal=tie,pmp_tie=union)@5", 0.6, EXACT),  # relevant to any intent: d3, d1, d2
]


# TESTS: the docs/metrics.md#the-toy-topic table ==============================================================================


@pytest.mark.parametrize(("measure", "expected", "tol"), WEIGHTED_ROWS, ids=[m for m, _, _ in WEIGHTED_ROWS])
def test_toy_row_with_toy_weights(weighted_scores: dict[str, float], measure: str, expected: float, tol: float) -> None:
    assert weighted_scores[measure] == pytest.approx(expected, abs=tol)


@pytest.mark.parametrize(("measure", "expected", "tol"), UNIFORM_ROWS, ids=[m for m, _, _ in UNIFORM_ROWS])
def test_toy_row_with_uniform_weights(uniform_scores: dict[str, float], measure: str, expected: float, tol: float | None) -> None:
    if math.isnan(expected):
        assert math.isnan(uniform_scores[measure])
    else:
        assert uniform_scores[measure] == pytest.approx(expected, abs=tol)


def test_ndeval_rows_are_the_same_with_with_weights_uniform() -> None:
    via_transform = _scores(toy_collection().with_weights("uniform"), UNIFORM_ROWS)
    without_iprob = _scores(toy_uniform(), UNIFORM_ROWS)
    for measure, _, _ in UNIFORM_ROWS:
        a, b = via_transform[measure], without_iprob[measure]
        assert (math.isnan(a) and math.isnan(b)) or a == pytest.approx(b, abs=EXACT), measure


def test_sharp_metrics_exact_and_with_ntcireval_rounded_components() -> None:
    """docs/metrics.md#means-and-precision: NTCIREVAL combines 4-decimal components; DIN#-Q@5 prints 0.4957, P+Q#@5 0.5444."""
    col, run = toy_collection(), toy_run()
    # exact arithmetic (default): gamma·I-rec + (1-gamma)·base, tolerance 1e-4 for # metrics (docs/metrics.md#means-and-precision)
    din_q = score(col, run, "DIN-Q@5")
    din_sharp = score(col, run, "DIN#-Q@5")
    assert din_sharp == pytest.approx(0.5 * (2 / 3) + 0.5 * din_q, abs=EXACT)
    assert din_sharp == pytest.approx(0.49575, abs=1e-4)
    pq = score(col, run, "P+Q@5")
    pq_sharp = score(col, run, "P+Q#@5")
    assert pq_sharp == pytest.approx(0.5 * (2 / 3) + 0.5 * pq, abs=EXACT)
    assert pq_sharp == pytest.approx(0.54435, abs=1e-4)
    # tool-exact: components rounded like printf("%.4f") first
    rounded = score(col, run, "DIN#-Q(ntcir_round_components=true)@5")
    assert rounded == pytest.approx(0.5 * (0.6667 + 0.3248), abs=EXACT)  # 0.49575
    assert "%.4f" % rounded == "0.4957"
    rounded = score(col, run, "P+Q#(ntcir_round_components=true)@5")
    assert rounded == pytest.approx(0.5 * (0.6667 + 0.4220), abs=EXACT)  # 0.54435
    assert "%.4f" % rounded == "0.5444"
    assert score(col, run, "D#-Q(ntcir_round_components=true)@5") == pytest.approx(0.5 * (0.6667 + 0.3797), abs=EXACT)
    assert score(col, run, "D#-nDCG(ntcir_round_components=true)@5") == pytest.approx(0.5 * (0.6667 + 0.5340), abs=EXACT)


def test_global_gains_and_global_ideal() -> None:
    """docs/metrics.md#the-toy-topic: GG d1 1.3, d2 0.9, d3 0.5, d4 0.8, d5 0.8, d7 0.5, d6 0; ideal (1.3, 0.9, 0.8, 0.8, 0.5, 0.5)."""
    col = toy_collection()
    table = table_for(col)
    assert np.allclose(table.global_ideal(7)[0], [1.3, 0.9, 0.8, 0.8, 0.5, 0.5, 0.0], atol=EXACT)
    # D-nDCG@1 of a one-document list is GG(d) / GG*(1) = GG(d) / 1.3
    expected = {"d1": 1.3, "d2": 0.9, "d3": 0.5, "d4": 0.8, "d5": 0.8, "d6": 0.0, "d7": 0.5, "dX": 0.0}
    runs = [Run(d, {"T1": [d]}) for d in expected]
    frame = evaluate(col, runs, ["D-nDCG@1"], per_topic=True)
    got = {r: v * 1.3 for r, t, v in zip(frame.run, frame.topic, frame.value) if t == "T1"}
    assert got == pytest.approx(expected, abs=EXACT)


def test_d_and_din_measures_agree_with_the_spec_gain_vectors() -> None:
    """docs/metrics.md#d-measures: GG of the top 5 = (0.5, 0, 1.3, 0, 0.9); docs/metrics.md#din-measures-and-pq: DG = (0.5, 0, 0.3, 0, 0.9)."""
    col, run = toy_collection(), toy_run()
    disc = 1 / np.log2(np.arange(2, 7))
    ideal = np.array([1.3, 0.9, 0.8, 0.8, 0.5])
    gg = np.array([0.5, 0, 1.3, 0, 0.9])
    dg = np.array([0.5, 0, 0.3, 0, 0.9])
    assert score(col, run, "D-nDCG@5") == pytest.approx((gg * disc).sum() / (ideal * disc).sum(), abs=EXACT)
    assert score(col, run, "DIN-nDCG@5") == pytest.approx((dg * disc).sum() / (ideal * disc).sum(), abs=EXACT)

    def q(gains: np.ndarray, ideal_all: np.ndarray, l: int) -> float:
        big_r = int((ideal_all > 0).sum())
        total, cg, c = 0.0, 0.0, 0
        for r, g in enumerate(gains[:l], start=1):
            cg += g
            c += g > 0
            if g > 0:
                total += (cg + c) / (ideal_all[: min(r, big_r)].sum() + r)
        return total / min(l, big_r)

    ideal_all = np.array([1.3, 0.9, 0.8, 0.8, 0.5, 0.5])
    assert score(col, run, "D-Q@5") == pytest.approx(q(gg, ideal_all, 5), abs=EXACT)
    assert score(col, run, "DIN-Q@5") == pytest.approx(q(dg, ideal_all, 5), abs=EXACT)


PER_INTENT = {
    # measure on a one-hot collection -> (intent 1, intent 2, intent 3) of docs/metrics.md#the-toy-topic, tolerance
    "nDCG-IA@5": ((0.6388, 0.3487, 0.0), P4),  # per-intent MSnDCG@5
    "IA-ERR@5": ((0.4815, 0.1958, 0.0), P4),  # per-intent ERR@5, G_i per intent
    "IA-nERR@5": ((0.6446, 0.2380, 0.0), P4),
    "RBP-IA@5": ((0.070125, 0.055767, 0.0), P6),  # docs/metrics.md#intent-aware-metrics (NTCIREVAL 0.0701, 0.0558)
}


@pytest.mark.parametrize("measure", sorted(PER_INTENT))
def test_per_intent_values(measure: str) -> None:
    values, tol = PER_INTENT[measure]
    col = toy_collection()
    for intent, expected in zip(("1", "2", "3"), values):
        assert score(one_hot(col, "T1", intent), toy_run(), measure) == pytest.approx(expected, abs=tol), intent


def test_per_intent_err_closed_forms() -> None:
    """docs/metrics.md#intent-aware-metrics: intent 1 (G_1 = 2): ERR = 1/3 + (2/3)(2/3)/3."""
    value = score(one_hot(toy_collection(), "T1", "1"), toy_run(), "IA-ERR@5")
    assert value == pytest.approx(1 / 3 + (2 / 3) * (2 / 3) / 3, abs=EXACT)


def test_per_intent_p_plus_and_q() -> None:
    """docs/metrics.md#the-toy-topic: per-intent P+ / Q@5 = 0.6905/0.4603, 0.3838/0.2559, 0/0."""
    col = toy_collection()
    ranking = build_ranking(table_for(col), [toy_run()])
    assert p_plus(ranking, 5)[0, 0] == pytest.approx([0.6905, 0.3838, 0.0], abs=P4)
    for intent, expected_q, expected_p in (("1", 0.4603, 0.6905), ("2", 0.2559, 0.3838), ("3", 0.0, 0.0)):
        # P+Q with one weight 1: all-inf types give that intent's Q@5, all-nav its P+
        assert score(one_hot(col, "T1", intent, "inf"), toy_run(), "P+Q@5") == pytest.approx(expected_q, abs=P4)
        assert score(one_hot(col, "T1", intent, "nav"), toy_run(), "P+Q@5") == pytest.approx(expected_p, abs=P4)
    # P+Q@5 = 0.5 · P+_1 (nav) + 0.3 · Q_2 + 0.2 · Q_3
    assert score(col, toy_run(), "P+Q@5") == pytest.approx(0.5 * 0.6905 + 0.3 * 0.2559, abs=P4)


def test_per_subtopic_alpha_ndcg_of_alpha_sharp_ia() -> None:
    """docs/metrics.md#alpha-ia-and-diversity-difficulty: per-subtopic alpha-nDCG@5 (alpha 0.5, DCG) = 0.8678, 0.4814, 0; micro 0.4497."""
    col = toy_uniform()
    ranking = build_ranking(table_for(col), [toy_run()])
    sub = per_subtopic(ranking, 5, 0.5, "dcg", 0.8)[0, 0]
    assert sub == pytest.approx([0.8678, 0.4814, 0.0], abs=P4)
    assert sub.mean() == pytest.approx(0.4497, abs=P4)
    # geometric mean with the 1e-5 floor: 0.016105
    assert math.exp(np.log(np.maximum(sub, 1e-5)).mean()) == pytest.approx(0.016105, abs=P6)


def test_alpha_sharp_ia_limits() -> None:
    """docs/metrics.md#alpha-ia-and-diversity-difficulty: lambda = 1 gives S-recall; lambda = 0 with cascade gives alpha-nDCG."""
    col, run = toy_uniform(), toy_run()
    assert score(col, run, "alpha#-IA(lambda=1)@5") == pytest.approx(2 / 3, abs=EXACT)
    assert score(col, run, "alpha#-IA(lambda=0,alpha=0.5,avg=cascade)@5") == pytest.approx(0.553928, abs=P6)


def test_xi_smr_dd() -> None:
    """docs/metrics.md#alpha-ia-and-diversity-difficulty: xi = 2 (d1 then d4), smr = (0.2647, 0.2647, 0.4706), dd = 0.8132 (0.8998 with offset 1)."""
    table = table_for(toy_collection())
    result = difficulty(table)
    assert int(result.xi[0]) == 2
    assert result.smr[0] == pytest.approx([0.2647, 0.2647, 0.4706], abs=P4)
    assert result.dd[0] == pytest.approx(0.8132, abs=P4)
    assert difficulty(table, exponent_offset=1).dd[0] == pytest.approx(0.8998, abs=P4)
    frame = difficulty_frame(toy_collection(), exponent_offset=1)
    assert frame.loc[0, "topic"] == "T1" and frame.loc[0, "xi"] == 2
    assert frame.loc[0, "dd"] == pytest.approx(0.8998, abs=P4)


def test_greedy_ideal_tie_goes_to_the_greatest_docno() -> None:
    """docs/metrics.md#ideal-lists: greedy ties go to the lexicographically greatest docno, and the choice changes later gains.

    Intents A-D (uniform, alpha 0.5). d10 = {A, D}, d1 = {B, C}, d9 = {A, C} all score 2 at step 1;
    "d9" is the greatest *string*, so the greedy ideal is d9, d10, d1 with gains (2, 1.5, 1.5)/4.
    Taking d10 (numerically greatest) first would give d10, d1, d9 with gains (2, 2, 1)/4 -- a better
    list, so alpha-nDCG exceeds 1 there (docs/metrics.md#ideal-lists: the greedy ideal is approximate; never clip).
    """
    col = build_collection({"q": {"d10": {"A": 1, "D": 1}, "d1": {"B": 1, "C": 1}, "d9": {"A": 1, "C": 1}}})
    ideal = Run("ideal", {"q": ["d9", "d10", "d1"]})
    better = Run("better", {"q": ["d10", "d1", "d9"]})
    frame = evaluate(col, [ideal, better], ["alpha-nDCG@3", "nERR-IA@3", "nNRBP"], per_topic=True)
    got = {(r, m): v for r, t, m, v in frame.itertuples(index=False, name=None) if t == "q"}
    for m in ("alpha-nDCG@3", "nERR-IA@3", "nNRBP"):
        assert got["ideal", m] == pytest.approx(1.0, abs=EXACT), m
    for name, disc in (("alpha-nDCG@3", 1 / np.log2([2, 3, 4])), ("nERR-IA@3", 1 / np.array([1, 2, 3]))):
        expected = (np.array([2, 2, 1]) * disc).sum() / (np.array([2, 1.5, 1.5]) * disc).sum()
        assert expected > 1
        assert got["better", name] == pytest.approx(expected, abs=EXACT), name


def test_toy_greedy_ideal_gives_alpha_ndcg_one() -> None:
    """docs/metrics.md#cascade-metrics: the toy greedy ideal is d5, d1, d7, d4, d3, d2, d6."""
    col = toy_uniform()
    ideal = Run("ideal", {"T1": ["d5", "d1", "d7", "d4", "d3", "d2", "d6"]})
    for m in ("alpha-nDCG@5", "alpha-nDCG@20", "nERR-IA@5", "nNRBP"):
        assert score(col, ideal, m) == pytest.approx(1.0, abs=EXACT), m


# TESTS: weights and intents (docs/metrics.md#intents-and-weights) =============================================================


def test_keep_top_intents_renormalises_and_keeps_judged_status() -> None:
    col = toy_collection().keep_top_intents(2)
    assert col.weights("T1") == pytest.approx({"1": 0.625, "2": 0.375})
    assert "d4" in col.judged_documents("T1")  # judged only for the removed intent 3: still judged
    run = Run("r", {"T1": ["dX", "d4", "d1"]})
    # condensed list d4, d1: d4 keeps rank 1 as a judged-nonrelevant document
    assert score(col, run, "D-nDCG'@1") == 0.0
    assert score(col, run, "D-nDCG'@2") > 0.0
    assert score(col, run, "I-rec@5") == 1.0  # d1 covers both kept intents; intent 3 left the denominator


def test_keep_top_intents_with_zero_weights_falls_back_to_uniform() -> None:
    col = build_collection({"q": {"a": {"1": 1, "2": 1, "3": 1}}}, {"q": [Intent("1", 0.0), Intent("2", 0.0), Intent("3", 1.0)]})
    kept = col.keep_top_intents(2)  # intent 3 (weight 1) and intent 1 (the lower id among the 0-weight ties)
    assert kept.weights("q") == {"1": 0.0, "3": 1.0}
    zero = build_collection({"q": {"a": {"1": 1, "2": 1}}}, {"q": [Intent("1", 0.0), Intent("2", 0.0)]}).keep_top_intents(2)
    assert zero.weights("q") == {"1": 0.5, "2": 0.5}


def test_uniform_over_listed_intents_caps_ia_metrics() -> None:
    """docs/metrics.md#intents-and-weights: weights are not renormalised again; NTCIREVAL-family IA sums then max out below 1 while
    the ndeval family divides by W+."""
    judgments = {"q": {"a": {"1": 1}, "b": {"2": 0}}}  # intent 2 is listed but has no relevant document
    run = Run("r", {"q": ["a"]})
    relevant = build_collection(judgments)
    listed = build_collection(judgments, uniform_over="listed")
    assert relevant.weights("q") == {"1": 1.0, "2": 0.0} and listed.weights("q") == {"1": 0.5, "2": 0.5}
    assert score(relevant, run, "nDCG-IA@1", "q") == 1.0 and score(listed, run, "nDCG-IA@1", "q") == 0.5
    assert score(relevant, run, "alpha-nDCG@1", "q") == 1.0 and score(listed, run, "alpha-nDCG@1", "q") == 1.0
    assert score(listed, run, "I-rec@1", "q") == 1.0  # intent 2 is not in I_q^+


# TESTS: duplicate documents in a run (docs/metrics.md#runs) =====================================================


def test_duplicate_docids_keep_the_first_with_a_warning(tmp_path) -> None:
    """d1, d1, d2 -> d1, d2: D-nDCG@5 (MSnDCG on global gains) = 0.6657, not NTCIREVAL's double-counted 0.9160."""
    path = toy_write_run(tmp_path / "dup.run", ["d1", "d1", "d2"])
    with pytest.warns(EvaluationWarning, match=r"T1.*d1"):
        run = read_run(path, order="file")
    assert list(run.lists["T1"]) == ["d1", "d2"]
    assert score(toy_collection(), run, "D-nDCG@5") == pytest.approx(0.6657, abs=P4)
    assert score(toy_collection(), Run("plain", {"T1": ["d1", "d2"]}), "D-nDCG@5") == pytest.approx(0.6657, abs=P4)


def test_duplicate_docids_warn_once_per_run_and_topic(tmp_path) -> None:
    path = tmp_path / "dup.run"
    path.write_text("T1 Q0 d1 1 3 r\nT1 Q0 d1 2 2 r\nT1 Q0 d2 3 1 r\nT1 Q0 d2 4 0 r\n")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        read_run(path, order="file")
    assert len([w for w in caught if issubclass(w.category, EvaluationWarning)]) == 1


def test_duplicate_docids_can_be_an_error(tmp_path) -> None:
    path = toy_write_run(tmp_path / "dup.run", ["d1", "d1", "d2"])
    with pytest.raises(FormatError) as info:
        read_run(path, order="file", on_duplicate_doc="error")
    assert info.value.line == 2 and f"{path}:2:" in str(info.value) and "d1" in str(info.value)


def test_a_run_object_with_duplicates_is_rejected() -> None:
    with pytest.raises(EvaluationError, match=r"run x topic T1: docid d1 listed twice"):
        Run("x", {"T1": ["d1", "d1"]})


# TESTS: published checks =============================================================================


def _topic_187():
    """Sakai 2013 Table 4, TREC 2012 topic 187 (team srchvrs), rebuilt from the published gains.

    Two intents, uniform weights. Ideal global gains (4, 2.5x4, 2x10, 1x5, then 0.5s): GG = (g1+g2)/2.
    R* = (1,1) [GG 1], H* = (0,1) [GG 0.5], N* judged nonrelevant, U* unjudged. F = (0,1) is the
    document that only the full qrels judge (a unique contribution of the left-out team).
    Per-intent grades of the list are the only ones consistent with IA-ERR = (0.2100 + 0.2400)/2,
    true IA-ERR 0.2300 and IA-ERR' 0.2581 under p = g/5 (checked by enumeration).
    """
    judgments: dict[str, dict[str, int]] = {"I4": {"1": 4, "2": 4}}
    for n, (a, b) in enumerate([(4, 1), (4, 1), (1, 4), (1, 4)]):
        judgments[f"I25_{n}"] = {"1": a, "2": b}
    for n in range(10):
        judgments[f"I2_{n}"] = {"1": 2, "2": 2}
    judgments["X1"] = {"1": 2}  # the fifth GG = 1 document of the ideal
    for d in ("R1", "R2", "R3", "R4"):
        judgments[d] = {"1": 1, "2": 1}
    for d in ("H1", "H2", "H3", "H4", "H5", "F"):
        judgments[d] = {"2": 1}
    for n in range(1, 12):
        judgments[f"N{n}"] = {}
    full = build_collection({"187": judgments})
    loo = full.drop_documents({"187": ["F"]})
    ranked = [
        "R1", "N1", "U1", "N2", "H1", "N3", "N4", "N5", "U2", "U3",  # raw ranks 1-10
        "F", "U4", "U5", "U6", "U7", "R2", "U8", "U9", "U10", "U11",  # raw ranks 11-20
        "N6", "H2", "N7", "H3", "N8", "N9", "N10", "H4", "N11", "R3", "H5", "R4",  # condensed ranks 9-20
    ]  # fmt: skip
    return full, loo, Run("srchvrs", {"187": ranked})


def test_sakai_2013_table4_topic_187() -> None:
    """docs/metrics.md#d-measures / docs/metrics.md#condensed-lists: D-nDCG 0.0906, D#-nDCG 0.5453 (LOO), 0.5497 (full), D#-nDCG' 0.5791;
    IA-ERR 0.2250 (LOO raw), 0.2300 (true), IA-ERR' 0.2581 (condensed LOO)."""
    full, loo, run = _topic_187()
    measures = ["D-nDCG@20", "D#-nDCG@20", "D#-nDCG'@20", "I-rec@20", "I-rec'@20", "IA-ERR@20", "IA-ERR'@20"]
    loo_scores = {m: score(loo, run, m, "187") for m in measures}
    full_scores = {m: score(full, run, m, "187") for m in measures}
    assert loo_scores["I-rec@20"] == loo_scores["I-rec'@20"] == 1.0
    assert loo_scores["D-nDCG@20"] == pytest.approx(0.0906, abs=P4)
    assert loo_scores["D#-nDCG@20"] == pytest.approx(0.5453, abs=P4)
    assert full_scores["D#-nDCG@20"] == pytest.approx(0.5497, abs=P4)
    assert loo_scores["D#-nDCG'@20"] == pytest.approx(0.5791, abs=P4)
    assert loo_scores["IA-ERR@20"] == pytest.approx(0.2250, abs=P4)
    assert full_scores["IA-ERR@20"] == pytest.approx(0.2300, abs=P4)
    assert loo_scores["IA-ERR'@20"] == pytest.approx(0.2581, abs=P4)
    # both intents have an L4 document, so both err_gmax settings agree (docs/metrics.md#condensed-lists)
    assert score(loo, run, "IA-ERR(err_gmax=scale)'@20", "187") == pytest.approx(loo_scores["IA-ERR'@20"], abs=EXACT)
    # per-intent raw LOO: (0.2100 + 0.2400)/2
    assert score(one_hot(loo, "187", "1"), run, "IA-ERR@20", "187") == pytest.approx(0.2100, abs=P4)
    assert score(one_hot(loo, "187", "2"), run, "IA-ERR@20", "187") == pytest.approx(0.2400, abs=P4)


def test_sakai_2013_condensed_list_equals_the_explicit_condensed_list() -> None:
    """The condensed LOO list has global gains 1,.5,1,.5,.5,.5,1,.5,1 at ranks 1,4,8,10,12,16,18,19,20."""
    _, loo, run = _topic_187()
    judged = loo.judged_documents("187")
    condensed = Run("condensed", {"187": [d for d in run.lists["187"] if d in judged]})
    frame = evaluate(loo, [run, condensed], ["D#-nDCG'@20", "D#-nDCG@20"] + [f"D-nDCG@{k}" for k in range(1, 21)], per_topic=True)
    got = {(r, m): v for r, t, m, v in frame.itertuples(index=False, name=None) if t == "187"}
    assert got["srchvrs", "D#-nDCG'@20"] == pytest.approx(got["condensed", "D#-nDCG@20"], abs=EXACT)
    assert got["condensed", "D#-nDCG@20"] == pytest.approx(0.5791, abs=P4)
    ideal = np.array([4] + [2.5] * 4 + [2] * 10 + [1] * 5)
    disc = 1 / np.log2(np.arange(2, 22))
    dcg = np.array([got["condensed", f"D-nDCG@{k}"] for k in range(1, 21)]) * np.cumsum(ideal * disc)
    gains = np.diff(np.concatenate([[0.0], dcg])) / disc
    expected = np.zeros(20)
    expected[[0, 3, 7, 9, 11, 15, 17, 18, 19]] = [1, 0.5, 1, 0.5, 0.5, 0.5, 1, 0.5, 1]
    assert gains == pytest.approx(expected, abs=1e-9)


def _golbus_topic(r_t: int, sizes: tuple[int, ...], name: str = "86"):
    """Binary qrels with |R_T| = r_t and |R_i| = sizes, where doc 0 covers every subtopic (xi = 1)."""
    common = min(sizes) - (r_t - max(sizes))
    assert common >= 1
    judgments: dict[str, dict[str, int]] = {}
    for i, size in enumerate(sizes, start=1):
        # subtopic i: docs 0..(size - tail - 1) of the shared block, then the tail of docs >= max(sizes)
        tail = r_t - max(sizes) if size < max(sizes) else 0
        members = list(range(size - tail)) + list(range(max(sizes), max(sizes) + tail))
        for d in members:
            judgments.setdefault(f"doc{d:03d}", {})[str(i)] = 1
    assert len(judgments) == r_t
    return build_collection({name: judgments})


def test_golbus_table3_smr_and_table1_dd_topic_86() -> None:
    """docs/metrics.md#alpha-ia-and-diversity-difficulty (Golbus et al. 2013): topic 86, R_T = 82, R = (78, 62, 60), xi = 1 ->
    smr 0.087, 0.435, 0.478 (Table 3); dd 0.897 with exponent xi, 0.977 with xi + 1 (Table 1)."""
    col = _golbus_topic(82, (78, 62, 60))
    assert len(col.relevant_documents("86")) == 82
    table = table_for(col)
    assert list(table.intent_ids[0]) == ["1", "2", "3"]
    result = difficulty(table)
    assert int(result.xi[0]) == 1
    assert result.smr[0] == pytest.approx([0.087, 0.435, 0.478], abs=5e-4)
    assert result.dd[0] == pytest.approx(0.897, abs=5e-4)
    assert difficulty(table, exponent_offset=1).dd[0] == pytest.approx(0.977, abs=5e-4)


def test_keep_intents_uses_the_given_weights_and_keeps_judged_status() -> None:
    """What a study stored (kept subtopics, renormalised weights) applied as given; keep_top_intents is this with its own choice."""
    col = toy_collection()
    same = col.keep_top_intents(2)
    kept = col.keep_intents({"T1": same.weights("T1")})
    assert kept.topic_ids == ["T1"]
    assert kept.weights("T1") == pytest.approx({"1": 0.625, "2": 0.375})
    assert "d4" in kept.judged_documents("T1")
    run = Run("r", {"T1": ["dX", "d4", "d1"]})
    for measure in ("D-nDCG'@2", "I-rec@5", "alpha-nDCG@3"):
        assert score(kept, run, measure) == score(same, run, measure)
    with pytest.raises(EvaluationError, match="unknown topic T9"):
        col.keep_intents({"T9": {"1": 1.0}})
    with pytest.raises(EvaluationError, match="topic T1: unknown intent"):
        col.keep_intents({"T1": {"7": 1.0}})
