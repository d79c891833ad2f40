"""Researchers' consent and instructions: Markdown rendered to HTML, then sanitised.

markdown-it-py parses CommonMark with raw HTML turned off (HTML in the text is shown as text) and
single line breaks kept as breaks, as the plain-text texts of older studies were shown. Its output
then goes through nh3 (the Ammonia sanitiser) with a small allow-list: no script, style, images,
forms or event attributes survive, links keep only http(s) and mailto addresses and get
``rel="noopener noreferrer"`` and ``target="_blank"`` (a participant never loses the study page).
Both layers run, so a parser bug alone cannot let markup through; the page's Content-Security-Policy
(no inline script) is the third.
"""

from __future__ import annotations

import functools

import nh3
from django.utils.safestring import SafeString, mark_safe
from markdown_it import MarkdownIt

_PARSER = MarkdownIt("commonmark", {"html": False, "breaks": True, "linkify": False, "typographer": False}).enable(
    ["table", "strikethrough"]
)
TAGS = {
    "p", "br", "strong", "em", "del", "code", "pre", "blockquote", "ul", "ol", "li", "a", "h1", "h2", "h3", "h4", "h5", "h6", "hr",
    "table", "thead", "tbody", "tr", "th", "td",
}  # fmt: skip
ATTRIBUTES = {"a": {"href", "title"}, "ol": {"start"}}  # no style: the CSP forbids inline styles
URL_SCHEMES = {"http", "https", "mailto"}


def sanitise(html: str) -> str:
    """``html`` with only the allowed elements and attributes; links open apart (rel, target)."""
    return nh3.clean(
        html,
        tags=TAGS,
        attributes=ATTRIBUTES,
        url_schemes=URL_SCHEMES,
        link_rel="noopener noreferrer",
        set_tag_attribute_values={"a": {"target": "_blank"}},
        strip_comments=True,
    )


@functools.lru_cache(maxsize=256)
def render_markdown(text: str) -> SafeString:
    """``text`` (Markdown) as safe HTML; the same text is rendered once per process."""
    return mark_safe(sanitise(_PARSER.render(text)))  # noqa: S308 - sanitised above
