"""Conditions just inside / just outside each boundary; admissible eta on the boundary; sympy == numeric."""

import math

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from afltheory.theory import Infeasible, theorem2, theorem3, theorem4
from afltheory.theory._condition import symbol_map

IN, OUT = 1 - 1e-9, 1 + 1e-9


def by_name(conds):
    return {c.name: c for c in conds}


# ------------------------------------------------------------------ Theorem 2
def test_thm2_C1_boundary():
    # K = 3: 2K^2 - 3K + 1 = 10 -> 60 eta_L^2 L^2 <= 1 at L = 1: eta_L* = 1/sqrt(60)
    b = 1 / math.sqrt(60)
    assert by_name(theorem2.conditions(L=1, eta=0.1, eta_L=b * IN, K_max=3, tau=0))["C1"].holds
    c = by_name(theorem2.conditions(L=1, eta=0.1, eta_L=b * OUT, K_max=3, tau=0))["C1"]
    assert not c.holds and c.slack < 0
    # K = 1: 2 - 3 + 1 = 0, (C1) holds for every eta_L
    assert by_name(theorem2.conditions(L=100, eta=1e-6, eta_L=10, K_max=1, tau=0))["C1"].slack == 1.0


def test_thm2_C2_boundary_and_strictness():
    # 180 eta_L^2 K^2 L^2 tau < 1 with eta_L=0.01, K=2, L=1: 0.072 tau < 1 <=> tau < 13.89
    assert by_name(theorem2.conditions(L=1, eta=1, eta_L=0.01, K_max=2, tau=13))["C2"].holds
    assert not by_name(theorem2.conditions(L=1, eta=1, eta_L=0.01, K_max=2, tau=14))["C2"].holds
    # exactly on the boundary a strict inequality fails: 180 * eta_L^2 * 1 * 1 * tau = 1 with eta_L^2 =
    # 1/180/tau
    c = by_name(theorem2.conditions(L=1, eta=1, eta_L=0.5, K_max=1, tau=1 / 45))["C2"]  # 180 * .25 / 45 = 1
    assert c.lhs == pytest.approx(1.0) and c.strict


def test_thm2_C3_boundary_and_admissible():
    # 6 x^2 + 2 x = 1 at tau = L = 1: x* = (-2 + sqrt(28))/12
    x_star = (-2 + math.sqrt(28)) / 12
    a = theorem2.admissible_step_sizes(L=1, eta_L=0.01, K_max=1, tau=1)
    assert a.feasible and a.binding == "C3"
    assert a.eta_max == pytest.approx(x_star / 0.01, rel=1e-14)
    conds = by_name(theorem2.conditions(L=1, eta=a.eta_max, eta_L=0.01, K_max=1, tau=1))
    assert conds["C3"].holds and 0 <= conds["C3"].slack < 1e-12
    assert all(c.holds for c in conds.values())
    assert not by_name(theorem2.conditions(L=1, eta=a.eta_max * OUT, eta_L=0.01, K_max=1, tau=1))["C3"].holds
    assert by_name(theorem2.conditions(L=1, eta=a.eta_max * IN, eta_L=0.01, K_max=1, tau=1))["C3"].holds
    # the exact sympy value agrees
    assert float(
        a.eta_max_expr.subs(
            {
                sp.Symbol("L", positive=True): 1,
                sp.Symbol("tau", nonnegative=True): 1,
                sp.Symbol("eta_L", positive=True): 0.01,
            }
        )
    ) == pytest.approx(a.eta_max, rel=1e-14)
    # tau = 0: 2 L x <= 1
    assert theorem2.admissible_step_sizes(L=2, eta_L=0.1, K_max=1, tau=0).eta_max == pytest.approx(2.5)


def test_infeasible_is_reported_not_zero():
    a = theorem2.admissible_step_sizes(L=1, eta_L=0.1, K_max=5, tau=4)  # the paper's MNIST numbers
    assert not a.feasible and a.eta_max is None and not a
    assert set(a.blocking) == {"C1", "C2"}
    # the eta-condition's own boundary is still reported (2 x + 96 x^2 = 1 -> x = 0.0921756)
    assert a.eta_root == pytest.approx(0.921756021, rel=1e-8)
    with pytest.raises(Infeasible, match="C1"):
        a.require()
    assert isinstance(Infeasible("x"), ValueError)


# ------------------------------------------------------------------ Theorem 3
def test_thm3_boundaries():
    # (C3) 120 L^2 K^2 eta_L^2 tau < 1, L=1, K=2, eta_L=0.01: 0.048 tau < 1 <=> tau < 20.83
    assert by_name(theorem3.conditions(L=1, eta=1, eta_L=0.01, K_max=2, tau=20, num_workers=10))["C3"].holds
    assert not by_name(theorem3.conditions(L=1, eta=1, eta_L=0.01, K_max=2, tau=21, num_workers=10))[
        "C3"
    ].holds
    # (C2) L x + L^2 x^2 tau^2 <= 1/(2M): M = 10, L = 1, tau = 2: 4x^2 + x = 0.05
    x_star = (-1 + math.sqrt(1 + 16 * 0.05)) / 8
    a = theorem3.admissible_step_sizes(L=1, eta_L=0.01, K_max=2, tau=2, num_workers=10)
    assert a.binding == "C2" and a.eta_max == pytest.approx(x_star / 0.01, rel=1e-13)
    c = by_name(theorem3.conditions(L=1, eta=a.eta_max, eta_L=0.01, K_max=2, tau=2, num_workers=10))["C2"]
    assert c.holds and c.slack < 1e-12
    assert not by_name(
        theorem3.conditions(L=1, eta=a.eta_max * OUT, eta_L=0.01, K_max=2, tau=2, num_workers=10)
    )["C2"].holds
    # (C1) at the paper's numbers blocks everything
    a = theorem3.admissible_step_sizes(L=1, eta_L=0.1, K_max=5, tau=4, num_workers=10)
    assert not a.feasible and "C1" in a.blocking


# ------------------------------------------------------------------ Theorem 4
def test_thm4_boundaries():
    # (C3) 30 L^2 eta_L^2 tau K^2 <= 1/4, L=1, eta_L=0.01, K=2: 0.012 tau <= .25 <=> tau <= 20.83
    kw = dict(L=1, eta=1, eta_L=0.01, K_max=2, num_workers=10, m_fresh=5)
    assert by_name(theorem4.conditions(tau=20, **kw))["C3"].holds
    assert not by_name(theorem4.conditions(tau=21, **kw))["C3"].holds
    # (C2) (L/2 + x (M-m')^2 L^2 tau^2/M^2) x <= 1/4, M=10, m'=5, tau=2, L=1: x^2 + x/2 = 1/4
    x_star = (-0.5 + math.sqrt(0.25 + 1)) / 2
    a = theorem4.admissible_step_sizes(L=1, eta_L=0.01, K_max=2, tau=2, num_workers=10, m_fresh=5)
    assert a.binding == "C2" and a.eta_max == pytest.approx(x_star / 0.01, rel=1e-13)
    kw.pop("eta")
    assert by_name(theorem4.conditions(eta=a.eta_max, tau=2, **kw))["C2"].slack < 1e-12
    assert not by_name(theorem4.conditions(eta=a.eta_max * OUT, tau=2, **kw))["C2"].holds
    # all slots fresh (m' = M): the delay drops out of (C2): x <= 1/2
    a = theorem4.admissible_step_sizes(L=1, eta_L=0.001, K_max=1, tau=50, num_workers=10, m_fresh=10)
    assert a.eta_max == pytest.approx(500.0)
    # m given instead of m_fresh
    assert theorem4.admissible_step_sizes(
        L=1, eta_L=0.01, K_max=2, tau=2, num_workers=10, m=5
    ).eta_max == pytest.approx(x_star / 0.01, rel=1e-13)


# ------------------------------------------------------------------ sympy vs numeric
POINTS = [
    dict(L=1.0, eta=1.0, eta_L=0.1, K_max=5.0, tau=4.0, M=10, m_fresh=5),
    dict(L=0.3, eta=2.5, eta_L=0.013, K_max=1.0, tau=0.0, M=3, m_fresh=1),
    dict(L=7.0, eta=0.01, eta_L=0.002, K_max=17.0, tau=9.0, M=100, m_fresh=20),
]


@pytest.mark.parametrize("mod", [theorem2, theorem3, theorem4])
@pytest.mark.parametrize("pt", POINTS)
def test_sympy_and_numeric_agree(mod, pt):
    subs = symbol_map(pt)
    for spec in mod.SPECS:
        lhs, rhs = spec.numeric(**pt)
        slhs, srhs = spec.evaluate_sympy(subs)
        assert slhs == pytest.approx(float(lhs), rel=1e-12, abs=1e-15)
        assert srhs == pytest.approx(float(rhs), rel=1e-12)
        assert bool(spec.expr.subs(subs)) == ((lhs < rhs) if spec.strict else (lhs <= rhs))


@pytest.mark.parametrize(
    "mod,extra",
    [(theorem2, {}), (theorem3, dict(num_workers=10)), (theorem4, dict(num_workers=10, m_fresh=4))],
)
def test_region_matches_admissible(mod, extra):
    etas = np.geomspace(1e-3, 1e3, 61)
    eLs = np.geomspace(1e-4, 1.0, 41)
    R = mod.region(etas, eLs, L=1.5, K_max=3, tau=2, **extra)
    assert R.shape == (41, 61)
    for j, eL in enumerate(eLs):
        a = mod.admissible_step_sizes(L=1.5, eta_L=eL, K_max=3, tau=2, **extra)
        want = np.zeros(61, bool) if not a.feasible else etas <= a.eta_max
        np.testing.assert_array_equal(R[j], want)
    assert R.any() and not R.all()


# ------------------------------------------------------------------ monotonicity (hypothesis)
def _emax(mod, extra, **kw):
    a = mod.admissible_step_sizes(**kw, **extra)
    return a.eta_max if a.feasible else 0.0


MODS = [(theorem2, {}), (theorem3, dict(num_workers=10)), (theorem4, dict(num_workers=10, m_fresh=3))]
pos = st.floats(1e-3, 1e2)


@settings(max_examples=60, deadline=None)
@given(
    L=st.floats(1e-2, 10),
    eta_L=st.floats(1e-5, 1.0),
    K=st.floats(1, 50),
    tau=st.floats(0, 50),
    dL=st.floats(0, 10),
    dK=st.floats(0, 20),
    dtau=st.floats(0, 20),
    which=st.integers(0, 2),
)
def test_admissible_shrinks_in_tau_K_L(L, eta_L, K, tau, dL, dK, dtau, which):
    mod, extra = MODS[which]
    base = _emax(mod, extra, L=L, eta_L=eta_L, K_max=K, tau=tau)
    assert _emax(mod, extra, L=L, eta_L=eta_L, K_max=K, tau=tau + dtau) <= base
    assert _emax(mod, extra, L=L, eta_L=eta_L, K_max=K + dK, tau=tau) <= base
    assert _emax(mod, extra, L=L + dL, eta_L=eta_L, K_max=K, tau=tau) <= base


@settings(max_examples=25, deadline=None)
@given(
    L=st.floats(1e-2, 10),
    K=st.floats(1, 20),
    tau=st.floats(0, 20),
    dtau=st.floats(0, 10),
    dK=st.floats(0, 10),
    dL=st.floats(0, 5),
    which=st.integers(0, 2),
)
def test_region_is_nested(L, K, tau, dtau, dK, dL, which):
    mod, extra = MODS[which]
    etas, eLs = np.geomspace(1e-3, 1e3, 25), np.geomspace(1e-5, 1.0, 20)
    R0 = mod.region(etas, eLs, L=L, K_max=K, tau=tau, **extra)
    R1 = mod.region(etas, eLs, L=L + dL, K_max=K + dK, tau=tau + dtau, **extra)
    assert not np.any(R1 & ~R0)


# ------------------------------------------------------------------ bad input
@pytest.mark.parametrize(
    "mod,extra",
    [(theorem2, {}), (theorem3, dict(num_workers=10)), (theorem4, dict(num_workers=10, m_fresh=5))],
)
def test_bad_input(mod, extra):
    ok = dict(L=1.0, eta=1.0, eta_L=0.1, K_max=2, tau=1, **extra)
    for name, bad, pat in [
        ("L", None, "L"),
        ("tau", -1, "tau"),
        ("K_max", 0.5, "K_max"),
        ("eta", float("nan"), "eta"),
        ("eta_L", float("inf"), "eta_L"),
        ("L", 0.0, "L"),
        ("tau", None, "tau"),
        ("K_max", "3", "K_max"),
    ]:
        with pytest.raises(ValueError, match=pat):
            mod.conditions(**dict(ok, **{name: bad}))
    with pytest.raises(ValueError, match="eta_L"):
        mod.admissible_step_sizes(**{k: v for k, v in ok.items() if k not in ("eta", "eta_L")})
    with pytest.raises(ValueError, match="eta"):
        mod.region([0.0, 1.0], [0.1], **{k: v for k, v in ok.items() if k not in ("eta", "eta_L")})


def test_m_exceeds_M():
    with pytest.raises(ValueError, match="m=12 exceeds num_workers=10"):
        theorem3.conditions(L=1, eta=1, eta_L=0.1, K_max=2, tau=1, num_workers=10, m=12)
    with pytest.raises(ValueError, match="m=12 exceeds num_workers=10"):
        theorem4.conditions(L=1, eta=1, eta_L=0.1, K_max=2, tau=1, num_workers=10, m=12)
    with pytest.raises(ValueError, match="m_fresh"):
        theorem4.conditions(L=1, eta=1, eta_L=0.1, K_max=2, tau=1, num_workers=10, m_fresh=11)
    with pytest.raises(ValueError, match="num_workers"):
        theorem3.conditions(L=1, eta=1, eta_L=0.1, K_max=2, tau=1, num_workers=0)
    with pytest.raises(ValueError, match="num_workers"):
        theorem3.conditions(L=1, eta=1, eta_L=0.1, K_max=2, tau=1)


def test_paper_mnist_settings_finding():
    """eta=1, eta_L=0.1, K=5, tau=4 (MNIST LR, App. E), L=1: only Theorem 4's (C2) holds."""
    held = {
        name: [c.holds for c in mod.conditions(L=1.0, eta=1.0, eta_L=0.1, K_max=5, tau=4, **ex)]
        for name, mod, ex in (
            ("T2", theorem2, {}),
            ("T3", theorem3, dict(num_workers=10)),
            ("T4", theorem4, dict(num_workers=10, m_fresh=5)),
        )
    }
    assert held == {"T2": [False, False, False], "T3": [False, False, False], "T4": [False, True, False]}
    c1 = theorem2.conditions(L=1.0, eta=1.0, eta_L=0.1, K_max=5, tau=4)[0]
    assert c1.lhs == pytest.approx(2.16)  # 6 * 0.01 * 36 * 1


def test_condition_functions_signatures_follow_the_declared_parameter_lists():
    """``_afa.condition_functions`` writes the three functions from each theorem's ``Param`` list: the
    keyword lists below are the public API, written out by hand; misuse raises TypeError naming the
    function."""
    import inspect

    base = ["L", "eta", "eta_L", "K_max", "tau"]
    expect = {
        theorem2: (base, ["L", "eta_L", "K_max", "tau"], ["eta", "eta_L", "L", "K_max", "tau"]),
        theorem3: (
            base + ["num_workers", "m"],
            ["L", "eta_L", "K_max", "tau", "num_workers"],
            ["eta", "eta_L", "L", "K_max", "tau", "num_workers"],
        ),
        theorem4: (
            base + ["num_workers", "m_fresh", "m"],
            ["L", "eta_L", "K_max", "tau", "num_workers", "m_fresh", "m"],
            ["eta", "eta_L", "L", "K_max", "tau", "num_workers", "m_fresh"],
        ),
    }
    for mod, names in expect.items():
        for f, want in zip((mod.conditions, mod.admissible_step_sizes, mod.region), names, strict=True):
            sig = inspect.signature(f)
            assert list(sig.parameters) == want, (mod.__name__, f.__name__)
            assert f.__module__ == mod.__name__ and f.__doc__ and inspect.isfunction(f)
        kinds = [p.kind for p in inspect.signature(mod.region).parameters.values()]
        assert kinds[:2] == [inspect.Parameter.POSITIONAL_OR_KEYWORD] * 2
        assert set(kinds[2:]) == {inspect.Parameter.KEYWORD_ONLY}
        with pytest.raises(TypeError, match=r"conditions\(\) got an unexpected keyword argument 'bogus'"):
            mod.conditions(L=1.0, eta=0.1, eta_L=0.01, K_max=2, tau=0.0, bogus=1)
        with pytest.raises(TypeError, match=r"admissible_step_sizes\(\) too many positional"):
            mod.admissible_step_sizes(1.0)
    # theorem4 reads m' from m when m_fresh is omitted: the same conditions as m_fresh = m
    kw = dict(L=1.0, eta=0.5, eta_L=0.01, K_max=2, tau=2.0, num_workers=4)
    assert theorem4.conditions(m=1, **kw) == theorem4.conditions(m_fresh=1, **kw)
    assert theorem4.conditions(m=1, **kw) != theorem4.conditions(m_fresh=3, **kw)
