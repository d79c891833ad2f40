"""What every annotator sees before the items: the practice item and the comprehension check.

Both are fixed, invented content (the ``.example`` domains are reserved and lead nowhere), the same
for every study, so they need no collection data and work on a closed network. The practice item
shows a clearly better page against a clearly worse one; which side the better page is on depends on
the annotator (stable on reload), so the practice does not teach a side.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from studyapp.models.annotation import PREFERENCE_MAX, PREFERENCE_MIN


@dataclass(frozen=True)
class Result:
    """One line of a result page as the item template draws it."""

    rank: int
    title: str
    url: str  # empty: the title is not a link
    display_url: str
    snippet: str


def _results(rows: list[tuple[str, str, str]]) -> list[Result]:
    return [Result(rank, title, "", display_url, snippet) for rank, (title, display_url, snippet) in enumerate(rows, start=1)]


PRACTICE_QUERY = "java"
PRACTICE_NEEDS = [
    "Travel information about Java, the Indonesian island.",
    "Learning the Java programming language.",
    "Java coffee: what it is and where to buy it.",
]
PRACTICE_GOOD = _results(
    [
        ("Java island travel guide: Jakarta, Yogyakarta and the volcanoes", "travel-guide.example › indonesia › java",
         "When to go, how to get around and what to see on Java, from the temples near Yogyakarta to the Bromo crater."),
        ("Learn Java: a free tutorial for beginners", "learn-code.example › java",
         "Install the JDK, write your first program and learn classes, objects and collections step by step."),
        ("What is Java coffee? Origin, taste and brewing", "coffee-guide.example › origins › java",
         "Java coffee grows on the island's volcanic highlands. A smooth, earthy cup; how to brew it at home."),
        ("Borobudur temple: opening hours and tickets", "travel-guide.example › java › borobudur",
         "The largest Buddhist temple in the world, an hour from Yogyakarta. Sunrise tours and ticket prices."),
        ("Buy Java coffee beans online", "bean-shop.example › java-arabica",
         "Single-origin Java arabica, roasted to order. Free delivery on orders over 30 euros."),
    ]
)  # fmt: skip
PRACTICE_BAD = _results(
    [
        ("JAVA JAVA JAVA - best deals - click here", "deals-4-you.example › java",
         "Java java java cheap java best java deals java now java click java."),
        ("Java Lounge nightclub, Berlin", "java-lounge.example",
         "Friday and Saturday from 11 pm. Guest list and table reservations."),
        ("Funny coffee mugs with programming jokes", "mug-store.example › jokes",
         "Mugs, shirts and stickers for developers. Ships worldwide."),
        ("Learn Java: a free tutorial for beginners", "learn-code.example › java",
         "Install the JDK, write your first program and learn classes, objects and collections step by step."),
        ("Javanese script font, free download", "fonts.example › javanese",
         "A font for the Javanese script, free for personal use."),
    ]
)  # fmt: skip
PRACTICE_WHY = (
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
    good_on_left = int(hashlib.sha256(f"practice:{token}".encode()).hexdigest(), 16) % 2 == 0
    if good_on_left:
        return PracticeItem(True, PRACTICE_GOOD, PRACTICE_BAD)
    return PracticeItem(False, PRACTICE_BAD, PRACTICE_GOOD)


def practice_feedback(value: int, good_on_left: bool) -> PracticeFeedback:
    """Feedback on a practice answer ``value`` (as shown, -4 left much better .. +4 right much better)."""
    if not PREFERENCE_MIN <= value <= PREFERENCE_MAX:
        raise ValueError(f"value must be in [{PREFERENCE_MIN}, {PREFERENCE_MAX}], got {value}")
    side = "left" if good_on_left else "right"
    toward_good = -value if good_on_left else value  # > 0: leaning to the better page
    if toward_good >= 2:
        return PracticeFeedback("good", side, f"Well done: the {side} page is clearly better. {PRACTICE_WHY}")
    if toward_good == 1:
        return PracticeFeedback(
            "weak",
            side,
            f"Right direction, but the {side} page is much better, not only slightly. {PRACTICE_WHY} A clear difference "
            "deserves a clear answer.",
        )
    return PracticeFeedback("wrong", side, f"Look again: the {side} page is better. {PRACTICE_WHY}")


@dataclass(frozen=True)
class Question:
    key: str
    text: str
    options: list[tuple[str, str]]  # (value, label)
    correct: str


COMPREHENSION = [
    Question(
        "compare",
        "What do you compare on each page of this study?",
        [
            ("queries", "Two different search queries"),
            ("lists", "Two lists of search results for the same query"),
            ("speed", "How fast two search engines answer"),
        ],
        "lists",
    ),
    Question(
        "answer",
        "The left list has useful results for every need; the right list has useful results for only one need. Which answer fits best?",
        [("right", "Right much better"), ("same", "About the same"), ("left", "Left much better")],
        "left",
    ),
    Question(
        "same",
        "When should you choose \u201cAbout the same\u201d?",
        [
            ("hurry", "When you want to finish quickly"),
            ("never", "Never"),
            ("equal", "When you see no real difference between the two lists"),
        ],
        "equal",
    ),
]
COMPREHENSION_ATTEMPTS = 2  # Prolific's rule: two attempts, then the participant is asked to return the study


def wrong_answers(answers: dict[str, str]) -> list[str]:
    """The keys of the comprehension questions answered wrongly (or not at all)."""
    return [q.key for q in COMPREHENSION if answers.get(q.key) != q.correct]


def failed_attempt_notice(wrong: list[str], attempts_left: int) -> str:
    """What a participant is told after a failed attempt: which questions (by number) were not right."""
    numbers = [str(n) for n, q in enumerate(COMPREHENSION, start=1) if q.key in wrong]
    if len(numbers) == 1:
        which = f"Your answer to question {numbers[0]} was"
    else:
        which = f"Your answers to questions {', '.join(numbers[:-1])} and {numbers[-1]} were"
    attempts = f"{attempts_left} attempt{'' if attempts_left == 1 else 's'} left"
    return f"{which} not right (marked below); your other answers are kept. Please read the summary and choose again ({attempts})."
