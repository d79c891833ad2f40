"""What produced a result: the settings record written next to every meta-evaluation output.

docs/metrics.md#meta-evaluation (preamble): every randomised procedure records its seed; docs/metrics.md#agreement-with-users: every report records
the conventions it used. The tidy tables keep their pinned headers, so the record goes into a
sidecar: with ``-o FILE`` the CLI also writes ``FILE.settings.json`` holding the command, its
input files, every option (B, level, tau mode, ...), the seed actually used (drawn and recorded
when ``--seed`` is absent), the conventions, the package version and a UTC timestamp.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Mapping
from datetime import UTC, datetime
from functools import cache
from importlib import metadata
from pathlib import Path

import numpy as np

from evaluation.meta._resampling import resolve_rng

SETTINGS_SUFFIX = ".settings.json"


def draw_seed() -> int:
    """A fresh seed from the operating system's entropy (the one :func:`resolve_rng` would draw)."""
    _, seed = resolve_rng(None)
    assert seed is not None
    return seed


def settings_path(output: str | Path) -> str:
    """Sidecar of an output file: ``<output>.settings.json``."""
    return f"{output}{SETTINGS_SUFFIX}"


@cache
def package_version() -> str:
    """The installed ``evaluation`` version, else ``git:<describe>`` of the source tree, else ``unknown``."""
    try:
        return metadata.version("evaluation")
    except metadata.PackageNotFoundError:
        pass
    try:
        described = subprocess.run(
            ["git", "describe", "--always", "--dirty"],
            cwd=Path(__file__).resolve().parent,
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        )
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return f"git:{described.stdout.strip()}"


def settings_record(
    command: str,
    *,
    inputs: Mapping[str, object],
    options: Mapping[str, object],
    seed: int | None,
    conventions: Mapping[str, object],
) -> dict[str, object]:
    """The settings of one run of a meta command as a JSON-ready dict (``seed`` None: not randomised)."""
    return {
        "command": command,
        "inputs": dict(inputs),
        "options": dict(options),
        "seed": seed,
        "conventions": dict(conventions),
        "versions": {
            "evaluation": package_version(),
            "python": sys.version.split()[0],
            "numpy": np.__version__,
            "pandas": metadata.version("pandas"),
            "scipy": metadata.version("scipy"),
        },
        "timestamp": datetime.now(UTC).isoformat(timespec="seconds"),
    }


def render_settings(record: Mapping[str, object]) -> str:
    """The record as indented JSON text (NaN and infinities are not expected and rejected)."""
    return json.dumps(record, indent=1, allow_nan=False) + "\n"
