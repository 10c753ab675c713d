"""The assumption class as an object (claims.assumption_class): derived from every claim, membership
certificates before evaluation, refusal of unsearchable classes."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

from afltheory.algorithms import AFACD, AsySG
from afltheory.anarchy import Behaviour, ConstantSteps, EventDriven, UniformArrivals, UniformDelay
from afltheory.anarchy.behaviour import ExponentialTime
from afltheory.claims import Assumptions, Claim, L, T, eta, eta_L, sigma_L
from afltheory.claims.assumption_class import (
    AssumptionClass,
    JobsInFlight,
    Size,
    UnsearchableClass,
)
from afltheory.claims.paper import PAPER_CLAIMS
from afltheory.problems import HeterogeneousQuadratic
from afltheory.strategies import Instance

Delta = sp.Symbol("Delta")

#: asynchronous SGD with n = M jobs in flight (Mishchenko et al. 2022 style): γ = η η_L ≤ 1/(4 L M)
ASYNC = Claim(
    id="user.async_sgd_n",
    title="async SGD, n jobs in flight",
    assumptions=Assumptions(
        heterogeneity="iid", participation="arbitrary", delays=JobsInFlight(), max_local_steps=1
    ),
    rule=AsySG,
    eta=1.0,
    bound=8 * Delta / (eta * eta_L * T) + 4 * eta * eta_L * L * sigma_L**2,
    conditions={"step": 4 * eta * eta_L * L * sp.Symbol("M") <= 1},
)


def _inst(problem, behaviour, rule, rounds=40):
    return Instance(problem, behaviour, rule, rounds, behaviour.m, 0, 1, problem.constants.x_star)


def test_every_paper_claim_has_a_searchable_class():
    for c in PAPER_CLAIMS.values():
        ac = c.assumption_class
        assert isinstance(ac, AssumptionClass)
        ac.check_searchable()
        assert "T" in ac.directions() and ac.sizes["T"].high is None  # the horizon is open, followed
    thm4 = PAPER_CLAIMS["yang2022.thm4"].assumption_class
    assert "M/m" in thm4.directions() and "1/eta_L" in thm4.directions()
    comp = PAPER_CLAIMS["compression.distributed_gd"].assumption_class
    assert comp.sizes["K"].high == 1 and comp.delays.tau == 0 and "K" not in comp.directions()


def test_iid_delays_refused_for_jobs_in_flight():
    """The old instance (M = 2, m = 1, i.i.d. round-mode delays up to 32) cannot come from 2 jobs in flight:
    with 2 workers the delay of an arrival is the rounds since that worker's last pull, e.g. round 1's
    arrival has delay 0 or 1 — a uniform draw on {0..32} (clipped at t) leaves that set at once."""
    p = HeterogeneousQuadratic(dim=1, num_workers=2, L=1.0, mu=1.0, sigma_L=1.0, sigma_G=0.0, seed=0)
    rule = AsySG(1.0, 0.1)
    bad = _inst(p, Behaviour(UniformArrivals(1), UniformDelay(32), ConstantSteps(1)), rule)
    cert = ASYNC.assumption_class.membership(ASYNC, bad)
    assert not cert.inside
    assert not cert.checks["delays"][0] and "n = M clock" in cert.checks["delays"][1]
    for speeds in ([1.0, 1.0], [1.0, 1 / 30], [1.0, 1 / 300]):
        good = _inst(p, EventDriven(1, ExponentialTime(speeds=speeds)), rule)
        cert = ASYNC.assumption_class.membership(ASYNC, good)
        assert cert.inside, str(cert)
        assert cert.slack["step"] == pytest.approx(1 - 4 * 0.1 * 2)


def test_realizable_by_hand():
    """Two workers, one arrival per round: worker 0 at rounds 0, 1 (delays 0, 0); worker 1 at round 2 was
    pulled at 0 (delay 2); worker 0 at round 3 pulled at 2 (delay 1)."""
    w = np.array([[0], [0], [1], [0]])
    assert JobsInFlight.realizable(w, np.array([[0], [0], [2], [1]]), 2)[0]
    ok, why = JobsInFlight.realizable(w, np.array([[0], [0], [2], [0]]), 2)
    assert not ok and "round 3" in why


def test_bounded_delay_and_sizes_and_conditions():
    c = Claim(
        id="u.b",
        title="b",
        assumptions=Assumptions(max_delay=1, participation="full"),
        rule=AFACD,
        bound=L * sigma_L**2,
        conditions={"s": eta * eta_L * L <= 1},
    )
    p = HeterogeneousQuadratic(dim=2, num_workers=3, L=1.0, mu=0.5, sigma_L=0.5, sigma_G=0.0, seed=1)
    ins = _inst(p, Behaviour(UniformArrivals(3), UniformDelay(1), ConstantSteps(1)), AFACD(1.0, 0.5))
    cert = c.assumption_class.membership(c, ins)
    assert cert.inside and cert.slack["s"] == pytest.approx(0.5)
    out = _inst(p, Behaviour(UniformArrivals(2), UniformDelay(3), ConstantSteps(1)), AFACD(4.0, 0.5))
    cert = c.assumption_class.membership(c, out)
    assert not cert.inside
    text = " ".join(cert.reasons)
    assert "full participation" in text and "tau=1" in text and "slack -1" in text


def test_unsearchable_classes_named():
    free = Claim(id="u.free", title="free", rule=AFACD, eta=1.0, bound=L * sigma_L**2)
    with pytest.raises(UnsearchableClass, match="step sizes: eta_L is free"):
        free.assumption_class.check_searchable()
    ac = ASYNC.assumption_class
    bad = AssumptionClass(**{**ac.__dict__, "sizes": {**ac.sizes, "M": Size("M", 2, None, direction=False)}})
    with pytest.raises(UnsearchableClass, match="size M: open-ended"):
        bad.check_searchable()
    assert ASYNC.assumption_class.check_searchable().directions()[:2] == ["M", "m"]


def test_generic_adversary_reads_the_class():
    """Every candidate passes membership first; a claim leaving η_L free (quantified over 4ηη_L L ≤ 1) is
    searched (was: TypeError from AFACD(eta=1.0)); an unsearchable class is refused naming the component."""
    from afltheory.adversary.generic import search_claim

    c = Claim(
        id="u.etaL",
        title="x",
        rule=AFACD,
        eta=1.0,
        bound=4 * Delta / (eta * eta_L * T) + L * sigma_L**2,
        conditions={"s": 4 * eta * eta_L * L <= 1},
    )
    wc = search_claim(c, budget=8, seed=0, replicates=50)
    assert wc.certificate.inside and wc.instance.algorithm.eta_L <= 0.25 and wc.instance.algorithm.eta == 1.0
    assert wc.coverage["searched"]["M"] == "2..5" and "finite search" in wc.summary()
    free = Claim(id="u.free", title="free", rule=AFACD, eta=1.0, bound=L * sigma_L**2)
    with pytest.raises(UnsearchableClass, match="eta_L is free"):
        search_claim(free, budget=2)
