"""The published claims' engine forms (``Claim.engine()``): the stated terms under the engine form's
substitution, and their declared false variants (``Claim.false_variant``: bound / 10) fail on the checks'
instances (exact moments: no randomness)."""

from __future__ import annotations

import numpy as np
import sympy as sp

from afltheory.anarchy import Behaviour, ConstantSteps, UniformArrivals
from afltheory.claims import verify
from afltheory.problems import HeterogeneousQuadratic
from afltheory.published import khaled2020, li2020
from afltheory.published.symbols import K, T, sigma_L, sum_p2, sum_p2_sigma2
from afltheory.published.symbols import T as T_paper


def test_li_claim_terms_are_the_statement_terms():
    c = li2020.THM1.engine()
    assert c.id == "published.li2020.thm1" and c is li2020.claims()[0]  # built once
    subs = {T_paper: 1 + T * K, sum_p2_sigma2: sum_p2 * sigma_L**2}
    for name, term in li2020.THM1.bound.items():
        assert sp.simplify(c.bound[name] - term.subs(subs, simultaneous=True)) == 0


def test_false_variants_fail_on_the_tight_instances():
    p = HeterogeneousQuadratic.from_arrays(
        hessian_diag=np.ones(2), centers=np.zeros((4, 2)), sigma_L=3.0, weights=(0.1, 0.2, 0.3, 0.4)
    )
    beh = Behaviour(UniformArrivals(4), local_steps=ConstantSteps(1))
    v = verify(
        li2020.THM1.false_variant(10),
        p,
        beh,
        rounds=200,
        x0=p.constants.x_star,
        control=None,
    )
    assert v.passed and v.measured > v.theoretical  # expect="fails": passes because it is violated
    p2 = HeterogeneousQuadratic.from_arrays(hessian_diag=np.ones(2), centers=np.zeros((4, 2)), sigma_L=2.0)
    v = verify(
        khaled2020.IDENTICAL.false_variant(10),
        p2,
        beh,
        rounds=200,
        x0=np.array([3.0, -2.0]),
        control=None,
    )
    assert v.passed and v.measured > v.theoretical
