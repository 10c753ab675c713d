"""bound_terms(...) (contract B): named terms in order, per replicate, summing exactly to bound(...);
hand values on the tiny schedule of conftest.py (numbers as in test_bounds.py's docstring)."""

from fractions import Fraction as F

import numpy as np
import pytest

from afltheory.analysis import dominant_term, format_shares, term_shares
from afltheory.anarchy import Behaviour, BiasedArrivals, UniformDelay, UniformSteps
from afltheory.theory import lemmas, theorem2, theorem3, theorem4
from afltheory.theory import yu_local_sgd as yu

KW = dict(eta=1.0, eta_L=0.05, f0=3.0)


def _sched(R=3, T=7, M=6, m=2, seed=0):
    return Behaviour(
        BiasedArrivals(m, np.linspace(1, 2, M) / np.linspace(1, 2, M).sum()),
        UniformDelay(3),
        UniformSteps.paper(2),
    ).sample(T, R, M, seed)


@pytest.mark.parametrize(
    "mod,extra",
    [
        (theorem2, {}),
        (theorem3, {}),
        (theorem3, {"averaging": "proof"}),
        (theorem4, {}),
        (theorem4, {"khat": "mean", "f_T": 0.5}),
        (theorem2, {"tau": 5}),
        (theorem3, {"tau": 5}),
    ],
)
def test_terms_sum_exactly_to_bound(mod, extra, consts):
    s = _sched()
    terms = mod.bound_terms(s, consts, eta=0.8, eta_L=0.03, f0=2.0, **extra)
    assert tuple(terms) == mod.TERMS
    assert all(v.shape == (s.replicates,) for v in terms.values())
    total = np.zeros(s.replicates)
    for v in terms.values():
        total = total + v
    np.testing.assert_array_equal(total, mod.bound(s, consts, eta=0.8, eta_L=0.03, f0=2.0, **extra))
    sh = term_shares(terms)
    assert sum(sh.values()) == pytest.approx(1.0, abs=1e-12)


def test_theorem2_terms_hand(tiny, consts):
    # L=2, x=eta_L=1/20, tau=1, m=2, sigma_L=1, sigma_G=1/2; mean_t 1/(m Kbar_t) = (3/8 + 1/3)/2 = 17/48
    t = theorem2.bound_terms(tiny, consts, **KW)
    L, x = F(2), F(1, 20)
    want = {
        "transient": 120,
        "sigma_L_server": 4 * L * x * F(17, 48),
        "sigma_L_delay": 4 * 3 * L**2 * x**2 * F(17, 48),
        "sigma_L_drift": 4 * F(15, 2) * L**2 * x**2 * F(7, 4),
        "sigma_G_floor": F(6, 4),
        "sigma_G_drift": 4 * F(1, 4) * 45 * L**2 * x**2 * F(15, 4),
    }
    for k, v in want.items():
        assert t[k][0] == pytest.approx(float(v), rel=1e-13), k


def test_theorem3_terms_hand(tiny, consts):
    t = theorem3.bound_terms(tiny, consts, **KW)
    L, x = F(2), F(1, 20)
    want = {
        "transient": 120,
        "sigma_L_server": 4 * L * x / 2 * F(17, 24),
        "sigma_L_delay": 4 * 2 * L**2 * x**2 / 2 * F(17, 24),
        "sigma_L_drift": 4 * 5 * x**2 * L**2 * F(7, 4),
        "sigma_G_drift": 4 * F(1, 4) * 30 * L**2 * x**2 * F(15, 4),
    }
    for k, v in want.items():
        assert t[k][0] == pytest.approx(float(v), rel=1e-13), k


def test_theorem4_terms_hand(tiny, consts):
    # slots: round 0 K [1,2,1], m'=3; round 1 K [1,3,1], m'=1; tau = 1, M = 3
    t = theorem4.bound_terms(tiny, consts, **KW)
    L, x, M = F(2), F(1, 20), 3
    want = {
        "transient": 120,
        "sigma_L_drift": 4 * 5 * L**2 * x**2 * (F(4, 3) + F(5, 3)) / 2,
        "sigma_L_server": 4 * (L / 2) * 2 * x * (F(5, 6) + F(7, 9)) / M / 2,
        "sigma_L_stale": 4 * x * F(4, 9) * L**2 * 2 * x * F(7, 9) / M / 2,
        "sigma_G_drift": F(1, 4) * 120 * L**2 * x**2 / M * F(17, 2),
    }
    for k, v in want.items():
        assert t[k][0] == pytest.approx(float(v), rel=1e-13), k


def test_yu_terms():
    t = yu.bound_terms(T=10, s=0.1, L=1, K=2, N=2, sigma=2, G=1, f0=3, f_star=0)
    assert t == pytest.approx({"transient": 6.0, "sigma": 0.2, "G_drift": 0.16})
    assert sum(t.values()) == yu.bound(T=10, s=0.1, L=1, K=2, N=2, sigma=2, G=1, f0=3, f_star=0)
    t = yu.bound_terms(
        setting="noniid", T=10, s=0.1, L=1, K=2, N=2, sigma=2, G=1, sigma_G=0.5, f0=3, f_star=0
    )
    assert tuple(t) == yu.TERMS["noniid"] and t["sigma_G_drift"] == pytest.approx(9 * 0.01 * 4 * 0.25)
    assert t["G_drift"] == pytest.approx(0.08)


def test_lemma_terms():
    g, K = np.array([0.5, 2.0]), np.array([1, 3])
    t = lemmas.drift_bound_terms(g, K, 0.1, 1.0, 0.5)
    assert tuple(t) == ("sigma_L", "sigma_G", "gradient")
    np.testing.assert_allclose(t["sigma_L"], 5 * K * 0.01)
    np.testing.assert_allclose(t["sigma_G"], 30 * K**2 * 0.01 * 0.25)
    np.testing.assert_allclose(t["gradient"], 30 * K**2 * 0.01 * g)
    np.testing.assert_array_equal(
        t["sigma_L"] + t["sigma_G"] + t["gradient"], lemmas.drift_bound(g, K, 0.1, 1.0, 0.5)
    )
    e = np.array([[[1.0, 0.0], [0.0, 2.0]]])
    t2 = lemmas.lemma2_bound_terms(e, np.array([[1, 2]]), 1.0)
    assert t2["mean"][0] == pytest.approx(10.0) and t2["sigma_L"][0] == pytest.approx(3.0)
    assert lemmas.lemma2_bound(e, np.array([[1, 2]]), 1.0)[0] == pytest.approx(13.0)


def test_term_shares_and_errors():
    sh = term_shares({"a": np.array([1.0, 3.0]), "b": np.array([2.0, 2.0])})
    assert sh == pytest.approx({"a": 0.5, "b": 0.5})
    assert dominant_term({"a": 1.0, "b": 3.0}) == ("b", 0.75)
    assert format_shares({"a": 0.25, "b": 0.75}) == "b 75%, a 25%"
    with pytest.raises(ValueError, match="empty"):
        term_shares({})
    with pytest.raises(ValueError, match="negative"):
        term_shares({"a": -1.0, "b": 2.0})
    with pytest.raises(ValueError, match="sum to"):
        term_shares({"a": 0.0})
    with pytest.raises(ValueError, match="non-finite"):
        term_shares({"a": float("nan")})
