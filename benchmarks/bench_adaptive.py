"""Benchmark: does adaptive allocation decide with fewer answers, and does its analysis stay honest? (docs/meta.md#adaptive-allocation)

Planted-truth studies through the project's simulator (``evaluation.meta.simulate``: a planted truth,
D#-nDCG@10, signal 2, noise ``--noise``, a share ``--careless`` of answers from fast random clickers,
k = 3 answers per presentation), on one of two designs:

* ``seed``: the seed's design, 5 runs x 50 topics, the topics drawn without replacement from a
  synthetic population of ``--population`` topics (benchmarks/synthetic.py, as bench_coverage.py);
* ``trec2014``: the TREC 2014 Web Track diversity qrels with the eight public runs of the repository's
  reference data (tests/evaluation/data/reference), 8 runs x 50 topics, each study's 50 topics drawn with
  replacement from those 50 (the population is the track's own topics).

The candidates (``--candidates``) are the metrics the study compares: by default six, the diversity metrics a
preference study of the seed's kind compares and the ad hoc nDCG baseline (:data:`CANDIDATES`); ``all``: every
registered metric at depth 10 (what the study report scores; several are nearly identical, the hard regime).
``--tie RIVAL`` makes the simulated users follow the truth and RIVAL equally (the null-ish case of the stopping
rule: the population's best metric is then whichever has the higher population MUP). Every study
simulates every group's k answers once; uniform and adaptive allocation spend them on the same seeds:

* uniform: today's need order, every group gets its first answer, then its second, then its third, in
  random order within each layer;
* adaptive: rounds of ``--batch`` answers, each drawing groups with the probabilities of
  ``evaluation.meta.adaptive.round_probabilities`` (dispute among the metrics still in the best set,
  exploration floor ``--explore``); a drawn group gets its k answers with probability ``--full`` (default 0.2; 1 for
  a group no contenders dispute at its draw, ``evaluation.meta.adaptive.full_shares``), else one
  (two phases; the best set uses every drawn group's received mean with the last round's design weights, the MUP
  intervals the two-phase estimator: every drawn group's first answer with the pooled weights of every round,
  corrected by the full groups; ``--estimator full-only``: the full groups alone with the last round's weights). The
  rest of each batch goes to the drawn groups' further answers, the most disputed now first (``--topup draw``: the
  most disputed at their draw, the order before 2026-11-28), then to the groups not drawn; once no undrawn group is
  disputed, a round targets ``--undisputed-round`` (default 0.1) of the usual number of groups
  (``evaluation.meta.adaptive.round_target``), so most of the batch goes to those further answers, unless the drawn
  groups' room up to k answers is below half a batch: then the round restores a batch's worth (as the study app).

After every batch (a "look") the best set is computed (adaptive: on the design weights) at level
``alpha / looks`` (Bonferroni over the fixed maximum number of looks, ``looks = ceil(budget / batch)``).
A study *decides* at the first look whose best set has at most 3 entries (metrics identical on every
pair are one entry) and stops there (else at the full budget, every group k answers). Recorded per
study: the answers until the best set first has at most 3 entries with the truth inside
(``answers_to_decide``; a study that never gets there counts the full budget and is reported as
censored), whether the truth is in the set where the study stopped, and whether each candidate's MUP
interval at the stop (design-weighted, two-phase, score interval with the topics' linearisation variance at its effective
degrees of freedom, :func:`evaluation.meta.intervals.linearisation_df`) covers its population MUP (exact expected sums, as
bench_coverage.py): ``coverage_mup_adaptive`` is the share of the candidates' intervals over all studies that cover, of
the nominal 95 % interval a study's report shows (``ci_low``, ``ci_high``); standard error gives its standard error
(from the studies' own shares: a study's candidates share its answers), the coverage of the look-corrected interval
the report gives beside it (level :func:`evaluation.meta.adaptive.look_level`, so the intervals of all the looks hold
together) and the complete study's nominal 95 % interval, and what the adaptive arm's answers up to the stop were spent
on (:data:`SPENDING`: the disputed groups' first answers and second phase, the groups drawn undisputed, the drawn groups'
further answers, groups not drawn). ``--boundary pocock`` replaces Bonferroni by Pocock's boundary
(:mod:`evaluation.meta.sequential`) for both the looks' tests and the look-corrected intervals.

``--coverage-only`` measures the coverage alone, cheaply enough for several hundred studies: no uniform arm, each
adaptive study ends at its stop, and benchmarks/adaptive_diagnosis.py says why the interval covers what it covers (the
estimate's root mean square error against the shown (linearisation) and the jackknife standard errors and the interval's
half-width, the effective degrees of freedom, the coverage per candidate, with other t quantiles, with the jackknife
variance and of the linearised interval ``value +- t SE``); its last line
is ``truth_in_set_adaptive=.. coverage_mup_adaptive=.. coverage_se=..``.

Last line: ``answers_to_decide_uniform=.. answers_to_decide_adaptive=.. saving=.. truth_in_set_adaptive=..
coverage_mup_adaptive=..`` (means over studies; saving = uniform / adaptive). Goal: saving >= 2,
truth_in_set_adaptive >= 0.95, coverage_mup_adaptive in [0.93, 0.97]. Breakdowns go to standard error.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass
from dataclasses import replace as with_fields
from pathlib import Path

if "OPENBLAS_NUM_THREADS" not in os.environ and "OMP_NUM_THREADS" not in os.environ:
    os.environ["OPENBLAS_NUM_THREADS"] = "1"

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
from scipy.stats import norm  # noqa: E402

from benchmarks.adaptive_diagnosis import diagnose  # noqa: E402
from benchmarks.bench_coverage import candidate_measures  # noqa: E402
from benchmarks.synthetic import run_qualities, write_collection  # noqa: E402
from evaluation import evaluate, load_collection, read_run  # noqa: E402
from evaluation.io.preferences import SCALE  # noqa: E402
from evaluation.meta import adaptive, sequential  # noqa: E402
from evaluation.meta._matrix import score_cube  # noqa: E402
from evaluation.meta.agreement import signs  # noqa: E402
from evaluation.meta.bestset import EXACT_TOPICS  # noqa: E402
from evaluation.meta.simulate import StudyPairs, UserModel, latent_preference, simulate_answers  # noqa: E402

TRUTH = "D#-nDCG@10"
# The default candidates: the metrics a diversity preference study of the seed's kind compares (Sakai & Zeng 2019's
# diversity measures and the ad hoc nDCG baseline they were held against); --candidates all: every registered metric.
CANDIDATES = ("alpha-nDCG@10", "nERR-IA@10", "D-nDCG@10", "D#-nDCG@10", "RBU@10", "nDCG@10")
TOPICS = 50
REFERENCE = ROOT / "tests" / "evaluation" / "data" / "reference"


def score_pairs(collection, runs) -> StudyPairs:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scores = evaluate(collection, runs, candidate_measures(), per_topic=True)
        return StudyPairs.from_cube(score_cube(scores, min_runs=2))


def seed_population(topics: int, seed: int) -> StudyPairs:
    with tempfile.TemporaryDirectory() as folder:
        quality = run_qualities(5)
        files = write_collection(Path(folder), np.random.default_rng(seed), quality, topics)
        collection = load_collection(files["qrels"], files["intents"])
        return score_pairs(collection, [read_run(files[name]) for name in quality])


def trec_population() -> StudyPairs:
    collection = load_collection(REFERENCE / "trec2014" / "qrels.diversity.tsv", REFERENCE / "trec2014" / "intent_probs_din.tsv")
    runs = [read_run(path) for path in sorted((REFERENCE / "runs" / "public").glob("*.run"))]
    return score_pairs(collection, runs)


def restrict(pairs: StudyPairs, candidates: list[str]) -> StudyPairs:
    """The pairs with only the study's ``candidates`` (a study compares the metrics it is configured with)."""
    unknown = [m for m in candidates if m not in pairs.measures]
    if unknown:
        raise SystemExit(f"unknown candidate(s) {', '.join(unknown)}; registered at depth 10: {', '.join(pairs.measures)}")
    idx = [pairs.measures.index(m) for m in candidates]
    return with_fields(pairs, d=pairs.d[idx], measures=tuple(candidates))


def population_mup(pairs: StudyPairs, model: UserModel, mu: np.ndarray) -> np.ndarray:
    """Exact population MUP of every candidate: the ratio of the expected sums over all pairs, each pair's sum of k
    answers distributed as the simulator draws it (rounding cells, ends open; a ``cheaters`` share uniform)."""
    values = np.arange(-SCALE, SCALE + 1)
    upper, lower = np.where(values == SCALE, np.inf, values + 0.5), np.where(values == -SCALE, -np.inf, values - 0.5)
    one = norm.cdf((upper[None] - mu[:, None]) / model.noise) - norm.cdf((lower[None] - mu[:, None]) / model.noise)
    one = (1 - model.cheaters) * one + model.cheaters / values.size
    dist = one
    for _ in range(model.annotators - 1):
        dist = np.stack([np.convolve(row, o) for row, o in zip(dist, one)])
    total = np.arange(-SCALE * model.annotators, SCALE * model.annotators + 1)
    u, s_u = np.abs(total) / model.annotators, np.sign(total)
    s_m = np.where(np.isnan(pairs.d), 0.0, signs(np.nan_to_num(pairs.d)))
    defined = (~np.isnan(pairs.d)).astype(float)
    return (s_m @ (dist @ (u * s_u))) / (defined @ (dist @ u))


@dataclass
class Study:
    d: np.ndarray  # (G, P)
    answers: np.ndarray  # (P, k)
    clusters: np.ndarray  # (P,)


def draw_study(pairs: StudyPairs, mu: np.ndarray, model: UserModel, topics: int, replace: bool, rng: np.random.Generator) -> Study:
    n_topics = int(pairs.topic_index.max()) + 1
    drawn = rng.choice(n_topics, size=topics, replace=replace)
    cols, clusters = [], []
    for cluster, t in enumerate(drawn):
        idx = np.flatnonzero(pairs.topic_index == t)
        cols.append(idx)
        clusters.append(np.full(idx.size, cluster))
    cols, clusters = np.concatenate(cols), np.concatenate(clusters)
    answers = simulate_answers(mu[cols], model, 1, rng)[0]
    return Study(pairs.d[:, cols], answers, clusters)


@dataclass
class Look:
    spent: int  # answers so far
    size: int  # entries in the best set
    holds: bool  # the truth is in it
    covered: int  # the shown MUP intervals (design-weighted, nominal 95 %, effective df) holding their population value
    intervals: int
    covered_looks: int = 0  # the same with the look-corrected intervals beside them (level LOOK_LEVEL)
    detail: dict | None = None  # per metric: estimate, shown variance, df, shown interval (the coverage diagnosis)
    spending: dict | None = None  # adaptive: the answers so far by what they were spent on (SPENDING)


def covering(
    study: Study, p: np.ndarray, weights: np.ndarray, truth_mup: np.ndarray, levels: tuple[float, ...], layer=None, layer_weights=None
) -> list[np.ndarray]:
    """Per level, which metrics' design-weighted MUP interval holds their population MUP (none without a sample);
    with ``layer``, the two-phase estimator on every drawn group's first answer (``layer_weights`` its entry weight)."""
    if not (weights > 0).any():  # no full group yet: no k-answer estimate (counted as not covering)
        return [np.zeros(truth_mup.shape, dtype=bool) for _ in levels]
    est = adaptive.weighted_estimates(
        study.d,
        p,
        weights=weights,
        clusters=study.clusters,
        user_sign=np.sign(p),
        statistics=("MUP",),
        level=levels[0],
        layer=layer,
        layer_weights=layer_weights,
    )
    out = []
    for level in levels:
        low, high = est.interval("MUP", level)
        out.append(np.isfinite(truth_mup) & (low <= truth_mup + 1e-12) & (truth_mup - 1e-12 <= high))
    if DETAIL is not None:
        DETAIL.clear()
        DETAIL.update(
            value=est.value["MUP"],
            var=est.variance("MUP"),
            df=est.df("MUP"),
            low=est.low["MUP"],
            high=est.high["MUP"],
            T=est.loo["MUP"].shape[0],
            est=est,
        )
    return out


def look(
    study: Study, measures, truth, truth_mup, spent, p, weights, alpha, B, rng, full=None, p_full=None, layer=None, layer_weights=None
) -> tuple[Look, adaptive.Contenders]:
    """The best set after ``spent`` answers (preferences ``p``, design ``weights``, each look at ``alpha``) and the
    MUP intervals on the k-answer sample (``full`` weights and ``p_full`` preferences; default: the same; with
    ``layer`` every drawn group's first answer, weighted by ``layer_weights``: the two-phase estimator) at the
    shown nominal 95 % and at the look-corrected level :data:`LOOK_LEVEL`."""
    sign = np.sign(p)
    chosen = adaptive.contenders(study.d, p, measures, weights=weights, user_sign=sign, clusters=study.clusters, alpha=alpha, B=B, rng=rng)
    full = weights if full is None else full
    p_full = p if p_full is None else p_full
    entry = None if layer is None else layer_weights
    nominal, corrected = covering(study, p_full, full, truth_mup, (NOMINAL, LOOK_LEVEL), layer, entry)
    size = chosen.size if chosen.chosen.claim else len(measures)
    detail = dict(DETAIL) if DETAIL else None
    return Look(
        spent, size, chosen.holds(truth), int(nominal.sum()), int(np.isfinite(truth_mup).sum()), int(corrected.sum()), detail
    ), chosen


def run_uniform(study, measures, truth, truth_mup, batch, alpha, B, rng) -> list[Look]:
    """Today's need order: every group's first answer, then its second, ... (random order within a layer)."""
    P, k = study.answers.shape
    budget = P * k
    order = np.concatenate([rng.permutation(P) for _ in range(k)])
    looks = []
    for spent in range(batch, budget + batch, batch):
        spent = min(spent, budget)
        n = np.bincount(order[:spent], minlength=P)
        total = (study.answers * (np.arange(k)[None, :] < n[:, None])).sum(axis=1)
        p = np.where(n > 0, total / np.maximum(n, 1), 0.0)
        looks.append(look(study, measures, truth, truth_mup, spent, p, (n > 0).astype(float), alpha, B, rng)[0])
    return looks


def run_adaptive(study, measures, truth, truth_mup, batch, alpha, B, explore, others, share, rng) -> list[Look]:
    """Rounds of about ``batch`` answers drawn by dispute among the metrics still in the best set; a drawn group
    gets its k answers with probability ``share`` (full), else one (the first layer). What a round leaves of the
    batch goes as admission gives it: to the drawn groups below k answers, those drawn with the highest
    probability first (fixed at their draw, so never by what their answers say), fewest answers first among
    equals, then to the others in need order (answers outside the draw count as spent and are left out of the estimates). The best set uses
    every drawn group's received mean, the MUP intervals the full groups (module docstring)."""
    P, k = study.answers.shape
    received = np.zeros(P, dtype=np.int64)  # answers per group so far
    full = np.zeros(P, dtype=bool)
    full_share = np.full(P, share)  # each drawn group's chance of being full at its draw
    cost = 1 + share * (k - 1)  # expected answers per drawn group
    drawn_round = np.full(P, adaptive.NOT_DRAWN)
    spending = dict.fromkeys(SPENDING, 0)
    probability = np.zeros(P)
    in_set = np.ones(len(measures), dtype=bool)
    closeness = None
    r, looks = -1, []
    while received.sum() < P * k:
        available = drawn_round == adaptive.NOT_DRAWN
        before = int(received.sum())
        weights = adaptive.dispute_weights(study.d, in_set, closeness)
        if available.any():
            r += 1
            floor = explore / (1 + DECAY * r)  # --explore-decay: a floor shrinking with the round
            room = float((k - received)[drawn_round >= 0].sum())  # the drawn groups' room up to k: a small round unless low
            target = adaptive.round_target(weights, available, batch / cost, UNDISPUTED, room=room / cost)
            q = adaptive.round_probabilities(weights, available, target, floor)
            got = adaptive.draw(q, rng) & available
            shares = adaptive.full_shares(weights, share) if FULL_UNDISPUTED else np.full(P, share)
            full |= adaptive.draw_full(got, shares, rng)
            full_share[got] = shares[got]
            drawn_round[got] = r
            probability[available] = q[available]  # the probability of the round each group was last considered in
            received[got] = np.where(full[got], k, 1)
            disputed = got & (weights > 0)
            spending["undisputed drawn"] += int(received[got & ~disputed].sum())
            spending["disputed, first"] += int(disputed.sum())
            spending["disputed, second phase"] += int(received[disputed].sum() - disputed.sum())
        # the rest of the batch: admission's next tiers, the drawn groups below k in need order, then the others
        rest = batch - int(received.sum() - before)
        order = weights if TOPUP == "current" else probability
        topped = int(received.sum())
        for level in np.unique(order[drawn_round >= 0])[::-1]:  # the most disputed (at their draw, or now) first
            rest = need_order(received, (drawn_round >= 0) & (order == level), k, rest, rng)
        spending["further answers"] += int(received.sum()) - topped
        spending["not drawn"] += max(rest, 0) - need_order(received, drawn_round < 0, k, rest, rng)
        p = np.where(received > 0, (study.answers * (np.arange(k)[None, :] < received[:, None])).sum(axis=1) / np.maximum(received, 1), 0.0)
        entry = adaptive.design_weights(drawn_round, probability, r)  # the decision's
        pooled = entry if ONE_PHASE else adaptive.pooled_weights(drawn_round, probability, r)  # the reported estimates'
        p_full = study.answers.mean(axis=1)
        result, chosen = look(
            study,
            measures,
            truth,
            truth_mup,
            int(received.sum()),
            p,
            entry,
            alpha,
            B,
            rng,
            adaptive.full_weights(pooled, full, full_share),
            p_full,
            None if ONE_PHASE else study.answers[:, 0],  # every drawn group's first answer: the first layer
            pooled,
        )
        result.spending = dict(spending)
        looks.append(result)
        if UNTIL_STOP and len(looks) <= MAX_LOOKS and result.size <= adaptive.DECIDED_SIZE:
            break  # --coverage-only: the looks after the stop change nothing it measures
        in_set = np.isin(measures, chosen.members)
        if PRIORITY == "challengers":
            closeness = adaptive.challenger_closeness(measures, chosen.chosen, others)
        else:
            closeness = adaptive.leader_closeness(measures, chosen.chosen.leaders, others) if others < 1 else None
    return looks


def need_order(received: np.ndarray, among: np.ndarray, k: int, answers: int, rng: np.random.Generator) -> int:
    """Give up to ``answers`` more answers (in place) to the groups ``among`` with the fewest, at random among
    equals, up to ``k`` each; returns the answers left."""
    while answers > 0 and (open_ := among & (received < k)).any():
        low = received[open_].min()
        take = rng.permutation(np.flatnonzero(open_ & (received == low)))[:answers]
        received[take] += 1
        answers -= take.size
    return max(answers, 0)


# What the adaptive arm's answers are spent on (benchmark's bookkeeping, printed at the stop): the first answers of the
# drawn groups the contenders dispute, their second phase (a full one's further k - 1 at its draw), the groups drawn
# undisputed (the exploration floor's, full for sure: they cancel in every contenders' difference), admission's second
# tier (the drawn groups' further answers, the most disputed now first) and its last (groups not drawn, outside the design).
SPENDING = ("disputed, first", "disputed, second phase", "undisputed drawn", "further answers", "not drawn")
PRIORITY = "leader"  # set in main() by --priority
DECAY = 0.0  # set in main() by --explore-decay
UNDISPUTED = adaptive.UNDISPUTED  # set in main() by --undisputed-round
TOPUP = "current"  # set in main() by --topup
FULL_UNDISPUTED = True  # set in main() by --full-undisputed
ONE_PHASE = False  # set in main() by --estimator full-only: the k-answer estimates on the full groups alone
UNTIL_STOP = False  # set in main() by --coverage-only: adaptive studies end at their stop
DETAIL: dict | None = None  # set in main() by --coverage-only: the last interval's parts, kept per look
NOMINAL = 0.95  # the level of the intervals beside the reported ones (not corrected for the looks), and the complete study's
MAX_LOOKS = 20  # set in main(): the looks the level is divided among; only they can decide
ALPHA = 0.05 / MAX_LOOKS  # set in main(): each look's level of the best-set test
LOOK_LEVEL = 1 - 0.05 / MAX_LOOKS  # set in main(): each look's level of the look-corrected intervals


def first(looks: list[Look], budget: int, size: int, truth: bool) -> int:
    """Answers at the first of the allowed looks with at most ``size`` entries (and the truth inside when ``truth``);
    the budget if none."""
    return next((x.spent for x in looks[:MAX_LOOKS] if x.size <= size and (x.holds or not truth)), budget)


def stop(looks: list[Look]) -> Look:
    """Where the study stops: the first look with at most 3 entries (the decided signal), else its last."""
    return next((x for x in looks[:MAX_LOOKS] if x.size <= adaptive.DECIDED_SIZE), looks[-1])


UNIFORM_NOTE = (
    " (uniform's coverage is not comparable: at its stop most groups have fewer than k answers and enter with their "
    "partial means, a noisier preference than the k-answer one the population MUP is defined on, so its MUP is biased "
    "towards 0; the complete study's coverage is below)"
)


def summary(label: str, runs: list[list[Look]], budget: int, note: str = "") -> dict[str, float]:
    decide = np.array([first(looks, budget, adaptive.DECIDED_SIZE, True) for looks in runs], dtype=float)
    stops = [stop(looks) for looks in runs]
    out = {
        "decide": float(decide.mean()),
        "censored": float(np.mean([not any(x.size <= adaptive.DECIDED_SIZE and x.holds for x in looks[:MAX_LOOKS]) for looks in runs])),
        "stopped": float(np.mean([x.spent for x in stops])),
        "truth": float(np.mean([x.holds for x in stops])),
        "coverage": sum(x.covered for x in stops) / max(1, sum(x.intervals for x in stops)),
        # the standard error of that share from the studies' own shares (a study's metrics share its answers)
        "coverage_se": float(np.std([x.covered / max(1, x.intervals) for x in stops], ddof=1) / math.sqrt(len(stops)))
        if len(stops) > 1
        else float("nan"),
        "coverage_looks": sum(x.covered_looks for x in stops) / max(1, sum(x.intervals for x in stops)),
        "size": float(np.mean([x.size for x in stops])),
        "dropped": float(np.mean([any(not x.holds for x in looks[:MAX_LOOKS]) for looks in runs])),
        "coverage_every": sum(x.covered for looks in runs for x in looks[:-1])
        / max(1, sum(x.intervals for looks in runs for x in looks[:-1])),
    }
    print(
        f"{label}: answers_to_decide mean {out['decide']:.0f} median {np.median(decide):.0f} (never decided, counted at the "
        f"budget {budget}: {out['censored']:.2f}), stopped at {out['stopped']:.0f} answers, set at the stop {out['size']:.2f} "
        f"entries, truth in it {out['truth']:.3f}, MUP coverage there {out['coverage']:.3f} (standard error {out['coverage_se']:.3f}; "
        f"the shown nominal 95 % interval; the look-corrected one beside it, level {LOOK_LEVEL:.4f}: {out['coverage_looks']:.3f}); the truth out of the set "
        f"at any of the looks (the looks' family-wise level, alpha 0.05): {out['dropped']:.3f}; nominal MUP coverage at every "
        f"look before the last (partial samples, design-weighted) {out['coverage_every']:.3f}{note}",
        file=sys.stderr,
    )
    if all(x.spending for x in stops):
        spent = {name: np.mean([x.spending[name] for x in stops]) for name in SPENDING}
        total = max(sum(spent.values()), 1)
        print(
            f"{label}: answers up to the stop by what they were spent on (mean per study): "
            + ", ".join(f"{name} {value:.0f} ({value / total:.0%})" for name, value in spent.items()),
            file=sys.stderr,
        )
    return out


def same_decision(uniform: list[list[Look]], adapted: list[list[Look]], budget: int) -> None:
    """Answers until each allocation first reaches the set size uniform allocation ends with (truth inside)."""
    u, a = [], []
    for lu, la in zip(uniform, adapted):
        target = lu[-1].size
        u.append(first(lu, budget, target, True))
        a.append(first(la, budget, target, True))
    print(
        f"same decision (the set size the complete uniform study ends with, truth inside): uniform {np.mean(u):.0f} answers, "
        f"adaptive {np.mean(a):.0f}, saving {np.mean(u) / np.mean(a):.2f}",
        file=sys.stderr,
    )


def saving_error(uniform: list[list[Look]], adapted: list[list[Look]], budget: int) -> None:
    """The saving's standard error over the studies: the ratio of the two arms' mean answers to decide, paired by study
    (each study spends the same simulated answers both ways), by the delta method (Cochran 1977, sec. 6.4)."""
    u = np.array([first(looks, budget, adaptive.DECIDED_SIZE, True) for looks in uniform], dtype=float)
    a = np.array([first(looks, budget, adaptive.DECIDED_SIZE, True) for looks in adapted], dtype=float)
    if len(u) < 2:
        return
    ratio = u.mean() / a.mean()
    se = float(np.std(u - ratio * a, ddof=1) / math.sqrt(len(u)) / a.mean())
    print(f"saving {ratio:.2f}, standard error {se:.3f} over {len(u)} studies (paired, delta method)", file=sys.stderr)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--design",
        choices=("seed", "trec2014"),
        default="seed",
        help="seed: 5 runs x 50 topics from a synthetic population; trec2014: the TREC 2014 Web Track qrels and 8 public "
        "runs, 50 topics drawn with replacement (default %(default)s)",
    )
    parser.add_argument(
        "--studies",
        type=int,
        default=300,
        help="simulated studies (default 300: the coverage's standard error is then about 0.005-0.009, against 0.009-0.016 "
        "at 100, for a goal band 0.04 wide)",
    )
    parser.add_argument("--B", type=int, default=2000, help="random sign flips of each best set above 12 topics (default 2000)")
    parser.add_argument("--batch", type=int, default=0, help="answers per batch (default: a twentieth of the full study)")
    parser.add_argument("--explore", type=float, default=adaptive.EXPLORE, help="exploration floor as a share of the uniform chance")
    parser.add_argument(
        "--explore-decay",
        type=float,
        default=0.0,
        help="round r's floor is --explore / (1 + D r) (default 0: the same floor every round)",
    )
    parser.add_argument(
        "--others",
        type=float,
        default=adaptive.OTHERS,
        help="weight of a disagreement between two contenders neither of which leads (default %(default)s; 1: all alike)",
    )
    parser.add_argument(
        "--priority",
        choices=("leader", "challengers"),
        default="leader",
        help="which disagreements count fully: every one with a leader (default), or only a leader's with the nearest challengers",
    )
    parser.add_argument(
        "--undisputed-round",
        type=float,
        default=adaptive.UNDISPUTED,
        help="a round drawn when no undrawn group is disputed among the contenders targets this share of a round "
        "(default %(default)s; 1: a whole round, the allocation before 2026-11-28)",
    )
    parser.add_argument(
        "--topup",
        choices=("current", "draw"),
        default="current",
        help="the drawn groups' further answers go first to the groups most disputed now (default) or at their draw",
    )
    parser.add_argument(
        "--full-undisputed",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="a drawn group no contenders dispute is full for sure (evaluation.meta.adaptive.full_shares; default); "
        "--no-full-undisputed: every drawn group full with --full",
    )
    parser.add_argument("--alpha", type=float, default=0.05, help="family-wise level of the best set over all looks (default %(default)s)")
    parser.add_argument("--looks", type=int, default=0, help="looks the level is divided among (default: every batch; 1: no correction)")
    parser.add_argument(
        "--boundary",
        choices=sequential.BOUNDARIES,
        default=adaptive.BOUNDARY,
        help="the looks' correction of the best-set test and the look-corrected intervals (default %(default)s)",
    )
    parser.add_argument("--noise", type=float, default=1.0, help="annotator noise in scale points (default 1)")
    parser.add_argument("--careless", type=float, default=0.1, help="share of answers from fast random clickers (default 0.1)")
    parser.add_argument("--population", type=int, default=300, help="seed design: synthetic population topics (default 300)")
    parser.add_argument(
        "--seed",
        type=int,
        default=1,
        help="random seed of the studies (and of the seed design's synthetic population); default %(default)s",
    )
    parser.add_argument(
        "--full",
        type=float,
        default=adaptive.FULL,
        help="share of drawn groups that get all k answers, the others one (default %(default).3f; 1: every drawn group k)",
    )
    parser.add_argument(
        "--tie",
        default="",
        help="a rival candidate the simulated users follow as much as the planted truth (the null-ish case of the stopping rule)",
    )
    parser.add_argument(
        "--estimator",
        choices=("two-phase", "full-only"),
        default="two-phase",
        help="the reported k-answer estimates: the two-phase difference estimator on every drawn group's first answer "
        "corrected by the full groups (default), or the full groups alone (the earlier estimator, for comparison)",
    )
    parser.add_argument(
        "--coverage-only",
        action="store_true",
        help="measure only the adaptive arm's MUP coverage at the stop, with its diagnosis (the estimate's true standard "
        "error against the shown and the jackknife's, the effective df, coverage per candidate): no uniform arm, each study ends at its stop; the last line "
        "then has no saving",
    )
    parser.add_argument("--topics", type=int, default=TOPICS, help=f"topics per study (default {TOPICS})")
    parser.add_argument(
        "--candidates",
        default=",".join(CANDIDATES),
        help="comma-separated metrics the study compares (default: %(default)s); 'all': every registered metric",
    )
    args = parser.parse_args()
    if args.studies < 1 or args.B < 1 or args.batch < 0 or args.topics < 2 or not 0 < args.full <= 1 or args.explore_decay < 0:
        parser.error("--studies and --B must be >= 1, --batch >= 0, --topics >= 2, --full in (0, 1], --explore-decay >= 0")
    if not 0 < args.undisputed_round <= 1:
        parser.error("--undisputed-round must be in (0, 1]")
    start = time.perf_counter()
    model = UserModel(noise=args.noise, signal=2.0, annotators=3, cheaters=args.careless)
    pairs = seed_population(args.population, args.seed) if args.design == "seed" else trec_population()
    if args.candidates != "all":
        candidates = [m.strip() for m in args.candidates.split(",") if m.strip()]
        if TRUTH not in candidates:
            parser.error(f"--candidates must include the planted truth {TRUTH}")
        pairs = restrict(pairs, candidates)
    measures = list(pairs.measures)
    mu = latent_preference(pairs.d[measures.index(TRUTH)], model.signal)
    if args.tie:  # the null-ish case: users follow the truth and a rival equally
        if args.tie not in measures:
            parser.error(f"--tie {args.tie} is not a candidate ({', '.join(measures)})")
        mu = (mu + latent_preference(pairs.d[measures.index(args.tie)], model.signal)) / 2
    truth_mup = population_mup(pairs, model, mu)
    truth = measures[int(np.nanargmax(truth_mup))]  # the population's best metric (the planted one unless --tie)
    order = np.argsort(-np.nan_to_num(truth_mup, nan=-1))
    per_topic = pairs.d.shape[1] // (int(pairs.topic_index.max()) + 1)
    budget = args.topics * per_topic * model.annotators
    batch = args.batch or math.ceil(budget / 20)
    looks = math.ceil(budget / batch)
    global MAX_LOOKS, ALPHA, ONE_PHASE, LOOK_LEVEL, PRIORITY, DECAY, UNDISPUTED, TOPUP, FULL_UNDISPUTED, UNTIL_STOP, DETAIL
    UNTIL_STOP = args.coverage_only
    DETAIL = {} if args.coverage_only else None
    PRIORITY, DECAY, UNDISPUTED, TOPUP = args.priority, args.explore_decay, args.undisputed_round, args.topup
    FULL_UNDISPUTED = args.full_undisputed
    ONE_PHASE = args.estimator == "full-only"
    MAX_LOOKS = args.looks or looks
    alpha = ALPHA = adaptive.look_alpha(args.alpha, MAX_LOOKS, args.boundary)
    if args.topics > EXACT_TOPICS and args.B < adaptive.fewest_flips(alpha):
        parser.error(
            f"--B {args.B} sign flips can never leave a metric out at the looks' level {alpha:g}: use at least {adaptive.fewest_flips(alpha)}"
        )
    LOOK_LEVEL = adaptive.look_level(1 - args.alpha, MAX_LOOKS, args.boundary)
    print(
        f"{args.design}: {len(measures)} metrics, {args.topics} topics, about {args.topics * per_topic} groups x {model.annotators} answers per study, "
        f"batch {batch} answers, {looks} looks at alpha {alpha:.4f} ({args.boundary}), full share {args.full:.2f}; population MUP "
        + ", ".join(f"{measures[g]} {truth_mup[g]:.4f}" for g in order[:4])
        + f" (truth: {truth}); {time.perf_counter() - start:.1f} s",
        file=sys.stderr,
    )
    rng = np.random.default_rng(args.seed)
    uniform, adapted, complete, complete_detail = [], [], [], []
    for i in range(args.studies):
        study = draw_study(pairs, mu, model, args.topics, replace=args.design == "trec2014", rng=rng)
        everything = np.ones(study.answers.shape[0])  # the complete study: every pair k answers, no stopping
        complete.append(
            covering(study, study.answers.mean(axis=1), everything, truth_mup, (NOMINAL,))[0].sum() / np.isfinite(truth_mup).sum()
        )
        if DETAIL is not None:
            complete_detail.append(dict(DETAIL))
        seed = int(rng.integers(2**31))
        if not args.coverage_only:
            uniform.append(run_uniform(study, measures, truth, truth_mup, batch, alpha, args.B, np.random.default_rng(seed)))
        adapted.append(
            run_adaptive(
                study, measures, truth, truth_mup, batch, alpha, args.B, args.explore, args.others, args.full, np.random.default_rng(seed)
            )
        )
        if (i + 1) % 5 == 0 or i + 1 == args.studies:
            print(f"  {i + 1}/{args.studies} studies, {time.perf_counter() - start:.0f} s", file=sys.stderr)
    budget = max(look.spent for looks in uniform or adapted for look in looks[-1:])
    if args.coverage_only:
        budget = args.topics * per_topic * model.annotators
        a = summary("adaptive", adapted, budget)
        diagnose("adaptive at the stop", [stop(looks).detail for looks in adapted], truth_mup, measures)
        diagnose("complete study", complete_detail, truth_mup, measures)
        stops = np.bincount([adapted[i].index(stop(adapted[i])) + 1 for i in range(len(adapted))])
        print(f"stopped at look (1-based): {dict((i, int(n)) for i, n in enumerate(stops) if n)}", file=sys.stderr)
        print(f"complete study: MUP coverage of the nominal 95 % interval {np.mean(complete):.3f}", file=sys.stderr)
        print(f"truth_in_set_adaptive={a['truth']:.3f} coverage_mup_adaptive={a['coverage']:.3f} coverage_se={a['coverage_se']:.3f}")
        return 0
    u = summary("uniform", uniform, budget, UNIFORM_NOTE)
    a = summary("adaptive", adapted, budget)
    same_decision(uniform, adapted, budget)
    saving_error(uniform, adapted, budget)
    print(
        f"complete study (every pair k answers, no stopping): MUP coverage of the nominal 95 % interval {np.mean(complete):.3f}",
        file=sys.stderr,
    )
    print(f"seconds={time.perf_counter() - start:.1f} studies={args.studies} design={args.design}", file=sys.stderr)
    print(
        f"answers_to_decide_uniform={u['decide']:.0f} answers_to_decide_adaptive={a['decide']:.0f} "
        f"saving={u['decide'] / a['decide']:.2f} truth_in_set_adaptive={a['truth']:.3f} coverage_mup_adaptive={a['coverage']:.3f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
