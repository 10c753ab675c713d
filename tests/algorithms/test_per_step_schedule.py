"""Step sizes decaying per local step (Li et al. 2020 at E > 1: η_s with s = tE + k the global local-step
counter) in every engine: simulate's step and collapsed paths, exact.moments (and the torch backend in
tests/real/test_torch_backend.py style, skipped without torch).

Hand-derived case: f(x) = ½x² (one worker, d = 1, c = 0), η_s = 1/(s + 2). One local step multiplies
e = x − 0 by 1 − η_s = (s + 1)/(s + 2), so after n = tE steps the product telescopes: x_n = x_0/(n + 1). With
additive noise ξ_s ~ N(0, σ²): Var x_n = Σ_{j<n} η_j² Π_{l>j} (1 − η_l)² = Σ_j (1/(j+2))² ((j+2)/(n+1))²
= n/(n+1)², so E‖∇f(x_t)‖² = E x_n² = (x_0² + σ² n)/(n+1)². With FedAvg (η = 1, one worker) the server
model after round t is the worker's last local iterate, whatever E.
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

from afltheory import simulate
from afltheory.algorithms import FedAvg
from afltheory.algorithms.base import UnsupportedRule
from afltheory.algorithms.schedules import StepSize, s, t
from afltheory.anarchy import Behaviour, ConstantSteps, UniformArrivals
from afltheory.anarchy.local_steps import UniformSteps
from afltheory.exact import moments
from afltheory.problems import HeterogeneousQuadratic

X0 = np.array([3.0])


def _one_d(sigma):
    return HeterogeneousQuadratic.from_arrays(
        hessian_diag=np.ones(1), centers=np.zeros((1, 1)), sigma_L=sigma
    )


def _beh(E, workers=1):
    return Behaviour(UniformArrivals(workers), local_steps=ConstantSteps(E))


def _rule():
    return FedAvg(eta=1, eta_L=StepSize(1 / (s + 2)))


def test_declared_per_step():
    r = _rule()
    assert r.eta_L.per == "step" and r.per_local_step
    assert StepSize(1 / (t + 2), per="step").per_step  # t read as the local-step counter
    assert not FedAvg(eta=1, eta_L=StepSize(1 / (t + 2))).per_local_step
    assert r.at_round(1, local_steps=2).local_step_sequence == (1 / 4, 1 / 5)
    assert r.at_round(1, local_steps=2).eta_L == pytest.approx((1 / 4 + 1 / 5) / 2)
    assert r.at_round(3, local_steps=1).local_step_sequence is None  # E = 1: the per-round rule
    assert r.at_round(3, local_steps=1).eta_L == 1 / 5


def test_refusals_name_the_parameter():
    with pytest.raises(UnsupportedRule, match="decays per local step"):
        _rule().at_round(0)  # a backend that runs one step per round cannot read it as per round
    with pytest.raises(ValueError, match="eta=.*server step size is per round"):
        FedAvg(eta=StepSize(1 / (s + 1)), eta_L=0.1)
    with pytest.raises(ValueError, match="both t .* and s"):
        StepSize(1 / (s + t + 1))
    with pytest.raises(ValueError, match="per='round'"):
        StepSize(1 / (s + 1), per="round")
    with pytest.raises(ValueError, match="per="):
        StepSize(0.1, per="iteration")
    with pytest.raises(ValueError, match="local step s=3"):
        StepSize(1 / (3 - s)).at(3)
    vary = Behaviour(UniformArrivals(1), local_steps=UniformSteps(1, 3))
    with pytest.raises(ValueError, match="same number of local steps E"):
        simulate(_one_d(0.0), _rule(), vary, rounds=3)
    with pytest.raises(ValueError, match="local_steps"):
        moments(_one_d(0.0), _rule(), vary, rounds=3, x0=X0)


@pytest.mark.parametrize("E", [1, 2, 5])
@pytest.mark.parametrize("collapse", [False, None])
def test_simulate_noiseless_pinned(E, collapse):
    """x_t = x_0/(tE + 1) exactly (hand-derived above); both paths."""
    tr = simulate(_one_d(0.0), _rule(), _beh(E), rounds=4, x0=X0, collapse=collapse)
    assert tr.config["collapsed"] is (collapse is None)
    want = [9.0 / (r * E + 1) ** 2 for r in range(5)]
    np.testing.assert_allclose(tr.grad_norm_sq[0], want, rtol=1e-13)
    if E == 2:  # pinned: 9, 1, 9/25, 9/49, 1/9
        np.testing.assert_allclose(tr.grad_norm_sq[0], [9, 1, 0.36, 9 / 49, 1 / 9], rtol=1e-13)


def test_per_round_differs():
    """The same expression per round (η_t = 1/(t + 2) for all E steps of round t) is another algorithm: at
    E = 2, x_1 = 3 (1/2)² = 0.75, not 3/3."""
    tr = simulate(_one_d(0.0), FedAvg(eta=1, eta_L=StepSize(1 / (t + 2))), _beh(2), rounds=1, x0=X0)
    assert tr.grad_norm_sq[0, 1] == pytest.approx(0.75**2)


@pytest.mark.parametrize("E", [1, 2, 5])
def test_exact_pinned(E):
    """E x_n² = (x_0² + σ² n)/(n+1)², n = tE (hand-derived above), σ = 1."""
    ex = moments(_one_d(1.0), _rule(), _beh(E), rounds=4, x0=X0)
    n = np.arange(5) * E
    np.testing.assert_allclose(ex.grad_norm_sq, (9.0 + n) / (n + 1.0) ** 2, rtol=1e-12)


def _plain_loop(H, c, sigma, etas_of_round, E, rounds, x0, rng, R):
    """Plain-numpy FedAvg: every worker runs E local SGD steps with sizes etas_of_round(t), the server
    averages the workers' last iterates (full participation, uniform weights)."""
    M, d = c.shape
    x = np.broadcast_to(x0, (R, d)).copy()
    out = [np.sum((((x[:, None, :] - c) * H).mean(axis=1)) ** 2, axis=1)]
    for r in range(rounds):
        y = np.repeat(x[:, None, :], M, axis=1)
        for eta in etas_of_round(r):
            y = y - eta * (H * (y - c) + sigma / np.sqrt(d) * rng.standard_normal(y.shape))
        x = y.mean(axis=1)
        out.append(np.sum((((x[:, None, :] - c) * H).mean(axis=1)) ** 2, axis=1))
    return np.array(out).T


@pytest.mark.parametrize("E", [2, 5])
def test_engines_agree_with_plain_loop(E):
    """Three workers, d = 2, H = diag(1, 2), Li's schedule η_s = 2/(μ(γ + s)) with μ = 1, γ = 8: noiseless,
    simulate (both paths) equals the plain loop to 1e-12; with noise, exact moments lie within 4 standard
    errors of the plain loop's Monte Carlo mean (R = 4000, seed 3: a false alarm has probability < 1e-4 per
    point) and of simulate's (seed 5)."""
    H = np.array([1.0, 2.0])  # the shared diagonal Hessian
    c = np.array([[0.3, -0.2], [-0.1, 0.4], [0.2, 0.1]])
    rule = FedAvg(eta=1, eta_L=StepSize(2 / (8 + s)))
    etas = lambda r: [2 / (8 + r * E + k) for k in range(E)]  # noqa: E731
    x0 = np.array([1.0, -1.0])
    for sigma in (0.0, 1.0):
        p = HeterogeneousQuadratic.from_arrays(hessian_diag=H, centers=c, sigma_L=sigma)
        if sigma == 0.0:
            ref = _plain_loop(H, c, 0.0, etas, E, 6, x0, np.random.default_rng(0), 1)[0]
            for col in (False, None):
                tr = simulate(p, rule, _beh(E, 3), rounds=6, x0=x0, collapse=col)
                np.testing.assert_allclose(tr.grad_norm_sq[0], ref, rtol=1e-12)
            continue
        ex = moments(p, rule, _beh(E, 3), rounds=6, x0=x0).grad_norm_sq
        R = 4000
        ref = _plain_loop(H, c, sigma, etas, E, 6, x0, np.random.default_rng(3), R)
        se = ref.std(axis=0) / np.sqrt(R)
        assert np.all(np.abs(ref.mean(axis=0) - ex)[1:] <= 4 * se[1:])
        for col in (False, None):
            tr = simulate(p, rule, _beh(E, 3), rounds=6, x0=x0, collapse=col, replicates=R, seed=5)
            g = tr.grad_norm_sq
            assert np.all(np.abs(g.mean(axis=0) - ex)[1:] <= 4 * (g.std(axis=0) / np.sqrt(R))[1:])


def test_li_schedule_pinned_first_round():
    """Li's η_s = 2/(μ(γ + s)) at μ = 1/2, γ = 8 as a Claim would give it (values substituted): round 1 of
    E = 2 runs η_2 = 4/10 and η_3 = 4/11; its mean step is the rule's eta_L."""
    mu, gamma = sp.Symbol("mu", positive=True), sp.Symbol("gamma", positive=True)
    step = StepSize(2 / (mu * (gamma + s)), values={"mu": 0.5, "gamma": 8})
    r1 = FedAvg(eta=1, eta_L=step).at_round(1, local_steps=2)
    assert r1.local_step_sequence == pytest.approx((0.4, 4 / 11))
    assert r1.eta_L == pytest.approx((0.4 + 4 / 11) / 2)


def test_torch_backend_matches_simulate():
    """The torch backend runs the same per-step sizes: FedAvg with η_s = 0.2/(1 + s/4) at E = 3 on the
    digits logistic regression (full batch, float64) matches simulate's model to 1e-6 on a replayed
    schedule, and differs from the per-round reading of the same expression."""
    torch = pytest.importorskip("torch", reason="the torch backend needs PyTorch")
    import afltheory as aft
    from afltheory.anarchy import Replay
    from afltheory.datasets import load_digits_federated
    from afltheory.torch_backend import LogisticRegressionModel, TorchTask, run

    ds = load_digits_federated(classes_per_worker=2, samples_per_worker=30, seed=1)
    prob = aft.problems.LogisticRegression.from_dataset(ds, l2=0.01)
    task = TorchTask.from_dataset(
        LogisticRegressionModel(64, 10), ds, dtype=torch.float64, device="cpu", l2=0.01
    )
    sched = Behaviour(UniformArrivals(10), local_steps=ConstantSteps(3)).sample(6, 1, 10, seed=2)
    rule = FedAvg(eta=1.0, eta_L=StepSize(0.2 / (1 + s / 4)))
    np_tr = simulate(prob, rule, Replay(sched), rounds=6, record_x=True)
    t_tr = run(task, rule, sched, rounds=6, record_x=True)
    assert np.abs(np_tr.x - t_tr.x).max() < 1e-6
    per_round = FedAvg(eta=1.0, eta_L=StepSize(0.2 / (1 + t / 4)))
    assert np.abs(run(task, per_round, sched, rounds=6, record_x=True).x - t_tr.x).max() > 1e-3


def test_step_sequence_laws_reduce_to_the_constant_ones():
    """Equal steps: the collapsed runner's product law equals ``local_sgd_k_step_law`` and the exact
    engine's ``local_maps_sequence`` equals ``local_maps`` (to rounding); unequal steps differ from the
    constant law at their mean step (a check that can fail)."""
    from afltheory.engine import _step_sequence_law
    from afltheory.exact.local import local_maps, local_maps_sequence
    from afltheory.problems.quadratic import local_sgd_k_step_law

    eig = np.array([[0.5, 1.0, 2.0]])
    d0, n0 = local_sgd_k_step_law(eig, 0.2, 4, 1.5, 3)
    d1, n1 = _step_sequence_law(eig, (0.2,) * 4, 4, 1.5, 3)
    np.testing.assert_allclose(d1, d0, rtol=1e-12)
    np.testing.assert_allclose(n1, n0, rtol=1e-12)
    d2, _ = _step_sequence_law(eig, (0.3, 0.2, 0.1, 0.2), 4, 1.5, 3)
    assert np.max(np.abs(d2 - d0)) > 1e-3
    H = np.diag([0.5, 1.0, 2.0]) + 0.1
    b = np.array([0.3, -0.2, 0.1])
    Sig = np.diag([1.0, 0.5, 0.25])
    a, c = local_maps(H, b, Sig, 0.2, 0.1, {4})[4], local_maps_sequence(H, b, Sig, (0.2,) * 4, 0.1)[4]
    for x, y in ((a.C, c.C), (a.c, c.c), (a.Q, c.Q)):
        np.testing.assert_allclose(y, x, rtol=1e-12, atol=1e-15)
