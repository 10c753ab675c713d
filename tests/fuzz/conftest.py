"""Fuzz-suite fixtures: a small allocation limit, so no fuzzed call may make a large allocation."""

from __future__ import annotations

import pytest

import afltheory._validation as validation


@pytest.fixture(autouse=True)
def _small_alloc_limit(monkeypatch):
    """Allocations caused by arguments are checked against ``MAX_ALLOC_BYTES`` (4 GiB by default); 64 MiB
    here keeps every fuzzed call small (a refusal names the limit, as it would at 4 GiB)."""
    monkeypatch.setattr(validation, "MAX_ALLOC_BYTES", 64 * 1024**2)
