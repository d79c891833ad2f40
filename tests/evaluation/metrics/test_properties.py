"""Property tests over the registry (issue 2, acceptance 3), driven by each metric's tags.

Every test iterates over :data:`evaluation.metrics.REGISTRY` / :func:`default_measures`, so a newly
registered metric is covered without editing this file:

* ``normalised``: values in [0, 1] (PMP may be NaN where docs/metrics.md#coverage-and-set-metrics says so). alpha-nDCG,
  nERR-IA and nNRBP are normalised by the *greedy* ideal and may exceed 1 (docs/metrics.md#ideal-lists), so they are
  deliberately untagged; IA-ERR and RBP-IA are not normalised either.
* everything except the ``effort`` metrics (RBU, EU subtract an effort cost) is >= 0;
* ``ideal_global`` (D-nDCG, D-Q, D#-nDCG, D#-Q): the global ideal list scores 1 on the D-measure
  and ``gamma·I-rec + (1 - gamma)`` on the # combination (1 whenever it covers every intent);
* cutoff rule ``required``/``optional``: documents after rank k never change ``M@k`` (and after the
  k-th judged document for ``M'@k``); whole-list metrics take part only with an explicit ``@k``
  (which truncates the run first, like ndeval ``-M``);
* every metric: the order of topics and of runs is irrelevant, identical runs score identically,
  and ``M' == M`` when a run contains no unjudged document.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evaluation import Collection, Intent, Run, Topic, build_collection, evaluate, score_matrix
from evaluation.metrics import REGISTRY, Measure, default_measures, parse_measure

CUTOFFS = (1, 3, 5, 10, 20)
ALL = default_measures(CUTOFFS)  # raw and condensed, cutoff metrics at each cutoff, the rest whole-list
RAW = [m for m in ALL if not m.condensed]
WITH_CUTOFF = [
    Measure(spec, dict(spec.defaults), k, condensed)
    for spec in REGISTRY.values()
    if spec.cutoff in ("required", "optional")
    for k in (1, 2, 3, 5)
    for condensed in (False, True)
]
TOL = 1e-9
PROPERTY = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def test_the_registry_tags_used_here_exist() -> None:
    """Guards against silently testing nothing after a tag rename."""
    tags = {tag for spec in REGISTRY.values() for tag in spec.tags}
    assert {"normalised", "ideal_global", "effort", "whole_list"} <= tags
    assert {n for n, s in REGISTRY.items() if "ideal_global" in s.tags} == {"D-nDCG", "D-Q", "D#-nDCG", "D#-Q"}
    assert {n for n, s in REGISTRY.items() if "effort" in s.tags} == {"RBU", "EU"}
    for name in ("alpha-nDCG", "nERR-IA", "nNRBP", "IA-ERR", "RBP-IA"):
        assert "normalised" not in REGISTRY[name].tags, name
    for name in ("I-rec", "D-nDCG", "D#-nDCG", "nDCG-IA", "IA-nERR", "ERR-IA", "alpha-DCG", "NRBP", "P+Q#", "DIN#-Q"):
        assert "normalised" in REGISTRY[name].tags, name


# STRATEGIES =========================================================================================


@st.composite
def collections(draw, *, relevant: bool = True) -> Collection:
    """1-3 topics, 1-4 intents, 1-8 judged docs with grades 0-4; weights absent or summing to 1.

    With ``relevant`` every topic has a relevant document (no NaN topics).
    """
    judgments: dict[str, dict[str, dict[str, int]]] = {}
    intents: dict[str, list[Intent]] = {}
    weighted = draw(st.booleans())
    for t in range(draw(st.integers(1, 3))):
        tid = f"q{t}"
        n_int = draw(st.integers(1, 4))
        ids = [str(i + 1) for i in range(n_int)]
        numbers = draw(st.lists(st.integers(0, 40), min_size=1, max_size=8, unique=True))
        docs: dict[str, dict[str, int]] = {}
        for n in numbers:
            grades = draw(st.lists(st.integers(0, 4), min_size=n_int, max_size=n_int))
            docs[f"d{n}"] = {i: g for i, g in zip(ids, grades) if g > 0 or draw(st.booleans())}
        if relevant and not any(g >= 1 for grades in docs.values() for g in grades.values()):
            docs[f"d{numbers[0]}"][ids[0]] = draw(st.integers(1, 4))
        judgments[tid] = docs
        types = draw(st.lists(st.sampled_from(["inf", "nav"]), min_size=n_int, max_size=n_int))
        raw = draw(st.lists(st.integers(0, 5), min_size=n_int, max_size=n_int))
        if weighted and sum(raw) > 0:
            intents[tid] = [Intent(i, w / sum(raw), k) for i, w, k in zip(ids, raw, types)]
        else:
            intents[tid] = [Intent(i, None, k) for i, k in zip(ids, types)]
    if weighted and all(i.weight is not None for v in intents.values() for i in v):
        return build_collection(judgments, intents)
    topics = {t: Topic(t, tuple(Intent(i.id, None, i.type) for i in v)) for t, v in intents.items()}
    return build_collection(judgments, None, topics)


def pool(col: Collection, topic: str) -> list[str]:
    return sorted(col.judged_documents(topic)) + [f"u{n}" for n in range(5)]


@st.composite
def collection_and_runs(draw, *, n_runs: int = 2, judged_only: bool = False, relevant: bool = True):
    col = draw(collections(relevant=relevant))
    runs = []
    for r in range(n_runs):
        lists = {}
        for tid in col.topic_ids:
            docs = sorted(col.judged_documents(tid)) if judged_only else pool(col, tid)
            if draw(st.integers(0, 9)) == 0:
                continue  # topic missing from the run
            lists[tid] = draw(st.lists(st.sampled_from(docs), unique=True, max_size=len(docs)))
        runs.append(Run(f"run{r}", lists))
    return col, runs


def _values(col: Collection, runs: list[Run], measures: list[Measure]) -> np.ndarray:
    return score_matrix(col, runs, measures)


def _pmp_may_be_nan(col: Collection, topic: str) -> bool:
    weights = col.weights(topic)
    rel = col.relevant_intents(topic)
    return len(rel) > 1 and len({weights[i] for i in rel}) == 1


# TESTS ==============================================================================================


@PROPERTY
@given(collection_and_runs())
def test_normalised_metrics_stay_in_unit_interval(data) -> None:
    col, runs = data
    measures = [m for m in ALL if "normalised" in m.spec.tags]
    values = _values(col, runs, measures)
    for n, m in enumerate(measures):
        for t, tid in enumerate(col.topic_ids):
            v = values[n, :, t]
            if m.name == "PMP" and _pmp_may_be_nan(col, tid):
                assert np.isnan(v).all(), (str(m), tid)
                continue
            assert not np.isnan(v).any(), (str(m), tid)
            assert (v >= -TOL).all() and (v <= 1 + TOL).all(), (str(m), tid, v)


@PROPERTY
@given(collection_and_runs())
def test_metrics_without_effort_are_non_negative(data) -> None:
    col, runs = data
    measures = [m for m in ALL if "effort" not in m.spec.tags]
    values = _values(col, runs, measures)
    finite = np.where(np.isnan(values), 0.0, values)
    bad = np.argwhere(finite < -TOL)
    assert bad.size == 0, [str(measures[i]) for i in bad[:, 0]]


@PROPERTY
@given(collection_and_runs())
def test_effort_metrics_are_at_least_minus_the_effort(data) -> None:
    """RBU/EU may be negative, but never below what showing the list costs (docs/metrics.md#rbu-eu-and-ct)."""
    col, runs = data
    for text, bound in (("RBU", lambda n: -0.03 * (1 - 0.8**n)), ("RBU@3", lambda n: -0.03 * (1 - 0.8 ** min(n, 3)))):
        values = _values(col, runs, [parse_measure(text)])
        for r, run in enumerate(runs):
            for t, tid in enumerate(col.topic_ids):
                n = len(run.lists.get(tid, ()))
                assert values[0, r, t] >= bound(n) - TOL, (text, run.name, tid)


def _global_ideal_run(col: Collection) -> Run:
    lists = {}
    for tid in col.topic_ids:
        w = col.weights(tid)
        gg = {d: sum(w[i] * g for i, g in grades.items()) for d, grades in col.judgments[tid].items()}
        lists[tid] = sorted((d for d in gg if gg[d] > 0), key=lambda d: -gg[d])
    return Run("ideal", lists)


@PROPERTY
@given(collections())
def test_global_ideal_run_scores_one_where_promised(col: Collection) -> None:
    run = _global_ideal_run(col)
    measures = [
        Measure(s, dict(s.defaults), k, c) for s in REGISTRY.values() if "ideal_global" in s.tags for k in CUTOFFS for c in (False, True)
    ]
    irec = _values(col, [run], [parse_measure(f"I-rec@{k}") for k in CUTOFFS])
    values = _values(col, [run], measures)
    for n, m in enumerate(measures):
        for t, tid in enumerate(col.topic_ids):
            if not run.lists[tid]:
                continue  # every relevant intent has weight 0: no positive global gain (no ideal to reach)
            if "gamma" in m.params:  # the # combination
                expected = m.params["gamma"] * irec[CUTOFFS.index(m.cutoff), 0, t] + (1 - m.params["gamma"])
            else:
                expected = 1.0
            assert math.isclose(values[n, 0, t], expected, abs_tol=TOL), (str(m), tid)


@PROPERTY
@given(collection_and_runs(n_runs=1), st.data())
def test_documents_beyond_the_cutoff_never_matter(data, tails) -> None:
    col, (run,) = data
    changed = {}
    for tid in col.topic_ids:
        docs = list(run.lists.get(tid, ()))
        rest = [d for d in pool(col, tid) if d not in docs]
        changed[tid] = (docs, tails.draw(st.lists(st.sampled_from(rest), unique=True, max_size=len(rest))) if rest else [])
    for k in (1, 2, 3, 5):
        # raw lists: replace everything after rank k
        raw_run = Run("b", {t: d[:k] + [x for x in tail if x not in d[:k]] for t, (d, tail) in changed.items()})

        # condensed lists: keep everything up to the k-th judged document, then replace
        def head(t: str, d: list[str], k: int = k) -> list[str]:
            judged = col.judged_documents(t)
            positions = [n for n, x in enumerate(d) if x in judged]
            return d if len(positions) < k else d[: positions[k - 1] + 1]

        cond_run = Run("c", {t: head(t, d) + [x for x in tail if x not in head(t, d)] for t, (d, tail) in changed.items()})
        base = Run("a", {t: d for t, (d, _) in changed.items()})
        measures = [m for m in WITH_CUTOFF if m.cutoff == k]
        values = _values(col, [base, raw_run, cond_run], measures)
        for n, m in enumerate(measures):
            other = 2 if m.condensed else 1
            for t, tid in enumerate(col.topic_ids):
                if len(changed[tid][0]) < k and not m.condensed:
                    continue  # the "tail" would land inside the top k
                if m.condensed and head(tid, changed[tid][0]) == changed[tid][0]:
                    continue  # fewer than k judged documents: nothing lies beyond the cutoff
                a, b = values[n, 0, t], values[n, other, t]
                assert (np.isnan(a) and np.isnan(b)) or math.isclose(a, b, abs_tol=TOL), (str(m), tid)


def test_empty_runs_on_a_topic_without_relevant_pairs_score_zero() -> None:
    """No (intent, document) pair at all and no ranked document: every measure scores 0, none fails (the novelty
    discounts once indexed the first pair of an empty block; found by the property below)."""
    inf = Intent(id="1", weight=None, type="inf", text="")
    col = Collection(topics={"q0": Topic(id="q0", intents=(inf,), query="", description="")}, judgments={"q0": {"d0": {}}})
    values = _values(col, [Run(name=f"run{i}", lists={}) for i in range(3)], ALL)
    assert values.shape == (len(ALL), 3, 1)
    assert np.array_equal(values, np.zeros_like(values))


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(collection_and_runs(n_runs=3, relevant=False), st.randoms(use_true_random=False))
def test_order_of_topics_and_runs_is_irrelevant(data, rnd) -> None:
    col, runs = data
    topics = col.topic_ids
    rnd.shuffle(topics)
    shuffled_runs = list(runs)
    rnd.shuffle(shuffled_runs)
    other = col.restrict_topics(topics)
    a = _values(col, runs, ALL)
    b = _values(other, shuffled_runs, ALL)
    run_pos = [shuffled_runs.index(r) for r in runs]
    topic_pos = [topics.index(t) for t in col.topic_ids]
    reordered = b[:, run_pos][:, :, topic_pos]
    assert np.array_equal(np.isnan(a), np.isnan(reordered))
    assert np.allclose(np.nan_to_num(a), np.nan_to_num(reordered), atol=TOL, rtol=0)
    # the mean rows too, including the alpha#-IA topic averages (avg, geom, DD)
    means = ["D#-nDCG@5", "alpha-nDCG@10", "RBU", "alpha#-IA(tavg=geom)@5", "alpha#-IA(tavg=DD)@5", "alpha#-IA@5", "nNRBP'"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # topics without relevant documents are announced; not the point here
        fa = evaluate(col, runs, means)
        fb = evaluate(other, shuffled_runs, means)
    ka = {(r, m): v for r, _, m, v in fa.itertuples(index=False, name=None)}
    kb = {(r, m): v for r, _, m, v in fb.itertuples(index=False, name=None)}
    assert ka.keys() == kb.keys()
    for key, v in ka.items():
        assert (math.isnan(v) and math.isnan(kb[key])) or math.isclose(v, kb[key], abs_tol=TOL), key


@PROPERTY
@given(collection_and_runs(n_runs=1, judged_only=True))
def test_condensed_equals_raw_without_unjudged_documents(data) -> None:
    col, runs = data
    pairs = [(m, Measure(m.spec, m.params, m.cutoff, True)) for m in RAW]
    raw = _values(col, runs, [p[0] for p in pairs])
    condensed = _values(col, runs, [p[1] for p in pairs])
    assert np.array_equal(np.isnan(raw), np.isnan(condensed))
    diff = np.abs(np.nan_to_num(raw) - np.nan_to_num(condensed))
    assert (diff <= TOL).all(), [str(pairs[i][0]) for i in np.argwhere(diff > TOL)[:, 0]]


@PROPERTY
@given(collection_and_runs(n_runs=1))
def test_identical_runs_score_identically(data) -> None:
    col, (run,) = data
    twin = Run("twin", dict(run.lists))
    values = _values(col, [run, twin], ALL)
    assert np.array_equal(values[:, 0], values[:, 1], equal_nan=True)


@PROPERTY
@given(collections(), st.sampled_from([0.0, 0.3, 0.5, 0.9]))
def test_greedy_ideal_run_scores_one_on_greedy_normalised_metrics(col: Collection, alpha: float) -> None:
    """The greedy ideal of docs/metrics.md#ideal-lists (the reference's, tie rule included) scores 1 on alpha-nDCG, nERR-IA
    and nNRBP at every cutoff, and, holding every relevant document, has I-rec = 1 over its whole length."""
    from evaluation.metrics import reference as ref

    # topics whose relevant intents all weigh 0 have no weighted gain to reach (the engine scores them 0)
    topics = [t for t in col.topic_ids if sum(col.weights(t)[i] for i in col.relevant_intents(t)) > 0]
    run = Run("ideal", {t: ref.greedy_ideal(ref.RefTopic.of(col, t), alpha) for t in topics})
    measures = [parse_measure(f"{name}(alpha={alpha})@{k}") for name in ("alpha-nDCG", "nERR-IA") for k in CUTOFFS]
    longest = max([len(docs) for docs in run.lists.values()] + [1])
    measures += [parse_measure(f"nNRBP(alpha={alpha})"), parse_measure(f"I-rec@{longest}")]
    values = _values(col, [run], measures)
    for t, tid in enumerate(col.topic_ids):
        if tid in topics:
            for n, m in enumerate(measures):
                assert math.isclose(values[n, 0, t], 1.0, abs_tol=TOL), (str(m), tid)
