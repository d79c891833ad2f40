"""The one table mapping golden-file keys (tool, measure, cutoff, param) to our measure strings.

Golden files: ``tests/evaluation/data/reference/golden/{public,ntcireval-sample}.tsv`` (provenance in
``tests/evaluation/data/reference/README.md``). Each key also names the collection setting it was computed on.
"""

from __future__ import annotations

import csv
import os
from dataclasses import dataclass
from functools import cache
from pathlib import Path

# The official tools' outputs and their inputs (README.md there gives provenance); override with DIVERSITY_REFERENCE.
REFERENCE = Path(os.environ.get("DIVERSITY_REFERENCE", Path(__file__).resolve().parent / "data" / "reference"))

# tool -> (tolerance, run order used to make the golden values)
TOOLS = {
    "pyndeval": (1e-6, "pyndeval"),
    "ntcireval-hp": (1e-9, "file"),
    "ntcireval": (1.5e-4, "file"),
    "rbu-hp": (1e-9, "file"),
    "rbu": (1.5e-4, "file"),
}

# golden measure name -> our registry name
NAMES = {
    "strec": "I-rec",
    "IA-MSnDCG": "nDCG-IA",
}

SETTINGS = {
    # setting -> (qrels, intents) relative to REFERENCE
    "qrels": ("trec2014/qrels.diversity.tsv", None),
    "uniform": ("trec2014/qrels.diversity.tsv", "trec2014/intent_probs.tsv"),
    "linear": ("trec2014/qrels.diversity.tsv", "trec2014/intent_probs_din.tsv"),
    "sample": ("ntcireval-sample/Dtest.Dqrels", "ntcireval-sample/Dtest.DINprob"),
}


@dataclass(frozen=True)
class GoldenKey:
    tool: str
    measure: str
    cutoff: str
    param: str


def parse_param(param: str) -> dict[str, str]:
    return dict(item.split("=", 1) for item in param.split(",") if item)


def our_measure(key: GoldenKey, *, sample: bool = False) -> tuple[str, str]:
    """(our measure string, collection setting) for a golden key."""
    params = parse_param(key.param)
    condensed = params.pop("list", None) == "condensed"
    probs = params.pop("probs", None)
    name = NAMES.get(key.measure, key.measure)
    if key.tool == "pyndeval":
        setting = "qrels"
    elif key.tool.startswith("rbu"):
        setting = "uniform"
    else:
        setting = "sample" if sample else (probs or "uniform")
    inner = ",".join(f"{k}={v}" for k, v in params.items())
    text = name + (f"({inner})" if inner else "") + ("'" if condensed else "") + (f"@{int(key.cutoff)}" if key.cutoff else "")
    return text, setting


@cache
def golden_rows(filename: str) -> list[tuple[GoldenKey, str, str, str]]:
    """``(key, run, topic, value-string)`` rows of a golden file."""
    with open(REFERENCE / "golden" / filename, newline="") as handle:
        reader = csv.DictReader(handle, delimiter="\t")
        return [(GoldenKey(r["tool"], r["measure"], r["cutoff"], r["param"]), r["run"], r["topic"], r["value"]) for r in reader]


def golden_value(text: str) -> float:
    """Tool output string -> float (RBU may print a locale comma)."""
    return float(text.replace(",", "."))
