"""Generated mutants of a rule given as a factory with a server optimizer (``server_opt.optimized``): the base
class's rule-view mutants run through the factory (the optimizer kept) and the optimizer's own mutants
(afltheory.mutants.generated, issue 45). One-round values by hand on f_i(x) = ½ (x − c_i)², c = (1, 3),
η = 0.5, η_L = 0.1, K = 1, x_0 = 0 (tests/algorithms/test_server_opt.py's case): g = s/η = −0.2."""

import numpy as np
import pytest

import afltheory as aft
from afltheory.algorithms import FedAvg
from afltheory.algorithms.server_opt import ServerAdam, ServerMomentum, ServerSGD, optimized
from afltheory.anarchy import Behaviour, ConstantSteps, UniformArrivals
from afltheory.claims import Assumptions, Claim
from afltheory.mutants import generated
from afltheory.problems import HeterogeneousQuadratic

FULL1 = Behaviour(UniformArrivals(2), local_steps=ConstantSteps(1))
ONE_D = HeterogeneousQuadratic.from_arrays(hessian_diag=np.array([1.0]), centers=np.array([[1.0], [3.0]]))


def _claim(optimizer, cid="opt.toy"):
    return Claim(
        id=cid,
        title="toy",
        bound=100.0,
        rule=optimized(FedAvg, optimizer),
        eta=0.5,
        eta_L=0.1,
        assumptions=Assumptions(participation="full", max_local_steps=1),
    )


def _by_tag(claim):
    pre = f"gen.{claim.id}."
    return {m.name[len(pre) :]: m for m in generated.generate(claim)}


def _rule(mutant, claim):
    return mutant.claim_edit(claim).rule(eta=0.5, eta_L=0.1)


def _x(rule, rounds=1):
    tr = aft.simulate(ONE_D, rule, FULL1, rounds=rounds, replicates=1, seed=0, x0=np.zeros(1), record_x=True)
    return tr.x[0, 1:, 0]


def test_factory_names_its_parts():
    opt = ServerAdam(beta1=0.0, tau=2.0)
    f = optimized(FedAvg, opt)
    assert f.rule_class is FedAvg and f.optimizer is opt
    assert f(eta=0.5, eta_L=0.1).server_optimizer is opt


def test_adam_factory_tags_and_kinds():
    claim = _claim(ServerAdam())
    gen = _by_tag(claim)
    rule_view = ["step.squared", "normalizer.off_by_one", "step.eta_dropped", "k_weight.off_by_one"]
    opt = ["opt.dropped", "opt.state_reset", "opt.v_not_squared", "opt.tau_in_sqrt", "opt.betas_swapped"]
    assert [t for t in gen if not t.startswith("bound.")] == rule_view + opt
    assert {gen[t].category for t in rule_view + opt} == {"generated rule"}
    assert all(gen[t].kind == "claim" and gen[t].claim_id == claim.id for t in rule_view + opt)  # claim edits
    # a view mutant keeps the optimizer; "dropped" is the plain base rule
    sq = _rule(gen["step.squared"], claim)
    assert isinstance(sq, FedAvg) and type(sq) is not FedAvg and sq.server_optimizer == ServerAdam()
    assert sq.step_size == pytest.approx(0.0025)  # (0.5 · 0.1)²
    dropped = _rule(gen["opt.dropped"], claim)
    assert type(dropped) is FedAvg and dropped.server_optimizer is None
    assert claim.rule(eta=0.5, eta_L=0.1).server_optimizer == ServerAdam()  # the claim itself untouched


def test_optimizer_mutants_by_hand():
    claim = _claim(ServerAdam())  # β1 = 0.9, β2 = 0.99, τ = 1e-3
    gen, tau, g = _by_tag(claim), 1e-3, -0.2
    correct = 0.01 / (np.sqrt(0.99 * tau**2 + 0.01 * g**2) + tau)  # m = 0.1 g = −0.02
    assert _x(claim.rule(eta=0.5, eta_L=0.1))[0] == pytest.approx(correct, rel=1e-12)
    want = {
        "opt.dropped": 0.1,  # x − s, s = η η_L (1/2) Σ ∇f_i(0) = −0.1
        "opt.v_not_squared": 0.01 / (np.sqrt(0.99 * tau**2 + 0.01 * abs(g)) + tau),
        "opt.tau_in_sqrt": 0.01 / np.sqrt(0.99 * tau**2 + 0.01 * g**2 + tau),
        "opt.betas_swapped": 0.001 / (np.sqrt(0.9 * tau**2 + 0.1 * g**2) + tau),  # m = 0.01 g, v with 0.9
        "opt.state_reset": correct,  # the first round starts from the reset state anyway
    }
    for tag, x1 in want.items():
        assert _x(_rule(gen[tag], claim))[0] == pytest.approx(x1, rel=1e-12), tag
    # every optimizer mutant changes the run (state reset from the second round on)
    ok = _x(claim.rule(eta=0.5, eta_L=0.1), rounds=5)
    for tag in want:
        assert not np.allclose(_x(_rule(gen[tag], claim), rounds=5), ok, rtol=1e-6), tag


def test_heavy_ball_and_identity():
    gen = _by_tag(_claim(ServerMomentum(0.9), "hb.toy"))
    assert [t for t in gen if t.startswith("opt.")] == ["opt.dropped", "opt.damped"]  # reset = dropped
    claim = _claim(ServerMomentum(0.9), "hb.toy")
    # two rounds of GD on the mean: s_0 = −0.1; x_1 = 0.1, ∇ = x − 2: s_1 = 0.05 · (−1.9) = −0.095
    # correct: m_1 = 0.9 (−0.2) + (−0.19) → x_2 = 0.1 + 0.5 · 0.37; damped: x_1 = 0.01, s_1 = 0.05 · (−1.99),
    # m_1 = 0.9 (−0.02) + 0.1 (−0.199) = −0.0379 → x_2 = 0.01 + 0.5 · 0.0379
    assert _x(claim.rule(eta=0.5, eta_L=0.1), 2)[1] == pytest.approx(0.1 + 0.5 * 0.37)
    x_damped = _x(_rule(gen["opt.damped"], claim), 2)
    assert x_damped[0] == pytest.approx(0.01) and x_damped[1] == pytest.approx(0.01 + 0.5 * 0.0379)
    # ServerSGD is the base step: dropping it is the identity, so no optimizer mutant
    assert not [t for t in _by_tag(_claim(ServerSGD(), "sgd.toy")) if t.startswith("opt.")]


def test_factory_without_parts_gets_no_rule_mutants():
    claim = Claim(
        id="lambda.toy", title="toy", bound=100.0, rule=lambda **kw: FedAvg(**kw), eta=0.5, eta_L=0.1
    )
    assert all(m.category != "generated rule" for m in generated.generate(claim))


def test_fedadam_tutorial_gets_rule_and_optimizer_mutants():
    import os

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    gen = generated.generate_for_files([os.path.join(root, "docs", "tutorial", "fedadam.py")])
    pre = "gen.reddi2021.fedadam."
    rule = [m.name[len(pre) :] for m in gen if m.category == "generated rule"]
    # η = √(mK) ≠ 1: η dropped; K = 2 > 1 (the class does not fix K): the K weight dropped and squared;
    # β1 = 0 ≠ β2 = 0.99: the swap
    assert rule == [
        "step.squared",
        "normalizer.off_by_one",
        "step.eta_dropped",
        "k_weight.off_by_one",
        "k_weight.dropped",
        "k_weight.squared",
        "opt.dropped",
        "opt.state_reset",
        "opt.v_not_squared",
        "opt.tau_in_sqrt",
        "opt.betas_swapped",
    ]
