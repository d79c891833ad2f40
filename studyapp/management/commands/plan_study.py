"""``manage.py plan_study STUDY``: how many participants does the study need? (docs/studyapp.md#planning-a-study)"""

from __future__ import annotations

import sys
import time
from decimal import Decimal, InvalidOperation

from django.core.management.base import BaseCommand, CommandError, CommandParser

from evaluation.exceptions import EvaluationError
from studyapp.management.studies import find_study
from studyapp.models import StoredPlan
from studyapp.services.analysis.planning import NOISE, RANDOM_SHARE, SIGNAL, check_plan, plan_study
from studyapp.services.analysis.stored_plan import design_summary, projection, store_plan, store_projection


class Command(BaseCommand):
    help = (
        "Simulate the study before recruiting: for a grid of participant counts, the expected best-set size, the chance "
        "that the best set is a single entry and the cost at the study's reward (docs/studyapp.md#planning-a-study). "
        "The table is stored for the set-up page; with --from-data, the projection from the answers so far is stored for the dashboard."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("study", help="study name or slug")
        parser.add_argument(
            "--participants", type=int, nargs="+", metavar="N", help="participant counts (default: 10%%-200%% of a complete study)"
        )
        parser.add_argument("--reward", default="0", help="reward per participant, in the platform's currency (the bonus is added)")
        parser.add_argument("--truth", help="metric the simulated users follow (default D#-nDCG@<depth>)")
        parser.add_argument("--signal", type=float, help=f"scale points per sd of the truth's difference (default {SIGNAL:g})")
        parser.add_argument("--noise", type=float, help=f"answer noise, scale points (default {NOISE:g})")
        parser.add_argument("--random-share", type=float, help=f"share of random answers (default {RANDOM_SHARE:g})")
        parser.add_argument("--n-sim", type=int, default=40, help="simulated studies per participant count (default 40)")
        parser.add_argument("--B", type=int, default=500, help="random sign flips of the best set above 12 topics (default 500)")
        parser.add_argument("--seed", type=int, default=1)
        parser.add_argument(
            "--check",
            type=int,
            nargs="?",
            const=0,
            metavar="N",
            help="check the plan: simulate N participants again (default: the recommended count) through the report's path",
        )
        parser.add_argument(
            "--from-data",
            action="store_true",
            help="project from the answers so far: truth, signal and noise estimated from them (not with --truth/--signal/--noise/--random-share)",
        )
        parser.add_argument("--check-n-sim", type=int, default=40, help="simulated studies of the check (default 40)")

    def handle(self, *args, **opts) -> None:
        study = find_study(opts["study"])
        try:
            reward = Decimal(opts["reward"])
        except InvalidOperation:
            raise CommandError(f"--reward must be a number, got {opts['reward']!r}") from None
        if reward < 0 or opts["n_sim"] < 1 or opts["B"] < 1:
            raise CommandError("--reward must be >= 0, --n-sim and --B >= 1")
        start = time.perf_counter()

        def progress(done: int, total: int) -> None:
            bar = "#" * round(30 * done / total)
            self.stderr.write(f"\rsimulating [{bar:<30}] {done}/{total} sizes, {time.perf_counter() - start:.0f} s", ending="")
            if done == total:
                self.stderr.write("")
            sys.stderr.flush()

        assumed = [f"--{k.replace('_', '-')}" for k in ("truth", "signal", "noise", "random_share") if opts[k] is not None]
        if opts["from_data"] and assumed:
            raise CommandError(f"--from-data estimates the users from the answers: drop {', '.join(assumed)}")
        try:
            if opts["from_data"]:
                found = projection(
                    study,
                    participants=opts["participants"],
                    reward=reward,
                    n_sim=opts["n_sim"],
                    B=opts["B"],
                    seed=opts["seed"],
                    progress=progress,
                )
                result = found.plan
            else:
                result = plan_study(
                    study,
                    participants=opts["participants"],
                    reward=reward,
                    truth=opts["truth"],
                    signal=SIGNAL if opts["signal"] is None else opts["signal"],
                    noise=NOISE if opts["noise"] is None else opts["noise"],
                    random_share=RANDOM_SHARE if opts["random_share"] is None else opts["random_share"],
                    n_sim=opts["n_sim"],
                    B=opts["B"],
                    seed=opts["seed"],
                    progress=progress,
                )
        except (EvaluationError, ValueError) as exc:
            raise CommandError(str(exc)) from None
        for line in result.lines():
            self.stdout.write(line)
        seconds = time.perf_counter() - start
        if opts["from_data"]:
            self.stdout.write(found.sentence)
            store_projection(found, seconds)
            self.stdout.write(f"Stored for the dashboard ({StoredPlan.Kind.DATA}).")
        else:
            store_plan(result, StoredPlan.Kind.DESIGN, design_summary(result), seconds=seconds)
            self.stdout.write(f"Stored for the set-up page ({StoredPlan.Kind.DESIGN}).")
        if opts["check"] is not None or opts["check_n_sim"] != 40:
            self._check(result, opts)
        self.stderr.write(f"Time: {time.perf_counter() - start:.1f} s")

    def _check(self, result, opts) -> None:
        """Re-simulate one size through the report's own path (votes -> items -> best set) and print both."""
        rows = result.table
        n = opts["check"] or (int(rows.loc[result.recommended, "participants"]) if result.recommended is not None else result.complete)
        got = check_plan(result, n, n_sim=opts["check_n_sim"], B=opts["B"], seed=opts["seed"] + 1)
        planned = plan_study(
            result.study, participants=[n], reward=result.reward, truth=result.truth, signal=result.model.signal,
            noise=result.model.noise, random_share=result.model.cheaters, n_sim=opts["n_sim"], B=opts["B"], seed=opts["seed"],
        ).table.iloc[0]  # fmt: skip
        self.stdout.write(
            f"Check at {n} participants ({got['n_sim']} studies through votes -> preference items -> best_set_with_users, other seeds): "
            f"best set size {got['best_set_size']:.2f} +- {got['best_set_size_se']:.2f} (plan {planned.best_set_size:.2f}), "
            f"single entry {got['single_entry']:.2f} +- {got['single_entry_se']:.2f} (plan {planned.single_entry:.2f})"
        )
