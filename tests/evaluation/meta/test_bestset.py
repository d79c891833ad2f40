"""The best set (docs/meta.md#best-set): tied leaders, multiplicity correction, no claim without data."""

from __future__ import annotations

import numpy as np
import pytest

from evaluation.exceptions import EvaluationError
from evaluation.meta.bestset import MIN_TOPICS, best_set


def study(seed: int = 0, topics: int = 40, per: int = 10, scales=(0.3, 0.6, 2.0, 4.0)):
    """Pairs of ``topics`` topics whose preferences follow metric m0; m_i = m0 + noise of scale ``scales[i-1]``."""
    rng = np.random.default_rng(seed)
    truth = rng.normal(size=topics * per)
    d = np.vstack([truth] + [truth + rng.normal(scale=s, size=truth.size) for s in scales])
    p = np.clip(np.rint(2 * truth / truth.std() + rng.normal(size=(3, truth.size))), -4, 4).mean(axis=0)
    return d, p, np.repeat(np.arange(topics), per), [f"m{g}" for g in range(d.shape[0])]


def test_far_worse_metrics_are_left_out_and_the_leader_is_in() -> None:
    d, p, clusters, names = study()
    result = best_set(d, p, names, clusters=clusters, B=500, rng=1)
    assert result.claim and result.leaders == ("m0",)
    assert "m0" in result and "m4" not in result and "m3" not in result
    table = result.table.set_index("measure")
    assert list(result.table["measure"]) == sorted(names, key=lambda m: -table.loc[m, "MUP"])
    assert table.loc["m0", "p_best"] > 0.5 and table.loc["m4", "p_best"] <= 0.05
    assert (table["in_best_set"] == (table["p_best"] > 0.05)).all()
    assert table.loc["m0", "diff_to_leader"] == 0 and table.loc["m4", "diff_to_leader"] > 0


def test_tied_leaders_are_both_in_the_set() -> None:
    d, p, clusters, names = study()
    d = np.vstack([d, 2 * d[0]])  # same signs as m0 on every pair: the same MUP
    result = best_set(d, p, [*names, "twin"], clusters=clusters, B=200, rng=1)
    assert set(result.leaders) == {"m0", "twin"}
    assert {"m0", "twin"} <= set(result.measures)
    assert (result.table.set_index("measure").loc[["m0", "twin"], "rank"] == 1).all()


def test_the_max_correction_keeps_at_least_the_uncorrected_set() -> None:
    corrected_larger = 0
    for seed in range(6):
        d, p, clusters, names = study(seed, topics=15, scales=(0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0))
        kw = dict(clusters=clusters, B=400, rng=seed)
        corrected = best_set(d, p, names, **kw)
        raw = best_set(d, p, names, correction="none", **kw)
        assert set(raw.measures) <= set(corrected.measures)
        ptab = corrected.table.set_index("measure")["p_best"]
        assert (raw.table.set_index("measure")["p_best"] <= ptab + 1e-12).all()
        corrected_larger += len(corrected.measures) > len(raw.measures)
    assert corrected_larger > 0  # the correction matters on some of these studies


def test_truth_stays_in_the_set_in_most_simulated_studies() -> None:
    # m0 is the planted truth, the others are close to it: the set must hold it about 95% of the time
    held = []
    for seed in range(40):
        d, p, clusters, names = study(seed, topics=30, scales=(0.2, 0.3, 0.4, 0.5))
        held.append("m0" in best_set(d, p, names, clusters=clusters, B=300, rng=seed))
    assert np.mean(held) >= 0.9


def test_too_few_topics_makes_no_claim() -> None:
    d, p, clusters, names = study(topics=MIN_TOPICS - 1)
    result = best_set(d, p, names, clusters=clusters, B=100, rng=1)
    assert not result.claim and result.seed is None and result.method == "none"
    assert result.measures == () and result.size == 0 and result.table["p_best"].isna().all()
    assert result.table["in_best_set"].isna().all() and (result.table["status"] == "no claim").all()
    assert set(result.contenders) == set(names)  # what stays open: every defined entry
    one = best_set(d[:, :10], p[:10], names, clusters=np.zeros(10, dtype=int), B=100, rng=1)
    assert not one.claim and one.size == 0 and one.n_topics == 1


def test_undefined_metric_is_never_in_the_set_and_nan_pairs_are_skipped() -> None:
    d, p, clusters, names = study()
    d = d.copy()
    d[1, :50] = np.nan  # m1 undefined on five topics: compared on the pairs it has
    d = np.vstack([d, np.full(d.shape[1], np.nan)])
    result = best_set(d, p, [*names, "never"], clusters=clusters, B=200, rng=1)
    table = result.table.set_index("measure")
    assert not table.loc["never", "in_best_set"] and np.isnan(table.loc["never", "MUP"])
    assert np.isfinite(table.loc["m1", "MUP"]) and result.table["measure"].iloc[-1] == "never"


def test_as_dict_is_plain_data() -> None:
    d, p, clusters, names = study()
    data = best_set(d, p, names, clusters=clusters, B=100, rng=1).as_dict()
    assert data["measures"][0] == "m0" and data["candidates"] == len(names) and data["claim"] is True
    assert {"measure", "entry", "mup", "rank", "diff_to_leader", "diff_low", "diff_high", "p_best", "in_best_set", "status"} == set(
        data["rows"][0]
    )
    assert isinstance(data["rows"][0]["in_best_set"], bool)


def test_bad_input() -> None:
    d, p, clusters, names = study()
    with pytest.raises(ValueError, match="measure names"):
        best_set(d, p, names[:-1], clusters=clusters)
    with pytest.raises(ValueError, match="B >= 1 sign-flip"):
        best_set(d, p, names, clusters=clusters, B=0)
    with pytest.raises(ValueError, match="alpha"):
        best_set(d, p, names, clusters=clusters, alpha=1.5)
    with pytest.raises(ValueError, match="correction"):
        best_set(d, p, names, clusters=clusters, correction="holm")
    with pytest.raises(EvaluationError, match="finite"):
        best_set(d, np.full_like(p, np.nan), names, clusters=clusters)


def test_metrics_with_the_same_signs_are_one_entry_and_a_metric_tied_everywhere_is_undefined() -> None:
    d, p, clusters, names = study(topics=12)
    d = np.vstack([d, 3 * d[0], np.zeros(d.shape[1])])
    result = best_set(d, p, [*names, "twin", "flat"], clusters=clusters, B=100, rng=1)
    assert result.groups["m0 = twin"] == ("m0", "twin") and result.entries[0] == "m0 = twin"
    assert {"m0", "twin"} <= set(result.measures) and "m0 = twin" in result
    assert result.undefined == {"flat": "undefined: ties on all 120 pairs (no spread)"}
    table = result.table.set_index("measure")
    assert np.isnan(table.loc["flat", "MUP"]) and not table.loc["flat", "in_best_set"]
    assert table.loc["flat", "status"].startswith("undefined") and table.loc["twin", "entry"] == "m0 = twin"
    assert "flat" not in result.contenders and result.size == len(result.entries)


def test_exact_sign_flip_p_value_of_a_metric_behind_on_every_topic() -> None:
    # six topics, one pair each: g agrees with the users everywhere, h disagrees everywhere -> p(h best) = 1/64
    d = np.array([[1.0] * 6, [-1.0] * 6])
    p = np.ones(6)
    result = best_set(d, p, ["g", "h"], clusters=np.arange(6), B=10, rng=0)
    table = result.table.set_index("measure")
    assert result.method == "exact" and table.loc["h", "p_best"] == pytest.approx(1 / 64 + 0.005)  # + beta of the selection step
    assert result.entries == ("g",) and table.loc["g", "p_best"] == 1.0
    assert table.loc["h", "diff_to_leader"] == 2.0 and table.loc["h", "diff_low"] <= 2.0 <= table.loc["h", "diff_high"]


def test_many_topics_use_monte_carlo_flips_with_the_seed_recorded() -> None:
    d, p, clusters, names = study(topics=30)
    result = best_set(d, p, names, clusters=clusters, B=200, rng=7)
    again = best_set(d, p, names, clusters=clusters, B=200, rng=7)
    assert result.method == "monte carlo" and result.seed == 7
    assert result.table["p_best"].equals(again.table["p_best"])
    assert (result.table["p_best"].dropna() >= 1 / 201 - 1e-12).all()  # (1 + count) / (1 + B): never 0


def test_leader_rival_intervals_are_simultaneous_and_hold_the_differences() -> None:
    d, p, clusters, names = study(topics=20)
    result = best_set(d, p, names, clusters=clusters, B=500, rng=3)
    table = result.table.set_index("measure")
    assert table.loc["m0", "diff_low"] == table.loc["m0", "diff_high"] == 0.0
    rivals = table.drop(index="m0")
    assert ((rivals["diff_low"] <= rivals["diff_to_leader"]) & (rivals["diff_to_leader"] <= rivals["diff_high"])).all()
    assert (rivals["diff_low"] > 0).any()  # the clearly worse ones are excluded by their interval too


def test_calibration_a_metric_tied_for_best_is_dropped_at_most_alpha_plus_monte_carlo_error() -> None:
    # sparse disagreement (the hard regime): A and B differ from the users on one pair of some topics
    from evaluation.meta.calibration import calibrate

    dropped = []
    for topics, seed in ((5, 1), (6, 2), (12, 3)):
        result = calibrate("sparse", topics, 150, rng=seed)
        assert result.dropped_max <= result.tolerance, (topics, result.dropped)
        assert result.merged == 1.0 and result.flat_out == 1.0
        dropped.extend(result.dropped.values())
    assert np.mean(dropped) <= 0.05 + 3 * np.sqrt(0.05 * 0.95 / 900)  # pooled: 900 (study, tied metric) draws
    dense = calibrate("dense", 50, 100, rng=4)
    assert dense.dropped_max <= dense.tolerance and dense.mean_size < 3  # the worse rivals are left out at 50 topics
