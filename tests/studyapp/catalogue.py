"""The English texts of the participant pages, read from the compiled catalogues, to look for on translated pages.

A page in Chinese or Japanese must show none of them: each msgid is cut at its placeholders and tags,
and every piece of two or more words (or one long word) is looked for in the page's visible text,
unless the translation itself keeps that piece (brand names such as "Apple iPhone", "MTurk").
"""

from __future__ import annotations

import gettext
import re
from html.parser import HTMLParser
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LOCALE = ROOT / "locale"
CATALOGUE_DIRS = {"zh-hans": "zh_Hans", "ja": "ja"}  # language code -> locale folder
_CUTS = re.compile(r"%\(\w+\)[sd]|\{\w+\}|<[^>]+>|[“”‘’\"()…:;.,?!/=–-]")


def mo_path(language: str) -> Path:
    return LOCALE / CATALOGUE_DIRS[language] / "LC_MESSAGES" / "django.mo"


def catalogue(language: str) -> dict[str, str]:
    """msgid (English) -> translation, from the compiled catalogue (plural forms: the singular and the plural)."""
    with open(mo_path(language), "rb") as f:
        raw = gettext.GNUTranslations(f)._catalog  # noqa: SLF001 - the parsed .mo, msgid -> msgstr
    out: dict[str, str] = {}
    for key, text in raw.items():
        if key == "":
            continue
        msgid = key[0] if isinstance(key, tuple) else key
        msgid = msgid.split("\x04", 1)[-1]  # drop a msgctxt
        out[msgid] = text
    return out


def english_pieces(language: str) -> list[str]:
    """The pieces of English text that must not appear on a page in ``language``."""
    pieces = set()
    for msgid, text in catalogue(language).items():
        for piece in _CUTS.split(msgid):
            piece = " ".join(piece.split())
            if (len(piece.split()) >= 2 or len(piece) >= 8) and piece not in text:
                pieces.add(piece)
    return sorted(pieces, key=len, reverse=True)


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self.skip = 0

    def handle_starttag(self, tag, attrs) -> None:
        self.skip += tag in ("script", "style", "template")

    def handle_endtag(self, tag) -> None:
        self.skip -= tag in ("script", "style", "template") and self.skip > 0

    def handle_data(self, data: str) -> None:
        if not self.skip:
            self.parts.append(data)


def visible_text(html: str) -> str:
    """The text of a page (no markup, no script), whitespace collapsed."""
    parser = _Text()
    parser.feed(html)
    return " ".join(" ".join(parser.parts).split())


def english_left(text: str, language: str) -> list[str]:
    """The English pieces of the catalogue found in ``text``."""
    return [piece for piece in english_pieces(language) if re.search(rf"(?<![A-Za-z]){re.escape(piece)}(?![A-Za-z])", text)]
