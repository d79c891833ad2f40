"""The separation estimate: the user model fitted to answers, and how many answers separate a planted leader."""

from __future__ import annotations

import math

import numpy as np
import pytest

from evaluation.meta._matrix import ScoreCube
from evaluation.meta.agreement import agreement
from evaluation.meta.separation import fit_user_model, separation
from evaluation.meta.simulate import StudyPairs, UserModel, latent_preference, recovery, simulate_answers

UNITS, RUNS = 30, 5  # 30 topics x 10 run pairs


def cube(seed: int = 0) -> ScoreCube:
    """A truth T, a metric close to it, an unrelated one and an exact duplicate of T's signs (2 T)."""
    rng = np.random.default_rng(seed)
    base = rng.random((UNITS, RUNS))
    values = np.stack([base, base + rng.normal(0, 0.06, base.shape), rng.random((UNITS, RUNS)), 2 * base])
    return ScoreCube(values, ("T", "near", "random", "double"), tuple(str(t) for t in range(UNITS)), tuple(f"r{j}" for j in range(RUNS)))


PAIRS = StudyPairs.from_cube(cube())
D_T = PAIRS.d[0]


def answers(noise: float, signal: float = 2.0, k: int = 3, seed: int = 1) -> np.ndarray:
    return simulate_answers(latent_preference(D_T, signal), UserModel(noise=noise, signal=signal, annotators=k), 1, seed)[0]


@pytest.mark.parametrize(("signal", "noise"), [(2.0, 0.5), (2.0, 1.0), (1.0, 2.0), (3.0, 3.0)])
def test_the_fit_recovers_the_simulators_signal_and_noise(signal: float, noise: float) -> None:
    given = answers(noise, signal, k=5)  # 1,500 answers
    fitted = fit_user_model(D_T, np.repeat(D_T, 5), given.ravel())
    assert fitted is not None and fitted.answers == given.size
    assert fitted.signal == pytest.approx(signal, rel=0.12)
    assert fitted.noise == pytest.approx(noise, rel=0.12)


def test_no_fit_without_a_truth_difference_or_when_the_answers_go_against_it() -> None:
    assert fit_user_model(np.zeros(10), np.zeros(3), np.array([1, 2, 3])) is None
    assert fit_user_model(D_T, np.zeros(5), np.array([1, 2, 3, -1, 0])) is None  # no answered pair that T distinguishes
    assert fit_user_model(D_T, D_T, -answers(0.5, k=1)[:, 0]) is None  # the answers follow -T
    assert fit_user_model(D_T, D_T[:0], np.array([])) is None


def test_low_noise_is_separated_with_the_full_study_at_hand_and_the_duplicate_is_reported() -> None:
    model = UserModel(noise=0.3, signal=2.0, annotators=3)
    found = separation(PAIRS, "T", model, answers_now=UNITS * 10 * 3, seed=1)
    assert found.units_now == UNITS and found.answers_full == 900
    assert found.separated_now and found.rate_now >= 0.8
    assert found.answers_needed == 900 and found.more_answers == 0
    assert found.duplicates == [("double", "same preference sign as T on all 300 run pairs")]
    assert found.candidates == 3  # T, near, random
    # the rate is the simulator's own: recovery at the full size with the same seed
    assert found.rate_full == pytest.approx(recovery(PAIRS, "T", model, n_sim=200, rng=1, drop_identical_on_draw=False)["first_MUP"].mean())


def needed(noise: float, now: int = 30) -> float:
    found = separation(PAIRS, "T", UserModel(noise=noise, signal=2.0, annotators=3), answers_now=now, seed=2)
    assert found.units_now == 1  # 30 answers: one topic's 10 pairs with 3 answers each
    return math.inf if found.answers_needed is None else found.answers_needed


def test_more_noise_needs_more_answers() -> None:
    by_noise = {noise: needed(noise) for noise in (0.25, 1.0, 4.0)}
    assert by_noise[0.25] < by_noise[1.0] < by_noise[4.0], by_noise
    assert by_noise[0.25] <= 900  # a quiet study separates T before it is complete
    rates = [separation(PAIRS, "T", UserModel(noise=n, annotators=3), answers_now=30, seed=2).rate_full for n in (0.25, 1.0, 4.0)]
    assert rates[0] > rates[1] > rates[2]


def test_the_smallest_size_reaching_the_target_is_found() -> None:
    model = UserModel(noise=1.0, signal=2.0, annotators=3)
    found = separation(PAIRS, "T", model, answers_now=30, seed=2)
    assert found.units_needed is not None and 1 < found.units_needed <= UNITS
    rate = {
        t: recovery(PAIRS, "T", model, n_sim=200, topics=t, rng=2, drop_identical_on_draw=False)["first_MUP"].mean()
        for t in (found.units_needed - 1, found.units_needed)
    }
    assert rate[found.units_needed] >= 0.8 > rate[found.units_needed - 1]
    assert found.more_answers == found.units_needed * 30 - 30


def test_the_full_study_can_be_too_small_and_the_estimate_says_so() -> None:
    found = separation(PAIRS, "T", UserModel(noise=4.0, signal=0.5, annotators=1), answers_now=10, seed=3)
    assert found.rate_full < 0.8 and found.units_needed is None
    assert found.answers_needed is None and found.more_answers is None


def test_deterministic_for_a_seed() -> None:
    model = UserModel(noise=1.0, annotators=2)
    assert separation(PAIRS, "T", model, answers_now=100, seed=5) == separation(PAIRS, "T", model, answers_now=100, seed=5)


def test_fewer_subsets_give_the_same_all_rows_as_every_subset() -> None:
    rng = np.random.default_rng(4)
    d, p = rng.normal(size=(6, 120)), rng.integers(-4, 5, size=120).astype(float)
    clusters = np.repeat(np.arange(12), 10)
    names = [f"m{g}" for g in range(6)]
    full = agreement(d, p, names, clusters=clusters, B=200, rng=1).table
    part = agreement(d, p, names, clusters=clusters, B=200, rng=1, subsets=("all", "large")).table
    assert set(part["subset"]) == {"all", "large"}
    expected = full[full["subset"].isin(["all", "large"])].reset_index(drop=True)
    assert part.equals(expected)
    with pytest.raises(ValueError, match="subsets"):
        agreement(d, p, names, subsets=("everything",))


def test_a_candidate_equal_to_the_truth_on_the_drawn_topics_only_still_ties_it() -> None:
    model = UserModel(noise=0.25, annotators=3)
    # on one drawn topic "near" often has T's signs: meta simulate leaves it out of that study, separation keeps it (a tie)
    dropped = recovery(PAIRS, "T", model, n_sim=200, topics=1, rng=2)["first_MUP"].mean()
    kept = recovery(PAIRS, "T", model, n_sim=200, topics=1, rng=2, drop_identical_on_draw=False)["first_MUP"].mean()
    assert kept < 0.5 < dropped
