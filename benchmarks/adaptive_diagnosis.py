"""Why bench_adaptive.py's MUP intervals cover what they cover (``--coverage-only``; docs/benchmarks.md#adaptive-allocation).

Per study, the interval read where the study stopped (or the complete study's) keeps its parts: the estimate, the
topics' linearisation variance the interval shows, its effective degrees of freedom
(:func:`evaluation.meta.intervals.linearisation_df`) and the :class:`evaluation.meta.adaptive.WeightedEstimates`. Over the
studies, :func:`diagnose` sets the interval's width against the estimate's true error (its root mean square around the
population MUP), also the delete-one-topic jackknife's (the variance shown before 2026-11-28), and splits the coverage:
per candidate, the score interval as shown at three t quantiles and with the jackknife variance, and the linearised
interval ``value +- q SE``.
"""

from __future__ import annotations

import math
import sys

import numpy as np
from scipy.stats import norm
from scipy.stats import t as student_t

from evaluation.meta.intervals import jackknife_df, jackknife_variance, score_interval


def diagnose(label: str, details: list[dict], truth_mup: np.ndarray, measures: list[str]) -> None:
    """Why the shown MUP interval covers what it covers (--coverage-only): per candidate, over the studies, the
    estimate's error against the population MUP, its root mean square (the true standard error, bias included) against
    the root mean square of the shown (linearisation) standard error and of the topic jackknife's, the interval's mean
    half-width against 1.96 times the true standard error, the effective degrees of freedom, and the coverage: of the
    score interval as shown, at t(T - 1), at z and with the jackknife's variance and df instead, and with the shown
    standard error at three quantiles (t at the effective df; t at T - 1; the normal's) on the linearised interval
    ``value +- q se``."""
    ok = [d for d in details if d]
    if not ok:
        return
    value = np.array([d["value"] for d in ok])  # (S, G)
    var = np.array([d["var"] for d in ok])
    df = np.array([d["df"] for d in ok])
    half = np.array([(d["high"] - d["low"]) / 2 for d in ok])
    T = np.array([d["T"] for d in ok])[:, None]
    err = value - truth_mup[None, :]
    se = np.sqrt(var)
    z = norm.ppf(0.975)
    rows, score = [], []
    for name, q in (("t(df)", student_t.ppf(0.975, df)), ("t(T-1)", student_t.ppf(0.975, T - 1) + 0 * df), ("z", z + 0 * df)):
        rows.append(f"{name} {np.nanmean(np.abs(err) <= q * se):.3f}")
    jack_hits = np.zeros((len(ok), truth_mup.size), dtype=bool)
    for name, option in (("t(df)", "df"), ("t(T-1)", None), ("z", np.inf), ("the jackknife variance at t(its df)", "jackknife")):
        hits = []
        for d in ok:
            est = d["est"]
            loo = est.loo["MUP"]
            if option == "jackknife":  # the form shown before 2026-11-28
                low, high = score_interval(est.value["MUP"], loo, est.n, est.holds, 0.95, df=jackknife_df(loo))
            else:
                q_df = est.df("MUP") if option == "df" else None if option is None else np.full(est.n.shape, option)
                low, high = score_interval(est.value["MUP"], loo, est.n, est.holds, 0.95, df=q_df, var=est.variance("MUP"))
            hits.append((low <= truth_mup + 1e-12) & (truth_mup - 1e-12 <= high))
        score.append(f"{name} {np.mean(hits):.3f}")
        if option == "jackknife":
            jack_hits = np.array(hits)
    print(
        f"{label}: {len(ok)} studies; coverage of the score interval (as shown) with " + ", ".join(score) + "; of the linearised "
        "interval value +- q SE with " + ", ".join(rows),
        file=sys.stderr,
    )
    quant = np.nanpercentile(df, [10, 25, 50, 75, 90])
    spread = 2 * np.nanmean(var, axis=0) ** 2 / np.nanvar(var, axis=0, ddof=1)  # Satterthwaite's df of the variances themselves
    print(
        f"  effective df: quantiles 10/25/50/75/90 % {' / '.join(f'{x:.1f}' for x in quant)} (T - 1 = {np.median(T) - 1:.0f}); "
        f"mean t quantile {np.nanmean(student_t.ppf(0.975, df)):.3f} (z {z:.3f}); the df the variances' spread over the studies "
        f"shows, 2 mean(v)^2 / var(v), per metric: {' / '.join(f'{x:.1f}' for x in spread)}",
        file=sys.stderr,
    )
    low, high = np.array([d["low"] for d in ok]), np.array([d["high"] for d in ok])
    truth = truth_mup[None, :]
    shown = (low <= truth + 1e-12) & (truth - 1e-12 <= high)
    linear = np.abs(err) <= student_t.ppf(0.975, df) * se
    q = np.clip((1 + value) / 2, 0, 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        n_eff = np.where(var > 0, q * (1 - q) / (var / 4), np.inf)
    jack_var = np.array([jackknife_variance(d["est"].loo["MUP"]) for d in ok])
    for g, m in enumerate(measures):
        rmse = math.sqrt(np.nanmean(err[:, g] ** 2))
        rms_se = math.sqrt(np.nanmean(var[:, g]))
        rms_jack = math.sqrt(np.nanmean(jack_var[:, g]))
        print(
            f"  {m} (population MUP {truth_mup[g]:.4f}): bias {np.nanmean(err[:, g]):+.4f}, empirical SD {np.nanstd(err[:, g], ddof=1):.4f}, "
            f"RMSE {rmse:.4f}; shown SE root mean square {rms_se:.4f} (ratio {rms_se / rmse:.3f}; the jackknife's {rms_jack / rmse:.3f}), "
            f"median {np.nanmedian(se[:, g]):.4f} "
            f"(ratio {np.nanmedian(se[:, g]) / rmse:.3f}); mean half-width / (1.96 RMSE) {np.nanmean(half[:, g]) / (z * rmse):.3f}, "
            f"/ mean t(df) SE {np.nanmean(half[:, g]) / np.nanmean(student_t.ppf(0.975, df[:, g]) * se[:, g]):.3f}; median df "
            f"{np.nanmedian(df[:, g]):.1f}, median n_eff {np.nanmedian(n_eff[:, g]):.0f}; coverage shown {shown[:, g].mean():.3f} "
            f"(truth below / above it {(truth[:, g] < low[:, g] - 1e-12).mean():.3f} / {(truth[:, g] > high[:, g] + 1e-12).mean():.3f}), "
            f"linearised t(df) {linear[:, g].mean():.3f}, with the jackknife variance {jack_hits[:, g].mean():.3f}",
            file=sys.stderr,
        )
