"""The one server-step composition (issue #38 step 4): ``ServerRule.view(M)`` is the rule's declarative step
— arrival weights × staleness × client weights / normalizer × step size, memory, the server optimizer after
it — and every engine reads it: ``aggregate`` (simulate, torch), simulate's collapsed path, the exact
engine's ``ExactRule``, the fast evaluator's ``RuleView`` and the PEP skeleton (through ``server_rule``).

Evidence: hand-derived tiny steps, the view's step against an independent plain loop (hypothesis), the
engines' views pinned to the one the rule computes, and the one place a rule's code is introspected."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from afltheory.algorithms import AFACD, AFACS, SCAFFOLD, SGD, AsySG, FedAvg, FedBuff, FedProx, ServerRule
from afltheory.algorithms.base import IMPERATIVE_HOOKS, ServerView, WorkerRule
from afltheory.algorithms.published import FedNova, SCAFFOLDStaleControl
from afltheory.algorithms.server_opt import ServerMomentum, with_server_optimizer
from afltheory.mutants import algorithms as MA

G = np.array([[[1.0], [3.0]]])  # R = 1, m = 2 arrivals, d = 1
W = np.array([[0, 2]])
K = np.array([[1, 2]])
TAU = np.array([[0, 3]])


def test_view_pinned_fedbuff():
    """FedBuff(η = 3, η_L = 0.5), M = 4: γ = 1.5, n = m = 2, scale 0.75; w = K · 1/√(1 + τ) = (1, 2/2);
    x_1 = −0.75 (1·1 + 1·3) = −3 (hand-derived)."""
    v = FedBuff(3.0, 0.5).view(4)
    assert isinstance(v, ServerView)
    assert (v.gamma, v.memory, v.warm_start, v.client_weights, v.optimizer) == (1.5, False, False, None, None)
    assert v.normalizer(2) == 2 and v.scale(2) == 0.75
    np.testing.assert_array_equal(v.arrival_weights(K, TAU, W), [[1.0, 1.0]])
    np.testing.assert_array_equal(v.k_weight([1, 2, 3]), [1.0, 2.0, 3.0])
    np.testing.assert_allclose(v.tau_weight([0, 3]), [1.0, 0.5], rtol=0, atol=0)
    x, _ = FedBuff(3.0, 0.5).aggregate(FedBuff(3.0, 0.5).init(1, 4, 1), np.zeros((1, 1)), G, W, K, TAU, 4)
    assert x[0, 0] == -3.0


def test_view_pinned_client_weights_and_memory():
    """FedAvg with p = (0.1, 0.2, 0.3, 0.4), M = 4: client factors M p = (0.4, 0.8, 1.2, 1.6); arrivals 0 and
    2 with K = (1, 2): w = (1·0.4, 2·1.2) = (0.4, 2.4). AFA-CS, M = 4: n = M, scale γ/4; its K and τ weights
    are 1 (ones tables)."""
    v = FedAvg(3.0, 0.5, weights=(0.1, 0.2, 0.3, 0.4)).view(4)
    np.testing.assert_allclose(v.client_weights, [0.4, 0.8, 1.2, 1.6], rtol=1e-15)
    np.testing.assert_allclose(v.arrival_weights(K, TAU, W), [[0.4, 2.4]], rtol=1e-15)
    cs = AFACS(3.0, 0.5).view(4)
    assert cs.memory and cs.warm_start and cs.scale(2) == 1.5 / 4
    assert cs.arrival_weights(K, TAU, W) is None
    np.testing.assert_array_equal(cs.k_weight([1, 5]), [1.0, 1.0])
    assert AFACS(3.0, 0.5, memory_init="zeros").view(4).warm_start is False


def _plain(rule, memory, x, G, W, K, tau, M):
    """An independent server step: x − γ/n Σ w_K(K) w_τ(τ) M p_i G_i, written without the view (loops)."""
    R, m, d = G.shape
    gamma = float(rule.eta) * float(rule.eta_L)
    p = getattr(rule, "weights", None)
    out = x.copy()
    for r in range(R):
        terms = []
        for j in range(m):
            w = 1.0
            if isinstance(rule, (FedAvg, FedBuff)):
                w *= K[r, j]
            if isinstance(rule, FedBuff):
                w *= 1.0 / np.sqrt(1.0 + tau[r, j])
            if p is not None:
                w *= M * p[W[r, j]]
            terms.append(w * G[r, j])
        if memory is not None:  # slots s_i ← w_i G_i, the sum over all M slots
            for j in range(m):
                memory[r, W[r, j]] = terms[j]
            terms = list(memory[r])
        n = M if memory is not None else m
        out[r] = x[r] - gamma / n * np.sum(terms, axis=0)
    return out


RULES = {
    "AFACD": lambda: AFACD(1.3, 0.2),
    "AFACD-weighted": lambda: AFACD(1.3, 0.2, weights=(0.1, 0.4, 0.2, 0.2, 0.1)),
    "FedAvg-weighted": lambda: FedAvg(0.7, 0.3, weights=(0.3, 0.1, 0.2, 0.2, 0.2)),
    "FedBuff": lambda: FedBuff(0.9, 0.4),
    "AFACS": lambda: AFACS(1.1, 0.25, memory_init="zeros"),
}


@settings(max_examples=60, deadline=None)
@given(
    name=st.sampled_from(sorted(RULES)),
    seed=st.integers(0, 2**31 - 1),
    m=st.integers(1, 5),
    R=st.integers(1, 3),
)
def test_view_step_equals_plain_loop(name, seed, m, R):
    """The rule's ``aggregate`` (its view's weights and scale, the sum through ``combine``) agrees with the
    plain loop (rel 1e-12) on random arrivals (distinct workers per replicate), local steps, delays and
    updates."""
    rng = np.random.default_rng(seed)
    M, d = 5, 3
    rule = RULES[name]()
    Gs = rng.normal(size=(R, m, d))
    Ws = np.stack([rng.permutation(M)[:m] for _ in range(R)])
    Ks = rng.integers(1, 5, size=(R, m))
    taus = rng.integers(0, 4, size=(R, m))
    x = rng.normal(size=(R, d))
    memory = rng.normal(size=(R, M, d)) if rule.keeps_memory else None  # slots before the round

    def state():
        s = rule.init(R, M, d)
        if memory is not None:
            s.memory[:] = memory
        return s

    a, _ = rule.aggregate(state(), x, Gs, Ws, Ks, taus, M)
    ref = _plain(rule, None if memory is None else memory.copy(), x, Gs, Ws, Ks, taus, M)
    np.testing.assert_allclose(a, ref, rtol=1e-12, atol=1e-12)


def test_engines_read_the_one_view():
    """The exact engine's ExactRule and the fast evaluator's RuleView are built from ``rule.view(M)`` (the
    same object: computed once), and their numbers are the view's."""
    from afltheory.adversary.fastexact import rule_view
    from afltheory.exact.local import server_rule
    from afltheory.pep.base import pep_view

    rule = FedBuff(0.9, 0.4)
    v = rule.view(5)
    ex = server_rule(rule, 5)
    assert ex.view is v and pep_view(rule, 5).view is v
    assert (ex.gamma, ex.memory, ex.warm_start) == (v.gamma, v.memory, v.warm_start)
    assert ex.weight(3, 2) == pytest.approx(np.sqrt(3.0), rel=1e-15) and ex.normalizer(2, 5) == 2.0
    rv = rule_view(rule, m=2, num_workers=5, K_max=3, max_delay=2)
    assert rv.scale[0] == v.scale(2) == 0.9 * 0.4 / 2
    np.testing.assert_array_equal(rv.w_K[0], v.k_weight([1, 2, 3]))
    np.testing.assert_array_equal(rv.w_tau[0], v.tau_weight([0, 1, 2]))


def test_view_is_kept_per_rule_and_never_shared_by_a_copy():
    """The view is computed once per (rule, M); a copy carrying a server optimizer (``with_server_optimizer``
    copies the rule) or a round's rule (``at_round``) builds its own."""
    rule = AFACD(1.0, 0.1)
    v = rule.view(4)
    assert rule.view(4) is v and rule.view(5) is not v
    opt = ServerMomentum(0.5)
    moved = with_server_optimizer(rule, opt)
    assert moved.view(4).optimizer is opt and moved.view(4).rule is moved
    assert rule.view(4).optimizer is None
    sched = FedAvg("0.5/(1 + t)", 0.1)
    assert sched.at_round(1).view(3).gamma == pytest.approx(0.25 * 0.1, rel=1e-15)
    assert sched.at_round(3).view(3).gamma == pytest.approx(0.125 * 0.1, rel=1e-15)


def test_one_introspection_of_a_rules_code():
    """``overridden_hooks`` names the imperative hooks a class overrides (what the exact engine, PEP and
    the fast evaluator refuse); ``own_code_hooks`` drops an override declared ``base_code`` (the controls)."""
    assert AFACD.overridden_hooks() == () and AsySG.overridden_hooks() == ()
    assert MA.AFACDSumK.overridden_hooks() == ()  # a declarative hook: every engine reads it
    assert MA.AFACDOneArrival.overridden_hooks() == ("combine",)
    assert MA.AFACSMemoryFrozen.overridden_hooks() == ("update_memory",)
    assert FedNova.overridden_hooks() == ("arrival_weights",)
    assert MA.AFACDUnchanged.overridden_hooks() == ("combine",) and MA.AFACDUnchanged.own_code_hooks() == ()
    assert MA.FedAvgScheduleLate.overridden_hooks(("at_round",)) == ("at_round",)
    assert set(IMPERATIVE_HOOKS) == {"aggregate", "update_memory", "init", "arrival_weights", "combine"}
    assert MA.AFACDOneArrival(1.0, 0.1).view(3).overridden == ("combine",)
    # worker rules: the correction is the one prox_weight states unless a subclass changed the code below it
    assert SGD.declares_affine() and FedProx.declares_affine() and MA.FedProxMuTwice.declares_affine()
    assert not SCAFFOLD.declares_affine() and not MA.FedProxSignFlipped.declares_affine()
    assert not WorkerRule.declares_affine() and not SCAFFOLDStaleControl.declares_affine()
    assert MA.FedProxMuTwice(0.1).affine_prox_weight() == 0.2 and SCAFFOLD().affine_prox_weight() is None


def test_declared_hooks_check_m_and_prepare():
    """``check_m`` and ``prepare`` are declared on the base: any m and no problem change by default."""
    assert ServerRule.prepare is None and AFACD(1.0, 0.1).prepare is None
    assert AFACD(1.0, 0.1).check_m(7) is None
    with pytest.raises(ValueError, match="buffer_size=3 must equal the behaviour's m=2"):
        FedBuff(1.0, 0.1, buffer_size=3).check_m(2)
    from afltheory.algorithms import DynamicFedAvg

    assert DynamicFedAvg(mu=0.1).prepare is not None


def test_mutants_through_the_small_hooks():
    """The aggregate mutants override ``combine`` only and keep their bug (hand-derived, γ = 1.5, m = 2):
    one arrival −γ·1; first twice −γ (1 + 1 + 3)/2; memory unused −γ (1 + 3)/2 with the slots written; the
    AFA-CD control equals AFA-CD bit for bit. SCAFFOLD's control mutants: c += (1/m) Σ Δc_i, and no update."""
    x0 = np.zeros((1, 1))
    for cls, expected in [
        (MA.AFACDOneArrival, -1.5),
        (MA.AFACDFirstTwice, -3.75),
        (MA.AFACSMemoryUnused, -3.0),
        (MA.AFACDUnchanged, -3.0),
    ]:
        rule = cls(3.0, 0.5)
        x, state = rule.aggregate(rule.init(1, 4, 1), x0, G, W, K, TAU, 4)
        assert x[0, 0] == expected, cls.__name__
    _, s = MA.AFACSMemoryUnused(3.0, 0.5).aggregate(AFACS(3.0, 0.5).init(1, 4, 1), x0, G, W, K, TAU, 4)
    assert s["memory"][0, :, 0].tolist() == [1.0, 0.0, 3.0, 0.0]
    # SCAFFOLD, M = 4, arrivals 0 and 2 (m = 2), K = 1, η_L = 1, y0 = 0, yK = −(1, 3): Δc_i = (1, 3)
    y0, yK = np.zeros((1, 2, 1)), -np.array([[[1.0], [3.0]]])
    K1, rows = np.ones((1, 2), int), np.array([0])
    for worker, c in [(SCAFFOLD(), 1.0), (MA.SCAFFOLDControlOverm(), 2.0), (SCAFFOLDStaleControl(), 0.0)]:
        st_ = worker.finish(worker.init(1, 4, 1), y0, yK, K1, 1.0, rows, W, 4)
        assert st_.c[0, 0] == c, type(worker).__name__
        assert st_.c_i[0, :, 0].tolist() == ([0.0] * 4 if c == 0.0 else [1.0, 0.0, 3.0, 0.0])
