"""The vectorised engine against the loop-per-rank reference of ``reference.py`` on random collections.

Each seed draws topics with 1-5 intents (numeric or string ids), weights that are absent (uniform),
random (summing to at most 1, some 0), or explicitly equal; nav/inf types; grades 0-4 including
judged-nonrelevant documents and intents that have no relevant document; a topic without any
relevant document. Runs mix judged and unjudged documents, empty and short lists and missing
topics; docids of different lengths exercise the string tie rule of the greedy ideal.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Callable
from functools import partial

import numpy as np
import pytest

from evaluation import Collection, EvaluationWarning, Intent, Run, Topic, build_collection, evaluate, score_matrix
from evaluation.arrays import table_for
from evaluation.difficulty import difficulty
from evaluation.metrics import REGISTRY, Measure, parse_measure
from evaluation.metrics import reference as ref
from evaluation.metrics import reference_adhoc as ref_adhoc

SEEDS = range(12)
CUTOFFS = (1, 3, 5, 10, 20)
TOL = 1e-9

# FIXTURES ===========================================================================================


def random_collection(rng: np.random.Generator) -> Collection:
    judgments: dict[str, dict[str, dict[str, int]]] = {}
    intents: dict[str, list[Intent]] = {}
    n_topics = int(rng.integers(3, 7))
    weighting = rng.choice(["none", "random", "equal"]) if rng.random() < 0.9 else "none"
    for t in range(n_topics):
        tid = f"t{t}"
        n_int = int(rng.integers(1, 6))
        ids = [str(i + 1) for i in range(n_int)] if rng.random() < 0.7 else [f"s{chr(97 + i)}" for i in range(n_int)]
        docs: dict[str, dict[str, int]] = {}
        n_docs = int(rng.integers(1, 16))
        empty_intent = ids[-1] if n_int > 1 and rng.random() < 0.4 else None  # gets grade-0 lines only
        for d in rng.choice(200, size=n_docs, replace=False):
            name = f"d{int(d)}"
            grades = {}
            for i in ids:
                if rng.random() < 0.45:
                    grade = int(rng.integers(0, 5))
                    grades[i] = 0 if i == empty_intent else grade
            docs[name] = grades  # {} = judged, relevant to nothing
        if t == 0:  # a topic without any relevant document
            docs = {d: {i: 0 for i in g} for d, g in docs.items()}
        judgments[tid] = docs
        types = rng.choice(["nav", "inf"], size=n_int)
        if weighting == "none":
            if rng.random() < 0.5:
                intents[tid] = [Intent(i, None, str(k)) for i, k in zip(ids, types)]
            continue
        if weighting == "equal":
            w = np.full(n_int, 1.0 / n_int)
        else:
            w = rng.dirichlet(np.ones(n_int)) * rng.uniform(0.6, 1.0)
            w[rng.random(n_int) < 0.2] = 0.0
        intents[tid] = [Intent(i, float(x), str(k)) for i, x, k in zip(ids, w, types)]
    if weighting == "none":
        # types without weights: through topic descriptions (weights None -> uniform over I_q^+)
        topics = {t: Topic(t, tuple(v)) for t, v in intents.items()}
        return build_collection(judgments, None, topics)
    return build_collection(judgments, intents)


def random_runs(rng: np.random.Generator, col: Collection, n_runs: int = 4) -> list[Run]:
    runs = []
    for r in range(n_runs):
        lists = {}
        for tid in col.topic_ids:
            if rng.random() < 0.1:
                continue  # topic missing from the run
            judged = sorted(col.judged_documents(tid))
            pool = judged + [f"u{n}" for n in range(8)] + [f"d{n}" for n in range(200, 204)]  # unjudged
            length = int(rng.choice([0, 1, 2, 4, 8, 15, 25]))
            length = min(length, len(pool))
            picks = rng.choice(len(pool), size=length, replace=False)
            lists[tid] = [pool[p] for p in picks]
        runs.append(Run(f"r{r}", lists))
    return runs


@pytest.fixture(scope="module", params=list(SEEDS), ids=[f"seed{s}" for s in SEEDS])
def case(request) -> tuple[Collection, list[Run]]:
    rng = np.random.default_rng(1000 + request.param)
    col = random_collection(rng)
    return col, random_runs(rng, col)


# reference adapters: (measure string) -> f(topic, docs) ================================================

Ref = Callable[[ref.RefTopic, list[str]], float]


# measure (without its "@k") -> its reference, called as reference(topic, docs, k)
AT_CUTOFF: dict[str, Callable[..., float]] = {
    "I-rec": ref.i_rec,
    "D-nDCG": ref.d_ndcg,
    "D-Q": ref.d_q,
    "D#-nDCG": ref.d_sharp_ndcg,
    "DIN-Q": ref.din_q,
    "DIN-nDCG": ref.din_ndcg,
    "P+Q": ref.pplus_q,
    "IA-nERR": ref.ia_nerr,
    "IA-nERR(err_gmax=scale)": partial(ref.ia_nerr, err_gmax="scale"),
    "IA-ERR": ref.ia_err,
    "nDCG-IA": ref.ndcg_ia,
    "alpha-nDCG": ref.alpha_ndcg,
    "alpha-nDCG(alpha=0.3)": partial(ref.alpha_ndcg, alpha=0.3),
    "alpha-nDCG(alpha=1.0)": partial(ref.alpha_ndcg, alpha=1.0),
    "nERR-IA": ref.nerr_ia,
    "ERR-IA": ref.err_ia,
    "RBU": ref.rbu,
    "alpha#-IA": ref.alpha_sharp_micro,
    "alpha#-IA(alpha=0.5,lambda=0.2,disc=err)": partial(ref.alpha_sharp_micro, alpha=0.5, lam=0.2, disc="err"),
    "alpha#-IA(disc=rbp,beta=0.9)": partial(ref.alpha_sharp_micro, disc="rbp", beta=0.9),
    "Prec": ref.prec,
    "PMP": ref.pmp,
    "PMP(pmp_tie=union)": partial(ref.pmp, pmp_tie="union"),
    "PMP(pmp_equal=tie)": partial(ref.pmp, pmp_equal="tie"),
    "PMP(pmp_equal=tie,pmp_tie=union)": partial(ref.pmp, pmp_equal="tie", pmp_tie="union"),
    "Ef-P": ref.ef_p,
    "P-IA": ref.p_ia,
    "S-RR@100%": ref.s_rr,
    "alpha-DCG": ref.alpha_dcg,
    "alpha-DCG(alpha=0.2)": partial(ref.alpha_dcg, alpha=0.2),
    "RBP-IA": ref.rbp_ia,
    "RBP-IA(p=0.8)": partial(ref.rbp_ia, p=0.8),
    "alpha-nDCG(graded=true)": partial(ref.alpha_ndcg, graded=True),
    "ERR-IA(graded=true,alpha=0.3)": partial(ref.err_ia, alpha=0.3, graded=True),
    # ad hoc baselines (docs/metrics.md#ad-hoc-baselines), both per-document gains and both G rules
    "nDCG": ref_adhoc.adhoc_ndcg,
    "nDCG(gain=global)": partial(ref_adhoc.adhoc_ndcg, gain="global"),
    "Q": ref_adhoc.adhoc_q,
    "Q(gain=global,beta=0.5)": partial(ref_adhoc.adhoc_q, gain="global", beta=0.5),
    "AP": ref_adhoc.adhoc_ap,
    "AP(gain=global)": partial(ref_adhoc.adhoc_ap, gain="global"),
    "ERR": ref_adhoc.adhoc_err,
    "ERR(gain=global,err_gmax=scale)": partial(ref_adhoc.adhoc_err, gain="global", err_gmax="scale"),
    "nERR": ref_adhoc.adhoc_nerr,
    "nERR(err_gmax=scale)": partial(ref_adhoc.adhoc_nerr, err_gmax="scale"),
    "nERR(gain=global)": partial(ref_adhoc.adhoc_nerr, gain="global"),
    "RBP": ref_adhoc.adhoc_rbp,
    "RBP(p=0.8,gain=global)": partial(ref_adhoc.adhoc_rbp, gain="global", p=0.8),
    "RBP(err_gmax=scale)": partial(ref_adhoc.adhoc_rbp, err_gmax="scale"),
    "EBR": ref_adhoc.adhoc_ebr,
    "EBR(gain=global,err_gmax=scale,beta=2)": partial(ref_adhoc.adhoc_ebr, gain="global", err_gmax="scale", beta=2.0),
    "iRBU": ref_adhoc.adhoc_irbu,
    "iRBU(p=0.99,err_gmax=scale)": partial(ref_adhoc.adhoc_irbu, err_gmax="scale", p=0.99),
    "iRBU(gain=global)": partial(ref_adhoc.adhoc_irbu, gain="global"),
    # trec_eval's measures (docs/metrics.md#trec_eval-measures)
    "AP(ap_norm=R)": partial(ref_adhoc.adhoc_ap, ap_norm="R"),
    "AP(rel=2)": partial(ref_adhoc.adhoc_ap, rel=2),
    "AP(gain=global,rel=2)": partial(ref_adhoc.adhoc_ap, gain="global", rel=2),
    "P": ref_adhoc.trec_p,
    "P(rel=2)": partial(ref_adhoc.trec_p, rel=2),
    "R": ref_adhoc.trec_recall,
    "R(rel=2)": partial(ref_adhoc.trec_recall, rel=2),
    "RR": ref_adhoc.trec_rr,
    "RR(rel=3)": partial(ref_adhoc.trec_rr, rel=3),
    "Success": ref_adhoc.trec_success,
    "Success(rel=2)": partial(ref_adhoc.trec_success, rel=2),
    "Judged": ref_adhoc.judged,
}


def cases() -> dict[str, Ref]:
    out: dict[str, Ref] = {}
    for k in CUTOFFS:
        for measure, reference in AT_CUTOFF.items():
            out[f"{measure}@{k}"] = lambda t, d, k=k, reference=reference: reference(t, d, k)
        out[f"MAP-IA@{k}"] = lambda t, d, k=k: ref.map_ia(t, d[:k])
        out[f"NRBP@{k}"] = lambda t, d, k=k: ref.nrbp(t, d[:k])
        out[f"nNRBP@{k}"] = lambda t, d, k=k: ref.div(ref.nrbp(t, d[:k]), ref.nrbp(t, ref.greedy_ideal(t, 0.5)))
        out[f"D#-Q@{k}"] = lambda t, d, k=k: ref.sharp(t, d, k, ref.d_q(t, d, k))
        out[f"DIN#-nDCG@{k}"] = lambda t, d, k=k: ref.sharp(t, d, k, ref.din_ndcg(t, d, k))
        out[f"DIN#-Q(gamma=0.3)@{k}"] = lambda t, d, k=k: ref.sharp(t, d, k, ref.din_q(t, d, k), 0.3)
        out[f"P+Q#@{k}"] = lambda t, d, k=k: ref.sharp(t, d, k, ref.pplus_q(t, d, k))
        out[f"EU@{k}"] = lambda t, d, k=k: ref.eu(t, d[:k])
        for avg in ("geom", "cascade"):
            for disc in ("dcg", "err", "rbp"):
                out[f"alpha#-IA(avg={avg},disc={disc})@{k}"] = lambda t, d, k=k, a=avg, c=disc: ref.alpha_sharp(t, d, k, a, disc=c)
        out[f"alpha#-IA(avg=smr,alpha=0.5)@{k}"] = lambda t, d, k=k: ref.alpha_sharp(t, d, k, "smr", 0.5, smr=ref.xi_smr_dd(t)[1])
    out["nNRBP(graded=true)"] = lambda t, d: ref.nnrbp(t, d, graded=True)
    out["NRBP(graded=true)"] = lambda t, d: ref.nrbp(t, d, graded=True)
    out["S-RR@100%"] = lambda t, d: ref.s_rr(t, d)
    out["nNRBP"] = lambda t, d: ref.nnrbp(t, d)
    out["nNRBP(alpha=0.3,beta=0.8)"] = lambda t, d: ref.nnrbp(t, d, 0.3, 0.8)
    out["nNRBP(beta=1)"] = lambda t, d: ref.nnrbp(t, d, 0.5, 1.0)  # the ideal must cover every relevant document
    out["EU"] = lambda t, d: ref.eu(t, d)
    out["EU(alpha=0.3,e=0,eu_discount=log2(i+1))"] = lambda t, d: ref.eu(t, d, 0.3, 0.0, "log2(i+1)")
    out["D-Q(beta=0.5)@10"] = lambda t, d: ref.d_q(t, d, 10, 0.5)
    out["P+Q(beta=2)@10"] = lambda t, d: ref.pplus_q(t, d, 10, 2.0)
    out["NRBP"] = lambda t, d: ref.nrbp(t, d)
    out["NRBP(alpha=0.3,beta=0.8)"] = lambda t, d: ref.nrbp(t, d, 0.3, 0.8)
    out["MAP-IA"] = lambda t, d: ref.map_ia(t, d)
    out["RBU"] = lambda t, d: ref.rbu(t, d)
    out["RBU(p=0.99,e=0.05)"] = lambda t, d: ref.rbu(t, d, None, 0.99, 0.05)
    out["RBU(p=0.5,e=0)"] = lambda t, d: ref.rbu(t, d, None, 0.5, 0.0)
    # whole lists (trec_eval's ndcg, map, recip_rank; ir_measures' Judged)
    out["nDCG"] = lambda t, d: ref_adhoc.adhoc_ndcg(t, d, None)
    out["nDCG(gain=global)"] = lambda t, d: ref_adhoc.adhoc_ndcg(t, d, None, gain="global")
    out["AP"] = lambda t, d: ref_adhoc.adhoc_ap(t, d, None)
    out["AP(rel=3)"] = lambda t, d: ref_adhoc.adhoc_ap(t, d, None, rel=3)
    out["RR"] = lambda t, d: ref_adhoc.trec_rr(t, d)
    out["RR(rel=2)"] = lambda t, d: ref_adhoc.trec_rr(t, d, rel=2)
    out["Judged"] = lambda t, d: ref_adhoc.judged(t, d)
    return out


CASES = cases()

# CT is compared separately (test_ct_matches_reference), with its exact-fill tank case spelled out
CT_CASES: dict[str, Ref] = {}
for _k in CUTOFFS:
    CT_CASES[f"CT@{_k}"] = lambda t, d, k=_k: ref.ct(t, d, k)
    CT_CASES[f"CT(ct_time=total)@{_k}"] = lambda t, d, k=_k: ref.ct(t, d, k, ct_time="total")
    CT_CASES[f"CT(alpha=0.2,h_max=0.5)@{_k}"] = lambda t, d, k=_k: ref.ct(t, d, k, 0.2, 0.5)


def _measure(name: str, condensed: bool) -> Measure:
    return dataclasses.replace(parse_measure(name), condensed=condensed)


def _compare(col: Collection, runs: list[Run], condensed: bool, cases: dict[str, Ref] = CASES) -> list[str]:
    names = list(cases)
    measures = [_measure(n, condensed) for n in names]
    values = score_matrix(col, runs, measures)
    failures = []
    for t, tid in enumerate(col.topic_ids):
        topic = ref.RefTopic.of(col, tid)
        if not topic.rel_intents:
            continue  # NaN by the engine's topic rule (docs/metrics.md#relevance-and-empty-topics); checked in the CLI tests
        for r, run in enumerate(runs):
            docs = list(run.lists.get(tid, []))
            if condensed:
                docs = ref.condense(topic, docs)
            for m, name in enumerate(names):
                want = cases[name](topic, docs)
                got = values[m, r, t]
                if np.isnan(want) and np.isnan(got):
                    continue
                if not abs(got - want) <= TOL:
                    failures.append(
                        f"{name}{' (condensed)' if condensed else ''} run {run.name} topic {tid}: engine {got!r}, reference {want!r}"
                    )
    return failures


# TESTS ==============================================================================================


def test_engine_matches_reference_on_raw_lists(case) -> None:
    col, runs = case
    failures = _compare(col, runs, condensed=False)
    assert not failures, f"{len(failures)} mismatches:\n" + "\n".join(failures[:15])


def test_engine_matches_reference_on_condensed_lists(case) -> None:
    col, runs = case
    failures = _compare(col, runs, condensed=True)
    assert not failures, f"{len(failures)} mismatches:\n" + "\n".join(failures[:15])


def test_every_registered_metric_is_compared_with_its_reference() -> None:
    assert {parse_measure(name).spec.name for name in [*CASES, *CT_CASES]} == set(REGISTRY)


def test_ct_matches_reference() -> None:
    """docs/metrics.md#rbu-eu-and-ct: f_sat(i,t) = 1[sum_{j<i} r(d_j,t) < H_max]. With r = g/G_t a top-grade document fills
    the tank exactly; an exclusive sum computed as (1 + 2/3) - 2/3 = 0.9999999999999999 < 1 would reopen it."""
    failures = []
    for seed in SEEDS:
        rng = np.random.default_rng(1000 + seed)
        col = random_collection(rng)
        runs = random_runs(rng, col)
        for condensed in (False, True):
            failures += _compare(col, runs, condensed, CT_CASES)
    assert not failures, f"{len(failures)} mismatches:\n" + "\n".join(failures[:15])


def test_ct_minimal_case() -> None:
    """One aspect, G = 3: a (grade 3, r = 1) fills the tank, so b (grade 2) adds nothing: CT@2 = 1/1 · 1 = 1."""
    col = build_collection({"q": {"a": {"1": 3}, "b": {"1": 2}}})
    values = score_matrix(col, [Run("r", {"q": ["a", "b"]})], [parse_measure("CT@2"), parse_measure("CT(ct_time=total)@2")])
    assert values[:, 0, 0] == pytest.approx([1.0, 0.5], abs=1e-12)


def test_the_generator_covers_the_edge_cases() -> None:
    """The random collections really contain what the module docstring promises."""
    seen = {
        "unjudged": False,
        "empty_list": False,
        "missing_topic": False,
        "empty_intent": False,
        "weighted": False,
        "nav": False,
        "uniform": False,
    }
    for seed in SEEDS:
        rng = np.random.default_rng(1000 + seed)
        col = random_collection(rng)
        runs = random_runs(rng, col)
        for tid in col.topic_ids:
            topic = ref.RefTopic.of(col, tid)
            seen["empty_intent"] |= len(topic.rel_intents) < len(topic.intents) and bool(topic.rel_intents)
            seen["nav"] |= bool(topic.nav)
            ws = [topic.weights[i] for i in topic.rel_intents]
            seen["weighted"] |= len(set(ws)) > 1
            seen["uniform"] |= len(set(ws)) == 1 and len(ws) > 1
            for run in runs:
                docs = run.lists.get(tid)
                seen["missing_topic"] |= docs is None
                seen["empty_list"] |= docs is not None and len(docs) == 0
                seen["unjudged"] |= any(d not in topic.grades for d in docs or [])
    assert all(seen.values()), seen


def test_difficulty_matches_reference(case) -> None:
    col, _ = case
    table = table_for(col)
    for offset in (0, 1):
        result = difficulty(table, exponent_offset=offset)
        for t, tid in enumerate(col.topic_ids):
            topic = ref.RefTopic.of(col, tid)
            if not topic.rel_intents:
                assert np.isnan(result.dd[t])
                continue
            xi, smr, dd = ref.xi_smr_dd(topic, offset)
            assert int(result.xi[t]) == xi, tid
            assert result.dd[t] == pytest.approx(dd, abs=TOL), tid
            got = {i: result.smr[t, n] for n, i in enumerate(table.intent_ids[t]) if i in smr}
            assert got == pytest.approx(smr, abs=TOL), tid


@pytest.mark.parametrize("seed", list(SEEDS)[:6])
def test_greedy_ideal_run_scores_one(seed: int) -> None:
    """A run equal to the reference greedy ideal (docs/metrics.md#ideal-lists) scores exactly 1 on alpha-nDCG, nERR-IA and nNRBP:
    this pins the engine's ideal, tie rule included."""
    rng = np.random.default_rng(2000 + seed)
    col = random_collection(rng)
    topics = [t for t in col.topic_ids if ref.RefTopic.of(col, t).rel_intents]
    for alpha in (0.5, 0.3):
        run = Run("ideal", {t: ref.greedy_ideal(ref.RefTopic.of(col, t), alpha) for t in topics})
        measures = [parse_measure(f"alpha-nDCG(alpha={alpha})@{k}") for k in (1, 5, 20)]
        measures += [parse_measure(f"nERR-IA(alpha={alpha})@{k}") for k in (1, 5, 20)]
        measures += [parse_measure(f"nNRBP(alpha={alpha})")]
        values = score_matrix(col, [run], measures)
        for t, tid in enumerate(col.topic_ids):
            if tid in topics:
                assert values[:, 0, t] == pytest.approx(1.0, abs=1e-12), (tid, alpha)


@pytest.mark.parametrize("seed", list(SEEDS)[:6])
def test_topic_averages_of_alpha_sharp_ia(seed: int) -> None:
    """docs/metrics.md#alpha-ia-and-diversity-difficulty topic means over the topics with relevant documents: arithmetic, geometric with the 1e-5
    floor, and DD = sum (1 - dd_t) M_t / sum (1 - dd_t) (dd with exponent xi + dd_exponent_offset)."""
    rng = np.random.default_rng(1000 + seed)
    col = random_collection(rng)
    runs = random_runs(rng, col)
    measures = ["alpha#-IA@5", "alpha#-IA(tavg=geom)@5", "alpha#-IA(tavg=DD)@5", "alpha#-IA(tavg=DD,dd_exponent_offset=1)@5"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EvaluationWarning)  # the topic without relevant documents
        frame = evaluate(col, runs, measures, per_topic=True)
    got = {(r, t, m): v for r, t, m, v in frame.itertuples(index=False, name=None)}
    topics = [t for t in col.topic_ids if ref.RefTopic.of(col, t).rel_intents]
    for run in runs:
        per_topic = np.array([ref.alpha_sharp(ref.RefTopic.of(col, t), list(run.lists.get(t, [])), 5) for t in topics])
        assert got[run.name, "all", measures[0]] == pytest.approx(per_topic.mean(), abs=TOL)
        assert got[run.name, "all", measures[1]] == pytest.approx(np.exp(np.log(np.maximum(per_topic, 1e-5)).mean()), abs=TOL)
        for offset, m in ((0, measures[2]), (1, measures[3])):
            weights = np.array([1 - ref.xi_smr_dd(ref.RefTopic.of(col, t), offset)[2] for t in topics])
            expected = (weights * per_topic).sum() / weights.sum() if weights.sum() > 0 else np.nan
            assert got[run.name, "all", m] == pytest.approx(expected, abs=TOL, nan_ok=True), (run.name, m)
            for t, value in zip(topics, per_topic):
                assert got[run.name, t, m] == pytest.approx(value, abs=TOL)  # per-topic rows are unchanged


@pytest.mark.parametrize(("beta", "expected"), [(1.0, 0.25), (0.99999, 0.250004)])
def test_nnrbp_ideal_covers_every_relevant_document_beyond_the_run(beta: float, expected: float) -> None:
    """Four intents, one relevant document each, a run of one: the ideal runs over all four documents,
    not just the run's depth, whatever beta (beta = 1 gave 1.0 when the ideal was cut to the run)."""
    col = build_collection({"q": {"a": {"1": 1}, "b": {"2": 1}, "c": {"3": 1}, "d": {"4": 1}}})
    value = score_matrix(col, [Run("r", {"q": ["a"]})], [parse_measure(f"nNRBP(beta={beta})")])[0, 0, 0]
    assert value == pytest.approx(expected, abs=1e-6)
