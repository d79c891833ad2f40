"""Benchmark: our engine vs. pyndeval (official ndeval.c) on 100 runs x 50 topics at depth 20 (or ``--depth``).

Input: the TREC 2014 diversity qrels; 100 synthetic runs, each topic's list a random sample of 20
judged documents (seeded); deeper than a topic's judged documents (``--depth 1000``: 5 million run
lines), all of them shuffled, then unjudged filler documents. Each side is handed the same data in its own native in-memory form,
built before the clock starts, and everything from there on is timed:

* pyndeval: lists of ``SubtopicQrel`` / ``ScoredDoc`` objects; timed: ``RelevanceEvaluator(qrels)``
  then ``evaluate(run)`` for every run (its measures: ERR-IA, nERR-IA, alpha-DCG, alpha-nDCG, P-IA,
  strec @5/10/20, NRBP, nNRBP, MAP-IA), i.e. its conversion to C structures plus the evaluation;
* ours: parallel columns (Python lists of topic ids, docids, grades / scores: what a reader or a
  database query yields); timed: the public builders (``judgments_from_arrays`` +
  ``build_collection``, ``runs_from_arrays`` with pyndeval's order: score desc, docid asc) and one
  ``score_matrix`` call. "ndeval set": the same 21 measures; "all": every registered metric at
  default parameters at cutoffs 5, 10, 20 (raw lists), and separately with every condensed variant.

The engine leaves the process's allocator alone (glibc's documented ``MALLOC_TRIM_THRESHOLD_`` and
``MALLOC_MMAP_THRESHOLD_`` environment variables tune it for a whole process, both sides alike).

For transparency the script also times "all" starting from the row tuples (the columns are then
made inside the timed job). Each timing is the best of ``--repeat`` interleaved rounds (fresh
objects each round, so no cache survives between rounds), by the wall clock or, with
``--clock cpu``, by this process's CPU time (steadier when other processes share the machine; both
sides run in this one thread). Last line:
``ratio_ndeval_set=<x> ratio_all=<y>`` (ours / pyndeval). ``--exclude-tag adhoc`` leaves the ad hoc
baselines out of "all" (the diversity metrics only, the set before they were registered).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable
from itertools import chain
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evaluation import build_collection, judgments_from_arrays, runs_from_arrays, score_matrix  # noqa: E402
from evaluation.metrics import default_measures, parse_measure  # noqa: E402

QRELS = ROOT / "tests" / "evaluation" / "data" / "reference" / "trec2014" / "qrels.diversity.tsv"
NDEVAL_SET = [f"{m}@{k}" for m in ("ERR-IA", "nERR-IA", "alpha-DCG", "alpha-nDCG", "P-IA", "I-rec") for k in (5, 10, 20)] + [
    "NRBP",
    "nNRBP",
    "MAP-IA",
]


def load_qrels() -> list[tuple[str, str, str, int]]:
    with open(QRELS) as handle:
        return [(t, s, d, int(g)) for t, s, d, g in (line.split() for line in handle if line.strip())]


def make_runs(qrels: list[tuple[str, str, str, int]], n_runs: int, depth: int, seed: int) -> list[list[tuple[str, str, float]]]:
    """Each topic's list: ``depth`` judged documents sampled in random order, or, when the topic has fewer
    (TREC 2014: 175-457), all of them shuffled and then unjudged filler documents up to ``depth``."""
    by_topic: dict[str, set[str]] = {}
    for t, _, d, _ in qrels:
        by_topic.setdefault(t, set()).add(d)
    rng = random.Random(seed)
    runs = []
    for _ in range(n_runs):
        rows = []
        for topic, docs in sorted(by_topic.items()):
            judged = rng.sample(sorted(docs), min(depth, len(docs)))
            filler = [f"unjudged-{topic}-{n:07d}" for n in rng.sample(range(10**7), depth - len(judged))]
            for rank, doc in enumerate(judged + filler):
                rows.append((topic, doc, float(depth - rank)))
        runs.append(rows)
    return runs


Columns = tuple[list, list, list, list]


def qrels_columns(qrels: list[tuple[str, str, str, int]]) -> Columns:
    """``topic subtopic docid grade`` rows as four parallel lists."""
    return tuple(list(column) for column in zip(*qrels))  # type: ignore[return-value]


def run_columns(runs: list[list[tuple[str, str, float]]]) -> Columns:
    """Rows of every run as parallel lists ``run, topic, docid, score``."""
    rows = list(chain.from_iterable(runs))
    names = list(chain.from_iterable([f"r{n}"] * len(lines) for n, lines in enumerate(runs)))
    return names, [r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows]


def score_columns(qrels: Columns, runs: Columns, measures: list) -> object:
    collection = build_collection(judgments_from_arrays(*qrels))
    built = runs_from_arrays(*runs, order="pyndeval")
    return score_matrix(collection, built, [m if not isinstance(m, str) else parse_measure(m) for m in measures])


def ours(qrels, runs, measures) -> Callable[[], object]:
    """Our job from native columns (built here, before timing)."""
    q, r = qrels_columns(qrels), run_columns(runs)
    return lambda: score_columns(q, r, measures)


def ours_from_tuples(qrels, runs, measures) -> Callable[[], object]:
    """Our job with the tuple-to-column conversion inside the timing."""
    return lambda: score_columns(qrels_columns(qrels), run_columns(runs), measures)


def pyndeval_job(qrels, runs) -> Callable[[], object]:
    import pyndeval

    sq = [pyndeval.SubtopicQrel(t, s, d, g) for t, s, d, g in qrels]
    sr = [[pyndeval.ScoredDoc(t, d, s) for t, d, s in rows] for rows in runs]

    def go():
        evaluator = pyndeval.RelevanceEvaluator(sq)
        return [evaluator.evaluate(r) for r in sr]

    return go


CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}


def best_of(jobs: dict[str, Callable[[], object]], repeat: int, clock: Callable[[], float] = time.perf_counter) -> dict[str, float]:
    """Best time of each job by ``clock`` over ``repeat`` interleaved rounds (noise hits all jobs alike)."""
    best = {name: float("inf") for name in jobs}
    for _ in range(repeat):
        for name, job in jobs.items():
            start = clock()
            job()
            best[name] = min(best[name], clock() - start)
    return best


def peak_memory(side: str, args: argparse.Namespace) -> tuple[float, float]:
    """``(extra, peak)`` MiB of a fresh process that builds ``side``'s input and runs its job once:
    extra = the job's peak resident memory above the memory held before it started."""
    import subprocess

    command = [sys.executable, __file__, "--peak-of", side, "--runs", str(args.runs), "--depth", str(args.depth), "--seed", str(args.seed)]
    result = subprocess.run(command + (["--scale"] if args.scale else []), capture_output=True, text=True, check=True)
    extra, peak = result.stdout.split()[-2:]
    return float(extra), float(peak)


def run_once_and_report_peak(side: str, args: argparse.Namespace) -> None:
    """The child of ``--memory``/``--scale``: input first, then the job; prints ``extra peak`` (MiB)."""
    qrels = load_qrels()
    if args.scale:
        qrels = copies_of_topics(qrels, SCALE_COPIES)
        job = scale_job(side, qrels, args)
    else:
        runs = make_runs(qrels, args.runs, args.depth, args.seed)
        job = pyndeval_job(qrels, runs) if side == "ndeval" else ours(qrels, runs, NDEVAL_SET)
        del runs
    import gc

    gc.collect()
    before = own_memory_kb("VmRSS:")
    reset_peak()
    result = job()
    print((own_memory_kb("VmHWM:") - before) / 1024, own_memory_kb("VmHWM:") / 1024)
    del result


SCALE_COPIES = 4  # --scale: TREC 2014's 50 topics four times over (200 topics)


def copies_of_topics(qrels: list[tuple[str, str, str, int]], copies: int) -> list[tuple[str, str, str, int]]:
    """The qrels with every topic repeated ``copies`` times under new ids (``251``, ``251-1``, ...)."""
    return [(t if c == 0 else f"{t}-{c}", s, d, g) for c in range(copies) for t, s, d, g in qrels]


def scale_runs(qrels: list[tuple[str, str, str, int]], n_runs: int, depth: int, seed: int):
    """``n_runs`` runs made one at a time (seeded per run): each yields its rows ``(topic, docid, score)``."""
    by_topic: dict[str, list[str]] = {}
    for t, _, d, _ in qrels:
        by_topic.setdefault(t, []).append(d)
    pools = {t: sorted(set(docs)) for t, docs in sorted(by_topic.items())}

    def rows(n: int) -> list[tuple[str, str, float]]:
        rng = random.Random(seed * 1_000_003 + n)
        out = []
        for topic, docs in pools.items():
            chosen = rng.sample(docs, min(depth, len(docs)))
            out.extend((topic, doc, float(depth - rank)) for rank, doc in enumerate(chosen))
        return out

    return (rows(n) for n in range(n_runs))


def scale_job(side: str, qrels, args: argparse.Namespace) -> Callable[[], object]:
    """--scale: runs made and scored one after another (pyndeval: evaluate per run, results kept;
    ours: one score_matrix call over a generator of runs)."""
    if side == "ndeval":
        import pyndeval

        def go():
            evaluator = pyndeval.RelevanceEvaluator([pyndeval.SubtopicQrel(t, s, d, g) for t, s, d, g in qrels])
            return [
                evaluator.evaluate([pyndeval.ScoredDoc(t, d, s) for t, d, s in rows])
                for rows in scale_runs(qrels, args.runs, args.depth, args.seed)
            ]

        return go

    def go():
        collection = build_collection(judgments_from_arrays(*qrels_columns(qrels)))
        measures = [parse_measure(m) for m in NDEVAL_SET]
        runs = (
            runs_from_arrays([f"r{n}"] * len(rows), [r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows], order="pyndeval")[0]
            for n, rows in enumerate(scale_runs(qrels, args.runs, args.depth, args.seed))
        )
        return score_matrix(collection, runs, measures)

    return go


def reset_peak() -> None:
    """Reset this process's peak resident memory (Linux: ``/proc/self/clear_refs``), so VmHWM is the job's."""
    try:
        with open("/proc/self/clear_refs", "w") as handle:
            handle.write("5")
    except OSError:  # not Linux: the peak then includes the input
        pass


def own_memory_kb(field: str = "VmHWM:") -> float:
    """This process's own resident memory (kB) from /proc/self/status: ``VmHWM:`` (peak) or ``VmRSS:``
    (now). (``ru_maxrss`` also counts the parent's memory when the child was started by vfork and
    exec, as subprocess does: a benchmark that already holds both sides' inputs would report its own
    size for either child.)"""
    import resource

    try:
        with open("/proc/self/status") as status:
            return next(float(line.split()[1]) for line in status if line.startswith(field))
    except (OSError, StopIteration):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # kB on Linux, elsewhere an upper bound


def memory_report(args: argparse.Namespace) -> None:
    """One child per side; prints the extra and peak memory and their ratio."""
    ours_extra, ours_peak = peak_memory("ours", args)
    ndeval_extra, ndeval_peak = peak_memory("ndeval", args)
    what = f"{args.runs} runs x {50 * (SCALE_COPIES if args.scale else 1)} topics, depth {args.depth}"
    print(
        f"memory ({what}, ndeval set): extra ours {ours_extra:.0f} MiB, pyndeval {ndeval_extra:.0f} MiB; peak ours {ours_peak:.0f}, pyndeval {ndeval_peak:.0f}"
    )
    print(f"extra_ours_mib={ours_extra:.0f} extra_pyndeval_mib={ndeval_extra:.0f} ratio_extra_memory={ours_extra / ndeval_extra:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--depth", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--seed", type=int, default=20261122)
    parser.add_argument("--clock", choices=tuple(CLOCKS), default="wall", help="wall time, or this process's CPU time (a shared machine)")
    parser.add_argument(
        "--exclude-tag",
        action="append",
        default=[],
        help="leave metrics with this tag out of 'all' (e.g. adhoc: the diversity metrics only)",
    )
    parser.add_argument("--no-extras", action="store_true", help="time only pyndeval, the ndeval set and all raw measures (deep runs)")
    parser.add_argument("--memory", action="store_true", help="also print the extra and peak memory of each side (one fresh process each)")
    parser.add_argument(
        "--scale",
        action="store_true",
        help="memory only: 1,000 runs x 200 topics x depth 100 (20 M run lines) made and scored run by run (--runs/--depth change it)",
    )
    parser.add_argument("--peak-of", choices=("ours", "ndeval"), help=argparse.SUPPRESS)  # the child of --memory
    args = parser.parse_args()
    if args.scale:
        args.runs = args.runs if args.runs != 100 else 1000
        args.depth = args.depth if args.depth != 20 else 100
    if args.peak_of:
        return run_once_and_report_peak(args.peak_of, args)
    if args.scale:
        return memory_report(args)
    qrels = load_qrels()
    runs = make_runs(qrels, args.runs, args.depth, args.seed)
    raw_all = [m for m in default_measures(condensed=False) if not m.spec.tags & set(args.exclude_tag)]
    with_condensed = [m for m in default_measures(condensed=True) if not m.spec.tags & set(args.exclude_tag)]
    jobs = {"ndeval": pyndeval_job(qrels, runs), "set": ours(qrels, runs, NDEVAL_SET), "all": ours(qrels, runs, raw_all)}
    if not args.no_extras:
        jobs |= {"cond": ours(qrels, runs, with_condensed), "tuples": ours_from_tuples(qrels, runs, raw_all)}
    times = best_of(jobs, args.repeat, CLOCKS[args.clock])
    t_ndeval, t_set, t_all = times["ndeval"], times["set"], times["all"]
    print(f"input: {args.runs} runs x 50 topics, depth {args.depth}, {len(qrels)} qrels lines; best of {args.repeat}")
    print(f"clock: {args.clock}")
    if args.exclude_tag:
        print(f"'all' leaves out metrics tagged {', '.join(args.exclude_tag)}")
    print(f"pyndeval ({len(NDEVAL_SET)} measures):          {t_ndeval:8.4f} s")
    print(f"ours, ndeval set ({len(NDEVAL_SET)} measures):  {t_set:8.4f} s")
    print(f"ours, all raw ({len(raw_all)} measures):       {t_all:8.4f} s")
    if not args.no_extras:
        print(f"ours, all + condensed ({len(with_condensed)}): {times['cond']:8.4f} s  (ratio {times['cond'] / t_ndeval:.3f})")
        print(f"ours, all raw from row tuples:   {times['tuples']:8.4f} s  (ratio {times['tuples'] / t_ndeval:.3f})")
    if args.memory:
        memory_report(args)
    print(f"ratio_ndeval_set={t_set / t_ndeval:.3f} ratio_all={t_all / t_ndeval:.3f}")


if __name__ == "__main__":
    main()
