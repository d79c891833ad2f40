"""``python -m evaluation meta ...`` through :func:`evaluation.meta.cli.main` (status, files, errors)."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest

from evaluation.meta.cli import main

from .conftest import INTENTS, MEASURES, QRELS, RUNS, read


def meta(command: str, study: dict, *args: str, prefs: bool = False) -> int:
    """``main`` on the study's scores (and, with ``prefs``, its preferences) plus ``args``."""
    argv = [command, "--scores", str(study["scores"])]
    if prefs:
        argv += ["--preferences", str(study["prefs"])]
    return main([*argv, *args])


def test_agreement_writes_the_pinned_header_and_figures(study, tmp_path: Path) -> None:
    out = tmp_path / "agreement.tsv"
    status = meta(
        "agreement",
        study,
        "--measures",
        *MEASURES,
        "--bootstrap",
        "50",
        "--seed",
        "1",
        "-o",
        str(out),
        "--plots",
        str(tmp_path / "fig"),
        prefs=True,
    )
    assert status == 0
    assert out.read_text().splitlines()[0] == "measure\tstatistic\tsubset\tn\tvalue\tci_low\tci_high"
    table = read(out)
    assert set(table["statistic"]) == {"tau", "tau_b", "MUP", "MUP_b", "MUP_b_published"}
    mup = table[(table["statistic"] == "MUP") & (table["subset"] == "all")].set_index("measure")["value"]
    assert mup.idxmax() == "D-Q@10"  # the planted truth
    assert {p.name for p in (tmp_path / "fig").iterdir()} == {
        "agreement_heatmaps.png",
        "agreement_heatmaps.svg",
        "metric_bars.png",
        "metric_bars.svg",
    }


def test_agreement_json_and_csv(study, capsys) -> None:
    assert meta("agreement", study, "--measures", "D-Q@10", "--format", "json", "--interval", "none", prefs=True) == 0
    records = json.loads(capsys.readouterr().out)
    assert records[0]["measure"] == "D-Q@10" and records[0]["ci_low"] is None
    assert meta("agreement", study, "--measures", "D-Q@10", "--format", "json", prefs=True) == 0  # score intervals by default
    records = json.loads(capsys.readouterr().out)
    assert records[0]["ci_low"] <= records[0]["value"] <= records[0]["ci_high"]
    assert meta("agreement", study, "--measures", "D-Q@10", "--interval", "percentile", prefs=True) == 2
    assert "--interval percentile needs --bootstrap B" in capsys.readouterr().err
    assert meta("agreement", study, "--measures", "D-Q@10", "--format", "csv", prefs=True) == 0
    assert capsys.readouterr().out.startswith("measure,statistic,subset,n,value,ci_low,ci_high\n")


def test_userprefs(study, tmp_path: Path) -> None:
    out = tmp_path / "userprefs.tsv"
    assert main(["userprefs", "--preferences", str(study["prefs"]), "--test", "sign", "-o", str(out)]) == 0
    table = read(out)
    assert list(table.columns) == [
        "run_a", "run_b", "level", "n", "topics", "mean", "preferred", "test", "statistic", "p", "p_adjusted", "correction", "significant",
        "item_mean",
    ]  # fmt: skip
    assert len(table) == 28 and set(table["level"]) == {"topic"} and set(table["n"]) == {50} and set(table["topics"]) == {50}
    assert set(table["correction"]) == {"holm"} and (table["p_adjusted"] >= table["p"]).all()
    assert (table["significant"] == (table["p_adjusted"] < 0.05)).all()
    out_bh = tmp_path / "userprefs-bh.tsv"
    assert main(["userprefs", "--preferences", str(study["prefs"]), "--correction", "bh", "-o", str(out_bh)]) == 0
    assert set(read(out_bh)["correction"]) == {"bh"}
    assert main(["userprefs", "--preferences", str(study["prefs"]), "--correction", "sidak"]) == 2


def test_discpower_with_pairs_and_asl_curves(study, tmp_path: Path) -> None:
    out, pairs = tmp_path / "power.tsv", tmp_path / "pairs.tsv"
    assert (
        meta(
            "discpower",
            study,
            "--measures",
            *MEASURES,
            "--B",
            "200",
            "--seed",
            "4",
            "--pairs-out",
            str(pairs),
            "-o",
            str(out),
            "--plots",
            str(tmp_path),
        )
        == 0
    )
    summary = read(out)
    assert list(summary.columns) == ["measure", "test", "topics", "pairs", "significant", "power", "delta_required", "B", "alpha", "seed"]
    assert summary["pairs"].tolist() == [28] * 4 and summary["seed"].tolist() == [4] * 4
    assert len(read(pairs)) == 4 * 28
    assert (tmp_path / "asl_curves.svg").exists()


def test_intuitiveness_with_default_gold_and_table2(study, tmp_path: Path, capsys) -> None:
    out, matrix = tmp_path / "c.tsv", tmp_path / "m.tsv"
    assert (
        meta("intuitiveness", study, "--measures", "D-Q@10", "alpha-nDCG@10", "nERR-IA@10", "-o", str(out), "--matrix-out", str(matrix))
        == 0
    )
    table = read(out)
    assert set(table["gold"]) == {"I-rec@10", "Prec@10", "PMP@10", "Ef-P@10", "all"}
    assert list(table.columns) == [
        "gold",
        "measure_1",
        "measure_2",
        "topics",
        "disagreements",
        "concordance_1",
        "concordance_2",
        "a",
        "b",
        "p",
        "p_adjusted",
    ]
    for _, family in table.groupby("gold"):  # Holm within each gold standard, the raw p kept
        assert (family["p_adjusted"] >= family["p"]).all() and family["p_adjusted"].max() <= 1
    cells = read(matrix)
    assert cells.columns.tolist()[:2] == ["gold", "measure"]
    assert cells.loc[0, "alpha-nDCG@10"].endswith(")")


def test_rankcorr_unanimity_and_reduce(study, tmp_path: Path) -> None:
    scores = str(study["scores"])
    assert main(["rankcorr", "--scores", scores, "--measures", *MEASURES, "-o", str(tmp_path / "r.tsv")]) == 0
    assert len(read(tmp_path / "r.tsv")) == 6
    assert main(["rankcorr", "--scores", scores, "--measures", *MEASURES, "--against", scores, "-o", str(tmp_path / "a.tsv")]) == 0
    assert read(tmp_path / "a.tsv")["tau_ap"].round(12).tolist() == [1.0] * 4
    assert main(["unanimity", "--scores", scores, "--measures", *MEASURES, "-o", str(tmp_path / "u.tsv")]) == 0
    assert read(tmp_path / "u.tsv")["pairs"].tolist() == [50 * 8 * 7] * 4
    assert (
        main(
            [
                "reduce",
                "--scores",
                scores,
                "--reference",
                "D-Q@10",
                "--measures",
                "I-rec@10",
                "--sizes",
                "30",
                "10",
                "--B",
                "100",
                "--seed",
                "2",
                "-o",
                str(tmp_path / "red.tsv"),
            ]
        )
        == 0
    )
    assert read(tmp_path / "red.tsv")["topics"].tolist() == [50, 50, 30, 30, 10, 10]


def test_collection_commands(tmp_path: Path) -> None:
    assert QRELS.exists(), "reference data missing (tests/evaluation/data/reference)"
    teams = tmp_path / "teams.txt"
    teams.write_text("".join(f"{Path(r).stem} team{i % 3}\n" for i, r in enumerate(RUNS)))
    runs = [arg for r in RUNS[:4] for arg in ("--run", r)]
    pool = [arg for r in RUNS[4:] for arg in ("--pool-run", r)]
    assert (
        main(
            [
                "loo",
                "--qrels",
                str(QRELS),
                "--intents",
                str(INTENTS),
                *runs,
                *pool,
                "--teams",
                str(teams),
                "--measures",
                "D#-nDCG@10",
                "--pool-depth",
                "10",
                "-o",
                str(tmp_path / "loo.tsv"),
            ]
        )
        == 0
    )
    loo = read(tmp_path / "loo.tsv")
    assert set(loo["list"]) == {"raw", "condensed"} and "all" in set(loo["team"])
    assert (
        main(
            ["dss", "--qrels", str(QRELS), "--measures", "alpha-nDCG@10", "--n-perm", "20", "--seed", "1", "-o", str(tmp_path / "dss.tsv")]
        )
        == 0
    )
    assert read(tmp_path / "dss.tsv")["seed"].unique().tolist() == [1]
    assert (
        main(
            [
                "simplified",
                "--qrels",
                str(QRELS),
                "--intents",
                str(INTENTS),
                *runs,
                "--measures",
                "D#-nDCG@10",
                "--B",
                "50",
                "--seed",
                "1",
                "-o",
                str(tmp_path / "s.tsv"),
            ]
        )
        == 0
    )
    assert len(read(tmp_path / "s.tsv")) == 5


def test_simulate_reports_duplicates_and_seed(study, tmp_path: Path, capsys) -> None:
    assert (
        meta(
            "simulate",
            study,
            "--truth",
            "I-rec@10",
            "--measures",
            "D-Q@10",
            "--noise",
            "0.5",
            "--n-sim",
            "10",
            "-o",
            str(tmp_path / "sim.tsv"),
            "--plots",
            str(tmp_path),
        )
        == 0
    )
    err = capsys.readouterr().err
    assert "note: seed=" in err
    table = read(tmp_path / "sim.tsv")
    assert table["n_sim"].tolist() == [10] and (tmp_path / "recovery.png").exists()


# ERRORS =======================================================================================
def one_error_line(capsys) -> str:
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("error:")]
    assert len(lines) == 1
    return lines[0]


@pytest.mark.parametrize(
    "body, message",
    [
        ("topic\trun_a\trun_b\n1\ta\tb\n", "header lacks column value"),
        ("topic\trun_a\trun_b\tvalue\n251\tpub-random\tpub-short\t7\n", "prefs.tsv:2: value must be in [-4, 4]"),
    ],
)
def test_bad_preferences(study, tmp_path: Path, capsys, body: str, message: str) -> None:
    prefs = tmp_path / "prefs.tsv"
    prefs.write_text(body)
    out = tmp_path / "out.tsv"
    assert meta("agreement", study, "--preferences", str(prefs), "-o", str(out)) == 2
    assert message in one_error_line(capsys)
    assert not out.exists() and not list(tmp_path.glob(".out.tsv*"))


def test_missing_scores_are_named(study, tmp_path: Path, capsys) -> None:
    scores = read(study["scores"])
    scores = scores[~((scores["run"] == "pub-random") & (scores["topic"] == "251") & (scores["measure"] == "D-Q@10"))]
    partial = tmp_path / "partial.tsv"
    scores.to_csv(partial, sep="\t", index=False)
    out = tmp_path / "out.tsv"
    assert main(["agreement", "--scores", str(partial), "--preferences", str(study["prefs"]), "-o", str(out)]) == 2
    assert "run=pub-random topic=251 measure=D-Q@10" in one_error_line(capsys)
    assert main(["discpower", "--scores", str(partial), "--measures", "D-Q@10", "-o", str(out)]) == 2
    assert "scores missing" in one_error_line(capsys)
    assert not out.exists()


def test_absent_measure_and_bad_arguments(study, capsys) -> None:
    assert meta("discpower", study, "--measures", "nDCG@10") == 2
    assert "nDCG@10 not in the scores" in one_error_line(capsys)
    assert meta("discpower", study, "--B", "0") == 2
    assert "--B" in one_error_line(capsys)
    assert meta("agreement", study, "--level", "weighted", prefs=True) == 2
    assert "needs --intents" in one_error_line(capsys)
    assert main(["nosuchcommand"]) == 2
    one_error_line(capsys)
    assert main(["rankcorr", "--scores", str(study["dir"] / "absent.tsv")]) == 2
    assert "no such file" in one_error_line(capsys)


def test_help_exits_zero(capsys) -> None:
    assert main(["--help"]) == 0
    assert "agreement" in capsys.readouterr().out
    assert main(["simulate", "--help"]) == 0
    assert "--truth" in capsys.readouterr().out


def test_intuitiveness_ordering_against_mup(study, tmp_path: Path) -> None:
    agreement_out, ordering = tmp_path / "agreement.tsv", tmp_path / "ordering.tsv"
    candidates = ["D-Q@10", "alpha-nDCG@10", "nERR-IA@10", "D#-nDCG@10"]
    assert meta("agreement", study, "--measures", *candidates, "-o", str(agreement_out), prefs=True) == 0
    assert (
        meta(
            "intuitiveness",
            study,
            "--measures",
            *candidates,
            "--gold",
            "I-rec@10",
            "--agreement",
            str(agreement_out),
            "--ordering-out",
            str(ordering),
            "-o",
            str(tmp_path / "c.tsv"),
        )
        == 0
    )
    table = read(ordering)
    assert table["gold"].tolist() == ["I-rec@10"] and table["measures"].tolist() == [4]
    assert -1 <= table["tau_b"].iloc[0] <= 1
    # the cell-wise reading (Chen et al.) over the 6 Table 2 cells, from the cells' own flags
    cells = read(tmp_path / "c.tsv")
    assert list(cells.columns[-3:]) == ["mup_1", "mup_2", "order_vs_mup"]
    flags = cells["order_vs_mup"].dropna()
    assert table["cells"].iloc[0] == flags.size and table["agree"].iloc[0] == (flags == 1).sum()
    assert table["tau_cells"].iloc[0] == pytest.approx(((flags == 1).sum() - (flags == -1).sum()) / flags.size)
    mup = read(agreement_out).query("statistic == 'MUP' and subset == 'all'").set_index("measure")["value"]
    first = cells.iloc[0]
    assert first["mup_1"] == pytest.approx(mup[first["measure_1"]]) and first["mup_2"] == pytest.approx(mup[first["measure_2"]])


# COMPANION INPUTS AND ALL-OR-NOTHING OUTPUT ===================================================
def agreement_args(study, *extra: str) -> list[str]:
    return ["agreement", "--scores", str(study["scores"]), "--preferences", str(study["prefs"]), "--measures", *MEASURES, *extra]


def svg_legend_and_patches(path: Path) -> tuple[list[str], int]:
    """Text labels (kept as SVG text: svg.fonttype none) and the number of drawn patches."""
    svg = path.read_text()
    texts = [html.unescape(re.sub(r"<[^>]+>", "", t)) for t in re.findall(r"<text\b[^>]*>(.*?)</text>", svg, flags=re.S)]
    return texts, len(re.findall(r'<g id="patch_', svg))


def test_power_file_without_power_column_is_a_one_line_error_and_writes_nothing(study, tmp_path: Path, capsys) -> None:
    power = tmp_path / "power.tsv"
    power.write_text("measure\tpairs\nD-Q@10\t28\n")
    out, figs = tmp_path / "agreement.tsv", tmp_path / "figs"
    assert main(agreement_args(study, "--power", str(power), "--plots", str(figs), "-o", str(out))) == 2
    assert one_error_line(capsys) == f"error: {power}: lacks column power; required: measure power"
    assert not figs.exists() and not out.exists() and not Path(f"{out}.settings.json").exists()


def test_agreement_file_without_statistic_column_is_a_one_line_error(study, tmp_path: Path, capsys) -> None:
    agreement_file = tmp_path / "agreement.csv"
    agreement_file.write_text("measure,subset,value\nD-Q@10,all,0.5\n")
    out = tmp_path / "c.tsv"
    args = ["intuitiveness", "--scores", str(study["scores"]), "--gold", "I-rec@10", "--agreement", str(agreement_file), "-o", str(out)]
    assert main(args) == 2
    assert one_error_line(capsys) == f"error: {agreement_file}: lacks column statistic; required: measure statistic subset value"
    assert not out.exists()
    agreement_file.write_text("")
    assert main(args) == 2
    assert one_error_line(capsys) == f"error: {agreement_file}: file is empty"


def test_power_needs_plots(study, capsys) -> None:
    assert main(agreement_args(study, "--power", str(study["dir"] / "power.tsv"))) == 2
    assert "--power adds bars to the figures: it needs --plots DIR" in one_error_line(capsys)


def test_unwritable_output_fails_before_any_figure_is_written(study, tmp_path: Path, capsys) -> None:
    figs = tmp_path / "figs"
    pairs = tmp_path / "absent" / "pairs.tsv"
    args = ["discpower", "--scores", str(study["scores"]), "--measures", *MEASURES, "--B", "20", "--seed", "1"]
    assert main([*args, "--plots", str(figs), "--pairs-out", str(pairs), "-o", str(tmp_path / "p.tsv")]) == 2
    assert f"{pairs}: directory {pairs.parent} does not exist" in one_error_line(capsys)
    assert not figs.exists() and not (tmp_path / "p.tsv").exists()
    (tmp_path / "file").write_text("")
    assert main([*args, "--plots", str(tmp_path / "file")]) == 2
    assert "--plots needs a directory" in one_error_line(capsys)


def test_bar_chart_with_discriminative_power_end_to_end(study, tmp_path: Path) -> None:
    """`discpower -o power.tsv`, then `agreement --power power.tsv --plots DIR` draws a 5th bar series."""
    power = tmp_path / "power.tsv"
    assert meta("discpower", study, "--measures", *MEASURES, "--B", "50", "--seed", "2", "-o", str(power)) == 0
    with_power, without = tmp_path / "with", tmp_path / "without"
    assert main(agreement_args(study, "--power", str(power), "--plots", str(with_power), "-o", str(tmp_path / "a.tsv"))) == 0
    assert main(agreement_args(study, "--plots", str(without))) == 0
    labels, patches = svg_legend_and_patches(with_power / "metric_bars.svg")
    plain_labels, plain_patches = svg_legend_and_patches(without / "metric_bars.svg")
    assert "power" in labels and "power" not in plain_labels
    assert {"MUP", "MUP_b", "tau", "tau_b"} <= set(plain_labels) and set(MEASURES) <= set(labels)
    assert patches - plain_patches == len(MEASURES) + 1  # one bar per measure and a legend swatch
    assert (with_power / "metric_bars.png").stat().st_size > 1000


def test_simulate_more_topics_than_available_is_an_error(study, tmp_path: Path, capsys) -> None:
    out = tmp_path / "sim.tsv"
    args = [
        "simulate",
        "--scores",
        str(study["scores"]),
        "--truth",
        "D-Q@10",
        "--measures",
        *MEASURES,
        "--n-sim",
        "5",
        "--seed",
        "1",
        "--noise",
        "1",
    ]
    assert main([*args, "--topics", "10", "60", "-o", str(out)]) == 2
    assert one_error_line(capsys) == "error: cannot draw 60 topics per simulated study: the scores have only 50 topics"
    assert not out.exists()
    assert main([*args, "--topics", "10", "50", "-o", str(out)]) == 0
    assert read(out)["topics"].tolist() == [10, 50]


def test_agreement_best_set_column(study, tmp_path: Path, capsys) -> None:
    out = tmp_path / "agreement.tsv"
    args = ("--measures", *MEASURES, "--bootstrap", "200", "--seed", "1", "-o", str(out))
    assert meta("agreement", study, *args, "--best-set", prefs=True) == 0
    header = out.read_text().splitlines()[0].split("\t")
    assert header == ["measure", "statistic", "subset", "n", "value", "ci_low", "ci_high", "entry", "p_best", "in_best_set"]
    table = read(out)
    per_measure = table.groupby("measure")["in_best_set"].agg(set)
    assert all(len(v) == 1 for v in per_measure)  # one answer per metric, on every row
    chosen = {m for m, v in per_measure.items() if v == {True}}
    assert "D-Q@10" in chosen and chosen != set(MEASURES)  # the planted truth is in, not every metric
    sidecar = json.loads((tmp_path / "agreement.tsv.settings.json").read_text())
    assert sidecar["options"]["best_set"] is True and "best_set" in sidecar["conventions"]
    capsys.readouterr()
    assert meta("agreement", study, "--measures", *MEASURES, "--best-set", prefs=True) == 2
    assert "--best-set needs --bootstrap B" in capsys.readouterr().err
