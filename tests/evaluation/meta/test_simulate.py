"""Planted-truth simulator: user model, duplicates, determinism and the acceptance criterion."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evaluation.exceptions import EvaluationError
from evaluation.io.preferences import aggregate_preferences
from evaluation.meta._matrix import ScoreCube, score_cube
from evaluation.meta.simulate import (
    StudyPairs,
    UserModel,
    duplicates_of,
    latent_preference,
    planted_truth,
    simulate_answers,
    simulate_preferences,
)

from .conftest import PRECISION_GOLD, PUBLIC_MEASURES

# Candidates of the acceptance test (the public measures but the gold standards); RBU is the engine's jar-convention RBU.
CANDIDATES = [m for m in PUBLIC_MEASURES if m not in PRECISION_GOLD]
TRUTHS = ["D-Q@10", "alpha-nDCG@10", "I-rec@10", "RBU(p=0.8,e=0.05)@20", "D#-nDCG@10"]


def small_cube(seed: int = 0) -> ScoreCube:
    rng = np.random.default_rng(seed)
    base = rng.random((12, 5))
    values = np.stack([base, base + rng.normal(0, 0.2, base.shape), rng.random((12, 5)), 2 * base])
    return ScoreCube(values, ("T", "near", "random", "double"), tuple(str(t) for t in range(12)), tuple(f"r{j}" for j in range(5)))


def test_user_model() -> None:
    mu = latent_preference(np.array([0.1, -0.1, 0.0, 0.3]), signal=2.0)
    assert mu == pytest.approx(2.0 * np.array([0.1, -0.1, 0.0, 0.3]) / np.std([0.1, -0.1, 0.0, 0.3]))
    exact = simulate_answers(np.array([0.4, 1.6, -9.0]), UserModel(noise=0.0, annotators=2), 3, np.random.default_rng(0))
    assert exact.shape == (3, 3, 2) and exact[0].tolist() == [[0, 0], [2, 2], [-4, -4]]
    cheats = simulate_answers(np.full(4000, 4.0), UserModel(noise=0.0, cheaters=1.0), 1, np.random.default_rng(1))
    assert set(np.unique(cheats)) == set(range(-4, 5)) and abs(cheats.mean()) < 0.15
    noisy = simulate_answers(np.zeros(20000), UserModel(noise=1.0), 1, np.random.default_rng(2))
    assert noisy.std() == pytest.approx(np.sqrt(1 + 1 / 12), rel=0.05)  # Gaussian + rounding
    with pytest.raises(ValueError, match="annotators"):
        UserModel(annotators=0)
    with pytest.raises(ValueError, match="cheaters"):
        UserModel(cheaters=2.0)


def test_exact_duplicates_are_excluded_with_the_reason() -> None:
    pairs = StudyPairs.from_cube(small_cube())
    assert pairs.d.shape == (4, 12 * 10)
    assert duplicates_of(pairs, "T") == [("double", "same preference sign as T on all 120 run pairs")]
    result = planted_truth(small_cube(), ["T"], noise=[0.25], n_sim=50, rng=1)
    assert result.excluded["T"][0][0] == "double"
    assert result.table["candidates"].iloc[0] == 3  # T, near, random


def test_simulation_is_deterministic_for_a_seed() -> None:
    one = planted_truth(small_cube(), ["T", "near"], noise=[0.5, 2.0], annotators=[1, 3], topics=[None, 6], n_sim=40, rng=5)
    two = planted_truth(small_cube(), ["T", "near"], noise=[0.5, 2.0], annotators=[1, 3], topics=[None, 6], n_sim=40, rng=5)
    pd.testing.assert_frame_equal(one.table, two.table)
    assert len(one.table) == 2 * 2 * 2 * 2 and set(one.table["seed"]) == {5}
    assert set(one.table["topics"]) == {12, 6}
    assert one.table["first_by_MUP"].between(0, 1).all() and (one.table["mean_rank_MUP"] >= 1).all()


def test_recovery_falls_with_noise() -> None:
    table = planted_truth(small_cube(), ["T"], noise=[0.1, 8.0], n_sim=200, rng=3).table
    assert table["first_by_MUP"].iloc[0] > table["first_by_MUP"].iloc[1]
    assert table["first_by_MUP"].iloc[0] >= 0.95


def test_simulated_study_is_a_valid_preferences_frame() -> None:
    votes = simulate_preferences(small_cube(), "T", UserModel(noise=0.5, annotators=3), rng=0)
    assert len(votes) == 12 * 10 * 3 and votes["value"].between(-4, 4).all()
    assert (votes["run_a"] < votes["run_b"]).all()
    assert (aggregate_preferences(votes)["n"] == 3).all()


def test_bad_inputs() -> None:
    with pytest.raises(EvaluationError, match="truth measure"):
        planted_truth(small_cube(), ["X"], n_sim=5)
    with pytest.raises(ValueError, match="n_sim"):
        planted_truth(small_cube(), ["T"], n_sim=0)
    with pytest.raises(ValueError, match="topics must be >= 1"):
        planted_truth(small_cube(), ["T"], topics=[0], n_sim=5)


def test_more_topics_than_the_scores_hold_is_an_error_not_all_topics() -> None:
    with pytest.raises(EvaluationError, match="cannot draw 13 topics per simulated study: the scores have only 12 topics"):
        planted_truth(small_cube(), ["T"], noise=[0.5], topics=[6, 13], n_sim=5, rng=1)
    every = planted_truth(small_cube(), ["T"], noise=[2.0], topics=[12], n_sim=50, rng=1).table
    default = planted_truth(small_cube(), ["T"], noise=[2.0], topics=[None], n_sim=50, rng=1).table
    pd.testing.assert_frame_equal(every, default)  # exactly the available number is all of them
    assert every["topics"].tolist() == [12]


@pytest.mark.slow
def test_planted_truth_is_recovered_at_low_noise(public_scores) -> None:
    """Acceptance: 8 public runs x 50 topics, 200 simulations per truth, noise sd 0.25 points,
    3 annotators: the truth is first by MUP in >= 95% of the simulations for >= 4 truths."""
    cube = score_cube(public_scores, CANDIDATES)
    assert cube.values.shape == (len(CANDIDATES), 50, 8)
    result = planted_truth(cube, TRUTHS, noise=[0.25, 1.0], n_sim=200, rng=20261122)
    low = result.table[result.table["noise"] == 0.25].set_index("truth")
    recovered = low.index[low["first_by_MUP"] >= 0.95].tolist()
    assert len(recovered) >= 4, low[["first_by_MUP", "first_by_tau_b"]]
    assert set(recovered) >= {"D-Q@10", "alpha-nDCG@10", "I-rec@10", "RBU(p=0.8,e=0.05)@20"}
    assert all(v == [] for v in result.excluded.values())  # no candidate duplicates a truth here
    high = result.table[result.table["noise"] == 1.0].set_index("truth")
    assert (high["first_by_MUP"] <= low["first_by_MUP"] + 1e-12).all()
