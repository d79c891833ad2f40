"""The lists of the README and the docs that name what a registry holds (preference formats, recruitment
platforms and their link parameters, meta sub-commands) are checked against the registries, so a
format, platform or command added by its recipe (docs/contributing.md) cannot leave them stale; a
dummy entry shows which lists would then fail. The quality rules' and the study settings' tables are
checked by test_quality_rules.py and test_study_settings.py."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from pathlib import Path

from django.test import SimpleTestCase

from evaluation.io import preference_formats
from evaluation.meta import commands
from studyapp.services import platforms

ROOT = Path(__file__).resolve().parents[2]


def words(text: str) -> set[str]:
    """``CSV, JSONL or Parquet`` -> {"csv", "jsonl", "parquet"}."""
    return {w.strip().lower() for w in re.split(r",|\bor\b|\band\b|\|", text.replace("\\", "")) if w.strip()}


def ticked(text: str) -> set[str]:
    """The `code`-marked names of ``text``."""
    return set(re.findall(r"`([\w-]+)`", text))


def formats() -> set[str]:
    return set(preference_formats.format_names())


def platform_names() -> set[str]:
    return {p.name.lower() for p in platforms.REGISTRY.values() if p.key}


def platform_params() -> set[str]:
    return {f"{p.name}: {' '.join(p.params)}" for p in platforms.REGISTRY.values() if p.key}


def documented_params(text: str) -> set[str]:
    """``Prolific: `A`, `B`. MTurk: `C`, ...`` -> {"Prolific: A B", "MTurk: C ..."}."""
    pairs = re.findall(r"(\w+): ((?:`\w+`[,\s]*)+)", text)
    return {f"{name}: {' '.join(ticked_in_order(params))}" for name, params in pairs}


def ticked_in_order(text: str) -> list[str]:
    return re.findall(r"`(\w+)`", text)


def meta_commands() -> set[str]:
    return set(commands.COMMANDS)


# (file, pattern whose first group is the list, how to read the list, the registry's names)
LISTS: list[tuple[str, str, Callable[[str], set[str]], Callable[[], set[str]]]] = [
    ("README.md", r"export_preferences STUDY` \(([^)]*?), each read", words, formats),
    ("docs/data-dictionary.md", r"`--format ([a-z\\|]+)`", words, formats),
    ("docs/studyapp.md", r"export_preferences \"TREC 2014 pilot\" --format ([a-z|]+) ", words, formats),
    ("docs/meta.md", r"Registered: (.*?) \(needs pyarrow", ticked, formats),
    ("README.md", r"Participants arrive from an? ([\w ,]+?) link", words, platform_names),
    ("docs/annotator.md", r"\*\*Platform parameters\.\*\* (.*?) None: an anonymous", documented_params, platform_params),
    ("docs/meta.md", r"## Commands (.*?) ## Where the sources", lambda text: set(re.findall(r"### ([a-z]+) \(", text)), meta_commands),
]


def stale_lists() -> list[str]:
    """Every list above that differs from its registry, with what it should say."""
    stale = []
    for name, pattern, read, registry in LISTS:
        text = (ROOT / name).read_text(encoding="utf-8")
        match = re.search(pattern, " ".join(text.split()))
        listed = read(match[1]) if match else None
        if listed != registry():
            stale.append(
                f"{name}: lists {sorted(listed) if listed is not None else 'nothing'} (/{pattern}/), the registry {sorted(registry())}"
            )
    return stale


class DocsListsTestCase(SimpleTestCase):
    def test_every_list_names_what_its_registry_holds(self) -> None:
        self.assertEqual(stale_lists(), [])

    def test_a_dummy_format_and_platform_make_their_lists_stale(self) -> None:
        csv = preference_formats.get_format("csv")
        preference_formats.register(type(csv)("psv", (".psv",), "text/x-psv", csv.write, csv.read, lambda head: False))
        self.addCleanup(preference_formats.unregister, "psv")
        stale = stale_lists()
        self.assertEqual(
            [line.split(":")[0] for line in stale], ["README.md", "docs/data-dictionary.md", "docs/studyapp.md", "docs/meta.md"]
        )
        self.assertIn("'psv']", stale[0].split("the registry ")[1])
        dummy = type("Dummy", (platforms.Platform,), {"key": "dummy", "name": "Dummy", "label": "Dummy", "params": ("DUMMY_ID",),
                                                       "id_param": "DUMMY_ID"})()  # fmt: skip
        platforms.register(dummy)
        self.addCleanup(platforms.unregister, "dummy")
        self.assertEqual([line.split(":")[0] for line in stale_lists()[4:]], ["README.md", "docs/annotator.md"])
        dss = commands.COMMANDS["dss"]
        commands.register(dataclasses.replace(dss, name="dummy"))
        self.addCleanup(commands.unregister, "dummy")
        self.assertEqual(stale_lists()[-1].split(":")[0], "docs/meta.md")
        self.assertIn("'dummy'", stale_lists()[-1].split("the registry ")[1])
