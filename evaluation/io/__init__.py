"""Readers and writers: qrels, intents, topics, runs, score tables."""

from evaluation.io.intents import read_intents
from evaluation.io.qrels import read_qrels
from evaluation.io.runs import Run, read_run
from evaluation.io.scores import read_scores, render_scores, write_scores
from evaluation.io.topics import read_topics

__all__ = ["Run", "read_intents", "read_qrels", "read_run", "read_scores", "read_topics", "render_scores", "write_scores"]
