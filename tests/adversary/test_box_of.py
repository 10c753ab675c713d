"""The built-in claims' boxes are derived from their statements' one AssumptionClass (``space.box_of`` of
``claims.paper``'s Claim), and equal the boxes the registry stated literally before (pinned here), so the
quick tier's adversary verdicts are unchanged."""

from __future__ import annotations

import pytest

from afltheory.adversary import AssumptionClass, get_claim
from afltheory.adversary.space import box_of
from afltheory.claims import Assumptions, Claim, L, T, eta, eta_L
from afltheory.claims.paper import THEOREM2, THEOREM3, THEOREM4

ARB = ("uniform", "biased", "fixed", "cyclic", "schedule")
COR = dict(dim=2, num_workers=4, max_delay=1, K_max=2, rounds=2000, min_rounds=2000)
BEFORE = {  # the literal default_class of each registered claim before the derivation
    "thm2": AssumptionClass(arrivals=ARB),
    "thm3": AssumptionClass(),
    "thm4": AssumptionClass(arrivals=("uniform", "cyclic", "periodic")),
    "cor1": AssumptionClass(**COR, arrivals=("uniform", "biased", "fixed")),
    "cor2": AssumptionClass(**COR, arrivals=("uniform",)),
    "cor3": AssumptionClass(**COR, arrivals=("uniform",)),
}


@pytest.mark.parametrize("cid", sorted(BEFORE))
def test_derived_box_equals_the_literal_one(cid):
    c = get_claim(cid)
    assert c.default_class() == BEFORE[cid]
    assert set(c.default_class().arrivals) <= set(c.arrivals)


def test_statement_is_the_paper_claim():
    assert get_claim("thm2").statement is THEOREM2 and get_claim("cor2").statement is THEOREM3
    assert get_claim("thm4").statement is THEOREM4 and get_claim("lemma2").statement is None


def test_box_follows_the_class_components():
    user = Claim(
        id="box.user",
        title="t",
        assumptions=Assumptions(
            noise="none", heterogeneity="iid", participation="uniform", max_delay=1, max_local_steps=2
        ),
        rule=None,
        eta=1.0,
        eta_L=0.1,
        bound=1 / (eta * eta_L * T),
        conditions={"s": eta * eta_L * L <= 1},
    )
    b = box_of(user.assumption_class, sigma_L=0.0, Delta=1.0)
    assert (b.arrivals, b.sigma_L, b.sigma_G, b.max_delay, b.K_max) == (("uniform",), 0.0, 0.0, 1, 2)
    assert box_of(THEOREM4.assumption_class).arrivals == ARB
    assert box_of(THEOREM4.assumption_class, bounded_staleness=True).arrivals == (
        "uniform",
        "cyclic",
        "periodic",
    )


def test_scaling_directions_come_from_the_statement_class():
    import dataclasses
    from types import SimpleNamespace

    from afltheory.adversary.scaling import DIRECTIONS, scale_directions

    assert scale_directions(get_claim("thm4")) == list(DIRECTIONS)  # every direction open in Theorem 4
    assert "1/eta" not in scale_directions(get_claim("cor1"))  # the corollary fixes η
    closed = dataclasses.replace(THEOREM2, assumptions=Assumptions(max_local_steps=1, max_delay=0))
    fake = SimpleNamespace(statement=closed, corollary=None, full=False)
    assert scale_directions(fake) == ["M/m", "T", "1/eta_L", "1/eta", "d"]  # K and τ fixed by the class
