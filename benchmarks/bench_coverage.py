"""Benchmark: do the headline intervals cover, and is the best set calibrated? (docs/benchmarks.md#interval-coverage-and-best-set)

1. **Coverage of MUP and MUP_b over all pairs** in realistic populations: a planted truth
   (D#-nDCG@10) and the simulator's user model (``evaluation.meta.simulate``: noise 1, the signal
   solved so that the truth's population MUP is the regime's target) on synthetic topics
   (benchmarks/synthetic.py) with every metric the study report scores. Regimes (runs, answers per
   pair, planted MUP): (5, 3, 0.90), (5, 1, 0.75), (8, 3, 0.75), (8, 1, 0.90): both levels of each
   factor; with one answer per pair a third or more of the pairs are user ties. Population values
   are exact (each statistic is a ratio of sums of per-pair terms whose expectations follow from
   the distribution of the sum of the k answers: the normal mass of each rounding cell, convolved
   k times). Studies draw 6, 12 and 50 topics without replacement and run
   ``evaluation.meta.agreement.agreement`` (the report's intervals). Coverage is reported **per
   statistic**: over every metric's interval and, separately, the planted metric's, with the share
   of misses above and below the truth.
2. **The best set on the same studies**: the share holding the planted truth (its entry) and the
   mean size (entries) at 50 topics in the seed's design (5 runs, 3 answers).
3. **Tied metrics** (``evaluation.meta.calibration``): two entries tied for best by construction,
   sparse (one swapped pair on some topics) and dense disagreement, 1 and 3 answers per pair, at
   5, 6, 8, 12, 20 and 50 topics: the share of studies dropping each.

Last line (minimum or maximum over the regimes)::

    coverage_mup_min=.. coverage_mup_b_min=.. tied_best_dropped_max=.. truth_in_best_set_min=.. mean_best_set_size_paper=..

Goals: coverage in [0.93, 0.97]; tied_best_dropped_max <= 0.05 plus Monte Carlo error (printed);
truth_in_best_set_min >= 0.95. ``--quick`` (CI): a 200-topic population and few studies. Per-regime
lines go to standard error. BLAS threads: one unless set (as bench_meta.py).
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
from evaluation.meta.agreement import agreement, signs, statistics_from_sums  # noqa: E402
from evaluation.meta.bestset import best_set  # noqa: E402
from evaluation.meta.calibration import REGIMES as TIE_REGIMES  # noqa: E402
from evaluation.meta.calibration import calibrate  # noqa: E402
from evaluation.meta.simulate import StudyPairs, UserModel, latent_preference, simulate_answers  # noqa: E402
from evaluation.metrics import REGISTRY, Measure  # noqa: E402

TRUTH = "D#-nDCG@10"
DEPTH = 10
NOISE = 1.0
STATISTICS = ("MUP", "MUP_b")
REGIMES = ((5, 3, 0.90), (5, 1, 0.75), (8, 3, 0.75), (8, 1, 0.90))  # runs, answers per pair, planted MUP
SIZES = (6, 12, 50)
PAPER = (5, 3, 0.90, 50)  # the seed's design: 5 runs, 3 answers, 50 topics
TIE_SIZES = (5, 6, 8, 12, 20, 50)


def candidate_measures(depth: int = DEPTH) -> list[str]:
    """Every registered metric at default parameters cut at ``depth`` (what the study report scores)."""
    return [Measure(spec, dict(spec.defaults), depth if spec.cutoff != "none" else None).label for spec in REGISTRY.values()]


def population(topics: int, runs: int, seed: int) -> StudyPairs:
    """Every run pair of ``topics`` synthetic topics with ``runs`` runs and each candidate's difference."""
    with tempfile.TemporaryDirectory() as folder:
        quality = run_qualities(runs)
        files = write_collection(Path(folder), np.random.default_rng(seed), quality, topics)
        collection = load_collection(files["qrels"], files["intents"])
        scored = [read_run(files[name]) for name in quality]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            scores = evaluate(collection, scored, candidate_measures(), per_topic=True)
            cube = score_cube(scores, min_runs=2)
    return StudyPairs.from_cube(cube)


def sum_distribution(mu: np.ndarray, model: UserModel) -> np.ndarray:
    """P(sum of the k answers = s) for s = -4k..4k, per pair: (P, 8k + 1) (rounding cells, ends open)."""
    values = np.arange(-SCALE, SCALE + 1)
    upper = np.where(values == SCALE, np.inf, values + 0.5)
    lower = np.where(values == -SCALE, -np.inf, values - 0.5)
    one = norm.cdf((upper[None] - mu[:, None]) / model.noise) - norm.cdf((lower[None] - mu[:, None]) / model.noise)
    dist = one
    for _ in range(model.annotators - 1):  # convolve every row with its own one-answer law, by shifts (vectorised)
        wider = np.zeros((dist.shape[0], dist.shape[1] + values.size - 1))
        for j in range(values.size):
            wider[:, j : j + dist.shape[1]] += dist * one[:, j : j + 1]
        dist = wider
    return dist


def population_values(pairs: StudyPairs, model: UserModel, truth: str) -> tuple[dict[str, np.ndarray], float]:
    """Exact population MUP and MUP_b over all pairs per candidate, and the share of user ties."""
    k = model.annotators
    dist = sum_distribution(latent_preference(pairs.d[pairs.measures.index(truth)], model.signal), model)  # (P, S)
    total = np.arange(-SCALE * k, SCALE * k + 1)
    u, s_u = np.abs(total / k), np.sign(total)
    s_m = signs(pairs.d)
    e1, es, eas, eu, eus = (dist @ term for term in (np.ones_like(u), s_u, np.abs(s_u), u, u * s_u))
    sums = {
        "AD": s_m @ es,
        "N": np.ones_like(s_m) @ e1,
        "NM": np.abs(s_m) @ e1,
        "NU": np.ones_like(s_m) @ eas,
        "U": np.ones_like(s_m) @ eu,
        "UJ": s_m @ eus,
        "UT": (s_m == 0).astype(float) @ eu,
    }
    values = statistics_from_sums({name: v[None, :] for name, v in sums.items()})
    return {s: values[s][0] for s in STATISTICS}, float(1 - eas.mean())


def signal_for(pairs: StudyPairs, target: float, annotators: int) -> float:
    """The signal at which the truth's population MUP is ``target`` (bisection; MUP grows with the signal)."""
    low, high = 0.05, 8.0
    g = pairs.measures.index(TRUTH)
    for _ in range(25):
        mid = (low + high) / 2
        mup = population_values(pairs, UserModel(noise=NOISE, signal=mid, annotators=annotators), TRUTH)[0]["MUP"][g]
        low, high = (mid, high) if mup < target else (low, mid)
    return (low + high) / 2


def simulate_study(pairs: StudyPairs, model: UserModel, topics: int, rng: np.random.Generator):
    """One study: ``topics`` topics drawn without replacement, every run pair of each, k answers per pair."""
    n_topics = int(pairs.topic_index.max()) + 1
    drawn = np.sort(rng.choice(n_topics, size=topics, replace=False))
    keep = np.isin(pairs.topic_index, drawn)
    mu = latent_preference(pairs.d[pairs.measures.index(TRUTH)], model.signal)[keep]
    total = simulate_answers(mu, model, 1, rng)[0].sum(axis=1)
    return pairs.d[:, keep], total / model.annotators, np.sign(total).astype(float), pairs.topic_index[keep]


def coverage_regime(pairs: StudyPairs, model: UserModel, truths: dict[str, np.ndarray], topics: int, n_sim: int, B: int, rng) -> dict:
    """Per statistic: covered / given / above / below over every metric and for the planted one; best-set tallies."""
    g = pairs.measures.index(TRUTH)
    tally = {(s, who): np.zeros(4) for s in STATISTICS for who in ("all", "planted")}
    held, sizes = [], []
    for _ in range(n_sim):
        d, p, sign, clusters = simulate_study(pairs, model, topics, rng)
        table = agreement(d, p, pairs.measures, user_sign=sign, clusters=clusters, subsets=("all",)).table
        for s in STATISTICS:
            rows = table[table["statistic"] == s]
            low, high, pop = rows["ci_low"].to_numpy(), rows["ci_high"].to_numpy(), truths[s]
            given = np.isfinite(low) & np.isfinite(pop)
            above, below = given & (low > pop + 1e-12), given & (high < pop - 1e-12)
            for who, mask in (("all", np.ones_like(given)), ("planted", np.arange(given.size) == g)):
                m = mask & given
                tally[s, who] += (m.sum() - (above & m).sum() - (below & m).sum(), m.sum(), (above & m).sum(), (below & m).sum())
        chosen = best_set(d, p, pairs.measures, user_sign=sign, clusters=clusters, B=B, rng=rng)
        if chosen.claim:
            held.append(TRUTH in chosen.measures)
            sizes.append(chosen.size)
    return {"tally": tally, "held": held, "sizes": sizes}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="CI mode: 200-topic populations, 40 studies per regime, 100 per tie regime")
    parser.add_argument("--n-sim", type=int, default=300, help="simulated studies per coverage regime and size (default 300)")
    parser.add_argument("--n-tie", type=int, default=400, help="simulated studies per tie regime and size (default 400)")
    parser.add_argument("--B", type=int, default=1000, help="random sign flips of the best set above 12 topics (default 1000)")
    parser.add_argument("--population", type=int, default=1000, help="topics of each synthetic population (default 1000)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    if args.quick:
        args.n_sim, args.n_tie, args.B, args.population = 40, 100, 200, 200
    start = time.perf_counter()
    rng = np.random.default_rng(args.seed)
    say = lambda line: print(line, file=sys.stderr, flush=True)  # noqa: E731
    mc = lambda n: 3 * np.sqrt(0.05 * 0.95 / n)  # noqa: E731
    coverage = {s: [] for s in STATISTICS}
    held_min, paper_size = 1.0, float("nan")
    pops = {runs: population(args.population, runs, args.seed + runs) for runs in sorted({r for r, _, _ in REGIMES})}
    say(
        f"populations: {args.population} topics x {sorted(pops)} runs, {len(pops[5].measures)} metrics; {time.perf_counter() - start:.0f} s"
    )
    for runs, answers, target in REGIMES:
        pairs = pops[runs]
        model = UserModel(noise=NOISE, signal=signal_for(pairs, target, answers), annotators=answers)
        truths, user_ties = population_values(pairs, model, TRUTH)
        for topics in SIZES:
            r = coverage_regime(pairs, model, truths, topics, args.n_sim, args.B, rng)
            parts = []
            for s in STATISTICS:
                (cov, n, above, below), (pc, pn, pa, pb) = r["tally"][s, "all"], r["tally"][s, "planted"]
                coverage[s].append(cov / n)
                parts.append(
                    f"{s} {cov / n:.3f} (above {above / n:.3f} below {below / n:.3f}; planted {pc / pn:.3f}, above {pa / pn:.3f} below {pb / pn:.3f})"
                )
            held = float(np.mean(r["held"])) if r["held"] else float("nan")
            held_min = min(held_min, held) if r["held"] else held_min
            if (runs, answers, target, topics) == PAPER:
                paper_size = float(np.mean(r["sizes"]))
            say(
                f"runs={runs} answers={answers} planted_MUP={target:.2f} signal={model.signal:.3f} user_ties={user_ties:.2f} "
                f"topics={topics}: {'; '.join(parts)}; truth_in_best_set {held:.3f}, mean size {np.mean(r['sizes']):.2f}"
            )
    tied_max = 0.0
    for regime in TIE_REGIMES:
        for answers in (1, 3):
            for topics in TIE_SIZES:
                c = calibrate(regime, topics, args.n_tie, annotators=answers, B=args.B, rng=rng)
                tied_max = max(tied_max, c.dropped_max)
                dropped = ", ".join(f"{k} {v:.3f}" for k, v in c.dropped.items())
                say(
                    f"tie {regime} answers={answers} topics={topics}: dropped {dropped} (either {c.any_dropped:.3f}; "
                    f"limit {0.05 + mc(args.n_tie):.3f}); mean size {c.mean_size:.2f}; merged {c.merged:.2f}; undefined out {c.flat_out:.2f}"
                )
    say(
        f"seconds={time.perf_counter() - start:.0f} n_sim={args.n_sim} n_tie={args.n_tie} B={args.B} population={args.population} "
        f"(Monte Carlo error, 3 se at 0.05: {mc(args.n_tie):.3f} per tie regime)"
    )
    print(
        f"coverage_mup_min={min(coverage['MUP']):.3f} coverage_mup_b_min={min(coverage['MUP_b']):.3f} "
        f"tied_best_dropped_max={tied_max:.3f} truth_in_best_set_min={held_min:.3f} mean_best_set_size_paper={paper_size:.2f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
