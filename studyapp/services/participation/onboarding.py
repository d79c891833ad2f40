"""What every annotator sees before the items: the practice item and the comprehension check.

Both are fixed, invented content (the ``.example`` domains are reserved and lead nowhere), the same
for every study, so they need no collection data and work on a closed network. The practice item
shows a clearly better page against a clearly worse one; which side the better page is on depends on
the annotator (stable on reload), so the practice does not teach a side.

Every text is translatable (lazy: shown in the language active when a page is drawn); the query
"java" and the addresses stay as they are in every language.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from django.utils.functional import Promise
from django.utils.translation import gettext, ngettext, pgettext
from django.utils.translation import gettext_lazy as _

from studyapp.models.annotation import PREFERENCE_MAX, PREFERENCE_MIN


@dataclass(frozen=True)
class Result:
    """One line of a result page as the item template draws it."""

    rank: int
    title: str | Promise
    url: str  # empty: the title is not a link
    display_url: str
    snippet: str | Promise


def _results(rows: list[tuple[Promise, str, Promise]]) -> list[Result]:
    return [Result(rank, title, "", display_url, snippet) for rank, (title, display_url, snippet) in enumerate(rows, start=1)]


PRACTICE_QUERY = "java"
PRACTICE_NEEDS = [
    _("Travel information about Java, the Indonesian island."),
    _("Learning the Java programming language."),
    _("Java coffee: what it is and where to buy it."),
]
PRACTICE_GOOD = _results(
    [
        (_("Java island travel guide: Jakarta, Yogyakarta and the volcanoes"), "travel-guide.example › indonesia › java",
         _("When to go, how to get around and what to see on Java, from the temples near Yogyakarta to the Bromo crater.")),
        (_("Learn Java: a free tutorial for beginners"), "learn-code.example › java",
         _("Install the JDK, write your first program and learn classes, objects and collections step by step.")),
        (_("What is Java coffee? Origin, taste and brewing"), "coffee-guide.example › origins › java",
         _("Java coffee grows on the island's volcanic highlands. A smooth, earthy cup; how to brew it at home.")),
        (_("Borobudur temple: opening hours and tickets"), "travel-guide.example › java › borobudur",
         _("The largest Buddhist temple in the world, an hour from Yogyakarta. Sunrise tours and ticket prices.")),
        (_("Buy Java coffee beans online"), "bean-shop.example › java-arabica",
         _("Single-origin Java arabica, roasted to order. Free delivery on orders over 30 euros.")),
    ]
)  # fmt: skip
PRACTICE_BAD = _results(
    [
        (_("JAVA JAVA JAVA - best deals - click here"), "deals-4-you.example › java",
         _("Java java java cheap java best java deals java now java click java.")),
        (_("Java Lounge nightclub, Berlin"), "java-lounge.example",
         _("Friday and Saturday from 11 pm. Guest list and table reservations.")),
        (_("Funny coffee mugs with programming jokes"), "mug-store.example › jokes",
         _("Mugs, shirts and stickers for developers. Ships worldwide.")),
        (_("Learn Java: a free tutorial for beginners"), "learn-code.example › java",
         _("Install the JDK, write your first program and learn classes, objects and collections step by step.")),
        (_("Javanese script font, free download"), "fonts.example › javanese",
         _("A font for the Javanese script, free for personal use.")),
    ]
)  # fmt: skip
PRACTICE_WHY = _(
    "One page has useful results for all three needs: travel on the island, learning the language and the coffee. "
    "The other has one useful result (the tutorial) and otherwise advertising, a nightclub and off-topic pages."
)


@dataclass(frozen=True)
class PracticeItem:
    good_on_left: bool
    left: list[Result]
    right: list[Result]


@dataclass(frozen=True)
class PracticeFeedback:
    """How the practice answer relates to the expected one: ``good``, ``weak`` or ``wrong``."""

    verdict: str
    good_side: str  # "left" or "right"
    message: str


def practice_item(token: str) -> PracticeItem:
    """The practice item for the annotator with this token; the better page's side is a stable coin flip."""
    return practice_item_with(int(hashlib.sha256(f"practice:{token}".encode()).hexdigest(), 16) % 2 == 0)


def practice_item_with(good_on_left: bool) -> PracticeItem:
    """The practice item with the better page on the left (or on the right)."""
    if good_on_left:
        return PracticeItem(True, PRACTICE_GOOD, PRACTICE_BAD)
    return PracticeItem(False, PRACTICE_BAD, PRACTICE_GOOD)


def practice_feedback(value: int, good_on_left: bool) -> PracticeFeedback:
    """Feedback on a practice answer ``value`` (as shown, -4 left much better .. +4 right much better), in the active language."""
    if not PREFERENCE_MIN <= value <= PREFERENCE_MAX:
        raise ValueError(f"value must be in [{PREFERENCE_MIN}, {PREFERENCE_MAX}], got {value}")
    side = "left" if good_on_left else "right"
    shown = pgettext("practice page side", "left") if good_on_left else pgettext("practice page side", "right")
    toward_good = -value if good_on_left else value  # > 0: leaning to the better page
    if toward_good >= 2:
        return PracticeFeedback(
            "good", side, gettext("Well done: the %(side)s page is clearly better. %(why)s") % {"side": shown, "why": PRACTICE_WHY}
        )
    if toward_good == 1:
        text = gettext(
            "Right direction, but the %(side)s page is much better, not only slightly. %(why)s A clear difference deserves a clear answer."
        )
        return PracticeFeedback("weak", side, text % {"side": shown, "why": PRACTICE_WHY})
    return PracticeFeedback(
        "wrong", side, gettext("Look again: the %(side)s page is better. %(why)s") % {"side": shown, "why": PRACTICE_WHY}
    )


@dataclass(frozen=True)
class Question:
    key: str
    text: str | Promise
    options: list[tuple[str, str | Promise]]  # (value, label)
    correct: str


COMPREHENSION = [
    Question(
        "compare",
        _("What do you compare on each page of this study?"),
        [
            ("queries", _("Two different search queries")),
            ("lists", _("Two lists of search results for the same query")),
            ("speed", _("How fast two search engines answer")),
        ],
        "lists",
    ),
    Question(
        "answer",
        _("The left list has useful results for every need; the right list has useful results for only one need. Which answer fits best?"),
        [("right", _("Right much better")), ("same", _("About the same")), ("left", _("Left much better"))],
        "left",
    ),
    Question(
        "same",
        _("When should you choose “About the same”?"),
        [
            ("hurry", _("When you want to finish quickly")),
            ("never", _("Never")),
            ("equal", _("When you see no real difference between the two lists")),
        ],
        "equal",
    ),
]
COMPREHENSION_ATTEMPTS = 2  # Prolific's rule: two attempts, then the participant is asked to return the study


def wrong_answers(answers: dict[str, str]) -> list[str]:
    """The keys of the comprehension questions answered wrongly (or not at all)."""
    return [q.key for q in COMPREHENSION if answers.get(q.key) != q.correct]


def _numbers(numbers: list[str]) -> str:
    """``1``, ``1 and 3``, ``1, 2 and 3`` in the active language."""
    if len(numbers) == 1:
        return numbers[0]
    separator = pgettext("list separator", ", ")
    return gettext("%(items)s and %(last)s") % {"items": separator.join(numbers[:-1]), "last": numbers[-1]}


def failed_attempt_notice(wrong: list[str], attempts_left: int) -> str:
    """What a participant is told after a failed attempt: which questions (by number) were not right,
    that the others are kept (only when some were right), and how many attempts are left."""
    numbers = [str(n) for n, q in enumerate(COMPREHENSION, start=1) if q.key in wrong]
    if len(numbers) < len(COMPREHENSION):
        which = ngettext(
            "Your answer to question %(numbers)s was not right (marked below); your other answers are kept.",
            "Your answers to questions %(numbers)s were not right (marked below); your other answers are kept.",
            len(numbers),
        )
    else:
        which = ngettext(
            "Your answer to question %(numbers)s was not right (marked below).",
            "None of your answers was right: questions %(numbers)s are marked below.",
            len(numbers),
        )
    again = ngettext(
        "Please read the summary and choose again (%(count)d attempt left).",
        "Please read the summary and choose again (%(count)d attempts left).",
        attempts_left,
    ) % {"count": attempts_left}
    # Two sentences: a space between them in English, none in Chinese or Japanese.
    return pgettext("two sentences", "%(first)s %(second)s") % {"first": which % {"numbers": _numbers(numbers)}, "second": again}
