"""Compression inside simulate and the exact engine: exact vs Monte Carlo for the linear compressors under
AFA-CD/AFA-CS, replicate-count invariance, per-worker independence, bits, error feedback and DIANA semantics.
Monte Carlo comparisons use fixed seeds; |z| ≤ 4.5 over ≤ 31 rounds (false alarm < 2e-4 per test)."""

from __future__ import annotations

import numpy as np
import pytest

import afltheory as aft
from afltheory.algorithms import AFACD, AFACS
from afltheory.anarchy import Behaviour, ConstantSteps, NoDelay, UniformArrivals, UniformDelay, UniformSteps
from afltheory.compression import (
    DIANA,
    QSGD,
    BernoulliMask,
    Channel,
    ErrorFeedback,
    GaussianSketch,
    LowRank,
    RandK,
    Sign,
    StochasticQuantizer,
    TopK,
    uncompressed_bits,
)
from afltheory.exact import ExactUnavailable, moments, zscores


@pytest.fixture(scope="module")
def prob():
    return aft.problems.HeterogeneousQuadratic(
        dim=6, num_workers=5, L=2.0, mu=0.2, sigma_L=0.5, sigma_G=1.0, seed=0
    )


BEH = Behaviour(
    arrivals=UniformArrivals(m=3), delays=UniformDelay(max_delay=2), local_steps=UniformSteps(1, 3)
)


@pytest.mark.parametrize("comp", [RandK(2), BernoulliMask(0.5), GaussianSketch(3), LowRank(1)], ids=repr)
@pytest.mark.parametrize("Alg", [AFACD, AFACS])
def test_exact_matches_monte_carlo(prob, comp, Alg):
    """Exact second-moment recursion with E[MΓMᵀ] vs 3000 replicates (seed 1): |z| ≤ 4.5 at every round; and
    the compressor's effect is large against the MC error (the agreement is not vacuous)."""
    algo = Alg(eta=1.0, eta_L=0.1, compressor=comp)
    ex = moments(prob, algo, BEH, 30)
    tr = aft.simulate(prob, algo, BEH, rounds=30, replicates=3000, seed=1)
    assert np.nanmax(np.abs(zscores(tr, ex))) <= 4.5
    plain = moments(prob, Alg(eta=1.0, eta_L=0.1), BEH, 30)
    z_plain = (tr.mean()[10:] - plain.grad_norm_sq[10:]) / tr.sem()[10:]
    assert np.max(np.abs(z_plain)) > 6


def test_exact_rejects_nonlinear_or_memory(prob):
    for comp in (QSGD(2), TopK(2), ErrorFeedback(TopK(2)), DIANA(RandK(2))):
        with pytest.raises(ExactUnavailable, match="linear memoryless"):
            moments(prob, AFACD(eta=1.0, eta_L=0.1, compressor=comp), BEH, 3)


def test_replicate_count_invariance_and_bits(prob):
    """Replicate r is the same whatever the replicate count (partial blocks drawn whole); bits are counted."""
    algo = AFACD(eta=1.0, eta_L=0.1, compressor=BernoulliMask(0.4))
    a = aft.simulate(prob, algo, BEH, rounds=8, replicates=70, seed=3)
    b = aft.simulate(prob, algo, BEH, rounds=8, replicates=130, seed=3)
    assert np.array_equal(a.grad_norm_sq, b.grad_norm_sq[:70])
    assert np.array_equal(a.bits, b.bits[:70])
    assert np.all(np.diff(a.bits, axis=1) > 0) and np.all(a.bits[:, 0] == 0)
    plain = aft.simulate(prob, AFACD(eta=1.0, eta_L=0.1), BEH, rounds=8, replicates=2, seed=3)
    assert np.all(plain.bits[:, -1] == 8 * 3 * uncompressed_bits(6))
    cs = aft.simulate(
        prob, AFACS(eta=1.0, eta_L=0.1, compressor=RandK(2)), BEH, rounds=2, replicates=2, seed=3
    )
    assert np.all(cs.bits[:, 0] == 5 * RandK(2).expected_bits(6))  # the warm start is sent too


def test_each_arrival_draws_independent_randomness():
    """Two arrivals with identical updates in one round get different masks; replicate rows differ too."""
    ch = Channel(RandK(1), 4, 3, 2, seed=0)
    G = np.ones((2, 3, 4))
    out, bits, _ = ch.send(ch.init(), G, np.array([[0, 1, 2], [0, 1, 2]]), 1)
    supports = (out != 0).reshape(6, 4)
    assert len({tuple(s) for s in supports}) > 1
    assert np.all(bits == 3 * RandK(1).expected_bits(4))


def test_error_feedback_and_diana_memory_pinned():
    """Hand-checked: EF keeps e = v − C(v); DIANA decodes h + Δ and moves h by αΔ."""
    ch = Channel(ErrorFeedback(TopK(1)), 3, 2, 1, seed=0)
    W = np.array([[1]])
    out, _, s = ch.send(ch.init(), np.array([[[3.0, -1.0, 2.0]]]), W, 1)
    assert np.array_equal(out, [[[3.0, 0.0, 0.0]]]) and np.array_equal(s.memory[0, 1], [0.0, -1.0, 2.0])
    out, _, s = ch.send(s, np.array([[[0.0, 0.0, 1.0]]]), W, 2)  # v = (0, −1, 3) -> sends (0, 0, 3)
    assert np.array_equal(out, [[[0.0, 0.0, 3.0]]]) and np.array_equal(s.memory[0, 1], [0.0, -1.0, 0.0])
    assert np.all(s.memory[0, 0] == 0)
    d = Channel(DIANA(RandK(3), alpha=0.5), 3, 1, 1, seed=0)  # RandK(d) is the identity
    g = np.array([[[2.0, 4.0, -2.0]]])
    out, _, s = d.send(d.init(), g, np.array([[0]]), 1)
    assert np.allclose(out, g) and np.allclose(s.memory[0, 0], 0.5 * g[0, 0])
    out, _, s = d.send(s, g, np.array([[0]]), 2)
    assert np.allclose(out, g) and np.allclose(s.memory[0, 0], 0.75 * g[0, 0])


def _gd_problem():
    return aft.problems.HeterogeneousQuadratic(
        dim=8, num_workers=4, L=1.0, mu=0.2, sigma_L=0.0, sigma_G=1.0, seed=0
    )


GD = Behaviour(arrivals=UniformArrivals(m=4), delays=NoDelay(), local_steps=ConstantSteps(1))


def test_diana_removes_the_heterogeneity_floor():
    """Distributed compressed GD (full participation, K = 1, exact gradients): RandK leaves a floor, DIANA's
    shifts converge to x* (seed 1, 64 replicates); α = 0 is plain compression again."""
    p = _gd_problem()
    run = lambda c: aft.simulate(
        p, AFACD(eta=1.0, eta_L=0.25, compressor=c), GD, rounds=300, replicates=64, seed=1
    ).mean()[-1]
    assert run(RandK(2)) > 1e-2
    assert run(DIANA(RandK(2))) < 1e-10
    assert run(DIANA(RandK(2), alpha=0.0)) == run(RandK(2))


@pytest.mark.parametrize("comp", [TopK(2), Sign()], ids=repr)
def test_error_feedback_floor_vanishes_with_the_step(comp):
    """Biased compressors: without EF the floor does not shrink with γ; with EF it shrinks ≥ 8× when γ is 4×
    smaller (deterministic: σ_L = 0, one replicate)."""
    p = _gd_problem()

    def floor(c, g):
        tr = aft.simulate(
            p, AFACD(eta=1.0, eta_L=g, compressor=c), GD, rounds=int(100 / g), replicates=1, seed=1
        )
        return tr.grad_norm_sq[0, -40:].mean()

    assert floor(comp, 0.1) > 0.5 * floor(comp, 0.4) > 0.01
    assert floor(ErrorFeedback(comp), 0.1) < floor(ErrorFeedback(comp), 0.4) / 8


def test_server_rule_rejects_a_bad_compressor():
    with pytest.raises(TypeError, match="compressor="):
        AFACD(eta=1.0, eta_L=0.1, compressor="randk")
    with pytest.raises(ValueError, match="unbiased"):
        DIANA(TopK(2))
    with pytest.raises(ValueError, match="k=9 exceeds"):
        aft.simulate(_gd_problem(), AFACD(eta=1.0, eta_L=0.1, compressor=RandK(9)), GD, rounds=1)


def test_nonlinear_compressors_run_in_simulate(prob):
    for comp in (QSGD(2), StochasticQuantizer(2, rotate=True), ErrorFeedback(Sign())):
        tr = aft.simulate(
            prob, AFACD(eta=1.0, eta_L=0.1, compressor=comp), BEH, rounds=20, replicates=8, seed=0
        )
        assert np.all(np.isfinite(tr.grad_norm_sq)) and tr.mean()[-1] < tr.mean()[0]


def test_steady_state_with_compression_matches_long_horizon(prob):
    """steady_state (fixed point of the compressed recursion; no Lyapunov shortcut) = long-horizon moments."""
    from afltheory.exact import steady_state

    beh = Behaviour(arrivals=UniformArrivals(m=5), delays=NoDelay(), local_steps=ConstantSteps(1))
    algo = AFACD(eta=1.0, eta_L=0.2, compressor=RandK(2))
    ss = steady_state(prob, algo, beh)
    assert ss.stable and ss.method != "lyapunov"
    assert ss.grad_norm_sq == pytest.approx(moments(prob, algo, beh, 600).grad_norm_sq[-1], rel=1e-8)
    plain = steady_state(prob, AFACD(eta=1.0, eta_L=0.2), beh)
    assert ss.grad_norm_sq > 1.5 * plain.grad_norm_sq


def test_divergence_resets_the_compression_memory():
    """A run that diverges (step far too large) is reported and frozen; EF memory of diverged replicates is
    zeroed with the other state, so nothing turns into NaN."""
    p = _gd_problem()
    with pytest.warns(aft.engine.DivergenceWarning):
        tr = aft.simulate(
            p,
            AFACD(eta=1.0, eta_L=30.0, compressor=ErrorFeedback(TopK(2))),
            GD,
            rounds=60,
            replicates=3,
            seed=0,
        )
    assert tr.diverged.all() and not np.isnan(tr.grad_norm_sq).any()


def test_sweep_spec_builds_compressors(tmp_path):
    """A TOML spec names a rule's compressor as a component table (built-in names, nesting, grid axes)."""
    from afltheory.sweep.spec import build_objects, parse_spec

    text = """
rounds = 5
replicates = 2
[problem]
family = "HeterogeneousQuadratic"
dim = 8
num_workers = 5
[behaviour.arrivals]
kind = "UniformArrivals"
m = 2
[behaviour.delays]
kind = "NoDelay"
[behaviour.local_steps]
kind = "ConstantSteps"
K = 1
[algorithm]
name = "AFACD"
eta = 1.0
eta_L = 0.05
compressor = {kind = "ErrorFeedback", compressor = {kind = "TopK", k = 2}}
[grid]
"algorithm.compressor.compressor.k" = [2, 4]
"""
    spec = parse_spec(text)
    algos = [build_objects(t.config, spec)[2] for t in spec.tasks]
    assert [a.compressor for a in algos] == [ErrorFeedback(TopK(2)), ErrorFeedback(TopK(4))]
    with pytest.raises(Exception, match="k=9 exceeds"):
        parse_spec(text.replace("[2, 4]", "[9]"))
