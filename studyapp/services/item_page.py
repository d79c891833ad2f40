"""What an item page shows: the query, the information need(s) and the two result pages by side.

At topic level every kept subtopic is listed (in the collection's order, never by weight, and
without weights); at subtopic level only that subtopic, phrased as the need to judge against.
Which presentation side is on the left comes from the assignment, so a reload shows the same sides.
Titles and snippets are shortened to fixed caps, so the page weight does not depend on the data.
Text is returned raw: the templates escape it (snippets may contain markup). Display data never
breaks a page: a URL that is not a valid web address (imported before validation, or edited in the
database) is shown as plain text, not linked.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from evaluation.io.documents import url_problem
from studyapp.models import Assignment, Document, Presentation, Study, StudySubtopic
from studyapp.models.study import TOPIC
from studyapp.services.onboarding import Result

# Caps on what one result shows, so the page weight does not depend on the collection's data
# (depth 10 on both sides stays far under the 100 KB budget). Longer links are not linked at all:
# cutting a URL would break it.
DISPLAY_URL_MAX = 70
TITLE_MAX = 200
SNIPPET_MAX = 500
LINK_MAX = 1000


@dataclass(frozen=True)
class ItemPage:
    assignment: Assignment
    number: int  # 1-based position among the annotator's items
    quota: int
    query: str
    level: str
    needs: list[str]
    left: list[Result]
    right: list[Result]

    @property
    def depth(self) -> int:
        return max(len(self.left), len(self.right))


def display_url(url: str) -> str:
    """``https://www.example.org/a/b`` -> ``example.org › a › b`` (shortened), as result pages show it;
    a URL that does not parse is shown as it is (shortened)."""
    try:
        parts = urlsplit(url)
        parts.hostname  # noqa: B018 - raises ValueError for a malformed host such as "[::1"
    except ValueError:
        return shorten(url, DISPLAY_URL_MAX)
    host = (parts.hostname or "").removeprefix("www.")
    text = " \u203a ".join([host, *(s for s in parts.path.split("/") if s)])
    return shorten(text, DISPLAY_URL_MAX)


def shorten(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters, an ellipsis marking the cut."""
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "\u2026"


def results(documents: list[Document]) -> list[Result]:
    """The result lines of a page, texts capped (see ``TITLE_MAX``, ``SNIPPET_MAX``)."""
    out = []
    for rank, doc in enumerate(documents, start=1):
        valid = bool(doc.url) and not url_problem(doc.url)
        link = doc.url if valid and len(doc.url) <= LINK_MAX else ""
        shown = display_url(doc.url) if valid else shorten(doc.url, DISPLAY_URL_MAX)  # a bad URL as plain text
        out.append(Result(rank, shorten(doc.display_title, TITLE_MAX), link, shown, shorten(doc.snippet, SNIPPET_MAX)))
    return out


def _need(text: str, number: str) -> str:
    return text or f"Meaning {number} of the query"


def needs(p: Presentation) -> list[str]:
    """The information need(s) the presentation ``p`` asks about (topic level: every kept subtopic)."""
    if p.level != TOPIC:
        return [_need(p.subtopic.text, p.subtopic.number)]
    kept = StudySubtopic.objects.filter(study_topic__study_id=p.study_id, study_topic__topic_id=p.topic_id)
    rows = kept.values_list("subtopic__position", "subtopic__number", "subtopic__text")
    return [_need(text, number) for _, number, text in sorted(rows, key=lambda row: row[:2])]


# What an item page reads of a presentation, its topic and its subtopic (the page reads no other field).
_SHOWN = ("study", "kind", "level", "topic", "run_a", "run_b", "b_documents", "topic__topic_id", "topic__query",
          "subtopic__number", "subtopic__text")  # fmt: skip


def item_page(assignment: Assignment, study: Study, number: int, quota: int) -> ItemPage:
    """Everything the item template draws for ``assignment`` of ``study`` (the ``number``-th of ``quota``).

    Three queries: the presentation with its topic and subtopic, both result pages, the kept subtopics (topic level).
    """
    p = Presentation.objects.select_related("topic", "subtopic").only(*_SHOWN).get(pk=assignment.presentation_id)
    a, b = (results(docs) for docs in p.pages(study.depth))
    left, right = (a, b) if assignment.a_on_left else (b, a)
    return ItemPage(assignment, number, quota, p.topic.display_query, p.level, needs(p), left, right)
