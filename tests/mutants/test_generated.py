"""Generated mutants (afltheory.mutants.generated) on a tiny claim: a hand-derived set of mutants and kills.

tests/mutants/tiny_claim.py: noise-free FedAvg, η = 1, η_L = 0.1, K = 1, M = m = 2, T = 20, whose exact gap is
½ (1 − η_L)^{2T} D0; the claim states 1.5× it. Hand-derived outcomes:
- step squared: γ = 0.01, gap ∝ 0.99^40 = 0.669 > 1.5 · 0.9^40 = 0.022 → the bound fails: killed;
- normalizer + 1: γ = 0.1 · 2/3, gap ∝ (1 − 0.0667)^40 = 0.063 > 0.022: killed;
- K weight + 1 (K = 1 → 2): γ = 0.2, faster contraction: the bound still holds, survives;
- the bound's term ÷ 2: 0.75× the exact gap: fails, killed; × 2: looser, survives.
Not generated: η dropped (η = 1), m ↔ M (full participation), the K weight dropped/squared (K_max = 1), client
weights (uniform), memory (FedAvg keeps none), schedules (constant steps).
"""

import os

import pytest

from afltheory import mutants
from afltheory.algorithms import FedAvg
from afltheory.mutants import generated
from afltheory.mutants.run import kill_matrix

FILE = os.path.join(os.path.dirname(__file__), "tiny_claim.py")
PRE = "gen.tiny.contraction."
EXPECTED = [
    "step.squared",
    "normalizer.off_by_one",
    "k_weight.off_by_one",
    "bound.contraction.x2",
    "bound.contraction.div2",
]


def test_generated_set():
    gen = generated.generate_for_files([FILE])
    assert [m.name for m in gen] == [PRE + e for e in EXPECTED]
    assert [m.kind for m in gen] == ["rule"] * 3 + ["claim"] * 2
    assert mutants.get(PRE + "step.squared") is gen[0]  # registered: found by name


def test_rule_hooks_pinned():
    gen = {m.name: m for m in generated.generate_for_files([FILE])}
    rule = FedAvg(eta=2.0, eta_L=0.1)
    sq = gen[PRE + "step.squared"].substitute(rule)
    assert type(sq) is not FedAvg and sq.step_size == pytest.approx(0.04)  # (2 · 0.1)²
    nb = gen[PRE + "normalizer.off_by_one"].substitute(rule)
    assert nb.normalizer(3, 5) == 4 and rule.normalizer(3, 5) == 3
    kw = gen[PRE + "k_weight.off_by_one"].substitute(rule)
    assert list(kw.local_steps_weight([1, 3])) == [2.0, 4.0]


def test_claim_edit_applied_and_restored():
    import sys
    import zlib

    gen = {m.name: m for m in generated.generate_for_files([FILE])}
    mod = sys.modules["afltheory_user_" + format(zlib.crc32(os.path.abspath(FILE).encode()), "x")]
    before = mod.TINY
    with generated.applied(gen[PRE + "bound.contraction.div2"]):
        assert mod.TINY is not before
        assert float(mod.TINY.bound["contraction"] / before.bound["contraction"]) == 0.5
    assert mod.TINY is before


def test_known_kills():
    """The bound check alone (the power check tiny_claim_power: tests/mutants/test_generated_power.py)."""
    km = kill_matrix([], files=[FILE], generated=True, with_tests=False, controls=False, only=["tiny_claim"])
    assert km.mutants == [PRE + e for e in EXPECTED]
    killed = {m for m in km.mutants if km.killed_by(m)}
    assert killed == {PRE + "step.squared", PRE + "normalizer.off_by_one", PRE + "bound.contraction.div2"}
    assert km.reachable == km.mutants
    assert km.reachable_line() == "3 of 5 that reach these checks (60 %); 0 do not"
    assert km.baseline_failures() == []


def test_expect_fails_claim_gets_none():
    import dataclasses
    import sys
    import zlib

    generated.generate_for_files([FILE])
    mod = sys.modules["afltheory_user_" + format(zlib.crc32(os.path.abspath(FILE).encode()), "x")]
    assert generated.generate(dataclasses.replace(mod.TINY, expect="fails")) == []


@pytest.mark.slow
def test_verify_cli_reachable_score_and_exit(tmp_path, capsys):
    """``afltheory verify FILE --mutants``: exit 0 when the unmutated verdicts pass (survivors are reported,
    not failed), named tests off, the reachable line printed per generated kind. With the power check the
    file's checks kill all 5 generated mutants (the K weight + 1 and the bound × 2 are the power check's)."""
    from afltheory.cli import main

    rc = main(["verify", FILE, "--mutants", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert rc == 0
    assert "generated rule mutants: 3 of 3 that reach these checks (100 %); 0 do not" in out
    assert "generated claim mutants: 2 of 2 that reach these checks (100 %); 0 do not" in out
    assert "reachable mutants killed: " in out


def test_verify_cli_names_a_generated_mutant(tmp_path, capsys):
    """``verify FILE --mutants gen.…``: a generated mutant is found by name (generated before the names are
    resolved) and killed as hand-derived; exit 0."""
    from afltheory.cli import main

    rc = main(["verify", FILE, "--mutants", PRE + "step.squared", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert rc == 0
    assert "mutation score: 1/1 mutants killed (100 %)" in out
