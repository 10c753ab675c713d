"""The per-worker local computation of a rule is normalized once (``afltheory.algorithms.local_view``,
issue 27 item 3): ``fixed_local_steps`` (None | int | one int per worker) and ``local_step_sizes`` become
(M,) arrays or None, with a ValueError naming the hook on a bad length or value; ``apply`` sets a sampled
schedule's K exactly as ``simulate`` runs it. Deterministic (fixed seeds, exact comparisons)."""

from dataclasses import dataclass

import numpy as np
import pytest

from afltheory.algorithms import AFACD, AsySG, DynamicFedAvg, FedAvg, LocalView, local_view
from afltheory.anarchy import Behaviour, UniformArrivals, UniformDelay, UniformSteps

SCHED = Behaviour(UniformArrivals(2), UniformDelay(2), UniformSteps(1, 5)).sample(6, 3, 4, seed=1)


def test_rules_without_per_worker_values_leave_the_schedule_alone():
    v = local_view(AFACD(1.0, 0.1), 4)
    assert isinstance(v, LocalView) and v.steps is None and v.step_sizes is None and v.uniform_steps is None
    assert v.apply(SCHED) is SCHED
    assert AFACD(1.0, 0.1).local_view(4).steps is None  # the ServerRule method is the same view


def test_fixed_int_and_tuple():
    v = local_view(AsySG(1.0, 0.1), 4)
    assert v.uniform_steps == 1 and v.steps.tolist() == [1, 1, 1, 1] and v.step_sizes is None
    s = v.apply(SCHED)
    assert (s.local_steps == 1).all() and (s.init_local_steps == 1).all()
    assert np.array_equal(s.workers, SCHED.workers) and np.array_equal(s.delays, SCHED.delays)
    dyn = DynamicFedAvg(mu=0.4, epochs=(1, 2, 4, 2))
    v = local_view(dyn, 4)
    assert v.uniform_steps is None and v.steps.tolist() == [1, 2, 4, 2]
    np.testing.assert_array_equal(v.step_sizes, [0.4, 0.2, 0.1, 0.2])
    s = v.apply(SCHED)
    np.testing.assert_array_equal(s.local_steps, np.array([1, 2, 4, 2])[SCHED.workers])
    np.testing.assert_array_equal(s.init_local_steps, np.broadcast_to([1, 2, 4, 2], (3, 4)))
    # equal epochs: one K, one step size (the rule's eta_L), the ordinary runners
    v = local_view(DynamicFedAvg(mu=0.4, epochs=2), 4)
    assert v.uniform_steps == 2 and v.step_sizes is None


@dataclass(frozen=True)
class PerWorker(FedAvg):
    """A rule fixing K per worker through the hook alone."""

    fixed_local_steps = (1, 3, 3)


def test_bad_per_worker_values_name_the_hook():
    with pytest.raises(
        ValueError, match=r"fixed_local_steps has 3 per-worker local-step counts.*num_workers=4"
    ):
        local_view(PerWorker(1.0, 0.1), 4)
    assert local_view(PerWorker(1.0, 0.1), 3).steps.tolist() == [1, 3, 3]
    with pytest.raises(ValueError, match=r"epochs has 4 entries; expected one per agent \(num_workers=3\)"):
        local_view(DynamicFedAvg(mu=0.4, epochs=(1, 2, 4, 2)), 3)

    class Zero(FedAvg):
        fixed_local_steps = (1, 0)

    with pytest.raises(ValueError, match=r"fixed_local_steps\[1\]=0"):
        local_view(Zero(1.0, 0.1), 2)

    class Sizes(FedAvg):
        def local_step_sizes(self, num_workers):
            return np.array([0.1, 0.2, 0.3])

    with pytest.raises(ValueError, match=r"local_step_sizes has 3 entries; expected one per worker"):
        local_view(Sizes(1.0, 0.1), 2)

    class Negative(FedAvg):
        def local_step_sizes(self, num_workers):
            return np.array([0.1, -0.2])

    with pytest.raises(ValueError, match=r"local_step_sizes=.*must be finite and > 0"):
        local_view(Negative(1.0, 0.1), 2)
    with pytest.raises(ValueError, match=r"num_workers=0"):
        local_view(AFACD(1.0, 0.1), 0)
    with pytest.raises(ValueError, match=r"the schedule has num_workers=4"):
        local_view(AsySG(1.0, 0.1), 3).apply(SCHED)


def test_per_worker_step_sizes_refuse_a_step_size_schedule():
    class Scheduled(FedAvg):
        def local_step_sizes(self, num_workers):
            return np.arange(1.0, num_workers + 1) / 10

    with pytest.raises(ValueError, match="per-worker local step sizes cannot be combined"):
        local_view(Scheduled(1.0, "0.1/(1 + t)"), 3)
