"""Command line: ``diversity-eval`` (or ``python -m evaluation``) ``{score,compare,metrics,difficulty,meta} ...``.

Errors print one line on stderr (``file:line: reason`` for bad files) and exit with status 2;
output files are written atomically, so a failed run leaves none behind.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Sequence

import pandas as pd

from evaluation import __version__
from evaluation._argtypes import (
    OneLineParser,
    UsageError,
    command_line_wording,
    measure_names,
    positive_int,
    print_warnings,
    program_name,
)
from evaluation.collection import Collection
from evaluation.engine import evaluate
from evaluation.exceptions import EvaluationError
from evaluation.io.inputs import run_paths
from evaluation.io.runs import ORDERS, read_run
from evaluation.io.scores import FORMATS, render_scores, write_atomic
from evaluation.loading import load_collection
from evaluation.metrics import REGISTRY


def _add_collection_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("collection")
    group.add_argument(
        "--qrels", required=True, help="diversity qrels: TREC 'topic subtopic docid grade' or NTCIR Dqrels 'topic intent docid Lk'"
    )
    group.add_argument("--intents", help="intent probabilities 'topic intent prob [inf|nav]' (NTCIR Iprob/DINprob)")
    group.add_argument(
        "--topics",
        help="topic file: TREC topic XML, NTCIR topic XML (<query><qid>) or NTCIR tab-separated (topic TAB query; topic TAB intent TAB text)",
    )
    group.add_argument("--keep-intents", type=positive_int, metavar="K", help="keep the K heaviest intents per topic, renormalised")
    group.add_argument(
        "--weights",
        choices=("original", "uniform", "linear"),
        default="original",
        help="intent weights (simplified collections, docs/metrics.md#simplified-collections)",
    )
    group.add_argument("--binary", action="store_true", help="binarise grades (g >= 1 -> 1)")
    group.add_argument(
        "--uniform-over", choices=("relevant", "listed"), default="relevant", help="intents sharing uniform weights when none are given"
    )
    group.add_argument("--on-duplicate-qrel", choices=("error", "max"), default="error", help="a repeated (topic, intent, doc) line")


def _add_run_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--run",
        action="extend",
        nargs="+",
        required=True,
        metavar="FILE",
        help="TREC run files 'topic Q0 docid rank score tag' (several after one --run, e.g. a shell glob runs/*.run, or a "
        "directory of run files; repeatable)",
    )
    parser.add_argument(
        "--measures",
        nargs="+",
        required=True,
        metavar="NAME",
        help="e.g. alpha-nDCG@10 'D#-nDCG(gamma=0.5)@10' \"D-nDCG'@5\" RBU, or comma-separated alpha-nDCG@10,ERR-IA@20; "
        "'all' = every metric at cutoffs 5, 10, 20",
    )
    parser.add_argument(
        "--order",
        choices=ORDERS,
        default="score",
        help="how run lines become a ranking (docs/metrics.md#runs; default score desc, docid desc)",
    )
    parser.add_argument(
        "--on-duplicate-doc", choices=("keep_first", "error"), default="keep_first", help="a docid listed twice for a topic"
    )
    parser.add_argument(
        "--empty-topic", choices=("nan", "zero"), default="nan", help="topics without relevant documents: NaN and excluded (default) or 0"
    )
    parser.add_argument("--topic-set", choices=("qrels", "run_and_qrels"), default="qrels", help="topics averaged over")
    parser.add_argument(
        "--on-topic-mismatch",
        choices=("warn", "error", "ignore"),
        default="warn",
        help="qrels topics missing from a run (scored 0) and run topics missing from the qrels (not scored)",
    )


def scoring_options(args: argparse.Namespace) -> dict:
    """The keyword arguments of :func:`evaluate` that ``_add_run_options`` sets."""
    return {
        "empty_topic": args.empty_topic,
        "topic_set": args.topic_set,
        "progress": sys.stderr.isatty(),
        "on_topic_mismatch": args.on_topic_mismatch,
    }


def _collection(args: argparse.Namespace) -> Collection:
    col = load_collection(args.qrels, args.intents, args.topics, on_duplicate_qrel=args.on_duplicate_qrel, uniform_over=args.uniform_over)
    if args.keep_intents:
        col = col.keep_top_intents(args.keep_intents)
    if args.weights != "original":
        col = col.with_weights(args.weights)
    if args.binary:
        col = col.binarised()
    return col


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog=program_name(), description="Diversity evaluation of ranked lists and meta-evaluation against user preferences."
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(
        dest="command", required=True, metavar="{score,compare,metrics,difficulty,meta}", parser_class=OneLineParser
    )

    score = sub.add_parser(
        "score", help="score runs with diversity metrics", description="Score runs; output is tidy 'run topic measure value'."
    )
    _add_collection_options(score)
    _add_run_options(score)
    score.add_argument("--per-topic", action="store_true", help="one row per (run, topic, measure) plus the mean rows (topic 'all')")
    score.add_argument(
        "--per-subtopic",
        action="store_true",
        help="add one row per (run, subtopic, measure): the subtopic scored alone (weight 1) as topic '<topic>/<subtopic>', "
        "for subtopic-level agreement (meta agreement --level subtopic); combines with --per-topic",
    )
    score.add_argument("--format", choices=(*FORMATS, *TABLE_FORMATS), default="tsv", help="markdown and latex: tables for papers")
    score.add_argument("-o", "--output", help="output file (default: standard output)")

    from evaluation.compare_cli import add_compare_parser

    add_compare_parser(sub, _add_collection_options, _add_run_options)

    metrics = sub.add_parser("metrics", help="list every registered metric with parameters, defaults and citation")
    metrics.add_argument("--format", choices=("text", "tsv", "json"), default="text")

    diff = sub.add_parser("difficulty", help="per-topic xi, diversity difficulty dd and subtopic miss rates smr (Golbus et al.)")
    _add_collection_options(diff)
    diff.add_argument(
        "--dd-exponent-offset", type=int, default=0, choices=(0, 1), help="1 reproduces Golbus et al. Table 1 (exponent xi+1)"
    )
    diff.add_argument(
        "--dd-intents",
        choices=("relevant", "listed"),
        default="relevant",
        help="intents counted in d_max (docs/metrics.md#alpha-ia-and-diversity-difficulty; TREC: relevant)",
    )
    diff.add_argument("--smr-depth", type=positive_int, metavar="K", help="depth k of the subtopic miss rates (default xi)")
    diff.add_argument("--format", choices=FORMATS, default="tsv")
    diff.add_argument("-o", "--output")

    sub.add_parser("meta", help="meta-evaluation: agreement with users, discriminative power, ... ('meta --help')", add_help=False)
    return parser


def _emit(text: str, output: str | None) -> None:
    if output:
        try:
            write_atomic(output, text)
        except OSError as exc:
            raise EvaluationError(f"{output}: cannot write: {exc.strerror or exc}") from None
    else:
        sys.stdout.write(text)


def _render_frame(frame: pd.DataFrame, fmt: str) -> str:
    """``metrics`` and ``difficulty`` tables as every table of the command line: full-precision JSON (pandas' to_json
    kept 10 decimals), spreadsheet-safe CSV (docs/data-dictionary.md#spreadsheet-safe-csv)."""
    from evaluation.report.tables import render_table as render_tidy

    return render_tidy(frame, fmt)


def metrics_table() -> pd.DataFrame:
    """One row per registered metric: name, cutoff rule, parameters (name=default), tags, citation."""
    rows = []
    for spec in REGISTRY.values():
        rows.append(
            {
                "name": spec.name,
                "cutoff": spec.cutoff,
                "parameters": ", ".join(f"{k}={p.default}" for k, p in spec.params.items()),
                "tags": ",".join(sorted(spec.tags)),
                "summary": spec.summary,
                "citation": spec.citation,
            }
        )
    return pd.DataFrame(rows)


TABLE_FORMATS = ("markdown", "latex")


def render_table(frame: pd.DataFrame, fmt: str) -> str:
    """A frame as text: tsv/csv/json score tables, or a Markdown or LaTeX table."""
    from evaluation.report.tables import to_latex, to_markdown

    if fmt == "markdown":
        return to_markdown(frame)
    if fmt == "latex":
        return to_latex(frame)
    return render_scores(frame, fmt)


def _run_score(args: argparse.Namespace) -> int:
    col = _collection(args)
    paths = run_paths(args.run)
    runs = (read_run(path, order=args.order, on_duplicate_doc=args.on_duplicate_doc) for path in paths)  # read as scored
    frame = evaluate(
        col, runs, measure_names(args.measures), per_topic=args.per_topic, per_subtopic=args.per_subtopic, **scoring_options(args)
    )
    _emit(render_table(frame, args.format), args.output)
    return 0


def _run_metrics(args: argparse.Namespace) -> int:
    table = metrics_table()
    if args.format == "text":
        lines = []
        for row in table.itertuples(index=False):
            cut = {"required": "@k", "optional": "[@k]", "either": "[@k]", "none": ""}[row.cutoff]
            lines.append(
                f"{row.name}{cut}\n    {row.summary}\n    parameters: {row.parameters or '-'}\n    tags: {row.tags}\n    source: {row.citation}"
            )
        sys.stdout.write("\n".join(lines) + "\n")
    else:
        sys.stdout.write(_render_frame(table, args.format))
    return 0


def _run_difficulty(args: argparse.Namespace) -> int:
    from evaluation.difficulty import difficulty_frame

    frame = difficulty_frame(
        _collection(args), exponent_offset=args.dd_exponent_offset, dd_intents=args.dd_intents, smr_depth=args.smr_depth
    )
    _emit(_render_frame(frame, args.format), args.output)
    return 0


def console_main() -> int:
    """``python -m evaluation`` and the ``diversity-eval`` script."""
    return main()


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit status (0 ok, 2 bad input)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "meta":
        try:
            from evaluation.meta.cli import main as meta_main
        except ImportError as exc:  # pragma: no cover - the meta package ships with this one
            print(f"error: meta-evaluation is unavailable: {exc}", file=sys.stderr)
            return 2
        return meta_main(argv[1:])
    try:
        args = build_parser().parse_args(argv)
    except UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except SystemExit as exc:  # --help, --version
        return int(exc.code or 0)
    from evaluation.compare_cli import run_compare

    handlers = {
        "score": _run_score,
        "compare": lambda a: run_compare(a, _collection(a), _emit),
        "metrics": _run_metrics,
        "difficulty": _run_difficulty,
    }
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            status = handlers[args.command](args)
        except EvaluationError as exc:  # the one line a failed command prints; warnings would bury it
            print(f"error: {command_line_wording(str(exc))}", file=sys.stderr)
            return 2
        except BrokenPipeError:  # e.g. piped into head
            return 0
    print_warnings(caught)
    return status
