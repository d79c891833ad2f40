"""``python -m evaluation meta loo``: leave-one-team-out reusability of a pooled collection."""

from __future__ import annotations

import argparse

import pandas as pd

from evaluation._argtypes import positive_int
from evaluation.meta.commands.base import Command, Output, collection_options, load


def options(p: argparse.ArgumentParser) -> None:
    collection_options(p)
    p.add_argument("--run", action="append", required=True, metavar="FILE", help="run under study (repeatable); feeds the pool")
    p.add_argument(
        "--pool-run", action="append", default=[], metavar="FILE", help="run that fed the pool but is not under study (repeatable)"
    )
    p.add_argument("--teams", required=True, metavar="FILE", help="'run team' per line")
    depth = p.add_mutually_exclusive_group()
    depth.add_argument("--pool-depth", type=positive_int, default=20, help="global pool depth (default 20)")
    depth.add_argument("--pool-depths", metavar="FILE", help="'topic depth' per line (topics not listed: 20)")
    p.add_argument("--official", metavar="NAME", help="measure that picks each team's best run (default: first measure)")
    p.add_argument("--order", choices=("score", "rank", "file", "pyndeval"), default="score", help="run ordering (docs/metrics.md#runs)")


def run(args: argparse.Namespace, out: Output) -> pd.DataFrame:
    from evaluation.io.runs import read_run
    from evaluation.meta.reusability import leave_one_out, read_pool_depths, read_teams

    runs = [read_run(path, order=args.order) for path in args.run]
    pool = [read_run(path, order=args.order) for path in args.pool_run]
    depth = read_pool_depths(args.pool_depths) if args.pool_depths else args.pool_depth
    return leave_one_out(load(args), runs, read_teams(args.teams), args.measures, official=args.official, pool_runs=pool, depth=depth)


COMMAND = Command(
    "loo",
    help="leave-one-team-out reusability, raw vs condensed lists (docs/metrics.md#leave-one-out-reusability)",
    description="Output: team run measure list full loo diff abs_error rank_full rank_loo rel_error; team 'all' = means.",
    options=options,
    run=run,
)
