"""Topic set reduction (docs/metrics.md#topic-set-reduction) and simplified collections (docs/metrics.md#simplified-collections)."""

from __future__ import annotations

import numpy as np
import pytest

from evaluation.exceptions import EvaluationError
from evaluation.meta._matrix import ScoreCube
from evaluation.meta.reduction import removal_order, topic_set_reduction
from evaluation.meta.simplified import SIMPLIFICATIONS, compare_collections, simplified_comparison


def make_cube() -> ScoreCube:
    rng = np.random.default_rng(1)
    values = rng.random((2, 8, 5)) * np.linspace(0.1, 1.0, 8)[None, :, None]  # later topics vary more
    return ScoreCube(values, ("REF", "OTHER"), tuple(str(t) for t in range(1, 9)), tuple(f"r{j}" for j in range(5)))


def test_removal_order_is_by_variance_then_topic_id() -> None:
    cube = make_cube()
    variance = cube.matrix("REF").var(axis=1)
    order = removal_order(cube, "REF")
    assert order == [cube.topics[i] for i in np.argsort(-variance, kind="stable")]
    tied = ScoreCube(np.ones((1, 3, 2)), ("REF",), ("10", "2", "1"), ("a", "b"))
    assert removal_order(tied, "REF") == ["1", "2", "10"]


def test_reduced_sets_are_nested_and_compared_with_the_full_set() -> None:
    table = topic_set_reduction(make_cube(), "REF", [6, 3], test="bootstrap", B=200, rng=4)
    assert table["topics"].tolist() == [8, 8, 6, 6, 3, 3]
    full = table[table["topics"] == 8]
    np.testing.assert_allclose(full[["tau", "tau_ap"]].to_numpy(), 1.0)
    assert set(table["seed"]) == {4} and set(table["pairs"]) == {10}
    again = topic_set_reduction(make_cube(), "REF", [6, 3], test="bootstrap", B=200, rng=4)
    assert table.equals(again)
    with pytest.raises(EvaluationError, match="between 2 and 8"):
        topic_set_reduction(make_cube(), "REF", [1])


def test_compare_identical_collections() -> None:
    cube = make_cube()
    table = compare_collections({"popularity+graded": cube, "copy": cube}, B=100, rng=0)
    np.testing.assert_allclose(table[["tau", "tau_ap"]].to_numpy(), 1.0)
    by = table.set_index(["collection", "measure"])
    assert by.loc[("copy", "REF"), "power"] == by.loc[("popularity+graded", "REF"), "power"]  # same resamples
    with pytest.raises(EvaluationError, match="reference collection"):
        compare_collections({"copy": cube})


def test_simplified_collections_of_the_reference_data(public_collection) -> None:
    collection, runs = public_collection
    table = simplified_comparison(collection, runs, ["D#-nDCG@10", "alpha-nDCG@10"], B=100, rng=2)
    assert list(dict.fromkeys(table["collection"])) == list(SIMPLIFICATIONS)
    original = table[table["collection"] == "popularity+graded"]
    np.testing.assert_allclose(original[["tau", "tau_ap"]].to_numpy(), 1.0)
    # alpha-nDCG uses binary relevance already (ndeval, docs/metrics.md#cascade-metrics): binarising grades changes nothing
    row = table[(table["collection"] == "popularity+binary") & (table["measure"] == "alpha-nDCG@10")].iloc[0]
    assert row["tau"] == pytest.approx(1.0)
    assert ((table["tau"] >= -1) & (table["tau"] <= 1)).all()
