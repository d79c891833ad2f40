"""How many of the documents a study would show have no display data (docs/studyapp.md#display-data-warnings).

A document without a title, a main text and a snippet is shown as its bare id, which nobody can judge.
``import_collection`` reports the share over every run and topic at the default depth; ``create_study``
over the study's runs and topics at its depth, and refuses the study when more than ``max_share`` of them
are bare (``--max-bare-share``, default :data:`MAX_BARE_SHARE`) unless ``--allow-bare-documents``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from django.db.models import Q

from studyapp.models import Document

MAX_BARE_SHARE = 0.2  # create_study refuses a study with more bare documents than this share


@dataclass(frozen=True)
class BareDocuments:
    """``bare`` of the ``shown`` distinct documents ranked within ``depth`` have no display data."""

    shown: int
    bare: int
    depth: int
    collection: str

    @property
    def share(self) -> float:
        return self.bare / self.shown if self.shown else 0.0

    def line(self) -> str:
        """One line for people: the count, the share and how to fix it when any are bare."""
        text = (
            f"{self.bare} of the {self.shown} documents ranked within depth {self.depth} ({self.share:.0%}) have no display data "
            "(no title, text or snippet): result pages show them as bare ids"
        )
        if not self.bare:
            return f"All {self.shown} documents ranked within depth {self.depth} have display data."
        return f"{text}. Add it with: manage.py import_documents {self.collection} SOURCE... (WARC, HTML folder or JSONL)"


def bare_documents(collection_name: str, run_ids: Iterable[int], topic_ids: Iterable[int] | None, depth: int) -> BareDocuments:
    """Count the distinct documents ranked at or above ``depth`` in these runs (and topics; ``None``: all) and those without display data."""
    ranked = Document.objects.filter(ranked_items__run_id__in=list(run_ids), ranked_items__rank__lte=depth)
    if topic_ids is not None:
        ranked = ranked.filter(ranked_items__topic_id__in=list(topic_ids))
    ranked = ranked.distinct()
    bare = ranked.filter(Q(title="") & Q(text="") & Q(snippet=""))
    return BareDocuments(shown=ranked.count(), bare=bare.count(), depth=depth, collection=collection_name)
