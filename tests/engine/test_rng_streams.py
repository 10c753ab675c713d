"""``_rng.SFC64BlockStreams`` (the engine's noise streams): each (seed, block, purpose, key) sub-stream is
reproducible whatever was drawn before, and distinct keys give distinct streams. Deterministic."""

from __future__ import annotations

import numpy as np

from afltheory import _rng


def _draw(streams, purpose, key, n=5):
    return np.stack([g.standard_normal(n) for g in streams.at(purpose, key)])


def test_a_sub_stream_does_not_depend_on_what_was_drawn_before():
    a = _rng.SFC64BlockStreams(7, 3)
    first = _draw(a, _rng.NOISE, 4)
    for g in a.at(_rng.NOISE, 9):
        g.standard_normal(1001)  # an odd count of draws in between
        g.random(3)
    np.testing.assert_array_equal(_draw(a, _rng.NOISE, 4), first)
    np.testing.assert_array_equal(_draw(_rng.SFC64BlockStreams(7, 5), _rng.NOISE, 4)[:3], first)  # ⟂ nblocks


def test_seeds_blocks_purposes_and_keys_give_distinct_streams():
    base = _draw(_rng.SFC64BlockStreams(7, 2), _rng.NOISE, 4)
    assert not np.array_equal(base[0], base[1])  # blocks
    for other in (
        _draw(_rng.SFC64BlockStreams(8, 2), _rng.NOISE, 4),  # seed
        _draw(_rng.SFC64BlockStreams(7, 2), _rng.INIT, 4),  # purpose
        _draw(_rng.SFC64BlockStreams(7, 2), _rng.NOISE, 5),  # key
    ):
        assert not np.any(other == base)


def test_the_draws_are_standard_normal():
    """Mean and variance of 64 000 draws over 200 keys: |z| < 5 each (false-failure probability < 1e-6)."""
    s = _rng.SFC64BlockStreams(1, 1)
    x = np.concatenate([_draw(s, _rng.NOISE, k, 320).ravel() for k in range(200)])
    n = x.size
    assert abs(x.mean()) * np.sqrt(n) < 5
    assert abs(x.var() - 1.0) / np.sqrt(2.0 / n) < 5
