"""Shared fixtures: the public reference runs scored by the engine, and small hand-made tables."""

from __future__ import annotations

import glob
import warnings
from pathlib import Path

import pandas as pd
import pytest

from evaluation.meta.cli import main
from tests.evaluation.golden import REFERENCE

QRELS = REFERENCE / "trec2014" / "qrels.diversity.tsv"
INTENTS = REFERENCE / "trec2014" / "intent_probs_din.tsv"
RUNS = sorted(glob.glob(str(REFERENCE / "runs" / "public" / "*.run")))

# Precision-type gold standards of the intuitiveness test (I-rec, the other one, is also a candidate).
PRECISION_GOLD = ["Prec@10", "PMP@10", "Ef-P@10"]
# Clearly different candidate metrics for the planted-truth and agreement tests, then the gold standards.
PUBLIC_MEASURES = [
    "D-Q@10",
    "D#-Q@10",
    "D-nDCG@10",
    "D#-nDCG@10",
    "alpha-nDCG@10",
    "nERR-IA@10",
    "nDCG-IA@10",
    "IA-ERR@10",
    "I-rec@10",
    "P-IA@10",
    "RBU(p=0.8,e=0.05)@20",
    "NRBP",
    "DIN-nDCG@10",
    "P+Q@10",
    *PRECISION_GOLD,
]


# Candidates of the CLI tests.
MEASURES = ["D-Q@10", "alpha-nDCG@10", "I-rec@10", "nERR-IA@10"]


def read(path: Path) -> pd.DataFrame:
    """A TSV table written by ``python -m evaluation meta``."""
    return pd.read_csv(path, sep="\t", keep_default_na=False, na_values=["nan"])


@pytest.fixture(scope="session")
def public_collection():
    assert QRELS.exists() and len(RUNS) == 8, f"reference data missing under {REFERENCE}"
    from evaluation import load_collection, read_run

    return load_collection(QRELS, INTENTS), [read_run(p) for p in RUNS]


@pytest.fixture(scope="session")
def public_scores(public_collection) -> pd.DataFrame:
    """Per-topic scores of the 8 public runs x 50 topics (rows with topic 'all' included)."""
    from evaluation import evaluate

    collection, runs = public_collection
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return evaluate(collection, runs, PUBLIC_MEASURES, per_topic=True)


@pytest.fixture(scope="session")
def public_scores_file(public_scores, tmp_path_factory) -> Path:
    from evaluation.io.scores import write_scores

    path = tmp_path_factory.mktemp("scores") / "public.tsv"
    write_scores(public_scores, path)
    return path


def tidy(values: dict[tuple[str, str, str], float]) -> pd.DataFrame:
    """A score frame from ``{(run, topic, measure): value}``."""
    return pd.DataFrame([(r, t, m, v) for (r, t, m), v in values.items()], columns=["run", "topic", "measure", "value"])


@pytest.fixture(scope="session")
def study(public_scores_file, tmp_path_factory) -> dict[str, Path]:
    """A simulated preference study on the public runs (truth D-Q@10), written by `simulate`."""
    folder = tmp_path_factory.mktemp("study")
    prefs = folder / "prefs.tsv"
    status = main(
        [
            "simulate",
            "--scores",
            str(public_scores_file),
            "--truth",
            "D-Q@10",
            "--measures",
            *MEASURES,
            "--noise",
            "1",
            "--n-sim",
            "5",
            "--seed",
            "3",
            "--preferences-out",
            str(prefs),
            "-o",
            str(folder / "sim.tsv"),
        ]
    )
    assert status == 0
    return {"scores": public_scores_file, "prefs": prefs, "dir": folder}
