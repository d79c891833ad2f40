"""Settings sidecars (docs/metrics.md#agreement-with-users: reports record their conventions; docs/metrics.md#meta-evaluation: randomised results record
their seed): ``-o FILE`` also writes ``FILE.settings.json``, and the seed used goes to stderr."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest

from evaluation.meta.cli import main
from evaluation.meta.provenance import draw_seed, render_settings, settings_path, settings_record

from .conftest import MEASURES, read

AGREEMENT_HEADER = "measure\tstatistic\tsubset\tn\tvalue\tci_low\tci_high"


def settings_of(output: Path) -> dict:
    return json.loads(Path(settings_path(output)).read_text())


def seed_note(capsys) -> str:
    notes = [line for line in capsys.readouterr().err.splitlines() if line.startswith("note: seed=")]
    assert len(notes) == 1
    return notes[0]


def test_settings_record_is_json_with_versions_and_a_utc_timestamp() -> None:
    record = settings_record("discpower", inputs={"scores": "s.tsv"}, options={"B": 10}, seed=7, conventions={"x": "y"})
    back = json.loads(render_settings(record))
    assert back["command"] == "discpower" and back["inputs"] == {"scores": "s.tsv"} and back["options"] == {"B": 10}
    assert back["seed"] == 7 and back["conventions"] == {"x": "y"}
    assert set(back["versions"]) == {"evaluation", "python", "numpy", "pandas", "scipy"} and back["versions"]["evaluation"]
    assert datetime.fromisoformat(back["timestamp"]).utcoffset().total_seconds() == 0
    assert settings_path("out/a.tsv") == "out/a.tsv.settings.json"
    seeds = {draw_seed() for _ in range(5)}
    assert len(seeds) == 5 and all(isinstance(s, int) and s >= 0 for s in seeds)


def test_agreement_records_its_settings_and_the_drawn_seed_reproduces_it(study, tmp_path: Path, capsys) -> None:
    out = tmp_path / "agreement.tsv"
    args = ["agreement", "--scores", str(study["scores"]), "--preferences", str(study["prefs"]), "--measures", *MEASURES]
    assert main([*args, "--bootstrap", "30", "--level", "topic", "--tau-mode", "pairs", "-o", str(out)]) == 0
    settings = settings_of(out)
    seed = settings["seed"]
    assert isinstance(seed, int)
    assert seed_note(capsys) == f"note: seed={seed} (drawn; pass --seed {seed} to reproduce)"
    assert out.read_text().splitlines()[0] == AGREEMENT_HEADER  # the pinned header is untouched
    assert settings["command"] == "agreement"
    assert settings["inputs"] == {"scores": str(study["scores"]), "preferences": str(study["prefs"])}
    options = settings["options"]
    assert (options["bootstrap"], options["confidence"], options["level"], options["tau_mode"]) == (30, 0.95, "topic", "pairs")
    assert options["output"] == str(out) and options["measures"] == MEASURES
    assert "1 - T0" in settings["conventions"]["MUP_b"] and "1 + T0" in settings["conventions"]["MUP_b_published"]
    again = tmp_path / "again.tsv"
    assert main([*args, "--bootstrap", "30", "--seed", str(seed), "-o", str(again)]) == 0
    assert seed_note(capsys) == f"note: seed={seed}"
    assert again.read_text() == out.read_text()
    assert settings_of(again)["seed"] == seed


def test_agreement_without_bootstrap_uses_no_seed(study, tmp_path: Path, capsys) -> None:
    out = tmp_path / "agreement.tsv"
    assert main(["agreement", "--scores", str(study["scores"]), "--preferences", str(study["prefs"]), "-o", str(out)]) == 0
    assert "seed=" not in capsys.readouterr().err
    settings = settings_of(out)
    assert settings["seed"] is None and settings["options"]["bootstrap"] == 0


@pytest.mark.parametrize(
    "command, extra",
    [
        ("discpower", ["--measures", *MEASURES, "--B", "20", "--test", "tukey"]),
        ("reduce", ["--reference", "D-Q@10", "--measures", "I-rec@10", "--sizes", "20", "--B", "20"]),
        ("simulate", ["--truth", "D-Q@10", "--measures", *MEASURES, "--noise", "1", "--n-sim", "5"]),
    ],
)
def test_every_randomised_command_records_the_seed_it_used(study, tmp_path: Path, capsys, command: str, extra: list[str]) -> None:
    out = tmp_path / "out.tsv"
    assert main([command, "--scores", str(study["scores"]), *extra, "--seed", "12", "-o", str(out)]) == 0
    assert seed_note(capsys) == "note: seed=12"
    settings = settings_of(out)
    assert settings["seed"] == 12 and settings["command"] == command and settings["conventions"]
    assert settings["inputs"] == {"scores": str(study["scores"])}
    assert set(read(out)["seed"]) == {12}
    drawn = tmp_path / "drawn.tsv"
    assert main([command, "--scores", str(study["scores"]), *extra, "-o", str(drawn)]) == 0
    seed = settings_of(drawn)["seed"]
    assert seed_note(capsys).startswith(f"note: seed={seed} (drawn")
    assert set(read(drawn)["seed"]) == {seed}


def test_standard_output_gets_the_seed_note_but_no_sidecar(study, tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["discpower", "--scores", str(study["scores"]), "--measures", "D-Q@10", "--B", "10", "--seed", "5"]) == 0
    captured = capsys.readouterr()
    assert "note: seed=5" in captured.err and captured.out.startswith("measure\ttest")
    assert list(tmp_path.iterdir()) == []


def test_deterministic_commands_record_settings_without_a_seed(study, tmp_path: Path) -> None:
    out = tmp_path / "u.tsv"
    assert main(["unanimity", "--scores", str(study["scores"]), "--measures", *MEASURES, "--strict", "-o", str(out)]) == 0
    settings = settings_of(out)
    assert settings["seed"] is None and settings["options"]["strict"] is True
    assert read(out)["measure"].tolist() == MEASURES
