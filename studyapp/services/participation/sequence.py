"""An annotator's sequence of items read in one query: the hot paths (item page, answer) work from it.

:class:`Sequence` holds every assignment of one annotator in position order, each marked answered
or not, so the item page and the answer find the annotator's own item, the next open one, whether
any lease has expired and the progress (answered / quota) without asking the database again.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db.models import F, QuerySet

from studyapp.compiled_queries import compiled
from studyapp.models import Annotator, Assignment


def _query(annotator_id: int) -> QuerySet[Assignment]:
    """The sequence query with the annotator id as its one value (item pages and answers read it every time)."""
    return Assignment.objects.filter(annotator_id=annotator_id).annotate(answer_id=F("preference__id")).order_by("position")


@dataclass(frozen=True)
class Sequence:
    annotator: Annotator
    assignments: list[Assignment]  # by position; ``answer_id`` is the stored answer's id or None

    @classmethod
    def of(cls, annotator: Annotator) -> Sequence:
        """The annotator's assignments as they are now (one query, its SQL built once per connection)."""
        rows = compiled("sequence", _query, [-1]).fetch([annotator.pk])
        for row in rows:
            Assignment.annotator.field.set_cached_value(row, annotator)  # no query for the annotator (or the study) of a row
        return cls(annotator, rows)

    def get(self, pk: int) -> Assignment | None:
        """The annotator's assignment ``pk`` (None for anyone else's id, like a missing one)."""
        return next((a for a in self.assignments if a.pk == pk), None)

    def open(self, *, besides: int | None = None) -> list[Assignment]:
        """Unanswered and not released, in order (leaving out the assignment ``besides``)."""
        return [a for a in self.assignments if a.answer_id is None and a.released_at is None and a.pk != besides]

    def lease_ends(self) -> list[datetime]:
        """The lease ends of the assignments not released (those :func:`~studyapp.services.participation.allocation.touch` renews)."""
        return [a.lease_expires_at for a in self.assignments if a.released_at is None]

    def expired(self, now: datetime) -> bool:
        """Has the lease of any open item run out at ``now``?"""
        return any(a.lease_expires_at <= now for a in self.open())

    def progress(self, *, just_answered: int | None = None) -> tuple[int, int]:
        """(answered, quota): answers given and items of the sequence (released ones left out).

        ``just_answered`` counts that assignment as answered (its answer was stored after this read).
        """
        answered = sum(1 for a in self.assignments if a.answer_id is not None or a.pk == just_answered)
        quota = sum(1 for a in self.assignments if a.released_at is None or a.answer_id is not None or a.pk == just_answered)
        return answered, quota
