"""``manage.py allocation_priorities``: adaptive allocation's recomputation, off the request path."""

from __future__ import annotations

import logging
import os
import time
import warnings

from django.core.management.base import BaseCommand, CommandError, CommandParser

from evaluation.exceptions import EvaluationWarning
from studyapp.management.studies import find_study
from studyapp.models.study_settings import Allocation
from studyapp.services.analysis.adaptive import Recomputed, recompute, state
from studyapp.services.analysis.adaptive import logger as adaptive_logger
from studyapp.services.analysis.decided_signal import contenders_before_a_round
from studyapp.services.wording import count

NICE = 10  # background work: the participants' requests come first


class Command(BaseCommand):
    help = (
        "Adaptive allocation: weigh every run pair by how much the metrics still in the best set dispute it and, when the "
        "drawn pairs' open slots run low, draw the next round with known probabilities (docs/meta.md#adaptive-allocation). "
        "Run it periodically (--every) while the study is open; admission reads what it stores."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("study", help="study name or slug")
        parser.add_argument(
            "--every",
            type=float,
            default=0.0,
            help="repeat every this many seconds until interrupted, skipping a turn without new answers (default: once)",
        )
        parser.add_argument("--times", type=int, default=0, help="with --every: stop after this many recomputations (default: no limit)")
        parser.add_argument(
            "--min-answers",
            type=int,
            default=None,
            help="with --every: skip a turn until at least this many valid answers came in since the last recomputation "
            "(default: one annotator's regular quota)",
        )

        parser.add_argument(
            "--nice",
            type=int,
            default=NICE,
            help=f"with --every: lower this process's CPU priority by this much (os.nice) so the server's requests come first "
            f"when they compete for the cores (default {NICE}; 0 keeps it)",
        )

    def handle(self, *args, **opts) -> None:
        study = find_study(opts["study"])
        if study.allocation != Allocation.ADAPTIVE:
            raise CommandError(f"study {study.name!r} uses {study.allocation} allocation; allocation_priorities is for adaptive studies")
        if opts["every"] < 0 or opts["times"] < 0 or (opts["min_answers"] is not None and opts["min_answers"] < 1):
            raise CommandError("--every and --times must not be negative, --min-answers must be at least 1")
        if not opts["every"] and (opts["times"] or opts["min_answers"] is not None):
            raise CommandError(
                "--times and --min-answers pace the repetitions of --every SECONDS: give --every too (without it the command recomputes once)"
            )
        if not 0 <= opts["nice"] <= 19:
            raise CommandError("--nice must be between 0 and 19")
        if opts["every"] and opts["nice"]:
            os.nice(opts["nice"])  # a periodic process of its own (never the caller of a single recomputation)
        least = opts["min_answers"] or max(1, study.regular_items_per_annotator)
        # recompute logs its line for its other callers; this command prints the same with the decided signal and the CPU,
        # so the log's copy (INFO, on stderr) is left out: one line per recomputation, not two near-identical ones
        previous = adaptive_logger.level
        adaptive_logger.setLevel(max(logging.WARNING, previous))
        self.done, self.warned = 0, set()
        try:
            self.recompute_repeatedly(study, opts, least)
        except KeyboardInterrupt:  # --every runs until interrupted: Ctrl-C ends it with a line, not a traceback
            # (one interrupted mid-recomputation wrote nothing: its writes are one transaction)
            self.stdout.write(f"{study.name}: stopped by an interrupt after {count(self.done, 'recomputation')}")
        finally:
            adaptive_logger.setLevel(previous)

    def recompute_warning_once(self, study) -> Recomputed:
        """:func:`recompute`, each distinct EvaluationWarning (PMP@10 undefined on every topic, ...) shown once per
        process: with --every the same data warned the same lines at every recomputation, for as long as the study ran."""
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", EvaluationWarning)
            result = recompute(study)
        for w in caught:
            if not issubclass(w.category, EvaluationWarning):
                warnings.showwarning(w.message, w.category, w.filename, w.lineno)
            elif str(w.message) not in self.warned:
                self.warned.add(str(w.message))
                self.stderr.write(f"warning: {w.message}")
        return result

    def recompute_repeatedly(self, study, opts: dict, least: int) -> None:
        """Recompute once, or every ``--every`` seconds (at most ``--times``), skipping turns with fewer than ``least`` new answers."""
        last = None
        while True:
            now = state(study)
            if last is not None and (now[1] == last[1] and now[0] - last[0] < least):
                # fewer than --min-answers new answers and no new round since the last recomputation: the draws and
                # the best set would barely move, and every recomputation takes CPU from the server beside it
                time.sleep(opts["every"])
                continue
            started, began = time.process_time(), time.monotonic()
            result = self.recompute_warning_once(study)
            cpu, wall = 1000 * (time.process_time() - started), 1000 * (time.monotonic() - began)
            last = state(study)
            self.done += 1
            drew = f"drew round {result.drew} ({count(result.drawn_groups, 'group')})" if result.drew is not None else "no new round"
            contenders = ", ".join(result.contenders) if result.contenders else contenders_before_a_round(study.candidate_metrics)
            self.stdout.write(
                f"{study.name}: analysis round {result.analysis_round}, contenders: {contenders}; "
                f"{'decided' if result.decided else 'not decided'}; {drew}; {wall:.0f} ms, {cpu:.0f} ms CPU"
            )
            if not opts["every"] or (opts["times"] and self.done >= opts["times"]):
                return
            time.sleep(opts["every"])
