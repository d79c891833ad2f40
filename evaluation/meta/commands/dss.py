"""``python -m evaluation meta dss``: document selection sensitivity on random permutations of the relevant documents."""

from __future__ import annotations

import argparse

import pandas as pd

from evaluation._argtypes import positive_int
from evaluation.meta.commands.base import Command, Output, collection_options, load, seed_of


def options(p: argparse.ArgumentParser) -> None:
    collection_options(p)
    p.add_argument("--n-perm", type=positive_int, default=1000, help="permutations per topic (default 1000)")
    p.add_argument("--keep-grades", action="store_true", help="keep grades and weights (default: binary relevance, uniform weights)")


def run(args: argparse.Namespace, out: Output) -> pd.DataFrame:
    from evaluation.meta.dss import document_selection_sensitivity

    collection = load(args)
    seed = seed_of(args, out)
    result = document_selection_sensitivity(collection, args.measures, n_perm=args.n_perm, rng=seed, keep_grades=args.keep_grades)
    return result.table.assign(seed=result.seed)


COMMAND = Command(
    "dss",
    help="document selection sensitivity on random permutations of the relevant documents (docs/metrics.md#document-selection-sensitivity)",
    description="Output: measure topic dss mean sd n_perm seed; topic 'all:<avg|geom|DD>' rows aggregate.",
    options=options,
    run=run,
    seed=True,
)
