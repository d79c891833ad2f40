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

import functools
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from urllib.parse import urlsplit

from django.conf import settings
from django.db.models import Exists, OuterRef
from django.template.loader import render_to_string
from django.utils.html import escape
from django.utils.translation import get_language, gettext

from studyapp.models import Assignment, Document, Presentation, Study, StudySubtopic, Topic
from studyapp.models.study import TOPIC, documents_in_order, run_page
from studyapp.services.collections.display_cache import DrawnCache, TimedCache
from studyapp.services.collections.snippets import snippet, to_html
from studyapp.services.participation.allocation import design_item
from studyapp.services.participation.onboarding import PracticeItem, Result, practice_item_with

# Caps on what one result shows, so the page weight does not depend on the collection's data
# (depth 10 on both sides stays far under the 100 KB budget). Longer links are not linked at all:
# cutting a URL would break it.
DISPLAY_URL_MAX = 70
TITLE_MAX = 200
SNIPPET_MAX = 500
LINK_MAX = 1000


@dataclass(frozen=True)
class ResultPage:
    """One side's result lines and their HTML (``_results.html``, drawn once: pages are shared by many items)."""

    results: tuple[Result, ...]
    html: str  # safe HTML

    def __iter__(self) -> Iterator[Result]:
        return iter(self.results)

    def __len__(self) -> int:
        return len(self.results)


def result_page(results: Iterable[Result]) -> ResultPage:
    shown = tuple(results)
    return ResultPage(shown, render_to_string("studyapp/annotator/_results.html", {"results": shown}))


@functools.cache
def _practice_pages(good_on_left: bool, language: str) -> tuple[ResultPage, ResultPage]:
    item = practice_item_with(good_on_left)
    return result_page(item.left), result_page(item.right)


def practice_pages(item: PracticeItem) -> tuple[ResultPage, ResultPage]:
    """The practice item's two result lists (left, right): fixed texts, so a server process draws them once per
    side and language (afresh with DEBUG on, so that template edits show at once)."""
    if settings.DEBUG:
        return result_page(item.left), result_page(item.right)
    return _practice_pages(item.good_on_left, get_language())


@dataclass(frozen=True)
class ItemPage:
    assignment: Assignment
    number: int  # 1-based position among the annotator's items
    quota: int
    query: str
    level: str
    needs: list[str]
    left: ResultPage
    right: ResultPage

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


def results(documents: list[Document], query: str = "", need: str = "") -> list[Result]:
    """The result lines of a page, texts capped (see ``TITLE_MAX``, ``SNIPPET_MAX``). A document with
    main text (import_documents) gets a query-biased snippet for ``query`` and ``need``, its matches
    marked; otherwise its stored snippet is shown as it is (escaped)."""
    # imported here, not at start: docs/contributing.md#lazy-evaluation-imports
    from evaluation.io.documents import url_problem

    out = []
    for rank, doc in enumerate(documents, start=1):
        valid = bool(doc.url) and not url_problem(doc.url)
        link = doc.url if valid and len(doc.url) <= LINK_MAX else ""
        shown = display_url(doc.url) if valid else shorten(doc.url, DISPLAY_URL_MAX)  # a bad URL as plain text
        title = doc.display_title
        text = to_html(snippet(doc.text, query, need, title=title)) if doc.text else escape(shorten(doc.snippet, SNIPPET_MAX))
        out.append(Result(rank, shorten(title, TITLE_MAX), link, shown, text))
    return out


def _need(text: str, number: str) -> str:
    return text or gettext("Meaning %(number)s of the query") % {"number": number}


@dataclass(frozen=True)
class _Task:
    """The query of a study topic, its kept subtopics' needs (the collection's order) and every subtopic's need."""

    query: str
    kept: list[str]
    need_of: dict[int, str]


# What this process read and drew for item pages (services/collections/display_cache.py: kept a short time),
# per language: a drawn page holds a few words of the page's language ("No results.").
_TASKS: TimedCache[_Task] = TimedCache(size=5_000)
_PAGES: TimedCache[ResultPage] = TimedCache(size=5_000)
# The result lists drawn, by their lines and language: a page read again once its _PAGES entry ran out is drawn
# again only if its lines changed (drawing is most of a miss's cost; reading the lines again keeps edits showing).
_DRAWN: DrawnCache[ResultPage] = DrawnCache(size=5_000)


def _drawn(shown: list[Result]) -> ResultPage:
    """:func:`result_page` of an item page's lines (from :func:`results`: every field a string, the snippet safe HTML)."""
    lines = tuple(shown)
    return _DRAWN.get((lines, get_language()), lambda: result_page(lines))


def _task(study_id: int, topic_id: int) -> _Task:
    """One query: the topic's query with each of its subtopics (none: one row of nulls) and whether the study kept it."""
    kept = StudySubtopic.objects.filter(study_topic__study_id=study_id, subtopic_id=OuterRef("subtopics__id"))
    rows = list(
        Topic.objects.filter(pk=topic_id)
        .annotate(kept=Exists(kept))
        .values_list("topic_id", "query", "subtopics__id", "subtopics__position", "subtopics__number", "subtopics__text", "kept")
    )
    query = Topic(topic_id=rows[0][0], query=rows[0][1]).display_query
    subtopics = sorted((row[3:5], row[2], _need(row[5], row[4]), row[6]) for row in rows if row[2] is not None)
    return _Task(query, [need for _, _, need, kept in subtopics if kept], {pk: need for _, pk, need, _ in subtopics})


def _run_page(topic_id: int, run_id: int, depth: int, query: str, need: str) -> ResultPage:
    """A run's result page for a topic cut at ``depth``, snippets biased to ``query`` and ``need``,
    read and drawn once per process while fresh.

    Only documents with main text get query-biased snippets; a page without any is the same for every
    need of the topic, so it is kept once for all of them (``None`` in the key's place of the need).
    """
    language = get_language()
    shared = ("run", topic_id, run_id, depth, None, language)
    page = _PAGES.peek(shared)
    if page is not None:
        return page
    own = ("run", topic_id, run_id, depth, need, language)
    page = _PAGES.peek(own)
    if page is None:
        documents = run_page(topic_id, run_id, depth)
        page = _drawn(results(documents, query, need))
        _PAGES.put(own if any(doc.text for doc in documents) else shared, page)
    return page


def _degraded_page(presentation_id: int, query: str, need: str) -> ResultPage:
    """The worse side of a degraded check: its documents in their order."""
    ids = Presentation.objects.values_list("b_documents", flat=True).get(pk=presentation_id)
    return _drawn(results(documents_in_order(ids), query, need))


def item_page(assignment: Assignment, study: Study, number: int, quota: int) -> ItemPage:
    """Everything the item template draws for ``assignment`` of ``study`` (the ``number``-th of ``quota``).

    Read from this process's display caches; a miss costs one to three queries.
    """
    p = design_item(study, assignment.presentation_id)
    task = _TASKS.get((study.pk, p.topic, get_language()), lambda: _task(study.pk, p.topic))
    needs = task.kept if p.level == TOPIC else [task.need_of[p.subtopic]]
    need = "" if p.level == TOPIC else needs[0]  # snippets: the query, and at subtopic level its need
    a = _run_page(p.topic, p.run_a, study.depth, task.query, need)
    if p.kind == Presentation.Kind.DEGRADED:
        b = _PAGES.get(("degraded", p.id, get_language()), lambda: _degraded_page(p.id, task.query, need))
    else:
        b = _run_page(p.topic, p.run_b, study.depth, task.query, need)
    left, right = (a, b) if assignment.a_on_left else (b, a)
    return ItemPage(assignment, number, quota, task.query, p.level, needs, left, right)


def unstored_item_page(study: Study, presentation_id: int, a_on_left: bool, number: int, quota: int) -> ItemPage:
    """The item page of a presentation shown with run A on the left (or not), without a stored assignment
    (the staff preview: services.participation.staff_preview). The same page a participant would see."""
    return item_page(Assignment(presentation_id=presentation_id, a_on_left=a_on_left), study, number, quota)
