"""The house rules of ``studyapp`` (docs/contributing.md#layers-of-studyapp): imports go one way, from
the pages down to the models, and no module grows past about 500 lines."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = ("studyapp.views", "studyapp.admin", "studyapp.forms", "studyapp.management", "studyapp.middleware", "studyapp.urls")
# What each layer must not import (the layers above it).
FORBIDDEN = {
    "studyapp.models": ("studyapp.services", *PAGES),
    "studyapp.services": PAGES,
    "studyapp.compiled_queries": ("studyapp.models", "studyapp.services", *PAGES),
    "studyapp.django_internals": ("studyapp.models", "studyapp.services", *PAGES),
    "studyapp.exceptions": ("studyapp.services", *PAGES),
    "evaluation": ("studyapp",),
}
MAX_LINES = 500
# Modules still over the limit, each with the most lines it may have until it is split.
OVER_LIMIT: dict[str, int] = {}


def modules(package: str) -> list[Path]:
    return sorted(p for p in (ROOT / package).rglob("*.py") if "migrations" not in p.parts)


def dotted(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def runtime_imports(path: Path) -> list[tuple[int, str]]:
    """``(line, module)`` of every import that runs (those under ``if TYPE_CHECKING:`` are for type hints only)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    hints = {
        id(node)
        for block in ast.walk(tree)
        if isinstance(block, ast.If) and "TYPE_CHECKING" in ast.unparse(block.test)
        for statement in block.body
        for node in ast.walk(statement)
    }
    package = dotted(path) if path.name == "__init__.py" else dotted(path).rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if id(node) in hints:
            continue
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join([*package.split(".")[: len(package.split(".")) - node.level + 1], *([base] if base else [])])
            found += [(node.lineno, base)] + [(node.lineno, f"{base}.{alias.name}") for alias in node.names]
    return found


def violations(package: str, forbidden: tuple[str, ...]) -> list[str]:
    out = []
    folder = ROOT / package.replace(".", "/")
    for path in modules(package.replace(".", "/")) if folder.is_dir() else [folder.with_suffix(".py")]:
        for line, name in runtime_imports(path):
            if any(name == f or name.startswith(f + ".") for f in forbidden):
                out.append(f"{path.relative_to(ROOT)}:{line}: imports {name}")
    return sorted(set(out))


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_no_layer_imports_one_above_it(layer: str) -> None:
    assert violations(layer, FORBIDDEN[layer]) == []


def test_the_check_finds_an_upward_import(tmp_path, monkeypatch) -> None:
    package = tmp_path / "studyapp" / "models"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "bad.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from studyapp.views import x\n"
        "def f():\n    from ..services.quality import rules\n"
    )
    monkeypatch.setattr(__import__(__name__, fromlist=["ROOT"]), "ROOT", tmp_path)
    assert violations("studyapp.models", FORBIDDEN["studyapp.models"]) == [
        "studyapp/models/bad.py:5: imports studyapp.services.quality",
        "studyapp/models/bad.py:5: imports studyapp.services.quality.rules",
    ]


def test_no_module_is_over_about_500_lines() -> None:
    too_long = {}
    for path in modules("studyapp"):
        name = str(path.relative_to(ROOT))
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > OVER_LIMIT.get(name, MAX_LINES):
            too_long[name] = lines
    assert too_long == {}, f"split these modules by what their parts do (at most {MAX_LINES} lines each): {too_long}"
