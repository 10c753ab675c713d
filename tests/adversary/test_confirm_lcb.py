"""The box search's Monte Carlo confirmation (``adversary.search.confirm``) decides on the one lower
confidence bound the generic path uses (``mirrored_lcb`` of ``analysis.upper_confidence_bound``), so a
statistics fault in that bound — the catalogue mutant ``stats.ucb_is_mean`` (quantile 0: the bound collapses
to the mean) — reaches it: on a known non-violation (a bound equal to the exact expectation of the left side,
so mean(LHS − bound) = 0) the mutant confirms a "violation" where the correct 99 % bound rejects it."""

from __future__ import annotations

import dataclasses
import importlib
import math

import numpy as np
import pytest

from afltheory import mutants
from afltheory._faults import FaultPoint
from afltheory.adversary.claims import get_claim
from afltheory.analysis import upper_confidence_bound
from afltheory.exact import moments
from afltheory.mutants.mutant import Mutant

S = importlib.import_module("afltheory.adversary.search")  # the module (``adversary.search`` is the function)


def test_mirrored_lcb_hand_value():
    # samples 0, 1, 2, 3: mean 1.5, sd = √(5/3) = 1.290994, t_{0.99, 3} = 4.540703 (t table):
    # LCB = 1.5 − 4.540703 · 1.290994 / 2 = 1.5 − 2.931011 = −1.431011
    ucb = upper_confidence_bound([0.0, 1.0, 2.0, 3.0], 0.99)
    assert ucb == pytest.approx(1.5 + 2.931011, abs=1e-5)
    assert S.mirrored_lcb(1.5, ucb) == pytest.approx(-1.431011, abs=1e-5)
    assert S.mirrored_lcb(2.0, 2.0) == 2.0  # zero spread: the mean itself
    assert S.mirrored_lcb(1.0, math.inf) == math.inf  # a diverged replicate: nothing below the mean is known
    with pytest.raises(ValueError, match="mean=nan must be finite"):
        S.mirrored_lcb(float("nan"), 1.0)


class _BoundAt:
    """A theorem module whose bound on every realized schedule is the constant ``value`` (all else the
    module's own: its conditions, terms, τ)."""

    def __init__(self, module, value):
        self._module, self._value = module, value

    def __getattr__(self, name):
        return getattr(self._module, name)

    def bound(self, schedule, *args, **kwargs):
        return np.full(np.shape(self._module.bound(schedule, *args, **kwargs)), self._value)


@pytest.fixture(scope="module")
def tight():
    """(claim, instance, E[LHS]): thm2's conditions with its bound replaced by the exact expectation of the
    left side on a searched instance — a known non-violation (mean(LHS − bound) = 0 exactly)."""
    inst = S.search("thm2", budget=64, seed=3, confirm_violation=False).instance
    c = get_claim("thm2")
    exact = float(
        moments(inst.problem(), inst.algorithm(), inst.behaviour(), inst.rounds, x0=inst.x0).time_average(
            inst.rounds
        )
    )

    class Tight(type(c)):
        @property
        def module(self):
            return _BoundAt(super().module, exact)

    return Tight(**{f.name: getattr(c, f.name) for f in dataclasses.fields(c)}), inst, exact


def _ucb_is_mean() -> Mutant:
    """The catalogue's ``stats.ucb_is_mean`` when catalogued; else the same fault (quantile 0 at the UCB's
    fault point) as a Mutant here."""
    try:
        return mutants.get("stats.ucb_is_mean")
    except ValueError:
        return Mutant(
            "stats.ucb_is_mean",
            "statistics",
            "the one-sided UCB collapses to the Monte Carlo mean (quantile 0)",
            faults={FaultPoint.STATS_UCB_QUANTILE: lambda level, n: 0.0},
        )


def test_the_ucb_mutant_reaches_the_box_confirmation(tight):
    claim, inst, exact = tight
    # seed 2: the sample mean of LHS − bound is above 0 (it is 0 in expectation; about half the seeds)
    ok = S.confirm(claim, inst, seed=2, replicates=200)
    assert ok["inside_conditions"] is True and ok["bound_mean"] == exact
    assert ok["diff_mean"] > 0 > ok["diff_lcb"]
    # the correct 99 % bound rejects: a false confirmation here has probability ≤ 1 % per seed
    assert ok["confirmed"] is False and "not above 0" in ok["why"]
    with mutants.injected(_ucb_is_mean()):
        bad = S.confirm(claim, inst, seed=2, replicates=200)
    # the mutant decides on the mean: the non-violation is "confirmed" — the fault is visible on this path
    assert bad["diff_mean"] == ok["diff_mean"] and bad["diff_lcb"] == pytest.approx(
        ok["diff_mean"], rel=1e-12
    )
    assert bad["confirmed"] is True
    # correct code again after the block: the same rejection
    assert S.confirm(claim, inst, seed=2, replicates=200)["diff_lcb"] == ok["diff_lcb"]
