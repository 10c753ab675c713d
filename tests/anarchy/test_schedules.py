"""Anarchic behaviour (issue 3): schedules respect their bounds, inclusion frequencies, replay, bad input."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from afltheory import anarchy as an

SETTINGS = settings(max_examples=40, deadline=None)


@st.composite
def behaviours(draw):
    M = draw(st.integers(1, 12))
    m = draw(st.integers(1, M))
    kind = draw(st.sampled_from(["uniform", "biased", "fixed", "cyclic", "markov"]))
    if kind == "uniform":
        arr = an.UniformArrivals(m)
    elif kind == "biased":
        w = np.array(draw(st.lists(st.floats(0.05, 1.0), min_size=M, max_size=M)))
        arr = an.BiasedArrivals(m, w / w.sum())
    elif kind == "fixed":
        arr = an.FixedArrivals(draw(st.permutations(range(M)))[:m])
    elif kind == "cyclic":
        arr = an.CyclicArrivals(m)
    else:
        arr = an.MarkovAvailability(m, p_on=draw(st.floats(0.2, 1.0)), p_off=draw(st.floats(0.0, 0.8)))
    D = draw(st.integers(0, 6))
    delays = draw(
        st.sampled_from([an.NoDelay(), an.UniformDelay(D), an.FixedDelay(D), an.GeometricDelay(0.4, D)])
    )
    lo = draw(st.integers(1, 5))
    hi = draw(st.integers(lo, 9))
    steps = draw(
        st.sampled_from(
            [
                an.ConstantSteps(lo),
                an.UniformSteps(lo, hi),
                an.PerWorkerSteps(list(range(1, M + 1))),
                an.TimeVaryingSteps([lo, hi, lo]),
            ]
        )
    )
    return M, an.Behaviour(arr, delays, steps)


@SETTINGS
@given(behaviours(), st.integers(1, 30), st.integers(1, 5), st.integers(0, 2**31))
def test_schedules_respect_their_bounds(mb, T, R, seed):
    M, beh = mb
    s = beh.sample(T, R, M, seed)
    assert s.workers.shape == (R, T, beh.m)
    t = np.arange(T)[None, :, None]
    assert np.all(s.delays >= 0) and np.all(s.delays <= np.minimum(t, beh.delays.max_delay))
    assert np.all((s.workers >= 0) & (s.workers < M))
    assert all(len(set(row)) == beh.m for row in s.workers.reshape(-1, beh.m))
    assert s.local_steps.min() >= 1 and s.local_steps.max() <= beh.local_steps.K_max
    if isinstance(beh.local_steps, an.UniformSteps):
        assert s.local_steps.min() >= beh.local_steps.low
    # same seed, same schedule; leading replicates do not depend on the replicate count
    assert beh.sample(T, R, M, seed) == s
    assert beh.sample(T, R + 2, M, seed).replicate(slice(0, R)) == s
    # Behaviour.sample skips re-validation (valid by construction): the public constructor must accept it
    assert an.Schedule(s.workers, s.delays, s.local_steps, M, s.init_local_steps) == s


@pytest.mark.parametrize("M", [8, 50])  # m close to M and m ≪ M (Floyd's algorithm; more in test_sampling.py)
def test_uniform_arrivals_have_uniform_inclusion_frequencies(M):
    """20 000 rounds of m=3 of M: each count ~ Binomial(2·10⁴, 3/M) and each pair count ~ Binomial(2·10⁴,
    6/(M(M−1))); 5.5-sigma bands (Bonferroni over ≤ 1275 cells: false-failure probability < 5e-5)."""
    n, m = 20_000, 3
    s = an.Behaviour(an.UniformArrivals(m)).sample(n, 1, M, seed=1)
    counts = np.bincount(s.workers.ravel(), minlength=M)
    p = m / M
    assert np.all(np.abs(counts - n * p) < 5.5 * np.sqrt(n * p * (1 - p))), counts
    ind = np.zeros((n, M))
    np.put_along_axis(ind, s.workers[0], 1.0, axis=1)
    pairs = (ind.T @ ind)[np.triu_indices(M, 1)]
    q = m * (m - 1) / (M * (M - 1))
    assert np.all(np.abs(pairs - n * q) < 5.5 * np.sqrt(n * q * (1 - q)) + 1), pairs


def test_biased_inclusion_probabilities_match_sampling_and_sum_to_m():
    """Exact DP inclusion probabilities vs 40 000 sampled rounds (5-sigma per entry, false failure < 1e-4)."""
    arr = an.BiasedArrivals.paper(5)
    pi, pij = arr.inclusion(10)
    assert np.isclose(pi.sum(), 5) and np.allclose(np.diag(pij), pi)
    assert np.allclose(pij.sum(axis=1), 5 * pi)  # Σ_j P(i, j ∈ S) = E[|S| 1{i∈S}] = m π_i
    W = arr.sample(np.random.default_rng(0), 40_000, 10)
    ind = np.zeros((40_000, 10))
    np.put_along_axis(ind, W, 1.0, axis=1)
    emp_pij = ind.T @ ind / 40_000
    se = np.sqrt(pij * (1 - pij) / 40_000) + 1e-12
    assert np.all(np.abs(emp_pij - pij) < 5 * se + 1e-9)


def test_biased_inclusion_hand_computed_two_of_three():
    """p = (1/2, 1/4, 1/4), m = 2: P(worker 0 excluded) = P(1 then 2) + P(2 then 1) = ¼·⅓ + ¼·⅓ = 1/6."""
    pi, pij = an.BiasedArrivals(2, [0.5, 0.25, 0.25]).inclusion(3)
    np.testing.assert_allclose(pi, [5 / 6, 7 / 12, 7 / 12])
    np.testing.assert_allclose(pij[1, 2], 1 / 6)


def test_uniform_inclusion_formula():
    pi, pij = an.UniformArrivals(3).inclusion(5)
    np.testing.assert_allclose(pi, 0.6)
    np.testing.assert_allclose(pij[0, 1], 3 * 2 / (5 * 4))


def test_afacs_memory_ages_bounded_when_every_worker_returns_every_period():
    """Cyclic arrivals: each worker returns every P = M/m rounds; with delays ≤ D every slot's staleness is
    ≤ P − 1 + D at every round (warm-start slots age t < P before their first refresh)."""
    M, m, D = 12, 3, 2
    s = an.Behaviour(an.CyclicArrivals(m), an.UniformDelay(D), an.ConstantSteps(1)).sample(60, 4, M, seed=3)
    stale, _ = s.memory()
    assert stale.max() <= M // m - 1 + D
    assert np.all(s.fresh_slots()[:, 0] == M)  # warm-start slots are all computed at x_0
    assert np.all(s.fresh_slots()[:, 1:] <= m)


def test_replay_reproduces_a_hand_written_schedule_exactly():
    s = an.Schedule(
        workers=[[0, 1], [2, 0], [1, 2]],
        delays=[[0, 0], [1, 0], [2, 1]],
        local_steps=[[1, 2], [3, 1], [2, 2]],
        num_workers=3,
    )
    r = an.Replay(s).sample(3, 4, 3, seed=123)
    assert r.replicates == 4 and np.all(r.workers == s.workers[0])
    assert an.Replay(s).sample(2, 1, 3) == s.replicate(0).__class__(
        s.workers[:, :2], s.delays[:, :2], s.local_steps[:, :2], 3, s.init_local_steps
    )
    with pytest.raises(ValueError, match="rounds=4 exceeds"):
        an.Replay(s).sample(4, 1, 3)


def test_schedule_save_load_roundtrip(tmp_path):
    s = an.EventDriven(m=2).sample(20, 2, 5, seed=0)
    s.save(tmp_path / "s.npz")
    assert an.Schedule.load(tmp_path / "s.npz") == s


def test_schedule_theorem_quantities_by_hand():
    s = an.Schedule([[[0, 1], [1, 2]]], [[[0, 0], [1, 0]]], [[[1, 3], [2, 4]]], num_workers=3)
    np.testing.assert_allclose(s.K_harmonic, [[1 / ((1 + 1 / 3) / 2), 1 / ((1 / 2 + 1 / 4) / 2)]])
    np.testing.assert_allclose(s.K_mean, [[2.0, 3.0]])
    np.testing.assert_allclose(s.K_sq_mean, [[5.0, 10.0]])
    assert s.tau.tolist() == [1]


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: an.UniformArrivals(0), "m=0"),
        (lambda: an.BiasedArrivals(2, [0.5, -0.1, 0.6]), "probs"),
        (lambda: an.BiasedArrivals(2, [0.5, 0.6]), "sum to 1"),
        (lambda: an.BiasedArrivals(3, [0.5, 0.5, 0.0]), "fewer than m=3"),
        (lambda: an.UniformDelay(-1), "max_delay"),
        (lambda: an.FixedDelay(-2), "delay"),
        (lambda: an.ConstantSteps(0), "K=0"),
        (lambda: an.UniformSteps(3, 2), "high"),
        (lambda: an.FixedArrivals([1, 1]), "distinct"),
        (lambda: an.Schedule([[0]], [[1]], [[1]], num_workers=2), "delay"),
        (lambda: an.Schedule([[0]], [[0]], [[0]], num_workers=2), "local_steps"),
        (lambda: an.Schedule([[0, 0]], [[0, 0]], [[1, 1]], num_workers=2), "twice"),
        (lambda: an.Behaviour(an.UniformArrivals(4)).sample(3, 1, 3), "m=4 exceeds num_workers=3"),
        (lambda: an.Behaviour(an.UniformArrivals(1)).sample(0, 1, 3), "rounds"),
        (lambda: an.Behaviour("uniform"), "arrivals"),
    ],
)
def test_bad_behaviour_input(make, match):
    with pytest.raises(ValueError, match=match):
        make()


@pytest.mark.parametrize("M, p_on, p_off", [(8, 0.5, 0.75), (12, 0.2, 0.8), (5, 0.05, 1.0)])
def test_markov_availability_counts_arrivals_not_simultaneous_availability(M, p_on, p_off):
    """m = M: all workers are rarely on at once ((p_on/(p_on+p_off))^M ≤ 0.4^8 ≈ 7e-4 per step for the first
    case), yet each round ends once every worker has arrived at some step of the wait (deterministic seed)."""
    arr = an.MarkovAvailability(M, p_on=p_on, p_off=p_off, max_wait=10_000)
    W = arr.sample(np.random.default_rng(0), 200, M)
    assert W.shape == (200, M) and all(sorted(row) == list(range(M)) for row in W.tolist())


def test_markov_availability_takes_earlier_arrivals_first():
    """p_off = 1: a worker is on for one step at a time, so both workers are rarely on together; a round
    records its two workers in arrival order, and both orders occur (seeded: deterministic)."""
    arr = an.MarkovAvailability(2, p_on=0.3, p_off=1.0)
    W = arr.sample(np.random.default_rng(1), 500, 2)
    assert all(sorted(row) == [0, 1] for row in W.tolist())
    assert {tuple(row) for row in W.tolist()} == {(0, 1), (1, 0)}
