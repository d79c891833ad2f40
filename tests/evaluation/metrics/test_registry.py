"""Parameter defaults are written once, in each metric's ``Param``: kernels take their parameters
keyword-only and without defaults, and registration refuses any other shape. Every kernel's docstring
links its definition and names its slow reference implementation."""

from __future__ import annotations

import inspect
import re

import numpy as np
import pytest

from evaluation.metrics import REGISTRY
from evaluation.metrics import reference as ref
from evaluation.metrics import reference_adhoc as ref_adhoc
from evaluation.metrics.base import Param, check_kernel_signature, parse_measure


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_every_kernel_takes_its_params_keyword_only_without_defaults(name: str) -> None:
    spec = REGISTRY[name]
    after_cutoff = list(inspect.signature(spec.kernel).parameters.values())[2:]
    assert all(p.default is inspect.Parameter.empty for p in after_cutoff)
    named = {p.name for p in after_cutoff if p.kind is inspect.Parameter.KEYWORD_ONLY}
    assert named <= set(spec.params)
    # the defaults a measure string gets are exactly the Params'
    assert parse_measure(name if spec.cutoff != "required" else f"{name}@5").params == {k: p.default for k, p in spec.params.items()}


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_every_kernel_links_its_definition_and_names_its_slow_reference(name: str) -> None:
    """From a metric a reader reaches its definition (a docs/metrics.md anchor, checked to exist by
    tests/test_references.py) and its loop version in evaluation/metrics/reference.py (reference_adhoc.py for the ad hoc baselines)."""
    doc = inspect.getdoc(REGISTRY[name].kernel) or ""
    assert "docs/metrics.md#" in doc
    assert re.search(r"Slow reference: ``reference(_adhoc)?\.", doc)
    named = re.findall(r"``(reference(?:_adhoc)?)\.(\w+)``", doc)
    modules = {"reference": ref, "reference_adhoc": ref_adhoc}
    assert named and all(callable(getattr(modules[module], function, None)) for module, function in named), named


def _kernel_with_default(ranking, k, *, alpha: float = 0.5) -> np.ndarray:
    raise AssertionError


def _kernel_positional(ranking, k, alpha) -> np.ndarray:
    raise AssertionError


def _kernel_without_alpha(ranking, k) -> np.ndarray:
    raise AssertionError


ALPHA = {"alpha": Param(float, 0.5, "novelty")}


@pytest.mark.parametrize(
    ("kernel", "params", "problem"),
    [
        (_kernel_with_default, ALPHA, "alpha has a default"),
        (_kernel_positional, ALPHA, "alpha is not keyword-only"),
        (_kernel_without_alpha, ALPHA, "Param alpha is not a kernel argument"),
        (_kernel_with_default, {}, "alpha is no Param"),
    ],
)
def test_registration_refuses_a_second_place_for_defaults(kernel, params: dict[str, Param], problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        check_kernel_signature("X", kernel, params)
