"""``manage.py allocation_priorities``: adaptive allocation's recomputation, off the request path."""

from __future__ import annotations

import time

from django.core.management.base import BaseCommand, CommandError, CommandParser

from studyapp.management.studies import find_study
from studyapp.models.study_settings import Allocation
from studyapp.services.analysis.adaptive import recompute, state


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

    def handle(self, *args, **opts) -> None:
        study = find_study(opts["study"])
        if study.allocation != Allocation.ADAPTIVE:
            raise CommandError(f"study {study.name!r} uses {study.allocation} allocation; allocation_priorities is for adaptive studies")
        if opts["every"] < 0 or opts["times"] < 0:
            raise CommandError("--every and --times must not be negative")
        done, last = 0, None
        while True:
            now = state(study)
            if now == last:  # no new answer and no new round since the last recomputation: nothing to redo
                time.sleep(opts["every"])
                continue
            result = recompute(study)
            last = state(study)
            done += 1
            drew = f"drew round {result.drew} ({result.drawn_groups} groups)" if result.drew is not None else "no new round"
            contenders = ", ".join(result.contenders) if result.contenders else "every metric (no complete round yet)"
            self.stdout.write(
                f"{study.name}: analysis round {result.analysis_round}, contenders: {contenders}; "
                f"{'decided' if result.decided else 'not decided'}; {drew}"
            )
            if not opts["every"] or (opts["times"] and done >= opts["times"]):
                return
            time.sleep(opts["every"])
