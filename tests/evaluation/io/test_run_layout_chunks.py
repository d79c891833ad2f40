"""runs_from_arrays lays lines out chunk by chunk (bounded memory): every chunk size gives the same runs."""

from __future__ import annotations

import random
import warnings

import numpy as np
import pytest

from evaluation import runs_from_arrays
from evaluation.exceptions import EvaluationError


def _lines(seed: int, *, interleave: bool) -> tuple[list, list, list, list]:
    rng = random.Random(seed)
    rows = []
    for run in ("r1", "r2", "r3"):
        for topic in rng.sample(["1", "2", "3", "4"], 3):
            docs = [f"d{rng.randrange(12)}" for _ in range(rng.randrange(1, 7))]  # repeats and ties on purpose
            rows.extend((run, topic, doc, float(rng.randrange(4))) for doc in docs)
    if interleave:
        rng.shuffle(rows)
    return tuple(list(column) for column in zip(*rows))  # type: ignore[return-value]


def _as_dicts(runs) -> list[tuple[str, dict]]:
    return [(run.name, {topic: list(run.lists[topic]) for topic in run.lists}) for run in runs]


@pytest.mark.parametrize("interleave", [False, True])
@pytest.mark.parametrize("order", ["score", "pyndeval", "file"])
def test_every_chunk_size_gives_the_same_runs(interleave: bool, order: str) -> None:
    for seed in range(8):
        columns = _lines(seed, interleave=interleave)
        with warnings.catch_warnings(record=True) as whole_warnings:
            warnings.simplefilter("always")
            whole = _as_dicts(runs_from_arrays(*columns, order=order))
        for chunk in (1, 2, 3, 7):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                assert _as_dicts(runs_from_arrays(*columns, order=order, chunk_lines=chunk)) == whole, (seed, chunk)
            assert sorted(str(w.message) for w in caught) == sorted(str(w.message) for w in whole_warnings)


def test_runs_not_in_first_appearance_order_across_chunks() -> None:
    """Run r2's lists come before and after r1's: the lists are regrouped by run."""
    columns = (["r2", "r1", "r1", "r2"], ["1", "1", "2", "2"], ["a", "b", "c", "d"], [1.0, 1.0, 1.0, 1.0])
    runs = runs_from_arrays(*columns, chunk_lines=1)
    assert _as_dicts(runs) == [("r2", {"1": ["a"], "2": ["d"]}), ("r1", {"1": ["b"], "2": ["c"]})]
    assert runs[0].lists.docids.tolist() == ["a", "d"]


def test_a_bad_score_names_its_line_run_topic_and_doc() -> None:
    columns = (["r", "r", "r"], ["1", "1", "2"], ["a", "b", "c"], [1.0, 2.0, float("nan")])
    for chunk in (1, 10):
        with pytest.raises(EvaluationError, match=r"line 2 \(run r topic 2 doc c\): score nan is not a finite number"):
            runs_from_arrays(*columns, chunk_lines=chunk)


def test_the_callers_arrays_are_left_alone() -> None:
    scores = np.array([1.0, 2.0, 3.0])
    docids = np.array(["a", "b", "c"], dtype=object)
    (run,) = runs_from_arrays(np.array(["r"] * 3, dtype=object), np.array(["1"] * 3, dtype=object), docids, scores, chunk_lines=2)
    assert scores.tolist() == [1.0, 2.0, 3.0] and docids.tolist() == ["a", "b", "c"]
    assert run.lists["1"] == ("c", "b", "a")
    assert not np.shares_memory(run.lists.docids, docids)
