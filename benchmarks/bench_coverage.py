"""Benchmark: do the agreement intervals cover the truth, and does the best set hold it? (docs/meta.md#interval-coverage)

A planted truth (D#-nDCG@10) and the simulator's user model (``evaluation.meta.simulate``: signal 2,
noise 1, 3 answers per pair, as bench_report.py) on a *population* of synthetic topics
(benchmarks/synthetic.py, 5 runs; ``--population`` topics, default 1,000), every candidate metric the
study report scores (every registered metric at depth 10).

Population values (exact). Every statistic is a ratio of sums over run pairs of per-pair terms
(``evaluation.meta.agreement.weighted_sums``); as a study samples more and more topics it tends to
the ratio of the population's *expected* sums. The expectation of each pair's terms is computed
exactly from the user model: the distribution of one answer is the normal mass of each rounding
cell (ends open), that of the sum of k answers its k-fold convolution, and the subrange of a pair
depends on that sum. Delta bins use the population's mean |d| of each metric.

Simulated studies draw ``--topics-paper`` (default 50, the paper-sized study of bench_report.py and
Chen et al.) or ``--topics-small`` (default 12, the demo) topics without replacement, simulate the
answers, and run ``evaluation.meta.agreement.agreement`` (the report's intervals) and
``evaluation.meta.bestset.best_set`` (B = ``--B``). Coverage is the share of the intervals given
(statistic x subset x metric; none where there is too little data) that hold the population value;
``truth_in_best_set`` the share of paper-sized studies whose best set holds the truth, and
``mean_best_set_size`` its mean size there.

Last line: ``coverage_small=<x> coverage_paper=<y> truth_in_best_set=<z> mean_best_set_size=<s>``.
Goal: coverage in [0.93, 0.97] at both sizes and truth_in_best_set >= 0.95. Breakdowns (per
statistic, per kind of subset) go to standard error. BLAS threads: one unless set (as bench_meta.py).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import warnings
from pathlib import Path

if "OPENBLAS_NUM_THREADS" not in os.environ and "OMP_NUM_THREADS" not in os.environ:
    os.environ["OPENBLAS_NUM_THREADS"] = "1"

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
from scipy.stats import norm  # noqa: E402

from benchmarks.synthetic import run_qualities, write_collection  # noqa: E402
from evaluation import evaluate, load_collection, read_run  # noqa: E402
from evaluation.io.preferences import SCALE  # noqa: E402
from evaluation.meta._matrix import score_cube  # noqa: E402
from evaluation.meta.agreement import BINS, STATISTICS, SUBRANGES, SUBSETS, agreement, signs, statistics_from_sums, subrange_masks  # noqa: E402
from evaluation.meta.bestset import best_set  # noqa: E402
from evaluation.meta.simulate import StudyPairs, UserModel, latent_preference, simulate_answers  # noqa: E402
from evaluation.metrics import REGISTRY, Measure  # noqa: E402

TRUTH = "D#-nDCG@10"
DEPTH = 10
RUNS = 5  # the paper-sized study's runs
SUMS = ("AD", "N", "NM", "NU", "U", "UJ", "UT")


def candidate_measures(depth: int = DEPTH) -> list[str]:
    """Every registered metric at default parameters cut at ``depth`` (what the study report scores)."""
    return [Measure(spec, dict(spec.defaults), depth if spec.cutoff != "none" else None).label for spec in REGISTRY.values()]


def population(topics: int, seed: int) -> StudyPairs:
    """Every run pair of ``topics`` synthetic topics with each candidate's difference."""
    with tempfile.TemporaryDirectory() as folder:
        quality = run_qualities(RUNS)
        files = write_collection(Path(folder), np.random.default_rng(seed), quality, topics)
        collection = load_collection(files["qrels"], files["intents"])
        runs = [read_run(files[name]) for name in quality]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            scores = evaluate(collection, runs, candidate_measures(), per_topic=True)
            cube = score_cube(scores, min_runs=2)
    return StudyPairs.from_cube(cube)


def sum_distribution(mu: np.ndarray, model: UserModel) -> np.ndarray:
    """P(sum of the k answers = s) for s = -4k..4k, per pair: (P, 8k + 1) (rounding cells, ends open)."""
    values = np.arange(-SCALE, SCALE + 1)
    upper = np.where(values == SCALE, np.inf, values + 0.5)
    lower = np.where(values == -SCALE, -np.inf, values - 0.5)
    one = norm.cdf((upper[None] - mu[:, None]) / model.noise) - norm.cdf((lower[None] - mu[:, None]) / model.noise)
    if model.cheaters:
        one = (1 - model.cheaters) * one + model.cheaters / values.size
    dist = one
    for _ in range(model.annotators - 1):
        dist = np.stack([np.convolve(row, o) for row, o in zip(dist, one)])
    return dist


def population_values(pairs: StudyPairs, model: UserModel, truth: str) -> dict[tuple[str, str], np.ndarray]:
    """Exact population value of every (subset, statistic) per candidate (module docstring): {key: (G,)}."""
    k = model.annotators
    dist = sum_distribution(latent_preference(pairs.d[pairs.measures.index(truth)], model.signal), model)  # (P, S)
    total = np.arange(-SCALE * k, SCALE * k + 1)
    p = total / k
    u, s_u = np.abs(p), np.sign(total)
    s_m = signs(pairs.d)  # (G, P)
    abs_d = np.abs(pairs.d)
    large = abs_d > abs_d.mean(axis=1, keepdims=True)
    user_masks = {"all": np.ones_like(u)} | dict(zip(SUBRANGES, subrange_masks(u).astype(float)))
    out = {}
    for subset in SUBSETS:
        bin_name, _, part = subset.partition(":")
        if bin_name in BINS:
            metric_mask = (large if bin_name == "large" else ~large).astype(float)
            user_mask = user_masks[part or "all"]
        else:
            metric_mask = np.ones_like(s_m)
            user_mask = user_masks[subset]
        # expected per-pair user terms under the mask: E[1], E[s_u], E[|s_u|], E[u], E[u s_u]
        e1, es, eas, eu, eus = (dist @ (user_mask * term) for term in (np.ones_like(u), s_u, np.abs(s_u), u, u * s_u))
        sums = {
            "AD": (metric_mask * s_m) @ es,
            "N": metric_mask @ e1,
            "NM": (metric_mask * np.abs(s_m)) @ e1,
            "NU": metric_mask @ eas,
            "U": metric_mask @ eu,
            "UJ": (metric_mask * s_m) @ eus,
            "UT": (metric_mask * (s_m == 0)) @ eu,
        }
        for statistic, value in statistics_from_sums({name: v[None, :] for name, v in sums.items()}).items():
            out[subset, statistic] = value[0]
    return out


def simulate_study(pairs: StudyPairs, model: UserModel, truth: str, topics: int, rng: np.random.Generator):
    """One study: ``topics`` topics drawn without replacement, every run pair of each, k answers per pair."""
    n_topics = int(pairs.topic_index.max()) + 1
    drawn = np.sort(rng.choice(n_topics, size=topics, replace=False))
    keep = np.isin(pairs.topic_index, drawn)
    d = pairs.d[:, keep]
    mu = latent_preference(pairs.d[pairs.measures.index(truth)], model.signal)[keep]
    total = simulate_answers(mu, model, 1, rng)[0].sum(axis=1)
    return d, total / model.annotators, np.sign(total).astype(float), pairs.topic_index[keep]


def coverage_at(pairs, model, truth, truths, topics, n_sim, B, rng, best: bool, interval: str = "score"):
    """Coverage tallies per (statistic, subset kind) and the best-set hits over ``n_sim`` studies."""
    hits: dict[tuple[str, str], list[int]] = {}
    in_set, sizes, members, first = [], [], {}, []
    kinds = {s: ("all" if s == "all" else "bin" if s in BINS else "cell" if ":" in s else "subrange") for s in SUBSETS}
    for _ in range(n_sim):
        d, p, sign, clusters = simulate_study(pairs, model, truth, topics, rng)
        result = agreement(d, p, pairs.measures, user_sign=sign, clusters=clusters, B=B, rng=rng, interval=interval)
        t = result.table
        g = np.tile(np.arange(len(pairs.measures))[:, None], (1, len(STATISTICS) * len(SUBSETS))).ravel()
        pop = np.array([truths[sub, stat][gi] for gi, stat, sub in zip(g, t["statistic"], t["subset"])])
        given = t["ci_low"].notna().to_numpy() & np.isfinite(pop)
        covered = (t["ci_low"].to_numpy() <= pop + 1e-12) & (pop - 1e-12 <= t["ci_high"].to_numpy())
        for stat, sub, ok, c in zip(t["statistic"], t["subset"], given, covered):
            if ok:
                tally = hits.setdefault((stat, kinds[sub]), [0, 0])
                tally[0] += int(c)
                tally[1] += 1
        if best:
            chosen = best_set(d, p, pairs.measures, user_sign=sign, clusters=clusters, B=B, rng=rng)
            in_set.append(truth in chosen)
            sizes.append(chosen.size)
            first.append(chosen.leaders == (truth,))
            for m in chosen.measures:
                members[m] = members.get(m, 0) + 1
    if best:
        often = sorted(members.items(), key=lambda kv: -kv[1])[:8]
        print(f"{topics} topics best set: " + ", ".join(f"{m} {c / n_sim:.2f}" for m, c in often), file=sys.stderr)
        print(f"{topics} topics the truth alone leads by MUP (one name) in {np.mean(first):.3f} of studies", file=sys.stderr)
    return hits, in_set, sizes


def summarise(label: str, hits) -> float:
    covered = sum(h[0] for h in hits.values())
    given = sum(h[1] for h in hits.values())
    for kind in ("all", "bin", "subrange", "cell"):
        line = " ".join(
            f"{stat}={hits[stat, kind][0] / hits[stat, kind][1]:.3f}" for stat in STATISTICS if hits.get((stat, kind), [0, 0])[1]
        )
        print(f"{label} {kind}: {line}", file=sys.stderr)
    return covered / given


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-sim", type=int, default=200, help="simulated studies per size (default 200)")
    parser.add_argument("--B", type=int, default=1000, help="bootstrap resamples of the best set (default 1000)")
    parser.add_argument("--population", type=int, default=1000, help="topics of the synthetic population (default 1000)")
    parser.add_argument("--topics-paper", type=int, default=50, help="topics of the paper-sized study (default 50)")
    parser.add_argument("--topics-small", type=int, default=12, help="topics of the small study (default 12)")
    parser.add_argument("--noise", type=float, default=1.0, help="annotator noise (default 1, as bench_report.py)")
    parser.add_argument("--interval", choices=("score", "percentile"), default="score", help="interval method (default score)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    start = time.perf_counter()
    model = UserModel(noise=args.noise, signal=2.0, annotators=3)
    pairs = population(args.population, args.seed)
    truths = population_values(pairs, model, TRUTH)
    print(
        f"population: {args.population} topics x {RUNS} runs, {len(pairs.measures)} metrics, truth {TRUTH} "
        f"(MUP {truths['all', 'MUP'][pairs.measures.index(TRUTH)]:.3f}); {time.perf_counter() - start:.1f} s",
        file=sys.stderr,
    )
    rng = np.random.default_rng(args.seed)
    small, _, _ = coverage_at(pairs, model, TRUTH, truths, args.topics_small, args.n_sim, args.B, rng, best=False, interval=args.interval)
    coverage_small = summarise(f"{args.topics_small} topics", small)
    paper, in_set, sizes = coverage_at(
        pairs, model, TRUTH, truths, args.topics_paper, args.n_sim, args.B, rng, best=True, interval=args.interval
    )
    coverage_paper = summarise(f"{args.topics_paper} topics", paper)
    print(f"seconds={time.perf_counter() - start:.1f} n_sim={args.n_sim}", file=sys.stderr)
    print(
        f"coverage_small={coverage_small:.3f} coverage_paper={coverage_paper:.3f} "
        f"truth_in_best_set={np.mean(in_set):.3f} mean_best_set_size={np.mean(sizes):.2f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
