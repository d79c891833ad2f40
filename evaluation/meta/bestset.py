"""The best set: every metric whose MUP is not significantly below another's (docs/meta.md#best-set).

One name ("the best metric by MUP") overstates what a study shows when several metrics are close.
The best set keeps every metric ``g`` for which the data do not reject "``g`` agrees with the users
at least as well as every other metric", i.e. the intersection over the rivals ``h`` of
``MUP_g >= MUP_h`` (population values). The test of that intersection is the maximum of the
studentised MUP differences (a max-statistic, single-step; Hsu 1996, multiple comparisons with the
best; the elimination rule of Hansen, Lunde & Nason 2011, "The model confidence set"; the confidence
set for the best of Mogstad, Romano, Shaikh & Wilhelm 2024, "Inference for ranks")::

    T_g = max_h (MUP_h - MUP_g) / se(MUP_h - MUP_g)

and its null distribution is that of ``max_h (D*_hg - D_hg) / se*(D*_hg)`` over a paired cluster
bootstrap of topics (every metric on the same resampled topics; the differences are re-centred at
the observed ones), leaving out of the maximum the rivals clearly below ``g`` (``T_hg < -sqrt(2 log log
T)``; the moment selection of Hansen 2005, "A test for superior predictive ability"), which cannot be
the ones that beat it. ``p_best`` is the share of resamples whose centred maximum reaches ``T_g``; ``g``
is in the set when ``p_best > alpha``. The maximum over the rivals is the multiplicity correction:
with the truth ``t`` the best metric, it is left out only when its own test rejects, so the set
holds it with probability about ``1 - alpha`` however many metrics are compared; metrics tied with
the leader are always in (``T_g = 0``). ``correction="none"`` tests each comparison alone (the
uncorrected rule, for contrast: a smaller set that loses the truth more often).

Standard errors are the cluster (topic) delta-method ones of a ratio of sums: with
``MUP_g = X_g / U_g`` (``X`` = sum of ``u J``, ``U`` = sum of ``u`` over the metric's pairs) and per-topic
sums ``x_gt``, ``u_gt``, the influence of topic ``t`` is ``psi_gt = (x_gt - MUP_g u_gt) / U_g`` and
``se^2(MUP_h - MUP_g) = T / (T - 1) sum_t (psi_ht - psi_gt)^2``, in the sample and in every resample
(weighted by the resample's topic multiplicities). A metric undefined on a pair (NaN difference)
simply has no term for it. Fewer than ``MIN_TOPICS`` topics: no claim, every defined metric is in.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from evaluation._types import FloatArray, IntArray
from evaluation.exceptions import EvaluationError
from evaluation.meta._resampling import RngLike, bootstrap_counts, resolve_rng

MIN_TOPICS = 5  # fewer topics: no best-set claim (every defined metric is in the set)
CORRECTIONS = ("max", "none")
COLUMNS = ["measure", "MUP", "rank", "diff_to_leader", "p_best", "in_best_set"]
TIE = 1e-12
CONVENTION = (
    "best set: metrics g not rejected by the paired topic-bootstrap max-t test of 'MUP_g >= MUP_h for every h' "
    "(studentised MUP differences, cluster delta-method se; p_best > alpha)"
)


@dataclass(frozen=True)
class BestSet:
    """The metrics not shown to agree with the users less well than another (module docstring).

    ``table``: one row per metric, best MUP first (undefined last), columns ``measure MUP rank
    diff_to_leader p_best in_best_set``; ``measures`` the set in that order; ``leaders`` the metrics
    sharing the best MUP. ``claim`` is False when there were fewer than ``MIN_TOPICS`` topics (every
    defined metric is then in the set and ``p_best`` is NaN).
    """

    table: pd.DataFrame
    measures: tuple[str, ...]
    leaders: tuple[str, ...]
    alpha: float
    B: int
    seed: int | None
    n_topics: int
    correction: str
    claim: bool

    @property
    def size(self) -> int:
        return len(self.measures)

    def __contains__(self, measure: object) -> bool:
        return measure in self.measures

    def as_dict(self) -> dict:
        """Plain data for templates and JSON: the set, the leaders, the settings and one row per metric."""
        return {
            "measures": list(self.measures),
            "leaders": list(self.leaders),
            "size": self.size,
            "candidates": int(self.table["MUP"].notna().sum()),
            "alpha": self.alpha,
            "B": self.B,
            "seed": self.seed,
            "topics": self.n_topics,
            "correction": self.correction,
            "claim": self.claim,
            "rows": [
                {
                    "measure": r.measure,
                    "mup": None if np.isnan(r.MUP) else float(r.MUP),
                    "rank": None if np.isnan(r.rank) else int(r.rank),
                    "diff_to_leader": None if np.isnan(r.diff_to_leader) else float(r.diff_to_leader),
                    "p_best": None if np.isnan(r.p_best) else float(r.p_best),
                    "in_best_set": bool(r.in_best_set),
                }
                for r in self.table.itertuples(index=False)
            ],
        }


def topic_sums(d: FloatArray, p: FloatArray, user_sign: FloatArray, clusters: IntArray) -> tuple[FloatArray, FloatArray]:
    """Per-topic ``x = sum u J`` and ``u = sum u`` of each metric over its defined pairs: two (T, G) arrays."""
    defined = np.isfinite(d)
    s_m = np.where(defined, np.where(np.abs(np.nan_to_num(d)) <= TIE, 0.0, np.sign(np.nan_to_num(d))), 0.0)
    u = np.abs(p)
    _, index = np.unique(clusters, return_inverse=True)
    member = np.zeros((int(index.max()) + 1, d.shape[1]))
    member[index, np.arange(d.shape[1])] = 1.0
    return member @ ((u * user_sign)[None, :] * s_m).T, member @ (u[None, :] * defined).T


def _studentised(x: FloatArray, u: FloatArray, w: FloatArray) -> tuple[FloatArray, FloatArray]:
    """MUP (R, G) and the se of every difference (R, G, G) under topic weights ``w`` (R, T)."""
    X, U = w @ x, w @ u  # (R, G)
    with np.errstate(invalid="ignore", divide="ignore"):
        mup = np.where(U > 0, X / U, np.nan)
        psi = (x[None] - mup[:, None, :] * u[None]) / U[:, None, :]  # (R, T, G)
    psi = np.nan_to_num(psi)
    wpsi = w[:, :, None] * psi
    gram = np.matmul(wpsi.transpose(0, 2, 1), psi)  # (R, G, G): sum_t w_t psi_g psi_h
    diag = np.einsum("rgg->rg", gram)
    n_topics = w.sum(axis=1)[:, None, None]
    with np.errstate(invalid="ignore", divide="ignore"):
        var = (diag[:, :, None] + diag[:, None, :] - 2 * gram) * n_topics / (n_topics - 1)
    return mup, np.sqrt(np.maximum(var, 0.0))


def _t(diff: FloatArray, se: FloatArray) -> FloatArray:
    """``diff / se``; a difference without spread is 0 when it is 0 and +-inf otherwise."""
    with np.errstate(invalid="ignore", divide="ignore"):
        t = diff / se
    flat = se <= TIE
    if flat.any():
        t[flat] = np.where(np.abs(diff[flat]) <= TIE, 0.0, np.copysign(np.inf, diff[flat]))
    return t


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
    B, rng : paired bootstrap resamples of topics and their seed.
    alpha : level of each metric's test; ``correction``: ``max`` (default) or ``none``.
    """
    d = np.atleast_2d(np.asarray(d, dtype=np.float64))
    p = np.asarray(p, dtype=np.float64)
    G, P = d.shape
    if len(measures) != G:
        raise ValueError(f"{len(measures)} measure names for {G} rows of differences")
    if p.shape != (P,) or P == 0:
        raise EvaluationError(f"preferences must be a non-empty vector of {P} pairs, got shape {p.shape}")
    if not np.isfinite(p).all():
        raise EvaluationError("preferences must be finite")
    if B < 1:
        raise ValueError(f"the best set needs B >= 1 bootstrap resamples, got {B}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    if correction not in CORRECTIONS:
        raise ValueError(f"correction must be one of {', '.join(CORRECTIONS)}, got {correction!r}")
    s_u = np.where(np.abs(p) <= TIE, 0.0, np.sign(p)) if user_sign is None else np.asarray(user_sign, dtype=np.float64)
    clusters = np.arange(P) if clusters is None else np.asarray(clusters)
    generator, seed = resolve_rng(rng)
    x, u = topic_sums(d, p, s_u, clusters)
    T = x.shape[0]
    mup, se = _studentised(x, u, np.ones((1, T)))
    mup, se = mup[0], se[0]
    defined = np.isfinite(mup)
    diff = mup[None, :] - mup[:, None]  # diff[g, h] = MUP_h - MUP_g
    rivals = defined[:, None] & defined[None, :] & ~np.eye(G, dtype=bool)
    p_best = np.full(G, np.nan)
    claim = T >= MIN_TOPICS and defined.sum() > 1
    if claim:
        counts = bootstrap_counts(generator, T, B).astype(np.float64)
        # resamples in single precision: a third less time, t statistics still good to ~1e-6 (p_best is a count of them)
        boot_mup, boot_se = _studentised(x.astype(np.float32), u.astype(np.float32), counts.astype(np.float32))
        boot_diff = boot_mup[:, None, :] - boot_mup[:, :, None]  # (B, g, h)
        observed = np.where(rivals, _t(diff, se), -np.inf)
        # rivals clearly below g cannot be the ones that beat it: left out of the null maximum (moment selection)
        relevant = rivals & (observed >= -np.sqrt(2 * np.log(np.log(T))))
        centred = np.where(relevant[None], _t(boot_diff - diff[None], boot_se), -np.inf)
        if correction == "max":
            reach = centred.max(axis=2) >= observed.max(axis=1)[None, :] - TIE
            p_best = np.where(relevant.any(axis=1), reach.mean(axis=0), 1.0)
        else:  # each comparison alone: the smallest per-rival p-value decides
            per_rival = (centred >= observed[None] - TIE).mean(axis=0)
            p_best = np.where(relevant, per_rival, 1.0).min(axis=1, initial=1.0)
        p_best = np.where(defined, np.minimum(p_best, 1.0), np.nan)
        inside = defined & (p_best > alpha)
    else:
        inside = defined.copy()
    leader_value = np.nanmax(mup) if defined.any() else np.nan
    leaders = defined & (np.abs(mup - leader_value) <= TIE)
    inside |= leaders  # a leader is never beaten (T_g <= 0); guard against resampling noise
    order = np.lexsort((np.arange(G), -np.nan_to_num(mup, nan=-np.inf)))
    rank = np.full(G, np.nan)
    rank[defined] = 1 + (mup[None, defined] > mup[defined, None] + TIE).sum(axis=1)
    table = pd.DataFrame(
        {
            "measure": [measures[g] for g in order],
            "MUP": mup[order],
            "rank": rank[order],
            "diff_to_leader": (leader_value - mup)[order],
            "p_best": p_best[order],
            "in_best_set": inside[order],
        },
        columns=COLUMNS,
    )
    return BestSet(
        table=table,
        measures=tuple(measures[g] for g in order if inside[g]),
        leaders=tuple(measures[g] for g in order if leaders[g]),
        alpha=alpha,
        B=B,
        seed=seed if claim else None,
        n_topics=T,
        correction=correction,
        claim=bool(claim),
    )


def with_best_set(table: pd.DataFrame, chosen: BestSet) -> pd.DataFrame:
    """An agreement table with the columns ``p_best`` and ``in_best_set`` of each row's measure."""
    per_measure = chosen.table.set_index("measure")
    return table.assign(
        p_best=table["measure"].map(per_measure["p_best"]),
        in_best_set=table["measure"].map(per_measure["in_best_set"]).fillna(False).astype(bool),
    )


def best_set_with_users(
    items: pd.DataFrame,
    scores: pd.DataFrame,
    measures: Sequence[str] | None = None,
    *,
    B: int = 1000,
    rng: RngLike = None,
    alpha: float = 0.05,
    correction: str = "max",
) -> BestSet:
    """:func:`best_set` of preference items against a per-topic score table (as ``agreement_with_users`` reads them)."""
    from evaluation.meta.agreement import pair_inputs

    x = pair_inputs(items, scores, measures)
    return best_set(x.d, x.p, x.measures, user_sign=x.user_sign, clusters=x.clusters, B=B, rng=rng, alpha=alpha, correction=correction)
