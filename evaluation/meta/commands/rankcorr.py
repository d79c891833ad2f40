"""``python -m evaluation meta rankcorr``: rank correlation of run rankings (tau, tau_a, tau_ap)."""

from __future__ import annotations

import argparse

import pandas as pd

from evaluation.meta.commands.base import Command, Output, cube_of, read_scores, scores_option


def options(p: argparse.ArgumentParser) -> None:
    scores_option(p)
    p.add_argument("--against", metavar="FILE", help="second per-topic score table (e.g. reduced or simplified collection)")


def run(args: argparse.Namespace, out: Output) -> pd.DataFrame:
    from evaluation.meta.correlation import rankcorr_table

    cube = cube_of(args, min_runs=2)
    other = None
    if args.against:
        from evaluation.meta._matrix import score_cube

        other = score_cube(read_scores(args.against), cube.measures, runs=cube.runs)
    return rankcorr_table(cube, other)


COMMAND = Command(
    "rankcorr",
    help="Kendall tau (tau_b), tau_a and symmetric tau_ap of run rankings (docs/metrics.md#rank-correlation)",
    description="Output: measure_a measure_b runs tau tau_a tau_ap. Every pair of measures, or each measure against --against.",
    options=options,
    run=run,
)
