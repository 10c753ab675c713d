"""Corollary 3 on realized schedules (memory staleness ≥ ⌈M/m⌉ − 1, the stale term grows with M for fixed
m) and the reading-dependence of inconsistency #5 (docs/theorems.md, Theorem 4 / Corollary 3)."""

import numpy as np
import pytest

from afltheory.anarchy import Behaviour, ConstantSteps, CyclicArrivals, NoDelay, UniformArrivals
from afltheory.anarchy.schedule import Schedule
from afltheory.theory import corollaries as C


def test_min_memory_staleness_hand():
    assert [C.min_memory_staleness(M, 2) for M in (2, 3, 4, 8, 16)] == [0, 1, 1, 3, 7]
    assert C.min_memory_staleness(10, 10) == 0
    for bad in ((4, 0), (4, 5), (4.5, 2), (True, 1)):
        with pytest.raises(ValueError, match="m="):
            C.min_memory_staleness(*bad)


@pytest.mark.parametrize("M,m", [(4, 2), (8, 2), (9, 3), (16, 4)])
def test_realized_staleness_respects_lower_bound(M, m):
    s = Behaviour(UniformArrivals(m), NoDelay(), ConstantSteps(1)).sample(60, 3, M, 1)
    r = C.cor3_realized(s, K=1, L=1.0)
    assert np.all(r["tau"] >= r["tau_lower"]) and r["tau_lower"] == -(-M // m) - 1


def test_cyclic_schedule_hand():
    # M = 4, m = 2, workers (0,1),(2,3),(0,1),...: after round t the other pair is 1 round old -> tau = 1,
    # m'_t = 2
    w = np.array([[[0, 1], [2, 3]] * 5])
    s = Schedule(w, np.zeros_like(w), np.ones_like(w), num_workers=4)
    r = C.cor3_realized(s, K=1, L=1.0)
    assert r["tau"].tolist() == [1.0] and r["tau_lower"] == 1
    # stale order: tau^2 (M - m')^2 / (M^2 T) with m'_0 = 4 (warm start: all fresh at t=0), then m'_t = 2
    stale, _, mf, _ = __import__("afltheory").theory.theorem4.realized(s)
    want = np.mean((4 - mf[0]) ** 2) / (16 * 10)
    assert r["stale_term"][0] == pytest.approx(want)
    assert r["lead"] == pytest.approx(1 / np.sqrt(4 * 1 * 10))


def test_stale_term_grows_with_M_for_fixed_m_and_condition_fails():
    """Deterministic cyclic arrivals (tau = M/m - 1 exactly): with m = 2 fixed, the ratio stale/lead grows
    with M and Theorem 4's (C2) fails for M = 64 at eta = sqrt(MK), eta_L = 1/sqrt(T); with m = M/2 it
    does not grow."""
    ratios, inside = [], []
    for M in (4, 16, 64):
        s = Behaviour(CyclicArrivals(2), NoDelay(), ConstantSteps(2)).sample(400, 1, M, 0)
        r = C.cor3_realized(s, K=2, L=1.0)
        ratios.append(float(r["ratio"][0]))
        inside.append(r["inside_conditions"])
    assert ratios[0] < ratios[1] < ratios[2]
    assert not inside[-1]
    flat = []
    for M in (4, 16, 64):
        s = Behaviour(CyclicArrivals(M // 2), NoDelay(), ConstantSteps(2)).sample(400, 1, M, 0)
        flat.append(float(C.cor3_realized(s, K=2, L=1.0)["ratio"][0]))
    assert max(flat) <= ratios[1]


def test_cor3_readings():
    r = C.cor3_readings()
    assert r["mean"]["slides_K2_over_MT_matched"] and not r["sum"]["slides_K2_over_MT_matched"]
    assert not r["mean"]["proof_K_over_MT_matched"] and not r["sum"]["proof_K_over_MT_matched"]
    assert r["sum"]["sigma_L_K_over_T"] and r["mean"]["sigma_L_K_over_T"]
