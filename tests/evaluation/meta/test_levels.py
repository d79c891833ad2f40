"""Agreement at the weighted level (docs/metrics.md#weighted-topic-preference) and at the subtopic level, end to end through the
API and the CLI, on a two-topic study small enough to check by hand."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluation.exceptions import EvaluationWarning
from evaluation.io.intents import read_intents
from evaluation.io.preferences import read_preferences
from evaluation.io.scores import read_scores
from evaluation.meta.agreement import agreement_with_users
from evaluation.meta.cli import main
from evaluation.meta.levels import intent_weights, preference_items

from .conftest import read

# Subtopic-level answers (two annotators on some items). Topic 1 keeps subtopics 1 and 2 (3 has
# no answers): weights 0.6 and 0.3 renormalise to 2/3 and 1/3; topic 2 keeps 1 and 2 at 1/2 each.
# The reversed row "1 B A 3 (subtopic 2)" means A is preferred: canonical (A, B) -3.
PREFERENCES = """topic\trun_a\trun_b\tvalue\tlevel\tsubtopic\tannotator
1\tA\tB\t3\tsubtopic\t1\tw1
1\tA\tB\t1\tsubtopic\t1\tw2
1\tB\tA\t3\tsubtopic\t2\tw1
1\tA\tB\t-3\tsubtopic\t2\tw2
1\tA\tC\t2\tsubtopic\t1\tw1
1\tA\tC\t4\tsubtopic\t2\tw1
1\tB\tC\t-1\tsubtopic\t1\tw1
1\tB\tC\t1\tsubtopic\t2\tw1
2\tA\tB\t0\tsubtopic\t1\tw1
2\tA\tB\t-2\tsubtopic\t2\tw1
2\tA\tC\t1\tsubtopic\t1\tw1
1\tA\tB\t-4\ttopic\t\tw1
"""
INTENTS = "1 1 0.6\n1 2 0.3\n1 3 0.1\n2 1 0.5\n2 2 0.5\n"
# Topic-level metric values (compared with the weighted preference) and per-subtopic values
# stored under topic '<topic>/<subtopic>' (compared with subtopic-level preferences).
SCORES = {
    "1": {"M": (0.2, 0.5, 0.6), "N": (0.5, 0.5, 0.2)},
    "2": {"M": (0.6, 0.1, 0.3), "N": (0.3, 0.3, 0.3)},
    "1/1": {"M": (0.1, 0.3, 0.2), "N": (0.0, 0.0, 0.0)},
    "1/2": {"M": (0.5, 0.2, 0.5), "N": (0.0, 0.0, 0.0)},
    "2/1": {"M": (0.4, 0.4, 0.1), "N": (0.0, 0.0, 0.0)},
    "2/2": {"M": (0.3, 0.6, 0.6), "N": (0.0, 0.0, 0.0)},
}

# Weighted level. p: (1,A,B) 2/3*2 + 1/3*(-3) = 1/3; (1,A,C) 2/3*2 + 1/3*4 = 8/3;
# (1,B,C) 2/3*(-1) + 1/3*1 = -1/3; (2,A,B) 1/2*0 + 1/2*(-2) = -1; (2,A,C) lacks subtopic 2: NaN,
# left out. sum u = 13/3.
# M: d = +0.3, +0.4, +0.1, -0.5 -> J = +1, +1, -1, +1: tau = tau_b = 2/4, MUP = (11/3)/(13/3).
# N: d = 0, -0.3, -0.3, 0 -> J = 0, -1, +1, 0: MUP = (-7/3)/(13/3); metric-tie weight 4/3:
# MUP_b = (-7/3)/sqrt(3 * 13/3), published (-7/3)/sqrt((13/3 + 4/3) * 13/3).
WEIGHTED = {
    ("M", "tau"): 0.5,
    ("M", "tau_b"): 0.5,
    ("M", "MUP"): 11 / 13,
    ("N", "tau"): 0.0,
    ("N", "MUP"): -7 / 13,
    ("N", "MUP_b"): -7 / 3 / math.sqrt(13),
    ("N", "MUP_b_published"): -7 / 3 / math.sqrt(17 / 3 * 13 / 3),
}
# Subtopic level: 9 items; p = 2, -3, 2, 4, -1, 1, 0, -2, 1 (1/1 AB, 1/2 AB, 1/1 AC, 1/2 AC,
# 1/1 BC, 1/2 BC, 2/1 AB, 2/2 AB, 2/1 AC); M: d = +.2, -.3, +.1, 0, -.1, +.3, 0, +.3, -.3
# -> J = +1, +1, +1, 0, +1, +1, 0, -1, -1: A = 5, D = 2, n_M = 2, n_U = 1; sum u = 16,
# sum uJ = 6, metric-only tie weight 4.
SUBTOPIC = {
    ("M", "tau"): 3 / 9,
    ("M", "tau_b"): 3 / math.sqrt(7 * 8),
    ("M", "MUP"): 6 / 16,
    ("M", "MUP_b"): 6 / math.sqrt(12 * 16),
    ("M", "MUP_b_published"): 6 / math.sqrt(20 * 16),
}


@pytest.fixture()
def files(tmp_path: Path) -> dict[str, Path]:
    paths = {"prefs": tmp_path / "prefs.tsv", "intents": tmp_path / "iprob.txt", "scores": tmp_path / "scores.tsv"}
    paths["prefs"].write_text(PREFERENCES)
    paths["intents"].write_text(INTENTS)
    rows = [
        f"{run}\t{topic}\t{measure}\t{value}"
        for topic, by_measure in SCORES.items()
        for measure, values in by_measure.items()
        for run, value in zip("ABC", values)
    ]
    paths["scores"].write_text("run\ttopic\tmeasure\tvalue\n" + "\n".join(rows) + "\n")
    return paths


def check(table, expected: dict[tuple[str, str], float], n: int) -> None:
    rows = table[table["subset"] == "all"].set_index(["measure", "statistic"])
    for key, value in expected.items():
        assert rows.loc[key, "value"] == pytest.approx(value, abs=1e-12), key
    assert set(rows["n"]) == {n}


def test_weighted_items_are_the_renormalised_weighted_means(files) -> None:
    items = preference_items(read_preferences(files["prefs"]), "weighted", intent_weights(read_intents(files["intents"])))
    by_pair = items.set_index(["topic", "run_a", "run_b"])["p"]
    np.testing.assert_allclose(
        by_pair.loc[[("1", "A", "B"), ("1", "A", "C"), ("1", "B", "C"), ("2", "A", "B")]], [1 / 3, 8 / 3, -1 / 3, -1]
    )
    assert np.isnan(by_pair.loc[("2", "A", "C")])


def test_weighted_level_through_the_api(files) -> None:
    items = preference_items(read_preferences(files["prefs"]), "weighted", intent_weights(read_intents(files["intents"])))
    with pytest.warns(EvaluationWarning, match="1 run pair"):
        table = agreement_with_users(items, read_scores(files["scores"]), ["M", "N"]).table
    check(table, WEIGHTED, n=4)


def test_subtopic_level_through_the_api(files) -> None:
    items = preference_items(read_preferences(files["prefs"]), "subtopic")
    assert sorted(set(items["key"])) == ["1/1", "1/2", "2/1", "2/2"] and len(items) == 9
    table = agreement_with_users(items, read_scores(files["scores"]), ["M"]).table
    check(table, SUBTOPIC, n=9)
    n = table[table["statistic"] == "MUP"].set_index("subset")["n"]
    assert [n[s] for s in ("(0-1]", "(1-2]", "(2-3]", "(3-4]")] == [3, 3, 1, 1]  # u = 0 is in none


def test_weighted_and_subtopic_levels_through_the_cli(files, tmp_path: Path, capsys) -> None:
    common = ["agreement", "--scores", str(files["scores"]), "--preferences", str(files["prefs"])]
    weighted = tmp_path / "weighted.tsv"
    assert main([*common, "--level", "weighted", "--intents", str(files["intents"]), "--measures", "M", "N", "-o", str(weighted)]) == 0
    assert "warning: 1 run pair lacks answers for a kept subtopic" in capsys.readouterr().err
    check(read(weighted), WEIGHTED, n=4)
    subtopic = tmp_path / "subtopic.tsv"
    assert main([*common, "--level", "subtopic", "--measures", "M", "-o", str(subtopic)]) == 0
    check(read(subtopic), SUBTOPIC, n=9)


# -- subrange boundaries of weighted preferences (docs/metrics.md#preference-subranges) ---------------------


def _weighted_p(weights: list[float], values: list[int]) -> float:
    """The weighted preference of one pair whose subtopic i got the one answer ``values[i]``, computed
    by :func:`evaluation.meta.levels.weighted_items` from intent weights ``weights``."""
    from evaluation.meta.levels import weighted_items

    subs = [str(i + 1) for i in range(len(weights))]
    items = pd.DataFrame(
        {
            "level": "subtopic",
            "topic": "1",
            "subtopic": subs,
            "run_a": "A",
            "run_b": "B",
            "n": 1,
            "total": values,
            "p": [float(v) for v in values],
        }
    )
    return float(weighted_items(items, {"1": dict(zip(subs, weights))})["p"].iloc[0])


def _subrange(u: float) -> int | None:
    """Index k - 1 of the subrange (k-1, k] that holds ``u`` by subrange_masks, None for a tie."""
    from evaluation.meta.agreement import subrange_masks

    hits = np.flatnonzero(subrange_masks(np.array([u]))[:, 0])
    assert hits.size <= 1
    return int(hits[0]) if hits.size else None


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.floats(min_value=1e-3, max_value=1.0, allow_nan=False), min_size=2, max_size=6),
    st.integers(min_value=-4, max_value=4),
)
def test_a_weighted_preference_equal_to_k_stays_in_its_subrange(weights, k) -> None:
    """Every subtopic answers k: p = k in exact arithmetic whatever the weights; its float sum may be
    k +- 1 ulp, and it must still land in (|k|-1, |k|] (a tie for k = 0)."""
    p = _weighted_p(weights, [k] * len(weights))
    assert p == pytest.approx(k, abs=1e-13)
    assert _subrange(abs(p)) == (abs(k) - 1 if k else None)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(min_value=1, max_value=20), st.integers(min_value=-4, max_value=4)), min_size=2, max_size=6))
def test_weighted_subranges_match_exact_rational_arithmetic(pairs) -> None:
    """Integer weights (renormalised as floats by weighted_items) and integer answers: the exact
    weighted preference is the fraction sum w v / sum w; its subrange decides, not the float's."""
    from fractions import Fraction

    weights = [w for w, _ in pairs]
    values = [v for _, v in pairs]
    exact = abs(sum(Fraction(w * v) for w, v in pairs) / sum(weights))
    expected = None if exact == 0 else math.ceil(exact) - 1
    assert _subrange(abs(_weighted_p([float(w) for w in weights], values))) == expected


def test_naive_bounds_misplace_k_plus_an_ulp_and_ours_do_not() -> None:
    """30,000 random weight vectors, every subtopic answering k: the plain (k-1, k] test puts some
    float sums into the next subrange (the bug), the shifted bounds put every one into (k-1, k]."""
    from evaluation.meta.agreement import SUBRANGE_BOUNDS, subrange_masks

    rng = np.random.default_rng(20261125)
    raw = rng.random((30_000, 5))
    w = raw / raw.sum(axis=1, keepdims=True)
    k = rng.integers(1, 5, size=30_000)
    u = (w * k[:, None]).sum(axis=1)  # sum_i w_i k: k in exact arithmetic
    naive = np.stack([(u > lo) & (u <= hi) for lo, hi in SUBRANGE_BOUNDS])
    ours = subrange_masks(u)
    assert (np.argmax(naive, axis=0) != k - 1).sum() > 0  # the float sums do stray
    assert (ours.sum(axis=0) == 1).all() and (np.argmax(ours, axis=0) == k - 1).all()
