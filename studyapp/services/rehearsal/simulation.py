"""Simulated annotators who take a study through its real pages: a rehearsal, a demo, an end-to-end test.

Each simulated annotator is a browser session (Django's test ``Client``, in process) that arrives
through the Prolific link, consents, reads the instructions, does the practice item and the
comprehension check, then answers its items one by one until the completion page, exactly as a
person's browser would. Time is simulated (``services.clock.simulated``): annotators arrive one
after another and work side by side on a timeline that ends about now, so decision times, leases
and the live quality control see realistic times without waiting.

Answers follow a planted truth metric (the user model of ``evaluation.meta.simulate``,
docs/meta.md "simulate"): the latent canonical preference of a run pair is ``signal * d_T / sd(d_T)``
with ``d_T`` the truth metric's difference on what the pair showed (topic or subtopic) and the sd
over all the study's pairs; an answer is ``clip(round(latent + N(0, noise^2)), -4, 4)``, shown
oriented to the page's sides. Check items are answered as they should be (0 on identical pages,
the intact page on degraded ones). A share of the annotators are fast cheaters: a decision every
1-4 seconds, uniform random answers (also on check items); quality control should exclude them.
"""

from __future__ import annotations

import hashlib
import heapq
import ipaddress
import itertools
from collections import Counter
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import numpy as np
from django.conf import settings
from django.test import Client
from django.urls import reverse

from evaluation.collection import SUBTOPIC_TOPIC
from evaluation.meta.simulate import UserModel, latent_preference, simulate_answers
from studyapp.exceptions import StudyError
from studyapp.models import Annotator, Assignment, Presentation, Study
from studyapp.services import clock
from studyapp.services.analysis.study_analysis import study_collection, study_scores
from studyapp.services.participation.allocation import capacity
from studyapp.services.participation.onboarding import COMPREHENSION
from studyapp.services.wording import count

RIGHT_ANSWERS = {q.key: q.correct for q in COMPREHENSION}
HONEST_SECONDS = (12.0, 15.0)  # decision time: 12 s plus an exponential with mean 15 s (capped at 2 minutes)
FAST_SECONDS = (1.0, 4.0)  # fast cheaters: uniform in this range
ARRIVAL_SECONDS = 45.0  # mean gap between arrivals
PLATFORM_STUDY_ID = "simulated"


@dataclass(frozen=True)
class Plan:
    """What to simulate: the truth metric, the answer noise (scale points), the share of fast
    cheaters, how many annotators (None: until the study takes no more), the seed."""

    truth: str
    noise: float = 1.0
    fast_share: float = 0.1
    n: int | None = None
    seed: int = 0
    signal: float = 2.0

    def __post_init__(self) -> None:
        if self.noise < 0:
            raise StudyError(f"--noise must be >= 0, got {self.noise}")
        if not 0 <= self.fast_share <= 1:
            raise StudyError(f"--fast-share must be between 0 and 1, got {self.fast_share}")
        if self.n is not None and self.n < 1:
            raise StudyError(f"--n must be at least 1, got {self.n}")
        if self.signal <= 0:
            raise StudyError(f"the signal must be > 0, got {self.signal}")


@dataclass
class Outcome:
    """How one simulated annotator's session ended."""

    pid: str
    fast: bool
    end: str  # done, excluded, full, screened, closed, ...
    answers: int = 0


@dataclass
class SimulationResult:
    outcomes: list[Outcome] = field(default_factory=list)
    started: datetime | None = None
    ended: datetime | None = None

    @property
    def counts(self) -> Counter:
        return Counter(o.end for o in self.outcomes)

    @property
    def answers(self) -> int:
        return sum(o.answers for o in self.outcomes)

    def fast_pids(self) -> list[str]:
        return [o.pid for o in self.outcomes if o.fast]

    def lines(self) -> list[str]:
        c = self.counts
        fast = [o for o in self.outcomes if o.fast]
        return [
            f"Simulated {count(len(self.outcomes), 'annotator')} ({len(fast)} fast) from {self.started:%Y-%m-%d %H:%M} to {self.ended:%H:%M} "
            f"(simulated time): {self.answers} answers.",
            "Sessions ended: " + ", ".join(f"{end} {n}" for end, n in sorted(c.items())) + ".",
            f"Fast cheaters: {sum(1 for o in fast if o.end == 'excluded')} of {len(fast)} excluded by quality control.",
        ]


class TruthModel:
    """Canonical answers of honest annotators and of fast cheaters for every presentation of a study."""

    def __init__(self, study: Study, plan: Plan) -> None:
        data = study_collection(study)
        scores, _ = study_scores(data, [plan.truth])
        value = {(run, topic): v for run, topic, v in zip(scores["run"], scores["topic"], scores["value"])}
        pairs = list(
            Presentation.objects.filter(study=study, kind=Presentation.Kind.PAIR).values_list(
                "pk", "topic__topic_id", "subtopic__number", "run_a__name", "run_b__name"
            )
        )
        d = []
        for _, topic, subtopic, run_a, run_b in pairs:
            key = topic if subtopic is None else SUBTOPIC_TOPIC.format(topic=topic, subtopic=subtopic)
            d.append(value.get((run_b, key), np.nan) - value.get((run_a, key), np.nan))
        d = np.nan_to_num(np.asarray(d, dtype=np.float64))  # a topic without relevant documents: no preference
        self.latent = dict(zip((p[0] for p in pairs), latent_preference(d, plan.signal))) if pairs else {}
        self.honest = UserModel(noise=plan.noise, signal=plan.signal, annotators=1)
        self.cheater = UserModel(noise=0.0, signal=plan.signal, annotators=1, cheaters=1.0)

    def canonical(self, presentation: Presentation, fast: bool, rng: np.random.Generator) -> int:
        if fast:
            return int(simulate_answers(np.zeros(1), self.cheater, 1, rng)[0, 0, 0])
        if presentation.kind == Presentation.Kind.IDENTICAL:
            return 0
        if presentation.kind == Presentation.Kind.DEGRADED:
            return 2 * int(presentation.expected_sign or -1)
        return int(simulate_answers(np.array([self.latent[presentation.pk]]), self.honest, 1, rng)[0, 0, 0])


def _host() -> tuple[str, bool]:
    """A host name the site accepts and whether requests must be HTTPS (production settings)."""
    hosts = [h for h in settings.ALLOWED_HOSTS if h and "*" not in h and not h.startswith(".")]
    return (hosts[0] if hosts else "localhost"), bool(getattr(settings, "SECURE_SSL_REDIRECT", False))


class _Browser:
    """One annotator's browser: a cookie jar, an address of its own and the study's URLs.

    Each simulated participant arrives from its own address in 10.0.0.0/8 (derived from the pid), as
    real participants do: the per-client limit on newcomers (``throttle.arrival_wait_seconds``)
    counts addresses.
    """

    def __init__(self, study: Study, pid: str) -> None:
        host, self.secure = _host()
        address = str(ipaddress.IPv4Address(0x0A000000 + int(hashlib.sha256(pid.encode()).hexdigest()[:6], 16)))
        self.client = Client(HTTP_HOST=host, REMOTE_ADDR=address)
        self.slug = study.slug

    def url(self, name: str, *args) -> str:
        return reverse(name, args=[self.slug, *args])

    def get(self, path: str, **params):
        return self.client.get(path, params, secure=self.secure)

    def post(self, path: str, data: dict, **extra):
        return self.client.post(path, data, secure=self.secure, **extra)


def _session(study: Study, pid: str, fast: bool, model: TruthModel, rng: np.random.Generator) -> Generator[float, None, Outcome]:
    """One annotator through the pages; yields the seconds until its next request, returns how it ended."""
    browser = _Browser(study, pid)
    outcome = Outcome(pid, fast, "full")
    response = browser.get(browser.url("study_entry"), PROLIFIC_PID=pid, STUDY_ID=PLATFORM_STUDY_ID, SESSION_ID=f"session-{pid}")
    if response.status_code != 302 or response.url != browser.url("study_consent"):
        return outcome  # the study is full (or closed): nothing stored
    yield float(rng.uniform(10, 30))
    response = browser.post(browser.url("study_consent"), {"agree": "on", "version": study.consent_version})
    if response.status_code != 302 or response.url != browser.url("study_instructions"):
        return outcome
    yield float(rng.uniform(20, 60))
    browser.post(browser.url("study_instructions"), {})
    yield float(rng.uniform(5, 20))
    browser.post(browser.url("study_practice"), {"value": -3})
    yield float(rng.uniform(5, 20))
    response = browser.post(browser.url("study_comprehension"), RIGHT_ANSWERS)
    if response.status_code != 302 or response.url != browser.url("study_next_item"):
        outcome.end = "screened"
        return outcome
    for n in itertools.count():
        response = browser.get(browser.url("study_next_item"))
        if response.status_code != 302:
            outcome.end = _ended(study, pid)
            return outcome
        if response.url == browser.url("study_done"):
            outcome.end = "done"
            return outcome
        shown = browser.get(response.url)
        if shown.status_code != 200:
            outcome.end = _ended(study, pid)
            return outcome
        pk = int(response.url.rstrip("/").rsplit("/", 1)[-1])
        assignment = Assignment.objects.select_related("presentation").get(pk=pk)
        canonical = model.canonical(assignment.presentation, fast, rng)
        value = canonical if assignment.a_on_left else -canonical
        seconds = float(rng.uniform(*FAST_SECONDS)) if fast else min(120.0, HONEST_SECONDS[0] + float(rng.exponential(HONEST_SECONDS[1])))
        yield seconds
        ms = int(seconds * 1000)
        reply = browser.post(
            browser.url("study_answer", pk),
            {"value": value, "request_id": f"item-{pk}-{n:04d}", "client_ms": ms, "visible_ms": ms, "first_interaction_ms": ms // 3},
            HTTP_ACCEPT="application/json",
        )
        if reply.status_code == 200:
            outcome.answers += 1
        yield float(rng.uniform(0.3, 1.5))  # the next page loads


def _ended(study: Study, pid: str) -> str:
    status = Annotator.objects.filter(study=study, external_id=pid).values_list("status", flat=True).first()
    return {"excluded": "excluded", "screened": "screened", "finished": "done"}.get(status or "", status or "stopped")


def simulate_annotators(study: Study, plan: Plan, *, progress: Callable[[Outcome], None] | None = None) -> SimulationResult:
    """Run simulated annotators through the study's pages until ``plan.n`` have arrived or the study
    takes no more.

    Annotators arrive every ``ARRIVAL_SECONDS`` (simulated) and work side by side. When one finds
    the study full, arrivals wait until nobody is working (an exclusion may re-open items), then one
    more tries; if that one is refused too, the simulation ends.
    """
    if study.status != Study.Status.OPEN:
        raise StudyError(f"study {study.name!r} is {study.status}: simulated annotators could not start")
    model = TruthModel(study, plan)
    rng = np.random.default_rng(plan.seed)
    expected = plan.n or max(1, round(capacity(study).newcomers * (1 + 2 * plan.fast_share))) + 2
    session_seconds = study.items_per_annotator * (HONEST_SECONDS[0] + HONEST_SECONDS[1]) + 120
    started = clock.now_or(None) - timedelta(seconds=expected * ARRIVAL_SECONDS + session_seconds)
    result = SimulationResult(started=started)
    numbers = itertools.count(study.annotators.filter(external_id__startswith="sim-").count() + 1)
    queue: list[tuple[datetime, int, _Running]] = []
    order = itertools.count()
    arrived = 0
    paused = retrying = False  # a refusal: arrivals wait until nobody works, then one retries
    now = started
    while True:
        may_arrive = (plan.n is None or arrived < plan.n) and not (paused and queue)
        due = max(now, started + timedelta(seconds=arrived * ARRIVAL_SECONDS)) if may_arrive else None
        if queue and (due is None or queue[0][0] <= due):
            now, _, running = heapq.heappop(queue)
        elif due is not None:
            now, arrived = due, arrived + 1
            retrying = paused
            pid, fast = f"sim-{next(numbers):05d}", bool(rng.random() < plan.fast_share)
            running = _Running(pid, fast, _session(study, pid, fast, model, rng))
        else:
            break
        with clock.simulated(now):
            try:
                wait = next(running.session)
            except StopIteration as stop:
                outcome: Outcome = stop.value
                result.outcomes.append(outcome)
                if progress is not None:
                    progress(outcome)
                if outcome.end == "full":
                    if retrying:
                        break
                    paused = True
                continue
        if not running.admitted:
            running.admitted, paused, retrying = True, False, False
        heapq.heappush(queue, (now + timedelta(seconds=wait), next(order), running))
    result.ended = now
    return result


@dataclass
class _Running:
    pid: str
    fast: bool
    session: Generator[float, None, Outcome]
    admitted: bool = False
