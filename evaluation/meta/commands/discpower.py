"""``python -m evaluation meta discpower``: discriminative power by paired bootstrap or randomised Tukey HSD."""

from __future__ import annotations

import argparse

import pandas as pd

from evaluation.meta.commands.base import Command, Output, cube_of, scores_option, seed_of, test_options
from evaluation.report.tables import render_table


def options(p: argparse.ArgumentParser) -> None:
    scores_option(p)
    test_options(p)
    p.add_argument("--pairs-out", metavar="FILE", help="also write every pair's ASL: measure run_a run_b diff asl significant")


def run(args: argparse.Namespace, out: Output) -> pd.DataFrame:
    from evaluation.meta.significance import CONVENTIONS, discriminative_power

    cube = cube_of(args, min_runs=2)
    result = discriminative_power(cube, test=args.test, B=args.B, alpha=args.alpha, rng=seed_of(args, out))
    out.conventions = CONVENTIONS
    if args.pairs_out:
        out.files.append((args.pairs_out, render_table(result.pairs, args.format)))
    if args.plots:
        from evaluation.report import plots

        out.figure(args.plots, "asl_curves", plots.asl_curves_figure(result.pairs, alpha=args.alpha))
    return result.summary


COMMAND = Command(
    "discpower",
    help="discriminative power by paired bootstrap or randomised Tukey HSD (docs/metrics.md#paired-bootstrap)",
    description="Output per metric: measure test pairs significant power delta_required B alpha seed.",
    options=options,
    run=run,
    seed=True,
    plots=True,
)
