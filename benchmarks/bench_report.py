"""Benchmark: the study report of a paper-sized study (docs/studyapp.md#study-report).

The study: 5 runs (10 run pairs) x 50 topics of a seeded synthetic collection (3-6 weighted
subtopics per topic, 40 judged documents with grades 0-4, runs of depth 20 of different quality),
3 subtopics kept, both levels: 500 topic-level + 1,500 subtopic-level presentations, 3 answers
each = 6,000 answers. The
annotators and their answers are written straight into a fresh SQLite database (the benchmark
times the report, not the annotator pages); the answers follow D#-nDCG@10 plus noise, as the
simulator's user model does.

Timed: ``build_report`` + ``write_report`` into a temporary directory (B = 1000 bootstrap
resamples, 31 metrics at depth 10, three agreement levels, discriminative power, intuitiveness,
HTML, CSV tables, the figures of the primary level as PNG and SVG), best of ``--repeat`` rounds.
Breakdown: building the collection and reading the answers, scoring, meta-evaluation, rendering.
Last line: ``seconds=<s> collection=<s> scoring=<s> meta=<s> rendering=<s>`` (elapsed); the line
before gives the CPU seconds of each phase (elapsed time on a busy machine is mostly waiting). The
goal is under 10 s.

Also timed, on standard error: the dashboard's live preview (``services.analysis.preview.study_preview``:
the MUP ranking of both levels with B = 1000 intervals and the separation estimate), once with
the study's scores to compute (the first view of a study) and then with them cached (every later
state of the answers), best of ``--repeat``, with its phases; the goal is a few hundred ms.

Bigger studies: ``--runs 10 --topics 100`` is 9x the paper's size (45 run pairs x 100 topics: 4,500
topic-level + 13,500 subtopic-level presentations, 54,000 answers); the runs' qualities are spread
evenly from 2.0 to 0.0 (the five of the paper-sized study are 2.0, 1.0, 0.5, 0.2 and 0.0).

BLAS threads: one, unless ``OPENBLAS_NUM_THREADS`` / ``OMP_NUM_THREADS`` is set (as bench_meta.py).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

if "OPENBLAS_NUM_THREADS" not in os.environ and "OMP_NUM_THREADS" not in os.environ:
    os.environ["OPENBLAS_NUM_THREADS"] = "1"

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
WORK = Path(tempfile.mkdtemp(prefix="bench-report-"))
os.environ["DATABASE_URL"] = f"sqlite:///{WORK / 'bench.sqlite3'}"
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "studyapp.settings")

import django  # noqa: E402

django.setup()

import numpy as np  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import transaction  # noqa: E402
from django.utils import timezone  # noqa: E402

from benchmarks.synthetic import PAPER_QUALITY, run_qualities, write_collection  # noqa: E402

TOPICS = 50


TRUTH = "D#-nDCG@10"
K = 3


def build_study(seed: int, n_runs: int = len(PAPER_QUALITY), topics: int = TOPICS):
    """Import the collection, create the study, write 3 answers per presentation."""
    from evaluation.collection import SUBTOPIC_TOPIC
    from evaluation.meta.simulate import UserModel, latent_preference, simulate_answers
    from studyapp.models import Annotator, Assignment, Preference, Presentation
    from studyapp.services.analysis.study_analysis import study_collection, study_scores
    from studyapp.services.collections.importing import import_collection
    from studyapp.services.design.study_config import parse_config
    from studyapp.services.design.study_design import create_study

    call_command("migrate", verbosity=0)
    rng = np.random.default_rng(seed)
    quality = run_qualities(n_runs)
    files = write_collection(WORK, rng, quality, topics)
    import_collection("synthetic", qrels=files["qrels"], intents=files["intents"], runs=[files[name] for name in quality])
    config = {
        "runs": list(quality),
        "topic_rule": {"count": topics, "min_subtopics": 3},
        "subtopics_per_topic": 3,
        "levels": ["topic", "subtopic"],
        "annotators_per_presentation": K,
        "items_per_annotator": 50,
    }
    study = create_study("synthetic", "Paper-sized study", parse_config(config)).study
    scores, _ = study_scores(study_collection(study), [TRUTH])
    value = {(run, topic): v for run, topic, v in zip(scores["run"], scores["topic"], scores["value"])}
    pairs = list(
        Presentation.objects.filter(study=study).values_list("pk", "topic__topic_id", "subtopic__number", "run_a__name", "run_b__name")
    )
    d = np.nan_to_num(
        [
            value[b, t if s is None else SUBTOPIC_TOPIC.format(topic=t, subtopic=s)]
            - value[a, t if s is None else SUBTOPIC_TOPIC.format(topic=t, subtopic=s)]
            for _, t, s, a, b in pairs
        ]
    )
    answers = simulate_answers(latent_preference(d, 2.0), UserModel(noise=1.0, annotators=K), 1, rng)[0]  # (P, K)
    now = timezone.now()
    per_annotator = config["items_per_annotator"]
    # answer j of presentation p takes slot j * P + perm[p]: an annotator holds per_annotator consecutive
    # slots, and the K slots of one presentation are P > per_annotator apart, so never with one annotator
    P = len(pairs)
    perm = rng.permutation(P)
    with transaction.atomic():
        n_annotators = -(-P * K // per_annotator)
        annotators = Annotator.objects.bulk_create(
            [
                Annotator(study=study, external_id=f"bench-{n}", platform="prolific", status=Annotator.Status.FINISHED)
                for n in range(n_annotators)
            ]
        )
        assignments, values = [], []
        for p in range(P):
            for j in range(K):
                slot = j * P + int(perm[p])
                a_on_left = bool(rng.random() < 0.5)
                assignments.append(
                    Assignment(
                        annotator=annotators[slot // per_annotator],
                        presentation_id=pairs[p][0],
                        position=slot % per_annotator + 1,
                        a_on_left=a_on_left,
                        assigned_at=now,
                        served_at=now,
                        lease_expires_at=now,
                    )
                )
                values.append((int(answers[p, j]), a_on_left))
        Assignment.objects.bulk_create(assignments, batch_size=2000)
        Preference.objects.bulk_create(
            [
                Preference(assignment=a, value=v if left else -v, canonical=v, server_seconds=20.0, answered_at=now)
                for a, (v, left) in zip(assignments, values)
            ],
            batch_size=2000,
        )
    return study


def preview_line(study, repeat: int) -> None:
    """Time the dashboard's live preview: cold (scores computed) and warm (scores cached), on stderr."""
    from django.core.cache import cache

    from studyapp.services.analysis.preview import study_preview

    def timed() -> tuple[float, float, dict[str, float], str]:
        start, start_cpu = time.perf_counter(), time.process_time()
        preview = study_preview(study)
        return time.perf_counter() - start, time.process_time() - start_cpu, preview.seconds, preview.sentence

    cache.clear()
    cold = timed()
    warm = min((timed() for _ in range(repeat)), key=lambda t: t[0])
    phases = " ".join(f"{k}={v * 1000:.0f}" for k, v in warm[2].items())
    print(f"preview: {warm[3]}", file=sys.stderr)
    print(
        f"preview_ms cold={cold[0] * 1000:.0f} (cpu {cold[1] * 1000:.0f}) warm={warm[0] * 1000:.0f} (cpu {warm[1] * 1000:.0f}) {phases}",
        file=sys.stderr,
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="rounds; the best is reported (default 3)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--runs", type=int, default=len(PAPER_QUALITY), help="runs in the study (default 5; 10 with --topics 100 is 9x)")
    parser.add_argument("--topics", type=int, default=TOPICS, help=f"topics in the study (default {TOPICS})")
    args = parser.parse_args()
    if args.runs < 2 or args.runs > 26 or args.topics < 1:
        parser.error("--runs must be 2-26 and --topics at least 1")
    from studyapp.models import Preference
    from studyapp.services.analysis.report import build_report, write_report
    from studyapp.services.analysis.study_analysis import Timer

    study = build_study(args.seed, args.runs, args.topics)
    print(f"study: {args.runs} runs, {args.topics} topics, 3 subtopics, both levels; {Preference.objects.count()} answers", file=sys.stderr)
    best = None
    for _ in range(args.repeat):
        timer = Timer()
        start, start_cpu = time.perf_counter(), time.process_time()
        report = build_report(study, timer=timer)
        with tempfile.TemporaryDirectory() as out:
            write_report(report, out)
        seconds, cpu = time.perf_counter() - start, time.process_time() - start_cpu
        if best is None or seconds < best[0]:
            best = (seconds, cpu, timer, report.summary["best"])
    seconds, cpu, timer, top = best
    preview_line(study, args.repeat)
    print(f"best by MUP: {top['measure']} {top['value']:.3f} (truth {TRUTH})", file=sys.stderr)
    print("cpu: " + " ".join(f"{k}={v:.2f}" for k, v in timer.cpu.items()) + f" total={cpu:.2f}", file=sys.stderr)
    print(f"seconds={seconds:.2f} " + " ".join(f"{k}={v:.2f}" for k, v in timer.seconds.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
