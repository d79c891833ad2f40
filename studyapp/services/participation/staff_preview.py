"""A staff preview of a study's participant flow (docs/studyapp.md#preview): the real pages, texts and items,
nothing stored that counts.

The state of one walk-through lives in the staff member's browser session only (no Annotator, no
Assignment or lease, no Preference, no practice or check answers, no arrival counted by the throttle):
where they stand, the items chosen for them, how many they answered and their practice answer. The items
are read from the study's presentations (the first ``items_per_annotator`` of them, the order the design
created them), the sides alternating from item to item, so a reload shows the same page.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from studyapp.models import Presentation, Study
from studyapp.services.participation.onboarding import COMPREHENSION_ATTEMPTS

CONSENT, INSTRUCTIONS, PRACTICE, COMPREHENSION, ITEMS, DONE, SCREENED = (
    "consent",
    "instructions",
    "practice",
    "comprehension",
    "items",
    "done",
    "screened",
)
STEPS = (CONSENT, INSTRUCTIONS, PRACTICE, COMPREHENSION, ITEMS, DONE)


@dataclass
class PreviewState:
    """Where one staff member stands in the preview of one study (kept in their session as a dict)."""

    step: str = CONSENT
    items: list[tuple[int, bool]] = field(default_factory=list)  # (presentation id, run A on the left)
    answered: int = 0
    practice_value: int | None = None
    attempts: int = 0
    token: str = ""  # which side the practice item's better page is on (onboarding.practice_item)

    @property
    def current(self) -> tuple[int, bool] | None:
        return tuple(self.items[self.answered]) if self.answered < len(self.items) else None

    def answer_item(self) -> None:
        """One item answered (the answer itself goes nowhere); after the last one the completion page."""
        self.answered = min(self.answered + 1, len(self.items))
        if self.answered >= len(self.items):
            self.step = DONE

    def check_failed(self) -> int:
        """One more failed attempt at the check questions; returns the attempts left (none: screened out, as a participant would be)."""
        self.attempts += 1
        left = max(0, COMPREHENSION_ATTEMPTS - self.attempts)
        if not left:
            self.step = SCREENED
        return left


def _key(study: Study) -> str:
    return f"studyapp.preview.{study.pk}"


def preview_items(study: Study) -> list[tuple[int, bool]]:
    """The items a preview shows: the study's first ``items_per_annotator`` presentations, sides alternating (read only)."""
    ids = Presentation.objects.filter(study=study).order_by("pk").values_list("pk", flat=True)[: study.items_per_annotator]
    return [(pk, number % 2 == 0) for number, pk in enumerate(ids)]


def start(session, study: Study, token: str) -> PreviewState:
    """A fresh walk-through from the consent page (any earlier one of this study is forgotten)."""
    state = PreviewState(items=preview_items(study), token=token)
    save(session, study, state)
    return state


def load(session, study: Study) -> PreviewState | None:
    data = session.get(_key(study))
    if data is None:
        return None
    data = dict(data)
    data["items"] = [tuple(item) for item in data.get("items", [])]
    return PreviewState(**data)


def save(session, study: Study, state: PreviewState) -> None:
    session[_key(study)] = asdict(state)
