"""Trace has a short repr, a summary, and save/load that round-trips every array (issue 21, point 12)."""

from __future__ import annotations

import numpy as np
import pytest

import afltheory as aft
from afltheory import anarchy as an
from afltheory.algorithms import AFACS


def _trace(**kw):
    prob = aft.problems.HeterogeneousQuadratic(dim=3, num_workers=5, sigma_L=0.3, sigma_G=0.5, seed=0)
    beh = an.Behaviour(an.UniformArrivals(2), an.UniformDelay(2), an.UniformSteps(1, 3))
    return aft.simulate(prob, AFACS(0.5, 0.05), beh, rounds=12, replicates=3, seed=4, **kw)


def test_repr_and_summary_are_short_and_informative():
    tr = _trace()
    r = repr(tr)
    assert r.startswith("Trace(replicates=3, rounds=12, dim=3, seed=4") and len(r) < 200
    s = tr.summary()
    assert "AFACS" in s and "95% CI" in s and "no divergence" in s and len(s.splitlines()) <= 8


@pytest.mark.parametrize("record_x", [False, True])
def test_save_load_round_trip(tmp_path, record_x):
    tr = _trace(record_x=record_x)
    path = tr.save(tmp_path / "run")
    assert path.endswith(".npz")
    back = aft.Trace.load(path) if hasattr(aft, "Trace") else type(tr).load(path)
    for name in ("grad_norm_sq", "loss", "left_region", "x_final", "x0", "oracle_calls", "bits"):
        assert np.array_equal(getattr(back, name), getattr(tr, name)), name
    assert back.schedule == tr.schedule and back.seed == tr.seed and back.config == tr.config
    assert np.array_equal(back.divergence.round, tr.divergence.round)
    assert (back.x is None) == (not record_x)
    if record_x:
        assert np.array_equal(back.x, tr.x)


def test_load_refuses_other_files(tmp_path):
    p = tmp_path / "other.npz"
    np.savez(p, a=np.ones(3))
    with pytest.raises(ValueError, match="not an afltheory trace"):
        type(_trace()).load(p)
    q = tmp_path / "junk.npz"
    q.write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="not a readable"):
        type(_trace()).load(q)


def test_simulate_progress_is_opt_in(capsys):
    _trace()
    assert capsys.readouterr().err == ""
    prob = aft.problems.HeterogeneousQuadratic(dim=3, num_workers=5, seed=0)
    aft.simulate(
        prob, AFACS(0.5, 0.05), an.Behaviour(an.UniformArrivals(2)), rounds=20, replicates=2, progress=True
    )
    err = capsys.readouterr().err
    # tqdm's bar (redrawn, then cleared) or the 10 % lines
    assert "simulate" in err and "/20" in err


def test_exact_cost_is_projected_warned_and_refusable():
    import warnings

    prob = aft.problems.HeterogeneousQuadratic(dim=3, num_workers=5, sigma_L=0.3, seed=0)
    beh = an.Behaviour(an.UniformArrivals(2), an.UniformDelay(1))
    with pytest.warns(aft.exact.ExactCostWarning, match="state size n"):
        aft.exact.moments(prob, AFACS(0.5, 0.05), beh, rounds=5, warn_seconds=1e-12)
    with pytest.raises(ValueError, match="max_seconds"):
        aft.exact.moments(prob, AFACS(0.5, 0.05), beh, rounds=5, max_seconds=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("error", aft.exact.ExactCostWarning)
        aft.exact.moments(prob, AFACS(0.5, 0.05), beh, rounds=5)  # default 30 s: silent at this size
