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
    assert not result.claim and result.seed is None
    assert set(result.measures) == set(names) and result.table["p_best"].isna().all()
    one = best_set(d[:, :10], p[:10], names, clusters=np.zeros(10, dtype=int), B=100, rng=1)
    assert not one.claim and one.size == len(names)


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
    assert {"measure", "mup", "rank", "diff_to_leader", "p_best", "in_best_set"} == set(data["rows"][0])
    assert isinstance(data["rows"][0]["in_best_set"], bool)


def test_bad_input() -> None:
    d, p, clusters, names = study()
    with pytest.raises(ValueError, match="measure names"):
        best_set(d, p, names[:-1], clusters=clusters)
    with pytest.raises(ValueError, match="B >= 1"):
        best_set(d, p, names, clusters=clusters, B=0)
    with pytest.raises(ValueError, match="alpha"):
        best_set(d, p, names, clusters=clusters, alpha=1.5)
    with pytest.raises(ValueError, match="correction"):
        best_set(d, p, names, clusters=clusters, correction="holm")
    with pytest.raises(EvaluationError, match="finite"):
        best_set(d, np.full_like(p, np.nan), names, clusters=clusters)
