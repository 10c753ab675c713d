"""The statements no engine runs are registered claims (issue 38, ``afltheory.claims.stated``): Theorem 1,
Corollaries 1–3, Lemmas 1–2 and bound (1), Dynamic FedAvg, MOCHA. Each registered bound is held, at one
point, to a value derived by hand and to the theory module's own function (the claim and the module compute
the same number); each is not runnable, with its reason (its docs/theorems.md location: test_one_claim.py);
the adversary's corollary and lemma searches are attached to these claims; ``afltheory claims`` lists the
whole registry and docs/claims_registry.md is its ``registry`` action's output."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from afltheory.claims import stated
from afltheory.published import registry
from afltheory.theory import corollaries, lemmas, mocha, theorem1

ROOT = Path(__file__).resolve().parents[2]


def test_each_stated_claim_is_registered_once_not_runnable_with_its_reason():
    ids = [c.id for c in stated.STATED]
    assert ids == [
        "yang2022.thm1",
        "yang2022.cor1",
        "yang2022.cor2",
        "yang2022.cor3",
        "yang2022.lemma1",
        "yang2022.lemma2",
        "yang2022.drift",
        "rizk2020.msd",
        "rizk2020.msd_explicit",
        "smith2017.mocha_thm1",
        "smith2017.mocha_thm2",
    ]
    for c in stated.STATED:
        assert registry.get(c.id) is c and not c.runnable and c.why_not_a_claim, c.id
        with pytest.raises(ValueError, match="has no engine form"):
            c.engine()
    assert [c.id for c in registry.select(kind="lemma")] == ids[4:7]
    assert [c.id for c in registry.select(paper="yang2022", kind="corollary")] == ids[1:4]
    assert registry.get("yang2022.thm1").lower_bound
    assert {c.id for c in registry.select(paper="yang2022", runnable=True)} == {
        "yang2022.thm2",
        "yang2022.thm3",
        "yang2022.thm4",
    }


def test_theorem1_lower_bound_is_the_constructions_limit():
    # σ_G = 2G in the construction: G = 1 gives σ_G² = 4 = the limit 4G²
    c = registry.get("yang2022.thm1")
    assert c.value({"sigma_G": 2.0}) == 4.0 == theorem1.predicted_limit(1.0)
    assert c.value({"sigma_G": 2 * 1.5}) == pytest.approx(theorem1.predicted_limit(1.5)) == 9.0


@pytest.mark.parametrize(
    ("k", "point", "by_hand"),
    [
        # 1/√(mKT) + τ²/T + K²/T + 1 = 1/4 + 1/4 + 1 + 1 at m = K = 2, T = 4, τ = 1
        (1, {"m": 2, "K": 2, "T": 4, "tau": 1}, 2.5),
        # the same without the σ_G² floor
        (2, {"m": 2, "K": 2, "T": 4, "tau": 1}, 1.5),
        # 1/√(MKT) + τ²(M − m')²/(M²T) = 1/4 + 4·4/(16·4) at M = 4, K = 1, T = 4, τ = 2, M − m' = 2
        (3, {"M": 4, "K": 1, "T": 4, "tau": 2, "M_c": 2}, 0.5),
    ],
)
def test_corollary_rates_by_hand_and_as_the_theory_module_prints_them(k, point, by_hand):
    c = registry.get(f"yang2022.cor{k}")
    module = {s: point[str(s)] for s in corollaries.printed_rate(k).free_symbols}
    assert c.value(point) == pytest.approx(by_hand) == float(corollaries.printed_rate(k).subs(module))
    assert c.constant == "hidden" and not c.constants_explicit


def test_lemma1_and_lemma2_by_hand_and_by_theory_lemmas():
    # Lemma 1: σ_L²/K = 9/2 at σ_L = 3, K = 2
    l1 = registry.get("yang2022.lemma1")
    assert l1.value({"sigma_L": 3, "K": 2}) == 4.5 == float(lemmas.lemma1_variance_bound(3.0, 2))
    # Lemma 2, m = 2 arrivals with E G = (1, 0), (0, 2) and K = 1, 2; σ_L = 2: ‖Σ E G‖² = 5, Σ 1/K = 3/2
    # (K̄ = m / Σ 1/K = 4/3): 2·5 + 2·(3/2)·4 = 22
    l2 = registry.get("yang2022.lemma2")
    EG, Ks = np.array([[1.0, 0.0], [0.0, 2.0]]), np.array([1.0, 2.0])
    terms = lemmas.lemma2_bound_terms(EG, Ks, 2.0)
    point = {"mean_sq": 5.0, "m": 2, "Kbar": 4 / 3, "sigma_L": 2.0}
    assert l2.value(point) == pytest.approx(22.0) == float(lemmas.lemma2_bound(EG, Ks, 2.0))
    assert l2.term_values(point) == pytest.approx({k: float(v) for k, v in terms.items()})


def test_drift_bound_and_its_condition_by_hand_and_by_theory_lemmas():
    # K = 2, η_L = 0.1, σ_L = σ_G = 1, ‖∇f‖² = 2: 5·2·0.01·1 + 30·4·0.01·1 + 30·4·0.01·2 = 0.1 + 1.2 + 2.4
    c = registry.get("yang2022.drift")
    point = {"K": 2, "eta_L": 0.1, "sigma_L": 1.0, "sigma_G": 1.0, "grad_sq": 2.0}
    terms = lemmas.drift_bound_terms(2.0, 2, 0.1, 1.0, 1.0)
    assert c.value(point) == pytest.approx(3.7) == float(lemmas.drift_bound(2.0, 2, 0.1, 1.0, 1.0))
    assert c.term_values(point) == pytest.approx({k: float(v) for k, v in terms.items()})
    # (C1) 6 η_L²(2K² − 3K + 1)L² = 0.18 L² ≤ 1: holds at L = 1, fails at L = 3 (1.62)
    for L, holds in ((1.0, True), (3.0, False)):
        assert (
            c.conditions_hold({**point, "L": L}) == {"C1": holds}
            and lemmas.drift_condition(L, 0.1, 2) is holds
        )


def test_dynamic_fedavg_bounds_by_hand():
    # μ = 0.1, ν = δ = β_s² = 1: λ = 1 − 0.2 + 0.01·2 = 0.82; σ_s² = 1, ε² = 0.5, σ_q² = 0.01:
    # [0.01·1 + 0.01·0.5 + 0.82·0.01] / 0.18 = 0.0232/0.18
    c = registry.get("rizk2020.msd_explicit")
    point = {"mu": 0.1, "nu": 1.0, "delta": 1.0, "beta_s^2": 1.0, "sigma_s^2": 1.0, "epsilon^2": 0.5}
    point["sigma_q^2"] = 0.01
    assert c.value(point) == pytest.approx(0.0232 / 0.18, rel=1e-12)
    assert c.conditions_hold(point) == {"contraction": True}
    assert c.conditions_hold({**point, "mu": 2.0}) == {"contraction": False}  # λ = 1 − 4 + 8 = 5
    # the source's O(·) form: μ(σ_s² + ε²) + σ_q²/μ = 0.15 + 0.1
    assert registry.get("rizk2020.msd").value(point) == pytest.approx(0.25)


def test_dynamic_fedavg_explicit_bound_is_exact_drift_seed_bound():
    """The registered explicit bound at the seed's constants of the slides' configuration (E_k = 1) is the
    number ``exact.drift.seed_bound`` computes, term by term."""
    from afltheory.algorithms import DynamicFedAvg
    from afltheory.exact import drift
    from afltheory.problems import DriftingQuadratic

    p = DriftingQuadratic.slides(sigma_q2=0.01, hessian="agent")
    alg = DynamicFedAvg(mu=0.1)
    sb = drift.seed_bound(p, alg, 7)
    point = {
        "mu": 0.1,
        "nu": sb["nu"],
        "delta": sb["delta"],
        "beta_s^2": sb["beta_s2"],
        "sigma_s^2": sb["sigma_s2"],
        "epsilon^2": sb["eps2"],
        "sigma_q^2": sb["sigma_q2"],
    }
    c = registry.get("rizk2020.msd_explicit")
    assert c.value(point) == pytest.approx(sb["bound"], rel=1e-12)
    assert c.term_values(point) == pytest.approx(sb["terms"], rel=1e-12)
    assert c.conditions_hold(point)["contraction"] is bool(sb["lambda"] < 1)


def test_mocha_theorem1_by_hand_and_by_theory_mocha():
    # Θ̄ = p_max + (1 − p_max)Θ_max = 0.2 + 0.8·0.375 = 0.5; (1 − (1 − 0.5)·0.5)² · 1 = 0.75² = 0.5625
    c = registry.get("smith2017.mocha_thm1")
    tb = float(c.definitions["Theta_bar"].subs({stated.p_max: 0.2, stated.theta_max: 0.375}))
    assert tb == 0.5 == mocha.theta_bar(0.2, 0.375)
    point = {"h": 2, "epsilon_0": 1.0, "Theta_bar": tb, "s": 0.5}
    assert c.value(point) == 0.5625 == float(mocha.bound(2, 1.0, 0.5, 0.5))
    assert c.value({**point, "h": 7, "epsilon_0": 3.0}) == pytest.approx(float(mocha.bound(7, 3.0, 0.5, 0.5)))
    assert math.isclose(c.value({**point, "h": 0}), 1.0)


def test_mocha_theorem2_is_an_order_statement_by_hand():
    # 1/((1 − Θ̄) ε_G) at Θ̄ = 0.5, ε_G = 0.01: 1/(0.5 · 0.01) = 200 rounds, up to the hidden constant
    c = registry.get("smith2017.mocha_thm2")
    assert c.constant == "hidden" and not c.constants_explicit and "[L]" in str(c.readings)
    assert c.value({"Theta_bar": 0.5, "epsilon_G": 0.01}) == pytest.approx(200.0)
    assert c.conditions_hold({"Theta_bar": 0.5})["theta_bar_range"] is True
    assert c.conditions_hold({"Theta_bar": 1.0})["theta_bar_range"] is False
    text = (ROOT / "docs" / "theorems.md").read_text()
    assert text[c.location.offset :].startswith("Theorem 2 [L] (Lipschitz losses)")


def test_the_adversary_searches_are_attached_to_the_claims_they_attack():
    import afltheory.adversary  # noqa: F401  (attaches the adversary's search specs)
    from afltheory.adversary import get_claim
    from afltheory.adversary.claims import searched_claim_id

    for key, cid, statement in (
        ("thm2", "yang2022.thm2", "yang2022.thm2"),
        ("cor1", "yang2022.cor1", "yang2022.thm2"),
        ("cor2", "yang2022.cor2", "yang2022.thm3"),
        ("cor3", "yang2022.cor3", "yang2022.thm4"),
        ("lemma2", "yang2022.lemma2", None),
        ("drift", "yang2022.drift", None),
    ):
        spec = get_claim(key)
        assert searched_claim_id(spec) == cid and registry.by_setup("search", key) is registry.get(cid)
        assert [s.key for s in registry.get(cid).setups["search"]] == [key]
        # the search still evaluates its theorem's bound (the corollary's step sizes in it)
        assert (spec.statement.id if spec.statement is not None else None) == statement


def test_afltheory_claims_lists_every_registered_claim_and_shows_one(capsys):
    from afltheory.cli import main

    assert main(["claims", "list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [ln.split()[0] for ln in lines] == list(registry.CLAIMS)  # every id, in registration order
    for cid, words in (
        ("li2020.thm1", ("li2020.thm1:", "E f(x_T) − f*")),
        ("yang2022.cor1", ("yang2022.cor1:", "kind        corollary", "not run", "offset 3063")),
        ("glasgow2022.heterogeneous", ("(a lower bound)", "not run")),
    ):
        assert main(["claims", "show", cid]) == 0
        out = capsys.readouterr().out
        assert all(w in out for w in words), (cid, out)
    assert main(["claims", "show", "yang2022.thm9"]) == 2


def test_docs_claims_registry_md_is_generated_from_the_registry(capsys):
    """docs/claims_registry.md is `afltheory claims registry` (regenerate it when a claim is registered)."""
    from afltheory.cli import main

    assert main(["claims", "registry"]) == 0
    out = capsys.readouterr().out
    assert out == (ROOT / "docs" / "claims_registry.md").read_text(encoding="utf-8")
    rows = [ln for ln in out.splitlines() if ln.startswith("| `")]
    assert [r.split("`")[1] for r in rows] == list(registry.CLAIMS)
    assert f"{len(registry.CLAIMS)} claims" in out
