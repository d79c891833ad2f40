"""A measure undefined on some topics is left out there for that measure only (docs/meta.md#inputs).

The collection: TREC 2014 qrels and the 8 public runs *without* an intents file, so every topic
has uniform weights and PMP@10 is undefined (NaN) on every topic with more than one relevant
intent. Adding PMP@10 to discpower, rankcorr, intuitiveness and agreement must leave every number
of every other measure unchanged (through the API and through the CLI), PMP's own rows must rest
on its own topics (the ``topics`` / ``n`` columns say so), and the warning must name PMP@10, its
topics and the true reason (equal kept weights), not "no relevant documents".
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evaluation.exceptions import EvaluationError, EvaluationWarning
from evaluation.meta._matrix import ScoreCube, score_cube
from evaluation.meta.agreement import agreement_with_users
from evaluation.meta.cli import main
from evaluation.meta.correlation import rankcorr_table
from evaluation.meta.intuitiveness import concordance_test
from evaluation.meta.levels import preference_items
from evaluation.meta.significance import discriminative_power
from evaluation.meta.simulate import UserModel, planted_truth, simulate_preferences
from evaluation.meta.unanimity import metric_unanimity
from tests.evaluation.meta.conftest import QRELS, RUNS, read

OTHERS = ["alpha-nDCG@10", "D#-nDCG@10", "nERR-IA@10", "I-rec@10", "Prec@10", "D-Q@10"]
UNDEFINED = "PMP@10"


@pytest.fixture(scope="module")
def uniform_scores() -> pd.DataFrame:
    from evaluation import evaluate, load_collection, read_run

    collection = load_collection(QRELS)  # no intents: uniform weights
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return evaluate(collection, [read_run(p) for p in RUNS], [*OTHERS, UNDEFINED], per_topic=True)


@pytest.fixture(scope="module")
def files(uniform_scores, tmp_path_factory) -> dict[str, Path]:
    from evaluation.io.scores import write_scores

    folder = tmp_path_factory.mktemp("uniform")
    scores = folder / "scores.tsv"
    write_scores(uniform_scores, scores)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cube = score_cube(uniform_scores, OTHERS)
    votes = simulate_preferences(cube, "D#-nDCG@10", UserModel(noise=1.0, annotators=3), rng=5)
    prefs = folder / "prefs.tsv"
    votes[["topic", "run_a", "run_b", "value", "level", "annotator"]].to_csv(prefs, sep="\t", index=False)
    return {"scores": scores, "prefs": prefs, "dir": folder}


def _undefined_topics(scores: pd.DataFrame) -> list[str]:
    rows = scores[(scores["measure"] == UNDEFINED) & (scores["topic"] != "all")]
    return sorted(set(rows.loc[rows["value"].isna(), "topic"]), key=int)


def test_the_warning_names_the_measure_the_topics_and_the_true_reason(uniform_scores) -> None:
    undefined = _undefined_topics(uniform_scores)
    assert 0 < len(undefined) < 50  # PMP is defined where one intent alone has relevant documents
    with pytest.warns(EvaluationWarning) as caught:
        cube = score_cube(uniform_scores, [*OTHERS, UNDEFINED])
    messages = [str(w.message) for w in caught]
    (message,) = [m for m in messages if UNDEFINED in m]
    assert f"undefined on {len(undefined)} of 50 topics" in message
    assert ", ".join(undefined) in message
    assert "kept intent weights are all equal" in message and "no relevant documents" not in message
    assert len(cube.topics) == 50  # nothing dropped for the other measures
    assert cube.topic_counts().tolist() == [50] * len(OTHERS) + [50 - len(undefined)]


def test_api_numbers_of_the_other_measures_do_not_change(uniform_scores) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        without = score_cube(uniform_scores, OTHERS)
        with_pmp = score_cube(uniform_scores, [*OTHERS, UNDEFINED])
    n_pmp = int(with_pmp.topic_counts()[-1])

    p0 = discriminative_power(without, B=200, rng=1)
    p1 = discriminative_power(with_pmp, B=200, rng=1)
    pd.testing.assert_frame_equal(p1.summary.iloc[: len(OTHERS)], p0.summary)
    pd.testing.assert_frame_equal(p1.pairs.iloc[: len(p0.pairs)], p0.pairs)
    assert p1.summary["topics"].iloc[-1] == n_pmp
    # PMP's own power is the power on its own topics
    alone = discriminative_power(
        with_pmp.restrict(measures=[UNDEFINED], topics=list(np.array(with_pmp.topics)[with_pmp.defined[-1]])), B=200, rng=1
    )
    assert p1.summary["topics"].iloc[-1] == alone.summary["topics"].iloc[0]
    assert alone.summary["power"].iloc[0] == pytest.approx(p1.summary["power"].iloc[-1], abs=0.15)  # other resamples

    t0, t1 = discriminative_power(without, test="tukey", B=100, rng=2), discriminative_power(with_pmp, test="tukey", B=100, rng=2)
    pd.testing.assert_frame_equal(t1.summary.iloc[: len(OTHERS)], t0.summary)

    r0, r1 = rankcorr_table(without), rankcorr_table(with_pmp)
    kept = r1[(r1["measure_a"] != UNDEFINED) & (r1["measure_b"] != UNDEFINED)].reset_index(drop=True)
    pd.testing.assert_frame_equal(kept, r0)
    pmp_rows = r1[r1["measure_b"] == UNDEFINED]
    assert (pmp_rows["topics_b"] == n_pmp).all() and (pmp_rows["topics_a"] == 50).all()
    assert pmp_rows["tau"].notna().all()

    gold = ["I-rec@10"]
    c0 = concordance_test(without, gold, [m for m in OTHERS if m not in gold])
    c1 = concordance_test(with_pmp, gold, [m for m in [*OTHERS, UNDEFINED] if m not in gold])
    kept = c1[(c1["measure_1"] != UNDEFINED) & (c1["measure_2"] != UNDEFINED)].reset_index(drop=True)
    # p_adjusted is Holm over the family of each gold standard: one more candidate, a larger family
    pd.testing.assert_frame_equal(kept.drop(columns="p_adjusted"), c0.drop(columns="p_adjusted"))
    assert (c1.loc[c1["measure_2"] == UNDEFINED, "topics"] == n_pmp).all()
    # PMP as a gold standard: its rows rest on its topics, the I-rec rows do not change
    g1 = concordance_test(with_pmp, ["I-rec@10", UNDEFINED], ["alpha-nDCG@10", "Prec@10", "D-Q@10"])
    g0 = concordance_test(without, ["I-rec@10"], ["alpha-nDCG@10", "Prec@10", "D-Q@10"])
    pd.testing.assert_frame_equal(g1[g1["gold"] == "I-rec@10"].reset_index(drop=True), g0)
    assert (g1.loc[g1["gold"].isin([UNDEFINED, "all"]), "topics"] == n_pmp).all()


def test_api_agreement_of_the_other_measures_does_not_change(uniform_scores, files) -> None:
    from evaluation.io.preferences import read_preferences

    items = preference_items(read_preferences(files["prefs"]), "topic")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a0 = agreement_with_users(items, uniform_scores, OTHERS, B=100, rng=4).table
        a1 = agreement_with_users(items, uniform_scores, [*OTHERS, UNDEFINED], B=100, rng=4).table
    kept = a1[a1["measure"] != UNDEFINED].reset_index(drop=True)
    pd.testing.assert_frame_equal(kept, a0, check_exact=False, rtol=0, atol=1e-12)
    assert (kept["n"] == a0["n"]).all()
    pmp = a1[(a1["measure"] == UNDEFINED) & (a1["subset"] == "all")]
    n_pmp = 28 * (50 - len(_undefined_topics(uniform_scores)))  # 28 run pairs per topic
    assert (pmp["n"] == n_pmp).all() and pmp["value"].notna().all()


def _cli(files: dict[str, Path], name: str, command: list[str]) -> pd.DataFrame:
    out = files["dir"] / f"{name}.tsv"
    assert main([*command, "--scores", str(files["scores"]), "-o", str(out)]) == 0
    return read(out)


@pytest.mark.parametrize(
    ("command", "key"),
    [
        (["discpower", "--B", "200", "--seed", "1"], ["measure"]),
        (["rankcorr"], ["measure_a", "measure_b"]),
        (["intuitiveness", "--gold", "I-rec@10"], ["gold", "measure_1", "measure_2"]),
    ],
    ids=["discpower", "rankcorr", "intuitiveness"],
)
def test_cli_numbers_of_the_other_measures_do_not_change(files, command, key) -> None:
    name = command[0]
    t0 = _cli(files, f"{name}-without", [*command, "--measures", *OTHERS])
    t1 = _cli(files, f"{name}-with", [*command, "--measures", *OTHERS, UNDEFINED])
    kept = t1[~t1[key].isin([UNDEFINED]).any(axis=1)].reset_index(drop=True)
    # p_adjusted (intuitiveness) is Holm over each gold standard's family, which the extra candidate enlarges
    family = ["seed", "p_adjusted"]
    pd.testing.assert_frame_equal(kept.drop(columns=family, errors="ignore"), t0.drop(columns=family, errors="ignore"))
    assert len(t1) > len(t0)


def test_cli_agreement_of_the_other_measures_does_not_change(files, capsys) -> None:
    base = ["agreement", "--preferences", str(files["prefs"]), "--bootstrap", "100", "--seed", "2"]
    t0 = _cli(files, "agreement-without", [*base, "--measures", *OTHERS])
    t1 = _cli(files, "agreement-with", [*base, "--measures", *OTHERS, UNDEFINED])
    kept = t1[t1["measure"] != UNDEFINED].reset_index(drop=True)
    pd.testing.assert_frame_equal(kept, t0, check_exact=False, rtol=0, atol=1e-12)
    err = capsys.readouterr().err
    assert f"warning: {UNDEFINED} is undefined on" in err and "kept intent weights are all equal" in err


def test_pmp_equal_tie_is_defined_everywhere_and_documented(uniform_scores) -> None:
    from evaluation import evaluate, load_collection, read_run

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scores = evaluate(load_collection(QRELS), [read_run(p) for p in RUNS], ["PMP(pmp_equal=tie)@10", UNDEFINED], per_topic=True)
    per_topic = scores[scores["topic"] != "all"].pivot_table(index=["run", "topic"], columns="measure", values="value", dropna=False)
    tie = per_topic["PMP(pmp_equal=tie)@10"]
    default = per_topic[UNDEFINED]
    # where PMP is defined the option changes nothing; elsewhere it has a value (topics with relevant documents)
    assert (tie[default.notna()] == default[default.notna()]).all()
    assert tie[default.isna()].notna().sum() > 0
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        score_cube(scores, ["PMP(pmp_equal=tie)@10"])
    assert not [w for w in caught if "undefined on" in str(w.message)]


def test_topics_undefined_for_every_measure_are_dropped_as_empty() -> None:
    rows = [
        (r, t, m, np.nan if t == "3" else float(j + k) / 10) for j, r in enumerate("AB") for t in "123" for k, m in enumerate(["M1", "M2"])
    ]
    scores = pd.DataFrame(rows, columns=["run", "topic", "measure", "value"])
    with pytest.warns(
        EvaluationWarning, match=r"topic 3 has NaN scores for every run and every measure \(no relevant documents\) and is left out"
    ):
        cube = score_cube(scores)
    assert cube.topics == ("1", "2") and cube.complete
    scores.loc[scores["topic"] != "3", "value"] = np.nan
    with pytest.raises(EvaluationError, match="every topic has NaN scores"):
        score_cube(scores)


def _cube_with_hole() -> ScoreCube:
    rng = np.random.default_rng(0)
    values = rng.random((3, 6, 4))
    values[2, [1, 4], :] = np.nan  # M3 undefined on topics 1 and 4
    return ScoreCube(values, ("M1", "M2", "M3"), tuple(str(t) for t in range(6)), tuple(f"r{j}" for j in range(4)))


def test_cube_groups_means_and_common_topics() -> None:
    cube = _cube_with_hole()
    groups = cube.groups()
    assert [g.measures for g in groups] == [("M1", "M2"), ("M3",)]
    assert groups[1].topics == ("0", "2", "3", "5") and groups[1].complete
    np.testing.assert_allclose(cube.means()["M3"], np.nanmean(cube.values[2], axis=0))
    with pytest.warns(EvaluationWarning, match=r"topics 1, 4 are left out because M3 is undefined there"):
        common = cube.common(why="metric unanimity")
    assert common.topics == ("0", "2", "3", "5")
    with pytest.warns(EvaluationWarning, match="metric unanimity"):
        table = metric_unanimity(cube)
    assert (table["pairs"] == 4 * 4 * 3).all()


def test_a_measure_undefined_everywhere_gives_nan_rows_not_errors() -> None:
    cube = _cube_with_hole()
    values = cube.values.copy()
    values[2] = np.nan
    cube = ScoreCube(values, cube.measures, cube.topics, cube.runs)
    power = discriminative_power(cube, B=50, rng=1).summary
    assert power["topics"].tolist() == [6, 6, 0] and np.isnan(power["power"].iloc[2]) and power["power"].iloc[:2].notna().all()
    table = rankcorr_table(cube)
    assert table.loc[table["measure_b"] == "M3", "tau"].isna().all()


def test_planted_truth_must_be_defined_everywhere_candidates_need_not() -> None:
    cube = _cube_with_hole()
    with pytest.raises(EvaluationError, match="truth M3 is undefined on topic"):
        planted_truth(cube, ["M3"], noise=[1.0], n_sim=5, rng=1)
    result = planted_truth(cube, ["M1"], noise=[1.0], n_sim=20, rng=1).table
    assert result["candidates"].iloc[0] == 3 and 0 <= result["first_by_MUP"].iloc[0] <= 1


def test_topic_set_reduction_needs_a_reference_defined_everywhere() -> None:
    from evaluation.meta.reduction import topic_set_reduction

    cube = _cube_with_hole()
    with pytest.raises(EvaluationError, match=r"reference M3 is undefined on topics 1, 4"):
        topic_set_reduction(cube, "M3", [4], B=20, rng=1)
    table = topic_set_reduction(cube, "M1", [4], B=20, rng=1)
    assert set(table["measure"]) == {"M1", "M2", "M3"} and table["power"].notna().all()
