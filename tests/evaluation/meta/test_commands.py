"""The ``meta`` sub-commands' registry (evaluation/meta/commands/): a command is declared once, in its own
module, and the parser, ``--help``, the run and the settings sidecar come from that declaration."""

from __future__ import annotations

import argparse
import json
import pkgutil
from pathlib import Path

import pandas as pd
import pytest

from evaluation.meta import cli, commands
from evaluation.meta.commands.base import Command, Output, scores_option, seed_of


def test_every_module_of_the_package_is_a_registered_command() -> None:
    """A module that declares a command but is not listed in ``MODULES`` would be silently missing."""
    names = {m.name for m in pkgutil.iter_modules(commands.__path__) if m.name != "base"}
    listed = {module.__name__.rpartition(".")[2] for module in commands.MODULES}
    assert names == listed, f"list these modules in evaluation/meta/commands/__init__.py MODULES: {sorted(names - listed)}"
    assert [module.COMMAND.name for module in commands.MODULES] == list(commands.COMMANDS)
    assert all(isinstance(c, Command) for c in commands.COMMANDS.values())


def test_a_name_is_registered_once() -> None:
    taken = commands.COMMANDS["dss"]
    with pytest.raises(ValueError, match="'dss' is registered already"):
        commands.register(Command("dss", "h", "d", options=scores_option, run=taken.run))
    assert commands.COMMANDS["dss"] is taken


def test_every_file_option_is_an_input_or_an_output() -> None:
    """The settings sidecar records input files and checks output directories by the options' names."""
    named = set(cli.INPUT_OPTIONS) | set(cli.OUTPUT_OPTIONS)
    for command in commands.COMMANDS.values():
        parser = command.add_to(argparse.ArgumentParser().add_subparsers())
        files = {a.dest for a in parser._actions if a.metavar == "FILE"}
        assert files <= named, f"{command.name}: add {sorted(files - named)} to INPUT_OPTIONS or OUTPUT_OPTIONS of evaluation/meta/cli.py"


def test_a_dummy_command_is_declared_once_and_picked_up_everywhere(tmp_path: Path, capsys) -> None:
    def options(p: argparse.ArgumentParser) -> None:
        scores_option(p, measures=False)
        p.add_argument("--factor", type=int, default=2, help="what to multiply by")

    def run(args: argparse.Namespace, out: Output) -> pd.DataFrame:
        out.notes.append("dummy ran")
        return pd.DataFrame({"scores": [args.scores], "value": [args.factor * seed_of(args, out)]})

    scores = tmp_path / "scores.tsv"
    scores.write_text("r t m 1\n")
    commands.register(Command("dummy", "a dummy command", "Output: scores value.", options=options, run=run, seed=True))
    try:
        assert cli.main(["--help"]) == 0
        assert "a dummy command" in capsys.readouterr().out
        assert cli.main(["dummy", "--help"]) == 0
        helped = capsys.readouterr().out
        assert "--factor" in helped and "--seed" in helped and "--plots" not in helped and "--format" in helped
        out = tmp_path / "dummy.tsv"
        assert cli.main(["dummy", "--scores", str(scores), "--factor", "3", "--seed", "5", "-o", str(out)]) == 0
        assert out.read_text().splitlines() == ["scores\tvalue", f"{scores}\t15"]
        assert "note: dummy ran" in capsys.readouterr().err
        settings = json.loads(Path(f"{out}.settings.json").read_text())
        assert settings["command"] == "dummy" and settings["options"]["factor"] == 3 and settings["seed"] == 5
        assert cli.main(["dummy", "--scores", str(scores), "--factor", "x"]) == 2
        assert "invalid int value" in capsys.readouterr().err
    finally:
        commands.unregister("dummy")
    assert "dummy" not in commands.COMMANDS
    assert cli.main(["dummy"]) == 2
