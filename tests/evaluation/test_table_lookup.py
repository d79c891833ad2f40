"""TopicTable finds (topic, docid) rows in a dense table for small key spaces, by hashing otherwise:
both give the same rows, rankings and scores."""
from __future__ import annotations

import numpy as np

from evaluation import arrays, load_collection, read_run, score_matrix
from evaluation.arrays import TopicTable, build_ranking
from evaluation.metrics import default_measures
from tests.evaluation.golden import REFERENCE


def test_dense_and_hashed_row_lookup_agree(monkeypatch) -> None:
    col = load_collection(REFERENCE / "trec2014" / "qrels.diversity.tsv", REFERENCE / "trec2014" / "intent_probs_din.tsv")
    runs = [read_run(p) for p in sorted((REFERENCE / "runs" / "public").glob("*.run"))][:4]
    dense = TopicTable(col)
    assert dense._row_of_key is not None
    monkeypatch.setattr(arrays, "DENSE_KEYS", 0)
    hashed = TopicTable(col)
    assert hashed._row_of_key is None
    np.testing.assert_array_equal(dense.row_keys, hashed.row_keys)
    np.testing.assert_array_equal(dense.grades, hashed.grades)
    np.testing.assert_array_equal(build_ranking(dense, runs).rows, build_ranking(hashed, runs).rows)
    measures = default_measures(cutoffs=(5, 20))
    by_dense = score_matrix(col, runs, measures)  # the collection's cached table (dense)
    col._cache["table"] = hashed
    np.testing.assert_array_equal(score_matrix(col, runs, measures), by_dense)
