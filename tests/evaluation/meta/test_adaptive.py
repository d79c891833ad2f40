"""Adaptive allocation's design and its design-based analysis (evaluation.meta.adaptive)."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from evaluation.meta import adaptive, sequential
from evaluation.meta.agreement import pair_sums, signs
from evaluation.meta.bestset import BestSet, best_set
from evaluation.meta.intervals import jackknife_df, jackknife_variance, linearisation_df, score_interval


def brute_force(d: np.ndarray, p: np.ndarray, w: np.ndarray) -> dict[str, np.ndarray]:
    """MUP, MUP_b and tau_b with design weights, pair by pair in plain Python (docs/metrics.md formulas)."""
    out = {"MUP": [], "MUP_b": [], "tau_b": []}
    for g in range(d.shape[0]):
        uj = u = ut = ad = nm = nu = 0.0
        for c in range(p.size):
            if w[c] == 0 or np.isnan(d[g, c]):
                continue
            s_m = 0.0 if abs(d[g, c]) <= 1e-12 else float(np.sign(d[g, c]))
            s_u = 0.0 if abs(p[c]) <= 1e-12 else float(np.sign(p[c]))
            uj += w[c] * abs(p[c]) * s_m * s_u
            u += w[c] * abs(p[c])
            ut += w[c] * abs(p[c]) * (s_m == 0)
            ad += w[c] * s_m * s_u
            nm += w[c] * abs(s_m)
            nu += w[c] * abs(s_u)
        out["MUP"].append(uj / u)
        out["MUP_b"].append(uj / np.sqrt((u - ut) * u))
        out["tau_b"].append(ad / np.sqrt(nm * nu))
    return {k: np.array(v) for k, v in out.items()}


def population(seed: int = 3, topics: int = 8, per_topic: int = 6, metrics: int = 4):
    rng = np.random.default_rng(seed)
    n = topics * per_topic
    d = rng.normal(size=(metrics, n))
    d[1, ::5] = 0.0  # metric ties
    d[2, 3] = np.nan  # undefined on one pair
    p = np.round(rng.normal(d[0], 1.0) * 3) / 3
    return d, p, np.repeat(np.arange(topics), per_topic)


def test_weighted_estimates_match_the_brute_force_weighted_estimator() -> None:
    d, p, clusters = population()
    drawn_round = np.array([0, 1, 2, -1, 1, 2] * 8)
    probability = np.linspace(0.2, 0.9, p.size)
    w = adaptive.design_weights(drawn_round, probability, 1)
    assert set(np.unique(w)) <= {0.0, 1.0} | set(1 / probability[drawn_round == 1])
    est = adaptive.weighted_estimates(d, p, weights=w, clusters=clusters)
    expected = brute_force(d, p, w)
    for name in ("MUP", "MUP_b", "tau_b"):
        np.testing.assert_allclose(est.value[name], expected[name], rtol=1e-12)
        assert np.all((est.low[name] <= est.value[name]) & (est.value[name] <= est.high[name]))
    assert est.pairs == int((w > 0).sum()) and est.topics == 8


Q1 = np.array([0.5, 0.3, 0.6, 0.2])  # round 1's selection probabilities of four groups in the enumerations below


def first_rounds(q1: np.ndarray):
    """(probability, drawn flags) of every draw of round 1, each group drawn with its ``q1``."""
    for flags in itertools.product([0, 1], repeat=q1.size):
        got1 = np.array(flags, dtype=bool)
        yield np.prod(np.where(got1, q1, 1 - q1)), got1


def second_probabilities(got1: np.ndarray, seen: float) -> np.ndarray:
    """An adaptive rule: round 2's probabilities of the groups round 1 left depend on what round 1 saw."""
    return np.where(got1, 0.0, np.clip(0.2 + 0.1 * np.arange(got1.size) + 0.05 * seen, 0.05, 1.0))


def second_rounds(got1: np.ndarray, q1: np.ndarray, q2: np.ndarray):
    """(probability, drawn flags, round of each group (0, 1; -1 never), its selection probability) of every
    draw of round 2 among the groups round 1 left."""
    rest = np.flatnonzero(~got1)
    for flags in itertools.product([0, 1], repeat=rest.size):
        got2 = np.zeros(got1.size, dtype=bool)
        got2[rest] = np.array(flags, dtype=bool)
        p2 = np.prod(np.where(got2[rest], q2[rest], 1 - q2[rest]))
        yield p2, got2, np.where(got1, 0, np.where(got2, 1, -1)), np.where(got1, q1, q2)


def test_design_weights_give_an_unbiased_total_under_an_adaptive_rule() -> None:
    """Every draw of a two-round design enumerated: the round-2 estimator's expectation is the total, exactly, and
    so is that of the pooled weights (the mean of the round-1 and round-2 estimators), although round 2's
    probabilities depend on what round 1 drew and saw."""
    y = np.array([3.0, -1.0, 0.5, 2.0])
    expected = pooled = 0.0
    for p1, got1 in first_rounds(Q1):
        q2 = second_probabilities(got1, y[got1].sum())  # the rule looks at the answers of round 1
        for p2, _, drawn, probability in second_rounds(got1, Q1, q2):
            expected += p1 * p2 * (adaptive.design_weights(drawn, probability, 1) * y).sum()
            pooled += p1 * p2 * (adaptive.pooled_weights(drawn, probability, 1) * y).sum()
            np.testing.assert_allclose(
                adaptive.pooled_weights(drawn, probability, 1),
                (adaptive.design_weights(drawn, probability, 0) + adaptive.design_weights(drawn, probability, 1)) / 2,
            )
    assert expected == pytest.approx(y.sum(), abs=1e-12)
    assert pooled == pytest.approx(y.sum(), abs=1e-12)


def test_round_probabilities_target_floor_and_uniform_case() -> None:
    w = np.array([0.0, 0.0, 1.0, 4.0, 2.0, 0.0, 8.0, 0.0])
    available = np.array([True] * 7 + [False])
    q = adaptive.round_probabilities(w, available, 3.0, explore=0.25)
    assert q[-1] == 0.0
    assert q[:7].sum() == pytest.approx(3.0, rel=1e-6)
    assert np.all(q[:7] >= 0.25 * 3 / 7 - 1e-12) and np.all(q <= 1.0)
    assert q[6] >= q[3] >= q[4] >= q[2] >= q[0]  # more dispute, more chance
    flat = adaptive.round_probabilities(np.zeros(8), available, 3.0)
    np.testing.assert_allclose(flat[:7], 3 / 7)  # no dispute: uniform
    assert adaptive.round_probabilities(w, np.zeros(8, dtype=bool), 3.0).sum() == 0.0
    with pytest.raises(ValueError, match="exploration"):
        adaptive.round_probabilities(w, available, 3.0, explore=0.0)
    with pytest.raises(ValueError, match="positive number"):
        adaptive.round_probabilities(w, available, 0.0)


def test_dispute_weights_count_disagreeing_contender_pairs() -> None:
    d = np.array([[1.0, 1.0, -1.0, 0.0], [1.0, -1.0, -1.0, 1.0], [1.0, -1.0, 1.0, 1.0]])
    np.testing.assert_allclose(adaptive.dispute_weights(d, [True, True, True]), [0, 2, 2, 2])
    np.testing.assert_allclose(adaptive.dispute_weights(d, [True, False, True]), [0, 1, 1, 1])
    np.testing.assert_allclose(adaptive.dispute_weights(d, [True, False, False]), [0, 0, 0, 0])
    assert adaptive.disputed_by(d, ["a", "b", "c"], [True, True, True]) == ["", "a", "c", "a"]
    closeness = adaptive.closeness_from_t(np.array([[0, 0, 3.0], [0, 0, 0], [3.0, 0, 0]]))
    np.testing.assert_allclose(adaptive.dispute_weights(d, [True, True, True], closeness), [0, 1.1, 1.1, 1.1])


def test_design_weights_refuse_a_drawn_group_without_probability() -> None:
    with pytest.raises(ValueError, match="positive selection probability"):
        adaptive.design_weights(np.array([0, 1]), np.array([0.5, 0.0]), 1)
    with pytest.raises(ValueError, match="positive selection probability"):
        adaptive.pooled_weights(np.array([0, 1]), np.array([0.5, 0.0]), 1)
    # pooled over rounds 0..2: ((2 - s) + 1 / q) / 3 for a group drawn in s <= 2, nothing for later or never
    np.testing.assert_allclose(
        adaptive.pooled_weights(np.array([0, 2, 3, -1]), np.array([0.5, 0.25, 0.5, 0.1]), 2), [(2 + 2) / 3, 4 / 3, 0, 0]
    )


def test_contenders_merge_identical_metrics_and_weight_the_preferences() -> None:
    d, p, clusters = population(topics=10)
    d = np.vstack([d, d[0:1]])  # a copy of metric 0: one entry
    names = ["m0", "m1", "m2", "m3", "m0copy"]
    w = np.where(np.arange(p.size) % 3 == 0, 2.0, 1.0)
    chosen = adaptive.contenders(d, p, names, weights=w, clusters=clusters, B=200, rng=1)
    direct = best_set(d, p * w, names, user_sign=np.sign(p), clusters=clusters, B=200, rng=1)
    assert chosen.members == direct.measures and chosen.entries == direct.entries
    assert "m0 = m0copy" in chosen.entries and chosen.size == len(chosen.entries) < len(chosen.members)
    assert chosen.holds("m0") and chosen.decided == (chosen.size <= 3)
    few = adaptive.contenders(d, p, names, weights=np.where(clusters < 3, 1.0, 0.0), clusters=clusters, B=50, rng=1)
    assert not few.chosen.claim and not few.decided and few.size == 4  # 3 topics: no claim, every entry contends
    with pytest.raises(ValueError, match="no judged group"):
        adaptive.contenders(d, p, names, weights=np.zeros(p.size), clusters=clusters)


def test_round_target_shrinks_once_no_undrawn_group_is_disputed() -> None:
    w = np.array([0.0, 2.0, 0.0, 1.0])
    assert adaptive.round_target(w, [True, True, True, False], 40.0) == 40.0  # an undrawn group is disputed
    assert adaptive.round_target(w, [True, False, True, False], 40.0) == pytest.approx(40.0 * adaptive.UNDISPUTED)
    assert adaptive.round_target(w, [True, False, True, False], 40.0, undisputed=1.0) == 40.0  # the earlier allocation
    assert adaptive.round_target(w, [False] * 4, 40.0, undisputed=0.5) == 20.0  # nothing left: no dispute either
    q = adaptive.round_probabilities(w, [True, False, True, False], adaptive.round_target(w, [True, False, True, False], 1.0))
    np.testing.assert_allclose(q, [0.05, 0, 0.05, 0])  # the small round: uniform over the undisputed groups
    for bad in (0.0, -0.1, 1.5):
        with pytest.raises(ValueError, match="undisputed round"):
            adaptive.round_target(w, [True] * 4, 40.0, undisputed=bad)
    with pytest.raises(ValueError, match="positive number"):
        adaptive.round_target(w, [True] * 4, 0.0)


def test_round_target_rises_when_the_drawn_groups_run_out_of_room() -> None:
    w, calm = np.array([0.0, 2.0, 0.0, 1.0]), [True, False, True, False]
    assert adaptive.RESERVE == 0.5
    assert adaptive.round_target(w, calm, 40.0, room=15.0) == 25.0  # room below half a round: a round's worth restored
    assert adaptive.round_target(w, calm, 40.0, room=0.0) == 40.0
    assert adaptive.round_target(w, calm, 40.0, room=20.0) == pytest.approx(4.0)  # room enough: the small round
    assert adaptive.round_target(w, calm, 40.0, room=38.0, undisputed=1.0) == 40.0  # never below the undisputed share
    assert adaptive.round_target(w, [True] * 4, 40.0, room=0.0) == 40.0  # disputed groups left: the usual round
    with pytest.raises(ValueError, match="room"):
        adaptive.round_target(w, calm, 40.0, room=-1.0)


def test_full_shares_make_every_undisputed_drawn_group_full() -> None:
    w = np.array([0.0, 2.5, 0.0, 0.25])
    shares = adaptive.full_shares(w, 0.2)
    np.testing.assert_allclose(shares, [1.0, 0.2, 1.0, 0.2])
    drawn = np.array([True, True, True, False])
    full = adaptive.draw_full(drawn, shares, np.random.default_rng(3))
    assert full[[0, 2]].all() and not full[3]  # undisputed: full for sure; not drawn: never
    rate = np.mean([adaptive.draw_full(drawn, shares, np.random.default_rng(s))[1] for s in range(2000)])
    assert abs(rate - 0.2) < 0.03  # a disputed group: full with the default share
    np.testing.assert_allclose(adaptive.full_weights(np.array([4.0, 2.0, 1.0, 0.0]), full, shares)[[0, 2]], [4.0, 1.0])
    for bad in (0.0, 1.5):
        with pytest.raises(ValueError, match="share of full groups"):
            adaptive.full_shares(w, bad)
    with pytest.raises(ValueError, match="share of full groups"):
        adaptive.draw_full(drawn, np.array([1.0, 0.0, 1.0, 0.5]), np.random.default_rng(1))  # a drawn group with chance 0
    assert not adaptive.draw_full(drawn, np.array([1.0, 0.2, 1.0, 0.0]), np.random.default_rng(1))[3]  # not drawn: any share


def test_fewest_flips_is_the_least_B_whose_best_set_can_drop_an_entry() -> None:
    from evaluation.meta.bestset import SELECTION

    for alpha in (0.05, 0.0025, adaptive.look_alpha(0.05, 40)):
        B = adaptive.fewest_flips(alpha)
        assert 1 / (B + 1) + SELECTION * alpha <= alpha < 1 / B + SELECTION * alpha
    assert adaptive.fewest_flips(0.0025) == 444
    with pytest.raises(ValueError, match="alpha"):
        adaptive.fewest_flips(0.0)


def test_contenders_refuse_too_few_flips_for_the_looks_level() -> None:
    d, p, clusters = population(topics=20)  # above EXACT_TOPICS: Monte Carlo sign flips
    names = ["m0", "m1", "m2", "m3"]
    w = np.ones(p.size)
    alpha = adaptive.look_alpha(0.05, 20)
    with pytest.raises(ValueError, match="at least 444 needed"):
        adaptive.contenders(d, p, names, weights=w, clusters=clusters, alpha=alpha, B=400, rng=1)
    chosen = adaptive.contenders(d, p, names, weights=w, clusters=clusters, alpha=alpha, B=444, rng=1)
    assert chosen.chosen.method == "monte carlo"
    assert chosen.chosen.table["p_best"].min() >= 1 / 445  # the identity flip: the smallest p_best B allows
    # up to 12 topics the flips are exact and B does not matter
    few = clusters < 12
    exact = adaptive.contenders(d[:, few], p[few], names, weights=w[few], clusters=clusters[few], alpha=alpha, B=1, rng=1)
    assert exact.chosen.method == "exact"


def test_look_alpha_keeps_the_level_over_the_looks() -> None:
    assert adaptive.look_alpha(0.05, 20, "bonferroni") == pytest.approx(0.0025)
    assert adaptive.look_alpha(0.05, 20) == pytest.approx(0.0025)  # the default: Bonferroni
    assert adaptive.look_alpha(0.05, 20, "pocock") == pytest.approx(sequential.nominal_alpha(0.05, 20, "pocock"))
    assert 0.0025 < adaptive.look_alpha(0.05, 20, "pocock") < 0.05  # Pocock counts the looks' shared data
    assert adaptive.look_alpha(0.05, 1) == pytest.approx(0.05)
    with pytest.raises(ValueError):
        adaptive.look_alpha(0.05, 0)
    with pytest.raises(ValueError):
        adaptive.look_alpha(1.5, 3)


def test_look_level_corrects_the_intervals_for_the_looks() -> None:
    assert adaptive.look_level(0.95, 20, "bonferroni") == pytest.approx(0.9975)
    assert adaptive.look_level(0.95, 20) == pytest.approx(0.9975)
    assert adaptive.look_level(0.95, 20, "pocock") == pytest.approx(1 - sequential.nominal_alpha(0.05, 20, two_sided=True))
    assert 0.95 < adaptive.look_level(0.95, 20, "pocock") < 0.9975
    assert adaptive.look_level(0.95, 1) == pytest.approx(0.95)
    for bad in ((0.95, 0), (1.0, 5), (0.0, 5)):
        with pytest.raises(ValueError):
            adaptive.look_level(*bad)


def satterthwaite(loo: np.ndarray) -> np.ndarray:
    """The moment-corrected Satterthwaite degrees of freedom of the jackknife, topic by topic in plain Python."""
    out = []
    for column in loo.T:
        mean = sum(column) / len(column)
        terms = [(value - mean) ** 2 for value in column]
        df = 3 * sum(terms) ** 2 / sum(t * t for t in terms) - 2 if sum(terms) > 0 else len(column) - 1
        out.append(min(max(df, 1.0), len(column) - 1))
    return np.array(out)


def influence(estimate, clusters: np.ndarray, topics: int, h: float = 1e-5) -> dict[str, np.ndarray]:
    """Each topic's influence value by brute force: the derivative of ``estimate(scale)`` (every weight of topic t
    multiplied by ``scale``) at 1, by central differences."""
    out = {name: [] for name in adaptive.ESTIMATED}
    for t in range(topics):
        up, down = estimate(np.where(clusters == t, 1 + h, 1.0)), estimate(np.where(clusters == t, 1 - h, 1.0))
        for name in out:
            out[name].append((up[name] - down[name]) / (2 * h))
    return {name: np.array(v) for name, v in out.items()}


def plain_variance(z: np.ndarray) -> np.ndarray:
    """T / (T - 1) sum_t (z_t - mean)^2 per column, in plain Python."""
    T = len(z)
    return np.array([T / (T - 1) * sum((v - sum(col) / T) ** 2 for v in col) for col in z.T])


def test_look_corrected_interval_is_the_score_interval_of_brute_force_linearisation_values() -> None:
    """The interval a study reports at a data-chosen stop (level 1 - 0.05 / 20): the score interval of the brute-force
    weighted MUP with the linearisation variance of each topic's brute-force influence (its weights scaled by 1 +- h),
    and that variance's Satterthwaite df; it contains the uncorrected 95 % interval. The delete-one jackknife is larger
    here, as its delete-one ratios weigh a heavy topic up."""
    d, p, clusters = population()
    w = adaptive.design_weights(np.array([0, 1, 2, -1, 1, 2] * 8), np.linspace(0.2, 0.9, p.size), 1)
    level = adaptive.look_level(0.95, 20)
    est = adaptive.weighted_estimates(d, p, weights=w, clusters=clusters, level=level)
    nominal = adaptive.weighted_estimates(d, p, weights=w, clusters=clusters)
    loo = np.stack([brute_force(d, p, np.where(clusters == t, 0.0, w))["MUP"] for t in range(8)])
    z = influence(lambda scale: brute_force(d, p, w * scale), clusters, 8)
    n = ((w > 0) & ~np.isnan(d)).sum(axis=1)
    for name in adaptive.ESTIMATED:
        np.testing.assert_allclose(est.influence[name], z[name], rtol=1e-6, atol=1e-9)
        np.testing.assert_allclose(est.variance(name), plain_variance(z[name]), rtol=1e-6)
    np.testing.assert_allclose(est.df("MUP"), satterthwaite(z["MUP"]), rtol=1e-6)
    var = plain_variance(z["MUP"])
    low, high = score_interval(brute_force(d, p, w)["MUP"], loo, n, np.full(d.shape[0], 8.0), level, df=satterthwaite(z["MUP"]), var=var)
    np.testing.assert_allclose(est.low["MUP"], low, rtol=1e-7)
    np.testing.assert_allclose(est.high["MUP"], high, rtol=1e-7)
    assert np.all(var < jackknife_variance(loo))  # the heavy topics' delete-one ratios weigh more in the jackknife
    assert np.all(est.low["MUP"] < nominal.low["MUP"]) and np.all(nominal.high["MUP"] < est.high["MUP"])
    for name in adaptive.ESTIMATED:  # the same leave-one-topic-out values give the other level's interval
        for got, want in zip(est.interval(name, 0.95), (nominal.low[name], nominal.high[name])):
            np.testing.assert_allclose(got, want, rtol=1e-12)


def a_best_set(members: dict[str, float], leaders: tuple[str, ...], claim: bool = True) -> BestSet:
    """A best set whose members have the given p_best (entries named as their metrics)."""
    table = pd.DataFrame({"measure": list(members), "entry": list(members), "p_best": list(members.values())})
    names = tuple(members)
    return BestSet(table, names, names, leaders, {m: (m,) for m in names}, {}, 0.05, 100, None, 50, "max", claim, "monte carlo")


def test_challenger_closeness_counts_only_the_leaders_disagreements_with_the_nearest_challengers() -> None:
    measures = ["a", "b", "c", "d", "e", "f"]
    chosen = a_best_set({"a": 1.0, "b": 0.9, "c": 0.3, "d": 0.02, "e": 0.04}, ("a",))  # f is out of the set
    c = adaptive.challenger_closeness(measures, chosen, others=0.25)  # 5 entries: the 2 nearest to leaving are d and e
    expected = np.full((6, 6), 0.25)
    expected[0, [3, 4]] = expected[[3, 4], 0] = 1.0
    np.testing.assert_allclose(c, expected)
    # at most DECIDED_SIZE entries, or no claim: every disagreement with a leader counts fully (leader_closeness)
    small = a_best_set({"a": 1.0, "b": 0.9, "c": 0.3}, ("a",))
    np.testing.assert_allclose(adaptive.challenger_closeness(measures, small), adaptive.leader_closeness(measures, ("a",)))
    open_ = a_best_set({"a": 1.0, "b": 0.9, "c": 0.3, "d": 0.02, "e": 0.04}, ("a",), claim=False)
    np.testing.assert_allclose(adaptive.challenger_closeness(measures, open_), adaptive.leader_closeness(measures, ("a",)))


def test_leader_closeness_counts_disagreements_with_the_leader_fully() -> None:
    c = adaptive.leader_closeness(["a", "b", "c"], ["a"], others=0.25)
    np.testing.assert_allclose(c, [[1, 1, 1], [1, 0.25, 0.25], [1, 0.25, 0.25]])
    d = np.array([[1.0, 1.0], [1.0, -1.0], [-1.0, -1.0]])  # pair 0: c against the leader; pair 1: b and c against it
    np.testing.assert_allclose(adaptive.dispute_weights(d, [True, True, True], c), [1 + 0.25, 2])


def test_two_phase_estimators_are_unbiased_by_enumeration() -> None:
    """Every draw of a two-round design with its second phase (a drawn group is full with probability f, else it
    gets one of its k answers, which one exchangeable) enumerated: the full groups weighted entry / f estimate the
    total of a non-linear k-answer quantity (|mean|) exactly, and every drawn group's received mean weighted by
    its entry weight estimates the total of the k-answer means exactly, although round 2's probabilities depend
    on the answers round 1 saw."""
    answers = np.array([[3.0, -1.0, 2.0], [-2.0, -2.0, 1.0], [0.0, 4.0, -1.0], [1.0, 1.0, 1.0]])
    k = answers.shape[1]
    mean = answers.mean(axis=1)
    f = 0.4
    got_abs, got_mean = 0.0, 0.0

    def outcomes(drawn: np.ndarray):
        """(probability, full flags, received means) of every second phase and arrival order of ``drawn``."""
        idx = np.flatnonzero(drawn)
        for flags in itertools.product([0, 1], repeat=idx.size):
            full = np.zeros(4, dtype=bool)
            full[idx] = np.array(flags, dtype=bool)
            p_full = np.prod(np.where(full[idx], f, 1 - f))
            first = np.flatnonzero(drawn & ~full)
            for order in itertools.product(range(k), repeat=first.size):
                received = np.where(full, mean, 0.0)
                received[first] = answers[first, list(order)]
                yield p_full / k**first.size, full, received

    for p1, got1 in first_rounds(Q1):
        for pa, full1, seen1 in outcomes(got1):
            for p2, got2, drawn, probability in second_rounds(got1, Q1, second_probabilities(got1, seen1.sum())):
                entry = adaptive.design_weights(drawn, probability, 1)
                for pb, full2, seen2 in outcomes(got2):
                    full = full1 | full2
                    received = np.where(got1, seen1, seen2)
                    weight = p1 * pa * p2 * pb
                    got_abs += weight * (adaptive.full_weights(entry, full, f) * np.abs(mean)).sum()
                    got_mean += weight * (entry * received).sum()
    assert got_abs == pytest.approx(np.abs(mean).sum(), abs=1e-12)
    assert got_mean == pytest.approx(mean.sum(), abs=1e-12)


def two_phase_brute_force(d, p, layer, entry, full, f) -> dict[str, np.ndarray]:
    """The two-phase difference estimators of MUP, MUP_b and tau_b pair by pair: every sum is the sum of its terms on
    every drawn group's first ``layer`` weighted by its ``entry`` weight, plus, on the full groups, the k-answer term
    minus the first-layer term weighted entry / ``f``."""
    sign = lambda v: 0.0 if abs(v) <= 1e-12 else float(np.sign(v))  # noqa: E731
    out = {"MUP": [], "MUP_b": [], "tau_b": []}
    for g in range(d.shape[0]):
        total = dict.fromkeys(("UJ", "U", "UT", "AD", "NM", "NU"), 0.0)
        for c in range(p.size):
            if entry[c] == 0 or np.isnan(d[g, c]):
                continue
            s_m = sign(d[g, c])
            for value, weight in (
                (layer[c], entry[c]),
                (p[c], entry[c] / f if full[c] else 0.0),
                (layer[c], -entry[c] / f if full[c] else 0.0),
            ):
                s_u = sign(value)
                total["UJ"] += weight * abs(value) * s_m * s_u
                total["U"] += weight * abs(value)
                total["UT"] += weight * abs(value) * (s_m == 0)
                total["AD"] += weight * s_m * s_u
                total["NM"] += weight * abs(s_m)
                total["NU"] += weight * abs(s_u)
        out["MUP"].append(total["UJ"] / total["U"])
        out["MUP_b"].append(total["UJ"] / np.sqrt((total["U"] - total["UT"]) * total["U"]))
        out["tau_b"].append(total["AD"] / np.sqrt(total["NM"] * total["NU"]))
    return {k: np.array(v) for k, v in out.items()}


def test_two_phase_estimates_match_a_brute_force_difference_estimator() -> None:
    """The reported estimates with a first layer: values pair by pair, and the look-corrected interval is the score
    interval of the brute-force values with each topic left out (both phases)."""
    d, p, clusters = population()
    rng = np.random.default_rng(5)
    layer = np.clip(np.round(p + rng.normal(0, 1.5, p.size)), -4, 4)  # one noisy answer per drawn group
    entry = adaptive.design_weights(np.array([0, 1, 2, -1, 1, 2] * 8), np.linspace(0.2, 0.9, p.size), 1)
    full = (entry > 0) & (rng.random(p.size) < 0.5)
    f = 0.5
    w = adaptive.full_weights(entry, full, f)
    level = adaptive.look_level(0.95, 20)
    est = adaptive.weighted_estimates(d, p, weights=w, clusters=clusters, layer=layer, layer_weights=entry, level=level)
    expected = two_phase_brute_force(d, p, layer, entry, full, f)
    for name in ("MUP", "MUP_b", "tau_b"):
        np.testing.assert_allclose(est.value[name], expected[name], rtol=1e-12)
    only_full = adaptive.weighted_estimates(d, p, weights=w, clusters=clusters, level=level)
    assert not np.allclose(only_full.value["MUP"], est.value["MUP"])  # the first layer changes the estimate
    assert est.pairs == int((entry > 0).sum()) > only_full.pairs
    loo = np.stack([two_phase_brute_force(d, p, layer, np.where(clusters == t, 0.0, entry), full, f)["MUP"] for t in range(8)])
    np.testing.assert_allclose(est.loo["MUP"], loo, rtol=1e-12)
    z = influence(lambda scale: two_phase_brute_force(d, p, layer, entry * scale, full, f), clusters, 8)  # both phases
    n = ((entry > 0) & ~np.isnan(d)).sum(axis=1)
    np.testing.assert_allclose(jackknife_df(loo), satterthwaite(loo), rtol=1e-10)
    np.testing.assert_allclose(linearisation_df(z["MUP"]), satterthwaite(z["MUP"]), rtol=1e-10)
    np.testing.assert_allclose(est.df("MUP"), satterthwaite(z["MUP"]), rtol=1e-6)
    var = plain_variance(z["MUP"])
    low, high = score_interval(expected["MUP"], loo, n, np.full(d.shape[0], 8.0), level, df=satterthwaite(z["MUP"]), var=var)
    np.testing.assert_allclose(est.low["MUP"], low, rtol=1e-7)
    np.testing.assert_allclose(est.high["MUP"], high, rtol=1e-7)
    with pytest.raises(ValueError, match="entry weights"):
        adaptive.weighted_estimates(d, p, weights=w, clusters=clusters, layer=layer)
    with pytest.raises(ValueError, match="first layer"):
        adaptive.weighted_estimates(d, p, weights=w, clusters=clusters, layer=layer, layer_weights=np.zeros(p.size))


def test_the_two_phase_difference_estimator_of_every_sum_is_unbiased_by_enumeration() -> None:
    """Every draw of a two-round design, its second phase and which answer of each drawn group arrives first,
    enumerated: the difference estimator of every sum of the statistics (also the non-linear ones: sum |p|, the
    user signs' sums, the metric-tie strengths) has the k-answer population's sums as its expectation, although
    round 2's probabilities depend on the answers round 1 saw."""
    answers = np.array([[3.0, -1.0, 2.0], [-2.0, -2.0, 1.0], [0.0, 4.0, -1.0], [1.0, 1.0, 1.0]])
    d = np.array([[1.0, -2.0, 0.5, 0.0], [-1.0, -1.0, 2.0, 3.0]])  # a metric tie on group 3
    k, f = answers.shape[1], 0.4
    mean = answers.mean(axis=1)
    truth = pair_sums(d, mean)

    def outcomes(drawn: np.ndarray):
        """(probability, full flags, first answers) of every second phase and first arrival of ``drawn``."""
        idx = np.flatnonzero(drawn)
        for flags in itertools.product([0, 1], repeat=idx.size):
            full = np.zeros(4, dtype=bool)
            full[idx] = np.array(flags, dtype=bool)
            for order in itertools.product(range(k), repeat=idx.size):
                first = np.zeros(4)
                first[idx] = answers[idx, list(order)]
                yield np.prod(np.where(full[idx], f, 1 - f)) / k**idx.size, full, first

    chance, layers, weights, entries = [], [], [], []  # one row per outcome, the sums computed at once
    for p1, got1 in first_rounds(Q1):
        for pa, full1, first1 in outcomes(got1):
            q2 = second_probabilities(got1, first1.sum())
            for p2, got2, drawn, probability in second_rounds(got1, Q1, q2):
                entry = adaptive.pooled_weights(drawn, probability, 1)  # the reported estimates' entry weights
                for pb, full2, first2 in outcomes(got2):
                    chance.append(p1 * pa * p2 * pb)
                    layers.append(np.where(got1, first1, first2))
                    weights.append(adaptive.full_weights(entry, full1 | full2, f))
                    entries.append(entry)
    layer, n = np.array(layers), len(chance)
    sums = adaptive.two_phase_sums(
        d, np.tile(mean, (n, 1)), np.tile(signs(mean), (n, 1)), np.array(weights), layer, signs(layer), np.array(entries)
    )
    assert sum(chance) == pytest.approx(1.0, abs=1e-12)
    for name in truth:
        np.testing.assert_allclose(np.array(chance) @ sums[name], truth[name][0], atol=1e-10, err_msg=name)


def test_full_share_is_checked_and_one_keeps_every_drawn_group_full() -> None:
    drawn = np.array([True, False, True, True])
    np.testing.assert_array_equal(adaptive.draw_full(drawn, 1.0, np.random.default_rng(0)), drawn)
    np.testing.assert_allclose(adaptive.full_weights(np.array([1.0, 0.0, 2.0, 4.0]), [True, False, False, True], 0.5), [2, 0, 0, 8])
    for bad in (0.0, 1.5):
        with pytest.raises(ValueError, match="share of full groups"):
            adaptive.draw_full(drawn, bad, np.random.default_rng(0))
        with pytest.raises(ValueError, match="share of full groups"):
            adaptive.full_weights(np.ones(4), drawn, bad)
