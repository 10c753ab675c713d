"""``simulate(fast=True)`` (issue 41, afltheory/engine.py ``_run_rounds_fast``): the opt-in compiled path of
the collapsed law. Evidence: without noise it is the default path's deterministic recursion (to 1e-12, the
same divergence round); with noise it has the exact moments' law (z-tests, fixed seeds); replicate r is
bit-identical whatever R; the numba kernel and its numpy reference agree; unsupported runs are refused with
the reason; the default path never takes it."""

from __future__ import annotations

import numpy as np
import pytest

import afltheory as aft
from afltheory import engine
from afltheory.algorithms import AFACD, AFACS, FedBuff
from afltheory.anarchy import (
    Behaviour,
    ConstantSteps,
    FixedDelay,
    UniformArrivals,
    UniformDelay,
    UniformSteps,
)
from afltheory.problems import HeterogeneousQuadratic
from afltheory.problems.curvature import HeterogeneousCurvatureQuadratic

BEH = Behaviour(UniformArrivals(3), UniformDelay(2), UniformSteps(1, 3))
#: one K for every arrival: with unit weights and a shared Hessian, the kernel's uniform branch
UNIFORM = Behaviour(UniformArrivals(3), UniformDelay(2), ConstantSteps(2))


def _shared(sigma_L=0.5):
    return HeterogeneousQuadratic(dim=5, num_workers=8, L=1.0, mu=0.2, sigma_L=sigma_L, sigma_G=1.0, seed=0)


def _per_worker(sigma_L=0.5):
    return HeterogeneousCurvatureQuadratic(dim=4, num_workers=8, sigma_L=sigma_L, seed=1)


def _close(a, b, tol=1e-12):
    scale = np.maximum(1.0, np.abs(b))
    assert np.all(np.abs(a - b) <= tol * scale), np.max(np.abs(a - b) / scale)


@pytest.mark.parametrize("beh", [BEH, UNIFORM])
@pytest.mark.parametrize("problem", [_shared, _per_worker])
@pytest.mark.parametrize("rule", [AFACD(0.5, 0.05), FedBuff(0.5, 0.05)])
def test_noiseless_fast_path_is_the_default_recursion(problem, rule, beh):
    """σ_L = 0: both paths compute the same deterministic recursion (random schedule, random or fixed K,
    delays, FedBuff's staleness weights, per-worker Hessians; AFA-CD with one K on the shared Hessian runs
    the kernel's uniform branch): equal to 1e-12 in every recorded value."""
    p = problem(sigma_L=0.0)
    kw = dict(rounds=40, replicates=5, seed=3, record_x=True)
    fast, ref = aft.simulate(p, rule, beh, fast=True, **kw), aft.simulate(p, rule, beh, **kw)
    assert fast.config["fast"] in ("numba", "numpy") and "fast" not in ref.config
    assert ref.grad_norm_sq[:, -1].max() < 0.5 * ref.grad_norm_sq[:, 0].min()  # a run that moves
    for what in ("grad_norm_sq", "loss", "x", "x_final", "x_avg", "bits", "oracle_calls"):
        _close(getattr(fast, what), getattr(ref, what))
    assert np.array_equal(fast.left_region, ref.left_region)


def test_noiseless_divergence_round_is_the_default_paths():
    p = _shared(sigma_L=0.0)
    kw = dict(rounds=60, replicates=4, seed=0)
    with pytest.warns(Warning, match="diverged"):
        fast = aft.simulate(p, AFACD(60.0, 0.05), BEH, fast=True, **kw)
    with pytest.warns(Warning, match="diverged"):
        ref = aft.simulate(p, AFACD(60.0, 0.05), BEH, **kw)
    d = ref.divergence.round
    assert np.sum(d > 0) >= 2 and np.array_equal(fast.divergence.round, d)
    for r in range(4):
        end = d[r] if d[r] > 0 else None
        _close(fast.grad_norm_sq[r, :end], ref.grad_norm_sq[r, :end], 1e-9)
        assert end is None or np.all(np.isinf(fast.grad_norm_sq[r, end:]))
    assert np.array_equal(np.isinf(fast.x_final).all(axis=1), d > 0)


@pytest.mark.parametrize(
    "problem, rule, beh",
    [
        (_shared, FedBuff(0.5, 0.1), BEH),
        (_per_worker, FedBuff(0.5, 0.1), BEH),
        (_shared, AFACD(0.5, 0.1), UNIFORM),
    ],
)
def test_fast_path_has_the_exact_law(problem, rule, beh):
    """z of the Monte Carlo mean of ‖∇f(x_t)‖² against exact moments, t = 1..30, 10 000 replicates, seed 11:
    |z_t| ≤ 4.5 for every t (30 tests at ~7e-6 each under the law: P(false alarm) < 3e-4) and the time
    average's |z| ≤ 4.5. A path that drops the noise, sums it unweighted or uses one draw for all rows
    fails (the noise is a large part of E‖∇f‖² here: σ_L = 2)."""
    p = problem(sigma_L=2.0)
    tr = aft.simulate(p, rule, beh, rounds=30, replicates=10_000, seed=11, fast=True)
    ex = aft.exact.moments(p, rule, beh, 30)
    z = aft.exact.zscores(tr, ex)[1:]
    assert np.max(np.abs(z)) <= 4.5, z
    avg = tr.grad_norm_sq[:, 1:].mean(axis=1)
    za = (avg.mean() - ex.grad_norm_sq[1:].mean()) / (avg.std(ddof=1) / np.sqrt(avg.size))
    assert abs(za) <= 4.5
    noiseless = aft.exact.moments(problem(sigma_L=0.0), rule, beh, 30)
    gap = (ex.grad_norm_sq[1:].mean() - noiseless.grad_norm_sq[1:].mean()) / (
        avg.std(ddof=1) / np.sqrt(avg.size)
    )
    # the noise's share is visible to this test: a path dropping it would fail the average's z
    assert gap > 6


def test_replicate_r_does_not_depend_on_R():
    """Rows 0..2 of R = 3, 70 and 130 runs, and rows 64..69 (the second noise block) of R = 70 and 130, are
    bit-identical."""
    p, rule = _per_worker(), FedBuff(0.5, 0.05)
    runs = {R: aft.simulate(p, rule, BEH, rounds=25, replicates=R, seed=5, fast=True) for R in (3, 70, 130)}
    for what in ("grad_norm_sq", "loss", "x_final", "x_avg"):
        a, b, c = (getattr(runs[R], what) for R in (3, 70, 130))
        assert np.array_equal(a, b[:3]) and np.array_equal(a, c[:3])
        assert np.array_equal(b[64:70], c[64:70])
    assert not np.array_equal(runs[130].grad_norm_sq[0], runs[130].grad_norm_sq[64])  # distinct streams


@pytest.mark.parametrize(
    "problem, rule, beh", [(_per_worker, FedBuff(0.5, 0.05), BEH), (_shared, AFACD(0.5, 0.05), UNIFORM)]
)
def test_numba_kernel_and_numpy_reference_agree(monkeypatch, problem, rule, beh):
    pytest.importorskip("numba")
    p = problem()
    kw = dict(rounds=30, replicates=70, seed=2, record_x=True, fast=True)
    compiled = aft.simulate(p, rule, beh, **kw)
    monkeypatch.setattr(engine, "_fast_kernel", lambda: None)
    ref = aft.simulate(p, rule, beh, **kw)
    assert compiled.config["fast"] == "numba" and ref.config["fast"] == "numpy"
    for what in ("grad_norm_sq", "loss", "x", "x_avg"):
        _close(getattr(compiled, what), getattr(ref, what))


def test_the_default_path_is_not_the_fast_one():
    p, rule = _shared(), AFACD(0.5, 0.05)
    ref = aft.simulate(p, rule, BEH, rounds=10, replicates=4, seed=0)
    fast = aft.simulate(p, rule, BEH, rounds=10, replicates=4, seed=0, fast=True)
    assert np.array_equal(ref.schedule.workers, fast.schedule.workers)  # same schedule ...
    assert not np.array_equal(ref.grad_norm_sq[:, 1:], fast.grad_norm_sq[:, 1:])  # ... other noise draws


@pytest.mark.parametrize(
    "call, why",
    [
        (lambda: aft.simulate(_shared(), AFACS(0.5, 0.05), BEH, 5, fast=True), "not collapsed"),
        (
            lambda: aft.simulate(
                _shared(),
                AFACS(0.5, 0.05),
                Behaviour(UniformArrivals(8), FixedDelay(1), ConstantSteps(2)),
                5,
                fast=True,
            ),
            "memory slots",
        ),
        (
            lambda: aft.simulate(
                HeterogeneousQuadratic(dim=3, num_workers=8, seed=0, hessian="dense"),
                AFACD(0.5, 0.05),
                BEH,
                5,
                fast=True,
            ),
            "diagonal Hessians",
        ),
        (
            lambda: aft.simulate(_shared(), AFACD(0.5, 0.05), BEH, 5, collapse="steps", fast=True),
            "not collapsed",
        ),
        (
            lambda: aft.simulate(_shared(), AFACD(0.5, 0.05), BEH, 5, fast="yes"),
            "fast='yes' must be True or False",
        ),
    ],
)
def test_unsupported_runs_are_refused_with_the_reason(call, why):
    with pytest.raises(ValueError, match=why):
        call()


def test_leaving_the_certified_region_is_recorded_as_on_the_default_path():
    """A small certified radius: without noise both paths record the same first round outside it (some
    replicates leave, at different rounds), and both warn."""
    p = HeterogeneousCurvatureQuadratic(dim=4, num_workers=8, sigma_L=0.0, radius=0.05, seed=1)
    x0 = p.constants.x_star + 0.01 * np.linspace(-1.0, 1.0, 4)  # inside the ball; the run leaves it
    kw = dict(rounds=30, replicates=6, seed=4, x0=x0)
    with pytest.warns(Warning, match="certified region"):
        fast = aft.simulate(p, AFACD(1.5, 0.05), BEH, fast=True, **kw)
    with pytest.warns(Warning, match="certified region"):
        ref = aft.simulate(p, AFACD(1.5, 0.05), BEH, **kw)
    assert np.array_equal(fast.left_region, ref.left_region)
    assert np.all(ref.left_region > 0) and len(set(ref.left_region.tolist())) > 2
