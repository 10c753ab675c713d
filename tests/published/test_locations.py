"""Issue 40: every "read" published statement has a location, and its LaTeX transcription parses (sympy's
``parse_latex``, ANTLR backend) to the module's sympy bound — symbolically and at random points — through the
statement's symbol map; a deliberately mistyped constant must break the equality."""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest
import sympy as sp
from sympy.core.function import AppliedUndef
from sympy.parsing.latex import parse_latex

from afltheory.claims import Claim, Location
from afltheory.published import STATEMENTS

READ = [s for s in STATEMENTS.values() if s.is_read]
WITH_LATEX = [s for s in STATEMENTS.values() if s.transcription is not None]


def _parse(tex: str) -> sp.Expr:
    # \bar{\mu} would parse as the product bar·μ: name it \mu_{b} (the only normalisation done here)
    return parse_latex(re.sub(r"\\bar\{\\(\w+)\}", r"\\\1_{b}", tex))


def parsed_bound(st: Claim, bound: str | None = None) -> sp.Expr:
    """The transcription's bound parsed, its definitions substituted, mapped onto the package's symbols."""
    tr = st.transcription
    expr = _parse(bound if bound is not None else tr.bound)
    defs = {sp.Symbol(k): _parse(v) for k, v in tr.definitions.items()}
    expr = expr.subs(defs, simultaneous=True)
    calls = expr.atoms(AppliedUndef)
    assert not calls, f"{st.id}: {sorted(map(str, calls))} parsed as function calls (write a \\cdot)"
    unknown = {str(s) for s in expr.free_symbols} - set(tr.symbols)
    assert not unknown, f"{st.id}: LaTeX symbols {sorted(unknown)} have no entry in the symbol map"
    return expr.subs({sp.Symbol(k): v for k, v in tr.symbols.items()}, simultaneous=True)


def agree(st: Claim, expr: sp.Expr, points: int = 20, seed: int = 0) -> bool:
    """The module's bound equals ``expr``: symbolically (simplify of the difference) and at random points."""
    diff = sp.simplify(sp.expand(st.total() - expr))
    if diff != 0:
        return False
    free = sorted(st.total().free_symbols | expr.free_symbols, key=str)
    f1, f2 = sp.lambdify(free, st.total()), sp.lambdify(free, expr)
    rng = np.random.default_rng(seed)
    for _ in range(points):
        x = rng.uniform(0.5, 3.0, len(free))
        a, b = float(f1(*x)), float(f2(*x))
        if not np.isclose(a, b, rtol=1e-10, atol=1e-12):
            return False
    return True


def test_every_read_statement_has_a_location():
    assert len(READ) >= 5
    for st in READ:
        assert isinstance(st.location, Location), st.id
        assert st.location.index_id or st.location.path, st.id
        assert st.location.theorem and st.location.found_by, st.id
        assert str(st.location).startswith("read: "), st.id


def test_a_read_statement_without_location_is_refused():
    st = STATEMENTS["li2020.thm1"]
    with pytest.raises(ValueError, match="needs a location"):
        dataclasses.replace(st, location=None)
    with pytest.raises(ValueError, match="confidence"):
        dataclasses.replace(st, confidence="half read")


def test_read_statements_with_explicit_constants_carry_latex():
    for st in READ:
        if st.constants_explicit and not st.id.startswith("yu2019"):
            assert st.transcription is not None, (
                f"{st.id}: read with explicit constants but no LaTeX transcription"
            )


@pytest.mark.parametrize("st", WITH_LATEX, ids=lambda s: s.id)
def test_latex_bound_equals_module_bound(st):
    assert agree(st, parsed_bound(st)), f"{st.id}: the module's bound differs from its LaTeX transcription"


def _mistype(tex: str) -> str:
    """The first integer constant of the LaTeX changed by +1 (e.g. 2 → 3); with none (a rate whose constants
    the paper hides), the first exponent."""
    m = re.search(r"(?<![_^{\\a-zA-Z])\d+", tex) or re.search(r"(?<=\^\{)\d+", tex)
    assert m, tex
    return tex[: m.start()] + str(int(m.group()) + 1) + tex[m.end() :]


@pytest.mark.parametrize("st", WITH_LATEX, ids=lambda s: s.id)
def test_a_mistyped_constant_breaks_the_equality(st):
    assert not agree(st, parsed_bound(st, _mistype(st.transcription.bound)))


def test_mistyped_definition_breaks_li2020():
    st = STATEMENTS["li2020.thm1"]
    bad = dataclasses.replace(
        st.transcription, definitions={"B": st.transcription.definitions["B"].replace("8 (E-1)", "9 (E-1)")}
    )
    assert not agree(st, parsed_bound(dataclasses.replace(st, transcription=bad)))


def test_fedprox_cor7_reading():
    """fedprox.cor7_approximate: Theorem 4's ρ at μ = 6LB², γ = 0, K = 4B² (the edge B = 0.5√K) times 24LB²
    tends to 24((1 − 1/√2)/6 − 1/72) = 0.8384 (hand: the terms B√2/(μ√K) = (1/√2)/μ and L B²/(2μ²) =
    1/(72LB²) survive, the others are o(1/B²)); inside (K = 400B²) 24((1 − √2/20)/6 − 1/72) + o(1) = 3.38."""
    from afltheory.published import fedprox2020 as fp

    def scaled(B, K):
        return fp.THM4.value(dict(L=1.0, B=B, m=K, mu_prox=6 * B**2, gamma_inexact=0.0)) * 24 * B**2

    edge = 24 * ((1 - 1 / np.sqrt(2)) / 6 - 1 / 72)
    assert scaled(1e4, 4e8) == pytest.approx(edge, rel=1e-3)
    assert scaled(100.0, 4e6) == pytest.approx(24 * ((1 - np.sqrt(2) / 20) / 6 - 1 / 72), rel=0.01)
    assert fp.COR7.value(dict(L=1.0, B=2.0)) == pytest.approx(1 / 96)


def test_docs_carry_the_locations_section():
    from pathlib import Path

    from afltheory.published import locations_markdown

    doc = (Path(__file__).resolve().parents[2] / "docs" / "published.md").read_text(encoding="utf-8")
    assert locations_markdown() in doc, (
        "docs/published.md is stale: paste afltheory.published.locations_markdown()"
    )


def test_claims_name_the_readings_and_location_they_depend_on():
    """A verdict's claim (its ``source`` goes into the verdict's details) lists its statement's location and
    named readings."""
    n = 0
    for st in STATEMENTS.values():
        if not st.runnable or not st.is_read or not st.readings or st.id == "scaffold2020.thm3":
            continue
        cid, claim = st.engine().id, st.engine()
        n += 1
        assert str(st.location) in claim.source, cid
        for name in st.readings:
            assert name in claim.source, (cid, name)
    assert n >= 5


#: the statements issue 40's reading pass (session 2) searched for; docs/published_readings.md logs each
SEARCHED = (
    "khaled2020.identical",
    "khaled2020.heterogeneous",
    "stich2019.thm2.2",
    "yu2019.thm1",
    "yu2019.cor2",
    "lian2015.thm1",
    "fedbuff2022.thm",
    "koloskova2020.sc",
    "woodworth2020.local",
    "woodworth2020.minibatch",
    "glasgow2022.homogeneous",
    "glasgow2022.heterogeneous",
)


def _readings_doc() -> str:
    from pathlib import Path

    return (Path(__file__).resolve().parents[2] / "docs" / "published_readings.md").read_text(
        encoding="utf-8"
    )


def test_readings_doc_logs_every_searched_statement():
    """Each searched statement has a section in docs/published_readings.md; a statement read there cites its
    index id, and one still unread lists the fragments tried."""
    doc = _readings_doc()
    sections = re.split(r"^### ", doc, flags=re.M)
    for sid in SEARCHED:
        assert sid in STATEMENTS, sid
        mine = [s for s in sections if f"`{sid}`" in s.splitlines()[0]]
        assert len(mine) == 1, f"{sid}: expected one '### ' section naming it, found {len(mine)}"
        st = STATEMENTS[sid]
        if st.is_read and st.location.index_id:
            assert st.location.index_id in mine[0], f"{sid}: its index id is not in its section"
        else:
            assert "Tried:" in mine[0] or "tried:" in mine[0], f"{sid}: no fragments-tried list"


def test_fedbuff_secondary_reading_records_a_real_difference():
    """fedbuff2022.thm is read only in a secondary restatement whose staleness term carries the
    bounded-gradient constant G²; the module's bound has no G (the difference docs/published_readings.md
    reports) and names the readings for it — if the bound is changed to the G² form, this test says the
    readings are stale."""
    from afltheory.published.symbols import G, tau

    st = STATEMENTS["fedbuff2022.thm"]
    assert st.confidence.startswith("read (secondary: ")
    assert st.location.index_id == "62037252991" and st.location.offset == 32000
    assert {"fedbuff.secondary_complexity", "fedbuff.bounded_gradient"} <= set(st.readings)
    assert G not in st.total().free_symbols and tau in st.bound["staleness"].free_symbols
    assert "G²" in st.readings["fedbuff.bounded_gradient"]


def test_lian_step_condition_as_printed_has_the_delay_squared():
    """lian2015.thm1's step condition as the secondary prints it (eq. 8, N the delay bound) is the module's
    condition; the linear-in-τ recollection is not (hand: at L = M = 1, γ = 0.1, N = 3 the printed left side
    is 0.1 + 2·9·0.01 = 0.28, the linear one 0.1 + 2·3·0.01 = 0.16)."""
    st = STATEMENTS["lian2015.thm1"]
    sym = {sp.Symbol(k): v for k, v in st.transcription.symbols.items()}
    printed = _parse(st.transcription.conditions["step"]).subs(sym, simultaneous=True)
    module = st.conditions["step"]
    assert sp.simplify((printed.lhs - printed.rhs) - (module.lhs - module.rhs)) == 0
    vals = {"L": 1, "m": 1, "eta": sp.Rational(1, 10), "tau": 3}
    assert float(module.lhs.subs({s: vals[str(s)] for s in module.lhs.free_symbols})) == pytest.approx(0.28)
    linear = _parse(st.transcription.conditions["step"].replace("N^{2}", "N")).subs(sym, simultaneous=True)
    assert sp.simplify((linear.lhs - linear.rhs) - (module.lhs - module.rhs)) != 0
