"""``load_annotators.py --allocation adaptive``: the recomputation beside the server and a study taken to its first
complete analysis round before the paced scenario (issue 32).

In a fresh study of the load benchmark's size no analysis round completes within a scenario (its first round's
presentations are leased within seconds but answered over minutes), so the periodic recomputation would only run
its cheap path (no best set yet). Before the paced scenario :func:`complete_first_round` therefore takes the study,
through the services (admission, every item, an answer each; no HTTP), to its first complete round, recomputing
after each annotator as ``manage.py allocation_priorities`` would; the paced scenario's recomputations then take the
best set (bootstrap), weigh the groups by the contenders' disputes and draw rounds while the annotators answer,
and :class:`Recomputer` reports what each cost.
"""

from __future__ import annotations

import logging
import os
import random
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PREPARED = "prepared"  # external ids of the annotators of complete_first_round start with this
PREPARE_LIMIT = 400  # annotators at most; a study whose round does not complete by then is an error

# one line of manage.py allocation_priorities (its handle())
LINE = re.compile(
    r"analysis round (?P<round>\S+), .*; (?P<decided>decided|not decided); (?:drew round (?P<drew>\d+) \((?P<groups>\d+) groups?\)"
    r"|no new round); (?P<wall>\d+) ms, (?P<cpu>\d+) ms CPU$"
)


def complete_first_round(pk: int, seed: int) -> str:
    """Admit annotators to study ``pk`` one after another, each answering every item, recomputing after each, until
    the first analysis round is complete; returns a line saying what it took."""
    import numpy as np

    from studyapp.models import Study
    from studyapp.services.analysis.adaptive import recompute
    from studyapp.services.participation import allocation
    from studyapp.services.participation.answers import record_answer

    study = Study.objects.get(pk=pk)
    rng, draws = random.Random(seed), np.random.default_rng(seed)
    started, answers = time.monotonic(), 0
    logging.getLogger("studyapp.services.analysis.adaptive").setLevel(logging.WARNING)  # this line sums it up
    for n in range(PREPARE_LIMIT + 1):
        result = recompute(study, rng=draws)
        if result.analysis_round is not None:
            rounds = study.allocation_rounds.count()
            return (
                f"analysis round {result.analysis_round} complete after {n} annotators ({answers} answers through the services,"
                f" {rounds} rounds drawn) in {time.monotonic() - started:.1f} s"
            )
        if n == PREPARE_LIMIT:
            break
        annotator = allocation.register(study, external_id=f"{PREPARED}{n:04d}")
        allocation.admit(annotator, rng=rng)
        while (item := allocation.current_assignment(annotator, rng=rng)) is not None:
            record_answer(item, rng.randint(-4, 4), client_ms=rng.randint(3000, 15000), request_id=f"{PREPARED}-{item.pk}")
            answers += 1
    raise RuntimeError(f"study {study.name!r}: no analysis round complete after {PREPARE_LIMIT} annotators")


class Recomputer:
    """``manage.py allocation_priorities SLUG --every N`` beside the server for one scenario (off the request path, as
    in production), stopped by pid afterwards; :meth:`stop` sums up the recomputations made while it ran."""

    def __init__(self, database_url: str, slug: str, every: float, workdir: Path) -> None:
        self.args = [sys.executable, str(ROOT / "manage.py"), "allocation_priorities", slug]
        self.every, self.log = every, workdir / f"priorities-{slug}.log"
        self.env = {**os.environ, "DATABASE_URL": database_url, "DJANGO_LOG_LEVEL": "WARNING"}
        self.process: subprocess.Popen | None = None
        self.skip = 0  # lines of the log up to the first recomputation (start())

    def start(self, timeout: float = 300.0) -> str:
        """Start it and wait for its first recomputation (a fresh study's first draw; the process's caches, such as the
        study's metric scores, are then warm, as in a process that has run beside the server since the study opened).
        Returns that first line; what :meth:`stop` sums up comes after it."""
        with self.log.open("a") as log:
            self.process = subprocess.Popen([*self.args, "--every", str(self.every)], cwd=ROOT, env=self.env, stdout=log,
                                            stderr=subprocess.STDOUT, start_new_session=True)  # fmt: skip
        deadline = time.monotonic() + timeout
        while not any(map(LINE.search, lines := self.lines())):
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"allocation_priorities did not recompute:\n{self.log.read_text()[-3000:]}")
            time.sleep(0.2)
        self.skip = len(lines)
        first = [m for m in map(LINE.search, lines) if m][0]
        return (
            f"first recomputation: analysis round {first['round']}, {first['decided']},"
            f" {'drew round ' + first['drew'] if first['drew'] else 'no new round'}, {first['wall']} ms ({first['cpu']} ms CPU)"
        )

    def lines(self) -> list[str]:
        return self.log.read_text().strip().splitlines() if self.log.exists() else []

    def stop(self) -> str:
        """Stop it (by pid); returns what the recomputations made since :meth:`start` cost."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        self.process = None
        return summary(self.lines()[self.skip :], self.every)


def summary(lines: list[str], every: float) -> str:
    """What the command's ``lines`` say: how many recomputations, with a complete analysis round in how many, the
    rounds drawn, their CPU and time."""
    found = [m for m in map(LINE.search, lines) if m]
    if not found:
        return f"no recomputation while the annotators answered (allocation_priorities --every {every:g}: {lines[-1:] or 'no output'})"
    cpu, wall = [int(m["cpu"]) for m in found], [int(m["wall"]) for m in found]
    analysed = [m["round"] for m in found if m["round"] != "None"]
    drew = [m["drew"] for m in found if m["drew"]]
    return (
        f"{len(found)} recomputation{'s' if len(found) > 1 else ''} while the annotators answered (allocation_priorities --every {every:g}), "
        f"{len(analysed)} with a complete analysis round ({'round ' + ', '.join(sorted(set(analysed), key=int)) if analysed else 'none'};"
        f" decided in {sum(m['decided'] == 'decided' for m in found)}), rounds drawn: {', '.join(drew) or 'none'};"
        f" CPU per recomputation mean {sum(cpu) / len(cpu):.0f} ms, max {max(cpu)} ms; time mean {sum(wall) / len(wall):.0f} ms,"
        f" max {max(wall)} ms"
    )
