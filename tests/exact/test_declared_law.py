"""The exact engine reads a behaviour's law from declarations, never from concrete types (issue 27, item 2):
``round_components()`` on behaviours, ``worker_pmf``/``per_worker``/``time_invariant``/``check_workers`` on
delays, and the rule's local view (``ServerRule.local_view``) for fixed local steps.

Deterministic: exact moments have no Monte Carlo error; "equal" below is bitwise (``assert_array_equal``).
Each test has a control: a declared law that must be refused, or a subclass whose declaration must not be
inherited."""

from __future__ import annotations

import numpy as np
import pytest

from afltheory.algorithms import AFACD, AsySG, DynamicFedAvg
from afltheory.anarchy import (
    Behaviour,
    Delays,
    NoDelay,
    PerWorkerDelay,
    Replay,
    UniformArrivals,
    UniformDelay,
    UniformSteps,
)
from afltheory.exact import ExactUnavailable, moments, round_law
from afltheory.problems import HeterogeneousQuadratic

PROB = HeterogeneousQuadratic(dim=2, num_workers=3, L=1.0, mu=0.2, sigma_L=0.1, sigma_G=0.5, seed=4)
X0 = np.array([1.0, -0.5])
ARR = UniformArrivals(2)
STEPS = UniformSteps(1, 2)


def _g(algo, delays, rounds=12):
    return moments(PROB, algo, Behaviour(ARR, delays, STEPS), rounds, x0=X0).grad_norm_sq


class MyUniform(Delays):
    """A user-defined delay law: the uniform law on {0, …, min(t, 2)}, written from scratch."""

    max_delay = 2

    def sample(self, rng, workers):
        cap = np.minimum(np.arange(workers.shape[-2])[:, None], 2)
        return (rng.random(workers.shape) * (cap + 1)).astype(np.int64)

    def pmf(self, t):
        n = min(t, 2) + 1
        return np.full(n, 1.0 / n)


class NoLaw(Delays):
    """A user-defined delay process with no closed-form law."""

    max_delay = 1

    def sample(self, rng, workers):
        return np.zeros(workers.shape, dtype=np.int64)


class RelabelledUniform(UniformDelay):
    """A subclass that redefines the law (same numbers): it must not inherit ``stationary``."""

    def pmf(self, t):
        return UniformDelay.pmf(self, t)


class SlowWorkers(PerWorkerDelay):
    """A renamed per-worker law that changes nothing: handled exactly like ``PerWorkerDelay``."""


def test_a_user_delay_subclass_with_a_pmf_is_handled_exactly_as_the_builtin_law():
    assert (
        not MyUniform().time_invariant and not MyUniform().per_worker
    )  # nothing declared: compared per round
    assert UniformDelay(2).time_invariant
    np.testing.assert_array_equal(_g(AFACD(0.7, 0.05), MyUniform()), _g(AFACD(0.7, 0.05), UniformDelay(2)))


def test_a_subclass_redefining_the_law_inherits_no_stationarity_but_keeps_its_numbers():
    assert not RelabelledUniform(2).time_invariant  # control: the declaration is not inherited
    law = round_law(Behaviour(ARR, RelabelledUniform(2), STEPS), 3)
    assert law.stationary is False
    np.testing.assert_array_equal(
        _g(AFACD(0.7, 0.05), RelabelledUniform(2)), _g(AFACD(0.7, 0.05), UniformDelay(2))
    )


def test_a_user_delay_without_a_law_is_refused_with_the_simulate_hint():
    with pytest.raises(ExactUnavailable, match=r"NoLaw|no per-arrival pmf") as info:
        _g(AFACD(0.7, 0.05), NoLaw())
    assert "afltheory.simulate" in str(info.value)


def test_per_worker_delays_are_read_through_worker_pmf():
    base, renamed = PerWorkerDelay([0, 1, 2]), SlowWorkers([0, 1, 2])
    assert base.per_worker and renamed.per_worker and renamed.time_invariant
    np.testing.assert_array_equal(_g(AFACD(0.7, 0.05), renamed), _g(AFACD(0.7, 0.05), base))
    law = round_law(Behaviour(ARR, base, STEPS), 3)
    np.testing.assert_array_equal(law.delay_pmf(5, 1), [0.5, 0.5])
    with pytest.raises(ExactUnavailable, match=r"max_delays has 2 entries but num_workers=3"):
        round_law(Behaviour(ARR, PerWorkerDelay([0, 1]), STEPS), 3)


def test_behaviours_expose_their_round_components():
    beh = Behaviour(ARR, NoDelay(), STEPS)
    assert beh.round_components() == (beh.arrivals, beh.delays, beh.local_steps)
    sched = beh.sample(4, 1, 3, seed=0)
    assert Replay(sched).round_components() is None
    with pytest.raises(ExactUnavailable, match="round-mode Behaviour"):
        round_law(Replay(sched), 3)

    class Duck:
        """Behaviour-like, without ``round_components``: refused as before."""

        arrivals, delays, local_steps = ARR, NoDelay(), STEPS

        def sample(self, rounds, replicates, num_workers, seed=0):
            return beh.sample(rounds, replicates, num_workers, seed)

    with pytest.raises(ExactUnavailable, match="simulate"):
        round_law(Duck(), 3)


def test_round_law_reads_the_rules_local_view():
    """K fixed by the rule (AsySG: 1; DynamicFedAvg: its epochs) replaces the behaviour's K, whether passed as
    the view or as the hook value; a view for another M is refused."""
    beh = Behaviour(ARR, NoDelay(), STEPS)
    for rule, expected in ((AsySG(1.0, 0.1), (1, 1, 1)), (DynamicFedAvg(0.1, epochs=(1, 2, 3)), (1, 2, 3))):
        by_view = round_law(beh, 3, rule.local_view(3))
        by_hook = round_law(beh, 3, rule.fixed_local_steps)
        assert by_view.k_pmf == by_hook.k_pmf == tuple({k: 1.0} for k in expected)
    assert round_law(beh, 3).k_pmf[0] == {1: 0.5, 2: 0.5}  # control: no fixed K, the behaviour's pmf
    with pytest.raises(ValueError, match="num_workers=4"):
        round_law(beh, 3, AsySG(1.0, 0.1).local_view(4))
