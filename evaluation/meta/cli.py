"""``python -m evaluation meta <command> ...``: meta-evaluation from the command line.

Every command reads per-topic scores as written by ``python -m evaluation score --per-topic``
(``run topic measure value``; rows with topic ``all`` are ignored) or, for ``dss``, ``loo`` and
``simplified``, a collection and runs, and writes one tidy table (``-o FILE``, default standard
output; ``--format tsv|csv|json``); with ``-o FILE`` the settings that produced it go to
``FILE.settings.json`` (:mod:`evaluation.meta.provenance`). Randomised commands take ``--seed``
(without it a seed is drawn) and print the seed used on standard error. ``--plots DIR`` writes PNG
and SVG figures. Errors print one line on standard error and return 2; companion input files are
validated before any work, and output files and figures are written atomically only after all
work succeeded.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import pandas as pd

from evaluation._argtypes import OneLineParser, UsageError, non_negative_int, positive_int, print_warnings
from evaluation.exceptions import EvaluationError, EvaluationWarning
from evaluation.io.scores import write_atomic
from evaluation.meta.provenance import draw_seed, render_settings, settings_path, settings_record
from evaluation.report.tables import FORMATS, concordance_matrix, read_table, render_table

DEFAULT_GOLD = ("I-rec", "Prec", "PMP", "Ef-P")
# Options naming input files (recorded as inputs in the settings sidecar).
INPUT_OPTIONS = ("scores", "preferences", "intents", "power", "agreement", "against", "qrels", "run", "pool_run", "teams", "pool_depths")
# Options naming output files: their directories must exist before any work is done.
OUTPUT_OPTIONS = ("output", "pairs_out", "matrix_out", "ordering_out", "preferences_out")
# Columns a companion input must have: a discpower summary, an agreement table.
POWER_COLUMNS = ("measure", "power")
AGREEMENT_COLUMNS = ("measure", "statistic", "subset", "value")


# ----------------------------------------------------------------------------- arguments
def _probability(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number in (0, 1), got {text!r}") from None
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"expected a number in (0, 1), got {text!r}")
    return value


def _non_negative(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number >= 0, got {text!r}") from None
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"expected a number >= 0, got {text!r}")
    return value


def _common(parser: argparse.ArgumentParser, *, seed: bool = False, plots: bool = False) -> None:
    out = parser.add_argument_group("output")
    out.add_argument("-o", "--output", metavar="FILE", help="output file (default: standard output); its settings go to FILE.settings.json")
    out.add_argument("--format", choices=FORMATS, default="tsv", help="tidy table format (default tsv)")
    if seed:
        out.add_argument("--seed", type=non_negative_int, help="random seed (default: drawn and reported on stderr)")
    if plots:
        out.add_argument("--plots", metavar="DIR", help="write PNG and SVG figures into DIR")


def _scores_option(parser: argparse.ArgumentParser, measures: bool = True) -> None:
    parser.add_argument("--scores", required=True, metavar="FILE", help="per-topic scores 'run topic measure value' (score --per-topic)")
    if measures:
        parser.add_argument("--measures", nargs="+", metavar="NAME", help="measures to analyse (default: all in the scores file)")


def _collection_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--qrels", required=True, metavar="FILE", help="diversity qrels (TREC or NTCIR Dqrels)")
    parser.add_argument("--intents", metavar="FILE", help="intent probabilities 'topic intent prob [inf|nav]'")
    parser.add_argument("--measures", nargs="+", required=True, metavar="NAME", help="measures, e.g. alpha-nDCG@10 D#-nDCG@10")


def _test_options(parser: argparse.ArgumentParser, default: str = "bootstrap") -> None:
    parser.add_argument(
        "--test",
        choices=("bootstrap", "tukey"),
        default=default,
        help=f"paired bootstrap (docs/metrics.md#paired-bootstrap) or randomised Tukey HSD (docs/metrics.md#randomised-tukey-hsd); default {default}",
    )
    parser.add_argument("--B", type=positive_int, default=1000, help="resamples (default 1000)")
    parser.add_argument("--alpha", type=_probability, default=0.05, help="significance level (default 0.05)")


def build_parser() -> argparse.ArgumentParser:
    """The ``meta`` parser: one ``_add_<command>`` function per subcommand, in ``--help`` order."""
    parser = OneLineParser(
        prog="python -m evaluation meta",
        description="Meta-evaluation of diversity metrics (definitions: docs/metrics.md#meta-evaluation). See docs/meta.md.",
    )
    sub = parser.add_subparsers(dest="command", required=True, parser_class=OneLineParser)
    for add in (
        _add_agreement,
        _add_userprefs,
        _add_discpower,
        _add_intuitiveness,
        _add_rankcorr,
        _add_unanimity,
        _add_dss,
        _add_loo,
        _add_reduce,
        _add_simplified,
        _add_simulate,
    ):
        add(sub)
    return parser


def _add_agreement(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "agreement",
        help="tau, tau_b, MUP, MUP_b of each metric with user preferences (docs/metrics.md#agreement-with-users)",
        description="Agreement of every metric with user preferences over run pairs. Output: measure statistic subset n value ci_low ci_high.",
    )
    _scores_option(p)
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
    p.add_argument("--confidence", type=_probability, default=0.95, help="interval level (default 0.95)")
    p.add_argument(
        "--best-set",
        action="store_true",
        help="add columns p_best and in_best_set: the metrics whose MUP is not significantly below another's "
        "(paired topic-bootstrap max-t test at level --alpha; needs --bootstrap B; docs/meta.md#best-set)",
    )
    p.add_argument("--alpha", type=_probability, default=0.05, help="level of the best-set test (default 0.05)")
    p.add_argument(
        "--tau-mode",
        choices=("pairs", "scipy"),
        default="pairs",
        help="tau/tau_b from per-pair signs (default) or scipy.stats.kendalltau(d, p)",
    )
    p.add_argument("--power", metavar="FILE", help="a discpower output to add to the bar chart")
    _common(p, seed=True, plots=True)


def _add_userprefs(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "userprefs",
        help="per run pair mean preference, preferred side and significance (Chen et al. Table 1)",
        description="Output: run_a run_b level n topics mean preferred test statistic p p_adjusted correction significant. "
        "Tests run on one value per topic (the subtopic level on per-topic means); p_adjusted is corrected over the run pairs of a level.",
    )
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
    p.add_argument("--alpha", type=_probability, default=0.05)
    _common(p)


def _add_discpower(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "discpower",
        help="discriminative power by paired bootstrap or randomised Tukey HSD (docs/metrics.md#paired-bootstrap)",
        description="Output per metric: measure test pairs significant power delta_required B alpha seed.",
    )
    _scores_option(p)
    _test_options(p)
    p.add_argument("--pairs-out", metavar="FILE", help="also write every pair's ASL: measure run_a run_b diff asl significant")
    _common(p, seed=True, plots=True)


def _add_intuitiveness(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "intuitiveness",
        help="concordance test of metric pairs against gold standards (docs/metrics.md#intuitiveness)",
        description="Output: gold measure_1 measure_2 topics disagreements concordance_1 concordance_2 a b p ('all' = every gold at once); "
        "with --agreement also mup_1 mup_2 order_vs_mup (1: the cell's concordances are ordered as the MUPs).",
    )
    _scores_option(p)
    p.add_argument(
        "--gold", nargs="+", metavar="NAME", help="gold-standard measures (default: the I-rec, Prec, PMP and Ef-P measures in the scores)"
    )
    p.add_argument(
        "--gs-tie", choices=("both", "neither"), default="both", help="a gold-standard tie agrees with both metrics (default) or neither"
    )
    p.add_argument("--matrix-out", metavar="FILE", help="Chen et al. Table 2 layout 'c1/c2 (N)' per gold standard")
    p.add_argument("--agreement", metavar="FILE", help="an agreement output: correlate the MUP order with the intuitiveness order")
    p.add_argument("--ordering-out", metavar="FILE", help="with --agreement: write gold measures tau_b p here")
    _common(p)


def _add_rankcorr(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "rankcorr",
        help="Kendall tau (tau_b), tau_a and symmetric tau_ap of run rankings (docs/metrics.md#rank-correlation)",
        description="Output: measure_a measure_b runs tau tau_a tau_ap. Every pair of measures, or each measure against --against.",
    )
    _scores_option(p)
    p.add_argument("--against", metavar="FILE", help="second per-topic score table (e.g. reduced or simplified collection)")
    _common(p)


def _add_unanimity(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "unanimity",
        help="metric unanimity MU of each metric against all others (docs/metrics.md#metric-unanimity)",
        description="Output: measure MU P_m P_M P_mM pairs.",
    )
    _scores_option(p)
    p.add_argument("--strict", action="store_true", help="'>' instead of '>=' in the unanimity of the other metrics")
    _common(p)


def _add_dss(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "dss",
        help="document selection sensitivity on random permutations of the relevant documents (docs/metrics.md#document-selection-sensitivity)",
        description="Output: measure topic dss mean sd n_perm seed; topic 'all:<avg|geom|DD>' rows aggregate.",
    )
    _collection_options(p)
    p.add_argument("--n-perm", type=positive_int, default=1000, help="permutations per topic (default 1000)")
    p.add_argument("--keep-grades", action="store_true", help="keep grades and weights (default: binary relevance, uniform weights)")
    _common(p, seed=True)


def _add_loo(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "loo",
        help="leave-one-team-out reusability, raw vs condensed lists (docs/metrics.md#leave-one-out-reusability)",
        description="Output: team run measure list full loo diff abs_error rank_full rank_loo rel_error; team 'all' = means.",
    )
    _collection_options(p)
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
    _common(p)


def _add_reduce(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "reduce",
        help="topic set reduction: discriminative power and tau/tau_ap on nested subsets (docs/metrics.md#topic-set-reduction)",
        description="Output: topics measure pairs significant power tau tau_ap test B alpha seed.",
    )
    _scores_option(p)
    p.add_argument(
        "--reference", required=True, metavar="NAME", help="measure whose per-topic variance orders the removal (e.g. D#-nDCG@10)"
    )
    p.add_argument("--sizes", nargs="+", type=positive_int, required=True, metavar="N", help="reduced topic-set sizes, e.g. 30 10")
    _test_options(p, default="tukey")
    _common(p, seed=True)


def _add_simplified(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "simplified",
        help="simplified collections (binary grades, uniform/linear weights) vs the original (docs/metrics.md#simplified-collections)",
        description="Output: collection measure pairs significant power tau tau_ap test B alpha seed.",
    )
    _collection_options(p)
    p.add_argument("--run", action="append", required=True, metavar="FILE", help="run file (repeatable)")
    _test_options(p)
    _common(p, seed=True)


def _add_simulate(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "simulate",
        help="planted-truth simulation: how often the truth metric comes out first",
        description="Output: truth noise annotators topics signal cheaters n_sim first_by_MUP first_by_tau_b mean_rank_MUP mean_rank_tau_b candidates seed.",
    )
    _scores_option(p)
    p.add_argument("--truth", nargs="+", required=True, metavar="NAME", help="planted truth measure(s)")
    p.add_argument("--noise", nargs="+", type=_non_negative, default=[0.25, 0.5, 1.0, 2.0, 4.0], help="annotator noise sd in scale points")
    p.add_argument("--annotators", nargs="+", type=positive_int, default=[3], help="answers per run pair")
    p.add_argument("--topics", nargs="+", type=positive_int, help="topics drawn per simulated study (default: all)")
    p.add_argument("--n-sim", type=positive_int, default=200, help="simulated studies per setting (default 200)")
    p.add_argument("--signal", type=float, default=2.0, help="latent preference per sd of the truth difference (default 2)")
    p.add_argument("--cheaters", type=_non_negative, default=0.0, help="probability that an answer is uniform random")
    p.add_argument(
        "--preferences-out", metavar="FILE", help="also write one simulated study (first truth, noise, annotators) as a preferences file"
    )
    _common(p, seed=True, plots=True)


# ------------------------------------------------------------------------------ commands
class _Output:
    """Everything a command produces, written only after the whole command succeeded."""

    def __init__(self) -> None:
        self.files: list[tuple[str, str]] = []
        self.figures: list[tuple[Path, bytes]] = []
        self.notes: list[str] = []
        self.seed: int | None = None
        self.seed_drawn = False
        self.conventions: Mapping[str, object] = {}

    def figure(self, directory: str, stem: str, fig) -> None:
        """Render ``fig`` now (PNG and SVG in memory); it is written with the other outputs."""
        from evaluation.report.plots import render_figure

        self.figures.extend(render_figure(fig, directory, stem))


def _read_scores(path: str) -> pd.DataFrame:
    from evaluation.io.scores import read_scores

    return read_scores(path)


def _cube(args: argparse.Namespace, measures: Sequence[str] | None = None, **kwargs):
    from evaluation.meta._matrix import score_cube

    return score_cube(_read_scores(args.scores), measures if measures is not None else args.measures, **kwargs)


def _weights(path: str | None):
    if not path:
        return None
    from evaluation.io.intents import read_intents
    from evaluation.meta.levels import intent_weights

    return intent_weights(read_intents(path))


def _seed(args: argparse.Namespace, out: _Output) -> int:
    """The seed this run uses (``--seed``, else a fresh one), recorded for stderr and the settings."""
    out.seed_drawn = args.seed is None
    out.seed = draw_seed() if out.seed_drawn else args.seed
    return out.seed


def _agreement(args: argparse.Namespace, out: _Output) -> pd.DataFrame:
    from evaluation.io.preferences import read_preferences
    from evaluation.meta.agreement import CONVENTIONS, agreement_with_users
    from evaluation.meta.intervals import CONVENTION as INTERVAL_CONVENTION
    from evaluation.meta.levels import preference_items

    if args.power and not args.plots:
        raise EvaluationError("--power adds bars to the figures: it needs --plots DIR")
    if args.level == "weighted" and not args.intents:
        raise EvaluationError("--level weighted needs --intents FILE")
    power = read_table(args.power, POWER_COLUMNS) if args.power else None
    items = preference_items(read_preferences(args.preferences), args.level, _weights(args.intents))
    if args.best_set and not args.bootstrap:
        raise EvaluationError("--best-set needs --bootstrap B (e.g. --bootstrap 1000)")
    if args.interval == "percentile" and not args.bootstrap:
        raise EvaluationError("--interval percentile needs --bootstrap B (e.g. --bootstrap 1000)")
    seed = _seed(args, out) if args.bootstrap else None
    scores = _read_scores(args.scores)
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


def _userprefs(args: argparse.Namespace, out: _Output) -> pd.DataFrame:
    from evaluation.io.preferences import read_preferences
    from evaluation.meta.userprefs import preference_summary

    return preference_summary(
        read_preferences(args.preferences), _weights(args.intents), test=args.test, alpha=args.alpha, correction=args.correction
    )


def _discpower(args: argparse.Namespace, out: _Output) -> pd.DataFrame:
    from evaluation.meta.significance import CONVENTIONS, discriminative_power

    cube = _cube(args, min_runs=2)
    result = discriminative_power(cube, test=args.test, B=args.B, alpha=args.alpha, rng=_seed(args, out))
    out.conventions = CONVENTIONS
    if args.pairs_out:
        out.files.append((args.pairs_out, render_table(result.pairs, args.format)))
    if args.plots:
        from evaluation.report import plots

        out.figure(args.plots, "asl_curves", plots.asl_curves_figure(result.pairs, alpha=args.alpha))
    return result.summary


def _gold_names(args: argparse.Namespace, available: Sequence[str]) -> list[str]:
    if args.gold:
        return list(args.gold)
    gold = [m for m in available if m.split("@")[0].split("(")[0].rstrip("'") in DEFAULT_GOLD]
    if not gold:
        raise EvaluationError(f"no gold-standard measure ({', '.join(DEFAULT_GOLD)}) in the scores; name them with --gold")
    return gold


def _mup_overall(path: str) -> pd.Series:
    """MUP per measure over all pairs from an agreement output (validated before any work)."""
    table = read_table(path, AGREEMENT_COLUMNS)
    rows = table[(table["statistic"] == "MUP") & (table["subset"] == "all")]
    if rows.empty:
        raise EvaluationError(f"{path}: no MUP rows for subset 'all' (is it an agreement output?)")
    return rows.set_index("measure")["value"].astype(float)


def _intuitiveness(args: argparse.Namespace, out: _Output) -> pd.DataFrame:
    from evaluation.meta.intuitiveness import CONVENTIONS, cell_order, concordance_test, intuitiveness_scores, ordering_agreement

    if args.ordering_out and not args.agreement:
        raise EvaluationError("--ordering-out needs --agreement FILE")
    mup = _mup_overall(args.agreement) if args.agreement else None
    out.conventions = CONVENTIONS
    scores = _read_scores(args.scores)
    available = list(dict.fromkeys(scores["measure"]))
    gold = _gold_names(args, available)
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


def _rankcorr(args: argparse.Namespace, out: _Output) -> pd.DataFrame:
    from evaluation.meta.correlation import rankcorr_table

    cube = _cube(args, min_runs=2)
    other = None
    if args.against:
        from evaluation.meta._matrix import score_cube

        other = score_cube(_read_scores(args.against), cube.measures, runs=cube.runs)
    return rankcorr_table(cube, other)


def _unanimity(args: argparse.Namespace, out: _Output) -> pd.DataFrame:
    from evaluation.meta.unanimity import metric_unanimity

    return metric_unanimity(_cube(args, min_runs=2), strict=args.strict)


def _load(args: argparse.Namespace):
    from evaluation.loading import load_collection

    return load_collection(args.qrels, args.intents)


def _dss(args: argparse.Namespace, out: _Output) -> pd.DataFrame:
    from evaluation.meta.dss import document_selection_sensitivity

    collection = _load(args)
    seed = _seed(args, out)
    result = document_selection_sensitivity(collection, args.measures, n_perm=args.n_perm, rng=seed, keep_grades=args.keep_grades)
    return result.table.assign(seed=result.seed)


def _loo(args: argparse.Namespace, out: _Output) -> pd.DataFrame:
    from evaluation.io.runs import read_run
    from evaluation.meta.reusability import leave_one_out, read_pool_depths, read_teams

    runs = [read_run(path, order=args.order) for path in args.run]
    pool = [read_run(path, order=args.order) for path in args.pool_run]
    depth = read_pool_depths(args.pool_depths) if args.pool_depths else args.pool_depth
    return leave_one_out(_load(args), runs, read_teams(args.teams), args.measures, official=args.official, pool_runs=pool, depth=depth)


def _reduce(args: argparse.Namespace, out: _Output) -> pd.DataFrame:
    from evaluation.meta.reduction import topic_set_reduction
    from evaluation.meta.significance import CONVENTIONS

    measures = list(dict.fromkeys([args.reference, *(args.measures or [])])) if args.measures else None
    cube = _cube(args, measures, min_runs=2)
    out.conventions = CONVENTIONS
    return topic_set_reduction(cube, args.reference, args.sizes, test=args.test, B=args.B, alpha=args.alpha, rng=_seed(args, out))


def _simplified(args: argparse.Namespace, out: _Output) -> pd.DataFrame:
    from evaluation.io.runs import read_run
    from evaluation.meta.significance import CONVENTIONS
    from evaluation.meta.simplified import simplified_comparison

    runs = [read_run(path) for path in args.run]
    collection = _load(args)
    out.conventions = CONVENTIONS
    return simplified_comparison(collection, runs, args.measures, test=args.test, B=args.B, alpha=args.alpha, rng=_seed(args, out))


def _simulate(args: argparse.Namespace, out: _Output) -> pd.DataFrame:
    from evaluation.meta.simulate import CONVENTIONS, UserModel, planted_truth, simulate_preferences

    measures = list(dict.fromkeys([*args.truth, *args.measures])) if args.measures else None
    cube = _cube(args, measures, min_runs=2)
    result = planted_truth(
        cube,
        args.truth,
        noise=args.noise,
        annotators=args.annotators,
        topics=args.topics or [None],
        n_sim=args.n_sim,
        signal=args.signal,
        cheaters=args.cheaters,
        rng=_seed(args, out),
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


COMMANDS: dict[str, Callable[[argparse.Namespace, _Output], pd.DataFrame]] = {
    "agreement": _agreement,
    "userprefs": _userprefs,
    "discpower": _discpower,
    "intuitiveness": _intuitiveness,
    "rankcorr": _rankcorr,
    "unanimity": _unanimity,
    "dss": _dss,
    "loo": _loo,
    "reduce": _reduce,
    "simplified": _simplified,
    "simulate": _simulate,
}


def main(argv: list[str] | None = None) -> int:
    """Run one meta command; returns 0 on success, 2 on bad input (one line on stderr)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    out = _Output()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            args = build_parser().parse_args(argv)
            _check_outputs(args)
            table = COMMANDS[args.command](args, out)
            text = render_table(table, args.format)
            if args.output:
                out.files.append((settings_path(args.output), render_settings(_settings(args, out))))
            _write(out, args.output, text)
        except SystemExit as exc:  # --help
            return int(exc.code or 0)
        except BrokenPipeError:  # pragma: no cover - e.g. piped into head
            return 0
        except (EvaluationError, ValueError, UsageError, OSError) as exc:
            print_warnings(caught)
            print(f"error: {_one_line(exc)}", file=sys.stderr)
            return 2
    print_warnings(caught)
    if out.seed is not None:
        hint = f" (drawn; pass --seed {out.seed} to reproduce)" if out.seed_drawn else ""
        print(f"note: seed={out.seed}{hint}", file=sys.stderr)
    for note in out.notes:
        print(f"note: {note}", file=sys.stderr)
    return 0


def _check_outputs(args: argparse.Namespace) -> None:
    """Fail before any work when an output cannot be written (missing directory, --plots a file)."""
    given = vars(args)
    for name in OUTPUT_OPTIONS:
        path = given.get(name)
        if path and not Path(path).resolve().parent.is_dir():
            raise EvaluationError(f"{path}: directory {Path(path).parent} does not exist")
    plots = given.get("plots")
    if plots and Path(plots).exists() and not Path(plots).is_dir():
        raise EvaluationError(f"{plots}: --plots needs a directory, this is a file")


def _settings(args: argparse.Namespace, out: _Output) -> dict[str, object]:
    """The settings sidecar of this run (docs/metrics.md#agreement-with-users, docs/metrics.md#meta-evaluation): inputs, options, seed, conventions."""
    given = vars(args)
    inputs = {name: given[name] for name in INPUT_OPTIONS if given.get(name)}
    options = {name: value for name, value in given.items() if name not in (*INPUT_OPTIONS, "command", "seed")}
    return settings_record(args.command, inputs=inputs, options=options, seed=out.seed, conventions=out.conventions)


def _write(out: _Output, output: str | None, text: str) -> None:
    """Write companion outputs, figures, then the table (standard output when ``output`` is None)."""
    from evaluation.report.plots import write_files

    for path, content in out.files:
        write_atomic(path, content)
    write_files(out.figures)
    if output:
        write_atomic(output, text)
    else:
        sys.stdout.write(text)


def _one_line(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    if isinstance(exc, OSError) and exc.filename:
        text = f"{exc.filename}: {exc.strerror or text}"
    return " ".join(text.split())


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
