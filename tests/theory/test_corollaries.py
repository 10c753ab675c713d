import sympy as sp

from afltheory.theory import corollaries as C
from afltheory.theory import symbols as S


def test_corollary1_terms():
    d = C.derive(1)
    lead = d.term(1 / sp.sqrt(S.m * S.K * S.T))
    assert lead.status == "agrees"
    assert sp.simplify(lead.coefficient - 4 * (S.Delta + S.L * S.sigma_L**2)) == 0
    assert d.leading.T_power == 0 and sp.simplify(d.leading.coefficient - 6 * S.sigma_G**2) == 0
    assert d.term(S.K / S.T).status == "absorbed"
    assert not d.mismatches


def test_corollary2_leading_term_and_remark4():
    d = C.derive(2)
    assert sp.simplify(d.leading.order - 1 / sp.sqrt(S.m * S.K * S.T)) == 0
    assert d.leading.status == "agrees" and d.leading.T_power == sp.Rational(-1, 2)
    assert sp.simplify(d.term(S.tau**2 / S.T).coefficient - 8 * S.L**2 * S.sigma_L**2) == 0
    assert d.flags == {"#4": True}
    r = C.remark4()
    assert r["printed_matched"] == [True, False]
    assert r["second_term_check"] and r["second_needs_term"] == S.tau * S.K**2 / S.T
    num = C.remark4_numbers(1e4, 5, 5)
    assert abs(num["printed"][0] - 10 / 5**0.5) < 1e-12 and abs(num["printed"][1] - 0.8) < 1e-12


def test_corollary3_flags_5_and_sigma_G():
    d = C.derive(3)
    assert sp.simplify(d.leading.order - 1 / sp.sqrt(S.M * S.K * S.T)) == 0 and d.leading.status == "agrees"
    assert d.term(S.tau**2 * S.s_stale**2 / (S.M**2 * S.T)).status == "agrees"
    kt = d.term(S.K / S.T)
    assert kt.status == "missing" and "K/(M*T)" in kt.note
    assert d.flags["#5"] and d.flags["sigma_G term missing"]
    dm = C.derive(3, khat="mean")
    assert dm.term(S.K**2 / (S.M * S.T)).status == "missing"
    assert "Corollary 3" in d.report()


def test_printed_rates():
    assert C.printed_rate(2) == 1 / sp.sqrt(S.m * S.K * S.T) + S.tau**2 / S.T + S.K**2 / S.T
    import pytest

    with pytest.raises(ValueError, match="k=4"):
        C.derive(4)
