"""verify_bound / verify_rate: a user's claim checked with the same statistics and controls as the paper's
checks. Deterministic configurations (exact moments, or σ_L = 0 Monte Carlo) so the pinned outcomes are
exact."""

import numpy as np
import pytest
import sympy as sp

from afltheory.algorithms import AFACD, FedAvg
from afltheory.anarchy import Behaviour, ConstantSteps, UniformArrivals, UniformDelay
from afltheory.checks import SCHEDULE_SYMBOLS, verify_bound, verify_rate
from afltheory.exact import moments
from afltheory.problems import HeterogeneousQuadratic, NonconvexSinusoidal
from afltheory.theory import theorem3
from afltheory.theory.symbols import Delta, L, T, eta, eta_L, sigma_L

P = HeterogeneousQuadratic(dim=3, num_workers=4, L=1.0, mu=0.2, sigma_L=0.5, sigma_G=1.0, seed=1)
BEH = Behaviour(UniformArrivals(4), local_steps=ConstantSteps(2))


def test_exact_measured_equals_moments_and_decides_pass():
    algo = FedAvg(1.0, 0.05)
    ex = moments(P, algo, BEH, 20).grad_norm_sq[:20].mean()
    v = verify_bound(P, algo, BEH, 1.01 * ex, rounds=20, replicates=4)
    assert v.method == "exact moments" and v.measured == pytest.approx(ex, rel=1e-12) and v.passed
    w = verify_bound(P, algo, BEH, 0.99 * ex, rounds=20, replicates=4)
    assert not w.passed and w.negative_control is None


def test_sympy_bound_terms_and_default_control():
    """A sympy sum: terms' shares sum to 1. The default control (the dominant term halved, the criterion of
    the claim): on this loose bound it cannot fail, so the verdict says "no power" and stays ok (a true claim
    is never FAIL because of its control — the Lian et al. report); on a tight bound it fails, as it must."""
    algo = AFACD(1.0, 0.05)
    expr = 4 * Delta / (eta * eta_L * T) + 10 * L * eta * eta_L
    with pytest.warns(DeprecationWarning, match="afltheory.claims.verify"):
        v = verify_bound(P, algo, BEH, expr, rounds=30, replicates=4)
    assert sum(v.terms.values()) == pytest.approx(1.0)
    assert v.negative_control is None and "no power" in v.notes and v.passed and v.ok
    f0 = float(P.value(P.default_x0()))
    assert v.theoretical == pytest.approx(4 * (f0 - P.constants.f_star) / (0.05 * 30) + 10 * 0.05)
    ex = float(moments(P, algo, BEH, 30).grad_norm_sq[:30].mean())
    c = P.constants
    tight = verify_bound(
        P, algo, BEH, 0.8 * ex * L / c.L + 0.3 * ex * sigma_L / c.sigma_L, rounds=30, replicates=4
    )
    assert tight.passed and tight.negative_control is not None and not tight.negative_control.passed


def test_callable_bound_matches_theorem3_and_conditions():
    """The package's own Theorem 3 as a user callable: holds on a configuration inside its conditions (MC, R =
    64, seed 0, 99 % t-UCB) and inside_conditions reflects theorem3.conditions."""
    p = NonconvexSinusoidal(dim=3, num_workers=6, L=1.0, mu=-0.5, sigma_L=0.5, sigma_G=1.0, seed=1)
    beh = Behaviour(UniformArrivals(3), UniformDelay(1), ConstantSteps(2))
    eta_L_ = 0.009
    e = 0.9 * theorem3.admissible_step_sizes(L=1.0, eta_L=eta_L_, K_max=2, tau=1, num_workers=6).require()
    conds = theorem3.conditions(L=1.0, eta=e, eta_L=eta_L_, K_max=2, tau=1, num_workers=6)
    bound = lambda tr: theorem3.bound(
        tr.schedule,
        p.constants,
        eta=e,
        eta_L=eta_L_,  # noqa: E731
        f0=p.value(tr.x0),
        num_workers=6,
        scope="ignore",
    )
    v = verify_bound(
        p,
        AFACD(e, eta_L_),
        beh,
        bound,
        rounds=50,
        replicates=64,
        conditions=conds,
        control=lambda tr: bound(tr) / 1e3,
        control_description="bound/1000",
    )
    assert v.passed and v.inside_conditions is True and v.ok
    assert v.method.startswith("monte-carlo") and v.ci[1] >= v.measured


def test_unknown_symbol_is_an_error():
    with pytest.raises(ValueError, match="unknown symbol"):
        verify_bound(P, AFACD(1.0, 0.05), BEH, sp.Symbol("gamma") / T, rounds=5, replicates=2)
    assert {"T", "m", "M", "tau", "Kbar", "Ktilde", "Khat2", "Delta", "sigma_G"} <= set(SCHEDULE_SYMBOLS)


def test_verify_rate_exact_slope_and_wrong_control():
    """Gradient descent on a quadratic (σ = 0, m = M, K = 1) with η_L = c/√T: the exact slope of the time
    average in T is close to −1/2 (transient-dominated); the wrong slope 0 control fails."""
    p = HeterogeneousQuadratic(dim=3, num_workers=4, L=1.0, mu=0.01, sigma_L=0.0, sigma_G=0.0, seed=1)
    v = verify_rate(
        p,
        lambda t: AFACD(1.0, 0.5 / np.sqrt(t)),
        BEH,
        over="T",
        values=[100, 400, 1600],
        slope=-0.5,
        replicates=2,
        tol=0.08,
        wrong=0.0,
    )
    assert v.method == "exact moments" and v.passed and v.ok
    with pytest.raises(ValueError, match="at least 3"):
        verify_rate(p, AFACD(1.0, 0.1), BEH, over="T", values=[10, 20], slope=-1, replicates=2)
