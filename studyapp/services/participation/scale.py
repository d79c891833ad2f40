"""The 9-point answer scale, left to right -4 .. +4, with the words every point is shown with.

Each point has a side (``Left``/``Right``, none in the centre) and a strength word ("much better",
"better", "somewhat better", "slightly better"; "About the same" in the centre). The radio button's
accessible name is side + word ("Left much better"); the page shows the word under each point and
the side above each half, and echoes the chosen point as a sentence ("Right is somewhat better").
Keys 1-9 choose the points in this order.
"""

from __future__ import annotations

from dataclasses import dataclass

STRENGTHS = {4: "much better", 3: "better", 2: "somewhat better", 1: "slightly better"}
SAME = "About the same"


@dataclass(frozen=True)
class Point:
    value: int  # as shown: negative = the left list is better
    side: str  # "Left", "Right" or "" (the centre)
    word: str  # the strength as shown under the point

    @property
    def name(self) -> str:
        """The accessible name, e.g. "Left much better" or "About the same"."""
        return f"{self.side} {self.word}" if self.side else self.word

    @property
    def sentence(self) -> str:
        """The chosen point in words, e.g. "Right is somewhat better"."""
        return f"{self.side} is {self.word}" if self.side else "Both are about the same"


SCALE = [Point(v, "Left" if v < 0 else "Right" if v > 0 else "", STRENGTHS.get(abs(v), SAME)) for v in range(-4, 5)]


def point(value: int | None) -> Point | None:
    """The point for ``value`` (None for no value or one off the scale)."""
    return next((p for p in SCALE if p.value == value), None)
