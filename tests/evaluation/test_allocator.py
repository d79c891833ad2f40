"""The command line's allocator policy: applied once per process on Linux/glibc, skipped on request
or when the environment tunes malloc itself; never applied by the library itself."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROBE = "from evaluation._allocator import retain_freed_memory\nprint(retain_freed_memory(), retain_freed_memory())\n"


LINUX_ONLY = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt and page-fault counts: Linux only")


def _run(code: str, **env: str) -> str:
    """Output of ``code`` in a fresh interpreter whose environment tunes no malloc, plus ``env``."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("MALLOC_", "GLIBC_TUNABLES", "EVALUATION_MALLOC"))}
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env={**clean, **env}, capture_output=True, text=True, check=True)
    return result.stdout.strip()


def _probe(**env: str) -> str:
    return _run(PROBE, **env)


@LINUX_ONLY
def test_applied_once_on_glibc() -> None:
    assert _probe() == "True True"


@pytest.mark.parametrize(
    "env",
    [{"EVALUATION_MALLOC_TUNING": "0"}, {"MALLOC_TRIM_THRESHOLD_": "131072"}, {"GLIBC_TUNABLES": "glibc.malloc.trim_threshold=131072"}],
)
def test_skipped_on_request_or_when_malloc_is_tuned_already(env: dict[str, str]) -> None:
    assert _probe(**env) == "False False"


@LINUX_ONLY
def test_freed_blocks_are_reused_without_page_faults() -> None:
    """The point of the policy: a second evaluation-sized block of fresh arrays faults far fewer pages."""
    code = (
        "import resource, numpy as np\n"
        "from evaluation._allocator import retain_freed_memory\n"
        "retain_freed_memory()\n"
        "def faults():\n"
        "    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt\n"
        "def churn():\n"
        "    blocks = [np.ones(300_000) for _ in range(8)]\n"  # 8 x 2.4 MB, like per-intent blocks
        "    del blocks\n"
        "churn(); start = faults(); churn(); print(faults() - start)\n"
    )
    second = int(_run(code))
    assert second < 100  # without the policy: about 4,600 (every block back as fresh pages)


def test_the_library_leaves_the_allocator_alone() -> None:
    """Scoring through the library (as a Django worker does) never applies the policy."""
    code = (
        "from evaluation import _allocator, score_matrix\n"
        "from evaluation.metrics import parse_measure\n"
        "from tests.evaluation.toy import toy_collection, toy_run\n"
        "score_matrix(toy_collection(), [toy_run()], [parse_measure('alpha-nDCG@5')])\n"
        "print(_allocator._state)\n"
    )
    assert _run(code) == "{}"


@LINUX_ONLY
def test_the_command_line_opts_in() -> None:
    code = (
        "import runpy, sys\n"
        "from evaluation import _allocator\n"
        "sys.argv = ['evaluation', 'metrics', '--format', 'tsv']\n"
        "try:\n"
        "    runpy.run_module('evaluation', run_name='__main__')\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(_allocator._state)\n"
    )
    assert _run(code).splitlines()[-1] == "{'applied': True}"
