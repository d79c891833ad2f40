"""Significance tests between runs and discriminative power (docs/metrics.md#paired-bootstrap).

* Paired bootstrap test, two-sided, studentised (Sakai, SIGIR 2006): ``t0 = z_bar / (s / sqrt n)``;
  resample the null-shifted ``w = z - z_bar``; ``ASL = #{b: |t*_b| >= |t0|} / B``.
* Randomised Tukey HSD (Carterette, TOIS 2012; Sakai & Song 2013): permute each topic row of the
  topic-by-run matrix, ``D_b = max_j mean_j - min_j mean_j``; ``ASL_jk = #{b: D_b >= |x_j - x_k|} / B``.

Both are vectorised over resamples, run pairs and metrics: one set of bootstrap index vectors
(as per-topic multiplicities, so resample sums are matrix products) or one set of row
permutations is drawn and shared by every pair and every metric (common random numbers).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from evaluation._types import FloatArray, IntArray
from evaluation.exceptions import EvaluationError
from evaluation.meta._matrix import ScoreCube
from evaluation.meta._resampling import RngLike, bootstrap_counts, resolve_rng, row_permutations

TESTS = ("bootstrap", "tukey")
TOL = 1e-12
GEMM_ROWS = 4096  # run pairs per matrix product in bootstrap_asl
CHUNK = 64  # run pairs per studentisation slice
FLAT = 1e-12 / (1 - 1e-12)  # r <= FLAT * q  <=>  r <= 1e-12 * (q + r)
SUMMARY_COLUMNS = ["measure", "test", "topics", "pairs", "significant", "power", "delta_required", "B", "alpha", "seed"]
PAIR_COLUMNS = ["measure", "run_a", "run_b", "diff", "asl", "significant"]
CONVENTIONS = {
    "bootstrap": "paired, two-sided, studentised (Sakai 2006); docs/metrics.md#paired-bootstrap zero-spread rules, tolerance 1e-12",
    "tukey": "randomised Tukey HSD permuting each topic row; D_b >= |x_j - x_k| - 1e-12 counts (docs/metrics.md#randomised-tukey-hsd)",
    "resamples": "one set of B resamples shared by every run pair and metric (common random numbers)",
    "significant": "ASL < alpha (docs/metrics.md#discriminative-power)",
    "delta_required": "bootstrap: max over pairs of t_alpha s / sqrt(n); tukey: ceil(B alpha)-th largest D_b",
    "undefined": "a measure undefined on a topic (NaN for every run) is tested on the topics where it is defined "
    "(column topics); measures defined on the same topics share resamples, the group defined on every topic is drawn first",
}


def run_pairs(m: int) -> tuple[IntArray, IntArray]:
    """Indices ``(a, b)`` of the ``m (m - 1) / 2`` unordered run pairs, ``a < b``, row-major."""
    a, b = np.triu_indices(m, k=1)
    return a.astype(np.int64), b.astype(np.int64)


def bootstrap_asl(
    z: FloatArray, counts: IntArray, alpha: float = 0.05, *, tol: float = TOL, sums: Callable[[slice], FloatArray] | None = None
) -> tuple[FloatArray, FloatArray]:
    """Paired bootstrap ASL for K paired samples under one shared set of resamples (docs/metrics.md#paired-bootstrap).

    Parameters
    ----------
    z : (K, n) per-topic differences ``X_t - Y_t`` of K run pairs (of any metrics).
    counts : (B, n) multiplicity of each topic in each resample (rows sum to n).
    alpha : level used for the difference required for significance.
    tol : zero tolerance for ``s``, means and the comparison with ``|t0|``.
    sums : optional ``rows -> (len(rows), B)`` resample sums ``sum_t counts[b, t] z[k, t]`` for a
        slice of rows, when the caller has a cheaper way to them (run pairs: differences of per-run
        sums, :func:`discriminative_power`); default one matrix product per block of rows.

    Returns
    -------
    asl : (K,) achieved significance levels.
    delta : (K,) difference required for significance ``t_alpha * s / sqrt(n)`` where ``t_alpha``
        is the ceil(B alpha)-th largest ``|t*|`` (Sakai 2006).

    Notes
    -----
    Degenerate cases (docs/metrics.md#paired-bootstrap): ``n < 2`` gives NaN; ``s = 0`` gives ``t0 = 0`` (ASL 1) if
    ``z_bar = 0`` else ``+-inf`` (ASL 0); a resample with zero spread has ``t* = 0`` if its mean is 0
    else ``+-inf``. ``|t*| >= |t0| - tol`` counts as reaching ``t0``.

    For the exact check ``z = (0.1, 0.3, -0.1)`` (docs/metrics.md#paired-bootstrap) a naive count gives 15 of 27 (ASL 0.5556). In exact
    arithmetic ``w = (0, 0.2, -0.2)`` and the resample drawing topic 1 three times is all zeros
    (``t* = 0``), giving 14 of 27 (0.5185); the printed 15 comes from ``0.1 - mean(z) = -1.4e-17`` in
    floating point read as a non-zero mean (``t* = inf``). ``tol=0`` reproduces that reading.
    """
    z = np.atleast_2d(np.asarray(z, dtype=np.float64))
    counts = np.asarray(counts, dtype=np.float64)
    K, n = z.shape
    B = counts.shape[0]
    if n < 2:
        return np.full(K, np.nan), np.full(K, np.nan)
    z_bar = z.mean(axis=1)
    s = z.std(axis=1, ddof=1)
    flat = s <= tol
    with np.errstate(divide="ignore", invalid="ignore"):
        t0 = np.where(flat, np.where(np.abs(z_bar) <= tol, 0.0, np.copysign(np.inf, z_bar)), z_bar / (s / math.sqrt(n)))
    w = z - z_bar[:, None]
    w[flat] = 0.0
    k = min(B, max(1, math.ceil(B * alpha)))
    counts_t = np.ascontiguousarray(counts.T)
    threshold = np.abs(t0) - tol
    asl = np.empty(K)
    t_alpha = np.empty(K)
    # Resample sums for a large block of pairs come from two big matrix products (efficient,
    # also multi-threaded); the studentisation then runs on small cache-sized slices. Every
    # step covers all B resamples at once: there is no loop over resamples.
    for top in range(0, K, GEMM_ROWS):
        block = w[top : top + GEMM_ROWS]
        if sums is None:
            s1 = block @ counts_t  # (pairs, B) resample sums of w
        else:  # sum c (z - z_bar) = sum c z - n z_bar, as every resample has n topics
            rows = slice(top, top + block.shape[0])
            s1 = sums(rows) - n * z_bar[rows, None]
            s1[flat[rows]] = 0.0
        s2 = (block * block) @ counts_t  # (pairs, B) resample sums of squares
        for lo in range(0, block.shape[0], CHUNK):
            rows = slice(top + lo, top + lo + CHUNK)
            u = _squared_studentised(s1[lo : lo + CHUNK], s2[lo : lo + CHUNK], n, tol)  # t*^2 / (n - 1)
            limit = threshold[rows, None]
            asl[rows] = np.count_nonzero(u >= np.copysign(limit * limit, limit) / (n - 1), axis=1) / B
            u.partition(B - k, axis=1)  # in place: u is not needed after this
            t_alpha[rows] = np.sqrt(u[:, B - k] * (n - 1))
    with np.errstate(invalid="ignore"):
        delta = t_alpha * s / math.sqrt(n)
    return asl, delta


def _pair_sums(values: FloatArray, counts: IntArray, a: IntArray, b: IntArray) -> Callable[[slice], FloatArray]:
    """Resample sums of the run-pair differences of ``values (G, n, m)``, rows ordered metric by metric
    and pair by pair: ``sum_t c_t (x_b,t - x_a,t) = S_b - S_a`` with per-run sums ``S`` from one
    matrix product over the G*m runs instead of G*m(m-1)/2 pairs."""
    G, n, m = values.shape
    per_run = (values.transpose(0, 2, 1).reshape(G * m, n) @ np.ascontiguousarray(counts.T, dtype=np.float64)).reshape(G, m, -1)
    metric = np.repeat(np.arange(G), a.size)
    first, second = np.tile(a, G), np.tile(b, G)
    return lambda rows: per_run[metric[rows], second[rows]] - per_run[metric[rows], first[rows]]


def _squared_studentised(s1: FloatArray, s2: FloatArray, n: int, tol: float) -> FloatArray:
    """``t*^2 / (n - 1)`` of resamples from their sums (overwrites ``s1`` and ``s2``).

    With ``q = s1^2 / n`` and ``r = s2 - q = (n - 1) sd^2``: ``t^2 = (n - 1) q / r``. Zero spread (all
    drawn values equal; the sums leave rounding residue, hence the relative test ``r <= 1e-12 (q + r)``)
    gives ``inf``, or 0 when the mean is 0 too (``|s1| <= n tol``; docs/metrics.md#paired-bootstrap).
    """
    q = np.multiply(s1, s1, out=s1)
    q /= n
    r = np.subtract(s2, q, out=s2)
    flat = np.flatnonzero(r <= FLAT * q)
    zero_mean = q.flat[flat] <= n * tol * tol
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.divide(q, r, out=q)
    ratio.flat[flat] = np.where(zero_mean, 0.0, np.inf)
    return ratio


def tukey_asl(x: FloatArray, perms: IntArray) -> tuple[FloatArray, FloatArray]:
    """Randomised Tukey HSD ASLs of every run pair of one metric (docs/metrics.md#randomised-tukey-hsd).

    Parameters
    ----------
    x : (n, m) topic-by-run scores.
    perms : (B, n, m) row permutations (``perms[b, t]`` permutes topic t's m values).

    Returns
    -------
    asl : (m, m) symmetric matrix of ASLs (diagonal 1).
    d : (B,) sorted maxima ``D_b`` of the permuted run-mean ranges.
    """
    x = np.asarray(x, dtype=np.float64)
    n, m = x.shape
    permuted = x[np.arange(n)[None, :, None], perms]  # (B, n, m)
    means = permuted.mean(axis=1)
    d = np.sort(means.max(axis=1) - means.min(axis=1))
    observed = x.mean(axis=0)
    gap = np.abs(observed[:, None] - observed[None, :])
    reached = d.size - np.searchsorted(d, gap - TOL, side="left")
    return reached / d.size, d


@dataclass(frozen=True)
class DiscriminativePower:
    """Result of :func:`discriminative_power`.

    ``summary``: ``measure test topics pairs significant power delta_required B alpha seed`` (topics =
    the topics the measure is defined on and tested over; power = share of run pairs with ``ASL <
    alpha``, NaN on fewer than 2 topics; delta_required = the largest per-pair required difference
    for the bootstrap, the ceil(B alpha)-th largest ``D_b`` for Tukey HSD).
    ``pairs``: ``measure run_a run_b diff asl significant`` with ``diff = mean(run_b) - mean(run_a)``.
    """

    summary: pd.DataFrame
    pairs: pd.DataFrame
    test: str
    B: int
    alpha: float
    seed: int | None

    def asl_curves(self) -> dict[str, FloatArray]:
        """Sorted ASLs per measure (Sakai 2006 ASL curves)."""
        return {m: np.sort(g["asl"].to_numpy()) for m, g in self.pairs.groupby("measure", sort=False)}


def discriminative_power(
    cube: ScoreCube, *, test: str = "bootstrap", B: int = 1000, alpha: float = 0.05, rng: RngLike = None
) -> DiscriminativePower:
    """Discriminative power of every measure of ``cube`` over all run pairs (docs/metrics.md#discriminative-power).

    One set of resamples (bootstrap multiplicities or Tukey row permutations) is drawn from
    ``rng`` and used for every pair and every measure defined on the same topics. A measure
    undefined on some topics is tested on the others (:meth:`ScoreCube.groups`: the measures
    defined everywhere are drawn for first, so their results do not depend on its presence).
    """
    if test not in TESTS:
        raise ValueError(f"test must be one of {', '.join(TESTS)}, got {test!r}")
    if B < 1:
        raise ValueError(f"B must be >= 1, got {B}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    G, n, m = cube.values.shape
    if m < 2:
        raise EvaluationError(f"discriminative power needs at least 2 runs, got {m}")
    if n < 2:
        raise EvaluationError(f"discriminative power needs at least 2 topics, got {n}")
    generator, seed = resolve_rng(rng)
    a, b = run_pairs(m)
    means = cube.means().to_numpy().T  # (G, m), each measure over its own topics
    diff = means[:, b] - means[:, a]  # (G, P)
    asl = np.full((G, a.size), np.nan)
    required = np.full(G, np.nan)
    for group in cube.groups():
        rows = [cube.measure_index(name) for name in group.measures]
        if len(group.topics) >= 2:
            asl[rows], required[rows] = _group_asl(group.values, a, b, test, B, alpha, generator)
    topics = cube.topic_counts()
    significant = asl < alpha
    tested = topics >= 2
    summary = pd.DataFrame(
        {
            "measure": list(cube.measures),
            "test": test,
            "topics": topics,
            "pairs": a.size,
            "significant": significant.sum(axis=1),
            "power": np.where(tested, significant.mean(axis=1), np.nan),
            "delta_required": required,
            "B": B,
            "alpha": alpha,
            "seed": seed,
        },
        columns=SUMMARY_COLUMNS,
    )
    runs = np.array(cube.runs, dtype=object)
    pairs = pd.DataFrame(
        {
            "measure": np.repeat(np.array(cube.measures, dtype=object), a.size),
            "run_a": np.tile(runs[a], G),
            "run_b": np.tile(runs[b], G),
            "diff": diff.ravel(),
            "asl": asl.ravel(),
            "significant": significant.ravel(),
        },
        columns=PAIR_COLUMNS,
    )
    return DiscriminativePower(summary, pairs, test, B, alpha, seed)


def _group_asl(
    values: FloatArray, a: IntArray, b: IntArray, test: str, B: int, alpha: float, generator: np.random.Generator
) -> tuple[FloatArray, FloatArray]:
    """ASLs (G, P) and required differences (G,) of measures defined on the same topics (complete ``values``)."""
    G, n, m = values.shape
    if test == "bootstrap":
        counts = bootstrap_counts(generator, n, B)
        z = (values[:, :, b] - values[:, :, a]).transpose(0, 2, 1).reshape(G * a.size, n)
        asl, delta = bootstrap_asl(z, counts, alpha, sums=_pair_sums(values, counts, a, b))
        return asl.reshape(G, a.size), delta.reshape(G, a.size).max(axis=1)
    perms = row_permutations(generator, B, n, m)
    asl = np.empty((G, a.size))
    required = np.empty(G)
    k = min(B, max(1, math.ceil(B * alpha)))
    for g in range(G):  # loop over metrics only; resamples and pairs are vectorised
        matrix, d = tukey_asl(values[g], perms)
        asl[g] = matrix[a, b]
        required[g] = d[B - k]
    return asl, required
