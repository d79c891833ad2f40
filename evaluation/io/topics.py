"""Topic files: queries, descriptions and subtopic texts, in the three layouts test collections ship.

* TREC Web track XML: ``<topic number=..><query/><description/><subtopic number= type=nav|inf/>``.
* NTCIR XML (WWW, and the INTENT/IMine topic lists converted to it):
  ``<query><qid>0001</qid><content>query text</content><description/></query>``.
* NTCIR tab-separated text (IMine query lists; INTENT topics with their intents):
  ``topic<TAB>query`` lines, and optionally ``topic<TAB>intent<TAB>intent text[<TAB>inf|nav]`` lines
  naming a topic's intents (the subtopic text shown at subtopic level).

The layout is recognised from the file itself (:func:`read_topics`). Subtopic text is kept for
display; weights are not part of any layout (uniform unless an intents file gives them). Errors name
the line of the offending element.
"""

from __future__ import annotations

import re
import xml.sax
from pathlib import Path
from typing import NoReturn

from evaluation.collection import Intent, Topic
from evaluation.exceptions import FormatError
from evaluation.io._lines import numbered_fields, read_text

_DECLARATION = re.compile(r"^\s*<\?xml[^>]*\?>")
_TREC_TOPIC = re.compile(r"<topic[\s>/]")


class _Handler(xml.sax.ContentHandler):
    """What both XML layouts share: the topics read so far, the element being read and its text."""

    def __init__(self, path: str | Path) -> None:
        super().__init__()
        self.path = path
        self.topics: dict[str, Topic] = {}
        self._topic: dict | None = None
        self._text: list[str] = []

    def _line(self) -> int:
        return self._locator.getLineNumber() if self._locator else 0

    def _fail(self, reason: str, line: int | None = None) -> NoReturn:
        raise FormatError(self.path, self._line() if line is None else line, reason)

    def characters(self, content: str) -> None:
        self._text.append(content)


class _TopicHandler(_Handler):
    """``<topic number><query/><description/><subtopic number type/></topic>`` elements (TREC Web track XML)."""

    _sub: dict | None = None

    def startElement(self, name: str, attrs) -> None:  # noqa: N802 (SAX API)
        self._text = []
        if name == "topic":
            number = (attrs.get("number") or "").strip()
            if not number:
                self._fail("<topic> without a number attribute")
            if number in self.topics:
                self._fail(f"topic {number} defined twice")
            self._topic = {"id": number, "query": "", "description": "", "intents": []}
        elif name == "subtopic":
            if self._topic is None:
                self._fail("<subtopic> outside a <topic>")
            number = (attrs.get("number") or "").strip()
            if not number:
                self._fail("<subtopic> without a number attribute")
            kind = (attrs.get("type") or "inf").strip().lower()
            if kind not in ("inf", "nav"):
                self._fail(f"subtopic type must be 'inf' or 'nav', got {kind!r}")
            if any(i.id == number for i in self._topic["intents"]):
                self._fail(f"subtopic {number} of topic {self._topic['id']} defined twice")
            self._sub = {"id": number, "type": kind}

    def endElement(self, name: str) -> None:  # noqa: N802 (SAX API)
        text = " ".join("".join(self._text).split())
        if self._topic is not None and name in ("query", "description"):
            self._topic[name] = text
        elif name == "subtopic" and self._sub is not None and self._topic is not None:
            self._topic["intents"].append(Intent(self._sub["id"], None, self._sub["type"], text))
            self._sub = None
        elif name == "topic" and self._topic is not None:
            t = self._topic
            self.topics[t["id"]] = Topic(t["id"], tuple(t["intents"]), t["query"], t["description"])
            self._topic = None
        self._text = []


class _NtcirHandler(_Handler):
    """``<query><qid/><content/><description/></query>`` elements (NTCIR topic XML)."""

    _start = 0  # the line of the <query> being read

    def startElement(self, name: str, attrs) -> None:  # noqa: N802 (SAX API)
        self._text = []
        if name == "query":
            self._topic = {"qid": "", "content": "", "description": ""}
            self._start = self._line()

    def endElement(self, name: str) -> None:  # noqa: N802 (SAX API)
        text = " ".join("".join(self._text).split())
        self._text = []
        if self._topic is None:
            return
        if name in ("qid", "content", "description"):
            self._topic[name] = text
        elif name == "query":
            qid, line = self._topic["qid"], self._start
            if not qid:
                self._fail("<query> without a <qid>", line)
            if qid in self.topics:
                self._fail(f"topic {qid} defined twice", line)
            self.topics[qid] = Topic(qid, (), self._topic["content"], self._topic["description"])
            self._topic = None


def _read_xml(path: str | Path, text: str) -> dict[str, Topic]:
    """TREC ``<topic>`` or NTCIR ``<query><qid>`` XML (one or more elements, optionally wrapped)."""
    # drop the XML declaration but keep its newlines, so parser line numbers stay file line numbers
    body = _DECLARATION.sub(lambda m: "\n" * m.group(0).count("\n"), text, count=1)
    ntcir = _TREC_TOPIC.search(body) is None
    handler = _NtcirHandler(path) if ntcir else _TopicHandler(path)
    try:
        xml.sax.parseString(f"<topics-root>{body}</topics-root>".encode(), handler)
    except xml.sax.SAXParseException as exc:
        raise FormatError(path, exc.getLineNumber(), f"invalid XML: {exc.getMessage()}") from None
    if not handler.topics:
        raise FormatError(path, 0, "no <topic> (TREC) or <query><qid> (NTCIR) element found")
    return handler.topics


def _read_tsv(path: str | Path) -> dict[str, Topic]:
    """``topic<TAB>query`` lines and ``topic<TAB>intent<TAB>text[<TAB>inf|nav]`` lines, in any order."""
    queries: dict[str, tuple[str, int]] = {}
    intents: dict[str, list[Intent]] = {}
    seen: dict[tuple[str, str], int] = {}
    for number, fields in numbered_fields(path, "\t"):
        if len(fields) == 2:
            topic, query = fields
            if topic in queries:
                raise FormatError(path, number, f"topic {topic} defined twice (first on line {queries[topic][1]})")
            queries[topic] = (" ".join(query.split()), number)
        elif len(fields) in (3, 4):
            topic, intent, text = fields[:3]
            kind = fields[3].lower() if len(fields) == 4 else "inf"
            if kind not in ("inf", "nav"):
                raise FormatError(path, number, f"intent type must be 'inf' or 'nav', got {fields[3]!r}")
            if intent == "0":
                raise FormatError(path, number, "intent 0 is reserved for documents relevant to no intent")
            if (topic, intent) in seen:
                raise FormatError(path, number, f"intent {intent} of topic {topic} defined twice (first on line {seen[topic, intent]})")
            seen[topic, intent] = number
            intents.setdefault(topic, []).append(Intent(intent, None, kind, " ".join(text.split())))  # type: ignore[arg-type]
        else:
            raise FormatError(
                path,
                number,
                f"expected topic<TAB>query or topic<TAB>intent<TAB>text[<TAB>inf|nav], found {len(fields)} tab-separated columns",
            )
        if not fields[0]:
            raise FormatError(path, number, "empty topic id")
    for topic, listed in intents.items():
        if topic not in queries:
            raise FormatError(path, seen[topic, listed[0].id], f"intent of topic {topic}, which has no topic<TAB>query line")
    return {t: Topic(t, tuple(intents.get(t, ())), q) for t, (q, _) in queries.items()}


def read_topics(path: str | Path) -> dict[str, Topic]:
    """Read a topic file in any of the layouts of the module docstring, recognised from its first character."""
    text = read_text(path)
    if not text.strip():
        raise FormatError(path, 0, "file is empty")
    return _read_xml(path, text) if text.lstrip().startswith("<") else _read_tsv(path)
