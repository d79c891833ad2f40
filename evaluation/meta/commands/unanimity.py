"""``python -m evaluation meta unanimity``: metric unanimity of each metric against all others."""

from __future__ import annotations

import argparse

import pandas as pd

from evaluation.meta.commands.base import Command, Output, cube_of, scores_option


def options(p: argparse.ArgumentParser) -> None:
    scores_option(p)
    p.add_argument("--strict", action="store_true", help="'>' instead of '>=' in the unanimity of the other metrics")


def run(args: argparse.Namespace, out: Output) -> pd.DataFrame:
    from evaluation.meta.unanimity import metric_unanimity

    return metric_unanimity(cube_of(args, min_runs=2), strict=args.strict)


COMMAND = Command(
    "unanimity",
    help="metric unanimity MU of each metric against all others (docs/metrics.md#metric-unanimity)",
    description="Output: measure MU P_m P_M P_mM pairs.",
    options=options,
    run=run,
)
