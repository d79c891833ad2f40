"""``python -m evaluation meta simplified``: simplified collections (binary grades, uniform/linear weights) against the original."""

from __future__ import annotations

import argparse

import pandas as pd

from evaluation.meta.commands.base import Command, Output, collection_options, load, seed_of, test_options


def options(p: argparse.ArgumentParser) -> None:
    collection_options(p)
    p.add_argument("--run", action="append", required=True, metavar="FILE", help="run file (repeatable)")
    test_options(p)


def run(args: argparse.Namespace, out: Output) -> pd.DataFrame:
    from evaluation.io.runs import read_run
    from evaluation.meta.significance import CONVENTIONS
    from evaluation.meta.simplified import simplified_comparison

    runs = [read_run(path) for path in args.run]
    collection = load(args)
    out.conventions = CONVENTIONS
    return simplified_comparison(collection, runs, args.measures, test=args.test, B=args.B, alpha=args.alpha, rng=seed_of(args, out))


COMMAND = Command(
    "simplified",
    help="simplified collections (binary grades, uniform/linear weights) vs the original (docs/metrics.md#simplified-collections)",
    description="Output: collection measure pairs significant power tau tau_ap test B alpha seed.",
    options=options,
    run=run,
    seed=True,
)
