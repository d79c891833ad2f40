"""Document selection sensitivity (docs/metrics.md#document-selection-sensitivity)."""

from __future__ import annotations

import numpy as np
import pytest

from evaluation.meta.dss import document_selection_sensitivity, dss_values, permuted_runs, topic_average


def test_worked_example() -> None:
    assert dss_values(np.array([0.5, 0.7, 0.6])) == pytest.approx(0.1 / 0.6)
    assert round(float(dss_values(np.array([0.5, 0.7, 0.6]))), 4) == 0.1667
    assert np.isnan(dss_values(np.array([[0.0, 0.0, 0.0]]))[0])  # mean 0 -> NaN


def test_topic_averages() -> None:
    values = np.array([0.2, np.nan, 0.0, 0.4])
    assert topic_average(values, "avg") == pytest.approx(0.2)
    assert topic_average(values, "geom") == pytest.approx((0.2 * 1e-5 * 0.4) ** (1 / 3))
    assert topic_average(values, "DD", dd=np.array([0.5, 0.1, 1.0, 0.0])) == pytest.approx((0.5 * 0.2 + 1.0 * 0.4) / 1.5)
    with pytest.raises(ValueError, match="topic average"):
        topic_average(values, "median")


def test_permutations_cover_the_relevant_documents(public_collection) -> None:
    collection, _ = public_collection
    runs, topics = permuted_runs(collection, 5, np.random.default_rng(0))
    relevant = sorted(collection.relevant_documents(topics[0]))
    assert sorted(runs[0].lists[topics[0]]) == relevant
    assert runs[0].lists[topics[0]] != runs[1].lists[topics[0]] or len(relevant) < 3
    cut, _ = permuted_runs(collection, 2, np.random.default_rng(0), depth=4)
    assert all(len(docs) <= 4 for docs in cut[0].lists.values())


def test_dss_on_the_reference_collection_is_deterministic(public_collection) -> None:
    collection, _ = public_collection
    one = document_selection_sensitivity(collection, ["alpha-nDCG@10", "I-rec@10"], n_perm=40, rng=3)
    two = document_selection_sensitivity(collection, ["alpha-nDCG@10", "I-rec@10"], n_perm=40, rng=3)
    assert one.table.equals(two.table) and one.seed == 3
    per_topic = one.table[~one.table["topic"].str.startswith("all:")]
    assert set(one.table["topic"]) >= {"all:avg", "all:geom", "all:DD"}
    assert len(per_topic) == 2 * 50
    np.testing.assert_allclose(per_topic["dss"], per_topic["sd"] / per_topic["mean"])
    assert (per_topic["dss"] >= 0).all()
    avg = one.table[(one.table["measure"] == "I-rec@10") & (one.table["topic"] == "all:avg")]["dss"].iloc[0]
    assert avg == pytest.approx(per_topic[per_topic["measure"] == "I-rec@10"]["dss"].mean())
