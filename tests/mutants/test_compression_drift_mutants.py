"""Mutants of the compression subsystem and of Dynamic FedAvg's drift (afltheory.mutants): nested substitution
(compressors inside server rules and inside ErrorFeedback/DIANA, a Channel built by a check), the probe, the
exact engine's refusal of a compressor whose sampling changed below its moments, and every new mutant pinned
as an equivalence with a hand-edited input or a hand-computed step. Deterministic (fixed seeds; equalities
exact or to 1e-12 relative) except the one Monte Carlo comparison, whose confidence is stated there."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from afltheory import _faults, _rng, mutants, simulate
from afltheory.algorithms import AFACD, DynamicFedAvg
from afltheory.anarchy import Behaviour, ConstantSteps, NoDelay, UniformArrivals
from afltheory.compression import DIANA, QSGD, Channel, ErrorFeedback, Identity, RandK, TopK
from afltheory.compression.analysis import compressed_gd_reference
from afltheory.exact import drift as dr
from afltheory.exact import exact_distance_sq, moments, steady_state, zscores
from afltheory.exact.law import ExactUnavailable
from afltheory.mutants import algorithms as MA
from afltheory.problems import DriftingQuadratic, HeterogeneousQuadratic

NEW = [
    "randk.no_rescale",
    "qsgd.max_norm",
    "channel.shared_stream",
    "ef.memory_unused",
    "diana.shift_frozen",
    "diana.shift_sign",
    "sim.drift_after",
    "sim.drift_sigma_q",
    "exact.drift_after",
    "exact.drift_sigma_q",
]


def _gd(n):
    return Behaviour(UniformArrivals(n), delays=NoDelay(), local_steps=ConstantSteps(1))


def _het(M=4, d=8):
    return HeterogeneousQuadratic(
        dim=d, num_workers=M, L=1.0, mu=0.2, sigma_L=0.0, sigma_G=1.0 if M > 1 else 0.0, seed=0
    )


def _quiet_sim(*a, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return simulate(*a, **kw)


# ------------------------------------------------------------------------------------------ the mechanism
def test_new_mutants_are_catalogued_with_their_engines():
    cat = mutants.CATALOGUE
    assert set(NEW) <= set(cat) and len(cat) >= 37
    eng = {n: cat[n].engines for n in NEW}
    assert eng["randk.no_rescale"] == ("exact", "simulate")  # a declarative hook both paths read
    assert eng["exact.drift_after"] == eng["exact.drift_sigma_q"] == ("exact",)
    assert all(
        eng[n] == ("simulate",)
        for n in NEW
        if n not in ("randk.no_rescale", "exact.drift_after", "exact.drift_sigma_q")
    )
    # components the exact engine never runs (EF, DIANA, QSGD) are not an exact→MC switch like the controls'
    assert not any(cat[n].refused_by_exact for n in NEW)
    assert mutants.CONTROLS["control.afacd_subclass"].refused_by_exact
    assert cat["afacd.one_arrival"].refused_by_exact and not cat["afacd.eta_missing"].refused_by_exact


def test_substitution_reaches_nested_components_and_keeps_their_fields():
    a = AFACD(2.0, 0.3, compressor=DIANA(RandK(3), 0.25))
    with mutants.injected("randk.no_rescale"):
        b = _faults.substitute(a)
        assert _faults.substitute(b) == b  # idempotent
    assert type(b) is AFACD and (b.eta, b.eta_L) == (2.0, 0.3)
    assert type(b.compressor) is DIANA and b.compressor.alpha == 0.25
    assert type(b.compressor.compressor) is MA.RandKNoRescale and b.compressor.compressor.k == 3
    with mutants.injected("diana.shift_frozen"):
        c = _faults.substitute(a)
        assert type(c.compressor) is MA.DIANAShiftFrozen and type(c.compressor.compressor) is RandK
        e = AFACD(1.0, 0.1, compressor=ErrorFeedback(TopK(2)))
        assert _faults.substitute(e) is e  # nothing to replace: the same object
    with mutants.injected("ef.memory_unused"):
        f = _faults.substitute(e)
    assert type(f.compressor) is MA.ErrorFeedbackUnused and f.compressor.compressor == TopK(2)


def test_a_channel_built_by_a_check_is_substituted_and_probed():
    with mutants.injected("randk.no_rescale"):
        ch = Channel(RandK(2), 8, 3, 5, 0)
    assert type(ch.comp) is MA.RandKNoRescale
    with mutants.probe() as seen:
        Channel(DIANA(RandK(2)), 8, 3, 5, 0)
    assert {DIANA, RandK, "channel.rng"} <= seen
    assert mutants.get("randk.no_rescale").exercised_by(seen)
    assert mutants.get("diana.shift_sign").exercised_by(seen)
    assert not mutants.get("ef.memory_unused").exercised_by(seen)


def test_probe_records_nested_types_and_drift_points_only_where_reached():
    p = _het()
    with mutants.probe() as seen:
        simulate(p, AFACD(1.0, 0.1, compressor=ErrorFeedback(TopK(2))), _gd(4), rounds=2, replicates=1)
    assert {ErrorFeedback, TopK} <= seen and "sim.drift_order" not in seen
    assert mutants.get("ef.memory_unused").exercised_by(seen)
    assert not mutants.get("qsgd.max_norm").exercised_by(seen)
    assert not mutants.get("sim.drift_after").exercised_by(seen)
    dq = DriftingQuadratic(dim=3, num_workers=4, sigma_q=0.1)
    with mutants.probe() as seen:
        simulate(dq, DynamicFedAvg(mu=0.1), DynamicFedAvg.participation(2), rounds=2, replicates=1)
        steady_state(dq, DynamicFedAvg(mu=0.1), DynamicFedAvg.participation(2))
    assert {"sim.drift_order", "sim.drift_cov", "exact.drift_order", "exact.drift_cov"} <= seen


class _RandKResampled(RandK):
    """A compressor overriding only its sampling code (inherits RandK's moment_map)."""

    def _compress(self, x, rng):
        return super()._compress(x, rng)


def test_exact_engine_refuses_a_compressor_whose_sampling_changed_below_its_moments():
    p = _het(M=1)
    with pytest.raises(TypeError, match="moment_map"):
        moments(p, AFACD(1.0, 0.1, compressor=_RandKResampled(2)), _gd(1), 3)
    # simulate runs it (it is a compressor); the library's own compressors are not refused
    simulate(p, AFACD(1.0, 0.1, compressor=_RandKResampled(2)), _gd(1), rounds=2, replicates=1)
    moments(p, AFACD(1.0, 0.1, compressor=RandK(2)), _gd(1), 3)


# ------------------------------------------------------------------------------------- compressor mutants
def test_randk_no_rescale_is_randk_times_k_over_d():
    """Same index draws: C_mut(x) = (k/d)·C(x); E M = (k/d) I; moment map scaled by (k/d)²."""
    x = np.arange(1.0, 9.0)[None].repeat(4, axis=0)
    y = RandK(2).compress(x, np.random.default_rng(1))[0]
    ym = MA.RandKNoRescale(2).compress(x, np.random.default_rng(1))[0]
    np.testing.assert_array_equal(ym, y * 2 / 8)
    assert set(np.unique(ym[ym != 0])) <= set(x[0])  # kept coordinates unscaled
    assert MA.RandKNoRescale(2).mean_gain(8) == 0.25 and RandK(2).mean_gain(8) == 1.0
    X = np.random.default_rng(2).standard_normal((8, 8))
    np.testing.assert_allclose(MA.RandKNoRescale(2).moment_map(X), RandK(2).moment_map(X) / 16, rtol=1e-12)


def test_randk_no_rescale_exact_equals_the_plain_recursion_with_scale_k_over_d():
    """The exact engine represents the mutant as what it is: single-node compressed GD with s = k/d, the
    plain recursion of compression.gd_rate's control (to 1e-12 relative)."""
    p = HeterogeneousQuadratic(dim=8, num_workers=1, L=1.0, mu=0.1, sigma_L=0.0, sigma_G=0.0, seed=1)
    H = p.linear_gaussian().hessians[0]
    x0 = p.constants.x_star + np.linspace(-1.0, 1.0, 8)
    g = 0.2
    with mutants.injected("randk.no_rescale"):
        ex = exact_distance_sq(p, AFACD(eta=1.0, eta_L=g, compressor=RandK(2)), _gd(1), 30, x0)
    ref = compressed_gd_reference(H, x0 - p.constants.x_star, g, RandK(2), 30, scale=2 / 8)
    np.testing.assert_allclose(ex, ref, rtol=1e-12)
    ok = exact_distance_sq(p, AFACD(eta=1.0, eta_L=g, compressor=RandK(2)), _gd(1), 30, x0)
    assert not np.allclose(ok[1:], ex[1:])


def test_randk_no_rescale_exact_agrees_with_monte_carlo():
    """Exact moments of the mutant vs simulate of the mutant (AFA-CD, 3 of 4 arrivals, σ_L > 0): |z| < 5 at
    every round (4000 replicates, seed 3: a false alarm over 6 rounds has probability < 1e-5)."""
    p = HeterogeneousQuadratic(dim=6, num_workers=4, L=1.0, mu=0.2, sigma_L=0.5, sigma_G=1.0, seed=0)
    beh = Behaviour(UniformArrivals(3), delays=NoDelay(), local_steps=ConstantSteps(2))
    alg = AFACD(1.0, 0.2, compressor=RandK(2))
    with mutants.injected("randk.no_rescale"):
        ex = moments(p, alg, beh, 5)
        tr = _quiet_sim(p, alg, beh, rounds=5, replicates=4000, seed=3)
    assert np.all(np.abs(zscores(tr, ex)[1:]) < 5)
    assert not np.allclose(moments(p, alg, beh, 5).grad_norm_sq[1:], ex.grad_norm_sq[1:])


def test_qsgd_max_norm_hand_computed():
    """x = (3, −4), s = 2: ‖x‖_∞ = 4, so s|x|/4 = (1.5, 2): the second coordinate is exactly −4, the first
    2 or 4 (with ‖x‖₂ = 5 the correct QSGD sends multiples of 2.5)."""
    x = np.array([[3.0, -4.0]]).repeat(200, axis=0)
    y = MA.QSGDMaxNorm(2).compress(x, np.random.default_rng(0))[0]
    assert np.all(y[:, 1] == -4.0) and set(np.unique(y[:, 0])) == {2.0, 4.0}
    c = QSGD(2).compress(x, np.random.default_rng(0))[0]
    assert set(np.unique(np.abs(c))) <= {2.5, 5.0}
    assert mutants.get("qsgd.max_norm").engines == ("simulate",)
    with pytest.raises(ExactUnavailable):  # the exact engine never runs QSGD, mutated or not
        moments(_het(M=1), AFACD(1.0, 0.1, compressor=MA.QSGDMaxNorm(2)), _gd(1), 2)


def test_shared_stream_gives_every_arrival_the_same_pattern():
    """Under the fault, the n arrivals of a replicate get the same rand-k support (the correct channel draws
    one per arrival); replicates still differ. Equivalent to compressing each arrival with the generator
    restarted at the block's state."""
    n, d, R = 5, 8, 3
    G = np.arange(1.0, 1.0 + n * d).reshape(n, d)[None].repeat(R, axis=0)
    W = np.broadcast_to(np.arange(n), (R, n))
    with mutants.injected("channel.shared_stream"):
        ch = Channel(RandK(2), d, n, R, 7)
        out, bits, _ = ch.send(ch.init(), G.copy(), W, 1)
    support = out != 0
    assert all(np.array_equal(support[:, i], support[:, 0]) for i in range(n))
    assert not np.array_equal(support[0, 0], support[1, 0])
    ch = Channel(RandK(2), d, n, R, 7)
    ok, bits_ok, _ = ch.send(ch.init(), G.copy(), W, 1)
    assert not all(np.array_equal(ok[:, i] != 0, ok[:, 0] != 0) for i in range(n))
    np.testing.assert_array_equal(bits, bits_ok)
    # hand-edited reference: each arrival compressed from the same restarted block generator
    gen = Channel(RandK(2), d, n, R, 7).streams.at(_rng.COMPRESS, 1)[0]
    state = gen.bit_generator.state
    pad = np.zeros((_rng.BLOCK, n, d))
    pad[:R] = G
    for i in range(n):
        gen.bit_generator.state = state
        np.testing.assert_array_equal(out[:, i], RandK(2).compress(pad[:, i], gen)[0][:R])


# ------------------------------------------------------------------------------------------ EF and DIANA
def test_ef_memory_unused_equals_plain_compression():
    """TopK is deterministic: error feedback that never feeds its error back is exactly plain top-k."""
    p = _het()
    ef = AFACD(1.0, 0.3, compressor=ErrorFeedback(TopK(2)))
    plain = _quiet_sim(p, AFACD(1.0, 0.3, compressor=TopK(2)), _gd(4), rounds=20, replicates=2, seed=1)
    with mutants.injected("ef.memory_unused"):
        mut = _quiet_sim(p, ef, _gd(4), rounds=20, replicates=2, seed=1)
    np.testing.assert_array_equal(mut.grad_norm_sq, plain.grad_norm_sq)
    assert not np.array_equal(
        _quiet_sim(p, ef, _gd(4), rounds=20, replicates=2, seed=1).grad_norm_sq, plain.grad_norm_sq
    )


def test_diana_shift_frozen_equals_alpha_zero():
    p = _het()
    alg = AFACD(1.0, 0.3, compressor=DIANA(RandK(2)))
    zero = _quiet_sim(
        p, AFACD(1.0, 0.3, compressor=DIANA(RandK(2), 0.0)), _gd(4), rounds=20, replicates=2, seed=1
    )
    with mutants.injected("diana.shift_frozen"):
        mut = _quiet_sim(p, alg, _gd(4), rounds=20, replicates=2, seed=1)
    np.testing.assert_array_equal(mut.grad_norm_sq, zero.grad_norm_sq)


def test_diana_shift_sign_hand_computed():
    """Identity compressor, α = 0.5: after sending G₁ the shift is h = −0.5 G₁ (correct: +0.5 G₁); the second
    message decodes to G₂ either way (Δ = G₂ − h, ĝ = h + Δ)."""
    G1, G2 = np.array([[[1.0, -2.0]]]), np.array([[[3.0, 0.5]]])
    W = np.array([[0]])
    for name, sign in ((None, 1.0), ("diana.shift_sign", -1.0)):
        if name is None:
            ch = Channel(DIANA(Identity(), 0.5), 2, 1, 1, 0)
        else:
            with mutants.injected(name):
                ch = Channel(DIANA(Identity(), 0.5), 2, 1, 1, 0)
        out, _, s = ch.send(ch.init(), G1, W, 1)
        np.testing.assert_array_equal(out, G1)
        np.testing.assert_array_equal(s.memory[0, 0], sign * 0.5 * G1[0, 0])
        out, _, s = ch.send(s, G2, W, 2)
        np.testing.assert_allclose(out, G2, rtol=1e-15)
        h1 = sign * 0.5 * G1[0, 0]
        np.testing.assert_allclose(s.memory[0, 0], h1 + sign * 0.5 * (G2[0, 0] - h1), rtol=1e-15)


# ------------------------------------------------------------------------------------------ drift mutants
def _drift_loop(dq, gamma, rounds, seed, lag):
    """Plain loop: full participation, exact gradients, one local step; the round updates on the objective
    with optimum w°_{t+1−lag} and the error is measured against w°_{t+1} (lag 1: drift after the update)."""
    w = dq.walk(_rng.stream(seed, _rng.DRIFT, 0), rounds)
    xs = dq.base.constants.x_star
    x = dq.base.default_x0().astype(float)
    out = [float(np.sum((x - xs - w[0]) ** 2))]
    for t in range(rounds):
        x = x - gamma * dq.base.grad(x - w[t + 1 - lag])
        out.append(float(np.sum((x - xs - w[t + 1]) ** 2)))
    return np.array(out)


def test_sim_drift_after_equals_a_plain_loop_with_the_update_first():
    dq = DriftingQuadratic(dim=3, num_workers=4, sigma_L=0.0, sigma_G=1.0, sigma_q=0.3, seed=2)
    alg, beh = AFACD(1.0, 0.4), _gd(4)
    ok = simulate(dq, alg, beh, rounds=12, replicates=1, seed=5).tracking_error[0]
    np.testing.assert_allclose(ok, _drift_loop(dq, 0.4, 12, 5, lag=0), rtol=1e-12)
    with mutants.injected("sim.drift_after"):
        mut = simulate(dq, alg, beh, rounds=12, replicates=1, seed=5).tracking_error[0]
    np.testing.assert_allclose(mut, _drift_loop(dq, 0.4, 12, 5, lag=1), rtol=1e-12)
    assert not np.allclose(mut[1:], ok[1:])


def test_sim_drift_sigma_q_equals_the_problem_with_sigma_q_sqrt():
    """Cov q = Q/σ_q: for isotropic drift that is the problem with σ_q' = √σ_q (same raw draws)."""
    kw = dict(dim=3, num_workers=4, sigma_L=0.3, sigma_G=1.0, seed=2)
    alg, beh = DynamicFedAvg(mu=0.2), DynamicFedAvg.participation(2)
    ref = simulate(DriftingQuadratic(sigma_q=np.sqrt(0.04), **kw), alg, beh, rounds=10, replicates=2, seed=3)
    with mutants.injected("sim.drift_sigma_q"):
        mut = simulate(DriftingQuadratic(sigma_q=0.04, **kw), alg, beh, rounds=10, replicates=2, seed=3)
        np.testing.assert_array_equal(  # the exact engine is untouched
            steady_state(DriftingQuadratic(sigma_q=0.04, **kw), alg, beh).msd,
            steady_state(DriftingQuadratic(sigma_q=0.04, **kw), alg, beh).msd,
        )
    np.testing.assert_allclose(mut.tracking_error, ref.tracking_error, rtol=1e-12)


def test_exact_drift_after_equals_the_stein_drift_after_variant():
    """Both exact solvers under the fault equal the Stein solver's documented drift-after variant."""
    dq = DriftingQuadratic(dim=3, num_workers=5, sigma_L=0.3, sigma_G=1.0, sigma_q=0.2, seed=1)
    alg, L = DynamicFedAvg(mu=0.2), 2
    after = dr.stein_steady_state(dq, alg, L, drift_after=True).msd
    first = dr.stein_steady_state(dq, alg, L).msd
    with mutants.injected("exact.drift_after"):
        gen = steady_state(dq, alg, DynamicFedAvg.participation(L)).msd
        st = dr.stein_steady_state(dq, alg, L).msd
        mc = simulate(dq, alg, DynamicFedAvg.participation(L), rounds=3, replicates=2, seed=0)
    assert gen == pytest.approx(after, rel=1e-9) and st == pytest.approx(after, rel=1e-12)
    assert abs(after / first - 1) > 0.01
    np.testing.assert_array_equal(
        mc.tracking_error,
        simulate(dq, alg, DynamicFedAvg.participation(L), rounds=3, replicates=2, seed=0).tracking_error,
    )


def test_exact_drift_sigma_q_equals_the_problem_with_sigma_q_sqrt():
    kw = dict(dim=3, num_workers=5, sigma_L=0.3, sigma_G=1.0, seed=1)
    alg, beh = DynamicFedAvg(mu=0.2), DynamicFedAvg.participation(2)
    ref = DriftingQuadratic(sigma_q=np.sqrt(0.04), **kw)
    with mutants.injected("exact.drift_sigma_q"):
        p = DriftingQuadratic(sigma_q=0.04, **kw)
        m = moments(p, alg, beh, 6).msd
        st = dr.stein_steady_state(p, alg, 2).msd
    np.testing.assert_allclose(m, moments(ref, alg, beh, 6).msd, rtol=1e-12)
    assert st == pytest.approx(dr.stein_steady_state(ref, alg, 2).msd, rel=1e-12)
    # the theory (first-order law) is not an engine: it keeps the true Q
    with mutants.injected("exact.drift_sigma_q"):
        tq = dr.first_order(DriftingQuadratic(sigma_q=0.04, **kw), alg, 2)["tr_q"]
    assert tq == dr.first_order(DriftingQuadratic(sigma_q=0.04, **kw), alg, 2)["tr_q"]


def test_torch_backend_runs_the_mutated_compressor():
    """The torch backend builds its Channel from the substituted rule: under ``randk.no_rescale`` it runs the
    mutant compressor (bit-identical to passing the mutant directly), never rand-k itself."""
    torch = pytest.importorskip("torch")
    from afltheory.torch_backend import TorchTask, run

    rng = np.random.default_rng(0)
    task = TorchTask(
        torch.nn.Linear(2, 2),
        [rng.normal(size=(4, 2)) for _ in range(2)],
        [rng.integers(0, 2, 4) for _ in range(2)],
        dtype=torch.float64,
    )
    beh = Behaviour(UniformArrivals(2))
    x0 = task.initial_params().numpy().copy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ok = run(task, AFACD(2.0, 0.1, compressor=RandK(2)), beh, rounds=3, x0=x0).x_final
        mut = run(task, AFACD(2.0, 0.1, compressor=MA.RandKNoRescale(2)), beh, rounds=3, x0=x0).x_final
        with mutants.injected("randk.no_rescale"):
            inj = run(task, AFACD(2.0, 0.1, compressor=RandK(2)), beh, rounds=3, x0=x0).x_final
    assert not np.allclose(ok, mut)
    np.testing.assert_array_equal(mut, inj)
