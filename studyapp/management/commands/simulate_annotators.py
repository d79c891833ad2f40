"""``manage.py simulate_annotators STUDY --truth MEASURE --noise X --fast-share Y [--n N] [--seed S]``."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError, CommandParser

from evaluation._argtypes import non_negative_int, positive_int
from evaluation.exceptions import EvaluationError
from studyapp.exceptions import StudyError
from studyapp.management.studies import find_study
from studyapp.services.rehearsal.simulation import Plan, simulate_annotators


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise CommandError(f"expected a number, got {text!r}") from None


class Command(BaseCommand):
    help = (
        "Simulated annotators take the study through its real pages (consent, onboarding, every item), answering by a "
        "planted truth metric plus noise; a share of them are fast cheaters. A rehearsal before a paid study, the demo, "
        "the end-to-end test. Time is simulated: it takes seconds, not hours."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("study", help="study name or slug")
        parser.add_argument("--truth", required=True, metavar="MEASURE", help="the metric the simulated people follow, e.g. D#-nDCG@10")
        parser.add_argument("--noise", type=_number, default=1.0, help="sd of the answer noise in scale points (default 1)")
        parser.add_argument("--fast-share", type=_number, default=0.1, help="share of fast cheaters, 0-1 (default 0.1)")
        parser.add_argument("--n", type=positive_int, help="how many annotators arrive (default: until the study takes no more)")
        parser.add_argument("--seed", type=non_negative_int, default=0, help="random seed (default 0)")

    def handle(self, *args, **opts) -> None:
        study = find_study(opts["study"])
        try:
            plan = Plan(truth=opts["truth"], noise=opts["noise"], fast_share=opts["fast_share"], n=opts["n"], seed=opts["seed"])
            verbose = opts["verbosity"] > 1
            result = simulate_annotators(
                study, plan, progress=(lambda o: self.stderr.write(f"{o.pid}: {o.end} after {o.answers} answers")) if verbose else None
            )
        except (StudyError, EvaluationError) as exc:
            raise CommandError(str(exc)) from None
        for line in result.lines():
            self.stdout.write(line)
