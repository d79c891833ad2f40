"""The house rules of ``studyapp`` (docs/contributing.md#layers-of-studyapp): imports go one way, from
the pages down to the models; inside ``studyapp/services/`` no two concerns depend on each other, even
through others (the concern graph has no cycle, and docs/design.md#concerns-of-studyappservices draws it
as it is); no module of ``studyapp`` or ``evaluation`` grows past about 500 lines."""

from __future__ import annotations

import ast
import re
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
SERVICES = "studyapp.services"
DESIGN_DOC = "docs/design.md"
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


def concerns() -> list[str]:
    """The concerns of ``studyapp/services/``: its packages and its top-level modules (``clock``)."""
    folder = ROOT / SERVICES.replace(".", "/")
    packages = [p.name for p in folder.iterdir() if (p / "__init__.py").is_file()]
    return sorted(packages + [p.stem for p in folder.glob("*.py") if p.name != "__init__.py"])


def services_docstring() -> str:
    return ast.get_docstring(ast.parse((ROOT / SERVICES.replace(".", "/") / "__init__.py").read_text(encoding="utf-8"))) or ""


def test_the_services_package_names_every_concern() -> None:
    listed = set(re.findall(r"^\* :mod:`\.(\w+)`", services_docstring(), re.MULTILINE))
    assert listed == set(concerns()), f"{SERVICES.replace('.', '/')}/__init__.py: list each concern once as '* :mod:`.name`: what it owns'"


def concern_graph() -> dict[str, dict[str, list[str]]]:
    """``{concern: {concern it imports: ["file:line", ...]}}``, from every import that runs (lazy ones
    inside functions included: they tie two concerns as much as any other)."""
    names = concerns()
    folder = ROOT / SERVICES.replace(".", "/")
    graph: dict[str, dict[str, list[str]]] = {name: {} for name in names}
    for name in names:
        paths = modules(f"{folder.relative_to(ROOT)}/{name}") if (folder / name).is_dir() else [folder / f"{name}.py"]
        for path in paths:
            for line, imported in runtime_imports(path):
                parts = imported.split(".")
                if imported.startswith(SERVICES + ".") and parts[2] in graph and parts[2] != name:
                    graph[name].setdefault(parts[2], []).append(f"{path.relative_to(ROOT)}:{line}")
    return graph


def cycles(graph: dict[str, dict[str, list[str]]]) -> list[str]:
    """Every cycle of ``graph`` once, as ``a -> b -> a`` with where each step imports
    (depth-first search; a cycle is reported from its alphabetically first concern)."""
    found: set[tuple[str, ...]] = set()

    def visit(path: list[str]) -> None:
        for nxt in sorted(graph[path[-1]]):
            if nxt == path[0]:
                found.add(tuple(path))
            elif nxt not in path and nxt > path[0]:
                visit([*path, nxt])

    for start in sorted(graph):
        visit([start])
    out = []
    for cycle in sorted(found):
        steps = list(zip(cycle, [*cycle[1:], cycle[0]], strict=True))
        where = "; ".join(f"{a} -> {b} at {graph[a][b][0]}" for a, b in steps)
        out.append(" -> ".join([*cycle, cycle[0]]) + f" ({where})")
    return out


def test_no_two_concerns_depend_on_each_other() -> None:
    assert cycles(concern_graph()) == [], "a concern may use another only if that one does not use it back (docs/design.md)"


def test_the_check_finds_a_planted_cycle(tmp_path, monkeypatch) -> None:
    services = tmp_path / "studyapp" / "services"
    for name, source in {
        "alpha": "from studyapp.services.beta.one import f\n",
        "beta": "def g():\n    from ..gamma import h\n",  # a lazy import ties concerns too
        "gamma": "from studyapp.services import alpha\nfrom studyapp.services.clock import now\n",
        "delta": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from studyapp.services.alpha import x\n",
    }.items():
        (services / name).mkdir(parents=True)
        (services / name / "__init__.py").write_text("")
        (services / name / "one.py").write_text(source)
    (services / "__init__.py").write_text("")
    (services / "clock.py").write_text("import datetime\n")
    monkeypatch.setattr(__import__(__name__, fromlist=["ROOT"]), "ROOT", tmp_path)
    graph = concern_graph()
    assert graph["delta"] == {} and graph["clock"] == {} and set(graph["gamma"]) == {"alpha", "clock"}
    assert cycles(graph) == [
        "alpha -> beta -> gamma -> alpha (alpha -> beta at studyapp/services/alpha/one.py:1; "
        "beta -> gamma at studyapp/services/beta/one.py:2; gamma -> alpha at studyapp/services/gamma/one.py:1)"
    ]


def drawn_graph(text: str) -> dict[str, set[str]]:
    """The concern graph as docs/design.md draws it: the lines ``concern -> used, used`` of its first block
    after the heading "Concerns of studyapp/services"."""
    section = text.split("## Concerns of `studyapp/services`", 1)[-1]
    block = section.split("```", 2)[1]
    drawn = {}
    for line in block.splitlines():
        match = re.fullmatch(r"\s*(\w+)\s*(?:->\s*(.*))?", line)
        if match:
            drawn[match[1]] = {u.strip() for u in (match[2] or "").split(",") if u.strip()}
    return drawn


def test_docs_draw_the_concern_graph_as_it_is() -> None:
    actual = {name: set(uses) for name, uses in concern_graph().items()}
    drawn = drawn_graph((ROOT / DESIGN_DOC).read_text(encoding="utf-8"))
    wrong = sorted(name for name in actual.keys() | drawn.keys() if actual.get(name) != drawn.get(name))
    expected = "\n".join(f"{name} -> {', '.join(sorted(actual[name]))}" if actual[name] else name for name in wrong if name in actual)
    assert not wrong, f"{DESIGN_DOC}#concerns-of-studyappservices: redraw these lines:\n{expected}"


@pytest.mark.parametrize("package", ["studyapp", "evaluation"])
def test_no_module_is_over_about_500_lines(package: str) -> None:
    too_long = {}
    for path in modules(package):
        name = str(path.relative_to(ROOT))
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > OVER_LIMIT.get(name, MAX_LINES):
            too_long[name] = lines
    assert too_long == {}, f"split these modules by what their parts do (at most {MAX_LINES} lines each): {too_long}"
