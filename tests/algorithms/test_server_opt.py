"""Server optimizers (issue 39 item 5): applied after the base aggregate (client and arrival weights kept),
a one-round case by hand, a plain-loop equivalence, the exact engine's refusal named in the verdict."""

import numpy as np
import pytest

import afltheory as aft
from afltheory.algorithms import FedAvg
from afltheory.algorithms.base import UnsupportedRule
from afltheory.algorithms.server_opt import (
    ServerAdagrad,
    ServerAdam,
    ServerMomentum,
    ServerSGD,
    ServerYogi,
    with_server_optimizer,
)
from afltheory.anarchy import Behaviour, ConstantSteps, UniformArrivals
from afltheory.claims import Claim, verify
from afltheory.problems import HeterogeneousQuadratic


def _one_d(weights=None):
    # f_i(x) = ½ (x − c_i)², c = (1, 3): ∇f_i(x) = x − c_i
    return HeterogeneousQuadratic.from_arrays(
        hessian_diag=np.array([1.0]), centers=np.array([[1.0], [3.0]]), sigma_L=0.0, weights=weights
    )


FULL1 = Behaviour(UniformArrivals(2), local_steps=ConstantSteps(1))


def _x1(problem, rule):
    tr = aft.simulate(problem, rule, FULL1, rounds=1, replicates=1, seed=0, x0=np.zeros(1), record_x=True)
    return float(tr.x[0, 1, 0])


def test_fedadam_one_round_by_hand():
    # η = 0.5, η_L = 0.1, K = 1, x_0 = 0: G_i = ∇f_i(0) = −c_i; s = η η_L (1/2) Σ G_i = 0.05 · (−2) = −0.1;
    # g = s/η = −0.2; m = (1 − 0.9) g = −0.02; v = 0.99 τ² + 0.01 g² = 0.99e-6 + 4e-4 = 4.0099e-4;
    # x_1 = 0 − η m / (√v + τ) = 0.01 / (√4.0099e-4 + 1e-3)
    want = 0.01 / (np.sqrt(4.0099e-4) + 1e-3)
    assert _x1(_one_d(), with_server_optimizer(FedAvg(0.5, 0.1), ServerAdam())) == pytest.approx(
        want, rel=1e-12
    )
    # client weights p = (.25, .75) are kept: s = 0.05 · (1/2) Σ 2 p_i G_i = 0.05 · (−0.25 − 2.25) = −0.125;
    # g = −0.25, m = −0.025, v = 0.99e-6 + 0.01 · 0.0625 = 6.2599e-4
    want_w = 0.0125 / (np.sqrt(6.2599e-4) + 1e-3)
    rule = with_server_optimizer(FedAvg(0.5, 0.1, weights=(0.25, 0.75)), ServerAdam())
    assert _x1(_one_d((0.25, 0.75)), rule) == pytest.approx(want_w, rel=1e-12)
    # Yogi from v_{-1} = τ²: v = τ² − 0.01 g² sign(τ² − g²) = 1e-6 + 4e-4; Adagrad: v = τ² + g² = 1e-6 + 0.04
    yogi = 0.01 / (np.sqrt(1e-6 + 4e-4) + 1e-3)
    adagrad = 0.01 / (np.sqrt(1e-6 + 0.04) + 1e-3)
    assert _x1(_one_d(), with_server_optimizer(FedAvg(0.5, 0.1), ServerYogi())) == pytest.approx(
        yogi, rel=1e-12
    )
    assert _x1(_one_d(), with_server_optimizer(FedAvg(0.5, 0.1), ServerAdagrad())) == pytest.approx(
        adagrad, rel=1e-12
    )
    # momentum and SGD on one round: the base step 0.1
    assert _x1(_one_d(), with_server_optimizer(FedAvg(0.5, 0.1), ServerMomentum(0.9))) == pytest.approx(0.1)
    # ServerSGD is the identity: the rule's own run to the bit (both on the default's fast path, whose sums
    # round differently from the hand value: 1e-15 rather than ==)
    sgd = _x1(_one_d(), with_server_optimizer(FedAvg(0.5, 0.1), ServerSGD()))
    assert sgd == _x1(_one_d(), FedAvg(0.5, 0.1)) and sgd == pytest.approx(0.1, rel=1e-15)


def _plain_fedadam(problem, eta, eta_L, K, p, rounds, x0, beta1=0.9, beta2=0.99, tau=1e-3, yogi=False):
    """Reddi et al. 2021 Alg. 2, a plain loop: full participation, K local GD steps, Δ = Σ p_i (y_K − y_0)."""
    x, m, v = np.array(x0, dtype=float), 0.0, tau**2
    M = problem.num_workers
    for _ in range(rounds):
        delta = 0.0
        for i in range(M):
            y = x.copy()
            for _ in range(K):
                y = y - eta_L * problem.local_grad(y, i)
            delta = delta + p[i] * (y - x)
        m = beta1 * m + (1 - beta1) * delta
        v = v - (1 - beta2) * delta**2 * np.sign(v - delta**2) if yogi else beta2 * v + (1 - beta2) * delta**2
        x = x + eta * m / (np.sqrt(v) + tau)
    return x


@pytest.mark.parametrize("opt,yogi", [(ServerAdam(), False), (ServerYogi(), True)])
def test_plain_loop_equivalence_with_client_weights(opt, yogi):
    C = np.random.default_rng(3).normal(0, 1.0, (4, 3))
    P = (0.1, 0.2, 0.3, 0.4)
    prob = HeterogeneousQuadratic.from_arrays(
        hessian_diag=np.array([1.0, 0.5, 0.25]), centers=C, sigma_L=0.0, weights=P
    )
    beh = Behaviour(UniformArrivals(4), local_steps=ConstantSteps(3))
    rule = with_server_optimizer(FedAvg(0.3, 0.05, weights=P), opt)
    x0 = np.ones(3)
    tr = aft.simulate(prob, rule, beh, rounds=25, replicates=1, seed=0, x0=x0)
    np.testing.assert_allclose(
        tr.x_final[0], _plain_fedadam(prob, 0.3, 0.05, 3, P, 25, x0, yogi=yogi), rtol=1e-12
    )


def test_refusals_are_named():
    adam = with_server_optimizer(FedAvg(1.0, 0.1), ServerAdam())
    with pytest.raises(UnsupportedRule, match="nonlinear in the updates"):
        aft.exact.moments(_one_d(), adam, FULL1, 3)
    # heavy ball: exact.moments carries its buffer (tests/exact/test_moments_momentum.py); the backends that
    # read the rule without it (PEP, the fast evaluator) still refuse it with its reason
    mom = with_server_optimizer(FedAvg(1.0, 0.1), ServerMomentum())
    assert np.all(np.isfinite(aft.exact.moments(_one_d(), mom, FULL1, 3).loss))
    from afltheory.exact.local import server_rule

    with pytest.raises(UnsupportedRule, match="this backend .* does not"):
        server_rule(mom, 1)
    # ServerSGD is the base step: the exact engine takes it and gives the same moments
    a = aft.exact.moments(_one_d(), with_server_optimizer(FedAvg(1.0, 0.1), ServerSGD()), FULL1, 5)
    b = aft.exact.moments(_one_d(), FedAvg(1.0, 0.1), FULL1, 5)
    np.testing.assert_array_equal(a.loss, b.loss)
    claim = Claim(
        id="fedadam.toy",
        title="toy",
        bound=100.0,
        rule=lambda **kw: with_server_optimizer(FedAvg(**kw), ServerAdam()),
        eta=0.5,
        eta_L=0.1,
    )
    v = verify(claim, _one_d(), FULL1, rounds=10, replicates=2)
    assert "exact moments refused: UnsupportedRule: server optimizer ServerAdam" in v.method

    class OwnStep(FedAvg):
        def aggregate(self, state, x, G, workers, K, delays, num_workers):
            return x, state

    with pytest.raises(UnsupportedRule, match="server_optimizer: OwnStep overrides aggregate"):
        with_server_optimizer(OwnStep(1.0, 0.1), ServerAdam())
    with pytest.raises(TypeError, match="server_optimizer=.*must be"):
        with_server_optimizer(FedAvg(1.0, 0.1), "adam")
    with pytest.raises(ValueError, match="beta1"):
        ServerAdam(beta1=1.0)
