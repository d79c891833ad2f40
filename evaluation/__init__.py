"""Diversity evaluation: collections, every diversity metric of the literature, and meta-evaluation.

Quick start::

    from evaluation import load_collection, read_run, evaluate
    col = load_collection("qrels.txt", intents="iprob.txt")
    frame = evaluate(col, [read_run("a.run"), read_run("b.run")], ["alpha-nDCG@10", "D#-nDCG@10"], per_topic=True)

No Django import anywhere in this package.
"""

__version__ = "0.1.0"  # the distribution's version (pyproject.toml reads it)

from evaluation.collection import Collection, Intent, Topic, build_collection, judgments_from_arrays
from evaluation.compare import compare
from evaluation.engine import evaluate, resolve_measures, score_matrix
from evaluation.exceptions import EvaluationError, EvaluationWarning, FormatError, UnknownMetricError
from evaluation.io import Run, read_intents, read_qrels, read_run, read_scores, read_topics, runs_from_arrays, write_scores
from evaluation.loading import load_collection
from evaluation.metrics import REGISTRY, Measure, parse_measure

__all__ = [
    "REGISTRY",
    "__version__",
    "Collection",
    "EvaluationError",
    "EvaluationWarning",
    "FormatError",
    "Intent",
    "Measure",
    "Run",
    "Topic",
    "UnknownMetricError",
    "build_collection",
    "compare",
    "evaluate",
    "judgments_from_arrays",
    "load_collection",
    "parse_measure",
    "read_intents",
    "read_qrels",
    "read_run",
    "read_scores",
    "read_topics",
    "resolve_measures",
    "runs_from_arrays",
    "score_matrix",
    "write_scores",
]
