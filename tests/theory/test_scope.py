"""Theorem bounds say when they are evaluated outside their scope (issue 21, point 3)."""

from __future__ import annotations

import warnings

import pytest

import afltheory as aft
from afltheory import anarchy as an
from afltheory.algorithms import AFACD, AFACS
from afltheory.theory import theorem2, theorem3, theorem4
from afltheory.theory._scope import OutOfScope, ScopeWarning

PROB = aft.problems.HeterogeneousQuadratic(
    dim=3, num_workers=6, L=1.0, mu=0.1, sigma_L=0.1, sigma_G=0.5, seed=0
)
ETA_L = 0.01  # (C1), (C2) hold for K ≤ 2, τ ≤ 2
UNIFORM = an.Behaviour(an.UniformArrivals(3), an.UniformDelay(2), an.UniformSteps(1, 2))
BIASED = an.Behaviour(
    an.BiasedArrivals(3, [0.3, 0.3, 0.1, 0.1, 0.1, 0.1]), an.UniformDelay(2), an.UniformSteps(1, 2)
)


def _run(algo, beh):
    return aft.simulate(PROB, algo, beh, rounds=20, replicates=2, seed=0)


def _kw(tr, eta):
    return dict(eta=eta, eta_L=ETA_L, f0=PROB.value(tr.x0), num_workers=PROB.num_workers)


def test_inside_scope_is_silent():
    eta = 0.5 * theorem3.admissible_step_sizes(L=1.0, eta_L=ETA_L, K_max=2, tau=2, num_workers=6).eta_max
    tr = _run(AFACD(eta, ETA_L), UNIFORM)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ScopeWarning)
        theorem3.bound(tr.schedule, PROB.constants, **_kw(tr, eta))
        theorem2.bound(tr.schedule, PROB.constants, **_kw(tr, eta))


def test_theorem3_on_biased_arrivals_warns_and_can_refuse():
    eta = 0.5 * theorem3.admissible_step_sizes(L=1.0, eta_L=ETA_L, K_max=2, tau=2, num_workers=6).eta_max
    tr = _run(AFACD(eta, ETA_L), BIASED)
    with pytest.warns(ScopeWarning, match="uniform arrivals"):
        theorem3.bound(tr.schedule, PROB.constants, **_kw(tr, eta))
    with pytest.raises(OutOfScope, match="BiasedArrivals"):
        theorem3.bound(tr.schedule, PROB.constants, scope="raise", **_kw(tr, eta))
    with warnings.catch_warnings():
        warnings.simplefilter("error", ScopeWarning)
        theorem3.bound(tr.schedule, PROB.constants, scope="ignore", **_kw(tr, eta))
        theorem2.bound(tr.schedule, PROB.constants, **_kw(tr, eta))  # Theorem 2 covers general arrivals


def test_theorem4_on_an_afacd_run_and_theorem2_on_afacs_warn():
    tr = _run(AFACD(0.1, ETA_L), UNIFORM)
    with pytest.warns(ScopeWarning, match="AFA-CS"):
        theorem4.bound(tr.schedule, PROB.constants, **_kw(tr, 0.1))
    tr = _run(AFACS(0.1, ETA_L), UNIFORM)
    with pytest.warns(ScopeWarning, match="about AFA-CD"):
        theorem2.bound(tr.schedule, PROB.constants, **_kw(tr, 0.1))


def test_step_sizes_outside_the_conditions_warn():
    eta = 100 * theorem2.admissible_step_sizes(L=1.0, eta_L=ETA_L, K_max=2, tau=2).eta_max
    tr = _run(AFACD(eta, ETA_L), UNIFORM)
    with pytest.warns(ScopeWarning, match="outside the conditions: C3"):
        theorem2.bound(tr.schedule, PROB.constants, **_kw(tr, eta))
    with pytest.raises(ValueError, match="scope"):
        theorem2.bound(tr.schedule, PROB.constants, scope="sometimes", **_kw(tr, eta))


def test_origin_is_recorded_and_ignored_by_equality():
    """The origin is a declarative record (issue 27: no live objects flow back into theory)."""
    from afltheory.anarchy import BehaviourOrigin, RuleOrigin

    tr = _run(AFACD(0.1, ETA_L), UNIFORM)
    assert tr.schedule.origin["algorithm"] == RuleOrigin("AFACD", "AFA-CD")
    assert tr.schedule.origin["behaviour"] == BehaviourOrigin("Behaviour", "UniformArrivals", "uniform")
    plain = UNIFORM.sample(20, 2, 6, seed=0)
    assert plain.origin is None


def test_scope_reads_the_rules_declarative_family_not_its_type():
    """``ServerRule.analysed_as`` decides the algorithm part of the scope: AFA-CD and AsySG (K = 1) for
    Theorems 2–3, AFA-CS for Theorem 4; a subclass inherits it (a mutant is judged against its algorithm's
    bound); a rule declaring another family (FedAvg: None) is outside, whatever its class."""
    from dataclasses import dataclass

    from afltheory.algorithms import AsySG, FedAvg
    from afltheory.theory._scope import _algorithm_problem

    assert (AFACD(1.0, 0.1).analysed_as, AsySG(1.0).analysed_as) == ("AFA-CD", "AFA-CD")
    assert AFACS(1.0, 0.1).analysed_as == "AFA-CS" and FedAvg(1.0, 0.1).analysed_as is None
    assert _algorithm_problem("theorem2", AsySG(1.0)) is None
    assert _algorithm_problem("theorem4", AFACS(1.0, 0.1)) is None
    assert "is about AFA-CD" in _algorithm_problem("theorem3", AFACS(1.0, 0.1))
    assert "is about AFA-CS" in _algorithm_problem("theorem4", AFACD(1.0, 0.1))
    assert "is about AFA-CD" in _algorithm_problem("theorem2", FedAvg(1.0, 0.1))

    @dataclass(frozen=True)
    class Variant(AFACD):
        """A subclass that declares itself outside the paper's algorithms."""

        analysed_as = None

    assert "Variant" in _algorithm_problem("theorem2", Variant(1.0, 0.1))


def test_scope_reads_the_arrival_processs_declared_law_not_its_type():
    """Theorem 3's arrival assumption is read from ``Arrivals.declared_law`` (recorded in the origin): a
    renamed ``UniformArrivals`` keeps the declaration; a subclass that redefines the draws does not (control:
    it is outside Theorem 3 even though it is an instance of ``UniformArrivals``)."""
    import numpy as np

    class Renamed(an.UniformArrivals):
        """Uniform arrivals under another name."""

    class FirstM(an.UniformArrivals):
        """Always the first m workers: redefines the draws."""

        def sample(self, rng, rounds, num_workers):
            return np.tile(np.arange(self.m), (rounds, 1))

        def sample_block(self, rng, replicates, rounds, num_workers):
            return np.tile(np.arange(self.m), (replicates, rounds, 1))

    assert Renamed(3).declared_law == "uniform" and FirstM(3).declared_law is None
    assert an.BiasedArrivals(3, [1 / 6] * 6).declared_law is None
    eta = 0.5 * theorem3.admissible_step_sizes(L=1.0, eta_L=ETA_L, K_max=2, tau=2, num_workers=6).eta_max
    for arrivals, outside in ((Renamed(3), False), (FirstM(3), True)):
        tr = _run(AFACD(eta, ETA_L), an.Behaviour(arrivals, an.UniformDelay(2), an.UniformSteps(1, 2)))
        origin = tr.schedule.origin
        assert origin["behaviour"].arrivals_law == (None if outside else "uniform")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            theorem3.bound(tr.schedule, PROB.constants, **_kw(tr, eta))
        hits = [
            w for w in caught if issubclass(w.category, ScopeWarning) and "uniform arrivals" in str(w.message)
        ]
        assert bool(hits) == outside, (arrivals, [str(w.message) for w in caught])


def test_the_scope_warning_points_at_the_caller_of_bound():
    """The warning's location is this file (the line calling ``bound``), not the theory package, for the
    generated AFA-CD ``bound`` (Theorems 2 and 3) and Theorem 4's hand-written one alike."""
    tr = _run(AFACS(0.1, ETA_L), UNIFORM)
    for mod in (theorem2, theorem3):
        with pytest.warns(ScopeWarning) as rec:
            mod.bound(tr.schedule, PROB.constants, **_kw(tr, 0.1))
        assert {r.filename for r in rec} == {__file__}, mod.__name__
    tr = _run(AFACD(0.1, ETA_L), UNIFORM)
    with pytest.warns(ScopeWarning) as rec:
        theorem4.bound(tr.schedule, PROB.constants, **_kw(tr, 0.1))
    assert {r.filename for r in rec} == {__file__}
