"""In-memory builders: ``runs_from_arrays`` and ``judgments_from_arrays`` give what the file readers
give (same ordering options of docs/metrics.md#runs, same duplicate rules), and evaluate identically."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evaluation import (
    EvaluationError,
    EvaluationWarning,
    build_collection,
    judgments_from_arrays,
    load_collection,
    read_qrels,
    read_run,
    runs_from_arrays,
    score_matrix,
)
from evaluation.collection import ColumnJudgments, QrelsColumns
from evaluation.io.runs import RankedLists
from evaluation.metrics import default_measures
from tests.evaluation.toy import TOY_QRELS

ORDERS = ("score", "pyndeval", "rank", "file")


def _run_text(lines: list[tuple[str, str, str, int, float]]) -> str:
    return "".join(f"{t} Q0 {d} {rank} {score!r} {run}\n" for run, t, d, rank, score in lines)


def _from_lines(lines: list[tuple[str, str, str, int, float]], **options):
    runs, topics, docids, ranks, scores = (list(c) for c in zip(*lines))
    return runs_from_arrays(runs, topics, docids, scores, ranks=ranks, **options)


# TESTS: runs ========================================================================================

# file order b, a, c, d9, d10; ranks a 1, c 2, b 3, d10 4, d9 5; scores a 2.0, the rest tied at 1.0
TIED = [("r", "q1", "b", 3, 1.0), ("r", "q1", "a", 1, 2.0), ("r", "q1", "c", 2, 1.0), ("r", "q1", "d9", 5, 1.0), ("r", "q1", "d10", 4, 1.0)]


@pytest.mark.parametrize(
    ("order", "expected"),
    [
        ("score", ["a", "d9", "d10", "c", "b"]),
        ("pyndeval", ["a", "b", "c", "d10", "d9"]),
        ("rank", ["a", "c", "b", "d10", "d9"]),
        ("file", ["b", "a", "c", "d9", "d10"]),
    ],
)
def test_orderings_match_read_run(tmp_path: Path, order: str, expected: list[str]) -> None:
    (built,) = _from_lines(TIED, order=order)
    path = tmp_path / "tied.run"
    path.write_text(_run_text(TIED))
    assert list(built.lists["q1"]) == expected == list(read_run(path, order=order).lists["q1"])
    assert built.name == "r"


def test_several_runs_and_topics_in_order_of_first_appearance() -> None:
    lines = [
        ("A", "q2", "z", 1, 1.0),
        ("B", "q1", "y", 1, 3.0),
        ("A", "q1", "y", 1, 1.0),
        ("A", "q2", "w", 2, 0.5),
        ("B", "q1", "x", 2, 4.0),
    ]
    a, b = _from_lines(lines)
    assert (a.name, b.name) == ("A", "B")
    assert list(a.lists) == ["q2", "q1"] and dict(a.lists) == {"q2": ("z", "w"), "q1": ("y",)}
    assert dict(b.lists) == {"q1": ("x", "y")}
    assert a.depth == 2 and b.depth == 2


def test_duplicate_docids_warn_and_keep_the_highest_ranked() -> None:
    lines = [("r", "q1", "a", 3, 1.0), ("r", "q1", "b", 2, 2.0), ("r", "q1", "a", 1, 3.0), ("r", "q2", "a", 1, 1.0)]
    with pytest.warns(EvaluationWarning, match=r"run r topic q1: duplicate docid a"):
        (run,) = _from_lines(lines)
    assert dict(run.lists) == {"q1": ("a", "b"), "q2": ("a",)}
    with pytest.raises(EvaluationError, match="q1.*duplicate.*a"):
        _from_lines(lines, on_duplicate_doc="error")


def test_bad_arrays_are_errors() -> None:
    with pytest.raises(EvaluationError, match="finite"):
        runs_from_arrays(["r"], ["q"], ["d"], [float("nan")])
    with pytest.raises(EvaluationError, match="same length"):
        runs_from_arrays(["r", "r"], ["q"], ["d"], [1.0])
    with pytest.raises(EvaluationError, match="rank 1 repeated"):
        runs_from_arrays(["r", "r"], ["q", "q"], ["a", "b"], ranks=[1, 1], order="rank")
    with pytest.raises(ValueError, match="order"):
        runs_from_arrays(["r"], ["q"], ["d"], [1.0], order="random")  # type: ignore[arg-type]


def test_lists_already_in_order_split_blocks_and_ties() -> None:
    """The usual input (each list one block, best first) and its near misses give read_run's lists."""
    in_order = [("r", "q1", "a", 1, 3.0), ("r", "q1", "b", 2, 2.0), ("r", "q2", "c", 1, 1.0), ("s", "q1", "b", 1, 5.0)]
    r, s = _from_lines(in_order, order="pyndeval")
    assert dict(r.lists) == {"q1": ("a", "b"), "q2": ("c",)} and dict(s.lists) == {"q1": ("b",)}
    split = [("r", "q1", "a", 1, 3.0), ("r", "q2", "c", 1, 1.0), ("r", "q1", "b", 2, 4.0)]  # q1 comes back later
    (run,) = _from_lines(split, order="pyndeval")
    assert dict(run.lists) == {"q1": ("b", "a"), "q2": ("c",)}
    tied = [("r", "q1", "b", 1, 1.0), ("r", "q1", "a", 2, 1.0)]  # in score order, but tied: docid decides
    assert dict(_from_lines(tied, order="pyndeval")[0].lists) == {"q1": ("a", "b")}
    assert dict(_from_lines(tied, order="score")[0].lists) == {"q1": ("b", "a")}
    with pytest.raises(EvaluationError, match="run name, a topic and a docid"):
        runs_from_arrays(["r", "r"], ["q1", None], ["a", "b"], [2.0, 1.0])
    assert runs_from_arrays([], [], [], []) == []


LINE = st.tuples(
    st.sampled_from(["r1", "r2", "r3"]),
    st.sampled_from(["q1", "q2"]),
    st.sampled_from(["a", "b", "c", "d9", "d10", "x"]),
    st.sampled_from([0.0, 0.5, 1.0, 2.0, -1.0]),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(LINE, min_size=1, max_size=30), st.sampled_from(ORDERS))
def test_any_lines_give_the_lists_of_read_run(tmp_path: Path, raw: list, order: str) -> None:
    """Ties, duplicates and interleaved runs: every run equals read_run of its own file."""
    lines = [(run, topic, doc, n + 1, score) for n, (run, topic, doc, score) in enumerate(raw)]  # unique ranks
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EvaluationWarning)
        built = {run.name: run for run in _from_lines(lines, order=order)}
        for name, run in built.items():
            path = tmp_path / f"{name}.run"
            path.write_text(_run_text([line for line in lines if line[0] == name]))
            expected = read_run(path, order=order)
            assert {t: tuple(d) for t, d in expected.lists.items()} == dict(run.lists)
    assert list(built) == list(dict.fromkeys(line[0] for line in lines))


def test_ranked_lists_read_like_a_dict() -> None:
    lists = RankedLists.of({"q1": ["a", "b"], "q2": [], "q3": ("c",)})
    assert dict(lists) == {"q1": ("a", "b"), "q2": (), "q3": ("c",)}
    assert list(lists.lengths) == [2, 0, 1] and len(lists) == 3 and "q2" in lists and "zz" not in lists
    assert RankedLists.of(lists) is lists


# TESTS: judgments ===================================================================================


def test_judgments_from_arrays_equal_read_qrels_and_build_the_same_collection() -> None:
    expected = read_qrels(TOY_QRELS)
    rows = [(t, i, d, g) for t, docs in expected.items() for d, grades in docs.items() for i, g in (grades.items() or [(None, 0)])]
    judgments = judgments_from_arrays(*(list(c) for c in zip(*rows)))
    assert isinstance(judgments, ColumnJudgments)
    assert dict(judgments) == expected
    a, b = build_collection(judgments), build_collection(expected)
    assert a.topics == b.topics and a.max_grade == b.max_grade
    assert a.relevant_intents("T1") == b.relevant_intents("T1") and a.judged_documents("T1") == b.judged_documents("T1")


def test_negative_grades_none_intents_and_duplicates() -> None:
    judgments = judgments_from_arrays(["q", "q", "q"], ["1", None, "2"], ["a", "b", "a"], [-2, 0, 3])
    assert dict(judgments) == {"q": {"a": {"1": 0, "2": 3}, "b": {}}}
    with pytest.raises(EvaluationError, match="duplicate judgment for topic q intent 1 doc a"):
        judgments_from_arrays(["q", "q"], ["1", "1"], ["a", "a"], [1, 2])
    kept = judgments_from_arrays(["q", "q", "q"], ["1", "1", "2"], ["a", "a", "a"], [1, 2, 0], on_duplicate="max")
    assert dict(kept) == {"q": {"a": {"1": 2, "2": 0}}}
    with pytest.raises(EvaluationError, match="integers"):
        judgments_from_arrays(["q"], ["1"], ["a"], [1.5])
    with pytest.raises(EvaluationError, match="grade 0"):
        judgments_from_arrays(["q"], [None], ["a"], [1])


def test_grade_columns_of_every_kind_read_as_np_asarray_would() -> None:
    """integer_column: a list of integers (Python, NumPy, bools) takes the array.array copy, anything else np.asarray."""
    from evaluation.judgments import integer_column

    for values in ([3, -1, 0], (2, 1), [True, False, 2], [np.int64(4), np.int32(-2), 1], []):
        got = integer_column(values)
        assert got.dtype.kind in "iub" and got.tolist() == np.asarray(values).astype(np.int64).tolist()
    for values in ([1, 2.0], [np.float64(1)], ["1"], [None], [2**64]):
        assert integer_column(values).dtype == np.asarray(values).dtype  # left to np.asarray: the same dtype, the same error
    array = np.array([1, 2], dtype=np.int16)
    assert integer_column(array) is array
    bools = judgments_from_arrays(["q", "q"], ["1", "2"], ["a", "a"], [True, False])
    assert dict(bools) == {"q": {"a": {"1": 1, "2": 0}}}
    for bad in ([1, 2.5], ["2", "1"], [None, 1], [2**64, 1]):
        with pytest.raises(EvaluationError, match="integers"):
            judgments_from_arrays(["q", "q"], ["1", "2"], ["a", "a"], bad)


def test_columns_of_a_dict_and_topic_selection() -> None:
    columns = QrelsColumns.of({"q": {"a": {"1": 2}, "b": {}}, "p": {"c": {"2": 1}}})
    assert columns.relevant_pairs() == {("q", "1"), ("p", "2")}
    assert columns.intent_ids() == {"q": {"1"}, "p": {"2"}}
    picked = columns.select(["p", "zz"])
    assert picked.topics == ("p", "zz") and picked.grade.tolist() == [1]


def test_array_built_inputs_score_like_file_inputs() -> None:
    """The trec2014 reference collection and runs, built from arrays, score exactly like the readers' objects."""
    from tests.evaluation.golden import REFERENCE

    qrels = REFERENCE / "trec2014" / "qrels.diversity.tsv"
    paths = sorted((REFERENCE / "runs" / "public").glob("*.run"))[:3]
    lines = [line.split() for line in qrels.read_text().splitlines() if line.strip()]
    from_arrays = build_collection(judgments_from_arrays(*([f[n] for f in lines] for n in range(3)), [int(f[3]) for f in lines]))
    run_lines = [(p.name, *line.split()) for p in paths for line in p.read_text().splitlines() if line.strip()]
    runs = runs_from_arrays(
        [r[0] for r in run_lines], [r[1] for r in run_lines], [r[3] for r in run_lines], [float(r[5]) for r in run_lines]
    )
    measures = default_measures(cutoffs=(5, 20))
    got = score_matrix(from_arrays, runs, measures)
    expected = score_matrix(load_collection(qrels), [read_run(p) for p in paths], measures)
    np.testing.assert_array_equal(got, expected)


def test_runs_built_together_lay_out_like_plain_dict_runs() -> None:
    """Consecutive runs of one runs_from_arrays call are laid out from their shared flat lists; any
    other selection (a gap, a repeat, reordering) goes the general way: the same rows either way."""
    from evaluation import Run
    from evaluation.arrays import build_ranking, table_for
    from evaluation.io.runs import ListBatch

    collection = load_collection(TOY_QRELS)
    topics = list(collection.topic_ids) + ["not-judged"]
    docs = sorted({d for t in collection.topic_ids for d in collection.judged_documents(t)}) + ["unjudged"]
    lines = [(f"r{r}", t, d, float(-n)) for r in range(4) for t in topics[r % 2 :] for n, d in enumerate(docs[r:][:5])]
    runs = runs_from_arrays(*(list(c) for c in zip(*lines)), order="pyndeval")
    table = table_for(collection)
    for chosen in (runs, runs[1:3], [runs[0], runs[2]], [runs[1], runs[1]], runs[::-1]):
        spanned = ListBatch.spanned(chosen)
        assert (spanned is not None) == (chosen in (runs, runs[1:3]))
        plain = [Run(r.name, dict(r.lists)) for r in chosen]
        got, want = build_ranking(table, chosen, depth=6), build_ranking(table, plain, depth=6)
        np.testing.assert_array_equal(got.rows, want.rows)
        np.testing.assert_array_equal(got.lengths, want.lengths)


def test_huge_ranks_keep_their_order() -> None:
    """The in-order check compares neighbours, no difference that could overflow."""
    (run,) = runs_from_arrays(["a", "a"], ["t", "t"], ["x", "y"], ranks=[2**63 - 1, -2], order="rank")
    assert dict(run.lists) == {"t": ("y", "x")}


# TESTS: duplicates found without a vocabulary ========================================================

CLASH_QRELS = [("q1", "1", "a", 1), ("q1", "1", "b", 0), ("q1", "2", "c", 2), ("q1", "2", "d10", 1), ("q2", "1", "a", 2),
               ("q2", "1", "x", 1), ("q3", "1", "f", 0)]  # fmt: skip  # q3: no relevant document


class _ClashingStr(str):
    """A docid with one of three hash values: nearly every entry of a list clashes with another's hash."""

    def __hash__(self) -> int:
        return len(self) % 3


def _clashing(lines: list, qrels: list) -> tuple[list, list]:
    """Run lines and qrels with every docid a :class:`_ClashingStr`."""
    return [(r, t, _ClashingStr(d), n, s) for r, t, d, n, s in lines], [(t, i, _ClashingStr(d), g) for t, i, d, g in qrels]


def _reference_runs(lines: list, order: str) -> list:
    """What runs_from_arrays promises, the slow way: per run and topic, sort by the order's key
    (docs/metrics.md#runs), then keep each docid's first occurrence (dedupe_ranked)."""
    from evaluation import Run
    from evaluation.io.runs import dedupe_ranked

    keys = {
        "score": lambda e: (-e[3], tuple(-ord(c) for c in e[1]) + (1,)),  # docid descending; a prefix sorts after
        "pyndeval": lambda e: (-e[3], e[1]),
        "rank": lambda e: e[2],
        "file": lambda e: 0,
    }
    by_run: dict[str, dict[str, list]] = {}
    for run, topic, doc, rank, score in lines:
        by_run.setdefault(run, {}).setdefault(topic, []).append((topic, doc, rank, score))
    out = []
    for run, topics in by_run.items():
        lists = {t: dedupe_ranked([e[1] for e in sorted(es, key=keys[order])], run=run, topic=t) for t, es in topics.items()}
        out.append(Run(run, lists))
    return out


@pytest.mark.parametrize("hashes", ["python", "clashing"])
@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["r1", "r2"]),
            st.sampled_from(["q1", "q2", "q3", "q9"]),  # q3: no relevant document; q9: not in the qrels
            st.sampled_from(["a", "b", "c", "d10", "d9", "x", "u1", "u22", "u333"]),  # u*: unjudged everywhere
            st.sampled_from([0.0, 1.0, 2.0]),  # ties
        ),
        min_size=1,
        max_size=40,
    ),
    st.sampled_from(ORDERS),
)
def test_lists_and_scores_equal_the_reference_even_when_hashes_clash(hashes: str, raw: list, order: str) -> None:
    """Duplicate docids (kept at their first ranked place), unjudged documents, ties, empty and unknown
    topics: runs_from_arrays gives the lists and the scores of a plain Python reference, with Python's
    hashes and with hashes that clash for different docids (only equal docids count as repeats)."""
    lines = [(run, topic, doc, n + 1, score) for n, (run, topic, doc, score) in enumerate(raw)]
    qrels = CLASH_QRELS
    if hashes == "clashing":
        lines, qrels = _clashing(lines, qrels)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EvaluationWarning)
        built = _from_lines(lines, order=order)
        reference = _reference_runs(lines, order)
        assert [(r.name, dict(r.lists)) for r in built] == [(r.name, {t: tuple(d) for t, d in r.lists.items()}) for r in reference]
        collection = build_collection(judgments_from_arrays(*(list(c) for c in zip(*qrels))))
        measures = default_measures(cutoffs=(1, 3))
        np.testing.assert_array_equal(score_matrix(collection, built, measures), score_matrix(collection, reference, measures))


@pytest.mark.parametrize("hashes", ["python", "clashing"])
@given(st.lists(st.tuples(st.integers(0, 3), st.sampled_from(["a", "b", "ab", "ba", "c"])), max_size=30))
def test_repeated_in_lists_equals_pandas_duplicated(hashes: str, pairs: list) -> None:
    """Repeats within a list (consecutive blocks, long and short lists alike) are pandas' duplicated,
    with Python's hashes and with hashes that clash for different docids."""
    import pandas as pd

    from evaluation._factorize import repeated_in_lists

    pairs = sorted(pairs, key=lambda pair: pair[0])  # lists are consecutive blocks
    group = np.array([g for g, _ in pairs], dtype=np.int64)
    wrap = _ClashingStr if hashes == "clashing" else str
    values = np.array([wrap(v) for _, v in pairs], dtype=object)
    sizes = np.bincount(group, minlength=4) if group.size else np.zeros(0, dtype=np.int64)
    got = repeated_in_lists(sizes, values)
    want = pd.DataFrame({"g": group, "v": values.astype(str)}).duplicated().to_numpy()
    assert got.tolist() == want.tolist()


@given(st.lists(st.tuples(st.integers(0, 2), st.integers(0, 3), st.sampled_from(["a", "b", "ab", "c", "d", "e"])), max_size=60))
def test_repeated_in_lists_taken_together_equals_pandas_duplicated(entries: list) -> None:
    """Short lists of one run are checked together first (a shared docid between two lists of the run,
    or a repeat inside one, sends the block list by list): the same mask as pandas' duplicated."""
    import pandas as pd

    from evaluation._factorize import repeated_in_lists

    entries = sorted(entries, key=lambda entry: entry[:2])  # lists (run, topic) are consecutive blocks
    keys = sorted({(run, topic) for run, topic, _ in entries})
    list_of = np.array([keys.index((run, topic)) for run, topic, _ in entries], dtype=np.int64)
    values = np.array([v for _, _, v in entries], dtype=object)
    sizes = np.bincount(list_of, minlength=len(keys)) if entries else np.zeros(0, dtype=np.int64)
    runs = np.array([run for run, _ in keys], dtype=np.int64)
    got = repeated_in_lists(sizes, values, together=runs)
    want = pd.DataFrame({"g": list_of, "v": values.astype(str)}).duplicated().to_numpy()
    assert got.tolist() == want.tolist()


def test_repeated_in_lists_blocks_of_many_short_lists() -> None:
    """Blocks end at about REPEAT_BLOCK values and where the run changes; a repeat in the 700th list of a
    run (several blocks) and a docid shared by two lists of a run (not a repeat) are told apart."""
    from evaluation._factorize import repeated_in_lists

    sizes = np.full(2000, 3)
    values = [f"d{n}" for n in range(6000)]
    values[700 * 3 + 2] = values[700 * 3]  # list 700 repeats its first docid
    values[1500 * 3] = values[1400 * 3]  # lists 1400 and 1500 share a docid
    together = np.repeat([0, 1], 1000)
    got = repeated_in_lists(sizes, np.array(values, dtype=object), together=together)
    assert np.flatnonzero(got).tolist() == [2102]
    assert repeated_in_lists(sizes, np.array(values, dtype=object)).tolist() == got.tolist()


def test_repeated_in_long_lists() -> None:
    """Lists long enough to be read as views of the array: repeats anywhere in them, none across lists."""
    from evaluation._factorize import repeated_in_lists

    first = [f"d{n}" for n in range(150)] + ["d3", "d149", "d3"]
    second = [f"d{n}" for n in range(100)]
    got = repeated_in_lists(np.array([len(first), len(second)]), np.array(first + second, dtype=object))
    assert np.flatnonzero(got).tolist() == [150, 151, 152]


def test_docids_are_checked_and_not_shared_with_the_caller() -> None:
    docids = np.array(["a", "b"], dtype=object)
    (run,) = runs_from_arrays(["r", "r"], ["q", "q"], docids, [2.0, 1.0])
    docids[0] = "changed"
    assert dict(run.lists) == {"q": ("a", "b")}
    for missing in (None, float("nan")):
        with pytest.raises(EvaluationError, match="run name, a topic and a docid"):
            runs_from_arrays(["r", "r"], ["q", "q"], ["a", missing], [2.0, 1.0])
