"""The compression channel returns new state (issue 27; the rules' (init, update) pattern): ``Channel.init()``
builds a typed ``ChannelState`` and ``send(state, ...)`` returns (out, bits, state) — pinned by hand for one
error-feedback and one DIANA step; and the state passed in is DONATED: ``simulate`` and the torch backend with
a channel that returns a fresh state and poisons the donated one with NaN give bit-identical traces.
Deterministic: fixed seeds only (no statistical assertion)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import afltheory as aft
from afltheory import engine
from afltheory.algorithms import AFACD, AFACS, SCAFFOLD, FedAvg
from afltheory.anarchy import Behaviour, UniformArrivals, UniformDelay, UniformSteps
from afltheory.compression import (
    DIANA,
    QSGD,
    Channel,
    ChannelMemory,
    ChannelState,
    ErrorFeedback,
    Identity,
    MemoryScheme,
    RandK,
    TopK,
)
from afltheory.compression.channel import channel_for
from afltheory.problems import HeterogeneousQuadratic


def _poison(state):
    """Fill every array of a donated state with NaN: a later read would spread NaN into the trace."""
    for a in state.arrays():
        a[...] = float("nan")


class FreshChannel(Channel):
    """A channel whose ``send`` returns a FRESH state and poisons the donated one."""

    def send(self, state, G, workers, key, row=None):
        out, bits, new = super().send(state.map_arrays(np.copy), G, workers, key, row)
        _poison(state)
        return out, bits, new


def _fresh_channel_for(algorithm, dim, num_workers, replicates, seed):
    return FreshChannel(getattr(algorithm, "compressor", None), dim, num_workers, replicates, seed)


# ------------------------------------------------------------------------------------------ the state types
def test_init_gives_typed_states():
    for spec in (None, RandK(2), TopK(1)):
        s = Channel(spec, 4, 3, 2, 0).init()
        assert type(s) is ChannelState and len(s) == 0 and s.arrays() == ()
    for spec in (ErrorFeedback(TopK(1)), DIANA(RandK(2))):
        assert isinstance(spec, MemoryScheme)
        s = Channel(spec, 4, 3, 2, 0).init()
        assert type(s) is ChannelMemory and len(s) == 1 and s["memory"] is s.memory
        assert s.memory.shape == (2, 3, 4) and not s.memory.any()
        with pytest.raises(AttributeError):  # frozen
            s.memory = None


def test_stateless_send_returns_the_state_it_was_given():
    G, W = np.ones((2, 3, 4)), np.array([[0, 1, 2], [2, 1, 0]])
    for spec in (None, RandK(2)):
        ch = Channel(spec, 4, 3, 2, 0)
        s = ch.init()
        _, bits, new = ch.send(s, G, W, 1)
        assert new is s and bits.shape == (2,)


# ------------------------------------------------------------------------------------------ pinned by hand
def test_error_feedback_one_step_pinned():
    """TopK(1), memories e = (0, 1, −4) for worker 1 of replicate 0 and (2, 0, 0) for worker 0 of replicate 1;
    G = (1, −2, 1) and (−1, 0, 1): v = (1, −1, −3) -> sends (0, 0, −3), e ← (1, −1, 0); v = (1, 0, 1) -> sends
    (1, 0, 0) (first of the tie), e ← (0, 0, 1). Worker 0 of replicate 0 and worker 1 of replicate 1 do not
    arrive: untouched."""
    ch = Channel(ErrorFeedback(TopK(1)), 3, 2, 2, seed=0)
    mem = np.zeros((2, 2, 3))
    mem[0, 1] = [0.0, 1.0, -4.0]
    mem[1, 0] = [2.0, 0.0, 0.0]
    mem[0, 0] = [9.0, 9.0, 9.0]
    G = np.array([[[1.0, -2.0, 1.0]], [[-1.0, 0.0, 1.0]]])
    out, bits, new = ch.send(ChannelMemory(mem), G, np.array([[1], [0]]), 1)
    assert out.tolist() == [[[0.0, 0.0, -3.0]], [[1.0, 0.0, 0.0]]]
    assert type(new) is ChannelMemory and new.memory is mem  # donated: the same arrays, written in place
    assert new.memory[0, 1].tolist() == [1.0, -1.0, 0.0] and new.memory[1, 0].tolist() == [0.0, 0.0, 1.0]
    assert new.memory[0, 0].tolist() == [9.0, 9.0, 9.0] and new.memory[1, 1].tolist() == [0.0, 0.0, 0.0]
    assert bits.tolist() == [TopK(1).expected_bits(3)] * 2


def test_diana_one_step_pinned():
    """Identity compressor (Δ exact), α = 0.5: h = (1, 2), G = (3, −1): Δ = (2, −3), decoded h + Δ = (3, −1),
    h ← (1, 2) + 0.5 (2, −3) = (2, 0.5). The default α = 1/(1 + ω): RandK(2) on d = 4 has ω = 1, α = 0.5."""
    ch = Channel(DIANA(Identity(), alpha=0.5), 2, 3, 1, seed=0)
    mem = np.zeros((1, 3, 2))
    mem[0, 2] = [1.0, 2.0]
    out, _, new = ch.send(ChannelMemory(mem), np.array([[[3.0, -1.0]]]), np.array([[2]]), 1)
    assert out.tolist() == [[[3.0, -1.0]]]
    assert new.memory[0, 2].tolist() == [2.0, 0.5] and not new.memory[0, :2].any()
    # the scheme's round alone, with a deterministic "compressor" (halving): Δ = (G − h)/2
    halve = lambda V: (V / 2, np.full(V.shape[:-1], 7.0))  # noqa: E731
    h, G = np.array([[[4.0, 0.0, 2.0, -2.0]]]), np.array([[[0.0, 2.0, 2.0, 2.0]]])
    out, bits, h_new = DIANA(RandK(2)).exchange(h, G, halve)  # Δ = (−2, 1, 0, 2), α = 0.5
    assert out.tolist() == [[[2.0, 1.0, 2.0, 0.0]]] and h_new.tolist() == [[[3.0, 0.5, 2.0, -1.0]]]
    assert bits.tolist() == [[7.0]]
    out, _, e_new = ErrorFeedback(TopK(1)).exchange(h, G, halve)  # v = G + e = (4, 2, 4, 0)
    assert out.tolist() == [[[2.0, 1.0, 2.0, 0.0]]] and e_new.tolist() == [[[2.0, 1.0, 2.0, 0.0]]]


def test_row_mode_changes_only_its_row():
    """``row=r`` (the torch backend) gives row r of a vectorized call and changes only row r of the state."""
    R, n, d = 3, 2, 4
    rng = np.random.default_rng(0)
    G, W = rng.standard_normal((R, n, d)), np.array([[0, 1], [1, 2], [2, 0]])
    for spec in (ErrorFeedback(TopK(2)), DIANA(RandK(2))):
        ch = Channel(spec, d, 3, R, 5)
        want, want_bits, ws = ch.send(ch.init(), G, W, 1)
        s = ch.init()
        for r in (2, 0, 1):
            before = s.memory.copy()
            out, b, s = ch.send(s, G[r : r + 1], W[r : r + 1], 1, row=r)
            np.testing.assert_array_equal(out[0], want[r])
            assert b[0] == want_bits[r]
            others = np.arange(R) != r
            np.testing.assert_array_equal(s.memory[others], before[others])
        np.testing.assert_array_equal(s.memory, ws.memory)


# ------------------------------------------------------------------------------------------ donation
def test_fresh_channel_poisons_the_donated_state():
    """Control: the poisoning channel really destroys what it is given (a caller reading it would see NaN)."""
    ch = FreshChannel(DIANA(Identity(), 0.5), 2, 1, 1, 0)
    old = ch.init()
    _, _, new = ch.send(old, np.ones((1, 1, 2)), np.array([[0]]), 1)
    assert np.isnan(old.memory).all() and new.memory.tolist() == [[[0.5, 0.5]]]


SPECS = [ErrorFeedback(TopK(2)), DIANA(RandK(2)), DIANA(QSGD(2), alpha=0.3), RandK(2)]


@pytest.mark.parametrize("spec", SPECS, ids=repr)
def test_simulate_never_reads_a_donated_channel_state(monkeypatch, spec):
    """simulate with the poisoning channel is bit-identical to the in-place one: AFA-CS (its warm start sends
    through the channel too) and SCAFFOLD, 130 replicates (two noise blocks, a partial one), some replicates
    diverging (their channel memory rows are zeroed in the current state)."""
    p = HeterogeneousQuadratic(dim=4, num_workers=5, L=1.0, mu=0.2, sigma_L=0.3, sigma_G=1.0, seed=3)
    beh = Behaviour(UniformArrivals(2), UniformDelay(2), UniformSteps(1, 3))
    algs = {"afacs": AFACS(0.8, 0.1, compressor=spec), "diverging": FedAvg(14.0, 0.5, compressor=spec)}
    algs["scaffold"] = AFACD(0.8, 0.1, worker=SCAFFOLD(), compressor=spec)
    runs = {}
    for fresh in (False, True):
        if fresh:
            monkeypatch.setattr(engine, "channel_for", _fresh_channel_for)
        for name, alg in algs.items():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                runs[name, fresh] = aft.simulate(
                    p, alg, beh, rounds=12, replicates=130, seed=2, record_x=True
                )
    for name in algs:
        a, b = runs[name, False], runs[name, True]
        assert np.array_equal(a.x, b.x) and np.array_equal(a.grad_norm_sq, b.grad_norm_sq)
        assert np.array_equal(a.bits, b.bits) and not np.isnan(b.grad_norm_sq).any()
    div = runs["diverging", True].divergence.round
    assert (div > 0).any() and (div < 0).any()  # some replicates diverged, some did not


def test_simulate_zeroes_a_diverged_replicates_channel_memory(monkeypatch):
    """The engine resets a diverged replicate's channel memory through ``arrays()``: the state the channel is
    given in the round after a replicate's divergence round holds zeros in that replicate's rows (and nonzero
    values in the round before: the control)."""
    seen = {}

    class Recording(Channel):
        def send(self, state, G, workers, key, row=None):
            seen[key] = state.memory.copy()
            return super().send(state, G, workers, key, row)

    monkeypatch.setattr(engine, "channel_for", lambda a, d, M, R, s: Recording(a.compressor, d, M, R, s))
    p = HeterogeneousQuadratic(dim=4, num_workers=5, L=1.0, mu=0.2, sigma_L=0.3, sigma_G=1.0, seed=3)
    beh = Behaviour(UniformArrivals(5), UniformDelay(1), UniformSteps(1, 1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tr = aft.simulate(
            p, FedAvg(14.0, 0.5, compressor=DIANA(RandK(2))), beh, rounds=20, replicates=40, seed=1
        )
    div = tr.divergence.round
    rows = np.flatnonzero((div > 1) & (div < 20))
    assert rows.size > 10
    for r in rows:  # nonzero memory going into the divergence round, zeros in the next one
        assert seen[int(div[r])][r].all() and not seen[int(div[r]) + 1][r].any()


def test_torch_backend_never_reads_a_donated_channel_state(monkeypatch):
    """The torch backend with the poisoning channel equals the in-place one exactly (a replayed schedule)."""
    torch = pytest.importorskip(
        "torch", reason="the torch backend needs PyTorch (pip install afltheory[torch])"
    )
    from afltheory.datasets import load_digits_federated
    from afltheory.torch_backend import LogisticRegressionModel, TorchTask, run
    from afltheory.torch_backend import runner as torch_runner

    assert torch_runner.channel_for is channel_for
    ds = load_digits_federated(classes_per_worker=2, samples_per_worker=20, seed=1)
    task = TorchTask.from_dataset(
        LogisticRegressionModel(64, 10), ds, dtype=torch.float64, device="cpu", l2=0.01
    )
    sched = Behaviour(UniformArrivals(3), UniformDelay(2), UniformSteps(1, 3)).sample(5, 2, 10, seed=7)
    for spec in (ErrorFeedback(TopK(16)), DIANA(RandK(8))):
        algo = AFACS(1.0, 0.1, compressor=spec)
        a = run(task, algo, sched, rounds=5, replicates=2, seed=4, record_x=True, eval_every=5)
        with monkeypatch.context() as m:
            m.setattr(torch_runner, "channel_for", _fresh_channel_for)
            b = run(task, algo, sched, rounds=5, replicates=2, seed=4, record_x=True, eval_every=5)
        assert np.array_equal(a.x, b.x) and np.array_equal(a.bits, b.bits)
        assert np.isfinite(b.x).all()
