"""``afltheory.claims.latex``: claims from the paper's LaTeX (issue 44). The three formulas of the issue
round-trip through ``afltheory claims parse``; each error class names its token and position; the equality
helper passes on the published statements' own transcription and fails on a mistyped constant."""

from __future__ import annotations

import pytest
import sympy as sp

from afltheory.claims import SYMBOLS, Assumptions, Claim
from afltheory.claims import latex as LX
from afltheory.claims.cli import show
from afltheory.claims.latex import (
    AmbiguousLatex,
    LatexUnavailable,
    NotARelation,
    UnknownLatex,
    assert_bound_matches,
    latex,
    latex_condition,
)
from afltheory.cli import main

S = SYMBOLS
gamma, B, p_ = (sp.Symbol(n, positive=True) for n in ("gamma", "B", "p"))
F1 = r"\frac{2 \Delta}{\gamma T} + \gamma L \sigma^{2} + 2 \sigma^2 L^2 M \tau^2 \gamma^2"
F2 = r"\frac{\kappa}{\gamma+T-1}\left(\frac{2B}{\mu} + \frac{\mu\gamma}{2} D_0\right)"
F3 = r"\sum_{k=1}^N p_k^2 \sigma_k^2 + 6 L \Gamma + 8 (E-1)^2 G^2"
D, L, M, T, tau, sL, kappa, mu, D0, K, G, Gamma = (
    S[n] for n in ("Delta", "L", "M", "T", "tau", "sigma_L", "kappa", "mu", "D0", "K", "G", "Gamma")
)
#: the three formulas, their terms as written (hand-transcribed), and the letters the default table leaves
CASES = [
    (F1, [2 * D / (gamma * T), gamma * L * sL**2, 2 * sL**2 * L**2 * M * tau**2 * gamma**2], ["gamma"]),
    (
        F2,
        [kappa / (gamma + T - 1) * 2 * B / mu, kappa / (gamma + T - 1) * mu * gamma / 2 * D0],
        ["B", "gamma"],
    ),
    (F3, [S["sum_p2"] * sL**2, 6 * L * Gamma, 8 * (K - 1) ** 2 * G**2], []),
]


@pytest.mark.parametrize("src,terms,unknown", CASES)
def test_claims_parse_round_trips_the_issue_formulas(src, terms, unknown, capsys):
    """`claims parse` prints the expression (= the hand transcription), its terms in the written order with
    their LaTeX, and the unknown letters; the parsed paper-letter tree printed back as LaTeX (sympy's
    printer) parses to the same tree."""
    assert main(["claims", "parse", src]) == 0
    out = capsys.readouterr().out.splitlines()
    expr = sp.Add(*terms)
    assert out[1].startswith("expression  ")
    printed = sp.sympify(out[1].removeprefix("expression  "), locals={**S, "gamma": gamma, "B": B})
    assert sp.simplify(printed - expr) == 0
    k = out.index(f"terms ({len(terms)}, as written):")
    rows = out[k + 1 : k + 1 + len(terms)]
    assert all(ln.strip().startswith(sp.sstr(t) + " ") for ln, t in zip(rows, terms, strict=True))
    last = out[-1]
    assert last == "unknown: none" if not unknown else all(u in last for u in unknown)
    r = latex(src, strict=False)
    assert sp.simplify(r.expr - expr) == 0 and list(r.terms.values()) == terms
    assert sp.simplify(sp.Add(*r.terms.values()) - r.expr) == 0
    sources = [s.replace(" ", "") for s in r.term_sources.values()]
    if src is F2:  # one product over a bracketed sum: the prefactor distributed over its addends
        pre = r"\frac{\kappa}{\gamma+T-1}"
        assert sources == [pre + r"\left(\frac{2B}{\mu}\right)", pre + r"\left(\frac{\mu\gamma}{2}D_0\right)"]
    else:
        assert "+".join(sources) == src.replace(" ", "")
    # the parse printed back as LaTeX (sympy's printer; p_{k} -> p_k, sigma_{k} -> \sigma_k) reads the same
    names = {x: LX._latex_of(str(x)) for x in r.raw.free_symbols | r.raw.atoms(sp.Symbol)}
    again = latex(sp.latex(r.raw, symbol_names=names), strict=False)
    assert sp.simplify(again.raw - r.raw) == 0 and again.expr == r.expr


def test_named_terms_phrases_and_the_table():
    """Names given in the written order; a phrase (f(x_1) − f*, T') replaced before parsing; a declared
    target (γ -> η/m) substituted; a wrong number of names refused with the terms listed."""
    table = {"M": "m", "K": "T", r"\gamma": "eta/m", "T'": "tau"}
    r = latex(
        r"\frac{2(f(x_1)-f^*)}{MK\gamma}+\sigma^2L\gamma+2\sigma^2L^2MT'\gamma^2", table, ("a", "b", "c")
    )
    eta, m = S["eta"], S["m"]
    assert r.terms == {
        "a": 2 * D / (T * eta),
        "b": sL**2 * L * eta / m,
        "c": 2 * sL**2 * L**2 * tau * eta**2 / m,
    }
    assert r.term_sources["a"] == r"\frac{2(f(x_1)-f^*)}{MK\gamma}"
    assert r.symbols["f(x_1) - f^*"] == D and r.symbols["T'"] == tau and not r.unknown
    with pytest.raises(LX.LatexError, match=r"must name the 3 top-level terms"):
        latex(r"a + b + c", {"a": "L", "b": "M", "c": "T"}, ("x", "y"))
    # the index letter of a client sum does not matter; a one-letter phrase is not found inside \alpha
    assert latex(r"\sum_{i=1}^N p_i^2 \sigma_i^2").expr == S["sum_p2"] * sL**2
    assert latex(r"\alpha a", {"a": "L", r"\alpha": "M"}).expr == L * M
    # a phrase matches whatever the spaces and the braces of one-token sub/superscripts
    assert latex(r"\frac{\mu}{2}\|w_{1}-w^{*}\|^{2}").expr == mu * D0 / 2


def test_docs_list_the_default_table():
    """docs/claims_latex.md names every key and target of DEFAULT_TABLE (the table a reader checks)."""
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[2] / "docs" / "claims_latex.md").read_text()
    assert [k for k in LX.DEFAULT_TABLE if f"`{k}`" not in doc] == []
    assert [v for v in set(LX.DEFAULT_TABLE.values()) if f"`{v}`" not in doc] == []


def test_claim_keeps_its_latex_and_show_prints_it():
    """`Claim(bound=latex(...), conditions={"step": latex(...)})`: the terms are the named addends, the
    condition a relation, the sources kept on `Claim.latex` and printed by `claims show`."""
    table = {r"\gamma": "eta*eta_L"}
    c = Claim(
        id="t.latex",
        title="toy",
        assumptions=Assumptions(),
        bound=latex(r"\frac{2\Delta}{\gamma T} + \gamma L \sigma^2", table, ("transient", "noise")),
        conditions={"step": latex(r"\gamma L \le 1", table)},
    )
    g = S["eta"] * S["eta_L"]
    assert c.bound == {"transient": 2 * D / (g * T), "noise": g * L * sL**2}
    assert c.conditions["step"] == sp.Le(g * L, 1)
    assert c.latex == {"bound": r"\frac{2\Delta}{\gamma T} + \gamma L \sigma^2", "step": r"\gamma L \le 1"}
    text = show(c)
    assert r"from LaTeX       \frac{2\Delta}{\gamma T} + \gamma L \sigma^2" in text
    assert r"from LaTeX: \gamma L \le 1" in text


# ---------------------------------------------------------------------------------------------- errors
def test_unknown_macro_symbol_and_character_are_named_with_their_position(capsys):
    with pytest.raises(UnknownLatex) as e:
        latex(r"L + \foo T")
    assert (e.value.token, e.value.position) == (r"\foo", 4) and r"unknown macro \foo at position 4" in str(
        e.value
    )
    with pytest.raises(UnknownLatex) as e:  # strict: a letter neither in SYMBOLS nor in the table
        latex(r"\frac{L}{T} + \gamma L")
    assert (e.value.token, e.value.position) == (
        "gamma",
        14,
    ) and "unknown symbol 'gamma' at position 14" in str(e.value)
    with pytest.raises(UnknownLatex, match=r"unknown symbol '#' at position 2"):
        latex("L # T")
    with pytest.raises(UnknownLatex, match=r"\^\* at position 1.*drops the star"):
        latex("w^* + L")
    with pytest.raises(UnknownLatex, match=r"\\\| at position 0"):  # a norm nobody declared
        latex(r"\|x_2 - y\|^2")
    assert main(["claims", "parse", r"L + \foo T"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("afltheory: error: unknown macro \\foo at position 4") and "Traceback" not in err


@pytest.mark.parametrize(
    "src,token,position,reading",
    [
        ("f(x) + L", "f", 0, "f(x)"),
        (r"L + \gamma (T+1)", r"\gamma", 4, "gamma(T + 1)"),
        (r"L + T'", "T'", 5, "the symbol T'"),
        ("2 3 L", "2 3", 0, "the number 23"),
    ],
)
def test_ambiguous_juxtaposition_is_refused_with_its_reading(src, token, position, reading):
    with pytest.raises(AmbiguousLatex) as e:
        latex(src)
    assert (e.value.token, e.value.position, e.value.reading) == (token, position, reading)
    assert f"at position {position}" in str(e.value)


def test_a_condition_that_is_not_a_relation_says_so():
    with pytest.raises(NotARelation, match=r"does not parse as a relation: it reads as L\*M\*eta"):
        latex_condition(r"L M \gamma", {r"\gamma": "eta"})
    assert latex_condition(r"L \eta \le 1").expr == sp.Le(L * S["eta"], 1)
    with pytest.raises(
        ValueError, match=r"conditions\['step'\]=.* must be a relation"
    ):  # the Claim's own check
        Claim(id="x", title="x", bound=latex("L"), conditions={"step": latex(r"L \eta")})
    with pytest.raises(NotARelation, match="is a relation .* not a bound"):
        Claim(id="x", title="x", bound=latex(r"L \le 1"))


def test_missing_antlr_runtime_gives_the_install_line(monkeypatch, capsys):
    from importlib import metadata

    def missing(name):
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(LX, "_PARSE", [])
    monkeypatch.setattr(metadata, "version", missing)
    with pytest.raises(LatexUnavailable, match=r"pip install 'antlr4-python3-runtime==4\.11\.\*'"):
        latex("L")
    assert main(["claims", "parse", "L"]) == 2
    err = capsys.readouterr().err
    assert "antlr4-python3-runtime 4.11" in err and "pip install" in err and "Traceback" not in err
    monkeypatch.setattr(metadata, "version", lambda name: "4.13.2")
    with pytest.raises(LatexUnavailable, match="4.13.2 is installed"):
        latex("L")


def test_map_file(tmp_path, capsys):
    """--map paper.toml: the paper's letters (under [symbols] or at the top level); a bad file is one line."""
    path = tmp_path / "paper.toml"
    path.write_text('[symbols]\n"\\\\gamma" = "eta/m"\n"M" = "m"\n')
    assert main(["claims", "parse", r"L M \gamma", "--map", str(path)]) == 0
    out = capsys.readouterr().out
    assert "expression  L*eta" in out and "unknown: none" in out
    path.write_text("not = [toml")
    assert main(["claims", "parse", "L", "--map", str(path)]) == 2
    assert "is not TOML" in capsys.readouterr().err


# ---------------------------------------------------------------------------------------------- equality
LI_BOUND = r"\frac{\kappa}{\gamma+T-1}\left(\frac{2B}{\mu} + \frac{\mu\gamma}{2}\|w_1 - w^*\|^2\right)"
LI_B = r"\sum_{k=1}^N p_k^2 \sigma_k^2 + 6 L \Gamma + 8 (E-1)^2 G^2"


def test_assert_bound_matches_the_published_statements_and_catches_a_mistyped_constant():
    """Li et al. 2020 Thm 1 and Lian et al. 2015 Thm 1 (``afltheory.published``) equal their LaTeX
    symbolically and at 20 random positive points (seed 0); one changed constant (6LΓ -> 8LΓ, 2Δ -> 3Δ)
    or a dropped square fails, naming the difference."""
    from afltheory.published import li2020, lian2015
    from afltheory.published.symbols import sum_p2_sigma2

    li_map = {r"\gamma": "gamma", r"\sum_{k=1}^N p_k^2 \sigma_k^2": sum_p2_sigma2}
    assert_bound_matches(LI_BOUND, li2020.THM1.bound, {**li_map, "B": latex(LI_B, li_map)})
    with pytest.raises(AssertionError, match="difference"):
        assert_bound_matches(
            LI_BOUND, li2020.THM1.bound, {**li_map, "B": latex(LI_B.replace("6 L", "8 L"), li_map)}
        )
    lian_map = {"K": "T", "M": "m", "T": "tau", r"\gamma": "eta", r"\sigma": "sigma"}
    lian = r"\frac{2\Delta}{M K \gamma} + \sigma^2 L \gamma + 2 \sigma^2 L^2 M T \gamma^2"
    assert_bound_matches(lian, lian2015.THM1.bound, lian_map)
    assert_bound_matches(
        r"L M \gamma + 2 L^2 M^2 T^2 \gamma^2 \le 1", lian2015.THM1.conditions["step"], lian_map
    )
    with pytest.raises(AssertionError, match="difference"):
        assert_bound_matches(lian.replace("2\\Delta", "3\\Delta"), lian2015.THM1.bound, lian_map)
    with pytest.raises(AssertionError):
        assert_bound_matches(
            r"L M \gamma + 2 L^2 M^2 T \gamma^2 \le 1", lian2015.THM1.conditions["step"], lian_map
        )
    with pytest.raises(AssertionError, match=r"symbols \['G'\] are in one"):
        assert_bound_matches(lian + " + G", lian2015.THM1.bound, lian_map)


def test_assert_bound_matches_numeric_check_is_independent(monkeypatch):
    """The random-point comparison fails on its own when the symbolic one is fooled (simplify patched to
    say 0): at x = e^u, u ~ U(log .1, log 10), 2Δ/(MKγ) and 2.000001Δ/(MKγ) differ by 5e-7 relative >
    rtol 1e-9 at every point."""
    monkeypatch.setattr(LX.sp, "simplify", lambda e: sp.Integer(0))
    with pytest.raises(AssertionError, match="but the statement ="):
        assert_bound_matches(r"\frac{2\Delta}{T}", 2.000001 * D / T)
    assert_bound_matches(r"\frac{2\Delta}{T}", 2 * D / T)


def test_report_shows_the_latex_next_to_the_parsed_bound():
    """A verdict whose details carry the claim's LaTeX (``Claim.latex``) shows it in report.md/html next to
    the parsed bound; one without shows nothing more."""
    from afltheory.checks.report import _extra_lines
    from afltheory.checks.verdict import Verdict

    kw = dict(id="t", claim="toy", reference="r", measured=1.0, theoretical=2.0, tolerance="exact ≤ bound")
    v = Verdict(**kw, passed=True, details={"latex": {"bound": r"\frac{L}{T}"}, "bound_expr": "L/T"})
    assert _extra_lines(v) == [r"- from LaTeX: bound `\frac{L}{T}` → bound `L/T`"]
    assert _extra_lines(Verdict(**kw, passed=True, details={"bound_expr": "L/T"})) == []
