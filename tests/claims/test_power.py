"""Item 7 (issue #39): when no control of a verdict can fail, the verdict names the tightest instance a cheap
search in the claim's class finds (``claims._power``), with its ratio; a verdict with power gets nothing.

Hand-derived case: f(x) = ½x² (one worker, d = 1), FedAvg with η = 1, η_L = ½, one local step, no noise:
x_T = x_0 2^(−T), so E f(x_T) − f* = ½ D0 4^(−T) with D0 = x_0². Exact engine throughout.
"""

from __future__ import annotations

import numpy as np
import pytest

from afltheory.algorithms import FedAvg
from afltheory.anarchy import Behaviour, ConstantSteps, UniformArrivals
from afltheory.claims import D0, Assumptions, Claim, T, _power, verify
from afltheory.problems import HeterogeneousQuadratic

P = HeterogeneousQuadratic.from_arrays(hessian_diag=np.ones(1), centers=np.zeros((1, 1)), sigma_L=0.0)
BEH = Behaviour(UniformArrivals(1), local_steps=ConstantSteps(1))
CLASS = Assumptions(function="strongly_convex", participation="full", max_delay=0, max_local_steps=1)


def _claim(bound, id="power.toy"):
    return Claim(id=id, title=id, assumptions=CLASS, rule=FedAvg, eta=1.0, eta_L=0.5, measured="last_gap",
                 bound=bound)  # fmt: skip


def test_no_power_names_the_tightest_instance():
    """Bound D0 4^(−T) + 1/T at T = 32 from x_0 = 1: the 1/T term dominates (ratio ~1e-18, no control can
    fail). The search's candidates T ∈ {32, 8, 2} × start scale {1, 10}: the tightest is T = 2, x_0 = 10
    (D0 = 100): measured 50/16 = 3.125, bound 100/16 + 1/2 = 6.75, ratio 0.46296…"""
    v = verify(_claim({"init": D0 * 4.0**-T, "transient": 1 / T}), P, BEH, rounds=32, x0=np.ones(1))
    assert v.passed and v.method == "exact moments" and v.negative_control is None and "no power" in v.notes
    best = v.details["tightest_instance"]
    assert best["rounds"] == 2 and best["x0_scale"] == 10.0 and best["searched"] == 5
    assert best["measured"] == pytest.approx(3.125, rel=1e-12)
    assert best["bound"] == pytest.approx(6.75, rel=1e-12)
    assert best["ratio"] == pytest.approx(3.125 / 6.75, rel=1e-12)
    assert "rounds=2, x_0 = x* + 10·(x_0 − x*): measured/bound = 0.463" in v.notes


def test_a_verdict_with_power_gets_nothing():
    """Bound 0.6 D0 4^(−T): ratio 1/1.2, the halved bound (0.3 D0 4^(−T) < ½ D0 4^(−T)) fails: power."""
    v = verify(_claim({"init": 0.6 * D0 * 4.0**-T}), P, BEH, rounds=8, x0=np.ones(1))
    assert v.passed and v.negative_control is not None and not v.negative_control.passed
    assert "tightest_instance" not in v.details and "tightest instance" not in v.notes
    assert v.measured / v.theoretical == pytest.approx(0.5 / 0.6, rel=1e-12)


def test_search_skips_instances_outside_the_class_and_keeps_its_own_run():
    """A claim whose condition T ≥ 20 excludes the shorter horizons: only the far start at T = 32 is
    judged, and the verdict's own run stays the tightest when every candidate is looser."""
    c = Claim(id="power.cond", title="power.cond", assumptions=CLASS, rule=FedAvg, eta=1.0, eta_L=0.5,
              measured="last_gap", bound={"transient": 1 / T}, conditions={"long": T >= 20})  # fmt: skip
    best = _power.tightest_instance(verify, c, P, BEH, rounds=32, x0=np.ones(1),
                                    kwargs={"replicates": 2, "own": (0.5 * 4.0**-32, 1 / 32)})  # fmt: skip
    assert best["searched"] == 5  # judged, but T = 8 and T = 2 are outside the condition
    assert best["rounds"] == 32 and best["x0_scale"] == 10.0  # D0 = 100: 50·4^(−32) · 32 beats 0.5·4^(−32)·32
    assert best["ratio"] == pytest.approx(50 * 4.0**-32 * 32, rel=1e-9)
