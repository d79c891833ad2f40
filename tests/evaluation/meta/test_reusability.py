"""Leave-one-team-out reusability (docs/metrics.md#leave-one-out-reusability)."""

from __future__ import annotations

from pathlib import Path

import pytest

from evaluation.collection import Intent, build_collection
from evaluation.exceptions import EvaluationError, FormatError
from evaluation.io.runs import Run
from evaluation.meta.reusability import condensed_name, leave_one_out, read_pool_depths, read_teams, unique_contributions

# One topic, two intents; team A pooled d1 d2, team B d3 d4 (depth 2); d5 was judged by B's
# second run only beyond the pool.
JUDGMENTS = {"1": {"d1": {"1": 2}, "d2": {"2": 1}, "d3": {"1": 1}, "d4": {"1": 0, "2": 0}, "d5": {"2": 1}}}
INTENTS = {"1": [Intent("1", 0.5), Intent("2", 0.5)]}
RUNS = [Run("a1", {"1": ["d1", "d2", "d3"]}), Run("b1", {"1": ["d3", "d4", "d5"]}), Run("b2", {"1": ["d4", "d5", "d1"]})]
TEAMS = {"a1": "A", "b1": "B", "b2": "B"}


def test_condensed_names() -> None:
    assert condensed_name("D#-nDCG@10") == "D#-nDCG'@10"
    assert condensed_name("alpha-nDCG(alpha=0.5)@10") == "alpha-nDCG(alpha=0.5)'@10"
    assert condensed_name("RBU(p=0.8,e=0.05)") == "RBU(p=0.8,e=0.05)'"
    assert condensed_name("I-rec'@5") == "I-rec'@5"


def test_unique_contributions() -> None:
    unique = unique_contributions(RUNS, TEAMS, depth=2)
    assert unique["A"]["1"] == {"d1", "d2"}
    assert unique["B"]["1"] == {"d3", "d4", "d5"}
    per_topic = unique_contributions(RUNS, TEAMS, depth={"1": 1})
    assert per_topic["A"]["1"] == {"d1"} and per_topic["B"]["1"] == {"d3", "d4"}
    with pytest.raises(EvaluationError, match="have no team"):
        unique_contributions(RUNS, {"a1": "A"})


def test_leave_one_out_raw_and_condensed() -> None:
    collection = build_collection(JUDGMENTS, INTENTS)
    table = leave_one_out(collection, RUNS, TEAMS, ["D-nDCG@3"], depth=2)
    teams = table[table["team"] != "all"].set_index(["team", "list"])
    assert set(teams.index.get_level_values(0)) == {"A", "B"}
    a_raw = teams.loc[("A", "raw")]
    assert a_raw["run"] == "a1"
    # leaving team A out unjudges d1 and d2: a1 keeps only d3 at rank 3 -> score drops
    assert a_raw["loo"] < a_raw["full"] and a_raw["diff"] == pytest.approx(a_raw["loo"] - a_raw["full"])
    assert a_raw["abs_error"] == pytest.approx(abs(a_raw["diff"]))
    a_cond = teams.loc[("A", "condensed")]
    assert a_cond["measure"] == "D-nDCG@3"
    assert a_cond["abs_error"] <= a_raw["abs_error"]  # condensing removes the unjudged documents
    assert teams.loc[("A", "raw"), "rel_error"] == abs(teams.loc[("A", "raw"), "rank_loo"] - teams.loc[("A", "raw"), "rank_full"])
    summary = table[table["team"] == "all"]
    assert summary["list"].tolist() == ["raw", "condensed"]
    assert summary["abs_error"].iloc[0] == pytest.approx(teams.xs("raw", level="list")["abs_error"].mean())


def test_teams_and_depth_files(tmp_path: Path) -> None:
    teams = tmp_path / "teams.txt"
    teams.write_text("# run team\na1 A\nb1 B\n")
    assert read_teams(teams) == {"a1": "A", "b1": "B"}
    teams.write_text("a1 A\na1 B\n")
    with pytest.raises(FormatError, match=":2: run a1 listed twice"):
        read_teams(teams)
    depths = tmp_path / "depths.txt"
    depths.write_text("1 20\n2 30\n")
    assert read_pool_depths(depths) == {"1": 20, "2": 30}
    depths.write_text("1 0\n")
    with pytest.raises(FormatError, match=":1: pool depth must be >= 1"):
        read_pool_depths(depths)
