"""``manage.py study_report STUDY --out DIR``: the study report as HTML, CSV, figures and reproducible inputs."""

from __future__ import annotations

import math
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from evaluation._argtypes import non_negative_int, positive_int
from studyapp.management.studies import find_study
from studyapp.services.analysis.report import build_report, write_report
from studyapp.services.analysis.study_analysis import DEFAULT_B, DEFAULT_SEED, Timer
from studyapp.services.wording import count


class Command(BaseCommand):
    help = (
        "Write the study report (which metric agrees with the annotators) into DIR: index.html, CSV tables, PNG/SVG figures, "
        "the study's collection and answers as files, settings.json and reproduce.sh (the evaluation commands that recompute it)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("study", help="study name or slug")
        parser.add_argument("--out", required=True, metavar="DIR", help="output directory (created; files in it are replaced)")
        parser.add_argument(
            "--bootstrap", type=positive_int, default=DEFAULT_B, metavar="B", help=f"bootstrap resamples (default {DEFAULT_B})"
        )
        parser.add_argument("--seed", type=non_negative_int, default=DEFAULT_SEED, help=f"seed of every bootstrap (default {DEFAULT_SEED})")

    def handle(self, *args, **opts) -> None:
        study = find_study(opts["study"])
        out = Path(opts["out"])
        if out.exists() and not out.is_dir():
            raise CommandError(f"{out}: --out needs a directory, this is a file")
        if not out.parent.resolve().is_dir():
            raise CommandError(f"{out}: directory {out.parent} does not exist")
        timer = Timer()
        self.stderr.write(f"Analysing {study.name!r} (B = {opts['bootstrap']}, seed {opts['seed']}) ...")
        report = build_report(study, B=opts["bootstrap"], seed=opts["seed"], timer=timer)
        try:
            written = write_report(report, out)
        except OSError as exc:
            raise CommandError(f"{exc.filename or out}: {exc.strerror or exc}") from None
        for note in report.analysis.notes:
            self.stderr.write(f"note: {note}")
        summary = report.summary
        self.stdout.write(f"Report of {study.name!r}: {len(written)} files in {out}; open {out / 'index.html'}")
        self.stdout.write(console_allocation(summary["allocation"]))
        if summary["best"]:
            self.stdout.write(console_best_set(summary))
        else:
            self.stdout.write("No valid answers yet: the report holds the scores and the discriminative power only.")
        self.stdout.write("Time: " + ", ".join(f"{k} {v:.2f} s" for k, v in timer.seconds.items()))


def console_allocation(allocation: dict) -> str:
    """Which allocation ran (the report's Allocation row, in one line): an adaptive study's design-weighted table."""
    if allocation["kind"] != "adaptive":
        return f"Allocation: {allocation['kind']}."
    if allocation.get("analysis_round") is None:
        drawn = "drawn but none complete" if allocation.get("drawn") else "none drawn (manage.py allocation_priorities did not run)"
        return f"Allocation: adaptive, rounds {drawn}: every table is conditional on the pairs judged."
    return (
        f"Allocation: adaptive, analysis round {allocation['analysis_round']}, {count(allocation['drawn'], 'run pair')} drawn "
        f"({allocation['full']} full): design-weighted MUP, MUP_b and tau_b in agreement-design-weighted.csv, their draws in "
        "allocation-groups.csv; the other tables are conditional on the pairs judged."
    )


def console_best_set(summary: dict) -> str:
    """The console's word on the result: the best set (entries), never one metric; no claim on too few topics."""
    best, chosen = summary["best"], summary["best_set"]
    interval = "no interval: too few topics" if math.isnan(best["low"]) else f"[{best['low']:.3f}, {best['high']:.3f}]"
    highest = f"highest MUP {best['value']:.3f} ({interval})"
    if chosen is None:
        return f"Highest MUP ({best['level']} level): {best['measure']} {best['value']:.3f}, untested (no resampling)"
    if not chosen["claim"]:
        return (
            f"No best set claimed ({chosen['level']} level): {count(chosen['topics'], 'topic')}, fewer than {chosen['min_topics']}; "
            f"{highest} is an estimate only"
        )
    named = "; ".join(chosen["entries"])
    return (
        f"Best set ({chosen['level']} level, MUP not significantly below another's at alpha {chosen['alpha']}, "
        f"{chosen['method']} sign-flip test over {chosen['topics']} topics): {chosen['size']} of {chosen['candidates']} entries: "
        f"{named}; {highest}" + (f"; undefined: {', '.join(chosen['undefined'])}" if chosen["undefined"] else "")
    )
