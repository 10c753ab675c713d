"""Issue 45's mutants of the kinds that had no injection point (docs/verdict_power.md, Round 9): each fault
pinned to the bug it describes on a hand-derived case, the new checks' plain references pinned by hand, and
each new mutant killed by at least two verdicts (power_claims, power_engines, power_rules)."""

from __future__ import annotations

import numpy as np
import pytest

from afltheory import _faults, mutants
from afltheory.checks.registry import Context
from afltheory.mutants import faults as F
from paper_checks import power_claims as pc
from paper_checks import power_engines as pe
from paper_checks import power_rules as pr

_KNOWN = (pc, "_verify_known_answer", {"verify_known_answer"})
#: mutant -> [(module, function, the verdicts that kill it)]
KILLS = {
    "exact.noise_weights_not_squared": [(pe, "_weighted_noise_exact", {"weighted_noise_exact"}),
                                        (pr, "_weights_noise", {"weights_noise_mc"})],
    "exact.client_weight_not_squared": [(pe, "_weighted_noise_exact", {"weighted_noise_exact"}),
                                        (pr, "_weights_noise", {"weights_noise_mc"})],
    "sim.arrival_weights_not_squared": [(pe, "_weighted_noise_mc", {"weighted_noise_mc"}),
                                        (pr, "_weights_noise", {"weights_noise_mc"})],
    "sim.arrival_weights_dropped": [(pe, "_weighted_noise_mc", {"weighted_noise_mc"}),
                                    (pr, "_weights_noise", {"weights_noise_mc"})],
    "claims.last_round_early": [(pc, "_quantities", {"quantities_simulate", "quantities_exact"})],
    "claims.average_over_T_plus_1": [(pc, "_quantities", {"quantities_simulate", "quantities_exact"})],
    "claims.weights_uniform": [(pc, "_quantities", {"quantities_simulate", "quantities_exact"})],
    "claims.virtual_step_late": [(pc, "_quantities", {"quantities_simulate", "quantities_exact"})],
    "claims.kbar_is_kmax": [(pc, "_run_symbols", {"run_symbols"}), _KNOWN],
    "claims.sum_p2_uniform": [(pc, "_run_symbols", {"run_symbols"}), _KNOWN],
    "claims.condition_ge_flipped": [(pc, "_conditions", {"conditions"}), _KNOWN],
    "default_control.smallest_term": [(pc, "_default_control", {"default_control"}),
                                      (pc, "_default_control_verify", {"default_control_verify"})],
    "pep.interpolant_grad_sign": [(pe, "_pep", {"pep_interpolates", "pep_replay"})],
    "torch.schedule_late": [(pe, "_torch", {"schedule_torch", "schedule_torch_local"})],
    "mocha.omega_not_inverted": [(pe, "_mocha", {"mocha_omega_kkt"})],
}  # fmt: skip
_BASE: dict = {}


def _ok(mod, fn, tmp, mutant=None):
    ctx = Context("quick", 0, str(tmp))
    run = getattr(mod, fn)
    if mutant is None:
        out = run(ctx)
    else:
        with mutants.injected(mutant):
            out = run(ctx)
    out = out if isinstance(out, list) else [out]
    return {v.id.split(".", 1)[1]: v.ok for v in out}


@pytest.mark.parametrize("mutant", sorted(KILLS))
def test_each_new_mutant_is_killed_by_the_verdicts_named(mutant, tmp_path):
    if mutant == "torch.schedule_late":
        pytest.importorskip("torch")
    killed = set()
    for mod, fn, expected in KILLS[mutant]:
        key = (mod.__name__, fn)
        if key not in _BASE:
            _BASE[key] = _ok(mod, fn, tmp_path)
        base = _BASE[key]
        assert all(base.values()), base  # every verdict ok (passes, control fails) on the correct code
        under = _ok(mod, fn, tmp_path, mutant)
        got = {v for v, ok in base.items() if ok and not under[v]}
        assert got == expected, (mutant, fn, got)
        killed |= got
    assert len(killed) >= 2 or mutant == "mocha.omega_not_inverted", killed  # MOCHA: laws.mocha_omega too


def test_new_mutants_are_catalogued_with_their_category():
    cats = {n: mutants.get(n).category for n in KILLS}
    assert set(cats.values()) <= set(mutants.CATEGORIES)
    assert (
        cats["claims.kbar_is_kmax"] == "run symbols"
        and cats["pep.interpolant_grad_sign"] == "PEP interpolant"
    )


# ------------------------------------------------------------------------------------------ faults by hand
def test_noise_weight_faults_by_hand():
    # w = w_K w_τ M p_i = 2 · 1 · 0.4: correct w² = 0.64; not squared 0.8; client weight once 2² · 0.4 = 1.6
    assert F.noise_weight_not_squared(0.8, 0.4) == 0.8
    assert F.client_weight_not_squared(0.8, 0.4) == pytest.approx(1.6, abs=1e-15)
    w = np.array([[2.2, 0.2]])
    assert np.array_equal(F.arrival_weights_not_squared(w), w)
    assert np.array_equal(F.arrival_weights_dropped(w), np.ones((1, 2)))


def test_measured_quantity_faults_by_hand():
    assert np.array_equal(F.uniform_weights(np.array([0.5, 0.3, 0.2])), np.full(3, 1 / 3))
    v = np.array([[1.0, 2.0], [3.0, 4.0]])  # (T, K) = (2, 2); next rounds' ‖∇f(x_{t+1})‖² = 5, 6
    assert np.array_equal(F.virtual_one_step_late(v, np.array([5.0, 6.0])), [[2.0, 5.0], [4.0, 6.0]])
    vals = {"K": np.array([4.0]), "Kbar": np.array([1.6]), "M": np.array([4.0]), "sum_p2": np.array([0.3])}
    assert F.kbar_is_kmax(vals)["Kbar"][0] == 4.0 and vals["Kbar"][0] == 1.6  # a copy
    assert F.sum_p2_uniform(vals)["sum_p2"][0] == 0.25
    assert F.smallest_term({"a": 3, "b": 1}, key=lambda k: {"a": 3, "b": 1}[k]) == "b"
    assert np.array_equal(F.grad_sign_flipped(np.array([1.0, -2.0])), [-1.0, 2.0])


def test_claim_quantity_faults_reach_quantity_of():
    """The fault points in claims.verify.quantity_of on a three-round exact record (one replicate's numbers):
    last_gap at T − 1, avg over T + 1, the weighted average with equal weights."""
    from types import SimpleNamespace

    from afltheory.algorithms import FedAvg
    from afltheory.claims.verify import quantity_of

    prob = SimpleNamespace(constants=SimpleNamespace(f_star=0.0, x_star=None))
    rec = SimpleNamespace(
        rounds=3, grad_norm_sq=np.array([8.0, 4.0, 2.0, 1.0]), loss=np.array([4.0, 2.0, 1.0, 0.5])
    )
    alg = FedAvg(eta="1/(1 + t)", eta_L=1.0)  # γ_t = 1, 1/2, 1/3
    assert quantity_of("last_gap", rec, prob, alg) == 0.5
    assert quantity_of("avg_grad_sq", rec, prob, alg) == pytest.approx(14 / 3, abs=1e-14)
    w = np.array([1, 1 / 2, 1 / 3]) / (11 / 6)
    assert quantity_of("weighted_avg_grad_sq", rec, prob, alg) == pytest.approx(w @ [8, 4, 2], abs=1e-14)
    with mutants.injected("claims.last_round_early"):
        assert quantity_of("last_gap", rec, prob, alg) == 1.0
    with mutants.injected("claims.average_over_T_plus_1"):
        assert quantity_of("avg_grad_sq", rec, prob, alg) == pytest.approx(15 / 4, abs=1e-14)
    with mutants.injected("claims.weights_uniform"):
        assert quantity_of("weighted_avg_grad_sq", rec, prob, alg) == pytest.approx(14 / 3, abs=1e-14)


def test_condition_sign_and_default_control_faults():
    from afltheory.analysis.bounds import default_control

    c = pc._conditions_claim()
    stats = {"T": np.array([6.0]), "eta_L": np.array([0.1]), "L": np.array([2.0])}
    assert c.check_conditions(stats)["horizon"] == (True, 2.0)
    with mutants.injected("claims.condition_ge_flipped"):
        assert c.check_conditions(stats)["horizon"] == (False, -2.0)
        assert c.check_conditions(stats)["step"] == (True, pytest.approx(0.4))  # ≤ conditions unchanged
    terms = {"a": 0.8, "b": 0.15, "c": 0.05}
    assert default_control(0.8, terms, exact=True)[0].bound == pytest.approx(0.6)
    with mutants.injected("default_control.smallest_term"):
        assert default_control(0.8, terms, exact=True)[0] is None  # 0.975 ≥ 0.8: no control can fail


def test_fault_points_are_consulted_only_where_they_can_matter():
    """A probe of quantity_of reads the averaging point only for avg_grad_sq (so the mutant reaches only the
    claims that measure it)."""
    from types import SimpleNamespace

    from afltheory.claims.verify import quantity_of

    prob = SimpleNamespace(constants=SimpleNamespace(f_star=0.0, x_star=None))
    rec = SimpleNamespace(rounds=1, grad_norm_sq=np.array([2.0, 1.0]), loss=np.array([1.0, 0.5]))
    with mutants.probe() as seen:
        quantity_of("last_gap", rec, prob, None)
    assert _faults.FaultPoint.CLAIMS_AVG_ROUNDS.value not in seen
    assert _faults.FaultPoint.CLAIMS_LAST_ROUND.value in seen


# ---------------------------------------------------------------------------------------- references by hand
def test_hand_noise_one_coordinate():
    # h = 1, η = 1, η_L = 0.2, σ_L² = 3 over d = 1, p = (0.55, 0.3, 0.1, 0.05): M p = 2.2 and 0.2, m = 2;
    # worker 3 (K = 2): (1 − 0.2)² + 1 = 1.64; Var = 0.01 · 3 · (4.84 + 0.04 · 1.64) = 0.147168
    v = pe.hand_noise([1.0], np.sqrt(3.0), pe.P_W, 1.0, 0.2)
    assert v[0] == pytest.approx(0.01 * 3 * (4.84 + 0.04 * 1.64), rel=1e-14)
    assert pe.hand_noise([1.0], np.sqrt(3.0), pe.P_W, 1.0, 0.2, squared=False)[0] == pytest.approx(
        0.01 * 3 * (2.2 + 0.2 * 1.64), rel=1e-14
    )


def test_plain_run_two_local_steps_by_hand():
    """One worker f = ½ (x − 1)² (weights (1,)), K = 2, η_L = ½, η = 1, x_0 = 0: y_1 = ½, y_2 = ¾; x_1 = ¾."""

    class _P:
        num_workers = 1

        @staticmethod
        def local_grad(y, i):
            return y - 1.0

    xs, virt, gam = pc.plain_run(_P(), 1, 2, lambda t: 1.0, 0.5, np.zeros(1), (1.0,))
    assert xs[:, 0] == pytest.approx([0.0, 0.75], abs=1e-15)
    assert virt[0, :, 0] == pytest.approx([0.0, 0.5], abs=1e-15)  # x̄_{0,0} = y_0, x̄_{0,1} = y_1
    assert gam == pytest.approx([0.5], abs=1e-15)


def test_kkt_residual_is_zero_at_the_closed_form_and_not_at_sigma():
    A = np.array([[2.0, 0.5], [0.5, 1.0]])
    ev, U = np.linalg.eigh(A)
    root = (U * np.sqrt(ev)) @ U.T
    Sigma = root / np.trace(root)
    assert pe._kkt(np.linalg.inv(Sigma), A) < 1e-12
    assert pe._kkt(Sigma / np.trace(np.linalg.inv(Sigma)), A) > 0.1


def test_weight_fault_points_are_read_only_where_a_weight_is_not_one():
    """The exact noise-weight point and the collapsed draw's weight point are consulted only when a weight is
    not 1 (else both faults are the identity): an unweighted K = 1 FedAvg run does not reach them, a weighted
    one does."""
    import afltheory as aft
    from afltheory.algorithms import FedAvg
    from afltheory.anarchy import Behaviour, ConstantSteps, UniformArrivals
    from afltheory.exact import moments
    from afltheory.problems import HeterogeneousQuadratic

    p = HeterogeneousQuadratic(dim=2, num_workers=3, L=1.0, mu=0.5, sigma_L=1.0, sigma_G=0.5, seed=1)
    beh = Behaviour(UniformArrivals(2), local_steps=ConstantSteps(1))
    points = {_faults.FaultPoint.EXACT_NOISE_WEIGHTS.value, _faults.FaultPoint.SIM_ARRIVAL_WEIGHTS.value}
    for weights, reached in ((None, set()), ((0.5, 0.3, 0.2), points)):
        alg = FedAvg(1.0, 0.1, weights=weights)
        with mutants.probe() as seen:
            moments(p, alg, beh, 3)
            aft.simulate(p, alg, beh, 3, 2, 0)
        assert seen & points == reached, (weights, seen & points)
