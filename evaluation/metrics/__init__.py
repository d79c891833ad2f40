"""Diversity metrics: one module per family, one registry (:data:`REGISTRY`).

Importing this package registers every metric.
"""

from evaluation.metrics import alphasharp, coverage, dmeasures, intent_aware, novelty, rbu, utility  # noqa: F401 (registration)
from evaluation.metrics.base import REGISTRY, Measure, MetricSpec, Param, default_measures, get_spec, parse_measure

__all__ = ["REGISTRY", "Measure", "MetricSpec", "Param", "default_measures", "get_spec", "parse_measure"]
