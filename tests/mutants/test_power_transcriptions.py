"""paper_checks/power_transcriptions.py and the transcription mutant ``li2020.init_looser`` (issue 45
item 1): the comparison on hand-made cases, the fault on the statement it names only, and the two verdicts
killing it."""

from __future__ import annotations

from fractions import Fraction

import sympy as sp

from afltheory import mutants
from afltheory.checks.registry import Context
from afltheory.mutants.faults import ClaimTermScaled
from afltheory.published import STATEMENTS
from afltheory.theory import terms_in_force
from paper_checks import power_transcriptions as pt

x, y = sp.symbols("x y", positive=True)


def test_differs_by_hand():
    assert not pt.differs({"a": x / 2, "b": y}, (x + 2 * y) / 2)  # equal after expand
    assert not pt.differs({"a": sp.sqrt(x) ** 2}, x)
    assert pt.differs({"a": 3 * x / 4, "b": y}, (x + 2 * y) / 2)  # a constant read wrong
    assert pt.differs(pt.scaled_first_term({"a": x, "b": y}), x + y)
    assert pt.scaled_first_term({"a": x, "b": y}) == {"a": 3 * x / 2, "b": y}


def test_transcription_of_li2020_thm1_by_hand():
    st = STATEMENTS["li2020.thm1"]
    assert sp.simplify(pt.transcribed(st) - st.total()) == 0
    # the printed 2B/μ read as 3B/μ: the parsed bound moves by κ B/(μ (γ + T − 1)), not 0
    bad = pt.transcribed(st, st.transcription.bound.replace("2 B", "3 B"))
    assert pt.differs(st.bound, bad)


def test_claim_term_scaled_acts_on_the_named_statement_only():
    fault = ClaimTermScaled(
        ("noise", "heterogeneity", "drift", "init"), ("heterogeneity", "Gamma"), "init", Fraction(2)
    )
    li = STATEMENTS["li2020.thm2"].bound
    out = fault(li)
    assert sp.simplify(out["init"] - 2 * li["init"]) == 0 and out["noise"] == li["noise"]
    kh = STATEMENTS["khaled2019.thm1"].bound
    assert fault(kh) is kh  # other keys: unchanged
    no_gamma = {**li, "heterogeneity": x}
    assert fault(no_gamma) is no_gamma  # the keys without the marker symbol: unchanged
    with mutants.injected("li2020.init_looser"):
        assert (
            sp.simplify(sum(terms_in_force(li).values()) - STATEMENTS["li2020.thm2"].total() - li["init"])
            == 0
        )
    assert terms_in_force(li) is li


def test_both_transcription_verdicts_kill_the_transcription_mutant(tmp_path):
    ctx = Context("quick", 0, str(tmp_path))
    base = {v.id: v for v in pt.run(ctx)}
    assert all(v.ok for v in base.values()), {k: v.notes for k, v in base.items()}
    with mutants.injected("li2020.init_looser"):
        under = {v.id: v for v in pt.run(ctx)}
    assert not any(v.ok for v in under.values())
    assert under["power_transcriptions.symbolic"].measured == 3  # Theorems 1-3 share the term
    assert mutants.get("li2020.init_looser").category == "published transcriptions"
