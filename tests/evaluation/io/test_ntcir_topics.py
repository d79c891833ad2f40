"""NTCIR topic files (docs/metrics.md#topic-files): the NTCIR XML ``<query><qid>`` layout and the tab-separated
``topic<TAB>query`` / ``topic<TAB>intent<TAB>text`` layout, recognised by ``read_topics`` beside TREC XML, merged
with Dqrels and Iprob weights by ``load_collection``, with ``file:line`` errors on bad input."""

from __future__ import annotations

from pathlib import Path

import pytest

from evaluation import FormatError, load_collection, read_topics
from tests.evaluation.toy import TOY_IPROB, TOY_QRELS

NTCIR_XML = """<?xml version="1.0" encoding="UTF-8"?>
<queries>
  <query>
    <qid>0201</qid>
    <content>投影仪 如何选购</content>
    <description>想买一台家用投影仪，
      想知道怎么挑。</description>
  </query>
  <query><qid>0202</qid><content>halloween picture</content></query>
</queries>
"""

TSV = "T1\tprojector buying\nT1\t1\tofficial store\tnav\nT1\t2\thow to choose a projector\n# a comment\nT1\t3\tprojector reviews\tINF\n"


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_ntcir_xml_gives_queries_and_descriptions(tmp_path: Path) -> None:
    topics = read_topics(write(tmp_path, "topics.xml", NTCIR_XML))
    assert list(topics) == ["0201", "0202"]
    assert topics["0201"].query == "投影仪 如何选购"
    assert topics["0201"].description == "想买一台家用投影仪， 想知道怎么挑。"  # whitespace runs folded, as in TREC XML
    assert topics["0202"].query == "halloween picture" and topics["0202"].description == ""
    assert topics["0201"].intents == ()


def test_tab_separated_topics_with_intent_texts_merge_with_dqrels_and_iprob(tmp_path: Path) -> None:
    col = load_collection(TOY_QRELS, TOY_IPROB, write(tmp_path, "topics.tsv", TSV))
    topic = col.topics["T1"]
    assert topic.query == "projector buying"
    assert [(i.id, i.text) for i in topic.intents] == [
        ("1", "official store"),
        ("2", "how to choose a projector"),
        ("3", "projector reviews"),
    ]
    assert [i.weight for i in topic.intents] == [0.5, 0.3, 0.2]  # weights from the Iprob file
    assert [i.type for i in topic.intents] == ["nav", "inf", "inf"]


def test_query_lines_alone_are_an_imine_style_query_list(tmp_path: Path) -> None:
    topics = read_topics(write(tmp_path, "q.tsv", "0001\thalloween   picture\n0002\t投影仪\n"))
    assert {t: (v.query, v.intents) for t, v in topics.items()} == {"0001": ("halloween picture", ()), "0002": ("投影仪", ())}


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ("T1\tq\nT1\tq again\n", 2, ["defined twice", "line 1"]),
        ("T1\tq\nT1\t1\ta\nT1\t1\tb\n", 3, ["intent 1", "defined twice"]),
        ("T1\tq\nT1\t1\ta\tweird\n", 2, ["inf", "nav", "weird"]),
        ("T1\tq\nT1\t0\tnothing\n", 2, ["intent 0", "reserved"]),
        ("T1\tq\nT1\t1\ta\tnav\textra\n", 2, ["5", "columns"]),
        ("T1 q without a tab\n", 1, ["1", "columns"]),
        ("T1\tq\nT2\t1\tan intent of a topic never named\n", 2, ["T2", "no topic<TAB>query line"]),
    ],
    ids=["topic-twice", "intent-twice", "bad-type", "intent-0", "too-many-columns", "no-tab", "intent-without-topic"],
)
def test_malformed_tab_separated_topics_name_file_and_line(tmp_path: Path, text: str, line: int, words: list[str]) -> None:
    path = write(tmp_path, "bad.tsv", text)
    with pytest.raises(FormatError) as info:
        read_topics(path)
    assert (info.value.path, info.value.line) == (str(path), line), str(info.value)
    for word in words:
        assert word.lower() in info.value.reason.lower(), (word, info.value.reason)


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ("<queries>\n<query><content>no id</content></query>\n</queries>\n", 2, ["<qid>"]),
        ("<queries>\n<query><qid>1</qid></query>\n<query><qid>1</qid></query>\n</queries>\n", 3, ["defined twice"]),
        ("<queries>\n<query><qid>1</qid>\n</queries>\n", 3, ["invalid XML"]),
        ("<queries><other/></queries>\n", 0, ["<topic>", "<qid>"]),
    ],
    ids=["no-qid", "qid-twice", "malformed", "nothing"],
)
def test_malformed_ntcir_xml_names_file_and_line(tmp_path: Path, text: str, line: int, words: list[str]) -> None:
    path = write(tmp_path, "bad.xml", text)
    with pytest.raises(FormatError) as info:
        read_topics(path)
    assert info.value.line == line, str(info.value)
    for word in words:
        assert word.lower() in info.value.reason.lower(), (word, info.value.reason)
