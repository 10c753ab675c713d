"""Yu, Yang, Zhu 2019 (AAAI) Theorem 1 and its corollary as published Claims (afltheory/published/yu2019.py,
their engine forms ``Claim.engine()``): one definition of the bound (theory.yu_local_sgd), the corollary's
printed form, the verdicts on the checks' instances with hand-derived numbers, the PEP bracket. Exact moments
and an SDP: no randomness, no confidence level involved."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

from afltheory.anarchy import Behaviour, ConstantSteps, UniformArrivals
from afltheory.claims import verify
from afltheory.published import STATEMENTS, yu2019
from afltheory.published.registry import engine_forms
from afltheory.published.yu2019 import iso as _iso
from afltheory.theory import yu_local_sgd as yu
from afltheory.theory.symbols import M, N, eta, eta_L, s, sigma, sigma_L

CLAIMS = engine_forms()
IDS = ("published.yu2019.thm1", "published.yu2019.cor2")


def test_one_definition_of_the_bound():
    # the statement's terms ARE theory.yu_local_sgd's (the same objects); the claim's are their substitution
    assert yu2019.THM1.bound == yu.SETTING_TERM_EXPRS["iid"]
    assert sp.simplify(yu2019.THM1.total() - yu.bound_expr("iid")) == 0
    back = {eta_L: s / eta, M: N, sigma_L: sigma}
    for cid in IDS[:1]:
        c = CLAIMS[cid]
        assert (
            sp.simplify(sp.Add(*c.bound.values()).subs(back, simultaneous=True) - yu.bound_expr("iid")) == 0
        )
    # bound_terms (numeric) evaluates the same sympy terms: hand values
    t = yu.bound_terms(T=10, s=0.1, L=1, K=2, N=2, sigma=2, G=1, f0=3, f_star=0)
    assert t == pytest.approx({"transient": 6.0, "sigma": 0.2, "G_drift": 0.16}, rel=1e-12)


def test_corollary_is_theorem_1_at_its_step_and_the_notes_print_it_right():
    for name, printed in yu2019.COR2_PRINTED.items():
        assert sp.simplify(yu2019.COR2.bound[name] - printed) == 0, name
    assert sp.simplify(yu2019.COR2.total() - yu.rate("iid")) == 0
    # the corollary's claim: η_L = √M/(L√T) with η = 1, condition T ≥ M (s ≤ 1/L)
    c = CLAIMS["published.yu2019.cor2"]
    assert c.algorithm({"M": 4, "L": 1, "T": 100}).eta_L == pytest.approx(0.2)
    assert c.rate == {"T": -0.5}


def test_provenance_is_stated():
    for sid in ("yu2019.thm1", "yu2019.cor2"):
        st = STATEMENTS[sid]
        assert st.confidence.startswith("read (secondary: lecture notes") and "seed 004" in st.source
        assert "untagged" in st.source and st.location.path.endswith("004_7fb80dd1afdad999.txt")
        assert "not retrieved" in st.source and st.excerpt
    for cid in IDS:
        c = CLAIMS[cid]
        assert c.confidence == "read" and "Engine form: K = 1" in c.reading
        assert c.assumptions.max_local_steps == 1 and c.values == {"G": sigma_L}
        assert cid.removeprefix("published.") in {st.id for st in yu2019.STATEMENTS if st.runnable}


def test_verdicts_pass_with_failing_controls_and_hand_numbers():
    vs = {v.id: v for v in yu2019.verify()}
    assert set(vs) == {
        "published.yu2019.thm1.transient",
        "published.yu2019.thm1.noise",
        "published.yu2019.cor2",
        "published.yu2019.cor2.rate_T",
    }
    for v in vs.values():
        assert v.passed and v.inside_conditions and v.method == "exact moments", v.id
        assert v.negative_control is not None and not v.negative_control.passed, v.id
    # transient: f = ½‖x‖² (L = 1), x_0 = 2e_1, s = 1/2, σ_L = 0.5 over 4 workers, T = 20: mean part
    # (1/20) Σ 4·4^{−t}, noise part v_{t+1} = v_t/4 + s²σ²/N (v_∞ = 1/48)
    mean = 4 / 20 * (1 - 0.25**20) / 0.75
    noise = (1 / 48) * (20 - (1 - 0.25**20) / 0.75) / 20
    v = vs["published.yu2019.thm1.transient"]
    assert v.measured == pytest.approx(mean + noise, rel=1e-9)
    assert v.theoretical == pytest.approx(0.4 + 0.03125 + 0.25, rel=1e-12)  # Δ = 2; G = σ_L
    # noise: 2 workers, σ_L = 1, s = 1/10, from x*, T = 200: v_{t+1} = 0.81 v_t + 0.005
    vinf = 0.005 / 0.19
    v = vs["published.yu2019.thm1.noise"]
    assert v.measured == pytest.approx(vinf * (200 - (1 - 0.81**200) / 0.19) / 200, rel=1e-9)
    assert v.theoretical == pytest.approx(0.1 * 1 / 2 + 4 * 0.01, rel=1e-12)
    v = vs["published.yu2019.cor2.rate_T"]
    assert abs(v.measured + 0.5) <= 0.05


def test_false_variant_fails_on_the_transient_instance():
    p = _iso(4, 0.5)
    from afltheory.algorithms import FedAvg

    v = verify(
        yu2019.THM1.false_variant(10),
        p,
        Behaviour(UniformArrivals(4), local_steps=ConstantSteps(1)),
        rounds=20,
        x0=p.constants.x_star + np.array([2.0, 0.0]),
        algorithm=FedAvg(1.0, 0.5),
        control=None,
    )
    assert v.passed and v.measured > v.theoretical  # expect="fails": passes because it is violated


def test_outside_the_engine_form_is_said():
    # K = 2 local steps: outside "one_local_step (engine form)" — the verdict says so
    p = _iso(4, 0.5)
    from afltheory.algorithms import FedAvg

    v = verify(
        CLAIMS["published.yu2019.thm1"],
        p,
        Behaviour(UniformArrivals(4), local_steps=ConstantSteps(2)),
        rounds=5,
        algorithm=FedAvg(1.0, 0.5),
        control=None,
    )
    assert v.inside_conditions is False and "one_local_step" in v.notes


def test_pep_bracket_is_the_quadratic_worst_case():
    pytest.importorskip("PEPit", reason="needs the pep extra: pip install 'afltheory[pep]'")
    from afltheory.pep.claims import claim_pep

    p = claim_pep(
        CLAIMS["published.yu2019.thm1"], T=10, K=1, values={"L": 1.0, "Delta": 1.0, "eta": 1.0, "eta_L": 0.5}
    )
    # GD, s = 1/2, on f = ½x², f(x_0) = 1: (1/10) Σ_{t<10} 2·4^{−t}; the bound 2Δ/(sT) = 0.4 (σ_L = 0 ⇒ G = 0)
    hand = 0.2 * (1 - 0.25**10) / 0.75
    assert p.bound == pytest.approx(0.4, rel=1e-12) and p.inside_conditions
    assert p.upper == pytest.approx(hand, rel=1e-4) and p.lower == pytest.approx(hand, rel=1e-4)
    assert p.holds
