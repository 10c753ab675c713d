"""``simulate``'s fast path (issue 41, afltheory/engine.py ``_run_rounds_fast``): the collapsed law in one
compiled kernel, taken by default (``fast="auto"``) wherever it covers the run. Evidence: without noise it is
the reference path's deterministic recursion (to 1e-12, the same divergence round); with noise it has the
exact moments' law (z-tests of E x_t, E‖∇f(x_t)‖² and E f(x_t) at fixed seeds, stated confidence; K = 1,
K = 5, random K, m < M, delays, weights, per-worker Hessians); replicate r is bit-identical whatever R; the
numba kernel and its numpy reference give the same bits; unsupported runs are refused with the reason by
``fast=True`` and run on the reference path by "auto"; ``fast=False`` is the reference path."""

from __future__ import annotations

import numpy as np
import pytest

import afltheory as aft
from afltheory import engine
from afltheory.algorithms import AFACD, AFACS, FedAvg, FedBuff
from afltheory.anarchy import (
    Behaviour,
    ConstantSteps,
    FixedDelay,
    NoDelay,
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
    fast, ref = aft.simulate(p, rule, beh, fast=True, **kw), aft.simulate(p, rule, beh, fast=False, **kw)
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
        ref = aft.simulate(p, AFACD(60.0, 0.05), BEH, fast=False, **kw)
    d = ref.divergence.round
    assert np.sum(d > 0) >= 2 and np.array_equal(fast.divergence.round, d)
    for r in range(4):
        end = d[r] if d[r] > 0 else None
        _close(fast.grad_norm_sq[r, :end], ref.grad_norm_sq[r, :end], 1e-9)
        assert end is None or np.all(np.isinf(fast.grad_norm_sq[r, end:]))
    assert np.array_equal(np.isinf(fast.x_final).all(axis=1), d > 0)


#: covered configurations (m = 3 < M = 8 unless said): K = 1 and K = 5 on the kernel's uniform branch with
#: random and fixed delays; random K with FedBuff's staleness weights and FedAvg's K_i weights; per-worker
#: Hessians; all M workers with no delay
LAW_CASES = {
    "K=1 delays": (
        _shared,
        AFACD(0.5, 0.1),
        Behaviour(UniformArrivals(3), UniformDelay(3), ConstantSteps(1)),
    ),
    "K=5 fixed delay": (
        _shared,
        AFACD(0.5, 0.1),
        Behaviour(UniformArrivals(3), FixedDelay(2), ConstantSteps(5)),
    ),
    "random K FedBuff": (_shared, FedBuff(0.5, 0.1), BEH),
    "random K FedAvg": (_shared, FedAvg(0.5, 0.1), BEH),
    "per-worker K=5": (
        _per_worker,
        AFACD(0.5, 0.1),
        Behaviour(UniformArrivals(3), UniformDelay(2), ConstantSteps(5)),
    ),
    "per-worker FedBuff": (_per_worker, FedBuff(0.5, 0.1), BEH),
    "m=M no delay": (_shared, AFACD(0.5, 0.1), Behaviour(UniformArrivals(8), NoDelay(), ConstantSteps(3))),
}


@pytest.mark.parametrize("case", sorted(LAW_CASES))
def test_fast_path_has_the_exact_law(case):
    """The fast path's Monte Carlo means against ``afltheory.exact.moments``: z of E x_t (each coordinate),
    E‖∇f(x_t)‖² and E f(x_t) (second moments of x_t) at t = 1..30 over 10 000 replicates, seed 11. Each
    |z| ≤ 4.5: under the law P(|z| > 4.5) ≈ 6.8e-6, so by the union bound over the ≤ 210 z-scores of a case
    a false failure has probability < 1.5e-3 (the seed is fixed: the outcome is deterministic). The time
    average of ‖∇f‖² has |z| ≤ 4.5 too, and the noise's share of it exceeds 6 standard errors: a path that
    drops the noise, sums it unweighted or uses one draw for all rows fails (σ_L = 4)."""
    problem, rule, beh = LAW_CASES[case]
    p = problem(sigma_L=4.0)
    tr = aft.simulate(p, rule, beh, rounds=30, replicates=10_000, seed=11, record_x=True)
    assert tr.config["fast"] in ("numba", "numpy")  # the default takes the fast path here
    ex = aft.exact.moments(p, rule, beh, 30)
    for what in ("grad_norm_sq", "loss"):
        z = aft.exact.zscores(tr, ex, what)[1:]
        assert np.max(np.abs(z)) <= 4.5, (what, z)
    xs = tr.x[:, 1:]
    zx = (xs.mean(axis=0) - ex.x_mean[1:]) / (xs.std(axis=0, ddof=1) / np.sqrt(xs.shape[0]))
    assert np.max(np.abs(zx)) <= 4.5, zx
    avg = tr.grad_norm_sq[:, 1:].mean(axis=1)
    se = avg.std(ddof=1) / np.sqrt(avg.size)
    assert abs(avg.mean() - ex.grad_norm_sq[1:].mean()) / se <= 4.5
    noiseless = aft.exact.moments(problem(sigma_L=0.0), rule, beh, 30)
    assert (ex.grad_norm_sq[1:].mean() - noiseless.grad_norm_sq[1:].mean()) / se > 6


@pytest.mark.parametrize(
    "problem, rule, beh", [(_per_worker, FedBuff(0.5, 0.05), BEH), (_shared, AFACD(0.5, 0.05), UNIFORM)]
)
def test_replicate_r_does_not_depend_on_R(problem, rule, beh):
    """The default (fast) path: row 0 of R = 1, rows 0..2 of R = 3, 70 and 130 runs, and rows 64..69 (the
    second noise block) of R = 70 and 130, are bit-identical (weighted and uniform branches)."""
    p = problem()
    runs = {R: aft.simulate(p, rule, beh, rounds=25, replicates=R, seed=5) for R in (1, 3, 70, 130)}
    assert all(tr.config["fast"] in ("numba", "numpy") for tr in runs.values())
    for what in ("grad_norm_sq", "loss", "x_final", "x_avg"):
        one, a, b, c = (getattr(runs[R], what) for R in (1, 3, 70, 130))
        assert np.array_equal(one, a[:1]) and np.array_equal(a, b[:3]) and np.array_equal(a, c[:3])
        assert np.array_equal(b[64:70], c[64:70])
    assert not np.array_equal(runs[130].grad_norm_sq[0], runs[130].grad_norm_sq[64])  # distinct streams


def test_chunks_of_rounds_do_not_change_the_bits(monkeypatch):
    """Rounds in chunks of 7 (30 rounds: 5 chunks, the last partial) give the bits of one chunk: the noise of
    a block is drawn in round order whatever the chunk."""
    p, kw = _shared(), dict(rounds=30, replicates=70, seed=8, record_x=True)
    whole = aft.simulate(p, FedBuff(0.5, 0.05), BEH, **kw)
    monkeypatch.setattr(engine, "_FAST_CHUNK_VALUES", 5 * 128 * 7)  # d = 5, two blocks of 64
    chunked = aft.simulate(p, FedBuff(0.5, 0.05), BEH, **kw)
    for what in ("grad_norm_sq", "loss", "x", "x_avg"):
        assert np.array_equal(getattr(whole, what), getattr(chunked, what)), what


@pytest.mark.parametrize(
    "problem, rule, beh",
    [
        (_per_worker, FedBuff(0.5, 0.05), BEH),
        (_shared, AFACD(0.5, 0.05), UNIFORM),
        (lambda: HeterogeneousQuadratic(dim=50, num_workers=8, sigma_L=0.5, seed=4), AFACD(0.5, 0.05), BEH),
    ],
)
def test_numba_kernel_and_numpy_reference_give_the_same_bits(monkeypatch, problem, rule, beh):
    """Every recorded value bit for bit (d = 50: coordinates are summed in index order by both; numpy's
    pairwise ``sum`` would differ in the last bits), so ``fast="auto"`` does not depend on numba."""
    pytest.importorskip("numba")
    p = problem()
    kw = dict(rounds=30, replicates=70, seed=2, record_x=True, fast=True)
    compiled = aft.simulate(p, rule, beh, **kw)
    monkeypatch.setattr(engine, "_fast_kernel", lambda: None)
    ref = aft.simulate(p, rule, beh, **kw)
    assert compiled.config["fast"] == "numba" and ref.config["fast"] == "numpy"
    for what in ("grad_norm_sq", "loss", "x", "x_avg", "x_final"):  # the same bits: "auto" may take either
        assert np.array_equal(getattr(compiled, what), getattr(ref, what)), what


def test_the_default_is_the_fast_path_where_it_covers_the_run_and_the_reference_path_elsewhere():
    """``fast="auto"`` (the default) gives fast=True's bits on a covered run and fast=False's on an uncovered
    one (AFA-CS keeps memory; a dense Hessian); fast=False is not the fast path (same schedule, other
    draws)."""
    p, rule, kw = _shared(), AFACD(0.5, 0.05), dict(rounds=10, replicates=4, seed=0)
    auto, fast = aft.simulate(p, rule, BEH, **kw), aft.simulate(p, rule, BEH, fast=True, **kw)
    ref = aft.simulate(p, rule, BEH, fast=False, **kw)
    assert auto.config["fast"] in ("numba", "numpy") and "fast" not in ref.config
    assert np.array_equal(auto.grad_norm_sq, fast.grad_norm_sq) and np.array_equal(auto.x_final, fast.x_final)
    assert np.array_equal(ref.schedule.workers, fast.schedule.workers)  # same schedule ...
    assert not np.array_equal(ref.grad_norm_sq[:, 1:], fast.grad_norm_sq[:, 1:])  # ... other noise draws
    dense = HeterogeneousQuadratic(dim=3, num_workers=8, sigma_L=0.5, seed=0, hessian="dense")
    for q, r in ((p, AFACS(0.5, 0.05)), (dense, rule)):
        a, b = aft.simulate(q, r, BEH, **kw), aft.simulate(q, r, BEH, fast=False, **kw)
        assert "fast" not in a.config and np.array_equal(a.grad_norm_sq, b.grad_norm_sq)
    with pytest.raises(ValueError, match="fast=True is unavailable here: the server rule keeps memory"):
        aft.simulate(p, AFACS(0.5, 0.05), Behaviour(UniformArrivals(8)), fast=True, **kw)
    assert "fast" not in aft.simulate(p, AFACS(0.5, 0.05), Behaviour(UniformArrivals(8)), **kw).config
    assert aft.simulate(p, rule, BEH, fast=np.True_, **kw).config["fast"] == auto.config["fast"]


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
            "fast='yes' must be True, False or 'auto'",
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
        ref = aft.simulate(p, AFACD(1.5, 0.05), BEH, fast=False, **kw)
    assert np.array_equal(fast.left_region, ref.left_region)
    assert np.all(ref.left_region > 0) and len(set(ref.left_region.tolist())) > 2


def test_under_any_mutant_simulate_runs_the_reference_path():
    """Every mutant run keeps the reference path's bits (the recorded kill matrices stay valid): under a
    mutant of the exact engine, of simulate (``sim.*``) or one replacing the rule, the default equals
    fast=False and fast=True says why; after it the default is the fast path again."""
    from afltheory import mutants

    p, kw = _shared(), dict(rounds=10, replicates=3, seed=2)
    for name, why in (
        ("exact.noise_dropped", r"a mutant is injected \(exact.noise_dropped"),
        ("sim.noise_dropped", "sim.noise_dropped"),
        ("control.afacd_subclass", "replaces the server rule"),
    ):
        with mutants.injected(name):
            tr = aft.simulate(p, AFACD(0.5, 0.05), BEH, **kw)
            ref = aft.simulate(p, AFACD(0.5, 0.05), BEH, fast=False, **kw)
            with pytest.raises(ValueError, match=why):
                aft.simulate(p, AFACD(0.5, 0.05), BEH, fast=True, **kw)
        assert "fast" not in tr.config and np.array_equal(tr.grad_norm_sq, ref.grad_norm_sq)
    assert aft.simulate(p, AFACD(0.5, 0.05), BEH, **kw).config["fast"] in ("numba", "numpy")
