"""axe-core in the browser tests: the page's WCAG violations, as readable lines.

axe-core (Deque, MPL-2.0) comes with the ``axe-playwright-python`` package of requirements-dev.txt
(its bundled ``axe.min.js``); it is injected into the page under test and run on the whole
document with the WCAG 2.0/2.1 A and AA rules and the best-practice rules.
"""

from __future__ import annotations

from functools import cache

from tests.browser.conftest import require_playwright

require_playwright()


@cache
def _axe_script() -> str:
    try:
        from axe_playwright_python.base import AXE_SCRIPT
    except ImportError:  # pragma: no cover - requirements-dev.txt installs it
        from tests.browser.conftest import unavailable

        unavailable("the axe-playwright-python package (axe-core) is not installed")
    return AXE_SCRIPT


def axe_violations(page, *, exclude: list[str] | None = None) -> list[str]:
    """Run axe-core on ``page`` and return one line per violation and element (empty: none).

    ``exclude``: CSS selectors of parts left out of the check (none of ours are).
    """
    page.evaluate(_axe_script())
    context = {"include": [["html"]], "exclude": [[s] for s in exclude or []]}
    results = page.evaluate("([context]) => axe.run(context, {resultTypes: ['violations']})", [context])
    lines = []
    for violation in results["violations"]:
        for node in violation["nodes"]:
            target = " ".join(map(str, node["target"]))
            lines.append(f"{violation['id']} ({violation['impact']}): {target}: {node.get('failureSummary', '').splitlines()[-1].strip()}")
    return lines
