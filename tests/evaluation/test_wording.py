"""Messages count their nouns: one topic, two topics; never ``topic(s)``."""

import re
import warnings
from pathlib import Path

import pytest

from evaluation.wording import be, counted, have, named, plural

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("n", "expected"),
    [(0, "0 topics"), (1, "1 topic"), (2, "2 topics"), (11, "11 topics")],
)
def test_counted(n: int, expected: str) -> None:
    assert counted(n, "topic") == expected


def test_irregular_plural_and_verbs() -> None:
    assert plural(1, "query", "queries") == "query"
    assert plural(2, "query", "queries") == "queries"
    assert named("topic", ["251"]) + f" {have(1)} no qrels and {be(1)} left out" == "topic 251 has no qrels and is left out"
    assert named("topic", ["251", "252"]) + f" {have(2)} no qrels and {be(2)} left out" == "topics 251, 252 have no qrels and are left out"


def test_a_single_unknown_topic_reads_singular() -> None:
    from evaluation import build_collection

    collection = build_collection({"T1": {"d1": {"a": 1}}})
    with pytest.raises(Exception, match=r"^unknown topic T9$"):
        collection.restrict_topics(["T9"])
    with pytest.raises(Exception, match=r"^unknown topics T8, T9$"):
        collection.restrict_topics(["T8", "T9"])


def test_no_message_in_the_library_writes_a_parenthesised_plural() -> None:
    found = []
    for path in sorted((ROOT / "evaluation").rglob("*.py")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            stripped = line.strip()
            if stripped.startswith(("#", '"""')) or "wording" in path.name:
                continue
            if re.search(r"\b\w+\(s\)", stripped) and ('f"' in stripped or "raise" in stripped or "warn" in stripped):
                found.append(f"{path.relative_to(ROOT)}:{number}: {stripped}")
    assert not found, "\n".join(found)


def test_warning_of_an_unjudged_topic_file_entry_is_singular() -> None:
    from evaluation import Topic, build_collection

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        build_collection({"T1": {"d1": {"a": 1}}}, topics={"T1": Topic("T1"), "T7": Topic("T7")})
    messages = [str(w.message) for w in caught]
    assert "topic T7 of the topics file has no qrels and is not evaluated" in messages
