"""``python -m evaluation meta simulate``: planted-truth simulation: how often the truth metric comes out first."""

from __future__ import annotations

import argparse

import pandas as pd

from evaluation._argtypes import non_negative, positive_int
from evaluation.meta.commands.base import Command, Output, cube_of, scores_option, seed_of
from evaluation.report.tables import render_table


def options(p: argparse.ArgumentParser) -> None:
    scores_option(p)
    p.add_argument("--truth", nargs="+", required=True, metavar="NAME", help="planted truth measure(s)")
    p.add_argument("--noise", nargs="+", type=non_negative, default=[0.25, 0.5, 1.0, 2.0, 4.0], help="annotator noise sd in scale points")
    p.add_argument("--annotators", nargs="+", type=positive_int, default=[3], help="answers per run pair")
    p.add_argument("--topics", nargs="+", type=positive_int, help="topics drawn per simulated study (default: all)")
    p.add_argument("--n-sim", type=positive_int, default=200, help="simulated studies per setting (default 200)")
    p.add_argument("--signal", type=float, default=2.0, help="latent preference per sd of the truth difference (default 2)")
    p.add_argument("--cheaters", type=non_negative, default=0.0, help="probability that an answer is uniform random")
    p.add_argument(
        "--preferences-out", metavar="FILE", help="also write one simulated study (first truth, noise, annotators) as a preferences file"
    )


def run(args: argparse.Namespace, out: Output) -> pd.DataFrame:
    from evaluation.meta.simulate import CONVENTIONS, UserModel, planted_truth, simulate_preferences

    measures = list(dict.fromkeys([*args.truth, *args.measures])) if args.measures else None
    cube = cube_of(args, measures, min_runs=2)
    result = planted_truth(
        cube,
        args.truth,
        noise=args.noise,
        annotators=args.annotators,
        topics=args.topics or [None],
        n_sim=args.n_sim,
        signal=args.signal,
        cheaters=args.cheaters,
        rng=seed_of(args, out),
    )
    out.conventions = CONVENTIONS
    for truth, dups in result.excluded.items():
        out.notes.extend(f"truth {truth}: excluded {m}: {reason}" for m, reason in dups)
    if args.preferences_out:
        model = UserModel(noise=args.noise[0], signal=args.signal, annotators=args.annotators[0], cheaters=args.cheaters)
        votes = simulate_preferences(cube, args.truth[0], model, rng=out.seed)
        columns = ["topic", "run_a", "run_b", "value", "level", "annotator"]
        out.files.append((args.preferences_out, render_table(votes[columns], "csv" if args.preferences_out.endswith(".csv") else "tsv")))
    if args.plots:
        from evaluation.report import plots

        out.figure(args.plots, "recovery", plots.recovery_curves_figure(result.table))
    return result.table


COMMAND = Command(
    "simulate",
    help="planted-truth simulation: how often the truth metric comes out first",
    description="Output: truth noise annotators topics signal cheaters n_sim first_by_MUP first_by_tau_b mean_rank_MUP mean_rank_tau_b candidates seed.",
    options=options,
    run=run,
    seed=True,
    plots=True,
)
