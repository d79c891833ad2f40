"""Counted nouns for messages: ``1 topic``, ``2 topics``, ``topics 251, 252 have``, never ``topic(s)``."""

from __future__ import annotations

from collections.abc import Sequence


def plural(n: int, noun: str, many: str | None = None) -> str:
    """``noun`` for one thing, else its plural (``many``, or ``noun + "s"``)."""
    return noun if n == 1 else (many or noun + "s")


def counted(n: int, noun: str, many: str | None = None) -> str:
    """``1 topic``, ``3 topics``."""
    return f"{n} {plural(n, noun, many)}"


def named(noun: str, items: Sequence[str], many: str | None = None) -> str:
    """``topic 251`` or ``topics 251, 252``: the noun agrees with the number of items listed."""
    return f"{plural(len(items), noun, many)} {', '.join(items)}"


def have(n: int) -> str:
    """The verb agreeing with ``n`` subjects: ``has`` or ``have``."""
    return "has" if n == 1 else "have"


def be(n: int) -> str:
    """The verb agreeing with ``n`` subjects: ``is`` or ``are``."""
    return "is" if n == 1 else "are"
