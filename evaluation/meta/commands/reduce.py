"""``python -m evaluation meta reduce``: topic-set reduction: discriminative power and rank correlation on nested subsets."""

from __future__ import annotations

import argparse

import pandas as pd

from evaluation._argtypes import positive_int
from evaluation.meta.commands.base import Command, Output, cube_of, scores_option, seed_of, test_options


def options(p: argparse.ArgumentParser) -> None:
    scores_option(p)
    p.add_argument(
        "--reference", required=True, metavar="NAME", help="measure whose per-topic variance orders the removal (e.g. D#-nDCG@10)"
    )
    p.add_argument("--sizes", nargs="+", type=positive_int, required=True, metavar="N", help="reduced topic-set sizes, e.g. 30 10")
    test_options(p, default="tukey")


def run(args: argparse.Namespace, out: Output) -> pd.DataFrame:
    from evaluation.meta.reduction import topic_set_reduction
    from evaluation.meta.significance import CONVENTIONS

    measures = list(dict.fromkeys([args.reference, *(args.measures or [])])) if args.measures else None
    cube = cube_of(args, measures, min_runs=2)
    out.conventions = CONVENTIONS
    return topic_set_reduction(cube, args.reference, args.sizes, test=args.test, B=args.B, alpha=args.alpha, rng=seed_of(args, out))


COMMAND = Command(
    "reduce",
    help="topic set reduction: discriminative power and tau/tau_ap on nested subsets (docs/metrics.md#topic-set-reduction)",
    description="Output: topics measure pairs significant power tau tau_ap test B alpha seed.",
    options=options,
    run=run,
    seed=True,
)
