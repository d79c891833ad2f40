"""Diversity metrics: one module per family, one registry (:data:`REGISTRY`).

Importing this package registers every metric: the diversity families first, then the ad hoc
baselines (``adhoc``), so listings and reports show the baselines last.
"""

from evaluation.metrics import alphasharp, coverage, dmeasures, intent_aware, novelty, rbu, utility  # noqa: F401 (registration)

# isort: split
from evaluation.metrics import adhoc  # noqa: F401 (registration, after the diversity families)
from evaluation.metrics.base import REGISTRY, Measure, MetricSpec, Param, default_measures, get_spec, parse_measure

__all__ = ["REGISTRY", "Measure", "MetricSpec", "Param", "default_measures", "get_spec", "parse_measure"]
