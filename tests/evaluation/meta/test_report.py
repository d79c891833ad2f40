"""Report helpers: lossless tidy rendering and the figures."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evaluation.exceptions import FormatError
from evaluation.meta.agreement import agreement
from evaluation.report import plots
from evaluation.report.tables import agreement_grid, read_table, render_table, to_markdown
from tests.evaluation.tables_parse import markdown_cells

FRAME = pd.DataFrame({"name": ["a", "b"], "n": [1, 2], "x": [0.1, math.nan], "flag": [True, False], "big": [math.inf, -1.5]})


def test_render_table_formats() -> None:
    assert render_table(FRAME, "tsv") == "name\tn\tx\tflag\tbig\na\t1\t0.1\ttrue\tinf\nb\t2\tnan\tfalse\t-1.5\n"
    assert render_table(FRAME, "csv").splitlines()[1] == "a,1,0.1,true,inf"
    records = json.loads(render_table(FRAME, "json"))
    assert records[1] == {"name": "b", "n": 2, "x": None, "flag": False, "big": -1.5}
    assert records[0]["big"] == "inf"
    assert markdown_cells(to_markdown(FRAME))[1][0] == ["a", "1", "0.1000", "True", "inf"]


def test_round_trip_keeps_full_precision() -> None:
    frame = pd.DataFrame({"v": [1 / 3, 2 / 3]})
    back = pd.read_csv(__import__("io").StringIO(render_table(frame)), sep="\t")
    assert back["v"].tolist() == frame["v"].tolist()


def test_figures_are_written_as_png_and_svg(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    d = rng.normal(size=(3, 40))
    p = np.clip(np.rint(d[0] * 2), -4, 4)
    table = agreement(d, p, ["A", "B", "C"]).table
    values, counts = agreement_grid(table, "A")
    assert values.shape == (2, 4) and counts.to_numpy().sum() == np.count_nonzero(p)
    paths = plots.agreement_heatmaps(table, tmp_path) + plots.metric_bars(table, tmp_path)
    pairs = pd.DataFrame({"measure": ["A"] * 3, "asl": [0.01, 0.2, 0.04]})
    paths += plots.asl_curves(pairs, tmp_path)
    sim = pd.DataFrame(
        {
            "truth": ["A", "A"],
            "annotators": [3, 3],
            "topics": [50, 50],
            "noise": [0.5, 1.0],
            "first_by_MUP": [1.0, 0.8],
            "first_by_tau_b": [1.0, 0.7],
        }
    )
    paths += plots.recovery_curves(sim, tmp_path)
    assert len(paths) == 8 and all(p.stat().st_size > 1000 for p in paths)
    assert {p.suffix for p in paths} == {".png", ".svg"}
    assert not list(tmp_path.glob(".*tmp"))


@pytest.mark.parametrize("fmt", ["tsv", "csv", "json"])
def test_read_table_reads_back_every_format(tmp_path: Path, fmt: str) -> None:
    path = tmp_path / f"t.{fmt}"
    path.write_text(render_table(FRAME, fmt))
    back = read_table(str(path), ["name", "x"])
    assert back["name"].tolist() == ["a", "b"] and back["n"].tolist() == [1, 2]
    assert back["x"].iloc[0] == 0.1 and math.isnan(back["x"].iloc[1])


def test_read_table_names_the_file_and_the_missing_columns(tmp_path: Path) -> None:
    path = tmp_path / "power.tsv"
    path.write_text("measure\tpairs\nA\t3\n")
    with pytest.raises(FormatError, match=r"power.tsv: lacks columns power, test; required: measure power test$"):
        read_table(str(path), ["measure", "power", "test"])
    path.write_text("  \n")
    with pytest.raises(FormatError, match="power.tsv: file is empty"):
        read_table(str(path), ["measure"])
    with pytest.raises(FormatError, match="no such file"):
        read_table(str(tmp_path / "absent.tsv"), ["measure"])


def test_metric_bars_draw_power_in_mup_order() -> None:
    """Chen et al. Fig. 2: one bar series per statistic, sorted by MUP; power joined by measure."""
    d = np.array([[0.1, 0.2, -0.1, 0.3], [-0.1, 0.2, 0.1, -0.3], [0.1, -0.2, 0.1, 0.3]])
    p = np.array([1.0, 2.0, -1.0, 3.0])
    table = agreement(d, p, ["A", "B", "C"]).table
    mup = table[(table["statistic"] == "MUP") & (table["subset"] == "all")].set_index("measure")["value"]
    assert mup.to_dict() == pytest.approx({"A": 1.0, "B": -3 / 7, "C": 1 / 7})  # sum u = 7
    power = pd.DataFrame({"measure": ["C", "A", "B"], "power": [0.5, 0.25, 0.75]})
    fig = plots.metric_bars_figure(table, power=power)
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["A", "C", "B"]  # by MUP, descending
    heights = [[bar.get_height() for bar in container] for container in ax.containers]
    assert len(heights) == 5
    assert heights[0] == pytest.approx([1.0, 1 / 7, -3 / 7])  # MUP
    assert heights[4] == pytest.approx([0.25, 0.5, 0.75])  # power of A, C, B
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["MUP", "MUP_b", "tau", "tau_b", "power"]
    plots.render_figure(fig, ".", "unused")  # closes the figure


def test_metric_bars_can_show_both_forms_of_mup_b_labelled() -> None:
    """The report's Fig. 2: MUP_b as printed (Formula 3) beside the tau_b-consistent form, each named."""
    d = np.array([[0.1, 0.0, -0.1, 0.3], [-0.1, 0.2, 0.1, -0.3]])  # A ties on the second pair
    p = np.array([1.0, 2.0, -1.0, 3.0])
    table = agreement(d, p, ["A", "B"]).table
    fig = plots.metric_bars_figure(table, both_mup_b=True)
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["MUP", "MUP_b (tau_b-consistent)", "MUP_b (Formula 3)", "tau", "tau_b"]
    whole = table[(table["subset"] == "all") & (table["measure"] == "A")].set_index("statistic")["value"]
    heights = {label: container[0].get_height() for label, container in zip(labels, ax.containers)}
    assert heights["MUP_b (tau_b-consistent)"] == pytest.approx(whole["MUP_b"])
    assert heights["MUP_b (Formula 3)"] == pytest.approx(whole["MUP_b_published"])
    assert whole["MUP_b_published"] < whole["MUP"] < whole["MUP_b"]  # a metric tie: the two forms move apart
    plots.render_figure(fig, ".", "unused")


def test_heatmap_rows_hold_fig_1c_and_blank_empty_cells() -> None:
    """Rows layout: small and large Delta bin, then all run pairs (Chen et al. Fig. 1 (a), (b), (c)), N in every cell."""
    rng = np.random.default_rng(1)
    d = rng.normal(size=(2, 30))
    p = np.clip(np.rint(d[0] * 2), -3, 3)  # nothing in (3-4]
    table = agreement(d, p, ["A", "B"]).table
    fig = plots.agreement_heatmaps_figure(table, layout="rows")
    ax = fig.axes[0]
    ticks = [t.get_text() for t in ax.get_xticklabels()]
    assert len(ticks) == 12 and ticks[8:] == ["all pairs\n(0-1]", "all pairs\n(1-2]", "all pairs\n(2-3]", "all pairs\n(3-4]"]
    data = ax.images[0].get_array()
    rows = table[(table["statistic"] == "tau_b") & (table["measure"] == "A")].set_index("subset")
    assert data[0, 9] == pytest.approx(rows.loc["(1-2]", "value"])
    assert data.mask[0, 11] and rows.loc["(3-4]", "n"] == 0  # no pairs: no colour
    texts = [t.get_text() for t in ax.texts]
    assert "n/a\nN=0" in texts and f"{rows.loc['(0-1]', 'value']:.2f}\nN={rows.loc['(0-1]', 'n']}" in texts
    ((_, svg),) = plots.render_figure(fig, ".", "unused", formats=("svg",), tight=False)
    assert b"<text" in svg and b"all pairs" in svg  # text kept as text
