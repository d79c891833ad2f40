"""Query-biased snippets: the passages of a document that best match what the searcher asked.

Following Tombros & Sanderson (SIGIR 1998) and Turpin et al. (SIGIR 2007): the document's text is
cut into sentences; each sentence scores the square of the number of distinct query terms it holds
divided by the number of query terms (Tombros & Sanderson's query score), with the terms of the
information need (the subtopic's text at subtopic level) counted at half weight; ties go to the
earlier sentence (leading sentences summarise a page best). The best ``FRAGMENTS`` sentences, in
the document's order, each cut to a window around its first match, joined by an ellipsis, make the
snippet, at most ``MAX_CHARS`` characters, about what a web search engine shows.

The title is shown above the snippet, so a line of the text that repeats it (the page's ``<h1>``,
mostly) is left out, and headings are context, not sentences: a short line without closing
punctuation followed by more text is a heading, chosen only when the text holds nothing else.

Matches are returned as segments ``(text, is_match)`` and turned into HTML by :func:`to_html`,
which escapes every character of the document: no markup of a document ever reaches a page.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from html import escape

from django.utils.safestring import SafeString, mark_safe

MAX_CHARS = 280
FRAGMENTS = 2
ELLIPSIS = " \u2026 "
# A few very common English words that would match everywhere (queries are short: keep the rest).
STOPWORDS = frozenset(
    "a an and are as at be by for from how in is it of on or that the this to was what when where which who why with".split()
)
_TOKEN = re.compile(r"\w+", re.UNICODE)
_SENTENCE = re.compile(r"(?<=[.!?\u3002\uff01\uff1f])\s+")
_CLOSING = ".!?:;\u2026\u3002\uff01\uff1f\uff1a\uff1b\"'\u201d\u300d)"
HEADING_MAX_WORDS = 12

Segments = tuple[tuple[str, bool], ...]


def terms(text: str) -> list[str]:
    """The distinct lower-case terms of a query or need, stop words and single Latin letters left out
    (a CJK query without spaces stays one term, matched as a substring)."""
    seen: dict[str, None] = {}
    for token in _TOKEN.findall(text.lower()):
        if token not in STOPWORDS and (len(token) > 1 or not token.isascii()):
            seen.setdefault(token, None)
    return list(seen)


def _pattern(words: Iterable[str]) -> re.Pattern[str] | None:
    words = sorted(set(words), key=len, reverse=True)
    if not words:
        return None
    return re.compile("|".join(rf"(?<!\w){re.escape(w)}(?!\w)" if w.isascii() else re.escape(w) for w in words), re.IGNORECASE)


def _score(sentence: str, query: list[str], need: list[str]) -> float:
    low = sentence.lower()

    def found(words: list[str]) -> int:
        return sum(1 for w in words if (re.search(rf"(?<!\w){re.escape(w)}(?!\w)", low) if w.isascii() else w in low))

    q, n = found(query), found(need)
    return (q * q) / max(len(query), 1) + 0.5 * (n * n) / max(len(need), 1)


def _window(sentence: str, pattern: re.Pattern[str] | None, width: int) -> str:
    """``sentence`` cut to ``width`` characters around its first match, at word boundaries."""
    if len(sentence) <= width:
        return sentence
    match = pattern.search(sentence) if pattern else None
    start = max(0, (match.start() if match else 0) - width // 4)
    if start:
        space = sentence.find(" ", start)
        start = space + 1 if 0 <= space < start + 20 else start
    piece = sentence[start : start + width]
    if start + width < len(sentence) and " " in piece[width // 2 :]:
        piece = piece[: piece.rfind(" ")]
    return ("\u2026" if start else "") + piece.strip() + "\u2026"


def _same(a: str, b: str) -> bool:
    return _TOKEN.findall(a.casefold()) == _TOKEN.findall(b.casefold())


def _is_heading(line: str) -> bool:
    return len(line.split()) <= HEADING_MAX_WORDS and not line.endswith(tuple(_CLOSING))


def sentences_of(text: str, title: str = "") -> list[str]:
    """The sentences of ``text`` a snippet may show: lines repeating ``title`` dropped, then the
    sentences of every line that is not a heading (the headings when nothing else is left)."""
    lines = [" ".join(line.split()) for line in text.splitlines()]
    lines = [line for line in lines if line and not (title and _same(line, title))]
    body = [line for i, line in enumerate(lines) if i == len(lines) - 1 or not _is_heading(line)]
    return [s for line in body or lines for s in _SENTENCE.split(line) if s.strip()]


def snippet(text: str, query: str, need: str = "", max_chars: int = MAX_CHARS, title: str = "") -> Segments:
    """The query-biased snippet of ``text`` for ``query`` (and the information ``need``), as segments;
    a page's ``title`` is never repeated in it."""
    query_terms, need_terms = terms(query), [t for t in terms(need) if t not in terms(query)]
    sentences = sentences_of(text, title)
    if not sentences:
        return ()
    scores = [_score(s, query_terms, need_terms) for s in sentences]
    ranked = sorted(range(len(sentences)), key=lambda i: (-scores[i], i))[:FRAGMENTS]
    # Sentences without a query term only when none has one (then the page's opening, like a search engine).
    chosen = sorted(i for i in ranked if scores[i] > 0) or ranked[:1]
    pattern = _pattern(query_terms + need_terms)
    width = max_chars // len(chosen) - len(ELLIPSIS)
    joined = ELLIPSIS.join(_window(sentences[i], pattern, width) for i in chosen)
    return split_matches(joined[:max_chars], pattern)


def split_matches(text: str, pattern: re.Pattern[str] | None) -> Segments:
    """``text`` as ``(piece, is_match)`` segments of ``pattern``'s matches."""
    if pattern is None:
        return ((text, False),) if text else ()
    out: list[tuple[str, bool]] = []
    at = 0
    for m in pattern.finditer(text):
        if m.start() > at:
            out.append((text[at : m.start()], False))
        out.append((m.group(0), True))
        at = m.end()
    if at < len(text):
        out.append((text[at:], False))
    return tuple(out)


def to_html(segments: Segments) -> SafeString:
    """Segments as HTML: every character escaped, matches in ``<mark>``."""
    return mark_safe("".join(f"<mark>{escape(s)}</mark>" if hit else escape(s) for s, hit in segments))  # noqa: S308 - escaped above
