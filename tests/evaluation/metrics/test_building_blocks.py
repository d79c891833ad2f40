"""Shared building blocks: ``scan`` is ``ufunc.accumulate`` bit for bit, in both of its strategies; the greedy
ideal's group key and its search on topics with many intents; P+Q's per-intent running sums at beta 1."""

from __future__ import annotations

import numpy as np
import pytest

from evaluation import Intent, Run, build_collection
from evaluation.arrays import build_ranking, table_for
from evaluation.metrics import dmeasures
from evaluation.metrics import reference as ref
from evaluation.metrics._common import INTENT_RANK_AXIS, relevant, relevant_count, scan, shown_sum
from evaluation.metrics.dmeasures import _per_intent_sums, blended_ratio_sums, pplus_q
from evaluation.metrics.novelty import _row_codes, greedy_ideal_gains


@pytest.mark.parametrize(
    "shape", [(20, 100, 50), (3, 4, 20, 6), (40, 2), (1, 5), (0, 3)], ids=["slices", "intent-major", "few-lines", "one", "empty"]
)
@pytest.mark.parametrize("ufunc", [np.add, np.multiply, np.maximum])
def test_scan_equals_accumulate_bit_for_bit(shape: tuple[int, ...], ufunc: np.ufunc) -> None:
    rng = np.random.default_rng(7)
    x = rng.random(shape) * 1.7
    axis = 1 if len(shape) == 4 else 0
    np.testing.assert_array_equal(scan(ufunc, x, axis), ufunc.accumulate(x, axis=axis))
    ints = rng.integers(0, 5, shape).astype(np.int32)
    np.testing.assert_array_equal(scan(ufunc, ints, axis), ufunc.accumulate(ints, axis=axis))


@pytest.mark.parametrize("shape", [(20, 100, 50), (6, 3)])
@pytest.mark.parametrize("ufunc", [np.add, np.multiply])
def test_exclusive_scan_is_the_shifted_accumulate(shape: tuple[int, ...], ufunc: np.ufunc) -> None:
    x = np.random.default_rng(3).random(shape)
    expected = np.full(shape, float(ufunc.identity))
    expected[1:] = ufunc.accumulate(x[:-1], axis=0)
    np.testing.assert_array_equal(scan(ufunc, x, 0, exclusive=True), expected)


def test_row_codes_group_and_order_like_the_rows() -> None:
    """The greedy's group key (docs/metrics.md#ideal-lists): equal codes exactly for equal rows, in the rows'
    lexicographic order, also when 40 columns of grades 0-4 would overflow a packed integer (5^40 > 2^62)."""
    rng = np.random.default_rng(11)
    first = np.sort(rng.integers(0, 6, 3000))
    rest = rng.integers(0, 5, (3000, 40)) * (rng.random((3000, 40)) < 0.1)  # sparse, so that rows repeat
    rest[::7] = rest[3]  # and some rows repeat across topics
    codes = _row_codes(first, rest)
    rows = np.column_stack([first, rest])
    by_row = np.lexsort(rows.T[::-1])
    assert np.all(np.diff(codes[by_row]) >= 0)
    same_row = (rows[by_row][1:] == rows[by_row][:-1]).all(axis=1)
    np.testing.assert_array_equal(codes[by_row][1:] == codes[by_row][:-1], same_row)
    assert same_row.sum() > 400


@pytest.mark.parametrize("graded", [False, True])
def test_greedy_ideal_with_many_intents_equals_the_reference(graded: bool) -> None:
    """Topics with 45 intents (the group key is renumbered while it is built): the greedy ideal's gains are the
    reference's (``reference.greedy_ideal``; many first steps are ties, broken by docid)."""
    rng = np.random.default_rng(5)
    judgments = {
        f"t{t}": {f"d{d}": {str(i): int(rng.integers(1, 5)) for i in rng.choice(45, size=3, replace=False)} for d in range(40)}
        for t in range(3)
    }
    collection = build_collection(judgments)
    table = table_for(collection)
    gains = greedy_ideal_gains(table, 0.5, 40, graded)
    for n, topic in enumerate(table.topic_ids):
        t = ref.RefTopic.of(collection, topic)
        expected = ref.novelty_gains(t, ref.greedy_ideal(t, 0.5, graded), 0.5, graded)
        np.testing.assert_allclose(gains[n], expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize("int32_sums", [True, False])
@pytest.mark.parametrize("depth", [1, 7, 40])
def test_per_intent_q_sums_at_beta_one_are_the_general_sums_bit_for_bit(
    depth: int, int32_sums: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At beta 1 P+Q's running ``sum I BR`` adds ``g + I`` in one scan (docs/benchmarks.md#memory, sixth round),
    in int32 when the sums fit (tenth round; else in float64): the same bits as ``CG + C`` from two scans (integers,
    exact in float64), on grades 0-4, navigational and informational intents, lists with unjudged and missing
    documents; and P+Q@l equals the reference."""
    if not int32_sums:
        monkeypatch.setattr(dmeasures, "INT32_SUMS", 0)
    rng = np.random.default_rng(13)
    judgments = {
        f"t{t}": {f"d{d}": {str(i): int(rng.integers(0, 5)) for i in rng.choice(6, size=2, replace=False)} for d in range(30)}
        for t in range(4)
    }
    intents = {topic: [Intent(str(i), 1.0 + i, "nav" if i % 3 == 0 else "inf") for i in range(6)] for topic in judgments}
    collection = build_collection(judgments, intents)
    runs = [
        Run(f"r{n}", {f"t{t}": [f"d{d}" for d in rng.permutation(36)[: rng.integers(0, depth + 1)]] for t in range(4 - n % 2)})
        for n in range(5)
    ]
    table = table_for(collection)
    ranking = build_ranking(table, runs, depth=depth)
    fused, _ = _per_intent_sums(ranking, 1.0)
    assert not np.isnan(fused).any()
    cum_gain = scan(np.add, ranking.grades.astype(np.float64), INTENT_RANK_AXIS)
    ideal = table.intent_ideal(ranking.depth)[table.pair_topic, table.pair_intent][:, :, None]
    general = blended_ratio_sums(
        cum_gain, relevant_count(ranking), relevant(ranking), scan(np.add, ideal, INTENT_RANK_AXIS), 1.0, INTENT_RANK_AXIS
    )
    np.testing.assert_array_equal(fused.view(np.int64), general.view(np.int64))
    for k in (1, 5, depth):
        values = pplus_q(ranking, k, beta=1.0)
        for n, run in enumerate(runs):
            for m, topic in enumerate(table.topic_ids):
                t = ref.RefTopic.of(collection, topic)
                expected = ref.pplus_q(t, list(run.lists.get(topic, [])), k, 1.0)
                assert values[n, m] == pytest.approx(expected, abs=1e-12)


def _random_ranking(seed: int, depth: int, n_runs: int, n_topics: int, condensed: bool = False):
    """A ranking of ``n_runs`` runs over ``n_topics`` topics: lists of 0 to ``depth`` documents (a run missing a
    topic, a one-document list, unjudged documents), on a weighted collection."""
    rng = np.random.default_rng(seed)
    judgments = {
        f"t{t}": {f"d{d}": {str(i): int(rng.integers(0, 4)) for i in rng.choice(4, size=2, replace=False)} for d in range(25)}
        for t in range(n_topics)
    }
    collection = build_collection(judgments, {topic: [Intent(str(i), 1.0 + i, "inf") for i in range(4)] for topic in judgments})
    sizes = [0, 1, depth] + [int(x) for x in rng.integers(0, depth + 1, size=n_runs * n_topics)]
    runs = [
        Run(
            f"r{n}",
            {f"t{t}": [f"d{d}" for d in rng.permutation(30)[: sizes[n * n_topics + t]]] for t in range(n_topics - n % 2 * (n_topics > 1))},
        )
        for n in range(n_runs)
    ]
    ranking = build_ranking(table_for(collection), runs, depth=depth)
    return ranking.condense() if condensed else ranking


@pytest.mark.parametrize(
    ("depth", "n_runs", "n_topics", "condensed"),
    [(20, 6, 3, False), (20, 6, 3, True), (9, 1, 1, False), (1, 3, 2, False), (40, 1, 2, True)],
)
def test_shown_sum_is_the_sum_over_present_ranks_bit_for_bit(depth: int, n_runs: int, n_topics: int, condensed: bool) -> None:
    """EU's and RBU's effort term (docs/benchmarks.md#memory, ninth round): a discount summed over the ranks a document
    occupies, read from the running sum at each list's length, has the bits of the former ``(present * disc).sum(axis=0)``,
    for every cutoff, one run and one topic, empty and one-document lists, and condensed lists."""
    ranking = _random_ranking(depth + n_runs, depth, n_runs, n_topics, condensed)
    present = ranking.rows != ranking.table.PAD
    for k in sorted({1, min(2, ranking.depth), ranking.depth // 2 or 1, ranking.depth}):  # the kernels' cutoffs: at most the depth
        for disc in (1.0 / (1.0 + np.log2(np.arange(1, k + 1, dtype=np.float64))), 0.8 ** np.arange(k, dtype=np.float64)):
            former = (present[:k] * disc[:, None, None]).sum(axis=0)
            np.testing.assert_array_equal(shown_sum(ranking, disc).view(np.int64), former.view(np.int64))
