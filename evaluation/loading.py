"""One call from files to a :class:`~evaluation.collection.Collection`."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from evaluation.collection import Collection, build_collection
from evaluation.io.intents import read_intents
from evaluation.io.qrels import QrelsFormat, read_qrels
from evaluation.io.topics import read_topics


def load_collection(
    qrels: str | Path,
    intents: str | Path | None = None,
    topics: str | Path | None = None,
    *,
    qrels_format: QrelsFormat = "auto",
    on_duplicate_qrel: Literal["error", "max"] = "error",
    uniform_over: Literal["relevant", "listed"] = "relevant",
) -> Collection:
    """Read qrels (TREC or NTCIR), an optional intents file and an optional topic file (TREC or NTCIR layout).

    Every file is validated completely before the collection is built; the first problem raises
    ``FormatError(path, line, reason)``.
    """
    judgments = read_qrels(qrels, qrels_format, on_duplicate=on_duplicate_qrel)
    intent_table = read_intents(intents) if intents else None
    topic_table = read_topics(topics) if topics else None
    return build_collection(judgments, intent_table, topic_table, uniform_over=uniform_over, name=Path(qrels).name)
