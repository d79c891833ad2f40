"""The metric recipe cannot be half-followed (docs/contributing.md#a-metric): a module of
``evaluation/metrics/`` that registers a metric but is not imported by the package would register
nothing and fail nothing; this test finds it (and finds a planted one)."""

from __future__ import annotations

import ast
import functools
import subprocess
import sys
from pathlib import Path

import pytest

from evaluation.metrics import REGISTRY
from evaluation.metrics.base import _ALIASES, Param, register

METRICS = Path(__file__).resolve().parents[3] / "evaluation" / "metrics"
PACKAGE = "evaluation.metrics"


def registering_modules(folder: Path, package: str) -> list[str]:
    """The modules of ``folder`` with a ``@register(...)`` decorator (they declare a metric)."""
    found = []
    for path in sorted(folder.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        decorators = (d for node in ast.walk(tree) if isinstance(node, ast.FunctionDef) for d in node.decorator_list)
        if any(isinstance(d, ast.Call) and getattr(d.func, "id", getattr(d.func, "attr", "")) == "register" for d in decorators):
            found.append(f"{package}.{path.stem}")
    return found


@functools.cache
def loaded_by_the_package() -> frozenset[str]:
    """The modules a fresh interpreter has loaded after ``import evaluation.metrics`` (nothing else imported); asked of
    one interpreter per session (the answer depends on the package's files only, which no test here changes)."""
    code = "import sys, evaluation.metrics; print('\\n'.join(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=METRICS.parents[1])
    return frozenset(out.stdout.split())


def test_every_module_that_registers_a_metric_is_imported_by_the_package() -> None:
    modules = registering_modules(METRICS, PACKAGE)
    assert len(modules) >= 8  # the families and the ad hoc baselines
    missing = sorted(set(modules) - loaded_by_the_package())
    assert missing == [], f"import these in evaluation/metrics/__init__.py, else their metrics are never registered: {missing}"


def test_the_check_finds_a_planted_module(tmp_path: Path) -> None:
    (tmp_path / "planted.py").write_text(
        "from evaluation.metrics.base import register\n\n"
        "@register('planted', cutoff='none', citation='nowhere')\n"
        "def planted(gains, cutoff):\n    return gains\n"
    )
    (tmp_path / "helper.py").write_text("def register(x):\n    return x\n\nvalue = register(1)\n")  # a call, not a decorator
    assert registering_modules(tmp_path, PACKAGE) == [f"{PACKAGE}.planted"]
    assert f"{PACKAGE}.planted" not in loaded_by_the_package()


def test_a_name_or_alias_is_registered_once() -> None:
    taken = next(iter(REGISTRY))

    def kernel(gains, cutoff, *, p):  # pragma: no cover - never called
        return gains

    with pytest.raises(ValueError, match=f"metric {taken!r} registered twice"):
        register(taken, params={"p": Param(0.5, 0, 1)}, citation="a test")(kernel)
    alias, owner = next(iter(_ALIASES.items()))
    for clash, who in ((alias, owner), (taken, taken)):
        with pytest.raises(ValueError, match=f"metric 'Dummy-new': the alias {clash!r} is taken by {who!r}"):
            register("Dummy-new", params={"p": Param(0.5, 0, 1)}, citation="a test", aliases=(clash,))(kernel)
    assert "Dummy-new" not in REGISTRY and _ALIASES[alias] == owner
