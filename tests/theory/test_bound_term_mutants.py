"""The bound-term transcription mutants (afltheory.mutants, category "bound terms"): each scales exactly one
named term of its own theorem's ``TERM_EXPRS`` wherever they are evaluated, and no other theorem's — a looser
one passes every numeric check by construction, so the hand-derived terms of test_bound_terms.py are what
kills it (the kill matrix's "killed by tests" column). Deterministic."""

from __future__ import annotations

import numpy as np

from afltheory import mutants
from afltheory.theory import theorem2, theorem3


def test_bound_term_mutants_scale_one_term_of_their_theorem_only(tiny, consts):
    kw = dict(eta=1.0, eta_L=0.05, f0=3.0, scope="ignore")
    t2, t3 = theorem2.bound_terms(tiny, consts, **kw), theorem3.bound_terms(tiny, consts, **kw)
    for name, mod, term, factor, ref in (
        ("theorem2.floor_looser", theorem2, "sigma_G_floor", 2.0, t2),
        ("theorem2.delay_tighter", theorem2, "sigma_L_delay", 1 / 3, t2),
        ("theorem3.drift_looser", theorem3, "sigma_G_drift", 2.0, t3),
    ):
        with mutants.injected(name):
            got = mod.bound_terms(tiny, consts, **kw)
            other = (theorem3 if mod is theorem2 else theorem2).bound_terms(tiny, consts, **kw)
            total = mod.bound(tiny, consts, **kw)
        for k in ref:
            np.testing.assert_allclose(got[k], ref[k] * (factor if k == term else 1.0), rtol=1e-13)
        np.testing.assert_allclose(total, sum(got.values()), rtol=1e-13)
        want_other = t3 if mod is theorem2 else t2
        assert all(np.array_equal(other[k], want_other[k]) for k in other)


def test_a_bound_term_mutant_changes_the_sympy_bound_too():
    """A transcription slip is in the one statement every reader uses: the sympy ``bound_expr`` and
    ``alpha_exprs`` change with the numeric terms (so agreement.bound_symbolic cannot see it; only the hand
    values can)."""
    import sympy as sp

    from afltheory.theory import symbols as S

    base = theorem2.bound_expr()
    with mutants.injected("theorem2.floor_looser"):
        mut, (_, aG) = theorem2.bound_expr(), theorem2.alpha_exprs()
        mut3 = theorem3.bound_expr()
    assert sp.simplify(mut - base - 6 * S.sigma_G**2) == 0
    assert sp.simplify(aG - theorem2.alpha_exprs()[1] - sp.Rational(3, 2)) == 0
    assert mut3 == theorem3.bound_expr()
