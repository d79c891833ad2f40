"""Shallow lists of several runs: ``runs_from_arrays`` dictionary-encodes the docids once (pyarrow), the repeat
check reads the codes and laying the runs out over a collection looks up the dictionary only. Every score and
every warning equals the plain path's (docids checked with sets, each looked up), bit for bit."""

from __future__ import annotations

import random
import warnings

import numpy as np
import pytest

from evaluation import _factorize, build_collection, judgments_from_arrays, runs_from_arrays, score_matrix
from evaluation.exceptions import EvaluationError, EvaluationWarning
from evaluation.io import run_layout
from evaluation.metrics import default_measures

TOPICS = ["t1", "t2", "t3", "t4", "t5"]
JUDGED = [f"doc-{n}" for n in range(40)] + ["dé 1", "文書 2", "a b", "x\ty"]  # unicode, blanks inside


def _collection():
    rng = random.Random(3)
    rows = [
        (topic, f"i{i}", doc, rng.choice([0, 0, 1, 2, 3]))
        for topic in TOPICS[:-1]  # t5: no judgments (a run topic the qrels lack)
        for i in range(1, rng.randrange(2, 5))
        for doc in rng.sample(JUDGED, 25)
    ]
    return build_collection(judgments_from_arrays(*(list(c) for c in zip(*rows))))


def _columns(n_runs: int, depth: int, seed: int, *, repeats: bool = False, ties: bool = False, drop: str | None = None, unjudged: int = 0):
    """Parallel columns of ``n_runs`` runs; each list ``depth`` documents (judged ones sampled, then
    ``unjudged`` distinct others), run after run; ``repeats`` lists some docids twice (not next to each other),
    ``ties`` gives equal scores, ``drop`` leaves that topic out of every other run."""
    rng = random.Random(seed)
    rows = []
    for r in range(n_runs):
        for topic in TOPICS:
            if drop == topic and r % 2:
                continue
            docs = rng.sample(JUDGED, depth - unjudged) + [f"u-{r}-{topic}-{n}" for n in range(unjudged)]
            if repeats and r % 3 == 0:
                docs += docs[:2]
            rows += [(f"run{r}", topic, doc, float((depth - k) // (3 if ties else 1))) for k, doc in enumerate(docs)]
    return tuple(list(c) for c in zip(*rows))


def _plain(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(run_layout, "encode_strings", lambda values: (None, None))


def _scored(columns, order: str = "pyndeval", chunk_lines: int = run_layout.CHUNK_LINES):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        runs = runs_from_arrays(*columns, order=order, chunk_lines=chunk_lines)
    with np.errstate(all="ignore"):
        values = score_matrix(_collection(), runs, default_measures(condensed=True))
    return runs, values, sorted(str(w.message) for w in caught)


CASES = {
    "plain": dict(n_runs=12, depth=10, seed=1),
    "repeated docids": dict(n_runs=12, depth=10, seed=2, repeats=True),
    "ties": dict(n_runs=12, depth=10, seed=3, ties=True),
    "a topic missing from some runs": dict(n_runs=12, depth=10, seed=4, drop="t2"),
    "unjudged docids": dict(n_runs=40, depth=12, seed=5, unjudged=2),
}


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("order", ["pyndeval", "score", "file"])
def test_encoded_docids_score_like_the_plain_path_bit_for_bit(case: str, order: str, monkeypatch: pytest.MonkeyPatch) -> None:
    columns = _columns(**CASES[case])
    runs, values, messages = _scored(columns, order)
    assert runs[0].lists.batch.codes is not None  # the encoded path was taken
    with monkeypatch.context() as plain:
        _plain(plain)
        plain_runs, plain_values, plain_messages = _scored(columns, order)
    assert plain_runs[0].lists.batch.codes is None
    assert values.shape == plain_values.shape
    assert np.array_equal(values.view(np.int64), plain_values.view(np.int64))
    assert messages == plain_messages
    assert [(r.name, dict(r.lists)) for r in runs] == [(r.name, dict(r.lists)) for r in plain_runs]
    if case == "repeated docids":
        assert any("duplicate" in m for m in messages)


def test_chunks_join_their_dictionaries(monkeypatch: pytest.MonkeyPatch) -> None:
    """Several chunks: codes into the chunks' dictionaries one after the other; the same scores as one chunk."""
    columns = _columns(n_runs=40, depth=10, seed=6, repeats=True)
    runs, values, messages = _scored(columns)
    chunked, chunked_values, chunked_messages = _scored(columns, chunk_lines=500)
    batch = chunked[0].lists.batch
    assert batch.codes is not None and len(batch.dictionary) > len(runs[0].lists.batch.dictionary)  # a docid in several chunks
    assert np.array_equal(values.view(np.int64), chunked_values.view(np.int64)) and messages == chunked_messages


def test_docids_that_seldom_repeat_keep_no_dictionary() -> None:
    """More than one distinct docid per ENCODE_KEEP_SHARE lines: the dictionary is dropped, the docids looked up as they are."""
    columns = _columns(n_runs=8, depth=12, seed=7, unjudged=10)
    runs, values, _ = _scored(columns)
    assert runs[0].lists.batch.codes is None
    assert np.isfinite(values).any()


@pytest.mark.parametrize(
    ("what", "columns"),
    [
        ("fewer runs than ENCODE_MIN_RUNS", _columns(n_runs=3, depth=10, seed=8)),
        ("lists longer than ENCODE_LIST_LIMIT", _columns(n_runs=6, depth=run_layout.ENCODE_LIST_LIMIT + 1, seed=9, unjudged=60)),
    ],
)
def test_what_is_not_encoded(what: str, columns, monkeypatch: pytest.MonkeyPatch) -> None:
    runs, values, _ = _scored(columns)
    assert runs[0].lists.batch.codes is None, what
    with monkeypatch.context() as plain:
        _plain(plain)
        _, plain_values, _ = _scored(columns)
    assert np.array_equal(values.view(np.int64), plain_values.view(np.int64))


def test_docids_that_are_not_strings_take_the_plain_path() -> None:
    names, topics, docids, scores = _columns(n_runs=12, depth=10, seed=10)
    numbered = {doc: n for n, doc in enumerate(JUDGED)}
    runs = runs_from_arrays(names, topics, [numbered[d] for d in docids], scores)
    assert runs[0].lists.batch.codes is None
    assert runs[0].lists["t1"][0] == numbered[docids[0]]


@pytest.mark.parametrize("missing", [None, float("nan")])
def test_a_missing_docid_is_the_same_error(missing, monkeypatch: pytest.MonkeyPatch) -> None:
    names, topics, docids, scores = _columns(n_runs=12, depth=10, seed=11)
    docids[57] = missing
    with pytest.raises(
        EvaluationError, match=r"^line 57 \(run .* topic .* doc (None|nan)\): every run line needs a run name, a topic and a docid$"
    ):
        runs_from_arrays(names, topics, docids, scores)


def test_without_pyarrow_nothing_is_encoded(monkeypatch: pytest.MonkeyPatch) -> None:
    columns = _columns(n_runs=12, depth=10, seed=12, repeats=True)
    runs, values, messages = _scored(columns)
    monkeypatch.setattr(_factorize, "_pa", None)
    monkeypatch.setattr(_factorize, "_pc", None)
    plain_runs, plain_values, plain_messages = _scored(columns)
    assert plain_runs[0].lists.batch.codes is None
    assert np.array_equal(values.view(np.int64), plain_values.view(np.int64)) and messages == plain_messages


def test_an_empty_input_and_one_run() -> None:
    assert runs_from_arrays([], [], [], []) == []
    with pytest.warns(EvaluationWarning, match="run r topic t1: duplicate docid a"):
        (run,) = runs_from_arrays(["r"] * 3, ["t1"] * 3, ["a", "b", "a"], [3.0, 2.0, 1.0])
    assert run.lists["t1"] == ("a", "b")


@pytest.mark.parametrize("seed", range(20))
def test_repeated_in_groups_equals_repeated_in_lists(seed: int) -> None:
    """Codes repeated within a list (first occurrence kept) as the set-based check finds repeated values."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(0, 9, size=rng.integers(1, 30))
    codes = rng.integers(0, 12, size=int(sizes.sum()))
    expected = _factorize.repeated_in_lists(sizes, np.array([f"v{c}" for c in codes.tolist()], dtype=object))
    assert _factorize.repeated_in_groups(sizes, codes).tolist() == expected.tolist()


def test_encode_strings_refuses_what_is_not_a_string() -> None:
    assert _factorize.encode_strings(["a", None]) == (None, None)
    assert _factorize.encode_strings(["a", 1]) == (None, None)
    assert _factorize.encode_strings([]) == (None, None)
    codes, dictionary = _factorize.encode_strings(["b", "a", "b", "文 書"])
    assert codes.tolist() == [0, 1, 0, 2] and dictionary.to_pylist() == ["b", "a", "文 書"]


def test_list_and_array_docids_encode_alike() -> None:
    """Docids given as a list, an object array or fixed-width strings: the same codes, dictionary and scores."""
    names, topics, docids, scores = _columns(n_runs=12, depth=10, seed=13, repeats=True)
    from_list = _scored((names, topics, docids, scores))
    for array in (np.array(docids, dtype=object), np.array(docids)):  # objects; fixed-width strings
        from_array = _scored((names, topics, array, scores))
        got, want = from_array[0][0].lists.batch, from_list[0][0].lists.batch
        assert got.codes.tolist() == want.codes.tolist() and got.dictionary.equals(want.dictionary)
        assert np.array_equal(from_array[1].view(np.int64), from_list[1].view(np.int64)) and from_array[2] == from_list[2]


def test_a_lone_surrogate_docid_takes_the_plain_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """pyarrow cannot encode a lone surrogate (UnicodeEncodeError): the docids stay Python strings, looked up by dict."""
    assert _factorize.encode_strings(["a", "b\ud800"]) == (None, None)
    names, topics, docids, scores = _columns(n_runs=12, depth=10, seed=14)
    docids[3] = "odd\ud800"
    runs, values, _ = _scored((names, topics, docids, scores))
    assert runs[0].lists.batch.codes is None and runs[0].lists["t1"][3] == "odd\ud800"
    with monkeypatch.context() as plain:
        _plain(plain)
        _, plain_values, _ = _scored((names, topics, docids, scores))
    assert np.array_equal(values.view(np.int64), plain_values.view(np.int64))
    assert _factorize.Lookup(np.array(["x", "y\ud800"], dtype=object)).positions(["y\ud800", "z"]).tolist() == [1, -1]


def test_encoded_runs_hold_no_docid_objects_until_read() -> None:
    """Encoded docids are not copied into an object array; reading a run's lists makes them from the dictionary,
    equal to the docids given (new string objects, not the caller's)."""
    names, topics, docids, scores = _columns(n_runs=12, depth=10, seed=16)
    runs = runs_from_arrays(names, topics, docids, scores, order="file")
    batch = runs[0].lists.batch
    assert batch.codes is not None and batch.flat_docids is None and runs[3].lists._docids is None
    assert batch.docids.tolist() == docids  # file order, no repeat: the lines as given
    assert runs[3].lists.docids.tolist() == docids[150:200] and runs[3].lists["t2"] == tuple(docids[160:170])


def test_a_dictionary_that_cannot_be_kept_gives_the_docids_back() -> None:
    """The chunk's dictionary passes the share before repeats are dropped but not after (10 distinct docids, 40 lines,
    36 kept): the runs get the docids as objects, made from the dictionary, and score as the plain path."""
    pool = [f"doc-{n}" for n in range(10)]
    kept = [[doc for doc in pool if doc != pool[r]] for r in range(4)]  # each run leaves one docid out: 9 of the 10
    rows = [(f"run{r}", "t1", doc) for r in range(4) for doc in [*kept[r], kept[r][0]]]  # and repeats one
    names, topics, docids = (list(c) for c in zip(*rows))
    with pytest.warns(EvaluationWarning, match="duplicate docid"):
        runs = runs_from_arrays(names, topics, docids, order="file")
    assert runs[0].lists.batch.codes is None and runs[0].lists.batch.flat_docids is not None
    assert [list(run.lists["t1"]) for run in runs] == kept


def test_chunks_encoded_and_not_give_every_docid_back(monkeypatch: pytest.MonkeyPatch) -> None:
    """A chunk of shallow lists (encoded) followed by one of deep lists (not encoded): the dictionaries cannot be
    joined, so the encoded chunk's docids are made from its dictionary; lists and scores as the plain path."""
    shallow = _columns(n_runs=8, depth=10, seed=17)
    deep = _columns(n_runs=2, depth=run_layout.ENCODE_LIST_LIMIT + 1, seed=18, unjudged=60)
    columns = tuple(a + [f"deep-{x}" if n == 0 else x for x in b] for n, (a, b) in enumerate(zip(shallow, deep)))
    runs, values, messages = _scored(columns, chunk_lines=len(shallow[0]))
    assert runs[0].lists.batch.codes is None and runs[0].lists.batch.flat_docids is not None
    with monkeypatch.context() as plain:
        _plain(plain)
        plain_runs, plain_values, plain_messages = _scored(columns, chunk_lines=len(shallow[0]))
    assert [(r.name, dict(r.lists)) for r in runs] == [(r.name, dict(r.lists)) for r in plain_runs]
    assert np.array_equal(values.view(np.int64), plain_values.view(np.int64)) and messages == plain_messages
