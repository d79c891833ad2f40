"""``python -m evaluation meta agreement``: agreement of every metric with user preferences (tau, tau_b, MUP, MUP_b), intervals, best set."""

from __future__ import annotations

import argparse
import warnings

import pandas as pd

from evaluation._argtypes import non_negative_int, probability
from evaluation.exceptions import EvaluationError, EvaluationWarning
from evaluation.meta.commands.base import POWER_COLUMNS, Command, Output, read_scores, scores_option, seed_of, weights
from evaluation.report.tables import read_table


def options(p: argparse.ArgumentParser) -> None:
    scores_option(p)
    p.add_argument("--preferences", required=True, metavar="FILE", help="preferences 'topic run_a run_b value [level subtopic annotator]'")
    p.add_argument("--intents", metavar="FILE", help="intent weights, needed by --level weighted")
    p.add_argument(
        "--level",
        choices=("topic", "weighted", "subtopic"),
        default="topic",
        help="which user preference (docs/metrics.md#weighted-topic-preference); subtopic needs scores under topic '<topic>/<subtopic>'",
    )
    p.add_argument(
        "--bootstrap",
        type=non_negative_int,
        default=0,
        metavar="B",
        help="topic-bootstrap resamples for --best-set and --interval percentile (default 0: none)",
    )
    p.add_argument(
        "--interval",
        choices=("score", "percentile", "none"),
        default="score",
        help="confidence intervals: topic-jackknife score interval (default), cluster-bootstrap percentile (needs --bootstrap B) "
        "or none; docs/meta.md#confidence-intervals",
    )
    p.add_argument("--confidence", type=probability, default=0.95, help="interval level (default 0.95)")
    p.add_argument(
        "--best-set",
        action="store_true",
        help="add columns p_best and in_best_set: the metrics whose MUP is not significantly below another's "
        "(paired topic-bootstrap max-t test at level --alpha; needs --bootstrap B; docs/meta.md#best-set)",
    )
    p.add_argument("--alpha", type=probability, default=0.05, help="level of the best-set test (default 0.05)")
    p.add_argument(
        "--tau-mode",
        choices=("pairs", "scipy"),
        default="pairs",
        help="tau/tau_b from per-pair signs (default) or scipy.stats.kendalltau(d, p)",
    )
    p.add_argument("--power", metavar="FILE", help="a discpower output to add to the bar chart")


def run(args: argparse.Namespace, out: Output) -> pd.DataFrame:
    from evaluation.io.preferences import read_preferences
    from evaluation.meta.agreement import CONVENTIONS, agreement_with_users
    from evaluation.meta.intervals import CONVENTION as INTERVAL_CONVENTION
    from evaluation.meta.levels import preference_items

    if args.power and not args.plots:
        raise EvaluationError("--power adds bars to the figures: it needs --plots DIR")
    if args.level == "weighted" and not args.intents:
        raise EvaluationError("--level weighted needs --intents FILE")
    power = read_table(args.power, POWER_COLUMNS) if args.power else None
    items = preference_items(read_preferences(args.preferences), args.level, weights(args.intents))
    if args.best_set and not args.bootstrap:
        raise EvaluationError("--best-set needs --bootstrap B (e.g. --bootstrap 1000)")
    if args.interval == "percentile" and not args.bootstrap:
        raise EvaluationError("--interval percentile needs --bootstrap B (e.g. --bootstrap 1000)")
    seed = seed_of(args, out) if args.bootstrap else None
    scores = read_scores(args.scores)
    result = agreement_with_users(
        items,
        scores,
        args.measures,
        B=args.bootstrap,
        rng=seed,
        confidence=args.confidence,
        tau_mode=args.tau_mode,
        interval=args.interval,
    )
    out.conventions = {**CONVENTIONS, "interval": INTERVAL_CONVENTION[args.interval]}
    table = result.table
    if args.best_set:
        from evaluation.meta.bestset import CONVENTION, MIN_TOPICS, best_set_with_users, with_best_set

        chosen = best_set_with_users(items, scores, args.measures, B=args.bootstrap, rng=seed, alpha=args.alpha)
        out.conventions = {**out.conventions, "best_set": CONVENTION}
        if not chosen.claim:
            warnings.warn(
                f"best set: {chosen.n_topics} topics, fewer than {MIN_TOPICS}: no claim, in_best_set is empty",
                EvaluationWarning,
                stacklevel=1,
            )
        table = with_best_set(table, chosen)
    if args.plots:
        from evaluation.report import plots

        out.figure(args.plots, "agreement_heatmaps", plots.agreement_heatmaps_figure(result.table))
        out.figure(args.plots, "metric_bars", plots.metric_bars_figure(result.table, power=power))
    return table


COMMAND = Command(
    "agreement",
    help="tau, tau_b, MUP, MUP_b of each metric with user preferences (docs/metrics.md#agreement-with-users)",
    description="Agreement of every metric with user preferences over run pairs. Output: measure statistic subset n value ci_low ci_high.",
    options=options,
    run=run,
    seed=True,
    plots=True,
)
