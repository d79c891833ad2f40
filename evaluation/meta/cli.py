"""``python -m evaluation meta <command> ...``: meta-evaluation from the command line.

Every command reads per-topic scores as written by ``python -m evaluation score --per-topic``
(``run topic measure value``; rows with topic ``all`` are ignored) or, for ``dss``, ``loo`` and
``simplified``, a collection and runs, and writes one tidy table (``-o FILE``, default standard
output; ``--format tsv|csv|json``); with ``-o FILE`` the settings that produced it go to
``FILE.settings.json`` (:mod:`evaluation.meta.provenance`). Randomised commands take ``--seed``
(without it a seed is drawn) and print the seed used on standard error. ``--plots DIR`` writes PNG
and SVG figures. Errors print one line on standard error and return 2; companion input files are
validated before any work, and output files and figures are written atomically only after all
work succeeded. Each command is declared once, in its module of :mod:`evaluation.meta.commands`.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

from evaluation._argtypes import OneLineParser, UsageError, command_line_wording, print_warnings, program_name
from evaluation.exceptions import EvaluationError
from evaluation.io.scores import write_atomic
from evaluation.meta.commands import COMMANDS, Output
from evaluation.meta.provenance import render_settings, settings_path, settings_record
from evaluation.report.tables import render_table

# Options naming input files (recorded as inputs in the settings sidecar).
INPUT_OPTIONS = ("scores", "preferences", "intents", "power", "agreement", "against", "qrels", "run", "pool_run", "teams", "pool_depths")
# Options naming output files: their directories must exist before any work is done.
OUTPUT_OPTIONS = ("output", "pairs_out", "matrix_out", "ordering_out", "preferences_out")


def build_parser() -> argparse.ArgumentParser:
    """The ``meta`` parser: one sub-command per registered :class:`~evaluation.meta.commands.base.Command`, in ``--help`` order."""
    parser = OneLineParser(
        prog=f"{program_name()} meta",
        description="Meta-evaluation of diversity metrics (definitions: docs/metrics.md#meta-evaluation). See docs/meta.md.",
    )
    sub = parser.add_subparsers(dest="command", required=True, parser_class=OneLineParser)
    for command in COMMANDS.values():
        command.add_to(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one meta command; returns 0 on success, 2 on bad input (one line on stderr)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    out = Output()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            args = build_parser().parse_args(argv)
            _check_outputs(args)
            table = COMMANDS[args.command].run(args, out)
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
            print(f"error: {command_line_wording(_one_line(exc))}", file=sys.stderr)
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


def _settings(args: argparse.Namespace, out: Output) -> dict[str, object]:
    """The settings sidecar of this run (docs/metrics.md#agreement-with-users, docs/metrics.md#meta-evaluation): inputs, options, seed, conventions."""
    given = vars(args)
    inputs = {name: given[name] for name in INPUT_OPTIONS if given.get(name)}
    options = {name: value for name, value in given.items() if name not in (*INPUT_OPTIONS, "command", "seed")}
    return settings_record(args.command, inputs=inputs, options=options, seed=out.seed, conventions=out.conventions)


def _write(out: Output, output: str | None, text: str) -> None:
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
