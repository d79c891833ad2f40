"""Readers (issue 2 "Readers", acceptance 4): good files parse as docs/metrics.md#data-conventions says; every malformed file
raises ``FormatError(path, line, reason)`` whose message names ``file:line`` and the reason.

Qrels and runs are written inline, as TREC text, in each test (ir_measures style).
"""

from __future__ import annotations

import json
import math
import warnings
from collections.abc import Callable
from functools import partial
from pathlib import Path

import pandas as pd
import pytest

from evaluation import EvaluationWarning, FormatError, load_collection, read_intents, read_qrels, read_run, read_scores, read_topics
from evaluation.io.scores import write_scores
from tests.evaluation.toy import TOY_IPROB, TOY_QRELS

# FIXTURES ===========================================================================================


@pytest.fixture
def write(tmp_path: Path):
    """``write(name, text)`` -> path of a new file holding ``text``."""

    def make(name: str, text: str) -> Path:
        path = tmp_path / name
        path.write_text(text)
        return path

    return make


def assert_format_error(read: Callable[[Path], object], path: Path, line: int, *words: str) -> None:
    """``read(path)`` raises a FormatError for ``path`` at ``line``: one line ``path:line: reason``, the reason
    naming every one of ``words``."""
    with pytest.raises(FormatError) as info:
        read(path)
    error = info.value
    assert error.path == str(path)
    assert error.line == line
    prefix = f"{path}:{line}: " if line else f"{path}: "
    assert str(error).startswith(prefix), str(error)
    assert "\n" not in str(error)
    for word in words:
        assert word.lower() in error.reason.lower(), (word, error.reason)


# TESTS: qrels =======================================================================================


def test_trec_qrels_parse_and_negative_grades_become_judged_nonrelevant(write) -> None:
    path = write("q.trec", "# comment\n151 1 d1 2\n151 2 d1 0\n\n151 1 d2 -2\n152 3 d9 1\n")
    assert read_qrels(path) == {"151": {"d1": {"1": 2, "2": 0}, "d2": {"1": 0}}, "152": {"d9": {"3": 1}}}


def test_ntcir_dqrels_parse_and_intent_zero_means_judged_nonrelevant() -> None:
    judgments = read_qrels(TOY_QRELS)
    assert judgments["T1"]["d6"] == {}
    assert judgments["T1"]["d1"] == {"1": 2, "2": 1}
    assert judgments["T1"]["d5"] == {"2": 2, "3": 1}
    assert set(judgments["T1"]) == {"d1", "d2", "d3", "d4", "d5", "d6", "d7"}  # dX unjudged


def test_ntcir_levels_above_four_are_accepted(write) -> None:
    assert read_qrels(write("q", "1 1 d1 L9\n"))["1"]["d1"] == {"1": 9}


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ("151 1 d1 1\n151 1 d2\n", 2, ["expected 4 columns", "found 3"]),
        ("151 1 d1 1 extra\n", 1, ["expected 4 columns", "found 5"]),
        ("151 1 d1 1\n151 1 d2 x\n", 2, ["grade", "integer", "'x'"]),
        ("151 1 d1 1.5\n", 1, ["grade", "integer", "1.5"]),
        ("151 1 d1 1\n151 1 d1 2\n", 2, ["duplicate", "d1", "first on line 1"]),
    ],
    ids=["too-few-columns", "too-many-columns", "non-numeric-grade", "float-grade", "duplicate-line"],
)
def test_malformed_trec_qrels(write, text: str, line: int, words: list[str]) -> None:
    path = write("bad.trec", text)
    assert_format_error(read_qrels, path, line, *words)


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ("T1 1 d1 L1\nT1 0 d2 L2\n", 2, ["intent 0", "L0", "L2"]),
        ("T1 1 d1 L1\nT1 1 d2 Lx\n", 2, ["level", "'Lx'"]),
        ("T1 1 d1 L1\nT1 1 d2 L16\n", 2, ["above L15"]),
        ("T1 one d1 L1\n", 1, ["intent", "integer", "'one'"]),
        ("T1 1 d1 L1\nT1 1 d1\n", 2, ["expected 4 columns", "found 3"]),
        ("T1 1 d1 L1\nT1 1 d1 L3\n", 2, ["duplicate", "first on line 1"]),
        ("T1 1 d1 L1\nT1 0 d6 L0\nT1 0 d6 L0\n", 3, ["duplicate", "intent 0", "first on line 2"]),
    ],
    ids=["intent0-with-level", "bad-level", "level-above-15", "non-numeric-intent", "wrong-columns", "duplicate-line", "duplicate-intent0"],
)
def test_malformed_ntcir_dqrels(write, text: str, line: int, words: list[str]) -> None:
    path = write("bad.Dqrels", text)
    assert_format_error(read_qrels, path, line, *words)


def test_the_format_is_detected_from_the_first_line(write) -> None:
    """A TREC file with an NTCIR-looking line later is a TREC file with a bad grade; an explicit
    format is honoured."""
    path = write("mixed", "151 1 d1 1\n151 1 d2 L1\n")
    assert_format_error(read_qrels, path, 2, "grade", "'L1'")
    assert_format_error(partial(read_qrels, fmt="ntcir"), path, 1, "level", "'1'")


def test_duplicate_qrels_lines_keep_the_highest_grade_on_request(write) -> None:
    path = write("dup.trec", "151 1 d1 1\n151 1 d1 3\n151 1 d1 2\n151 2 d1 1\n")
    assert read_qrels(path, on_duplicate="max") == {"151": {"d1": {"1": 3, "2": 1}}}
    col = load_collection(path, on_duplicate_qrel="max")
    assert col.judgments["151"]["d1"] == {"1": 3, "2": 1}
    with pytest.raises(FormatError):
        load_collection(path)  # error by default (docs/metrics.md#grades-and-gains)


@pytest.mark.parametrize("text", ["", "\n\n  \n", "# only a comment\n"], ids=["empty", "blank", "comment-only"])
@pytest.mark.parametrize("reader", [read_qrels, read_intents, read_run, read_topics])
def test_empty_files_are_errors(write, text: str, reader) -> None:
    path = write("empty", text)
    if reader is read_topics and text.startswith("#"):
        with pytest.raises(FormatError) as info:
            reader(path)
        assert info.value.line in (0, 1)  # not XML at all
    else:
        assert_format_error(reader, path, 0, "empty")


@pytest.mark.parametrize("reader", [read_qrels, read_intents, read_run, read_topics, read_scores])
def test_missing_files_are_errors(tmp_path: Path, reader) -> None:
    path = tmp_path / "nope.txt"
    assert_format_error(reader, path, 0, "no such file")


def test_a_directory_is_not_a_file(tmp_path: Path) -> None:
    assert_format_error(read_qrels, tmp_path, 0, "directory")


# TESTS: intents =====================================================================================


def test_intent_files_parse_weights_and_types() -> None:
    intents = read_intents(TOY_IPROB)
    assert [(i.id, i.weight, i.type) for i in intents["T1"]] == [("1", 0.5, "nav"), ("2", 0.3, "inf"), ("3", 0.2, "inf")]


def test_intents_without_type_column_are_informational(write) -> None:
    iprob = write("i", "T1 1 0.5\nT1 2 0.3\nT1 3 0.2\n")
    col = load_collection(TOY_QRELS, iprob)
    assert [i.type for i in col.topics["T1"].intents] == ["inf", "inf", "inf"]  # docs/metrics.md#intents-and-weights


def test_intents_missing_from_the_intents_file_get_weight_zero_with_a_warning(write) -> None:
    iprob = write("i", "T1 1 0.5 nav\nT1 2 0.3\n")
    with pytest.warns(EvaluationWarning, match=r"T1.*\b3\b.*weight 0"):
        col = load_collection(TOY_QRELS, iprob)
    assert col.weights("T1") == {"1": 0.5, "2": 0.3, "3": 0.0}


def test_intents_of_topics_without_qrels_are_named_in_a_warning(write) -> None:
    iprob = write("i", "T1 1 0.5\nT1 2 0.3\nT1 3 0.2\nT9 1 1.0\nT8 1 1.0\n")
    with pytest.warns(EvaluationWarning, match=r"T8, T9 of the intents file have no qrels"):
        col = load_collection(TOY_QRELS, iprob)
    assert col.topic_ids == ["T1"]


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ("q1 1 0.5 inf\nq1 2 0.6 nav\n", 2, ["sum", "q1", "> 1"]),
        ("q1 1 1.5\n", 1, ["[0, 1]", "1.5"]),
        ("q1 1 -0.1\n", 1, ["[0, 1]", "-0.1"]),
        ("q1 1 0.2\nq1 2 abc\n", 2, ["probability", "number", "'abc'"]),
        ("q1 1 nan\n", 1, ["probability", "finite"]),
        ("q1 1 0.5 informational\n", 1, ["inf", "nav", "'informational'"]),
        ("q1 1 0.5 inf x\n", 1, ["3 or 4 columns", "found 5"]),
        ("q1 1\n", 1, ["3 or 4 columns", "found 2"]),
        ("q1 1 0.2\nq1 1 0.3\n", 2, ["listed twice", "first on line 1"]),
        ("q1 0 0.2\n", 1, ["intent 0"]),
    ],
    ids=["sum-over-1", "above-1", "negative", "non-numeric", "nan", "bad-type", "5-columns", "2-columns", "twice", "intent-0"],
)
def test_malformed_intent_files(write, text: str, line: int, words: list[str]) -> None:
    path = write("bad.Iprob", text)
    assert_format_error(read_intents, path, line, *words)


def test_probabilities_may_sum_to_one_up_to_rounding(write) -> None:
    path = write("i", "q1 1 0.3333333\nq1 2 0.3333333\nq1 3 0.3333334\nq2 1 0.1\nq2 2 0.2\nq2 3 0.7000001\n")
    assert len(read_intents(path)["q2"]) == 3


# TESTS: topic XML ===================================================================================

GOOD_XML = """<webtrack2012>
<topic number="151" type="faceted">
  <query>403b</query>
  <description>
    What is a 403b plan?
  </description>
  <subtopic number="1" type="inf">
    What is a 403b plan?
  </subtopic>
  <subtopic number="2" type="nav">
    Find the IRS page on 403b plans.
  </subtopic>
</topic>
<topic number="152" type="ambiguous">
  <query>angry birds</query>
  <description>Find info.</description>
  <subtopic number="1">Play online.</subtopic>
</topic>
</webtrack2012>
"""


def test_topic_xml_keeps_types_and_texts(write) -> None:
    topics = read_topics(write("t.xml", GOOD_XML))
    assert list(topics) == ["151", "152"]
    t151 = topics["151"]
    assert t151.query == "403b" and t151.description == "What is a 403b plan?"
    assert [(i.id, i.type, i.text, i.weight) for i in t151.intents] == [
        ("1", "inf", "What is a 403b plan?", None),
        ("2", "nav", "Find the IRS page on 403b plans.", None),
    ]
    assert topics["152"].intents[0].type == "inf"  # no type attribute: informational (docs/metrics.md#intents-and-weights)


def test_topic_xml_with_declaration(write) -> None:
    topics = read_topics(write("t.xml", '<?xml version="1.0"?>\n' + GOOD_XML))
    assert list(topics) == ["151", "152"]


def test_topic_xml_types_and_uniform_weights_reach_the_collection(write) -> None:
    qrels = write("q", "151 1 d1 1\n151 2 d2 1\n152 1 d3 1\n")
    col = load_collection(qrels, topics=write("t.xml", GOOD_XML))
    assert [i.type for i in col.topics["151"].intents] == ["inf", "nav"]
    assert col.weights("151") == {"1": 0.5, "2": 0.5}
    assert col.topics["151"].intents[1].text == "Find the IRS page on 403b plans."


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ('<topic number="1">\n<query>x</query>\n<subtopic number="1" type="inf">a\n</topic>\n', 4, ["invalid XML"]),
        ('<?xml version="1.0"?>\n<t>\n<topic number="1">\n<query>x</query>\n<subtopic number="1">a\n</topic>\n</t>\n', 6, ["invalid XML"]),
        ("<topic>\n<query>x</query>\n</topic>\n", 1, ["<topic>", "number"]),
        ('<topic number="1">\n<query>x</query>\n<subtopic type="inf">a</subtopic>\n</topic>\n', 3, ["<subtopic>", "number"]),
        ('<topic number="1">\n<query>x</query>\n\n<subtopic number="1" type="weird">a</subtopic>\n</topic>\n', 4, ["inf", "nav", "weird"]),
        ('<topic number="1"><query>x</query></topic>\n<topic number="1">\n</topic>\n', 2, ["defined twice"]),
        ('<topic number="1">\n<subtopic number="1">a</subtopic>\n<subtopic number="1">b</subtopic>\n</topic>\n', 3, ["defined twice"]),
        ("<other>nothing</other>\n", 0, ["no <topic>"]),
    ],
    ids=[
        "malformed",
        "malformed-after-declaration",
        "topic-without-number",
        "subtopic-without-number",
        "bad-type",
        "topic-twice",
        "subtopic-twice",
        "no-topic",
    ],
)
def test_malformed_topic_xml(write, text: str, line: int, words: list[str]) -> None:
    path = write("bad.xml", text)
    assert_format_error(read_topics, path, line, *words)


def test_malformed_topic_xml_after_leading_blank_lines_names_the_right_line(write) -> None:
    # the mismatched </topic> is on line 6 of the file
    path = write("bad.xml", '\n\n<topic number="1">\n<query>x</query>\n<subtopic number="1" type="inf">a\n</topic>\n')
    assert_format_error(read_topics, path, 6, "invalid XML")


# TESTS: runs ========================================================================================

# file order b, a, c, d9, d10; ranks a 1, c 2, b 3, d10 4, d9 5; scores a 2.0, the rest tied at 1.0
TIED_RUN = "q1 Q0 b 3 1.0 r\nq1 Q0 a 1 2.0 r\nq1 Q0 c 2 1.0 r\nq1 Q0 d9 5 1 r\nq1 Q0 d10 4 1.0 r\n"


@pytest.mark.parametrize(
    ("order", "expected"),
    [
        ("score", ["a", "d9", "d10", "c", "b"]),  # score desc, docno desc (string order: "d9" > "d10")
        ("pyndeval", ["a", "b", "c", "d10", "d9"]),  # score desc, docid asc
        ("rank", ["a", "c", "b", "d10", "d9"]),
        ("file", ["b", "a", "c", "d9", "d10"]),
    ],
)
def test_run_ordering_options(write, order: str, expected: list[str]) -> None:
    run = read_run(write("tied.run", TIED_RUN), order=order)
    assert run.name == "r"
    assert list(run.lists["q1"]) == expected


def test_score_order_is_the_default(write) -> None:
    assert list(read_run(write("tied.run", TIED_RUN)).lists["q1"]) == ["a", "d9", "d10", "c", "b"]


def test_run_name_override_and_several_topics(write) -> None:
    run = read_run(write("x.run", "q2 Q0 z 1 1 tag\nq1 Q0 y 1 1 tag\nq2 Q0 w 2 0.5 tag\n"), name="mine")
    assert run.name == "mine"
    assert {t: list(d) for t, d in run.lists.items()} == {"q2": ["z", "w"], "q1": ["y"]}


def test_repeated_rank_is_an_error_only_with_rank_order(write) -> None:
    path = write("r.run", "q1 Q0 a 1 2.0 r\nq2 Q0 a 1 2.0 r\nq1 Q0 b 1 1.0 r\n")
    assert_format_error(partial(read_run, order="rank"), path, 3, "rank 1", "q1", "first on line 1")
    assert list(read_run(path).lists["q1"]) == ["a", "b"]


def test_duplicate_docids_warn_and_keep_the_first(write) -> None:
    path = write("d.run", "q1 Q0 a 1 3 r\nq1 Q0 b 2 2 r\nq1 Q0 a 3 1 r\n")
    with pytest.warns(EvaluationWarning, match=r"q1.*\ba\b"):
        run = read_run(path)
    assert list(run.lists["q1"]) == ["a", "b"]


def test_duplicate_docids_can_be_an_error(write) -> None:
    path = write("d.run", "q1 Q0 a 1 3 r\nq1 Q0 b 2 2 r\nq1 Q0 a 3 1 r\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert_format_error(partial(read_run, on_duplicate_doc="error"), path, 3, "a", "repeated", "first on line 1")


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ("q1 Q0 d1 1 2.0 r\nq1 Q0 d2 1 1.0\n", 2, ["expected 6 columns", "found 5"]),
        ("q1 Q0 d1 1 2.0 r extra\n", 1, ["expected 6 columns", "found 7"]),
        ("q1 Q0 d1 1 2.0 r\nq1 Q0 d2 two 1.0 r\n", 2, ["rank", "integer", "'two'"]),
        ("q1 Q0 d1 1 high r\n", 1, ["score", "number", "'high'"]),
        ("q1 Q0 d1 1 inf r\n", 1, ["score", "finite"]),
    ],
    ids=["too-few-columns", "too-many-columns", "non-numeric-rank", "non-numeric-score", "infinite-score"],
)
def test_malformed_runs(write, text: str, line: int, words: list[str]) -> None:
    path = write("bad.run", text)
    assert_format_error(read_run, path, line, *words)


def test_bad_reader_options_are_value_errors(write) -> None:
    path = write("ok.run", "q1 Q0 d1 1 1 r\n")
    with pytest.raises(ValueError, match="order"):
        read_run(path, order="random")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="on_duplicate_doc"):
        read_run(path, on_duplicate_doc="ignore")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="on_duplicate"):
        read_qrels(TOY_QRELS, on_duplicate="min")  # type: ignore[arg-type]


# TESTS: score tables ================================================================================


@pytest.mark.parametrize("fmt", ["tsv", "csv", "json"])
def test_score_tables_round_trip(tmp_path: Path, fmt: str) -> None:
    frame = pd.DataFrame(
        {
            "run": ["a", "a", "b"],
            "topic": ["T1", "all", "T1"],
            "measure": ["alpha-nDCG(alpha=0.3)@10", "D-nDCG'@5", "RBU(p=0.99,e=0.05)"],
            "value": [0.1, math.nan, 1 / 3],
        }
    )
    path = tmp_path / f"s.{fmt}"
    write_scores(frame, path)
    back = read_scores(path)
    assert list(back.columns) == ["run", "topic", "measure", "value"]
    assert back[["run", "topic", "measure"]].values.tolist() == frame[["run", "topic", "measure"]].values.tolist()
    assert back.value.iloc[0] == 0.1 and math.isnan(back.value.iloc[1]) and back.value.iloc[2] == 1 / 3  # exact round trip
    if fmt == "json":
        assert json.loads(path.read_text())[1]["value"] is None


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ("run\ttopic\tvalue\na\tT1\t0.1\n", 1, ["measure"]),
        ("run\ttopic\tmeasure\tvalue\na\tT1\tm\tzero\n", 2, ["value", "number", "'zero'"]),
        ("run\ttopic\tmeasure\tvalue\na\tT1\tm\t0.1\na\tT1\tm\t0.2\n", 3, ["duplicate", "first on line 2"]),
        ("run\ttopic\tmeasure\tvalue\na\tT1\tm\n", 2, ["expected 4 fields", "found 3"]),
    ],
    ids=["missing-column", "non-numeric", "duplicate-row", "short-row"],
)
def test_malformed_score_tables(write, text: str, line: int, words: list[str]) -> None:
    path = write("bad.tsv", text)
    assert_format_error(read_scores, path, line, *words)
