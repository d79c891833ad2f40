"""Benchmark: discriminative power by paired bootstrap (docs/metrics.md#paired-bootstrap, docs/metrics.md#discriminative-power), vectorised vs. a per-pair loop.

Input: 25 synthetic metrics x 24 runs (276 run pairs per metric) x 100 topics, B = 1000
resamples, alpha = 0.05. Scores are seeded: a per-run effect, a per-topic difficulty, metric-
specific noise, clipped to [0, 1] and rounded to 4 decimals (so ties occur as in real tables).

* ours: :func:`evaluation.meta.significance.discriminative_power` -- one set of B index vectors
  as per-topic multiplicities, every pair of every metric at once (resample sums from per-run
  sums, sums of squares from one matrix product);
* loop: the straightforward implementation -- the same B index vectors, then for every metric and
  every run pair ``w[idx]`` (B x n), its mean and sd, ``t*`` and the ASL (vectorised over B only).

Both use the same resamples, so their ASLs must agree (checked). Each timing is the best of
``--repeat`` rounds. Last line: ``seconds=<s> speedup_vs_loop=<x>`` (``s`` = our time).

BLAS threads: unless ``OPENBLAS_NUM_THREADS`` (or ``OMP_NUM_THREADS``) is already set, the script
sets it to 1 before numpy loads. On this 2-core machine one BLAS thread is as fast as two when
idle and much steadier when another process holds a core (a 2-thread GEMM then waits for its
slow thread); run ``OPENBLAS_NUM_THREADS=2 python benchmarks/bench_meta.py`` for the other setting.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from pathlib import Path

if "OPENBLAS_NUM_THREADS" not in os.environ and "OMP_NUM_THREADS" not in os.environ:
    os.environ["OPENBLAS_NUM_THREADS"] = "1"

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evaluation.meta._matrix import ScoreCube  # noqa: E402
from evaluation.meta.significance import discriminative_power, run_pairs  # noqa: E402


def synthetic_cube(metrics: int, runs: int, topics: int, seed: int) -> ScoreCube:
    rng = np.random.default_rng(seed)
    run_effect = rng.normal(0.0, 0.08, size=runs)
    difficulty = rng.normal(0.0, 0.15, size=topics)
    base = 0.5 + difficulty[:, None] + run_effect[None, :]
    values = base[None] + rng.normal(0.0, 0.12, size=(metrics, topics, runs))
    values = np.round(np.clip(values, 0.0, 1.0), 4)
    return ScoreCube(
        values,
        tuple(f"M{g:02d}" for g in range(metrics)),
        tuple(f"{t:03d}" for t in range(topics)),
        tuple(f"run{j:02d}" for j in range(runs)),
    )


def loop_power(cube: ScoreCube, B: int, alpha: float, seed: int) -> np.ndarray:
    """ASLs (G, P) by a per-pair loop over the same index vectors as discriminative_power(seed)."""
    G, n, m = cube.values.shape
    idx = np.random.default_rng(seed).integers(0, n, size=(B, n))
    a, b = run_pairs(m)
    out = np.empty((G, a.size))
    for g in range(G):
        for k in range(a.size):
            z = cube.values[g, :, a[k]] - cube.values[g, :, b[k]]
            z_bar, s = z.mean(), z.std(ddof=1)
            if s <= 1e-12:
                t0 = 0.0 if abs(z_bar) <= 1e-12 else math.inf
                w = np.zeros(n)
            else:
                t0 = z_bar / (s / math.sqrt(n))
                w = z - z_bar
            ws = w[idx]
            mean, sd = ws.mean(axis=1), ws.std(axis=1, ddof=1)
            with np.errstate(divide="ignore", invalid="ignore"):
                t = np.abs(mean / (sd / math.sqrt(n)))
            flat = sd <= 1e-12 * np.maximum(np.abs(mean), 1.0)
            t[flat] = np.where(np.abs(mean[flat]) <= 1e-12, 0.0, math.inf)
            out[g, k] = np.mean(t >= abs(t0) - 1e-12)
    return out


def best_of(repeat: int, fn):
    best, result = math.inf, None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return best, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--metrics", type=int, default=25)
    parser.add_argument("--runs", type=int, default=24)
    parser.add_argument("--topics", type=int, default=100)
    parser.add_argument("--B", type=int, default=1000)
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=20261122)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    cube = synthetic_cube(args.metrics, args.runs, args.topics, args.seed)
    pairs = args.runs * (args.runs - 1) // 2
    print(f"input: {args.metrics} metrics x {args.runs} runs ({pairs} pairs) x {args.topics} topics, B={args.B}")
    threads = os.environ.get("OPENBLAS_NUM_THREADS") or os.environ.get("OMP_NUM_THREADS")
    print(f"BLAS threads: {threads}; cores: {os.cpu_count()}; load average: {os.getloadavg()[0]:.2f}")
    ours, result = best_of(args.repeat, lambda: discriminative_power(cube, test="bootstrap", B=args.B, alpha=args.alpha, rng=args.seed))
    print(f"vectorised: {ours:.3f} s (best of {args.repeat})")
    loop, asl_loop = best_of(max(1, args.repeat - 1), lambda: loop_power(cube, args.B, args.alpha, args.seed))
    print(f"per-pair loop: {loop:.3f} s (best of {max(1, args.repeat - 1)})")
    asl_ours = result.pairs["asl"].to_numpy().reshape(asl_loop.shape)
    differ = int((np.abs(asl_ours - asl_loop) > 1e-9).sum())
    print(f"ASLs differing between the two implementations: {differ} of {asl_ours.size}")
    print(f"mean discriminative power at alpha={args.alpha}: {result.summary['power'].mean():.4f}")
    print(f"seconds={ours:.3f} speedup_vs_loop={loop / ours:.1f}")


if __name__ == "__main__":
    main()
