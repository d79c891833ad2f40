"""The sub-commands of ``python -m evaluation meta``, one module each (docs/meta.md).

A module declares its command once, as ``COMMAND = Command(...)`` (:class:`.base.Command`: name,
help, description, its options, ``--seed`` / ``--plots``, and the function that runs it), and is
listed in :data:`MODULES` below, in ``--help`` order; :mod:`evaluation.meta.cli` builds the parser
and runs a command from :data:`COMMANDS` only. ``tests/evaluation/meta/test_commands.py`` fails on a
module of this package that is not registered and on a name registered twice.
"""

from __future__ import annotations

from evaluation.meta.commands import (
    agreement,
    discpower,
    dss,
    intuitiveness,
    loo,
    rankcorr,
    reduce,
    simplified,
    simulate,
    unanimity,
    userprefs,
)
from evaluation.meta.commands.base import Command, Output

MODULES = (agreement, userprefs, discpower, intuitiveness, rankcorr, unanimity, dss, loo, reduce, simplified, simulate)
COMMANDS: dict[str, Command] = {}


def register(command: Command) -> Command:
    """Add ``command``; ``ValueError`` when its name is taken (a command is declared once)."""
    if command.name in COMMANDS:
        raise ValueError(f"meta command {command.name!r} is registered already")
    COMMANDS[command.name] = command
    return command


def unregister(name: str) -> None:
    """Remove the command ``name`` (tests' dummy commands)."""
    COMMANDS.pop(name, None)


for _module in MODULES:
    register(_module.COMMAND)

__all__ = ["COMMANDS", "MODULES", "Command", "Output", "register", "unregister"]
