"""Every test of the study app starts with an empty cache: the throttling counts (staff sign-in
failures, newcomers per client) live there and would otherwise carry over from test to test, since
all test requests come from the same address."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.core.cache import cache


@pytest.fixture(autouse=True)
def empty_cache() -> Iterator[None]:
    cache.clear()
    yield
    cache.clear()
