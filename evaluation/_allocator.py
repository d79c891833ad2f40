"""Allocator policy for the engine's large arrays (Linux with glibc; elsewhere a no-op).

The engine builds and frees per-intent blocks of a few MB many times per evaluation. With glibc's
default policy, freed memory at the top of the heap goes back to the system as soon as more than
twice the (dynamic) mmap threshold is free, and blocks above that threshold get fresh mappings:
the next block then arrives as fresh zero pages, one page fault per 4 KB. On virtual machines a
fault costs microseconds (about 2.4 us measured on the project's 2-core VM), and faults made up a
fifth of a 100-run evaluation (``benchmarks/bench_metrics.py``).

:func:`retain_freed_memory` keeps up to :data:`TRIM_THRESHOLD` bytes of freed heap for reuse and
serves blocks under :data:`MMAP_THRESHOLD` bytes from the heap, for the rest of the process (at
most 64 MB of freed memory per malloc arena). A library must not retune its host's allocator, so
the engine never calls it: only programs that own their process opt in, namely the command line
(``python -m evaluation``, in ``evaluation/__main__.py``) and ``benchmarks/bench_metrics.py --allocator-policy``. It is skipped
when the environment already tunes glibc's malloc (``MALLOC_TRIM_THRESHOLD_``,
``MALLOC_MMAP_THRESHOLD_``, ``GLIBC_TUNABLES``) and when ``EVALUATION_MALLOC_TUNING=0``.
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading

M_TRIM_THRESHOLD = -1  # mallopt parameters, <malloc.h>
M_MMAP_THRESHOLD = -3
TRIM_THRESHOLD = 64 << 20
MMAP_THRESHOLD = 32 << 20
USER_SETTINGS = ("MALLOC_TRIM_THRESHOLD_", "MALLOC_MMAP_THRESHOLD_", "MALLOC_TOP_PAD_", "GLIBC_TUNABLES")

_lock = threading.Lock()
_state: dict[str, bool] = {}


def retain_freed_memory() -> bool:
    """Apply the policy once per process; True when it is in force."""
    with _lock:
        if "applied" not in _state:
            _state["applied"] = _apply()
        return _state["applied"]


def _apply() -> bool:
    if os.environ.get("EVALUATION_MALLOC_TUNING", "1") == "0" or any(name in os.environ for name in USER_SETTINGS):
        return False
    if not sys.platform.startswith("linux"):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # pragma: no cover - a libc without mallopt
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    # the mmap threshold first: setting either turns glibc's dynamic thresholds off
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD))
