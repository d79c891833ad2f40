"""``python -m evaluation meta intuitiveness``: concordance test of metric pairs against gold-standard measures."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

import pandas as pd

from evaluation.exceptions import EvaluationError
from evaluation.meta.commands.base import AGREEMENT_COLUMNS, DEFAULT_GOLD, Command, Output, read_scores, scores_option
from evaluation.report.tables import concordance_matrix, read_table, render_table


def options(p: argparse.ArgumentParser) -> None:
    scores_option(p)
    p.add_argument(
        "--gold", nargs="+", metavar="NAME", help="gold-standard measures (default: the I-rec, Prec, PMP and Ef-P measures in the scores)"
    )
    p.add_argument(
        "--gs-tie", choices=("both", "neither"), default="both", help="a gold-standard tie agrees with both metrics (default) or neither"
    )
    p.add_argument("--matrix-out", metavar="FILE", help="Chen et al. Table 2 layout 'c1/c2 (N)' per gold standard")
    p.add_argument("--agreement", metavar="FILE", help="an agreement output: correlate the MUP order with the intuitiveness order")
    p.add_argument("--ordering-out", metavar="FILE", help="with --agreement: write gold measures tau_b p here")


def gold_names(args: argparse.Namespace, available: Sequence[str]) -> list[str]:
    if args.gold:
        return list(args.gold)
    gold = [m for m in available if m.split("@")[0].split("(")[0].rstrip("'") in DEFAULT_GOLD]
    if not gold:
        raise EvaluationError(f"no gold-standard measure ({', '.join(DEFAULT_GOLD)}) in the scores; name them with --gold")
    return gold


def mup_overall(path: str) -> pd.Series:
    """MUP per measure over all pairs from an agreement output (validated before any work)."""
    table = read_table(path, AGREEMENT_COLUMNS)
    rows = table[(table["statistic"] == "MUP") & (table["subset"] == "all")]
    if rows.empty:
        raise EvaluationError(f"{path}: no MUP rows for subset 'all' (is it an agreement output?)")
    return rows.set_index("measure")["value"].astype(float)


def run(args: argparse.Namespace, out: Output) -> pd.DataFrame:
    from evaluation.meta.intuitiveness import CONVENTIONS, cell_order, concordance_test, intuitiveness_scores, ordering_agreement

    if args.ordering_out and not args.agreement:
        raise EvaluationError("--ordering-out needs --agreement FILE")
    mup = mup_overall(args.agreement) if args.agreement else None
    out.conventions = CONVENTIONS
    scores = read_scores(args.scores)
    available = list(dict.fromkeys(scores["measure"]))
    gold = gold_names(args, available)
    candidates = [m for m in (args.measures or available) if m not in gold]
    from evaluation.meta._matrix import score_cube

    cube = score_cube(scores, [*candidates, *gold], min_runs=2)
    table = concordance_test(cube, gold, candidates, gs_tie=args.gs_tie)
    if args.matrix_out:
        blocks = []
        for g in dict.fromkeys(table["gold"]):
            matrix = concordance_matrix(table, g, candidates)
            matrix.insert(0, "measure", matrix.index)
            matrix.insert(0, "gold", g)
            blocks.append(matrix)
        out.files.append((args.matrix_out, render_table(pd.concat(blocks, ignore_index=True), args.format)))
    if mup is not None:
        ordering = ordering_agreement(intuitiveness_scores(table), mup, table)
        table = cell_order(table, mup)
        if args.ordering_out:
            out.files.append((args.ordering_out, render_table(ordering, args.format)))
        else:
            out.notes.extend(
                f"{r.gold}: MUP order vs intuitiveness order: cell-wise (Chen et al.) ({r.agree} - {r.disagree}) / {r.cells} = "
                f"{r.tau_cells:.4f}; tau_b on per-metric mean concordances (ours) = {r.tau_b:.4f} over {r.measures} measures"
                for r in ordering.itertuples()
            )
    return table


COMMAND = Command(
    "intuitiveness",
    help="concordance test of metric pairs against gold standards (docs/metrics.md#intuitiveness)",
    description="Output: gold measure_1 measure_2 topics disagreements concordance_1 concordance_2 a b p ('all' = every gold at once); "
    "with --agreement also mup_1 mup_2 order_vs_mup (1: the cell's concordances are ordered as the MUPs).",
    options=options,
    run=run,
)
