"""evaluation.compare: p-values equal scipy's tests and ranx's compare on the same runs; corrections,
signs and the table renderers (issue 35, Must show 2)."""

from __future__ import annotations

import sys
import warnings
from itertools import combinations
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from evaluation import EvaluationError, EvaluationWarning, Run, evaluate, load_collection, read_run
from evaluation.compare import COLUMNS, adjust, compare, p_value
from tests.evaluation.tables_parse import latex_cells, markdown_cells

REF = Path(__file__).parent / "data" / "reference"
NAMES = ("greedyrr", "noisyrel", "random", "noisygreedy-ties")


@pytest.fixture(scope="module")
def collection():
    return load_collection(REF / "trec2014" / "qrels.diversity.tsv")


@pytest.fixture(scope="module")
def runs():
    return [read_run(REF / "runs" / "public" / f"pub-{name}.run") for name in NAMES]


def per_topic(collection, runs, measure: str) -> pd.DataFrame:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EvaluationWarning)
        frame = evaluate(collection, runs, [measure], per_topic=True)
    return frame[frame["topic"] != "all"].pivot(index="topic", columns="run", values="value")


@pytest.mark.parametrize("test", ["t", "wilcoxon"])
def test_p_values_are_scipys(collection, runs, test: str) -> None:
    table = per_topic(collection, runs, "alpha-nDCG@20")
    result = compare(collection, runs, "alpha-nDCG@20", test=test, correction=None)
    assert list(result.columns) == COLUMNS and len(result) == 6
    for row in result.itertuples():
        x, y = table[row.run_a].to_numpy(), table[row.run_b].to_numpy()
        expected = stats.ttest_rel(y, x).pvalue if test == "t" else stats.wilcoxon(y - x).pvalue
        assert row.p_value == pytest.approx(expected, rel=1e-12, abs=1e-300)
        assert row.p_adjusted == row.p_value
        assert row.diff == pytest.approx(y.mean() - x.mean()) and row.mean_a == pytest.approx(x.mean())
        assert row.effect_size == pytest.approx((y - x).mean() / (y - x).std(ddof=1))


def test_the_sign_of_diff_is_run_b_minus_run_a(collection, runs) -> None:
    """greedyrr beats noisyrel on alpha-nDCG@20: with greedyrr as the baseline (run_a) diff is negative."""
    result = compare(collection, runs, ["alpha-nDCG@20"], baseline="pub-greedyrr")
    assert result["run_a"].unique().tolist() == ["pub-greedyrr"]
    assert result["run_b"].tolist() == ["pub-noisyrel", "pub-random", "pub-noisygreedy-ties"]
    row = result.set_index("run_b").loc["pub-noisyrel"]
    assert row["mean_a"] > row["mean_b"] and row["diff"] == pytest.approx(row["mean_b"] - row["mean_a"]) and row["diff"] < 0
    assert row["effect_size"] < 0


def test_exact_randomisation_equals_scipys_permutation_test() -> None:
    rng = np.random.default_rng(1)
    for _ in range(5):
        x, y = rng.random(10), rng.random(10) + 0.1
        theirs = stats.permutation_test(
            (x, y), lambda a, b: np.mean(b - a), permutation_type="samples", n_resamples=np.inf, alternative="two-sided"
        ).pvalue
        assert p_value(x, y, "randomisation", permutations=2**10) == pytest.approx(theirs, rel=1e-12)


def test_randomisation_counts_ties_on_a_discrete_measure() -> None:
    """P@10-like scores (multiples of 0.1): many sign patterns give exactly the observed |mean difference|.
    Counted in integers (tenths), the exact two-sided p is ours, in exact and in random mode; ranx's Fisher
    test compares float means with ``>=`` and loses some of those ties (docs/evaluation.md#comparing-runs)."""
    rng = np.random.default_rng(5)
    tenths_x, tenths_y = rng.integers(0, 11, 16), rng.integers(0, 11, 16)
    x, y = tenths_x / 10, tenths_y / 10
    d = tenths_y - tenths_x
    signs = 1 - 2 * ((np.arange(2**16)[:, None] >> np.arange(16)) & 1)
    null = np.abs(signs @ d)
    exact = (null >= abs(d.sum())).mean()
    assert (null == abs(d.sum())).sum() > 100  # the ties matter here
    assert p_value(x, y, "randomisation", permutations=2**16) == pytest.approx(exact, rel=1e-12)
    assert p_value(x, y, "randomisation", permutations=20000, rng=np.random.default_rng(1)) == pytest.approx(exact, abs=0.01)


def test_bootstrap_is_sakais_studentised_test_as_discpower_computes_it() -> None:
    """Sakai (SIGIR 2006) resamples the shifted differences and compares each resample's t* (its own
    sd) with the observed t, as ``meta discpower`` does; a plain loop over the same resamples is the
    oracle. On five topics the unstudentised mean would say 0.002 where the t statistic says ~0.09."""
    x = np.array([0.849, 0.765, 1.0, 0.867, 1.0])
    y = np.array([0.525, 0.765, 0.387, 0.532, 0.0])
    B = 4000
    p = p_value(x, y, "bootstrap", permutations=B, rng=np.random.default_rng(5))
    d = y - x
    t0 = d.mean() / (d.std(ddof=1) / np.sqrt(d.size))
    w = d - d.mean()
    hits = 0
    for rows in np.random.default_rng(5).integers(0, d.size, size=(B, d.size)):
        sample = w[rows]
        sd = sample.std(ddof=1)
        t = sample.mean() / (sd / np.sqrt(d.size)) if sd > 1e-12 else (0.0 if abs(sample.mean()) <= 1e-12 else np.inf)
        hits += abs(t) >= abs(t0) - 1e-12
    assert p == pytest.approx(hits / B, abs=1e-12)
    assert 0.05 < p < 0.15  # not the unstudentised mean's ~0.002
    assert p_value(y, x, "bootstrap", permutations=B, rng=np.random.default_rng(5)) == p  # two-sided


def test_random_randomisation_and_bootstrap_agree_with_the_exact_test() -> None:
    rng = np.random.default_rng(2)
    x, y = rng.random(12), rng.random(12) + 0.15
    exact = p_value(x, y, "randomisation", permutations=2**12)
    assert p_value(x, y, "randomisation", permutations=4000, rng=np.random.default_rng(3)) == pytest.approx(exact, abs=0.02)
    assert p_value(x, y, "bootstrap", permutations=20000, rng=np.random.default_rng(3)) == pytest.approx(exact, abs=0.05)
    assert p_value(x, x, "t") == p_value(x, x, "randomisation") == 1.0
    assert np.isnan(p_value(x[:1], y[:1], "t"))


def test_corrections() -> None:
    p = np.array([0.01, 0.04, 0.03, np.nan, 0.5])
    assert adjust(p, "bonferroni")[[0, 1, 2, 4]].tolist() == pytest.approx([0.04, 0.16, 0.12, 1.0])
    assert adjust(p, "holm")[[0, 1, 2, 4]].tolist() == pytest.approx([0.04, 0.09, 0.09, 0.5])
    bh = adjust(p, "bh")
    assert bh[[0, 1, 2, 4]].tolist() == pytest.approx(stats.false_discovery_control([0.01, 0.04, 0.03, 0.5]).tolist())
    assert np.isnan(bh[3]) and adjust(p, None)[[0, 4]].tolist() == [0.01, 0.5]


def test_the_correction_family_is_one_measure(collection, runs) -> None:
    result = compare(collection, runs, ["alpha-nDCG@20", "ERR-IA@20"], test="t", correction="holm")
    for _, rows in result.groupby("measure"):
        assert rows["p_adjusted"].tolist() == pytest.approx(adjust(rows["p_value"].to_numpy(), "holm").tolist())
    assert result["significant"].tolist() == (result["p_adjusted"] <= 0.05).tolist()


def ranx_uncompiled():
    """ranx with numba's JIT off (``DISABLE_JIT`` before its first import): its own Python source, run as
    written, gives the same numbers; compiling it took ~75 s of CPU in each fresh environment (CI's new
    .venv has no numba cache), the comparison itself ~2 s."""
    if "ranx" not in sys.modules:
        numba = pytest.importorskip("numba")
        numba.config.DISABLE_JIT = 1  # read when ranx's functions are decorated and its typed containers built
    return pytest.importorskip("ranx")


def test_same_p_values_as_ranx_compare(collection, runs) -> None:
    """ranx (test-only oracle, :func:`ranx_uncompiled`) on the same runs and ad hoc qrels: nDCG@10 with binary
    grades is the same number in both (checked first); ranx's paired t-test gives our p-values, its Fisher
    randomisation test (2,000 permutations) ours within its Monte Carlo error."""
    ranx = ranx_uncompiled()
    qrels = {t: {d: int(max(g.values(), default=0) >= 1) for d, g in docs.items()} for t, docs in collection.judgments.items()}
    scored = {r.name: {t: {d: float(len(docs) - i) for i, d in enumerate(docs)} for t, docs in r.lists.items()} for r in runs}
    theirs_runs = [ranx.Run(scored[r.name], name=r.name) for r in runs]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours_t = compare(qrels, scored, "nDCG@10", test="t", correction=None)
        ours_fisher = compare(qrels, scored, "nDCG@10", test="randomisation", correction=None, permutations=20000)
        student = ranx.compare(ranx.Qrels(qrels), theirs_runs, ["ndcg@10"], stat_test="student").to_dict()
        fisher = ranx.compare(ranx.Qrels(qrels), theirs_runs, ["ndcg@10"], stat_test="fisher", n_permutations=2000).to_dict()
    for row in ours_t.itertuples():
        assert student[row.run_a]["scores"]["ndcg@10"] == pytest.approx(row.mean_a, abs=1e-12)
        theirs = student[row.run_a]["comparisons"][row.run_b]["ndcg@10"]
        if row.diff == 0 and row.effect_size == 0:  # the same score on every topic: scipy's 0/0 is NaN, ours 1.0
            assert np.isnan(theirs) and row.p_value == 1.0
            continue
        assert theirs == pytest.approx(row.p_value, rel=1e-9, abs=1e-300)
    for row in ours_fisher.itertuples():
        if row.diff == 0 and row.effect_size == 0:
            continue
        assert fisher[row.run_a]["comparisons"][row.run_b]["ndcg@10"] == pytest.approx(row.p_value, abs=0.03)
    assert len(ours_t) == len(list(combinations(NAMES, 2)))


def test_tables_and_bad_arguments(collection, runs) -> None:
    result = compare(collection, runs[:2], "alpha-nDCG@20")
    header, body = markdown_cells(result.to_markdown(digits=3))
    assert header == COLUMNS and len(body) == len(result) == 1
    assert body[0][:3] == ["alpha-nDCG@20", "pub-greedyrr", "pub-noisyrel"] and body[0][COLUMNS.index("diff")] == f"{result['diff'][0]:.3f}"
    spec, header, body = latex_cells(result.to_latex())
    assert spec == "lllrrrrlrrrl" and header[1] == "run\\_a" and len(body) == 1
    with pytest.raises(ValueError, match="test must be one of"):
        compare(collection, runs, "alpha-nDCG@20", test="z")
    with pytest.raises(ValueError, match="correction must be one of"):
        compare(collection, runs, "alpha-nDCG@20", correction="sidak")
    for alpha in (0, 1, 2, -0.1):  # alpha 2 made every pair 'significant'
        with pytest.raises(ValueError, match=rf"^alpha must be in \(0, 1\), got {alpha}$"):
            compare(collection, runs, "alpha-nDCG@20", alpha=alpha)
    for permutations in (0, -5, 2.5, True):  # 0 draws answered p = 1
        with pytest.raises(ValueError, match="^permutations must be a positive integer"):
            compare(collection, runs, "alpha-nDCG@20", test="randomisation", permutations=permutations)
    with pytest.raises(EvaluationError, match="baseline 'nope' is not among the runs"):
        compare(collection, runs, "alpha-nDCG@20", baseline="nope")
    with pytest.raises(EvaluationError, match="at least two runs"):
        compare(collection, runs[:1], "alpha-nDCG@20")
    # per_subtopic=True passed on to evaluate made each topic's subtopics further 'topics' (3 NTCIR topics: n_topics 11,
    # p 0.015 where the 3 topics give 0.157); per_topic=False failed inside with "got multiple values"
    for option, value in (("per_subtopic", True), ("per_topic", False)):
        with pytest.raises(TypeError, match=f"^compare\\(\\) takes no {option}=: it tests the runs' scores per topic"):
            compare(collection, runs, "alpha-nDCG@20", **{option: value})


def test_the_baseline_as_a_name_a_run_file_or_a_run(collection, runs) -> None:
    """What --baseline takes, the API takes too: a run's name, its file, or the Run itself."""
    files = [REF / "runs" / "public" / f"pub-{name}.run" for name in NAMES[:3]]
    by_name = compare(collection, files, "alpha-nDCG@20", baseline="pub-noisyrel")
    assert by_name[["run_a", "run_b"]].values.tolist() == [["pub-noisyrel", "pub-greedyrr"], ["pub-noisyrel", "pub-random"]]
    for baseline in (str(files[1]), files[1], runs[1]):
        assert compare(collection, files, "alpha-nDCG@20", baseline=baseline).equals(by_name)
    with pytest.raises(EvaluationError, match=r"^baseline .*pub-short\.run' \(run pub-short\) is not among the runs: pub-greedyrr, "):
        compare(collection, files, "alpha-nDCG@20", baseline=REF / "runs" / "public" / "pub-short.run")


def test_a_dict_of_runs_names_them_by_its_keys(collection, runs) -> None:
    """{name: file or Run}, as a ranx user writes it: the keys name the runs (a file's tag gives way) and the baseline
    may be given by key, by the same file or by the same Run; the scores are the files' own."""
    files = {"bm25": REF / "runs" / "public" / "pub-greedyrr.run", "dense": REF / "runs" / "public" / "pub-random.run"}
    keyed = compare(collection, files, "alpha-nDCG@20", baseline="bm25")
    by_tag = compare(collection, list(files.values()), "alpha-nDCG@20", baseline="pub-greedyrr")
    assert keyed[["run_a", "run_b"]].values.tolist() == [["bm25", "dense"]]
    assert keyed.drop(columns=["run_a", "run_b"]).equals(by_tag.drop(columns=["run_a", "run_b"]))
    for baseline in (files["bm25"], str(files["bm25"])):
        assert compare(collection, files, "alpha-nDCG@20", baseline=baseline).equals(keyed)
    objects = {"first": runs[0], "second": runs[1]}
    by_object = compare(collection, objects, "alpha-nDCG@20", baseline=runs[1])
    assert by_object[["run_a", "run_b"]].values.tolist() == [["second", "first"]]
    assert runs[0].name == "pub-greedyrr"  # the caller's Run keeps its own name
    frame = evaluate(collection, {"bm25": files["bm25"]}, "alpha-nDCG@20")
    assert frame["run"].tolist() == ["bm25"]
    with pytest.raises(EvaluationError, match="non-empty name"):
        evaluate(collection, {"": files["bm25"]}, "alpha-nDCG@20")


def test_effect_size_and_p_at_the_edges() -> None:
    """docs/evaluation.md#comparing-runs: equal runs d_z 0 and p 1; a constant non-zero difference d_z inf and the
    t-test's p 0 (scipy's); checked on P@2 with every topic +0.5."""
    qrels = pd.DataFrame({"query_id": [t for t in "123" for _ in range(3)], "doc_id": list("abc") * 3, "relevance": [1, 1, 0] * 3})
    low, high = Run("low", {t: ["a", "c", "x"] for t in "123"}), Run("high", {t: ["a", "b", "c"] for t in "123"})
    row = compare(qrels, [low, high], "P@2").iloc[0]
    assert (row["diff"], row["effect_size"], row["p_value"]) == (0.5, np.inf, 0.0)
    row = compare(qrels, {"x": low, "y": low}, "P@2").iloc[0]
    assert (row["diff"], row["effect_size"], row["p_value"]) == (0.0, 0.0, 1.0)


def test_a_measure_asked_for_twice_is_compared_once(collection, runs) -> None:
    """It raised pandas' 'Index contains duplicate entries, cannot reshape', naming neither the measure nor the cause."""
    once = compare(collection, runs[:3], ["alpha-nDCG@20"])
    twice = compare(collection, runs[:3], ["alpha-nDCG@20", "alpha-nDCG@20"])
    pd.testing.assert_frame_equal(pd.DataFrame(twice), pd.DataFrame(once))
