"""Readers and writers: qrels, intents, topics, runs, score tables."""

from evaluation.io.intents import read_intents
from evaluation.io.qrels import read_qrels
from evaluation.io.runs import RankedLists, Run, read_run, runs_from_arrays
from evaluation.io.scores import read_scores, render_scores, write_scores
from evaluation.io.topics import read_topics

__all__ = [
    "RankedLists",
    "Run",
    "read_intents",
    "read_qrels",
    "read_run",
    "read_scores",
    "read_topics",
    "render_scores",
    "runs_from_arrays",
    "write_scores",
]
