"""Benchmark: how often admission chooses again when newcomers arrive at once (deterministic; issue 32).

Admission (``allocation.admit``) chooses a newcomer's quota from the counts it read, then locks the chosen
presentation rows (PostgreSQL: ``SELECT .. FOR UPDATE SKIP LOCKED``) and counts them again: a row another
arrival's transaction holds is skipped, a row that arrivals committed meanwhile filled to k is dropped, and
for what is missing it chooses again (``choice.pick_regular``). Under a burst of arrivals every such
re-choice costs a whole choice of CPU. This benchmark replays arrivals with ``--in-flight`` admissions at
once, deterministically: arrival i reads the counts while the ``--in-flight - 1`` arrivals before it are
still in their transactions (their rows locked, their leases not yet visible); before its first lock the
oldest of them commits (its leases become visible, its locks go: the counts arrival i read are now stale for
those rows); its locks skip the rows the others still hold, exactly as SKIP LOCKED does; if it still comes up
short it retries serialised, as ``admit`` does (after the others commit). Admission's own code chooses
(``pick_regular``, ``pick_checks``, ``create_leases``), with a seeded random generator, so the same code and
seed always give the same counts. ``--in-flight 3`` is the load benchmark's 3 sync workers, each in one
admission at most.

It imports TREC 2014 with its 8 public runs and creates the load benchmark's "trec" study (3,976 regular
presentations, 18 regular items each, k = 3) once per allocation; ``--allocation adaptive`` draws the first
round first (``recompute``, what ``manage.py allocation_priorities`` does before the study opens) and, with
``--recompute-every N``, again after every N admissions. Per allocation it prints the admissions that chose
more than once, the re-choices in all and at most, the rows skipped as locked by others, the serialised retries
and the CPU per admission (in-process, indicative); the last line:
``rechoosing_adaptive=.. rechoices_adaptive=.. max_rechoices_adaptive=.. rechoosing_uniform=.. rechoices_uniform=..``

    .venv/bin/python benchmarks/bench_admission.py                        # SQLite in a temporary file, 200 arrivals
    .venv/bin/python benchmarks/bench_admission.py --arrivals 400 --in-flight 6 --seed 2
    .venv/bin/python benchmarks/bench_admission.py --database postgres --postgres-url postgres://USER@127.0.0.1:PORT/DB

The counts do not depend on the database (the locks are replayed, not taken); times are reported, never asserted.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import random
import sys
import tempfile
import time
from collections import Counter, deque
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass
class Contention:
    """What a replay of simultaneous arrivals counted (:func:`replay_arrivals`)."""

    choices: list[int] = field(default_factory=list)  # per admission: the choices that tried rows (1: chose once)
    skipped: int = 0  # rows a choice wanted that another arrival's transaction held
    serialised: int = 0  # admissions that came up short with rows skipped and retried serialised
    refused: int = 0
    cpu_seconds: float = 0.0
    calls: int | None = None  # Python function calls of the admissions' choices (``calls=True``), commits included

    @property
    def rechoosing(self) -> int:
        return sum(c > 1 for c in self.choices)

    @property
    def rechoices(self) -> int:
        return sum(max(0, c - 1) for c in self.choices)

    def summary(self) -> str:
        spread = Counter(min(c - 1, 9) for c in self.choices if c > 1)
        histogram = " ".join(f"{n if n < 9 else '9+'}:{spread[n]}" for n in sorted(spread)) or "none"
        return (
            f"admissions={len(self.choices)} rechoosing={self.rechoosing} rechoices={self.rechoices}"
            f" max_rechoices={max((c - 1 for c in self.choices), default=0)} skipped_locked={self.skipped}"
            f" serialised={self.serialised} refused={self.refused}"
            f" cpu_ms_per_admission={1000 * self.cpu_seconds / max(1, len(self.choices)):.1f}"
            + (f" calls_per_admission={self.calls / max(1, len(self.choices)):.0f}" if self.calls is not None else "")
            + f" (re-choices per admission {histogram})"
        )


@dataclass
class Arrival:
    """One newcomer of :func:`replay_arrivals`: the rows its admission locked and its choices that tried rows."""

    annotator: object
    locked: set[int] = field(default_factory=set)
    tries: int = 0

    def lock_all(self, ids: list[int]) -> set[int]:
        """The serialised retry's blocking locks: it waited for the others, so it gets every row."""
        self.locked.update(ids)
        return set(ids)


def replay_arrivals(
    study, arrivals: int, in_flight: int, *, now: datetime, seed: int, prefix: str = "sim", between=None, calls: bool = False
) -> Contention:
    """Admit ``arrivals`` newcomers to ``study`` with ``in_flight`` admissions at once (module docstring); ``between(i)``
    runs after the i-th admission committed (a recomputation, say); ``calls`` counts the Python function calls of the
    choices (cProfile; the CPU times then include the counting). Returns what was counted."""
    from studyapp.models import Annotator
    from studyapp.services.participation.allocation.admission import create_leases, history_of, register
    from studyapp.services.participation.allocation.choice import in_sequence, pick_checks, pick_regular
    from studyapp.services.participation.allocation.pool import design_of

    if in_flight < 1:
        raise ValueError(f"in_flight must be at least 1, got {in_flight}")
    rng = random.Random(seed)
    found = Contention()
    pending: deque[tuple] = deque()  # admissions in their transactions: (annotator, items, the rows they locked)
    committed = 0
    profiler = cProfile.Profile() if calls else None

    def commit(entry: tuple) -> None:
        nonlocal committed
        annotator, items, _ = entry
        if items is None:
            annotator.status = Annotator.Status.REFUSED
        else:
            create_leases(annotator, study, items, history_of(annotator, design_of(study).by_id)[1], now, rng)
            annotator.status = Annotator.Status.ACTIVE
        annotator.last_seen_at = now
        annotator.save(update_fields=["status", "last_seen_at"])
        committed += 1
        if between is not None:
            between(committed)

    def choose(annotator, lock) -> tuple[list | None, bool]:
        """(the quota in sequence or None if it came up short, whether rows were skipped as locked)."""
        design = design_of(study)
        history, _ = history_of(annotator, design.by_id)
        picked, contended = pick_regular(study, design, study.regular_items_per_annotator, history, now, rng, lock)
        checks = pick_checks(study, design.checks, study.check_items_per_annotator, history, rng)
        if len(picked) < study.regular_items_per_annotator or len(checks) < study.check_items_per_annotator:
            return None, contended
        return in_sequence(picked, checks, rng), False

    for i in range(arrivals):
        arrival = Arrival(register(study, external_id=f"{prefix}{i:05d}", platform="", now=now))

        def lock(ids: list[int], arrival: Arrival = arrival) -> set[int]:
            arrival.tries += 1
            if arrival.tries == 1 and pending and len(pending) >= in_flight - 1:
                commit(pending.popleft())  # the oldest other admission commits while this one chooses
            held = set().union(*(entry[2] for entry in pending))
            got = {x for x in ids if x not in held}
            found.skipped += len(ids) - len(got)
            arrival.locked.update(got)
            return got

        started = time.process_time()
        if profiler is not None:
            profiler.enable()
        items, contended = choose(arrival.annotator, lock)
        if contended:  # admit retries serialised: it waits for the others, then takes what it finds
            found.serialised += 1
            while pending:
                commit(pending.popleft())
            arrival.locked.clear()  # the first attempt rolled back: its locks went with it
            items, _ = choose(arrival.annotator, arrival.lock_all)
        if profiler is not None:
            profiler.disable()
        found.cpu_seconds += time.process_time() - started
        found.choices.append(max(1, arrival.tries))
        found.refused += items is None
        pending.append((arrival.annotator, items, arrival.locked))
        while len(pending) >= in_flight:
            commit(pending.popleft())
    while pending:
        commit(pending.popleft())
    if profiler is not None:
        found.calls = pstats.Stats(profiler).total_calls
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--database", choices=["postgres", "sqlite"], default="sqlite", help="default sqlite (a temporary file)")
    parser.add_argument("--postgres-url", default=os.environ.get("STUDYAPP_TEST_POSTGRES_URL", ""),
                        help="with --database postgres: a server whose user may create databases (default $STUDYAPP_TEST_POSTGRES_URL)")  # fmt: skip
    parser.add_argument("--arrivals", type=int, default=200, help="newcomers per allocation (default 200, the load benchmark's burst)")
    parser.add_argument("--in-flight", type=int, default=3, help="admissions at once (default 3: the load benchmark's sync workers)")
    parser.add_argument("--allocation", choices=["adaptive", "uniform", "both"], default="both", help="default both")
    parser.add_argument("--recompute-every", type=int, default=0,
                        help="adaptive: recompute (and draw when due) after every N admissions (default 0: only before the first)")  # fmt: skip
    parser.add_argument("--study", choices=["trec", "demo"], default="trec",
                        help="the load benchmark's study: trec (default) or demo (the bundled demo collection, 8 items each)")  # fmt: skip
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--calls", action="store_true", help="also count Python function calls per admission (deterministic)")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import load_annotators

    load_annotators.check_database_arguments(parser, args)
    if args.arrivals < 1 or args.in_flight < 1 or args.recompute_every < 0:
        parser.error("--arrivals and --in-flight must be at least 1, --recompute-every at least 0")
    allocations = ["adaptive", "uniform"] if args.allocation == "both" else [args.allocation]

    workdir = Path(tempfile.mkdtemp(prefix="bench-admission-"))
    database = load_annotators.Database(args.database, args.postgres_url, workdir, suffix="_admission")
    try:
        database.create()
        os.environ.update({"DATABASE_URL": database.url, "DJANGO_LOG_LEVEL": "WARNING"})
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "studyapp.settings")
        import django

        django.setup()
        import numpy as np

        from studyapp.models import Study
        from studyapp.services.analysis.adaptive import recompute
        from studyapp.services.clock import now_or

        scenarios = [load_annotators.Scenario(name, args.arrivals, 0.0, (0, 0), (0, 0), 0.0, args.study) for name in allocations]
        studies = load_annotators.prepare_studies(scenarios, {name: name for name in allocations})
        results = {}
        for name in allocations:
            study = Study.objects.get(pk=studies[name]["pk"])
            now = now_or(None)
            between = None
            if name == "adaptive":
                draws = np.random.default_rng(args.seed)
                drawn = recompute(study, now=now, rng=draws)
                print(f"adaptive: round {drawn.drew} drawn before the arrivals ({drawn.drawn_groups} groups)", flush=True)
                if args.recompute_every:

                    def between(done: int, study=study, draws=draws, now=now) -> None:
                        if done % args.recompute_every == 0:
                            recompute(study, now=now, rng=draws)

            started = time.monotonic()
            results[name] = replay_arrivals(
                study, args.arrivals, args.in_flight, now=now, seed=args.seed, between=between, calls=args.calls
            )
            print(f"{name}: in_flight={args.in_flight} {results[name].summary()} seconds={time.monotonic() - started:.1f}", flush=True)
        print(
            " ".join(
                f"rechoosing_{name}={r.rechoosing} rechoices_{name}={r.rechoices} max_rechoices_{name}={max(r.choices) - 1}"
                for name, r in results.items()
            )
        )
        return 0
    finally:
        database.release(workdir)


if __name__ == "__main__":
    sys.exit(main())
