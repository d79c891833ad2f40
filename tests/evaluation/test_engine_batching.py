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
