"""Starting Django (``django.setup()``, every URL pattern resolved, the admin discovered) imports no part of
the evaluation package, so neither pandas, scipy, numpy nor matplotlib: every process (manage.py, a
gunicorn worker, the test suite's subprocesses) would pay about 1.6 s of CPU for them before its first
line of work (docs/contributing.md#lazy-evaluation-imports)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("evaluation", "pandas", "scipy", "numpy", "matplotlib")

START = f"""
import json, sys
import django
django.setup()
from django.contrib import admin
from django.urls import get_resolver

def resolve(patterns):
    count = 0
    for pattern in patterns:
        count += resolve(pattern.url_patterns) if hasattr(pattern, "url_patterns") else 1
    return count

patterns = resolve(get_resolver().url_patterns)
admin.autodiscover()
print(json.dumps({{"patterns": patterns, "admin": len(admin.site._registry), "loaded": [m for m in {HEAVY!r} if m in sys.modules]}}))
"""


def started() -> dict:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "studyapp.settings"}
    done = subprocess.run([sys.executable, "-c", START], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def test_starting_django_imports_no_evaluation_pandas_or_scipy() -> None:
    state = started()
    assert state["patterns"] > 20 and state["admin"] > 5  # the URL tree and the admin were really loaded
    assert state["loaded"] == [], (
        f"starting Django imported {state['loaded']}: find the chain with "
        "`DJANGO_SETTINGS_MODULE=studyapp.settings python -X importtime -c 'import django; django.setup()'` "
        "and import the evaluation package inside the function that needs it"
    )


def test_the_wsgi_module_loads_what_the_first_item_page_needs() -> None:
    """A serving process (gunicorn, runserver: studyapp.wsgi) imports the item page's link check before its first
    request, so no annotator's first page waits for pandas and scipy to load."""
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "studyapp.settings"}
    code = "import sys, studyapp.wsgi; print(sorted(m for m in ('evaluation.io.documents', 'pandas') if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[-2] == "['evaluation.io.documents', 'pandas']"
