"""Benchmark: whole commands from files, ``python -m evaluation score`` against the ndeval program.

Writes the TREC 2014 diversity qrels and ``--runs`` synthetic runs of ``--depth`` (as
``bench_metrics.py`` makes them: judged documents first, sampled, then unjudged filler) as TREC run
files to a temporary folder, then times, by the CPU time of the child processes (steady on a shared
machine), best of ``--repeat``:

* ndeval (the C program of pyndeval's sources) once per run file: ``ndeval qrels run`` (its 21
  measures at cutoffs 5, 10, 20);
* ``python -m evaluation score --qrels ... --run ... (all runs) --measures <the same 21>`` (reading,
  scoring, writing the table), started as a fresh process.

Build ndeval from the pyndeval 0.0.8 source distribution (``pip download --no-binary :all:
--no-deps pyndeval==0.0.8``, then ``gcc -O2 -o ndeval pyndeval-0.0.8/src/ndeval.c -lm``) and pass
``--ndeval PATH``. Last line: ``ratio_cli=<ours / ndeval>``.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_metrics import NDEVAL_SET, QRELS, ROOT, load_qrels, make_runs  # noqa: E402


def write_runs(folder: Path, runs: list[list[tuple[str, str, float]]]) -> list[Path]:
    paths = []
    for n, rows in enumerate(runs):
        path = folder / f"r{n}.run"
        ranks: dict[str, int] = {}
        with open(path, "w") as handle:
            for topic, doc, score in rows:
                ranks[topic] = ranks.get(topic, 0) + 1
                handle.write(f"{topic} Q0 {doc} {ranks[topic]} {score:g} r{n}\n")
        paths.append(path)
    return paths


def child_cpu(commands: list[list[str]]) -> float:
    """CPU seconds (user + system) the commands take, run one after the other."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    for command in commands:
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL, env={**os.environ, "PYTHONPATH": str(ROOT)})
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ndeval", required=True, help="the ndeval program built from pyndeval's ndeval.c")
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--depth", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=20261122)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-cli-") as tmp:
        folder = Path(tmp)
        paths = write_runs(folder, make_runs(load_qrels(), args.runs, args.depth, args.seed))
        ndeval = [[args.ndeval, str(QRELS), str(p)] for p in paths]
        runs = [arg for p in paths for arg in ("--run", str(p))]
        ours = [[sys.executable, "-m", "evaluation", "score", "--qrels", str(QRELS), *runs, "--measures", *NDEVAL_SET,
                 "--per-topic", "-o", str(folder / "scores.tsv")]]  # fmt: skip
        best = {"ndeval": float("inf"), "ours": float("inf")}
        for _ in range(args.repeat):
            best["ndeval"] = min(best["ndeval"], child_cpu(ndeval))
            best["ours"] = min(best["ours"], child_cpu(ours))
    lines = args.runs * 50 * args.depth
    print(
        f"input: {args.runs} run files x 50 topics, depth {args.depth} ({lines:,} lines); best of {args.repeat}, CPU time of the children"
    )
    print(f"ndeval, one process per run file: {best['ndeval']:8.3f} s")
    print(f"python -m evaluation score:       {best['ours']:8.3f} s")
    print(f"ratio_cli={best['ours'] / best['ndeval']:.3f}")


if __name__ == "__main__":
    main()
