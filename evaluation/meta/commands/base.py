"""What the ``python -m evaluation meta`` sub-commands share: the declaration of a sub-command
(:class:`Command`), the common options, and the readers and helpers their runs use."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from evaluation._argtypes import non_negative_int, positive_int, probability
from evaluation.meta.provenance import draw_seed
from evaluation.report.tables import FORMATS

DEFAULT_GOLD = ("I-rec", "Prec", "PMP", "Ef-P")
# Columns a companion input must have: a discpower summary, an agreement table.
POWER_COLUMNS = ("measure", "power")
AGREEMENT_COLUMNS = ("measure", "statistic", "subset", "value")


@dataclass(frozen=True)
class Command:
    """One ``python -m evaluation meta`` sub-command, declared once in its own module of this package:
    its name, the ``--help`` line and description, its own options, whether it takes ``--seed`` and
    ``--plots`` (``-o`` and ``--format`` every command takes), and what it runs: ``run(args, out)``
    returns the table and puts companion files, figures, notes and conventions on ``out``."""

    name: str
    help: str
    description: str
    options: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace, Output], pd.DataFrame]
    seed: bool = False
    plots: bool = False

    def add_to(self, sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
        """Add this command's parser to ``sub`` (the ``meta`` parser's sub-commands)."""
        parser = sub.add_parser(self.name, help=self.help, description=self.description)
        self.options(parser)
        common(parser, seed=self.seed, plots=self.plots)
        return parser


def common(parser: argparse.ArgumentParser, *, seed: bool = False, plots: bool = False) -> None:
    """The options every command has (``-o``, ``--format``) and those a randomised or plotting one adds."""
    out = parser.add_argument_group("output")
    out.add_argument("-o", "--output", metavar="FILE", help="output file (default: standard output); its settings go to FILE.settings.json")
    out.add_argument("--format", choices=FORMATS, default="tsv", help="tidy table format (default tsv)")
    if seed:
        out.add_argument("--seed", type=non_negative_int, help="random seed (default: drawn and reported on stderr)")
    if plots:
        out.add_argument("--plots", metavar="DIR", help="write PNG and SVG figures into DIR")


def scores_option(parser: argparse.ArgumentParser, measures: bool = True) -> None:
    parser.add_argument("--scores", required=True, metavar="FILE", help="per-topic scores 'run topic measure value' (score --per-topic)")
    if measures:
        parser.add_argument("--measures", nargs="+", metavar="NAME", help="measures to analyse (default: all in the scores file)")


def collection_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--qrels", required=True, metavar="FILE", help="diversity qrels (TREC or NTCIR Dqrels)")
    parser.add_argument("--intents", metavar="FILE", help="intent probabilities 'topic intent prob [inf|nav]'")
    parser.add_argument("--measures", nargs="+", required=True, metavar="NAME", help="measures, e.g. alpha-nDCG@10 D#-nDCG@10")


def test_options(parser: argparse.ArgumentParser, default: str = "bootstrap") -> None:
    parser.add_argument(
        "--test",
        choices=("bootstrap", "tukey"),
        default=default,
        help=f"paired bootstrap (docs/metrics.md#paired-bootstrap) or randomised Tukey HSD (docs/metrics.md#randomised-tukey-hsd); default {default}",
    )
    parser.add_argument("--B", type=positive_int, default=1000, help="resamples (default 1000)")
    parser.add_argument("--alpha", type=probability, default=0.05, help="significance level (default 0.05)")


class Output:
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


def read_scores(path: str) -> pd.DataFrame:
    from evaluation.io.scores import read_scores

    return read_scores(path)


def cube_of(args: argparse.Namespace, measures: Sequence[str] | None = None, **kwargs):
    from evaluation.meta._matrix import score_cube

    return score_cube(read_scores(args.scores), measures if measures is not None else args.measures, **kwargs)


def weights(path: str | None):
    if not path:
        return None
    from evaluation.io.intents import read_intents
    from evaluation.meta.levels import intent_weights

    return intent_weights(read_intents(path))


def seed_of(args: argparse.Namespace, out: Output) -> int:
    """The seed this run uses (``--seed``, else a fresh one), recorded for stderr and the settings."""
    out.seed_drawn = args.seed is None
    out.seed = draw_seed() if out.seed_drawn else args.seed
    return out.seed


def load(args: argparse.Namespace):
    from evaluation.loading import load_collection

    return load_collection(args.qrels, args.intents)
