"""The one rule of the modules that read Django's internals for speed (``compiled_queries``,
``pg_timestamps``): check them once per process, and when they differ from what the module expects,
step aside for Django's own code and say so once (a warning and a log line)."""

from __future__ import annotations

import logging
import warnings

logger = logging.getLogger(__name__)


def step_aside(problem: str, what_instead: str, module: str) -> bool:
    """True when ``problem`` is not empty, after warning once: "<what_instead>: <problem> (<module>)".

    Callers cache the answer per process (``functools.cache``), so the warning comes once.
    """
    if problem:
        message = f"{what_instead}: {problem} ({module})"
        logger.warning(message)
        warnings.warn(message, RuntimeWarning, stacklevel=3)
    return bool(problem)
