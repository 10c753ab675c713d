"""One ``Claim`` class (issue 38): a statement in its paper's symbols with an engine form, the one confidence
rule, the runnable flag, the synchronous class builder, and the paper's own claims located in
docs/theorems.md."""

from __future__ import annotations

from pathlib import Path

import pytest
import sympy as sp

from afltheory.algorithms import FedAvg
from afltheory.claims import Assumptions, Claim, EngineForm, Location, engine_confidence, is_read
from afltheory.claims.paper import PAPER_CLAIMS
from afltheory.theory.symbols import L, T, eta, eta_L

ROOT = Path(__file__).resolve().parents[2]
gamma = sp.Symbol("gamma", positive=True)  # the paper's step (not an engine symbol)
N = sp.Symbol("N", positive=True)  # the paper's steps (T·K in the engines)
LOC = Location(None, 0, "Theorem 1", "Theorem 1", path="docs/theorems.md")


def _stated(**kw) -> Claim:
    """A toy statement 1/(γN) + γL, γ ≤ 1/L, whose engine form is γ = η η_L and N = 2T."""
    base = dict(
        id="toy2026.thm1",
        title="toy",
        bound={"init": 1 / (gamma * N), "noise": gamma * L},
        conditions={"step": sp.Le(gamma, 1 / L)},
        source="the toy paper",
        confidence="read",
        location=LOC,
        readings={"toy.N": "N counts local steps"},
        engine_form=EngineForm(subs={gamma: eta * eta_L, N: 2 * T}, reading=" Engine form: K = 2."),
        rule=FedAvg,
        measured="avg_grad_sq",
    )
    return Claim(**{**base, **kw})


def test_engine_form_substitutes_the_stated_bound_and_conditions():
    st = _stated()
    e = st.engine()
    assert e is st.engine()  # built once
    assert e.id == "published.toy2026.thm1" and e.engine_form is None and e.engine() is e
    assert sp.simplify(e.bound["init"] - 1 / (2 * eta * eta_L * T)) == 0
    assert sp.simplify(e.bound["noise"] - eta * eta_L * L) == 0
    assert e.conditions["step"] == sp.Le(eta * eta_L, 1 / L)
    # the numbers by hand: η = 1, η_L = 0.1, L = 2, T = 5: 1/(2·0.1·5) + 0.1·2 = 1.2
    assert float(e.bound_value({"eta": 1.0, "eta_L": 0.1, "L": 2.0, "T": 5.0})) == pytest.approx(1.2)
    assert e.reading.endswith(" Engine form: K = 2.") and e.confidence == "read"
    assert e.source == "the toy paper; confidence: read; " + str(LOC) + "; readings: toy.N"
    # the statement itself stays in the paper's symbols: 1/(0.5·4) + 0.5·1 = 1
    assert st.value({"gamma": 0.5, "N": 4, "L": 1.0}) == pytest.approx(1.0)
    assert st.conditions_hold({"gamma": 0.5, "L": 1.0}) == {"step": True}
    assert st.conditions_hold({"gamma": 2.0, "L": 1.0}) == {"step": False}


def test_false_variant_divides_the_engine_bound():
    f = _stated().false_variant(10)
    assert f.id == "published.toy2026.thm1.bound_div10" and f.expect == "fails"
    assert sp.simplify(f.bound["noise"] - eta * eta_L * L / 10) == 0
    with pytest.raises(ValueError, match="factor"):
        _stated().false_variant(1)


def test_the_one_confidence_rule():
    assert engine_confidence("read") == "read"
    assert engine_confidence("read (secondary: notes quoting it)") == "read"
    assert engine_confidence("abstract read, statement from memory") == "from memory"
    assert engine_confidence("from memory") == "from memory"
    assert engine_confidence("read", own_form=True) == "from memory"  # the check's own form, not the text
    assert engine_confidence("derived") == "derived"
    assert is_read("read (secondary: x)") and not is_read("read (secondary: x") and not is_read("half read")
    with pytest.raises(ValueError, match="confidence"):
        engine_confidence("half read")
    own = _stated(engine_form=EngineForm(bound={"own": L / T}, conditions={}, title="the check's own form"))
    assert own.engine().confidence == "from memory" and own.engine().title == "the check's own form"


def test_runnable_is_inferred_and_a_statement_without_engine_form_says_why():
    st = _stated(engine_form=None, why_not_a_claim="a lower bound: no engine quantity")
    assert st.runnable is False
    with pytest.raises(ValueError, match="has no engine form: a lower bound"):
        st.engine()
    with pytest.raises(ValueError, match="needs why_not_a_claim"):
        _stated(engine_form=None, runnable=False)
    with pytest.raises(ValueError, match="needs a location"):
        _stated(location=None)
    with pytest.raises(ValueError, match="kind"):
        _stated(kind="conjecture")
    assert _stated().paper == "toy2026" and _stated(kind="corollary").kind == "corollary"


def test_synchronous_class():
    a = Assumptions.synchronous("convex", "none", "zeta_star", local_steps=1)
    assert a == Assumptions(
        function="convex",
        noise="none",
        heterogeneity="zeta_star",
        participation="full",
        max_delay=0,
        max_local_steps=1,
    )
    assert (
        Assumptions.synchronous("smooth", "variance", "iid", participation="uniform").max_local_steps is None
    )
    with pytest.raises(ValueError, match="function"):
        Assumptions.synchronous("concave", "none", None)


def test_the_papers_claims_are_located_in_docs_theorems():
    """The paper's claims and every registered claim read from docs/theorems.md (Theorems 1–4, the
    corollaries, the lemmas, compression, Dynamic FedAvg, MOCHA: ``claims.stated``) name the offset where
    their fragment starts."""
    from afltheory.claims.stated import STATED
    from afltheory.published import registry

    text = (ROOT / "docs" / "theorems.md").read_text(encoding="utf-8")
    for c in PAPER_CLAIMS.values():
        loc = c.location
        assert loc.path == "docs/theorems.md" and text.startswith(loc.found_by, loc.offset), c.id
    located = [c for c in registry.CLAIMS.values() if c.location and c.location.path == "docs/theorems.md"]
    assert len(located) == 14  # thm1–4, cor1–3, lemma1, lemma2, drift, compression, Dynamic FedAvg, MOCHA 1–2
    assert {c.id for c in located} >= {c.id for c in STATED if c.confidence != "derived"}
    for c in located:
        assert text.startswith(c.location.found_by, c.location.offset), c.id
    assert registry.get("rizk2020.msd_explicit").location is None  # derived here: nothing was read
