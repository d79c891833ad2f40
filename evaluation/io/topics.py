"""TREC Web track topic XML: ``<topic number=..><query/><description/><subtopic number= type=nav|inf/>``.

Subtopic text is kept for display; weights are not part of the format (uniform unless an
intents file gives them). Errors name the line of the offending element.
"""

from __future__ import annotations

import re
import xml.sax
from pathlib import Path

from evaluation.collection import Intent, Topic
from evaluation.exceptions import FormatError
from evaluation.io._lines import read_text

_DECLARATION = re.compile(r"^\s*<\?xml[^>]*\?>")


class _TopicHandler(xml.sax.ContentHandler):
    def __init__(self, path: str | Path) -> None:
        super().__init__()
        self.path = path
        self.topics: dict[str, Topic] = {}
        self._topic: dict | None = None
        self._text: list[str] = []
        self._sub: dict | None = None

    def _fail(self, reason: str) -> None:
        raise FormatError(self.path, self._locator.getLineNumber() if self._locator else 0, reason)

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

    def characters(self, content: str) -> None:
        self._text.append(content)

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


def read_topics(path: str | Path) -> dict[str, Topic]:
    """Read a TREC topic XML file (one or more ``<topic>`` elements, optionally wrapped)."""
    text = read_text(path)
    if not text.strip():
        raise FormatError(path, 0, "file is empty")
    # drop the XML declaration but keep its newlines, so parser line numbers stay file line numbers
    body = _DECLARATION.sub(lambda m: "\n" * m.group(0).count("\n"), text, count=1)
    handler = _TopicHandler(path)
    try:
        xml.sax.parseString(f"<topics-root>{body}</topics-root>".encode(), handler)
    except xml.sax.SAXParseException as exc:
        raise FormatError(path, exc.getLineNumber(), f"invalid XML: {exc.getMessage()}") from None
    if not handler.topics:
        raise FormatError(path, 0, "no <topic> element found")
    return handler.topics
