"""Rules return new state (issue 27; optax's (init, update)): ``update_memory`` / ``aggregate`` /
``WorkerRule.finish`` return the new state, equal to a plain hand computation (pinned numbers, and a
derandomized hypothesis property against element-by-element loops); and the state passed in is DONATED —
``simulate`` and the torch backend never read it again: rules that return a fresh state and poison the donated
arrays with NaN give bit-identical traces (and match the independent reference loop). Deterministic: no
randomness beyond fixed seeds (hypothesis runs derandomized)."""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import afltheory as aft
from afltheory import engine
from afltheory.algorithms import (
    AFACD,
    AFACS,
    SCAFFOLD,
    ControlVariates,
    FedAvg,
    MemoryState,
    NoState,
    ServerState,
    WorkerState,
)
from afltheory.algorithms.published import SCAFFOLDStaleControl
from afltheory.anarchy import Behaviour, UniformArrivals, UniformDelay, UniformSteps
from afltheory.mutants import algorithms as MA
from afltheory.problems import HeterogeneousQuadratic
from paper_checks._reference import reference_iterates

PROPERTY = settings(max_examples=60, derandomize=True, deadline=None)


def _copy(a):
    """A copy of a NumPy array or a torch tensor (the torch backend keeps the worker state as tensors)."""
    return a.copy() if isinstance(a, np.ndarray) else a.clone()


def _poison(state):
    """Fill every array of a donated state with NaN: a later read would spread NaN into the trace."""
    for a in state.arrays():
        a[...] = float("nan")


@dataclass(frozen=True)
class FreshAFACS(AFACS):
    """AFA-CS whose ``update_memory`` returns a FRESH state and poisons the donated one."""

    def update_memory(self, state: ServerState, workers: np.ndarray, U: np.ndarray) -> ServerState:
        new = super().update_memory(MemoryState(state.memory.copy()), workers, U)
        _poison(state)
        return new


@dataclass(frozen=True)
class FreshSCAFFOLD(SCAFFOLD):
    """SCAFFOLD whose ``finish`` returns a FRESH state and poisons the donated one."""

    def finish(self, state, y0, yK, K, eta_L, rows, workers, num_workers):
        new = super().finish(state.map_arrays(_copy), y0, yK, K, eta_L, rows, workers, num_workers)
        _poison(state)
        return new


# ------------------------------------------------------------------------------------------ pinned updates
def test_afacs_update_memory_and_aggregate_pinned():
    """Slots (0, 7, 0, 2), arrivals 0 and 2 send 1 and 3: slots (1, 7, 3, 2); γ = 3 · 0.5 = 1.5, M = 4:
    x_1 = 0 − 1.5 · 13/4 = −4.875 (by hand)."""
    rule = AFACS(3.0, 0.5, memory_init="zeros")
    W, G = np.array([[0, 2]]), np.array([[[1.0], [3.0]]])
    new = rule.update_memory(MemoryState(np.array([[[0.0], [7.0], [0.0], [2.0]]])), W, G)
    assert isinstance(new, MemoryState)
    assert new.memory[0, :, 0].tolist() == [1.0, 7.0, 3.0, 2.0]
    x, new = rule.aggregate(
        MemoryState(np.array([[[0.0], [7.0], [0.0], [2.0]]])),
        np.zeros((1, 1)),
        G,
        W,
        np.ones((1, 2)),
        W * 0,
        4,
    )
    assert x[0, 0] == pytest.approx(-4.875, rel=1e-15)
    assert [a[0, :, 0].tolist() for a in new.arrays()] == [[1.0, 7.0, 3.0, 2.0]]


def test_afacs_warm_init_and_stateless_rules():
    """``init`` warm-starts the slots with ``initial_updates()``; a stateless rule's state is ``NoState``
    (no arrays, falsy) and ``aggregate`` returns one."""
    U0 = np.arange(6.0).reshape(1, 3, 2)
    assert np.array_equal(AFACS(1.0, 0.1).init(1, 3, 2, initial_updates=lambda: U0).memory, U0)
    assert not AFACS(1.0, 0.1, memory_init="zeros").init(1, 3, 2, initial_updates=lambda: U0).memory.any()
    st0 = AFACD(1.0, 0.1).init(1, 3, 2)
    assert isinstance(st0, NoState) and st0.arrays() == () and not st0
    _, st1 = AFACD(1.0, 0.1).aggregate(
        st0, np.zeros((1, 2)), np.ones((1, 2, 2)), np.array([[0, 1]]), *[None] * 2, 3
    )
    assert isinstance(st1, NoState)
    assert isinstance(SCAFFOLD().init(2, 3, 1), WorkerState) and len(SCAFFOLD().init(2, 3, 1)) == 2


def test_scaffold_finish_pinned():
    """Replicate 1 of 2, M = 3: arrivals 0 and 2 with K = (1, 2), η_L = 0.5, y_0 − y_K = (1, 4),
    c_i = (1, ·, 3), c = 2: c_i⁺ = c_i − c + (y_0 − y_K)/(K η_L) = (1 − 2 + 2, 3 − 2 + 4) = (1, 5);
    c ← 2 + (0 + 2)/3. Replicate 0 is not among ``rows``: unchanged (by hand)."""
    state = ControlVariates(
        np.array([[[9.0], [9.0], [9.0]], [[1.0], [8.0], [3.0]]]), np.array([[9.0], [2.0]])
    )
    new = SCAFFOLD().finish(
        state,
        np.array([[[1.0], [4.0]]]),
        np.zeros((1, 2, 1)),
        np.array([[1, 2]]),
        0.5,
        np.array([1]),
        np.array([[0, 2]]),
        3,
    )
    assert isinstance(new, ControlVariates)
    assert new.c_i[:, :, 0].tolist() == [[9.0, 9.0, 9.0], [1.0, 8.0, 5.0]]
    assert new.c[:, 0].tolist() == [9.0, pytest.approx(2.0 + 2.0 / 3.0, rel=1e-15)]


def test_stateful_mutants_return_state():
    """The mutants' overrides keep the signatures: the frozen memory / stale controls come back unchanged,
    the wrong slot is written (by hand)."""
    W, G = np.array([[0, 2]]), np.array([[[1.0], [3.0]]])
    mem = MemoryState(np.zeros((1, 4, 1)))
    assert not MA.AFACSMemoryFrozen(1.0, 0.1).update_memory(mem, W, G).memory.any()
    assert MA.AFACSWrongSlot(1.0, 0.1).update_memory(mem, W, G).memory[0, :, 0].tolist() == [
        0.0,
        1.0,
        0.0,
        3.0,
    ]
    cv = ControlVariates(np.ones((1, 3, 1)), np.ones((1, 1)))
    new = SCAFFOLDStaleControl().finish(
        cv, np.ones((1, 1, 1)), np.zeros((1, 1, 1)), np.ones((1, 1)), 0.1, np.array([0]), np.array([[1]]), 3
    )
    assert new.c_i.tolist() == [[[1.0], [1.0], [1.0]]] and new.c.tolist() == [[1.0]]


# ------------------------------------------------------------------------- property: equal to plain loops
@st.composite
def _arrivals(draw):
    R, M, d = draw(st.integers(1, 3)), draw(st.integers(1, 5)), draw(st.integers(1, 3))
    m = draw(st.integers(1, M))
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    workers = np.stack([rng.permutation(M)[:m] for _ in range(R)])
    return R, M, d, m, workers, rng


@PROPERTY
@given(_arrivals())
def test_update_memory_and_aggregate_equal_plain_loops(case):
    """AFA-CS: s_i ← U_i slot by slot, x_{t+1} = x_t − γ/M Σ_i s_i, sums taken by Python loops."""
    R, M, d, m, workers, rng = case
    mem0, U, x = rng.standard_normal((R, M, d)), rng.standard_normal((R, m, d)), rng.standard_normal((R, d))
    rule = AFACS(1.3, 0.7)
    want = mem0.copy()
    for r in range(R):
        for j in range(m):
            want[r, workers[r, j]] = U[r, j]
    new = rule.update_memory(MemoryState(mem0.copy()), workers, U)
    assert np.array_equal(new.memory, want)
    xn, new = rule.aggregate(MemoryState(mem0.copy()), x, U, workers, np.ones((R, m)), np.zeros((R, m)), M)
    assert np.array_equal(new.memory, want)
    for r in range(R):
        s = np.zeros(d)
        for i in range(M):
            s += want[r, i]
        np.testing.assert_allclose(xn[r], x[r] - 1.3 * 0.7 / M * s, rtol=1e-12, atol=1e-12)


@PROPERTY
@given(_arrivals(), st.floats(0.05, 2.0))
def test_scaffold_finish_equals_plain_loop(case, eta_L):
    """SCAFFOLD option II, arrival by arrival: c_i⁺ = c_i − c + (y_0 − y_K)/(K η_L), c += (c_i⁺ − c_i)/M,
    with c as of the round's start; rows outside ``rows`` untouched."""
    R, M, d, m, workers, rng = case
    rows = np.flatnonzero(rng.random(R) < 0.7)
    if rows.size == 0:
        rows = np.array([R - 1])
    W = workers[rows]
    c_i, c = rng.standard_normal((R, M, d)), rng.standard_normal((R, d))
    y0, yK = rng.standard_normal((len(rows), m, d)), rng.standard_normal((len(rows), m, d))
    K = rng.integers(1, 5, (len(rows), m))
    want_ci, want_c = c_i.copy(), c.copy()
    for n, r in enumerate(rows):
        for j in range(m):
            i = W[n, j]
            new = c_i[r, i] - c[r] + (y0[n, j] - yK[n, j]) / (K[n, j] * eta_L)
            want_ci[r, i] = new
            want_c[r] += (new - c_i[r, i]) / M
    got = SCAFFOLD().finish(ControlVariates(c_i.copy(), c.copy()), y0, yK, K, eta_L, rows, W, M)
    np.testing.assert_allclose(got.c_i, want_ci, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got.c, want_c, rtol=1e-12, atol=1e-12)


# ------------------------------------------------------------------------------ donation: never read again
def test_fresh_rules_poison_the_donated_state():
    """Control: the poisoning rules really destroy what they are given (a caller reading it would see NaN)."""
    old = MemoryState(np.zeros((1, 3, 1)))
    new = FreshAFACS(1.0, 0.1).update_memory(old, np.array([[1]]), np.ones((1, 1, 1)))
    assert np.isnan(old.memory).all() and new.memory[0, :, 0].tolist() == [0.0, 1.0, 0.0]
    old = SCAFFOLD().init(1, 2, 1)
    new = FreshSCAFFOLD().finish(
        old, np.ones((1, 1, 1)), np.zeros((1, 1, 1)), np.ones((1, 1)), 1.0, np.array([0]), np.array([[0]]), 2
    )
    assert all(np.isnan(a).all() for a in old.arrays()) and new.c_i[0, 0, 0] == 1.0


@pytest.mark.parametrize("sigma_L", [0.0, 0.5])
def test_simulate_never_reads_a_donated_state(monkeypatch, sigma_L):
    """simulate with the poisoning AFA-CS + SCAFFOLD rules is bit-identical to the in-place rules, with one
    noise block per chunk (130 replicates: 3 chunks, so the worker state passes from chunk to chunk) and some
    replicates diverging (their rows are zeroed in the current state); with σ_L = 0 both equal the independent
    reference loop (paper_checks._reference) to 1e-12."""
    monkeypatch.setattr(engine, "_CHUNK_VALUES", 1)
    p = HeterogeneousQuadratic(dim=3, num_workers=5, L=1.0, mu=0.2, sigma_L=sigma_L, sigma_G=1.0, seed=3)
    beh = Behaviour(UniformArrivals(2), UniformDelay(2), UniformSteps(1, 3))
    runs = {}
    for name, alg in {
        "in place": AFACS(0.8, 0.1, worker=SCAFFOLD()),
        "fresh": FreshAFACS(0.8, 0.1, worker=FreshSCAFFOLD()),
        "in place, diverging": FedAvg(10.0, 0.5, worker=SCAFFOLD()),
        "fresh, diverging": FedAvg(10.0, 0.5, worker=FreshSCAFFOLD()),
    }.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            runs[name] = aft.simulate(p, alg, beh, rounds=15, replicates=130, seed=2, record_x=True)
    for a, b in (("in place", "fresh"), ("in place, diverging", "fresh, diverging")):
        assert np.array_equal(runs[a].x, runs[b].x, equal_nan=True)
        assert np.array_equal(runs[a].grad_norm_sq, runs[b].grad_norm_sq)
        assert np.isfinite(runs[b].grad_norm_sq[:, 1:]).any() and not np.isnan(runs[b].grad_norm_sq).any()
    div = runs["fresh, diverging"].divergence.round
    assert (div > 0).any() and (div < 0).any()  # some replicates diverged (state rows zeroed), some did not
    if sigma_L == 0.0:
        tr = runs["fresh"]
        for r in (0, 70, 129):
            xs = reference_iterates(p, FreshAFACS(0.8, 0.1, worker=FreshSCAFFOLD()), tr.schedule, tr.x0, r=r)
            np.testing.assert_allclose(tr.x[r], xs, rtol=1e-12, atol=1e-12 * np.abs(xs).max())


def test_torch_backend_never_reads_a_donated_state():
    """The torch backend with the poisoning rules equals the in-place rules exactly (a replayed schedule)."""
    torch = pytest.importorskip(
        "torch", reason="the torch backend needs PyTorch (pip install afltheory[torch])"
    )
    from afltheory.datasets import load_digits_federated
    from afltheory.torch_backend import LogisticRegressionModel, TorchTask, run

    ds = load_digits_federated(classes_per_worker=2, samples_per_worker=20, seed=1)
    task = TorchTask.from_dataset(LogisticRegressionModel(64, 10), ds, dtype=torch.float64, device="cpu")
    sched = Behaviour(UniformArrivals(3), UniformDelay(2), UniformSteps(1, 3)).sample(6, 2, 10, seed=7)
    a = run(task, AFACS(1.0, 0.1, worker=SCAFFOLD()), sched, rounds=6, replicates=2, record_x=True)
    b = run(task, FreshAFACS(1.0, 0.1, worker=FreshSCAFFOLD()), sched, rounds=6, replicates=2, record_x=True)
    assert np.isfinite(a.x).all() and np.array_equal(a.x, b.x)
