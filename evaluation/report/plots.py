"""Figures of the meta-evaluation (matplotlib, Agg backend, imported only when a figure is drawn).

Each ``*_figure`` function builds one figure; the function of the same name without the suffix
writes it as ``<stem>.png`` and ``<stem>.svg`` into a directory (atomically: a figure is either
complete or absent) and returns the paths. :func:`render_figure` renders to bytes in memory, so a
caller (the CLI) can write figures only once everything else has succeeded.

* :func:`agreement_heatmaps` -- tau_b (or another statistic) per Delta bin x preference subrange,
  one panel per metric, with N in every cell (Chen et al., Fig. 1 (a, b)); the ``rows`` layout adds
  the subranges over all run pairs (Fig. 1 (c));
* :func:`metric_bars` -- MUP, MUP_b (optionally in both forms), tau, tau_b and discriminative power
  per metric, sorted by MUP (Chen et al., Fig. 2);
* :func:`asl_curves` -- sorted ASLs per metric against pair index (Sakai 2006);
* :func:`recovery_curves` -- planted-truth recovery versus noise.
"""

from __future__ import annotations

import io
import math
from pathlib import Path

import numpy as np
import pandas as pd

from evaluation.io.scores import write_atomic
from evaluation.wording import counted

FORMATS = ("png", "svg")


def _pyplot():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def render_figure(
    fig, directory: str | Path, stem: str, *, formats: tuple[str, ...] = FORMATS, tight: bool = True
) -> list[tuple[Path, bytes]]:
    """``fig`` as PNG and SVG bytes (or the given ``formats``) with their target paths in ``directory``; closes the figure.

    SVG keeps its text as text (selectable, searchable, and much faster to write than glyph outlines).
    ``tight=False`` keeps the figure's own margins instead of cropping to what is drawn, which costs
    a second drawing pass (for figures laid out with fixed margins, e.g. the many-cell heatmap rows).
    """
    import matplotlib

    plt = _pyplot()
    rendered = []
    try:
        for fmt in formats:
            buffer = io.BytesIO()
            with matplotlib.rc_context({"svg.fonttype": "none"}):
                fig.savefig(buffer, format=fmt, dpi=150, bbox_inches="tight" if tight else None, metadata=_metadata(fmt))
            rendered.append((Path(directory) / f"{stem}.{fmt}", buffer.getvalue()))
    finally:
        plt.close(fig)
    return rendered


def write_files(files: list[tuple[Path, bytes]]) -> list[Path]:
    """Write rendered figures atomically, creating their directories; returns the paths."""
    for path, content in files:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, content)
    return [path for path, _ in files]


def save_figure(fig, directory: str | Path, stem: str) -> list[Path]:
    """Write ``fig`` as PNG and SVG into ``directory`` (created if needed); close it."""
    return write_files(render_figure(fig, directory, stem))


def _metadata(fmt: str) -> dict:
    # Drop the creation date so identical inputs give identical files.
    return {"Date": None} if fmt == "svg" else {}


def _grid(n: int, max_cols: int = 4) -> tuple[int, int]:
    cols = min(n, max_cols)
    return math.ceil(n / cols), cols


def agreement_heatmaps(
    table: pd.DataFrame, directory: str | Path, *, statistic: str = "tau_b", stem: str = "agreement_heatmaps", layout: str = "panels"
) -> list[Path]:
    """Write :func:`agreement_heatmaps_figure` into ``directory``."""
    return save_figure(agreement_heatmaps_figure(table, statistic=statistic, layout=layout), directory, stem)


HEATMAP_LAYOUTS = ("panels", "rows")


def agreement_heatmaps_figure(table: pd.DataFrame, *, statistic: str = "tau_b", layout: str = "panels"):
    """Chen et al. Fig. 1: ``statistic`` per bin x subrange cell for every metric, N annotated.

    ``layout="panels"``: one 2 x 4 panel per metric (the paper's look); ``"rows"``: one row per
    metric in a single panel (small then large bin, each over the four subranges), compact and much
    faster to draw for many metrics.
    """
    if layout not in HEATMAP_LAYOUTS:
        raise ValueError(f"layout must be one of {', '.join(HEATMAP_LAYOUTS)}, got {layout!r}")
    if layout == "rows":
        return _heatmap_rows_figure(table, statistic)
    from evaluation.report.tables import agreement_grid

    plt = _pyplot()
    measures = list(dict.fromkeys(table["measure"]))
    rows, cols = _grid(len(measures))
    fig, axes = plt.subplots(rows, cols, figsize=(3.6 * cols, 2.4 * rows + 0.6), squeeze=False, layout="constrained")
    image = None
    for ax, measure in zip(axes.flat, measures):
        values, counts = agreement_grid(table, measure, statistic)
        data = values.to_numpy(dtype=float)
        image = ax.imshow(np.ma.masked_invalid(data), cmap="RdBu", vmin=-1, vmax=1, aspect="auto")
        ax.set_title(measure, fontsize=9)
        ax.set_xticks(range(values.shape[1]), values.columns, fontsize=7)
        ax.set_yticks(range(values.shape[0]), values.index, fontsize=7)
        _annotate_cells(ax, data, counts.to_numpy())
    for ax in list(axes.flat)[len(measures) :]:
        ax.axis("off")
    if image is not None:
        fig.colorbar(image, ax=axes, shrink=0.8, label=statistic)
    fig.suptitle(f"{statistic} by Delta bin (rows) and preference subrange (columns)", fontsize=10)
    return fig


def _annotate_cells(ax, data: np.ndarray, counts: np.ndarray) -> None:
    """Write the value and N into every cell of an ``imshow`` (white on dark cells)."""
    for i in range(data.shape[0]):
        for j in range(data.shape[1]):
            text = "n/a" if np.isnan(data[i, j]) else f"{data[i, j]:.2f}"
            dark = np.isfinite(data[i, j]) and abs(data[i, j]) > 0.6
            ax.text(j, i, f"{text}\nN={counts[i, j]}", ha="center", va="center", fontsize=6, color="white" if dark else "black")


def _heatmap_rows_figure(table: pd.DataFrame, statistic: str):
    """Every metric as one row of 12 cells: the small Delta bin x 4 subranges, the large bin, then
    all run pairs (Chen et al. Fig. 1 (a), (b) and (c)), in one panel; a cell without pairs is blank."""
    from evaluation.meta.agreement import BINS, SUBRANGES

    plt = _pyplot()
    measures = list(dict.fromkeys(table["measure"]))
    groups = (*BINS, "all pairs")
    subsets = [f"{b}:{s}" for b in BINS for s in SUBRANGES] + list(SUBRANGES)
    rows = table[table["statistic"] == statistic].set_index(["measure", "subset"])
    index = pd.MultiIndex.from_product([measures, subsets])
    counts = rows["n"].reindex(index).fillna(0).to_numpy(dtype=np.int64).reshape(len(measures), -1)
    data = rows["value"].reindex(index).to_numpy(dtype=float, copy=True).reshape(len(measures), -1)
    data[counts == 0] = np.nan
    height = 0.42 * len(measures) + 1.6
    fig, ax = plt.subplots(figsize=(12.0, height))
    fig.subplots_adjust(left=0.16, right=0.9, top=1 - 0.9 / height, bottom=0.5 / height)
    image = ax.imshow(np.ma.masked_invalid(data), cmap="RdBu", vmin=-1, vmax=1, aspect="auto")
    ax.set_xticks(range(data.shape[1]), [f"{g}\n{s}" for g in groups for s in SUBRANGES], fontsize=7)
    ax.xaxis.tick_top()
    ax.set_yticks(range(len(measures)), measures, fontsize=7)
    for k in range(1, len(groups)):
        ax.axvline(k * len(SUBRANGES) - 0.5, color="black", linewidth=1)
    _annotate_cells(ax, data, counts)
    fig.colorbar(image, ax=ax, fraction=0.04, pad=0.02, label=statistic)
    fig.suptitle(
        f"{statistic} by preference subrange |p|: (a) small and (b) large Delta bin, (c) all run pairs; N run pairs per cell", fontsize=9
    )
    return fig


def metric_bars(
    table: pd.DataFrame,
    directory: str | Path,
    *,
    power: pd.DataFrame | None = None,
    intervals: bool = False,
    both_mup_b: bool = False,
    stem: str = "metric_bars",
) -> list[Path]:
    """Write :func:`metric_bars_figure` into ``directory``."""
    return save_figure(metric_bars_figure(table, power=power, intervals=intervals, both_mup_b=both_mup_b), directory, stem)


MUP_B_LABELS = {"MUP_b": "MUP_b (tau_b-consistent)", "MUP_b_published": "MUP_b (Formula 3)"}


def metric_bars_figure(table: pd.DataFrame, *, power: pd.DataFrame | None = None, intervals: bool = False, both_mup_b: bool = False):
    """Chen et al. Fig. 2: MUP, MUP_b, tau, tau_b (+ discriminative ``power`` of a discpower
    summary, column ``power`` per ``measure``) per metric, sorted by MUP; with ``intervals``, the
    confidence intervals of the table as error bars (none where the table has none); with
    ``both_mup_b``, MUP_b in both forms side by side, labelled (the tau_b-consistent default and
    Formula 3 as printed, docs/metrics.md#mup_b)."""
    plt = _pyplot()
    whole = table[table["subset"] == "all"]
    overall = whole.pivot(index="measure", columns="statistic", values="value")
    low = whole.pivot(index="measure", columns="statistic", values="ci_low")
    high = whole.pivot(index="measure", columns="statistic", values="ci_high")
    series = ["MUP", "MUP_b", "MUP_b_published", "tau", "tau_b"] if both_mup_b else ["MUP", "MUP_b", "tau", "tau_b"]
    if power is not None:
        overall = overall.join(power.set_index("measure")["power"], how="left")
        series.append("power")
    overall = overall.sort_values("MUP", ascending=False, kind="stable")
    x = np.arange(len(overall))
    width = 0.8 / len(series)
    fig, ax = plt.subplots(figsize=(max(6.0, 0.7 * len(overall) + 2), 3.8), layout="constrained")
    for k, name in enumerate(series):
        heights = overall[name].to_numpy(dtype=float)
        error = None
        if intervals and name in low.columns:
            lo = low[name].reindex(overall.index).to_numpy(dtype=float)
            hi = high[name].reindex(overall.index).to_numpy(dtype=float)
            if np.isfinite(lo).any():
                error = np.nan_to_num(np.vstack([heights - lo, hi - heights]), nan=0.0).clip(min=0.0)
        label = MUP_B_LABELS.get(name, name) if both_mup_b else name
        ax.bar(x + (k - (len(series) - 1) / 2) * width, heights, width, label=label, yerr=error, error_kw={"linewidth": 0.6})
    ax.set_xticks(x, overall.index, rotation=45, ha="right", fontsize=8)
    ax.axhline(0, color="black", linewidth=0.6)
    ax.set_ylabel("value")
    ax.legend(fontsize=8, ncols=min(len(series), 6 if both_mup_b else len(series)))
    ax.set_title("Agreement with users (sorted by MUP)" + (", 95% intervals" if intervals else ""), fontsize=10)
    return fig


def asl_curves(
    pairs: pd.DataFrame, directory: str | Path, *, alpha: float = 0.05, max_asl: float = 0.1, stem: str = "asl_curves"
) -> list[Path]:
    """Write :func:`asl_curves_figure` into ``directory``."""
    return save_figure(asl_curves_figure(pairs, alpha=alpha, max_asl=max_asl), directory, stem)


def asl_curves_figure(pairs: pd.DataFrame, *, alpha: float = 0.05, max_asl: float = 0.1):
    """Sakai's ASL curves: each metric's sorted ASLs against pair index (region ASL <= ``max_asl``)."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.0, 4.0), layout="constrained")
    for measure, group in pairs.groupby("measure", sort=False):
        asl = np.sort(group["asl"].to_numpy(dtype=float))
        ax.plot(np.arange(1, asl.size + 1), asl, label=str(measure), linewidth=1)
    ax.axhline(alpha, color="grey", linestyle="--", linewidth=0.8)
    ax.set_ylim(0, max_asl)
    ax.set_xlabel("run pairs sorted by ASL")
    ax.set_ylabel("ASL")
    ax.legend(fontsize=6, ncols=2)
    ax.set_title("ASL curves (closer to the origin = more discriminative)", fontsize=10)
    return fig


def recovery_curves(sim: pd.DataFrame, directory: str | Path, *, statistic: str = "MUP", stem: str = "recovery") -> list[Path]:
    """Write :func:`recovery_curves_figure` into ``directory``."""
    return save_figure(recovery_curves_figure(sim, statistic=statistic), directory, stem)


def recovery_curves_figure(sim: pd.DataFrame, *, statistic: str = "MUP"):
    """Share of simulations in which the planted truth comes out first by ``statistic``, versus
    noise: one panel per (annotators, topics) setting, one line per truth metric."""
    plt = _pyplot()
    annotators = sorted(set(sim["annotators"]))
    topics = sorted(set(sim["topics"]))
    fig, axes = plt.subplots(
        len(annotators),
        len(topics),
        figsize=(3.4 * len(topics) + 1.8, 2.6 * len(annotators) + 0.5),
        squeeze=False,
        sharex=True,
        sharey=True,
        layout="constrained",
    )
    for i, k in enumerate(annotators):
        for j, n in enumerate(topics):
            ax = axes[i, j]
            cell = sim[(sim["annotators"] == k) & (sim["topics"] == n)]
            for truth, group in cell.groupby("truth", sort=False):
                group = group.sort_values("noise")
                ax.plot(group["noise"], group[f"first_by_{statistic}"], marker="o", markersize=3, label=str(truth))
            ax.axhline(0.95, color="grey", linestyle="--", linewidth=0.8)
            ax.set_ylim(0, 1.02)
            ax.set_title(f"{counted(k, 'annotator')}, {counted(n, 'topic')}", fontsize=8)
            if i == len(annotators) - 1:
                ax.set_xlabel("noise sd (scale points)", fontsize=8)
            if j == 0:
                ax.set_ylabel(f"truth first by {statistic}", fontsize=8)
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside right center", fontsize=7)
    fig.suptitle("Planted-truth recovery", fontsize=10)
    return fig
