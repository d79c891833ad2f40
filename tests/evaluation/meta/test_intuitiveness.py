"""Concordance (intuitiveness) test: docs/metrics.md#intuitiveness worked example, tie rules, Table 2 layout."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from evaluation.exceptions import EvaluationError
from evaluation.meta._matrix import ScoreCube
from evaluation.meta.intuitiveness import COLUMNS, cell_order, concordance_test, intuitiveness_scores, ordering_agreement
from evaluation.meta.userprefs import adjust_p
from evaluation.report.tables import concordance_matrix

# docs/metrics.md#intuitiveness: 2 topics x 3 runs.
EXAMPLE = ScoreCube(
    np.array(
        [
            [[0.5, 0.4, 0.3], [0.2, 0.7, 0.7]],  # M1
            [[0.3, 0.6, 0.2], [0.4, 0.1, 0.9]],  # M2
            [[0.5, 1.0, 0.5], [0.5, 0.5, 1.0]],  # I-rec
        ]
    ),
    ("M1", "M2", "I-rec"),
    ("t1", "t2"),
    ("r1", "r2", "r3"),
)


def test_worked_example() -> None:
    row = concordance_test(EXAMPLE, ["I-rec"]).iloc[0]
    assert (row["gold"], row["measure_1"], row["measure_2"]) == ("I-rec", "M1", "M2")
    assert row["disagreements"] == 2  # t1 (r1, r2) and t2 (r1, r2); t2 (r2, r3) is an M1 tie
    assert row["concordance_1"] == pytest.approx(0.5) and row["concordance_2"] == pytest.approx(1.0)
    assert (row["a"], row["b"], row["p"]) == (0, 1, 1.0)


def test_gold_ties_can_count_for_neither() -> None:
    row = concordance_test(EXAMPLE, ["I-rec"], gs_tie="neither").iloc[0]
    assert row["concordance_1"] == pytest.approx(0.0) and row["concordance_2"] == pytest.approx(0.5)


def test_all_gold_extension_requires_every_gold_standard() -> None:
    values = np.concatenate([EXAMPLE.values, EXAMPLE.values[:1]])  # second gold = M1 itself
    cube = ScoreCube(values, ("M1", "M2", "I-rec", "G2"), EXAMPLE.topics, EXAMPLE.runs)
    table = concordance_test(cube, ["I-rec", "G2"]).set_index("gold")
    assert list(table.index) == ["I-rec", "G2", "all"]
    assert table.loc["G2", "concordance_1"] == 1.0 and table.loc["G2", "concordance_2"] == 0.0
    # all: M1 agrees with both only on the gold tie; M2 agrees with I-rec twice but never with G2
    assert table.loc["all", "concordance_1"] == pytest.approx(0.5) and table.loc["all", "concordance_2"] == 0.0


def test_sign_test_and_table2_layout() -> None:
    rng = np.random.default_rng(0)
    gold = rng.random((30, 4))
    good = gold + rng.normal(0, 0.05, gold.shape)
    bad = rng.random((30, 4))
    cube = ScoreCube(
        np.stack([good, bad, rng.random((30, 4)), gold]), ("good", "bad", "other", "GS"), tuple(map(str, range(30))), ("a", "b", "c", "d")
    )
    table = concordance_test(cube, ["GS"])
    row = table[(table["measure_1"] == "good") & (table["measure_2"] == "bad")].iloc[0]
    assert row["concordance_1"] > row["concordance_2"] and row["a"] > row["b"] and row["p"] < 0.01
    matrix = concordance_matrix(table, "GS")
    n = row["disagreements"]
    assert matrix.loc["good", "bad"] == f"{row['concordance_1']:.3f}/{row['concordance_2']:.3f} ({n})"
    assert matrix.loc["bad", "good"] == f"{row['concordance_2']:.3f}/{row['concordance_1']:.3f} ({n})"
    assert matrix.loc["good", "good"] == ""
    scores = intuitiveness_scores(table)
    assert scores.set_index("measure").loc["good", "score"] > scores.set_index("measure").loc["bad", "score"]
    mup = pd.Series({"good": 0.9, "other": 0.2, "bad": 0.1})
    ordering = ordering_agreement(scores, mup)
    assert ordering["gold"].tolist() == ["GS"] and ordering["measures"].iloc[0] == 3


def test_tau_b_between_mup_order_and_intuitiveness_order_by_hand() -> None:
    """Chen et al. §6.1 on a hand-made concordance table.

    Gold G, candidates A, B, C, D. Intuitiveness score = mean concordance over a metric's
    comparisons: A (0.8 + 0.6 + 0.9) / 3 = 0.7667, B (0.4 + 0.7 + 0.4) / 3 = 0.5, C (0.5 + 0.3 + 0.7)
    / 3 = 0.5, D (0.2 + 0.6 + 0.3) / 3 = 0.3667; the (A, E) row without disagreements has NaN
    concordances and counts for neither, so E has no score and is left out of the ordering.
    MUP: A 0.1, B 0.5, C 0.4, D 0.2. Over the 6 metric pairs: (A,B) discordant, (A,C) discordant,
    (A,D) discordant, (B,C) tied in intuitiveness, (B,D) concordant, (C,D) concordant:
    tau_b = (2 - 3) / sqrt((6 - 1) (6 - 0)) = -1 / sqrt(30).
    """
    rows = [
        ("A", "B", 10, 0.8, 0.4),
        ("A", "C", 10, 0.6, 0.5),
        ("A", "D", 10, 0.9, 0.2),
        ("B", "C", 10, 0.7, 0.3),
        ("B", "D", 10, 0.4, 0.6),
        ("C", "D", 10, 0.7, 0.3),
        ("A", "E", 0, np.nan, np.nan),  # no disagreement: no information for either
    ]
    table = pd.DataFrame([("G", r[0], r[1], 5, *r[2:], 0, 0, 1.0, 1.0) for r in rows], columns=COLUMNS)
    scores = intuitiveness_scores(table).set_index("measure")
    assert scores["score"].to_dict() == pytest.approx({"A": 2.3 / 3, "B": 1.5 / 3, "C": 1.5 / 3, "D": 1.1 / 3})
    assert scores["comparisons"].to_dict() == {"A": 3, "B": 3, "C": 3, "D": 3}  # E never compared
    mup = pd.Series({"A": 0.1, "B": 0.5, "C": 0.4, "D": 0.2, "E": 0.9})
    ordering = ordering_agreement(intuitiveness_scores(table), mup)
    assert ordering[["gold", "measures"]].values.tolist() == [["G", 4]]
    assert ordering["tau_b"].iloc[0] == pytest.approx(-1 / np.sqrt(30))
    assert ordering["tau_b"].iloc[0] == pytest.approx(sps.kendalltau([2.3, 1.5, 1.5, 1.1], [0.1, 0.5, 0.4, 0.2]).statistic)
    # Chen et al.'s cell-wise reading over the same Table 2: a cell agrees when its concordances are
    # ordered as the MUPs. (A,B) .8>.4 but MUP .1<.5: -1; (A,C) -1; (A,D) -1; (B,C) .7>.3, .5>.4: +1;
    # (B,D) .4<.6 but .5>.2: -1; (C,D) +1; (A,E) has no concordances: not a cell. (2 - 4) / 6.
    cellwise = ordering_agreement(intuitiveness_scores(table), mup, table)
    assert cellwise[["cells", "agree", "disagree"]].values.tolist() == [[6, 2, 4]]
    assert cellwise["tau_cells"].iloc[0] == pytest.approx(-1 / 3)
    assert cellwise["tau_b"].iloc[0] == ordering["tau_b"].iloc[0]  # the per-metric reading is kept
    flagged = cell_order(table, mup).set_index(["measure_1", "measure_2"])["order_vs_mup"]
    assert flagged.drop(("A", "E")).to_dict() == {
        ("A", "B"): -1,
        ("A", "C"): -1,
        ("A", "D"): -1,
        ("B", "C"): 1,
        ("B", "D"): -1,
        ("C", "D"): 1,
    }
    assert np.isnan(flagged[("A", "E")])
    tied = cell_order(table, pd.Series({"A": 0.5, "B": 0.5, "C": 0.4, "D": 0.2, "E": 0.9})).set_index(["measure_1", "measure_2"])
    assert tied.loc[("A", "B"), "order_vs_mup"] == 0  # equal MUP: a tie, counted in cells only


def test_cellwise_reading_over_the_papers_28_cells_cannot_give_its_printed_values() -> None:
    """Chen et al.'s Table 2 has 8 metrics, 28 cells, each with disagreements. Counted with this rule, an
    audit of that table found 8 cells ordered as MUP and 20 reversed (I-rec) and 17 and 9 with 2 ties
    (Ef-P): -12/28 = -0.429 and 8/28 = 0.286. The printed -0.407 and 0.333 are -11/27 and 9/27: with
    |agree - disagree| = 12 no denominator of at most 28 cells reaches 0.407, so no count over those 28
    cells gives them (docs/meta.md#intuitiveness)."""
    names = [f"M{i}" for i in range(8)]
    pairs = [(a, b) for i, a in enumerate(names) for b in names[i + 1 :]]
    mup = pd.Series({m: 1.0 - i / 10 for i, m in enumerate(names)})  # M0 best
    for agree, disagree, ties, want in ((8, 20, 0, -0.429), (17, 9, 2, 0.286)):
        kinds = ["agree"] * agree + ["disagree"] * disagree + ["tie"] * ties
        rows = []
        for (a, b), kind in zip(pairs, kinds, strict=True):
            c1, c2 = {"agree": (0.7, 0.3), "disagree": (0.3, 0.7), "tie": (0.5, 0.5)}[kind]
            rows.append(("G", a, b, 5, 10, c1, c2, 0, 0, 1.0, 1.0))
        table = pd.DataFrame(rows, columns=COLUMNS)
        result = ordering_agreement(intuitiveness_scores(table), mup, table)
        assert result[["cells", "agree", "disagree"]].values.tolist() == [[28, agree, disagree]]
        assert round(result["tau_cells"].iloc[0], 3) == want
        assert abs(agree - disagree) / 28 != pytest.approx({-0.429: 0.407, 0.286: 0.333}[want], abs=5e-4)


def test_cellwise_reading_is_undefined_when_no_cell_is_ordered() -> None:
    """A constant gold standard makes every disagreement a gold tie: both concordances 1 in every cell,
    no cell ordered either way; tau_cells is NaN (undefined), not 0.0."""
    rows = [("G", a, b, 5, 10, 1.0, 1.0, 0, 0, 1.0, 1.0) for a, b in (("A", "B"), ("A", "C"), ("B", "C"))]
    table = pd.DataFrame(rows, columns=COLUMNS)
    result = ordering_agreement(intuitiveness_scores(table), pd.Series({"A": 0.3, "B": 0.2, "C": 0.1}), table)
    assert result[["cells", "agree", "disagree"]].values.tolist() == [[3, 0, 0]]
    assert np.isnan(result["tau_cells"].iloc[0])


def test_p_values_are_adjusted_within_each_gold_standard_and_the_raw_ones_kept() -> None:
    rng = np.random.default_rng(4)
    values = rng.random((6, 30, 4))
    values[1] = values[0] + 0.3 * rng.random((30, 4))  # a close pair: its p is small, the others' not
    cube = ScoreCube(values, ("M1", "M2", "M3", "M4", "G1", "G2"), tuple(map(str, range(30))), ("a", "b", "c", "d"))
    table = concordance_test(cube, ["G1", "G2"])
    assert set(table["gold"]) == {"G1", "G2", "all"}
    for _, group in table.groupby("gold"):
        assert len(group) == 6  # one family: the 6 candidate pairs of this gold standard
        np.testing.assert_allclose(group["p_adjusted"], adjust_p(group["p"].to_numpy(), "holm"))
    assert (table["p_adjusted"] >= table["p"] - 1e-15).all() and (table["p_adjusted"] > table["p"]).any()


def test_needs_two_candidates_and_a_gold() -> None:
    with pytest.raises(EvaluationError, match="at least 2 candidate"):
        concordance_test(EXAMPLE, ["I-rec", "M2"])
    with pytest.raises(EvaluationError, match="gold-standard"):
        concordance_test(EXAMPLE, [])
    with pytest.raises(ValueError, match="gs_tie"):
        concordance_test(EXAMPLE, ["I-rec"], gs_tie="half")


def test_sign_test_p_equals_scipys_binomtest() -> None:
    from evaluation.meta.intuitiveness import sign_test_p

    a, b = np.meshgrid(np.arange(0, 80), np.arange(0, 80))
    got = sign_test_p(a.ravel(), b.ravel())
    want = [sps.binomtest(int(x), int(x + y), 0.5).pvalue if x + y else 1.0 for x, y in zip(a.ravel(), b.ravel())]
    assert np.allclose(got, want, rtol=1e-13, atol=0)
    assert got[0] == 1.0  # a = b = 0
