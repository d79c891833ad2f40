"""Numbers in staff-facing sentences: a count with its noun in the right number, and a rounded value
without a minus sign on zero (``-0.00`` reads as a negative mean)."""

from __future__ import annotations

import math

from django.utils.translation import ngettext


def count(n: int, singular: str, plural: str | None = None) -> str:
    """``n`` and its noun: ``count(1, "check")`` is ``"1 check"``, ``count(3, "check")`` ``"3 checks"``
    (Django's ``ngettext``, so a catalogue may give other languages their plural forms)."""
    return f"{n} {ngettext(singular, plural or singular + 's', n)}"


def rounded(value: float | None, digits: int = 3, missing: str = "\u2013") -> str:
    """``value`` with ``digits`` decimals; ``missing`` for None, NaN and infinities; never ``-0.00``."""
    if value is None or not math.isfinite(value):
        return missing
    text = f"{value:.{digits}f}"
    return text[1:] if text.startswith("-") and float(text) == 0 else text
