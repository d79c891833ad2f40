"""``diversity-eval compare``: paired significance tests between run files (:func:`evaluation.compare.compare`)."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from evaluation._argtypes import measure_names, non_negative_int, positive_int, probability
from evaluation.collection import Collection
from evaluation.compare import CORRECTIONS, TESTS, compare
from evaluation.io.inputs import run_paths
from evaluation.io.runs import read_run


def add_compare_parser(sub, add_collection_options: Callable, add_run_options: Callable) -> None:
    """The ``compare`` sub-command's parser."""
    parser = sub.add_parser(
        "compare",
        help="paired significance tests between runs (t, Wilcoxon, randomisation, bootstrap; Holm/Bonferroni/BH)",
        description="Compare runs pairwise, or each with --baseline: means, diff = mean_b - mean_a (positive: run_b scores "
        "higher; with --baseline, run_a is the baseline), raw and adjusted p-values (one family per measure), Cohen's d_z.",
    )
    add_collection_options(parser)
    add_run_options(parser)
    parser.add_argument(
        "--baseline",
        metavar="RUN",
        help="compare every run with this one: its name (the run file's tag column) or its run file",
    )
    parser.add_argument("--test", choices=TESTS, default="t", help="paired test (default: t)")
    parser.add_argument("--correction", choices=CORRECTIONS, default="holm", help="multiple-comparison correction per measure")
    parser.add_argument("--alpha", type=probability, default=0.05, help="level of the 'significant' column (adjusted p <= alpha)")
    parser.add_argument("--permutations", type=positive_int, default=10_000, help="randomisation and bootstrap draws")
    parser.add_argument("--seed", type=non_negative_int, default=0, help="random seed of randomisation and bootstrap")
    parser.add_argument("--format", choices=("tsv", "csv", "json", "markdown", "latex"), default="tsv")
    parser.add_argument("-o", "--output", help="output file (default: standard output)")


def run_compare(args: argparse.Namespace, collection: Collection, emit: Callable[[str, str | None], None]) -> int:
    import pandas as pd

    from evaluation.cli import scoring_options
    from evaluation.report.tables import render_table, to_latex, to_markdown

    paths = run_paths(args.run)
    runs = [read_run(path, order=args.order, on_duplicate_doc=args.on_duplicate_doc) for path in paths]
    options = scoring_options(args)
    options.pop("progress")
    result = compare(
        collection,
        runs,
        measure_names(args.measures),
        baseline=args.baseline,  # a name or a run file, resolved by compare()
        test=args.test,
        correction=None if args.correction == "none" else args.correction,
        alpha=args.alpha,
        permutations=args.permutations,
        rng=args.seed,
        **options,
    )
    if args.format == "markdown":
        text = to_markdown(result)
    elif args.format == "latex":
        text = to_latex(result)
    else:  # as every table of the command line: JSON at full precision (pandas' to_json wrote p 1e-13 as 0.0 and an
        # infinite effect size as null), CSV cells escaped for spreadsheets (docs/data-dictionary.md#spreadsheet-safe-csv)
        text = render_table(pd.DataFrame(result), args.format)
    emit(text, args.output)
    return 0
