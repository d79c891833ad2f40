"""Runs are scored in memory-bounded batches; batching never changes a value."""

from __future__ import annotations

import numpy as np

from evaluation import engine, load_collection, read_run, score_matrix
from evaluation.metrics import default_measures
from tests.evaluation.golden import REFERENCE


def test_batched_scores_equal_single_batch_scores(monkeypatch) -> None:
    col = load_collection(REFERENCE / "trec2014" / "qrels.diversity.tsv", REFERENCE / "trec2014" / "intent_probs_din.tsv")
    runs = [read_run(p) for p in sorted((REFERENCE / "runs" / "public").glob("*.run"))]
    measures = default_measures(cutoffs=(5, 20))
    whole = score_matrix(col, runs, measures)
    monkeypatch.setattr(engine, "BATCH_CELLS", 1)  # one run per batch
    batched = score_matrix(col, runs, measures)
    np.testing.assert_array_equal(np.isnan(whole), np.isnan(batched))
    np.testing.assert_allclose(np.nan_to_num(batched), np.nan_to_num(whole), rtol=0, atol=1e-15)


def test_measure_order_and_family_release_never_change_a_value() -> None:
    """Measures run family by family (each family's blocks freed after it); any request order gives
    the same values, bit for bit, as one measure at a time on a fresh ranking."""
    from evaluation.arrays import build_ranking, table_for

    col = load_collection(REFERENCE / "trec2014" / "qrels.diversity.tsv", REFERENCE / "trec2014" / "intent_probs_din.tsv")
    runs = [read_run(p) for p in sorted((REFERENCE / "runs" / "public").glob("*.run"))[:4]]
    measures = default_measures(cutoffs=(5, 20), condensed=True)
    shuffled = [measures[n] for n in np.random.default_rng(7).permutation(len(measures))]  # families interleaved
    got = score_matrix(col, runs, shuffled)
    table = table_for(col)
    for n, measure in enumerate(shuffled):
        ranking = build_ranking(table, runs, depth=20)
        if measure.condensed:
            ranking = ranking.condense()
        with np.errstate(divide="ignore", invalid="ignore"):
            alone = measure.spec.kernel(ranking, measure.cutoff, **measure.params)
        np.testing.assert_array_equal(got[n], alone, err_msg=measure.label)


def test_release_keeps_only_shared_blocks() -> None:
    from evaluation.arrays import build_ranking, table_for
    from evaluation.metrics._common import novelty_decay, relevant_count, relevant_position

    col = load_collection(REFERENCE / "trec2014" / "qrels.diversity.tsv")
    ranking = build_ranking(table_for(col), [read_run(sorted((REFERENCE / "runs" / "public").glob("*.run"))[0])])
    count, position = relevant_count(ranking), relevant_position(ranking)
    decay = novelty_decay(ranking, 0.5)  # a family's own block: freed with the family
    private = ranking.memo(("family block",), lambda: np.ones(3))
    ranking.release()
    assert relevant_count(ranking) is count and relevant_position(ranking) is position
    assert ranking.memo(("family block",), lambda: np.zeros(3)) is not private  # rebuilt after release
    assert novelty_decay(ranking, 0.5) is not decay
    np.testing.assert_array_equal(novelty_decay(ranking, 0.5), decay)


def test_released_blocks_are_reused_only_when_nothing_refers_to_them() -> None:
    """A family's per-intent block goes back to the ranking for the next family's ``block()`` when
    nothing refers to it any more; a block a caller still holds, or a view still reads, is never lent."""
    import weakref

    from evaluation.arrays import build_ranking, table_for

    col = load_collection(REFERENCE / "trec2014" / "qrels.diversity.tsv")
    ranking = build_ranking(table_for(col), [read_run(sorted((REFERENCE / "runs" / "public").glob("*.run"))[0])])
    free = weakref.ref(ranking.memo(("free",), ranking.block))
    held = ranking.memo(("held",), ranking.block)
    view = ranking.memo(("viewed",), ranking.block)[:, :1]
    ranking.memo(("small",), lambda: np.ones(3))
    ranking.release()
    assert free() is not None  # kept for reuse
    first, second = ranking.block(), ranking.block()
    assert first is free()
    assert second is not held and not np.shares_memory(second, held) and not np.shares_memory(second, view)
    assert first.shape == second.shape == (ranking.table.n_pairs, ranking.depth, ranking.n_runs)


def test_scratch_buffer_is_one_per_ranking_and_never_lent_twice() -> None:
    import pytest

    from evaluation.arrays import build_ranking, table_for

    col = load_collection(REFERENCE / "trec2014" / "qrels.diversity.tsv")
    table = table_for(col)
    ranking = build_ranking(table, [read_run(sorted((REFERENCE / "runs" / "public").glob("*.run"))[0])])
    with ranking.scratch() as first:
        assert first.shape == (table.n_pairs, ranking.depth, ranking.n_runs) and first.dtype == np.float64
        with pytest.raises(RuntimeError, match="already in use"):
            with ranking.scratch():
                pass
    with ranking.scratch() as second:
        assert second is first


def test_each_slice_looks_up_only_its_own_docids(monkeypatch) -> None:
    """score_matrix lays runs built together out in slices; each slice looks up its own lines' docids
    (every line once over all slices, nothing kept between slices: memory bounded by a slice)."""
    from evaluation import _factorize, runs_from_arrays

    calls = []
    real = _factorize.Lookup.positions
    monkeypatch.setattr(_factorize.Lookup, "positions", lambda lookup, values: calls.append(list(values)) or real(lookup, values))
    built = runs_from_arrays(
        ["a", "a", "b", "b", "c"], ["1", "1", "1", "2", "1"], ["d1", "d2", "d2", "d3", "d9"], [3.0, 2.0, 1.0, 1.0, 1.0]
    )
    monkeypatch.setattr(engine, "BATCH_CELLS", 1)  # one run per slice
    collection = load_collection(REFERENCE / "trec2014" / "qrels.diversity.tsv")
    score_matrix(collection, built, default_measures()[:2])
    assert calls == [["d1", "d2"], ["d2", "d3"], ["d9"]]
