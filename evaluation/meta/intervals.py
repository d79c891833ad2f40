"""Confidence intervals of the agreement statistics (docs/meta.md#confidence-intervals).

Default (``score``): a topic-jackknife score interval. Every agreement statistic ``theta`` lies in
[-1, 1]; on the proportion scale ``q = (1 + theta) / 2`` it is an agreement share. Its variance is
the delete-one-topic jackknife over the topics (clusters) of the study (Quenouille 1956; Efron &
Stein 1981; the cluster jackknife of complex surveys, Wolter 2007 ch. 4), which carries the
clustering of run pairs in topics, the ratio form of every statistic and, for the Delta bins, the
re-estimated bin boundary. The interval is Wilson's score interval (Wilson 1927) for ``q`` with the
effective sample size that matches that variance, ``n* = q (1 - q) / v(q)`` (the number of run pairs
``n`` where the variance is 0), and with ``n*`` scaled by
``(z / t_{T-1})^2`` for the ``T`` topics of the study (the jackknife's degrees of freedom: every
topic is left out once, also one that holds no pair of the subset) (Korn & Graubard 1998, Survey
Methodology 24(2), for proportions from clustered samples; Dean & Pagano 2015, J. Survey
Statistics and Methodology 3(4), who found this family closest to nominal among clustered-binomial
intervals). In the middle of the range this is ``theta +- t_{T-1} sqrt(v)``; near +-1 it is
asymmetric and never collapses to a point: a subset where every pair agrees gets
``[1 - 2 z^2 / (n* + z^2), 1]`` rather than ``[1, 1]``.

An estimate at or beyond +-1 with a positive variance has no Wilson interval (``q (1 - q) = 0`` makes ``n* = 0``, and the
interval would be the whole range): only a design-weighted estimate gets there (the two-phase difference estimator of
``evaluation.meta.adaptive`` estimates a ratio's numerator and denominator apart, so it can leave [-1, 1]). It gets the
linearised interval around the estimate moved to the nearest edge, ``clip(theta) +- t sqrt(v)``, cut to [-1, 1]: the
statistic lies in [-1, 1], so moving the estimate there never takes it further from the truth, and the interval covers
whenever the linearised one around ``theta`` does.

Where the topics weigh unequally (an adaptive study's design weights: one topic's heavy group can be most
of the variance) ``T - 1`` overstates what the variance rests on; ``score_interval(df=)`` takes the
moment-corrected Satterthwaite degrees of freedom of :func:`jackknife_df` instead. There the delete-one values
also over-state a heavy topic's share: for a ratio ``A / B`` of topic totals, ``theta - theta_(t) = (a_t - theta b_t)
/ (B - b_t)``, the linearised term ``(a_t - theta b_t) / B`` scaled by ``B / (B - b_t)``, so a topic holding a third of
``B`` enters the jackknife at 2.25 times its linearised weight. The design-weighted estimates of
``evaluation.meta.adaptive`` therefore take ``score_interval(var=)`` the Taylor linearisation variance of
:func:`linearisation_variance` (Woodruff 1971, JASA 66; Wolter 2007 ch. 6; the infinitesimal jackknife, Jaeckel 1972,
Efron 1982 ch. 6), which the two agree on when the topics weigh alike, with the degrees of freedom of
:func:`linearisation_df` (docs/meta.md#confidence-intervals).

No interval (NaN) where there is too little data: the statistic undefined, fewer than
``MIN_TOPICS`` topics holding pairs of the subset (the only place where the topics holding pairs
of the subset count), or a leave-one-topic-out value undefined.

``percentile`` (the former default, kept for comparison): percentile interval of a cluster
bootstrap over topics, with the same minimum.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import norm
from scipy.stats import t as student_t

from evaluation._types import FloatArray

MIN_TOPICS = 3  # topics that must hold pairs of a subset for it to get an interval
# A variance of a statistic in [-1, 1] below this (standard error 1e-8) is floating-point rounding (an estimate of
# 1 + 7e-16 whose leave-one-out values are all 1.0, influence values of 1e-10 from central differences): it counts as
# none, so such a subset gets Wilson's interval with n = pairs, not the edge rule's point [1, 1].
ROUNDING_VARIANCE = 1e-16
METHODS = ("score", "percentile", "none")
CONVENTION = {
    "score": (
        "topic-jackknife score interval: Wilson interval for (1 + theta) / 2 with effective size "
        "q (1 - q) / v_jackknife(q) (at most n pairs), scaled by (z / t_{T-1})^2 for the T topics of the study; "
        f"none with fewer than {MIN_TOPICS} topics holding pairs of the subset"
    ),
    "percentile": f"percentile interval of a cluster bootstrap resampling topics; none with fewer than {MIN_TOPICS} topics",
    "none": "no intervals",
}


def check_method(method: str) -> None:
    if method not in METHODS:
        raise ValueError(f"interval must be one of {', '.join(METHODS)}, got {method!r}")


def jackknife_variance(loo: FloatArray) -> FloatArray:
    """Delete-one-cluster jackknife variance from the T leave-one-out values ``loo`` (T, ...)."""
    T = loo.shape[0]
    return (T - 1) / T * ((loo - loo.mean(axis=0)) ** 2).sum(axis=0)


def jackknife_df(loo: FloatArray) -> FloatArray:
    """Effective degrees of freedom of the delete-one-cluster jackknife variance (Satterthwaite 1946), moment-corrected.

    The variance is a sum of the topics' terms ``a_t = (loo_t - mean)^2``; taken as independent ``c_t chi^2_1``, its
    degrees of freedom are ``(sum c)^2 / sum c^2``. With ``E a_t^2 = 3 c_t^2`` and ``E (sum a)^2 = (sum c)^2 + 2 sum c^2``
    the moment estimate is ``3 (sum a)^2 / sum a^2 - 2``: about ``T`` when the topics weigh alike, 1 when one topic's
    term is the whole variance (a heavy design weight on one topic). Clipped to ``[1, T - 1]``; ``T - 1`` where the
    variance is 0.
    """
    loo = np.asarray(loo, dtype=np.float64)
    a, T = (loo - loo.mean(axis=0)) ** 2, loo.shape[0]
    s1, s2 = a.sum(axis=0), (a**2).sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        df = np.where(s2 > 0, 3 * s1**2 / np.where(s2 > 0, s2, 1.0) - 2, T - 1)
    return np.clip(np.nan_to_num(df, nan=T - 1), 1, max(T - 1, 1))


def linearisation_variance(z: FloatArray) -> FloatArray:
    """Taylor linearisation variance of a smooth function of topic totals from its topic influence values ``z`` (T, ...).

    ``z_t`` is the derivative of the statistic in the direction of topic ``t``'s totals, ``d/de f(S + e s_t)`` at 0
    (for a ratio ``A / B``: ``(a_t - theta b_t) / B``); the topics as primary units drawn with replacement give
    ``T / (T - 1) sum_t (z_t - mean z)^2`` (Woodruff 1971, JASA 66; Wolter 2007 ch. 6; Saerndal, Swensson & Wretman
    1992 sec. 5.5). Fewer than 2 topics: NaN.
    """
    z = np.asarray(z, dtype=np.float64)
    T = z.shape[0]
    if T < 2:
        return np.full(z.shape[1:], np.nan)
    return T / (T - 1) * ((z - z.mean(axis=0)) ** 2).sum(axis=0)


def linearisation_df(z: FloatArray) -> FloatArray:
    """:func:`jackknife_df`'s moment-corrected Satterthwaite degrees of freedom for :func:`linearisation_variance`,
    whose topic terms are ``(z_t - mean z)^2``: the same computation on the influence values."""
    return jackknife_df(z)


def score_interval(
    theta: FloatArray,
    loo: FloatArray,
    n: FloatArray,
    topics: FloatArray,
    level: float = 0.95,
    min_topics: int = MIN_TOPICS,
    df: FloatArray | None = None,
    var: FloatArray | None = None,
) -> tuple[FloatArray, FloatArray]:
    """Topic-jackknife score interval (module docstring) of statistics in [-1, 1].

    Parameters
    ----------
    theta : (G,) point values; loo : (T, G) the values with each topic left out.
    n : (G,) run pairs of the subset; topics : (G,) topics holding at least one of them.
    df : (G,) degrees of freedom of the t quantile (default ``T - 1``, the jackknife's with equal topics).
    var : (G,) the variance of ``theta`` to use instead of the jackknife's (default): :func:`linearisation_variance`
        for design-weighted estimates (``loo`` still decides where there is an interval; no interval where ``var`` is
        NaN; negative: ValueError).
    """
    if not 0 < level < 1:
        raise ValueError(f"confidence level must be in (0, 1), got {level}")
    theta = np.asarray(theta, dtype=np.float64)
    loo = np.asarray(loo, dtype=np.float64)
    ok = np.isfinite(theta) & (np.asarray(topics) >= max(min_topics, 2)) & np.isfinite(loo).all(axis=0)
    if var is not None:
        var = np.broadcast_to(np.asarray(var, dtype=np.float64), theta.shape)
        if (var < 0).any():
            raise ValueError("a variance must not be negative")
        ok &= np.isfinite(var)  # an undefined variance: no interval, as an undefined leave-one-out value
    low = np.full(theta.shape, np.nan)
    high = low.copy()
    if not ok.any():
        return low, high
    value = theta[ok]
    q = np.clip((1 + value) / 2, 0.0, 1.0)
    var_q = (jackknife_variance(loo[:, ok]) if var is None else var[ok]) / 4
    var_q = np.where(var_q < ROUNDING_VARIANCE / 4, 0.0, var_q)  # rounding, not variance: never an edge point [1, 1]
    pairs = np.asarray(n, dtype=np.float64)[ok]
    with np.errstate(divide="ignore", invalid="ignore"):
        n_eff = np.where(var_q > 0, q * (1 - q) / var_q, np.inf)
    n_eff = np.maximum(np.where(np.isfinite(n_eff), n_eff, pairs), 1e-12)
    z = norm.ppf(0.5 + level / 2)
    t = np.broadcast_to(student_t.ppf(0.5 + level / 2, loo.shape[0] - 1 if df is None else np.asarray(df, dtype=np.float64)[ok]), q.shape)
    n_adj = n_eff * (z / t) ** 2
    z2n = z * z / n_adj
    centre = (q + z2n / 2) / (1 + z2n)
    half = z / (1 + z2n) * np.sqrt(q * (1 - q) / n_adj + z2n / (4 * n_adj))
    wilson_low = np.minimum(2 * np.clip(centre - half, 0.0, 1.0) - 1, value)  # Wilson's ends hold q exactly; guard rounding
    wilson_high = np.maximum(2 * np.clip(centre + half, 0.0, 1.0) - 1, value)
    edge = (np.abs(value) >= 1) & (var_q > 0)  # no Wilson interval there (module docstring): the linearised one, cut
    spread = t * 2 * np.sqrt(var_q)
    edge_value = np.clip(value, -1.0, 1.0)
    low[ok] = np.where(edge, np.clip(edge_value - spread, -1.0, 1.0), wilson_low)
    high[ok] = np.where(edge, np.clip(edge_value + spread, -1.0, 1.0), wilson_high)
    return low, high
