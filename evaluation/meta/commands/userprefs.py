"""``python -m evaluation meta userprefs``: per run pair mean user preference, preferred side and significance."""

from __future__ import annotations

import argparse

import pandas as pd

from evaluation._argtypes import probability
from evaluation.meta.commands.base import Command, Output, weights


def options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--preferences", required=True, metavar="FILE")
    p.add_argument("--intents", metavar="FILE", help="intent weights: adds the weighted level")
    p.add_argument(
        "--test",
        choices=("t", "wilcoxon", "sign"),
        default="t",
        help="two-sided test against 0 (default one-sample t-test; exact sign-flip test where the values have no spread)",
    )
    p.add_argument(
        "--correction",
        choices=("holm", "bonferroni", "bh", "none"),
        default="holm",
        help="multiplicity correction over the run pairs of each level (default holm; bh = Benjamini-Hochberg)",
    )
    p.add_argument("--alpha", type=probability, default=0.05)


def run(args: argparse.Namespace, out: Output) -> pd.DataFrame:
    from evaluation.io.preferences import read_preferences
    from evaluation.meta.userprefs import preference_summary

    return preference_summary(
        read_preferences(args.preferences), weights(args.intents), test=args.test, alpha=args.alpha, correction=args.correction
    )


COMMAND = Command(
    "userprefs",
    help="per run pair mean preference, preferred side and significance (Chen et al. Table 1)",
    description="Output: run_a run_b level n topics mean preferred test statistic p p_adjusted correction significant. "
    "Tests run on one value per topic (the subtopic level on per-topic means); p_adjusted is corrected over the run pairs of a level.",
    options=options,
    run=run,
)
