"""The 9-point answer scale, left to right -4 .. +4, with the words every point is shown with.

Each point has a side (``Left``/``Right``, none in the centre) and a strength word ("much better",
"better", "somewhat better", "slightly better"; "About the same" in the centre). The radio button's
accessible name is side + word ("Left much better"); the page shows the word under each point and
the side above each half, and echoes the chosen point as a sentence ("Right is somewhat better").
Keys 1-9 choose the points in this order.

On phones the side shows before the word, with a space in languages that write one between words
and none in Chinese and Japanese ("Left much better", "左侧好得多": :func:`word_space`, the template tag
``{% word_space %}``).

Every word is a translatable string of its own (a name or a sentence is never pieced together from
words: word order differs between languages); they are lazy, so each page shows them in the
language active when it is drawn.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.utils.functional import Promise
from django.utils.translation import get_language, pgettext_lazy
from django.utils.translation import gettext_lazy as _

WITHOUT_WORD_SPACES = ("zh", "ja")  # languages written without spaces between words


def word_space() -> str:
    """The space between two words in the active language: " ", or "" in Chinese and Japanese."""
    return "" if (get_language() or "").split("-")[0] in WITHOUT_WORD_SPACES else " "


_SIDES = {-1: pgettext_lazy("scale side", "Left"), 1: pgettext_lazy("scale side", "Right")}
_WORDS = {
    4: pgettext_lazy("scale point", "much better"),
    3: pgettext_lazy("scale point", "better"),
    2: pgettext_lazy("scale point", "somewhat better"),
    1: pgettext_lazy("scale point", "slightly better"),
    0: pgettext_lazy("scale point", "About the same"),
}
_NAMES = {
    -4: _("Left much better"), -3: _("Left better"), -2: _("Left somewhat better"), -1: _("Left slightly better"),
    0: _("About the same"),
    1: _("Right slightly better"), 2: _("Right somewhat better"), 3: _("Right better"), 4: _("Right much better"),
}  # fmt: skip
_SENTENCES = {
    -4: _("Left is much better"), -3: _("Left is better"), -2: _("Left is somewhat better"), -1: _("Left is slightly better"),
    0: _("Both are about the same"),
    1: _("Right is slightly better"), 2: _("Right is somewhat better"), 3: _("Right is better"), 4: _("Right is much better"),
}  # fmt: skip


@dataclass(frozen=True)
class Point:
    value: int  # as shown: negative = the left list is better
    side: str | Promise  # "Left", "Right" or "" (the centre)
    word: str | Promise  # the strength as shown under the point
    name: str | Promise  # the accessible name, e.g. "Left much better" or "About the same"
    sentence: str | Promise  # the chosen point in words, e.g. "Right is somewhat better"


SCALE = [Point(v, _SIDES.get((v > 0) - (v < 0), ""), _WORDS[abs(v)], _NAMES[v], _SENTENCES[v]) for v in range(-4, 5)]


def point(value: int | None) -> Point | None:
    """The point for ``value`` (None for no value or one off the scale)."""
    return next((p for p in SCALE if p.value == value), None)
