"""Checks that give a user's file power over its generated mutants (claims.verify.verify_latex and
verify_reference), pinned on hand-derived cases, and the generated schedule mutants (claim edits of the step).

The tiny claim (tests/mutants/tiny_claim.py): noise-free FedAvg, η = 1, η_L = 0.1, K = 1, M = m = 2, T = 20 on
f = ½‖x − x*‖², x_0 = x* + (1, 1) (D0 = 2): x_T − x* = 0.9^T (x_0 − x*), so f(x_T) − f* = ½ · 0.81^T · 2 =
0.81^20 = 0.0148… exactly. Its bound 0.75 D0 (1 − η_L)^{2T} is also given as LaTeX. Hand-derived kills of the
power check (``tiny_claim_power``):
- step squared (γ = 0.01), normalizer + 1 (γ = 0.0667), K weight + 1 (γ = 0.2): the run contracts by 0.99,
  0.933, 0.8 instead of 0.9 per round: the reference ½ · 0.81^T · D0 fails; the LaTeX verdict reads no run;
- the bound × 2 or ÷ 2: the sympy bound no longer equals its LaTeX: the LaTeX verdict fails; the reference
  does not read the bound.
"""

import dataclasses
import os
import sys
import zlib

import numpy as np
import pytest
import sympy as sp

from afltheory.algorithms import FedAvg
from afltheory.anarchy import Behaviour, ConstantSteps, UniformArrivals
from afltheory.claims import Assumptions, Claim, Delta, K, L, T, t
from afltheory.claims.verify import verify_latex, verify_reference
from afltheory.mutants import generated
from afltheory.mutants.run import kill_matrix
from afltheory.problems import HeterogeneousQuadratic

FILE = os.path.join(os.path.dirname(__file__), "tiny_claim.py")
PRE = "gen.tiny.contraction."


def _tiny():
    generated.generate_for_files([FILE])
    return sys.modules["afltheory_user_" + format(zlib.crc32(os.path.abspath(FILE).encode()), "x")]


def _claim(**kw):
    base = dict(
        id="toy",
        title="toy",
        rule=FedAvg,
        eta=1,
        eta_L=1 / (L * K * sp.sqrt(T)),
        assumptions=Assumptions(function="smooth", participation="full"),
        bound={"transient": 4 * L * Delta / sp.sqrt(T)},
        latex={"bound": r"\frac{4L\Delta}{\sqrt{T}}"},
    )
    return Claim(**{**base, **kw})


# ------------------------------------------------------------------------------------------- verify_latex
def test_latex_correct_claim_passes_and_its_control_fails():
    v = verify_latex(_claim())
    assert v.passed and v.ok and v.measured == 0 and v.relation == "=="
    assert v.negative_control is not None and not v.negative_control.passed  # 8 L Δ/√T is told apart
    assert v.id == "toy.latex" and v.derivation


def test_latex_x2_slip_fails_and_names_the_entry():
    v = verify_latex(_claim(bound={"transient": 8 * L * Delta / sp.sqrt(T)}))
    assert not v.passed and v.measured == 1
    assert "DIFFERS bound" in v.notes and "difference" in v.notes


def test_latex_compares_steps_and_values():
    ok = _claim(latex={"bound": r"\frac{4L\Delta}{\sqrt{T}}", "eta_L": r"\frac{1}{LK\sqrt{T}}"})
    assert verify_latex(ok).passed and "compared: bound, eta_L" in verify_latex(ok).notes
    slip = dataclasses.replace(ok, eta_L=1 / (L * K * sp.sqrt(T * K)))  # T counted in local steps
    v = verify_latex(slip)
    assert not v.passed and v.measured == 1 and "DIFFERS eta_L" in v.notes


def test_latex_skips_points_outside_both_domains():
    """(1 − η_L)^{2T} is undefined for η_L > 1 at a non-integer T: such random points are skipped, not a
    difference (the tiny claim's bound)."""
    mod = _tiny()
    assert verify_latex(mod.TINY).passed
    v = verify_latex(dataclasses.replace(mod.TINY, bound={"c": 2 * mod.TINY.bound["contraction"]}))
    assert not v.passed


def test_latex_refuses_a_claim_without_latex_and_an_unknown_entry():
    with pytest.raises(ValueError, match="carries no LaTeX"):
        verify_latex(_claim(latex={}))
    with pytest.raises(ValueError, match=r"latex\['nope'\] names no bound"):
        verify_latex(_claim(latex={"nope": "T"}))
    with pytest.raises(ValueError, match="points"):
        verify_latex(_claim(), points=0)


# --------------------------------------------------------------------------------------- verify_reference
def _setup():
    mod = _tiny()
    return mod, mod.TINY, mod.P, mod.BEH, mod.P.constants.x_star + 1.0


def test_reference_pinned_exact():
    mod, claim, p, beh, x0 = _setup()
    v = verify_reference(claim, p, beh, 0.81**20, rounds=20, x0=x0)  # ½ · 0.81^20 · D0, D0 = 2
    assert v.passed and v.ok and v.method == "exact moments"
    assert v.measured == pytest.approx(0.81**20, rel=1e-12)
    # the control: T = 19 gives 0.81^19, 23 % above the reference: it fails as required
    assert v.negative_control.measured == pytest.approx(0.81**19, rel=1e-12)
    assert not v.negative_control.passed


def test_reference_as_expression_and_callable():
    mod, claim, p, beh, x0 = _setup()
    assert verify_reference(claim, p, beh, "D0 * 0.81**T / 2", rounds=20, x0=x0).passed
    assert verify_reference(claim, p, beh, lambda v: v["D0"] * 0.81 ** v["T"] / 2, rounds=20, x0=x0).passed


def test_reference_wrong_value_fails():
    mod, claim, p, beh, x0 = _setup()
    v = verify_reference(claim, p, beh, 0.81**20 * (1 + 1e-4), rounds=20, x0=x0)
    assert not v.passed and v.details["rel_err"] == pytest.approx(1e-4, rel=1e-3)


def test_reference_monte_carlo_interval():
    """Noise-free and full participation: every replicate is the same number, so the 99 % interval has zero
    width and the reference is met to rtol; one round short is 0.81^19 (outside)."""
    mod, claim, p, beh, x0 = _setup()
    v = verify_reference(claim, p, beh, 0.81**20, rounds=20, x0=x0, exact=False, replicates=4)
    assert v.passed and v.method.startswith("monte-carlo") and v.ci is not None
    assert v.ci[0] == pytest.approx(0.81**20, rel=1e-9) and not v.negative_control.passed


def test_reference_one_round_has_no_power_and_bad_input():
    mod, claim, p, beh, x0 = _setup()
    v = verify_reference(claim, p, beh, 0.81, rounds=1, x0=x0)
    assert v.passed and v.negative_control is None and "no power" in v.notes
    with pytest.raises(ValueError, match="rtol"):
        verify_reference(claim, p, beh, 0.81, rounds=1, x0=x0, rtol=2.0)
    with pytest.raises(ValueError, match="reference"):
        verify_reference(claim, p, beh, "D0 +", rounds=1, x0=x0)
    with pytest.raises(ValueError, match="finite"):
        verify_reference(claim, p, beh, float("inf"), rounds=1, x0=x0)


# ------------------------------------------------------------------------------- kills on the tiny claim
def test_power_check_kills_every_generated_mutant():
    km = kill_matrix(
        [], files=[FILE], generated=True, with_tests=False, controls=False, only=["tiny_claim_power"]
    )
    kills = {m[len(PRE) :]: km.killed_by(m) for m in km.mutants}
    ref, lat = "tiny.contraction.reference", "tiny.contraction.latex"
    assert kills == {
        "step.squared": [ref],
        "normalizer.off_by_one": [ref],
        "k_weight.off_by_one": [ref],
        "bound.contraction.x2": [lat],
        "bound.contraction.div2": [lat],
    }
    assert km.baseline_failures() == []


# ---------------------------------------------------------------------------- generated schedule mutants
def test_schedule_mutants_edit_the_claims_step():
    """A step schedule in t gets late / early / per-step mutants as claim edits (every engine builds its rule
    from the claim's step): η_L = 1/(1 + t) late is 1/(2 + t); early at t = 0 stays 1; per step (K_max = 4)
    is 1/(1 + t·K), K the run's (1/9 at t = 2, K = 4). Under K_max = 1 the per-step mutant is the identity
    and not generated."""
    c = _claim(eta_L=1 / (1 + t), latex={}, assumptions=Assumptions(participation="full", max_local_steps=4))
    gen = {m.name.split("toy.")[1]: m for m in generated.generate(c)}
    late, early, per = (gen[f"schedule.eta_L.{k}"] for k in ("late", "early", "per_step"))
    assert {late.category, early.category, per.category} == {"generated schedule"}
    at = lambda m, v: float(m.claim_edit(c).eta_L.subs(t, v))  # noqa: E731
    assert at(late, 0) == 0.5 and at(late, 3) == 0.2
    assert at(early, 0) == 1.0 and at(early, 3) == pytest.approx(1 / 3)
    assert float(per.claim_edit(c).eta_L.subs({t: 2, K: 4})) == pytest.approx(1 / 9)  # t·K, K the run's
    c1 = dataclasses.replace(c, assumptions=Assumptions(participation="full", max_local_steps=1))
    names = [m.name for m in generated.generate(c1)]
    assert "gen.toy.schedule.eta_L.late" in names and "gen.toy.schedule.eta_L.per_step" not in names


def test_schedule_mutant_changes_the_exact_run():
    """The late schedule acts in the exact engine (an at_round override did not: the engine resolves the
    schedule before the mutation machinery substitutes the round's rule). Noise-free f = ½‖x − x*‖², K = 1,
    η_L = 1/(2 + t): x_T − x* = Π_{t<T} (1 − 1/(2 + t)) (x_0 − x*) = (1/(T + 1)) (x_0 − x*); late:
    Π (1 − 1/(3 + t)) = 2/(T + 2)."""
    c = _claim(
        eta_L=1 / (2 + t),
        measured="last_gap",
        latex={},
        assumptions=Assumptions(function="strongly_convex", participation="full", max_local_steps=1),
    )
    p = HeterogeneousQuadratic.from_arrays(hessian_diag=np.ones(2), centers=np.zeros((2, 2)), sigma_L=0.0)
    beh, x0 = Behaviour(UniformArrivals(2), local_steps=ConstantSteps(1)), np.ones(2)  # D0 = 2
    late = next(m for m in generated.generate(c) if m.name.endswith("schedule.eta_L.late"))
    assert verify_reference(c, p, beh, 0.5 * 2 / 11**2, rounds=10, x0=x0).passed
    v = verify_reference(late.claim_edit(c), p, beh, 0.5 * 2 / 11**2, rounds=10, x0=x0)
    assert not v.passed and v.measured == pytest.approx(0.5 * 2 * (2 / 12) ** 2, rel=1e-9)
