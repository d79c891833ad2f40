"""A seeded synthetic diversity collection shared by the benchmarks (bench_report.py, bench_coverage.py).

Per topic 3-6 weighted subtopics (Dirichlet weights), 40 judged documents with grades 0-4 (a
quarter relevant per subtopic), and runs of depth 20 that rank by ``quality x gain + N(0, 1)``:
runs of clearly different quality, as in a real track.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

PAPER_QUALITY = (2.0, 1.0, 0.5, 0.2, 0.0)  # how well each run ranks by gain (the paper-sized study's five runs)
DOCS, DEPTH = 40, 20


def run_qualities(n: int) -> dict[str, float]:
    """Run name -> quality: the paper-sized study's five, else ``n`` evenly spread from 2.0 to 0.0."""
    qualities = PAPER_QUALITY if n == len(PAPER_QUALITY) else tuple(float(q) for q in np.linspace(2.0, 0.0, n))
    return {f"sys-{chr(ord('a') + i)}": q for i, q in enumerate(qualities)}


def write_collection(folder: Path, rng: np.random.Generator, quality: dict[str, float], topics: int) -> dict[str, Path]:
    """A synthetic diversity collection: qrels, intent weights, and runs that rank by noisy gain."""
    qrels, intents, runs = [], [], {name: [] for name in quality}
    for t in range(1, topics + 1):
        m = int(rng.integers(3, 7))
        weights = rng.dirichlet(np.ones(m))
        grades = np.where(rng.random((DOCS, m)) < 0.25, rng.integers(1, 5, size=(DOCS, m)), 0)
        for i in range(m):
            intents.append(f"{t}\t{i + 1}\t{float(weights[i])!r}")
            qrels += [f"{t} {i + 1} d{t}-{d} {grades[d, i]}" for d in range(DOCS)]
        gain = grades @ weights
        for name, q in quality.items():
            ranked = np.argsort(-(q * gain + rng.normal(0, 1, DOCS)))[:DEPTH]
            runs[name] += [f"{t} Q0 d{t}-{d} {r + 1} {DEPTH - r} {name}" for r, d in enumerate(ranked)]
    paths = {"qrels": folder / "qrels.txt", "intents": folder / "intents.tsv"}
    paths["qrels"].write_text("\n".join(qrels) + "\n")
    paths["intents"].write_text("\n".join(intents) + "\n")
    for name, lines in runs.items():
        paths[name] = folder / f"{name}.run"
        paths[name].write_text("\n".join(lines) + "\n")
    return paths
