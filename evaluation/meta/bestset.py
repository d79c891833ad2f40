"""The best set: every metric the data do not show to agree with the users less well than another (docs/meta.md#best-set).

One name ("the best metric by MUP") overstates what a study shows when several metrics are close.
The best set keeps every entry ``g`` for which the data do not reject "``g`` agrees with the users
at least as well as every other entry", the intersection over rivals ``h`` of ``MUP_g >= MUP_h``
(population values; Hsu 1996, multiple comparisons with the best; the confidence set for the best
of Mogstad, Romano, Shaikh & Wilhelm 2024, "Inference for ranks").

**Entries.** Metrics with the same sign on every pair of the study (same pairs defined) get the same
MUP on any answers: they are one entry, named ``"ERR@10 = nERR@10"``. A metric that ties on every
pair it is defined on (no spread: I-rec on a study whose runs cover the same intents) or has no
pair with a user preference is **undefined**: shown so, never a contender.

**Test: exact topic sign flips, max statistic.** Topics are the sampling units. With per-topic sums
``x_gt = sum u J`` and ``u_gt = sum u`` over the entry's defined pairs of topic ``t`` and totals
``X_g``, ``U_g`` (``MUP_g = X_g / U_g``), the difference ``MUP_h - MUP_g`` is ``sum_t z_ght`` with::

    z_ght = x_ht / U_h - x_gt / U_g - m_gh (u_ht / U_h - u_gt / U_g),   m_gh = (X_g + X_h) / (U_g + U_h)

(the last term is 0 when both are defined on the same pairs and centres the terms otherwise).
Under "``g`` and ``h`` are tied" the topic terms are exchangeable in sign: flipping the sign of a
topic's terms (every rival at once) leaves their joint law unchanged. The statistic
``S_g = max_h sum_t z_ght / ||z_gh||`` (self-normalised: the norm does not change under flips, so
the studentisation is exact) is compared with its sign-flip distribution: every one of the ``2^T``
flip vectors when ``T <= EXACT_TOPICS`` (exact; no asymptotics, no resampling error), else ``B``
random ones plus the identity (Monte Carlo: ``p = (1 + #) / (1 + B)``, still a valid p-value).
``p_best`` is the share of flips whose maximum reaches ``S_g``; ``g`` is in the set when
``p_best > alpha``. A rival strictly below ``g`` only makes the test conservative; a rival tied
with ``g`` is what the flips model exactly, also when the two differ on a single pair of a few
topics (sparse disagreement, where asymptotic tests fail). The maximum over rivals is the
multiplicity correction: each metric tied for best is left out with probability at most ``alpha``
however many entries are compared (measured: benchmarks/bench_coverage.py, docs/benchmarks.md).
``correction="none"`` tests each rival alone (the uncorrected rule, for contrast).

**Leader-rival intervals.** For the leader ``L`` (best MUP) and every rival ``h``,
``MUP_L - MUP_h`` with simultaneous ``1 - alpha`` intervals ``D_h +- c ||z~_h|| sqrt(T / (T - 1))``,
``z~`` the centred topic terms and ``c`` the ``1 - alpha`` quantile of ``max_h |sum_t e_t z~_ht| /
||z~_h||`` over the same sign flips ``e`` (a Rademacher wild bootstrap of the max-|t|; Romano & Wolf
2005 for the max-t construction).

No claim with fewer than ``MIN_TOPICS`` topics: ``2^-T`` exceeds 0.05 below 5 topics, so no
entry could ever be left out; ``in_best_set`` is then missing (NaN), ``measures`` empty.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from evaluation._types import FloatArray, IntArray
from evaluation.meta._resampling import RngLike, resolve_rng
from evaluation.meta.pairs import TIE, checked_pairs, on_items, signs

MIN_TOPICS = 5  # fewer topics: no best-set claim (2^-4 > 0.05: nothing could be left out)
EXACT_TOPICS = 12  # up to this many topics every sign-flip vector is enumerated (4,096); above, B random ones
CORRECTIONS = ("max", "none")
COLUMNS = ["measure", "entry", "MUP", "rank", "diff_to_leader", "diff_low", "diff_high", "p_best", "in_best_set", "status"]
SELECTION = 0.1  # beta = SELECTION * alpha: level spent on leaving clearly worse rivals out of the maximum
CHUNK = 2048  # sign-flip vectors per block (bounds memory: CHUNK x G x G floats)
CONVENTION = (
    "best set: entries g (metrics with the same sign on every pair merged) not rejected by the topic sign-flip "
    "max-statistic test of 'MUP_g >= MUP_h for every h' (exact over all 2^T flips up to 12 topics, else B random "
    "flips); p_best > alpha; metrics tied on every pair are undefined; no claim below 5 topics"
)


@dataclass(frozen=True)
class BestSet:
    """The entries not shown to agree with the users less well than another (module docstring).

    ``table``: one row per metric, best MUP first (undefined last), columns ``COLUMNS``: its
    ``entry`` (merged name), ``MUP``, ``rank``, ``diff_to_leader`` with its simultaneous interval
    ``diff_low diff_high``, ``p_best``, ``in_best_set`` (NaN without a claim) and ``status``
    (``best set``, ``out``, ``undefined: ...``, ``no claim``). ``entries`` the set as entry names,
    ``measures`` its metrics, ``groups`` every entry -> its metrics, ``leaders`` the metrics sharing
    the best MUP, ``undefined`` metric -> reason. ``claim`` is False below ``MIN_TOPICS`` topics.
    """

    table: pd.DataFrame
    entries: tuple[str, ...]
    measures: tuple[str, ...]
    leaders: tuple[str, ...]
    groups: dict[str, tuple[str, ...]]
    undefined: dict[str, str]
    alpha: float
    B: int
    seed: int | None
    n_topics: int
    correction: str
    claim: bool
    method: str  # "exact" (all 2^T flips), "monte carlo" (B flips) or "none"

    @property
    def size(self) -> int:
        """Entries in the set (merged metrics count once)."""
        return len(self.entries)

    @property
    def contenders(self) -> tuple[str, ...]:
        """Every defined entry, best MUP first (what a study too small for a claim leaves open)."""
        return tuple(self.groups)

    def __contains__(self, measure: object) -> bool:
        return measure in self.measures or measure in self.entries

    def as_dict(self) -> dict:
        """Plain data for templates and JSON: the set, the leaders, the settings and one row per metric."""
        return {
            "entries": list(self.entries),
            "measures": list(self.measures),
            "leaders": list(self.leaders),
            "groups": {k: list(v) for k, v in self.groups.items()},
            "undefined": dict(self.undefined),
            "size": self.size,
            "candidates": len(self.groups),
            "alpha": self.alpha,
            "B": self.B,
            "seed": self.seed,
            "topics": self.n_topics,
            "correction": self.correction,
            "claim": self.claim,
            "method": self.method,
            "min_topics": MIN_TOPICS,
            "rows": [
                {
                    "measure": r.measure,
                    "entry": r.entry,
                    "mup": _num(r.MUP),
                    "rank": None if np.isnan(r.rank) else int(r.rank),
                    "diff_to_leader": _num(r.diff_to_leader),
                    "diff_low": _num(r.diff_low),
                    "diff_high": _num(r.diff_high),
                    "p_best": _num(r.p_best),
                    "in_best_set": None if pd.isna(r.in_best_set) else bool(r.in_best_set),
                    "status": r.status,
                }
                for r in self.table.itertuples(index=False)
            ],
        }


def _num(value: float) -> float | None:
    return None if value is None or np.isnan(value) else float(value)


def topic_sums(d: FloatArray, p: FloatArray, user_sign: FloatArray, clusters: IntArray) -> tuple[FloatArray, FloatArray]:
    """Per-topic ``x = sum u J`` and ``u = sum u`` of each metric over its defined pairs: two (T, G) arrays."""
    defined = np.isfinite(d)
    s_m = np.where(defined, signs(np.nan_to_num(d)), 0.0)
    u = np.abs(p)
    _, index = np.unique(clusters, return_inverse=True)
    member = np.zeros((int(index.max()) + 1, d.shape[1]))
    member[index, np.arange(d.shape[1])] = 1.0
    return member @ ((u * user_sign)[None, :] * s_m).T, member @ (u[None, :] * defined).T


def merge_identical(d: FloatArray, measures: Sequence[str]) -> tuple[list[list[int]], dict[int, str]]:
    """Entries of metrics with the same sign on every pair (NaN = undefined must match too), and the undefined ones.

    Returns the groups (lists of row indices, in first-occurrence order) of the metrics with spread
    and ``{row: reason}`` for the metrics tied (or undefined) on every pair.
    """
    defined = np.isfinite(d)
    s = np.where(defined, signs(np.nan_to_num(d)), 9).astype(np.int8)
    undefined: dict[int, str] = {}
    groups: dict[bytes, list[int]] = {}
    for g in range(d.shape[0]):
        if not defined[g].any():
            undefined[g] = "undefined: no pair with a value"
        elif not (s[g][defined[g]] != 0).any():
            undefined[g] = f"undefined: ties on all {int(defined[g].sum())} pairs (no spread)"
        else:
            groups.setdefault(s[g].tobytes(), []).append(g)
    return list(groups.values()), undefined


def flip_vectors(T: int, B: int, rng: np.random.Generator) -> tuple[FloatArray, str]:
    """Every sign vector of T topics (exact, ``T <= EXACT_TOPICS``) or the identity plus B random ones: (F, T)."""
    if T <= EXACT_TOPICS:
        bits = (np.arange(2**T)[:, None] >> np.arange(T)[None, :]) & 1
        return 1.0 - 2.0 * bits, "exact"  # row 0 is the identity
    random = rng.integers(0, 2, size=(B, T)) * 2.0 - 1.0
    return np.vstack([np.ones((1, T)), random]), "monte carlo"


def _topic_terms(x: FloatArray, u: FloatArray) -> FloatArray:
    """``z[g, h, t]`` of the module docstring (MUP_h - MUP_g = sum_t z[g, h, t]): (G, G, T)."""
    X, U = x.sum(axis=0), u.sum(axis=0)
    a, b = x / U, u / U  # (T, G)
    m = (X[:, None] + X[None, :]) / (U[:, None] + U[None, :])  # (G, G)
    return (a.T[None, :, :] - a.T[:, None, :]) - m[:, :, None] * (b.T[None, :, :] - b.T[:, None, :])


def _flip_sums(flips: FloatArray, z: FloatArray) -> FloatArray:
    """``sum_t e_t z[g, h, t]`` for every flip vector ``e``: (F, G, G)."""
    G = z.shape[0]
    return (flips @ z.reshape(G * G, -1).T).reshape(flips.shape[0], G, G)


def sign_flip_p(z: FloatArray, flips: FloatArray, rivals: np.ndarray, correction: str = "max") -> FloatArray:
    """``p_best`` of every entry from its topic terms ``z`` (G, G, T) over the flip vectors (F, T) (row 0: identity).

    ``rivals[g, h]``: h is a rival of g. ``max``: one test of the maximum over the rivals;
    ``none``: the smallest per-rival p-value.
    """
    norm = np.sqrt((z**2).sum(axis=2))
    flat = norm <= TIE
    scale = np.where(flat, 1.0, norm)
    observed = np.where(rivals, np.where(flat, 0.0, z.sum(axis=2) / scale), -np.inf)  # (G, G)
    target = observed.max(axis=1) if correction == "max" else None
    reach = np.zeros(z.shape[0] if correction == "max" else z.shape[:2])
    for start in range(0, flips.shape[0], CHUNK):
        block = np.where(rivals[None], np.where(flat[None], 0.0, _flip_sums(flips[start : start + CHUNK], z) / scale[None]), -np.inf)
        if correction == "max":
            reach += (block.max(axis=2) >= target[None] - 1e-9).sum(axis=0)
        else:
            reach += (block >= observed[None] - 1e-9).sum(axis=0)
    p = reach / flips.shape[0]
    if correction == "max":
        return np.where(rivals.any(axis=1), p, 1.0)
    return np.where(rivals, p, 1.0).min(axis=1, initial=1.0)


def clearly_below(z: FloatArray, flips: FloatArray, beta: float) -> np.ndarray:
    """``out[g, h]``: rival ``h`` is clearly below ``g`` (the simultaneous ``1 - beta`` upper bound of ``MUP_h - MUP_g`` < 0).

    The first step of Romano, Shaikh & Wolf (2014, Econometrica 82(5)): the bounds are those of
    :func:`max_abs_quantile` over the rivals of each ``g``; such a rival cannot be the one that beats
    ``g`` and leaves its maximum, and the test's p-value pays ``beta`` for the selection.
    """
    T = z.shape[2]
    if T < 2:
        return np.zeros(z.shape[:2], dtype=bool)
    centred = z - z.mean(axis=2, keepdims=True)
    norm = np.sqrt((centred**2).sum(axis=2))
    live = norm > TIE
    scale = np.where(live, norm, 1.0)
    worst = np.full((flips.shape[0], z.shape[0]), 0.0)
    for start in range(0, flips.shape[0], CHUNK):
        block = np.abs(_flip_sums(flips[start : start + CHUNK], centred)) / scale[None]
        worst[start : start + CHUNK] = np.where(live[None], block, 0.0).max(axis=2)
    c = np.quantile(worst, 1 - beta, axis=0)  # (G,)
    upper = z.sum(axis=2) + c[:, None] * norm * np.sqrt(T / (T - 1))
    return upper < -TIE


def leader_half_widths(z_leader: FloatArray, flips: FloatArray, alpha: float) -> FloatArray:
    """Half-widths of the simultaneous ``1 - alpha`` intervals of ``MUP_L - MUP_h`` from the leader's topic terms (G, T)."""
    T = z_leader.shape[1]
    centred = z_leader - z_leader.mean(axis=1, keepdims=True)
    norm = np.sqrt((centred**2).sum(axis=1))
    live = norm > TIE
    if not live.any() or T < 2:
        return np.zeros(z_leader.shape[0])
    stat = np.abs(flips @ centred[live].T) / norm[live][None, :]  # (F, live)
    c = float(np.quantile(stat.max(axis=1), 1 - alpha))
    return c * norm * np.sqrt(T / (T - 1))


def best_set(
    d: FloatArray,
    p: FloatArray,
    measures: Sequence[str],
    *,
    user_sign: FloatArray | None = None,
    clusters: IntArray | None = None,
    B: int = 1000,
    rng: RngLike = None,
    alpha: float = 0.05,
    correction: str = "max",
) -> BestSet:
    """The best set of G metrics by MUP on P run pairs (module docstring).

    Parameters
    ----------
    d : (G, P) metric differences; NaN where a metric is undefined on a pair (no term there).
    p : (P,) mean user preferences; ``user_sign`` their exact signs (default ``sign(p)``, 1e-12 tie).
    clusters : (P,) topic of each pair (default: each pair its own topic).
    B, rng : random sign-flip vectors (used above ``EXACT_TOPICS`` topics) and their seed.
    alpha : level of each entry's test (and 1 - level of the leader-rival intervals);
    correction : ``max`` (default) or ``none``.
    """
    x = checked_pairs(d, p, measures, user_sign, clusters)
    d, p, s_u, clusters = x.d, x.p, x.user_sign, x.clusters
    if B < 1:
        raise ValueError(f"the best set needs B >= 1 sign-flip vectors, got {B}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    if correction not in CORRECTIONS:
        raise ValueError(f"correction must be one of {', '.join(CORRECTIONS)}, got {correction!r}")
    generator, seed = resolve_rng(rng)
    groups, undefined = merge_identical(d, measures)
    x_all, u_all = topic_sums(d, p, s_u, clusters)
    T = x_all.shape[0]
    heads = [group[0] for group in groups]
    for g in [h for h in heads if u_all[:, h].sum() <= 0]:  # every defined pair a user tie: MUP is 0/0
        undefined.update({m: "undefined: no pair with a user preference" for m in groups[heads.index(g)]})
    groups = [group for group in groups if group[0] not in undefined]
    x, u = x_all[:, [g[0] for g in groups]], u_all[:, [g[0] for g in groups]]
    E = len(groups)
    mup = x.sum(axis=0) / u.sum(axis=0) if E else np.zeros(0)
    order = sorted(range(E), key=lambda e: (-mup[e], groups[e][0]))
    claim = T >= MIN_TOPICS and E > 1
    p_best = np.full(E, np.nan)
    half = np.full(E, np.nan)
    method = "none"
    if E:
        flips, method = flip_vectors(T, B, generator)
        z = _topic_terms(x, u)
        if claim:
            rivals = ~np.eye(E, dtype=bool)
            beta = SELECTION * alpha
            rivals &= ~clearly_below(z, flips, beta)
            p_best = np.minimum(1.0, sign_flip_p(z, flips, rivals, correction) + beta)
        if E > 1 and T >= 2:
            half = leader_half_widths(z[order[0]], flips, alpha)  # of MUP_L - MUP_h (z[L, h] sums to MUP_h - MUP_L)
    leader_value = mup[order[0]] if E else np.nan
    leaders = np.abs(mup - leader_value) <= TIE
    low, high = leader_value - mup - half, leader_value - mup + half
    inside = (p_best > alpha) | leaders if claim else np.zeros(E, dtype=bool)
    rank = 1 + (mup[None, :] > mup[:, None] + TIE).sum(axis=1)
    names = [" = ".join(measures[g] for g in group) for group in groups]
    rows = []
    for e in order:
        status = ("best set" if inside[e] else "out") if claim else "no claim"
        for g in groups[e]:
            row = (measures[g], names[e], mup[e], rank[e], leader_value - mup[e], low[e], high[e], p_best[e])
            rows.append((*row, bool(inside[e]) if claim else np.nan, status))
    for g in sorted(undefined):
        rows.append((measures[g], measures[g], np.nan, np.nan, np.nan, np.nan, np.nan, np.nan, False if claim else np.nan, undefined[g]))
    table = pd.DataFrame.from_records(rows, columns=COLUMNS)
    table["rank"] = table["rank"].astype(np.float64)
    return BestSet(
        table=table,
        entries=tuple(names[e] for e in order if inside[e]),
        measures=tuple(measures[g] for e in order if inside[e] for g in groups[e]),
        leaders=tuple(measures[g] for e in order if leaders[e] for g in groups[e]),
        groups={names[e]: tuple(measures[g] for g in groups[e]) for e in order},
        undefined={measures[g]: reason for g, reason in sorted(undefined.items())},
        alpha=alpha,
        B=B,
        seed=seed if method == "monte carlo" else None,
        n_topics=T,
        correction=correction,
        claim=bool(claim),
        method=method if claim else "none",
    )


def with_best_set(table: pd.DataFrame, chosen: BestSet) -> pd.DataFrame:
    """An agreement table with the columns ``entry``, ``p_best`` and ``in_best_set`` of each row's measure
    (``in_best_set`` missing without a claim)."""
    per_measure = chosen.table.set_index("measure")
    inside = table["measure"].map(per_measure["in_best_set"])
    return table.assign(
        entry=table["measure"].map(per_measure["entry"]),
        p_best=table["measure"].map(per_measure["p_best"]),
        in_best_set=inside.fillna(False).astype(bool) if chosen.claim else inside.astype(object).where(inside.notna(), np.nan),
    )


def best_set_with_users(items: pd.DataFrame, scores: pd.DataFrame, measures: Sequence[str] | None = None, **options: Any) -> BestSet:
    """:func:`best_set` of preference items against a per-topic score table (:func:`~evaluation.meta.pairs.on_items`,
    as ``agreement_with_users`` reads them), with :func:`best_set`'s options (``B``, ``rng``, ``alpha``, ``correction``)."""
    return on_items(best_set, items, scores, measures, **options)
