"""Theorem 4 with m < M under adversarial periodic arrival sequences ("periodic" arrivals): the sets cover
every worker, the theorem's τ is the largest delay + the longest wait between two arrivals − 1 and equals the
largest slot staleness realized on sampled schedules, the exact evaluator matches Monte Carlo, the expected
bound terms match ``theorem4.bound_terms`` on sampled schedules, and the search explores these schedules.

Stochastic parts (fixed seeds): Monte Carlo of R = 4000 replicates against the exact moments, |z| ≤ 4.5 at 5
checkpoints (false-failure probability < 5·7e-6 under normality); bound terms over 4000 sampled schedules
within 5 standard errors (< 1e-6 per term).
"""

import json

import numpy as np
import pytest

from afltheory.adversary import (
    PeriodicArrivals,
    Structure,
    get_claim,
    load_instance,
    make_instance,
    save_instance,
    search,
)
from afltheory.adversary.claims import periodic_sets
from afltheory.adversary.components import periodic_max_gap
from afltheory.adversary.fastexact import grad_norm_sq
from afltheory.adversary.search import instance_inside


def test_sets_cover_every_worker_and_the_gap_is_the_longest_wait():
    rng = np.random.default_rng(0)
    for P, m, M in [(3, 2, 5), (4, 2, 5), (2, 3, 6), (5, 1, 5), (6, 2, 5)]:
        W = periodic_sets(rng.random((50, P, M)), m)
        assert W.shape == (50, P, m)
        for w in W:
            assert set(w.ravel().tolist()) == set(range(M))
            assert all(len(set(r.tolist())) == m for r in w)
    # round robin at M = 5, m = 2: waits of 2 and 3 rounds -> 3 (⌈M/m⌉)
    assert periodic_max_gap([[0, 1], [2, 3], [4, 0], [1, 2], [3, 4]], 5) == 3
    assert periodic_max_gap([[0, 1], [0, 2]], 3) == 2
    with pytest.raises(ValueError, match="never arrives"):
        periodic_max_gap([[0, 1], [0, 1]], 3)
    with pytest.raises(ValueError, match="cover"):
        periodic_sets(np.zeros((1, 2, 5)), 2)
    with pytest.raises(ValueError, match="repeats"):
        PeriodicArrivals([[0, 0]])
    with pytest.raises(ValueError, match="num_workers"):
        PeriodicArrivals([[0, 3]]).sample(np.random.default_rng(0), 4, 3)


def _realized_staleness(W, D, M):
    """Largest age t − s + d of a memory slot over a schedule (warm start at x_0 counts as s = d = 0)."""
    R, T, _ = W.shape
    worst = 0
    for r in range(R):
        last = np.zeros(M, dtype=int)  # round of the slot's update minus its delay
        for t in range(T):
            for i, d in zip(W[r, t], D[r, t], strict=True):
                last[i] = t - d
            worst = max(worst, int((t - last).max()))
    return worst


def test_theorem_tau_is_the_realized_staleness_and_terms_match_bound_terms():
    c = get_claim("thm4")
    cls = c.default_class().replace(m=2, rounds=40, min_rounds=1, arrivals=("periodic",), max_delay=2)
    st = Structure(2, "periodic", {"P": 4})
    U = np.full((1, c.num_params(cls, st)), 0.6)
    U[0, 7::3] = 0.1  # an uneven set pattern
    dec = c.decode(cls, st, U)
    inst = make_instance(c, cls, st, U[0], 40)
    assert inst.arrivals["kind"] == "periodic"
    tau = c.theorem_tau(inst)
    assert tau == inst.tau + periodic_max_gap(inst.arrivals["workers"], 5) - 1 == int(dec.tau[0])
    p = inst.problem()
    sched = inst.behaviour().sample(40, 4000, inst.num_workers, seed=3)
    assert _realized_staleness(sched.workers, sched.delays, 5) == tau
    exp = c.expected_terms(cls, dec, np.array([40]))
    got = c.module.bound_terms(
        sched,
        p.constants,
        eta=inst.eta,
        eta_L=inst.eta_L,
        f0=p.value(inst.x0),
        num_workers=inst.num_workers,
        tau=tau,
    )
    for k, v in got.items():
        se = v.std(ddof=1) / np.sqrt(len(v))
        assert abs(v.mean() - exp[k][0, 0]) <= 5 * se + 1e-12 * abs(v.mean()), (k, v.mean(), exp[k][0, 0])
    assert instance_inside(c, inst)[0] is True


def test_periodic_afacs_matches_monte_carlo():
    from afltheory import simulate

    c = get_claim("thm4")
    cls = c.default_class().replace(m=2, dim=2, rounds=12, min_rounds=1, arrivals=("periodic",))
    st = Structure(2, "periodic", {"P": 3})
    U = np.random.default_rng(4).random((1, c.num_params(cls, st)))
    dec = c.decode(cls, st, U)
    g = grad_norm_sq(c.batch(cls, dec), 12)[0]
    inst = make_instance(c, cls, st, U[0], 12)
    tr = simulate(inst.problem(), inst.algorithm(), inst.behaviour(), 12, 4000, seed=5, x0=inst.x0)
    t = np.array([1, 3, 5, 8, 12])
    z = (tr.mean()[t] - g[t]) / tr.sem()[t]
    assert np.all(np.abs(z) < 4.5), z
    # control that can fail: round robin on the same candidate gives other moments
    rr = Structure(2, "cyclic", {})
    Ur = np.random.default_rng(4).random((1, c.num_params(cls.replace(arrivals=("cyclic",)), rr)))
    g_rr = grad_norm_sq(c.batch(cls, c.decode(cls.replace(arrivals=("cyclic",)), rr, Ur)), 12)[0]
    assert not np.allclose(g, g_rr, rtol=1e-6)


def test_search_explores_periodic_schedules_and_round_trips(tmp_path):
    c = get_claim("thm4")
    cls = c.default_class().replace(m=2, rounds=40, min_rounds=10, arrivals=("periodic",))
    wc = search(c, budget=64, batch=16, assumptions=cls, seed=1, confirm_violation=False)
    assert wc.structure.arrivals == "periodic" and wc.counts.get("ok", 0) > 0 and np.isfinite(wc.ratio)
    inst = wc.instance
    back = load_instance(save_instance(inst, tmp_path / "p.json"))
    assert back.arrivals == inst.arrivals
    assert json.loads((tmp_path / "p.json").read_text())["arrivals"]["kind"] == "periodic"
    assert c.theorem_tau(back) == c.theorem_tau(inst)
    # both bounded-staleness laws are allowed; i.i.d. arrivals with m < M are not
    c.check_class(c.default_class().replace(m=2, arrivals=("periodic",)))
    with pytest.raises(ValueError, match="periodic"):
        c.check_class(c.default_class().replace(m=2, arrivals=("uniform",)))
