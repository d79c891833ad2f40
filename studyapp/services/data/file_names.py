"""File names made from data (study slugs, run names): one safe component each, never a path.

A run imported as ``../../../../x`` must not make ``study_report --out DIR`` write outside DIR, and
a download name must not carry quotes or line breaks into a ``Content-Disposition`` header.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def safe_name(text: str, *, max_length: int = 100) -> str:
    """``text`` as one file-name component of letters, digits, ``. _ -``; never empty, ``.`` or ``..``.

    A name that had to change gets a short digest of the original, so two different names never
    collide (``a/b`` and ``a_b`` stay apart); a name that is already safe is kept as it is.
    """
    cleaned = _UNSAFE.sub("_", text).strip("._") or "unnamed"
    if cleaned == text and len(text) <= max_length:
        return text
    digest = hashlib.sha256(text.encode()).hexdigest()[:8]
    return f"{cleaned[: max_length - 9]}-{digest}"


def inside(folder: Path, relative: str) -> Path:
    """``folder / relative``, refusing (ValueError) anything that resolves outside ``folder``."""
    base = folder.resolve()
    path = (base / relative).resolve()
    if not path.is_relative_to(base):
        raise ValueError(f"{relative!r} would be written outside {folder}")
    return path
