"""TopicTable internals: (topic, docid) rows, per-topic reductions by intent position (the order of
``reduceat``); fast and plain paths agree bit for bit."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evaluation import load_collection, read_run
from evaluation.arrays import TopicTable, build_ranking
from tests.evaluation.golden import REFERENCE


def test_rows_of_ranked_documents_match_a_plain_lookup() -> None:
    """Every ranked (topic, docid) lands on the row holding that topic's judgments of the docid."""
    col = load_collection(REFERENCE / "trec2014" / "qrels.diversity.tsv", REFERENCE / "trec2014" / "intent_probs_din.tsv")
    runs = [read_run(p) for p in sorted((REFERENCE / "runs" / "public").glob("*.run"))][:4]
    table = TopicTable(col)
    assert np.all(np.diff(table.row_keys) > 0)  # rows in key order, no repeat
    where = {(table.topic_ids[table.topic_of_row[r]], table.docids[r]): r for r in range(table.n_docs)}
    assert len(where) == table.n_docs
    ranking = build_ranking(table, runs)
    for n, run in enumerate(runs):
        for t, topic in enumerate(table.topic_ids):
            docs = list(run.lists.get(topic, ()))
            got = ranking.rows[: len(docs), n, t].tolist()
            assert got == [where.get((topic, d), table.UNJUDGED) for d in docs]
            assert set(ranking.rows[len(docs) :, n, t].tolist()) <= {table.PAD}
    judged = col.judgments
    for r in range(0, table.n_docs, 97):  # grades read back from the row
        topic, doc = table.topic_ids[table.topic_of_row[r]], table.docids[r]
        intents = col.topics[topic].intent_ids
        assert {i: g for i, g in judged[topic][doc].items() if g} == {intents[n]: int(g) for n, g in enumerate(table.grades[r]) if g}


def _reduceat_per_topic(table: TopicTable, ufunc: np.ufunc, values: np.ndarray, empty) -> np.ndarray:
    """The plain ``ufunc.reduceat`` form of :meth:`TopicTable.per_topic`."""
    out = np.full((table.n_topics,) + values.shape[1:], empty, dtype=np.result_type(values.dtype, np.int64))
    starts, ends = table.pair_bounds[:-1], table.pair_bounds[1:]
    filled = ends > starts
    if filled.any():
        out[filled] = ufunc.reduceat(values, starts[filled], axis=0, dtype=out.dtype)
    return np.moveaxis(out, 0, -1)


def test_per_topic_equals_reduceat_bit_for_bit() -> None:
    col = load_collection(REFERENCE / "trec2014" / "qrels.diversity.tsv", REFERENCE / "trec2014" / "intent_probs_din.tsv")
    # also topics with one pair and without any (intents dropped, a topic judged nonrelevant only)
    small = col.keep_top_intents(1).restrict_topics(col.topic_ids[:10])
    small = small.drop_documents({t: small.relevant_documents(t) for t in small.topic_ids[2:4]})
    assert (np.diff(TopicTable(small).pair_bounds) == 0).sum() == 2
    rng = np.random.default_rng(7)
    for table in (TopicTable(col), TopicTable(small), TopicTable(col.keep_top_intents(2))):
        assert table.n_pairs > 0
        P = table.n_pairs
        for shape in ((P,), (P, 7), (P, 20, 30)):
            cases = [
                (np.add, rng.random(shape), 0),
                (np.add, rng.random(shape) - 0.5, 0),
                (np.add, rng.random(shape) > 0.5, 0),
                (np.add, rng.integers(0, 9, shape).astype(np.int16), 0),
                (np.maximum, rng.integers(0, 20, shape), 99),
            ]
            for ufunc, values, empty in cases:
                got, want = table.per_topic(ufunc, values, empty), _reduceat_per_topic(table, ufunc, values, empty)
                assert got.dtype == want.dtype and got.flags.c_contiguous
                np.testing.assert_array_equal(got, want)
                if got.dtype.kind == "f":  # the same bits, not only equal values
                    np.testing.assert_array_equal(got.view(np.int64), want.view(np.int64))


@pytest.mark.parametrize("pyarrow", [True, False])
def test_positions_equal_index_lookup(pyarrow: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """pyarrow's look-up and the dict that serves without it (and for values that are not all strings)."""
    from evaluation import _factorize
    from evaluation._factorize import Lookup, factorize

    if not pyarrow:
        monkeypatch.setattr(_factorize, "_pa", None)
    _, distinct = factorize(["d3", "d1", "d2", "d1", "d10"])
    for values in (["d2", "x", "d10", "d3", "d3", "", "d1"], ["d2", None, "d1"], [3, "d1"], ["é", "d3"], ["d1\n", "a\nb", "d1"], [""]):
        for given in (values, np.array(values, dtype=object)):
            got = Lookup(distinct).positions(given)
            assert got.dtype == np.int64
            np.testing.assert_array_equal(got, pd.Index(distinct, dtype=object).get_indexer(values))
    np.testing.assert_array_equal(Lookup(np.array([1, 2], dtype=object)).positions([2, 5, 1]), [1, -1, 0])
    np.testing.assert_array_equal(Lookup(distinct).positions([]), np.zeros(0, dtype=np.int64))
    with_newline = np.array(["a\nb", "c", ""], dtype=object)  # docids holding the strings' terminator: the dict
    np.testing.assert_array_equal(Lookup(with_newline).positions(["c", "a\nb", "a", ""]), [1, 0, -1, 2])


@pytest.mark.parametrize(
    "values",
    [
        ["d3", "d1", "d2", "d1", "d10"],
        ["a", None, "b", float("nan"), "a", None, "c"],  # missing values: code -1, not among the distinct ones
        [None, None],
        [3, 1, 3, 2],
        [],
    ],
)
def test_factorize_equals_pandas(values: list) -> None:
    from evaluation._factorize import factorize

    codes, distinct = factorize(values)
    want_codes, want_distinct = pd.factorize(np.array(values, dtype=object))
    assert codes.dtype == np.int64 and distinct.dtype == object
    np.testing.assert_array_equal(codes, want_codes)
    assert distinct.tolist() == list(want_distinct)


@pytest.mark.parametrize("keys", [[5, 3, 9], [5, 3, 5, 9, 3, 3], [], [7], [2, 2]])
def test_repeated_keys_equal_pandas_duplicated(keys: list[int]) -> None:
    from evaluation._factorize import repeated_keys

    key = np.array(keys, dtype=np.int64)
    np.testing.assert_array_equal(repeated_keys(key), pd.Series(key).duplicated().to_numpy())


def test_repeated_keys_of_nearly_ascending_keys_take_timsort_and_equal_pandas() -> None:
    """Qrels-like keys (ascending stretches, few descents) take kind="stable"; shuffled ones the default sort."""
    from evaluation._factorize import NEARLY_SORTED, repeated_keys

    ascending = np.arange(1000, dtype=np.int64) * 3
    cases = {
        "ascending": ascending,
        "one descent, no repeat": np.concatenate([ascending[500:], ascending[:500] + 1]),
        "one descent, a repeat": np.concatenate([ascending[500:], ascending[:500], [ascending[700]]]),
        "repeat next to itself": np.insert(ascending, 10, ascending[10]),
        "shuffled with repeats": np.random.default_rng(3).integers(0, 800, 1000),
    }
    for name, key in cases.items():
        descents = np.count_nonzero(key[1:] < key[:-1])
        assert (descents * NEARLY_SORTED < key.size) == (name != "shuffled with repeats"), name
        np.testing.assert_array_equal(repeated_keys(key), pd.Series(key).duplicated().to_numpy(), err_msg=name)


def test_ideal_lists_equal_per_topic_sorts() -> None:
    """Per-intent and global ideal gains (docs/metrics.md#ideal-lists), built for all topics at once, equal a plain
    per-topic sort of the judged grades."""
    col = load_collection(REFERENCE / "trec2014" / "qrels.diversity.tsv", REFERENCE / "trec2014" / "intent_probs_din.tsv")
    table = TopicTable(col)
    for length in (3, 20, 400):
        intent_ideal, global_ideal = table.intent_ideal(length), table.global_ideal(length)
        for t, (a, b) in enumerate(table.topic_rows):
            grades = table.grades[a:b].astype(np.float64)
            for i in range(table.n_intents):
                want = np.sort(grades[:, i][grades[:, i] > 0])[::-1][:length]
                np.testing.assert_array_equal(intent_ideal[t, i], np.pad(want, (0, length - want.size)))
            gg = table.doc_global_gain[a:b]
            want = np.sort(gg[gg > 0])[::-1][:length]
            np.testing.assert_array_equal(global_ideal[t], np.pad(want, (0, length - want.size)))
            assert table.n_global_rel[t] == (gg > 0).sum()


def test_factorize_blocks_of_several_columns() -> None:
    from evaluation._factorize import factorize_blocks

    topics = ["a", "a", "b", "b", "a", "a"]
    intents = ["1", "2", "2", "2", None, "1"]
    (topic_code, topic_names), (intent_code, intent_names) = factorize_blocks(topics, intents)
    assert topic_code.tolist() == [0, 0, 1, 1, 0, 0] and topic_names.tolist() == ["a", "b"]
    assert intent_code.tolist() == [0, 1, 1, 1, -1, 0] and intent_names.tolist() == ["1", "2"]
    with pytest.raises(ValueError, match="lengths"):
        factorize_blocks(topics, intents[:-1])


def test_block_heads_are_the_block_starts() -> None:
    from evaluation._factorize import block_heads

    assert block_heads(["r", "r", "r", "s", "s"], ["a", "a", "b", "b", "b"]).tolist() == [0, 2, 3]
    assert block_heads(np.array(["r", "r", "s"], dtype=object), ("a", "b", "b")).tolist() == [0, 1, 2]
    equal_not_identical = ["".join(["q", "1"]) for _ in range(3)]
    assert block_heads(equal_not_identical).tolist() == [0]
    assert block_heads(["a", None, None, float("nan"), float("nan")]).tolist() == [0, 1, 3, 4]
    assert block_heads([], []).tolist() == []
    assert block_heads(["x"]).tolist() == [0]
    with pytest.raises(ValueError, match="lengths"):
        block_heads(["a"], [])


def _groupby_sizes(column) -> list[int]:
    from itertools import groupby

    return [len(list(group)) for _, group in groupby(column)]


def _equal_run_columns() -> list:
    """Columns for :func:`equal_run_sizes`: long and short blocks, guessed ends right and wrong, probes
    that would skip a differing entry, repeats that are not neighbours, equal strings that are
    different objects, non-strings."""
    x, y, z = "r1", "r2", "r3"
    rng = np.random.default_rng(7)
    columns = [
        [],
        ["x"],
        [x] * 1000 + [y] * 1000 + [z] * 64,  # long blocks only
        [x] * 20 + [y] * 7 + [x] * 200,  # a block one short of SHORT_BLOCK, then long again
        [x] * 20 + [y] * 20 + [z] * 20 + [x] * 21 + [y] * 19 + [z] * 20,  # the guessed end right, then off by one each way
        [x] * 20 + [y] * 19 + [x] + [z] * 20,  # the guessed end (20) is not the block's end
        [x] * 20 + [y] * 5 + [z] + [y] * 14 + [x] * 20,  # the guessed end fits, a different entry inside: count catches it
        [x] * 3 + [y] + [x] * 300,  # a short first block
        [x] * 100 + [y] + [x] * 100,  # the probes (1, 2, 4, .., 128) jump over the single y: count catches it
        [x, x, x, y] + [x] * 200,
        [x] * 200 + [y] + [x] * 2 + [z] * 100,
        ["".join(["q", "1"]) for _ in range(300)] + ["".join(["q", "2"]) for _ in range(5)],  # equal, not identical
        [x] * 100 + [None] * 70 + [float("nan")] * 70 + [x] * 70,  # a non-string head: groupby from there
        tuple([x] * 80 + [y] * 90),
        np.array([x] * 80 + [y] * 90, dtype=object),
        [np.str_(x)] * 70 + [x] * 70,  # equal under ==, another type
        [x] * 70 + [1] * 70 + [1.0] * 70,
    ]
    # many short blocks of one size: checked many at once (_equal_blocks_ahead), with what must stop that
    topics = [f"t{n}" for n in range(50)]
    lists = [t for _ in range(40) for t in topics for _ in range(20)]  # 40 runs x 50 topics x depth 20
    columns += [
        lists,
        tuple(lists),
        lists[:-5],  # the last block shorter
        lists[:3000] + lists[3001:],  # one block one shorter in the middle
        lists[:3000] + [lists[3000]] + lists[3000:],  # one block one longer
        lists[:3010] + ["other"] + lists[3011:],  # a different entry inside a block
        lists[:3010] + [None] + lists[3011:],  # a non-string inside a block
        lists[:3000] + [None] * 20 + lists[3020:],  # a non-string block
        lists[:3000] + [lists[2999]] * 20 + lists[3020:],  # a block equal to the one before: one block of 40
        lists[:40000] + [lists[39999]] * 3,  # the entry after the last checked block equals its head
        ["".join(["t", str(n // 20 % 50)]) for n in range(40000)],  # equal strings, not identical
        [t for t in topics for _ in range(9)] * 30,  # blocks just over SHORT_BLOCK
        [t for t in topics for _ in range(64)] * 3,  # blocks of SPAN_BLOCK
        [t for t in topics for _ in range(65)] * 3,  # longer: block by block only
        [t for n, t in enumerate(topics * 40) for _ in range(20 + (n % 97 == 0))],  # now and then one longer
    ]
    for _ in range(60):  # random block lengths around SHORT_BLOCK, values from a small alphabet (repeats not neighbours)
        lengths = rng.integers(1, 40, size=rng.integers(1, 12))
        values = rng.choice(["a", "b", "c"], size=lengths.size).tolist()
        columns.append([v for v, k in zip(values, lengths.tolist()) for _ in range(k)])
    return columns


@pytest.mark.parametrize("column", _equal_run_columns())
def test_equal_run_sizes_equal_groupby(column) -> None:
    """The block-by-block walk gives ``itertools.groupby``'s group sizes on any column."""
    from evaluation._factorize import equal_run_sizes

    sizes = equal_run_sizes(column)
    assert sizes.dtype == np.int64
    assert sizes.tolist() == _groupby_sizes(column)


@pytest.mark.parametrize(
    ("values", "heads"),
    [
        (["d1", "d2", "d1", "d2", "d1", "d2"], [0, 2, 4]),  # every block repeats the first
        (["d1", "d2", "d1", "d3", "d1", "d3", "d2"], [0, 2, 4, 6]),  # a repeat of a block that differs from the first
        (["d1", "d2", "d2", "d1", "d1", "d2"], [0, 2, 4]),  # same documents, another order: hashed
        (["d1", None, "d1", None, float("nan"), "d4"], [0, 2, 4]),  # missing values keep code -1
        (["".join(["d", str(n % 3)]) for n in range(9)], [0, 3, 6]),  # equal strings that are different objects
        ([], []),
        (["x"], [0]),
    ],
)
def test_factorize_repeats_equals_factorize(values: list, heads: list[int]) -> None:
    """Blocks that repeat the block before them take its codes: the codes and distinct values of a plain factorize."""
    from evaluation._factorize import factorize, factorize_repeats

    codes, distinct = factorize_repeats(values, np.array(heads, dtype=np.int64))
    want_codes, want_distinct = factorize(values)
    np.testing.assert_array_equal(codes, want_codes)
    assert distinct.tolist() == want_distinct.tolist()
    array_codes, _ = factorize_repeats(np.array(values, dtype=object), np.array(heads, dtype=np.int64))
    np.testing.assert_array_equal(array_codes, want_codes)


@pytest.mark.parametrize("lengths", [(20, 5, 400, 1), (400, 20), (1,)])
def test_intent_ideal_keeps_the_longest_asked_for(lengths: tuple[int, ...]) -> None:
    """The per-intent ideal (grades of an intent's relevant documents, descending, zero padded) is computed to the
    length asked for and kept; a shorter one is its head, a longer one computed again: the same lists as sorting
    each (topic, intent)'s grades in Python, in any order of requests (docs/benchmarks.md#memory, ninth round)."""
    col = load_collection(REFERENCE / "trec2014" / "qrels.diversity.tsv", REFERENCE / "trec2014" / "intent_probs_din.tsv")
    for collection in (col, col.keep_top_intents(1).restrict_topics(col.topic_ids[:5])):
        table = TopicTable(collection)
        for length in lengths:
            got = table.intent_ideal(length)
            assert got.shape == (table.n_topics, table.n_intents, length)
            for t in range(table.n_topics):
                rows = slice(*table.topic_rows[t])
                for i in range(table.n_intents):
                    grades = sorted((int(g) for g in table.grades[rows, i] if g > 0), reverse=True)
                    want = (grades + [0] * length)[:length]
                    assert got[t, i].tolist() == want


@pytest.mark.parametrize("seed", range(4))
def test_relevant_rows_intent_by_intent_equal_any_over_intents(seed: int) -> None:
    """``relevant_doc`` and ``relevant_to`` (intent by intent over the intent-major grades) equal ``any`` along the
    intent axis of ``grades``; sentinel rows, topics without a relevant document, one intent, negative grades."""
    from evaluation import build_collection, judgments_from_arrays

    rng = np.random.default_rng(seed)
    rows = [
        (f"t{t}", f"i{i}", f"d{d}", int(rng.choice([-1, 0, 0, 1, 2, 3])) if t != 2 else 0)
        for t in range(5)
        for i in range(1 + t % 4)
        for d in rng.choice(40, 12, replace=False).tolist()
    ]
    table = TopicTable(build_collection(judgments_from_arrays(*(list(c) for c in zip(*rows)))))
    relevant = table.grades >= 1
    assert table.relevant_doc.tolist() == relevant.any(axis=1).tolist()
    assert not table.relevant_doc[table.n_docs :].any()
    chosen = rng.random((table.n_topics, table.n_intents)) < 0.5
    assert table.relevant_to(chosen).tolist() == (relevant & chosen[table.topic_of_row]).any(axis=1).tolist()
    assert table.relevant_to(np.zeros_like(chosen)).tolist() == [False] * (table.n_docs + 2)


def _ranking_cases():
    """Runs (name, topic, docid) rows: full lists in the table's topic order (the whole-block path), and inputs
    that take the scatter: a topic missing from a run, topics in another order, shorter lists, one document."""
    docs = [f"d{n}" for n in range(12)]
    full = [(f"r{r}", t, d) for r in range(3) for t in ("t0", "t1", "t2") for d in docs[r : r + 4]]
    return {
        "full": (full, None),
        "full, deeper depth": (full, 6),
        "one run": ([x for x in full if x[0] == "r0"], None),
        "a topic missing": ([x for x in full if (x[0], x[1]) != ("r1", "t1")], None),
        "topics reordered": (sorted(full, key=lambda x: (x[0], x[1] != "t2", x[1])), None),
        "shorter list": ([x for x in full if (x[0], x[1], x[2]) != ("r2", "t0", "d5")], None),
        "one document each": ([(f"r{r}", t, "d1") for r in range(2) for t in ("t0", "t1", "t2")], None),
        "a topic the qrels lack": (full + [("r2", "t9", "d1")], None),
    }


@pytest.mark.parametrize("case", list(_ranking_cases()))
def test_build_ranking_rows_equal_the_scattered_layout(case: str) -> None:
    """Every list K deep, run by run in the table's topic order, is laid out as one transposed block: the same rows
    (and lengths) as scattering each entry to its cell."""
    from evaluation import arrays, build_collection, judgments_from_arrays, runs_from_arrays

    rows, depth = _ranking_cases()[case]
    qrels = [(t, "i1", f"d{n}", n % 3) for t in ("t0", "t1", "t2") for n in range(0, 12, 2)]
    table = TopicTable(build_collection(judgments_from_arrays(*(list(c) for c in zip(*qrels)))))
    names, topics, docids = (list(c) for c in zip(*rows))
    runs = runs_from_arrays(names, topics, docids, order="file")
    ranking = build_ranking(table, runs, depth=depth)
    list_topic, list_run, list_length, doc_code = arrays._flat_lists(table, runs)
    keep = list_topic >= 0
    found = table.rows_of(np.repeat(list_topic[keep], list_length[keep]), doc_code[np.repeat(keep, list_length)])
    want = arrays._scattered_rows(found, list_run[keep], list_topic[keep], list_length[keep], ranking.rows.shape, table.PAD)
    assert ranking.rows.flags.c_contiguous and ranking.rows.tolist() == want.tolist()
    assert ranking.lengths.tolist() == [[len([x for x in rows if x[:2] == (r.name, t)]) for t in table.topic_ids] for r in runs]
