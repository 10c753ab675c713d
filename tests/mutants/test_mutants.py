"""The mutation catalogue (afltheory.mutants): pinned hand-derived rule mutants, engine faults as equivalences
with hand-edited schedules/problems, the injection hook's scoping, and the engines' refusal of mutant rules.
All runs are deterministic (fixed seeds; equalities are exact or to 1e-12 relative)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from afltheory import _faults, mutants, simulate
from afltheory.algorithms import AFACD, AFACS, SCAFFOLD, SGD, ControlVariates, FedAvg, FedBuff, FedProx
from afltheory.anarchy import Behaviour, Replay, UniformArrivals
from afltheory.anarchy.delays import UniformDelay
from afltheory.anarchy.local_steps import UniformSteps
from afltheory.anarchy.schedule import Schedule
from afltheory.exact import moments
from afltheory.mutants import algorithms as MA
from afltheory.problems import HeterogeneousQuadratic


def _rules_only(catalogue):
    """The mutants replacing server or worker rules (the compression ones: test_compression_drift_mutants)."""
    from afltheory.algorithms.base import ServerRule, WorkerRule

    return [
        m
        for m in catalogue.values()
        if m.replaces and all(issubclass(c, (ServerRule, WorkerRule)) for c in m.replaces)
    ]


def _problem(sigma_L=0.5):
    return HeterogeneousQuadratic(dim=3, num_workers=5, L=1.0, mu=0.2, sigma_L=sigma_L, sigma_G=1.0, seed=3)


BEH = Behaviour(UniformArrivals(2), delays=UniformDelay(2), local_steps=UniformSteps(1, 3))


# ------------------------------------------------------------------------------------------------ catalogue
def test_catalogue_covers_every_class():
    cat = mutants.CATALOGUE
    assert len(cat) >= 20
    assert set(mutants.CATEGORIES) == {m.category for m in cat.values()}
    assert all(m.description and m.kind in ("rule", "engine") for m in cat.values())
    assert {m.kind for m in cat.values()} == {"rule", "engine"}
    # a rule mutant is a subclass of the rule it replaces (an algorithm, accepted where the rule is)
    for m in cat.values():
        for correct, mutant in m.replaces.items():
            assert issubclass(mutant, correct) and mutant is not correct
    with pytest.raises(ValueError, match="not catalogued"):
        mutants.get("no.such")


def test_injected_scope_reset_and_no_nesting():
    a = AFACD(1.0, 0.1)
    assert _faults.substitute(a) is a and mutants.active() is None
    with mutants.injected("afacd.eta_missing") as m:
        assert mutants.active() is m
        assert type(_faults.substitute(a)) is MA.AFACDEtaMissing
        assert _faults.substitute(AFACS(1.0, 0.1)) == AFACS(1.0, 0.1)  # other rules untouched
        with pytest.raises(RuntimeError, match="does not nest"), mutants.injected("sim.K_max"):
            pass
        assert mutants.active() is m
    assert mutants.active() is None
    with pytest.raises(ZeroDivisionError), mutants.injected("sim.noise_dropped"):
        raise ZeroDivisionError
    assert mutants.active() is None and _faults.get("sim.noise") is None


def test_substitution_keeps_hyperparameters_and_worker():
    with mutants.injected("fedprox.sign"):
        a = _faults.substitute(AFACD(2.0, 0.3, worker=FedProx(0.7)))
    assert type(a) is AFACD and type(a.worker) is MA.FedProxSignFlipped and a.worker.mu == 0.7
    assert (a.eta, a.eta_L) == (2.0, 0.3)
    with mutants.injected("afacs.cold_start"):
        s = _faults.substitute(AFACS(2.0, 0.3, memory_init="warm"))
    assert type(s) is MA.AFACSColdStart and s.memory_init == "warm" and not s.needs_warm_start


# ------------------------------------------------------------------------------------------ rule mutants
# one server step from x = 0 with G = (1, 3) from workers (0, 2), K = (1, 2), τ = (0, 3), η = 3, η_L = 0.5
# (γ = 1.5), M = 4: AFA-CD's step is −γ (1 + 3)/2 = −3.
G = np.array([[[1.0], [3.0]]])
W = np.array([[0, 2]])
K = np.array([[1, 2]])
TAU = np.array([[0, 3]])


def _step(alg):
    state = alg.init(1, 4, 1)
    x, state = alg.aggregate(state, np.zeros((1, 1)), G, W, K, TAU, 4)  # ServerRule.aggregate -> (x, state)
    return float(x[0, 0]), state


@pytest.mark.parametrize(
    "cls, expected",
    [
        (AFACD, -3.0),
        (MA.AFACDEtaLMissing, -6.0),  # −η · 2
        (MA.AFACDEtaLTwice, -1.5),  # −η η_L² · 2
        (MA.AFACDEtaMissing, -1.0),  # −η_L · 2
        (MA.AFACDOverM, -1.5),  # −γ (1 + 3)/4
        (MA.AFACDSumK, -5.25),  # −γ (1·1 + 2·3)/2
        (MA.AFACDOneArrival, -1.5),  # −γ · 1
        (MA.AFACDFirstTwice, -3.75),  # −γ (1 + 1 + 3)/2
        (AFACS, -1.5),  # −γ (1 + 3)/4 (zero slots)
        (MA.AFACSOverm, -3.0),  # −γ (1 + 3)/2
        (MA.AFACSMemoryFrozen, 0.0),  # slots stay zero
        (MA.AFACSWrongSlot, -1.5),  # same sum, wrong slots (checked below)
        (MA.AFACSMemoryUnused, -3.0),  # −γ (1 + 3)/2
        (FedAvg, -5.25),  # −γ (1·1 + 2·3)/2
        (MA.FedAvgNoK, -3.0),
        (FedBuff, -3.0),  # −γ (1·1·1 + 2·3/√4)/2
        (MA.FedBuffNoStaleness, -5.25),
    ],
)
def test_rule_mutants_pinned(cls, expected):
    x, state = _step(cls(3.0, 0.5))
    assert x == pytest.approx(expected, rel=1e-14)
    if cls is MA.AFACSWrongSlot:
        assert state["memory"][0, :, 0].tolist() == [0.0, 1.0, 0.0, 3.0]
    if cls in (AFACS, MA.AFACSMemoryUnused, MA.AFACSOverm):
        assert state["memory"][0, :, 0].tolist() == [1.0, 0.0, 3.0, 0.0]


def test_worker_mutants_pinned():
    y, y0 = np.array([[[2.0]]]), np.array([[[0.5]]])
    rows, w = np.array([0]), np.array([[1]])
    assert MA.FedProxSignFlipped(0.2).correction({}, y, y0, rows, w)[0, 0, 0] == pytest.approx(-0.3)
    assert FedProx(0.2).correction({}, y, y0, rows, w)[0, 0, 0] == pytest.approx(0.3)
    st = ControlVariates(c_i=np.array([[[0.0], [5.0]]]), c=np.array([[1.0]]))
    assert SCAFFOLD().correction(st, y, y0, rows, w)[0, 0, 0] == -4.0  # c − c_i
    assert MA.SCAFFOLDSignFlipped().correction(st, y, y0, rows, w)[0, 0, 0] == 4.0


def test_every_rule_mutant_changes_simulate():
    """Under each rule mutant, simulate of the rule it replaces differs from the correct run
    (deterministic). A schedule mutant runs on a scheduled rule, a client-weight mutant on a weighted one
    (both are the identity on a constant, unweighted rule)."""
    p = _problem()
    for m in _rules_only(mutants.CATALOGUE):
        for correct in m.replaces:
            if correct in (SGD, FedProx, SCAFFOLD):
                alg = AFACD(2.0, 0.2, worker=correct())
            elif m.category == "schedules":
                alg = correct(lambda t: 2.0 / (1 + t), lambda t: 0.2 / (1 + t))
            elif m.category == "client weights":
                alg = correct(2.0, 0.2, weights=(0.4, 0.3, 0.15, 0.1, 0.05))
            else:
                alg = correct(2.0, 0.2)
            ref = simulate(p, alg, BEH, rounds=15, replicates=2, seed=4).grad_norm_sq
            with mutants.injected(m):
                mut = simulate(p, alg, BEH, rounds=15, replicates=2, seed=4)
            assert not np.allclose(mut.grad_norm_sq, ref, rtol=1e-9), m.name
            assert type(mut.config["algorithm"]) is str


# ------------------------------------------------------------------------------------------------ engine
# faults
def _replay(sched, delays=None, steps=None, init=None):
    return Replay(
        Schedule(
            sched.workers,
            sched.delays if delays is None else delays,
            sched.local_steps if steps is None else steps,
            sched.num_workers,
            sched.init_local_steps if init is None else init,
        )
    )


@pytest.mark.parametrize(
    "name",
    [
        "sim.stale_off_by_one",
        "sim.stale_oldest",
        "sim.stale_ignored",
        "sim.K_plus_one",
        "sim.K_minus_one",
        "sim.K_max",
    ],
)
@pytest.mark.parametrize("alg", [AFACD(1.0, 0.2), AFACS(1.0, 0.2)], ids=["AFACD", "AFACS"])
def test_schedule_faults_equal_a_hand_edited_schedule(name, alg):
    """The simulator under a delay/K fault equals the correct simulator on the schedule edited by hand."""
    p = _problem()
    R, T = 3, 12
    sched = BEH.sample(T, R, p.num_workers, 5)
    t = np.arange(T)[None, :, None]
    d, k, k0 = sched.delays, sched.local_steps, sched.init_local_steps
    edit = {
        "sim.stale_off_by_one": dict(delays=np.minimum(d + 1, t)),
        "sim.stale_oldest": dict(delays=np.minimum(np.full_like(d, d.max()), t)),
        "sim.stale_ignored": dict(delays=np.zeros_like(d)),
        "sim.K_plus_one": dict(steps=k + 1, init=k0 + 1),
        "sim.K_minus_one": dict(steps=np.maximum(k - 1, 1), init=np.maximum(k0 - 1, 1)),
        "sim.K_max": dict(
            steps=np.repeat(k.max(axis=2, keepdims=True), k.shape[2], axis=2),
            init=np.repeat(k0.max(axis=1, keepdims=True), k0.shape[1], axis=1),
        ),
    }[name]
    # fast=False: under a sim.* fault simulate runs the reference path (the fast path draws other noise)
    ref = simulate(p, alg, _replay(sched, **edit), rounds=T, replicates=R, seed=5, fast=False)
    correct = simulate(p, alg, Replay(sched), rounds=T, replicates=R, seed=5, fast=False)
    with mutants.injected(name):
        mut = simulate(p, alg, Replay(sched), rounds=T, replicates=R, seed=5)
    np.testing.assert_array_equal(mut.grad_norm_sq, ref.grad_norm_sq)
    assert not np.array_equal(mut.grad_norm_sq, correct.grad_norm_sq)
    np.testing.assert_array_equal(mut.schedule.delays, sched.delays)  # the trace keeps the true schedule


@pytest.mark.parametrize("collapse", [True, False])
def test_sim_noise_faults_equal_a_rescaled_problem(collapse):
    """noise dropped ≡ σ_L = 0; std σ_L per coordinate ≡ σ_L √d (same raw draws, so equal to rounding)."""
    d = _problem().dim
    for name, sigma in (("sim.noise_dropped", 0.0), ("sim.noise_per_coordinate", 0.5 * np.sqrt(d))):
        ref = simulate(  # fast=False: under a sim.* fault simulate runs the reference path
            _problem(sigma),
            AFACD(1.0, 0.2),
            BEH,
            rounds=10,
            replicates=2,
            seed=6,
            collapse=collapse,
            fast=False,
        )
        with mutants.injected(name):
            mut = simulate(
                _problem(), AFACD(1.0, 0.2), BEH, rounds=10, replicates=2, seed=6, collapse=collapse
            )
        np.testing.assert_allclose(mut.grad_norm_sq, ref.grad_norm_sq, rtol=1e-12)


def test_exact_faults():
    """exact noise dropped ≡ σ_L = 0; covariance ×d ≡ σ_L √d; round_late = the correct curve one round late;
    the simulator is untouched by exact faults and vice versa."""
    d = _problem().dim
    beh = Behaviour(UniformArrivals(2), delays=UniformDelay(1), local_steps=UniformSteps(1, 2))
    base = moments(_problem(), AFACD(1.0, 0.2), beh, 8).grad_norm_sq
    for name, sigma in (("exact.noise_dropped", 0.0), ("exact.noise_per_coordinate", 0.5 * np.sqrt(d))):
        ref = moments(_problem(sigma), AFACD(1.0, 0.2), beh, 8).grad_norm_sq
        with mutants.injected(name):
            np.testing.assert_allclose(
                moments(_problem(), AFACD(1.0, 0.2), beh, 8).grad_norm_sq, ref, rtol=1e-12
            )
    with mutants.injected("exact.round_late"):
        late = moments(_problem(), AFACD(1.0, 0.2), beh, 8).grad_norm_sq
    np.testing.assert_array_equal(late, np.r_[base[0], base[:-1]])
    # the reference path (fast=False), which simulate runs under any mutant
    tr = simulate(_problem(), AFACD(1.0, 0.2), beh, rounds=8, replicates=2, seed=1, fast=False).grad_norm_sq
    with mutants.injected("exact.noise_dropped"):
        np.testing.assert_array_equal(
            simulate(_problem(), AFACD(1.0, 0.2), beh, rounds=8, replicates=2, seed=1).grad_norm_sq, tr
        )
    with mutants.injected("sim.noise_dropped"):
        np.testing.assert_array_equal(moments(_problem(), AFACD(1.0, 0.2), beh, 8).grad_norm_sq, base)


def test_exact_engine_never_reads_a_mutant_as_its_base():
    """A mutant must never be read as its base class: exact moments either refuse it (TypeError: it overrides
    an imperative hook or a worker rule's correction) or honour its hooks — then the exact curve differs from
    the correct rule's and agrees with a Monte Carlo run of the mutant (|z| < 5 at every round, 4000
    replicates, fixed seed: a false alarm at any of 6 rounds has probability < 1e-5). Passed directly or
    substituted by injected()."""
    beh = Behaviour(UniformArrivals(2), delays=UniformDelay(2), local_steps=UniformSteps(1, 3))
    honoured = 0
    for m in _rules_only(mutants.CATALOGUE):
        for correct, cls in m.replaces.items():
            alg, base = (_built(c, m) for c in (cls, correct))
            if isinstance(alg.worker, SCAFFOLD):
                continue  # SCAFFOLD itself is not exact-representable
            if m.category == "schedules":
                # a schedule mutant: honoured when passed directly, but the exact engine resolves round t on
                # the rule it was given before substituting, so injected() never reaches it (engines says so)
                assert "exact" not in m.engines
                ex = moments(_problem(), alg, beh, 5).grad_norm_sq
                ref = moments(_problem(), base, beh, 5).grad_norm_sq
                assert not np.allclose(ex[1:], ref[1:]), m.name
                with mutants.injected(m):
                    np.testing.assert_array_equal(moments(_problem(), base, beh, 5).grad_norm_sq, ref)
                continue
            assert ("exact" in m.engines) == _exact_ok(alg), m.name
            if "exact" not in m.engines:
                with pytest.raises(TypeError, match="overrides|not affine"):
                    moments(_problem(), alg, beh, 5)
                with mutants.injected(m), pytest.raises(TypeError):
                    moments(_problem(), base, beh, 5)
                continue
            honoured += 1
            ex = moments(_problem(), alg, beh, 5)
            ref = moments(_problem(), base, beh, 5).grad_norm_sq
            assert not np.allclose(ex.grad_norm_sq[1:], ref[1:]), m.name
            with mutants.injected(m):
                np.testing.assert_array_equal(moments(_problem(), base, beh, 5).grad_norm_sq, ex.grad_norm_sq)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                tr = simulate(_problem(), alg, beh, rounds=5, replicates=4000, seed=11)
            from afltheory.exact import zscores

            z = zscores(tr, ex)[1:]
            assert np.all(np.abs(z) < 5), (m.name, z)
    assert honoured >= 8


def _built(cls, m):
    """The rule (or AFA-CD with the worker rule) ``cls`` where mutant ``m`` acts: scheduled for a schedule
    mutant, with unequal client weights for a client-weight mutant (both identities otherwise)."""
    if issubclass(cls, (SGD, FedProx, SCAFFOLD)):
        return AFACD(1.5, 0.2, worker=cls())
    if m.category == "schedules":
        return cls(lambda t: 1.5 / (1 + t), lambda t: 0.2 / (1 + t))
    if m.category == "client weights":
        return cls(1.5, 0.2, weights=(0.4, 0.3, 0.15, 0.1, 0.05))
    return cls(1.5, 0.2)


def _exact_ok(alg):
    try:
        from afltheory.exact.local import server_rule

        server_rule(alg, _problem().num_workers)  # client weights need the number of workers
        return True
    except TypeError:
        return False


def test_torch_backend_runs_the_mutated_rule():
    """The torch backend calls the rule's own hooks: under a mutant it runs the mutant, never the base rule
    (float64 logistic regression, full batch: equal to simulate of the mutant to 1e-10)."""
    torch = pytest.importorskip("torch")
    from afltheory.torch_backend import TorchTask, run

    rng = np.random.default_rng(0)
    task = TorchTask(
        torch.nn.Linear(2, 2),
        [rng.normal(size=(4, 2)) for _ in range(2)],
        [rng.integers(0, 2, 4) for _ in range(2)],
        dtype=torch.float64,
    )
    beh = Behaviour(UniformArrivals(1))
    x0 = task.initial_params().numpy().copy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ok = run(task, AFACD(2.0, 0.1), beh, rounds=3, x0=x0).x_final
        mut = run(task, MA.AFACDEtaMissing(2.0, 0.1), beh, rounds=3, x0=x0).x_final
        with mutants.injected("afacd.eta_missing"):
            inj = run(task, AFACD(2.0, 0.1), beh, rounds=3, x0=x0).x_final
    assert not np.allclose(ok, mut)
    np.testing.assert_array_equal(mut, inj)
    # the mutant's step is η_L G (η dropped): it coincides with AFA-CD at η = 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same = run(task, AFACD(1.0, 0.1), beh, rounds=3, x0=x0).x_final
    np.testing.assert_allclose(mut, same, rtol=1e-12)


def test_equivalent_controls_change_nothing_but_the_engine_choice():
    """The controls are the correct rules as subclasses: simulate is bit-identical (to the reference path,
    ``fast=False``, which simulate runs whenever a mutant replaces the rule); exact moments refuse them."""
    assert set(mutants.CONTROLS).isdisjoint(mutants.CATALOGUE)
    for name, m in mutants.CONTROLS.items():
        assert m.kind == "control" and mutants.get(name) is m
        (correct,) = m.replaces
        ref = simulate(_problem(), correct(2.0, 0.2), BEH, rounds=10, replicates=2, seed=4, fast=False)
        ref = ref.grad_norm_sq
        with mutants.injected(m):
            tr = simulate(_problem(), correct(2.0, 0.2), BEH, rounds=10, replicates=2, seed=4)
            np.testing.assert_array_equal(tr.grad_norm_sq, ref)
            with pytest.raises(TypeError):
                moments(_problem(), correct(2.0, 0.2), Behaviour(UniformArrivals(2)), 3)


# ------------------------------------------------------------------------------------------ wall-clock faults
def test_wall_clock_faults_by_hand_derived_amounts():
    """``anarchy.event_no_wait``: arrived workers restart at their own arrival times instead of when the round
    closes. With m = 1 the two coincide (identical schedules). With Exp(1) times, M = 10, m = 5, the correct
    mean round time is Σ_{k<5} 1/(10 − k) = 0.6456; under the mutant no worker ever waits, the arrivals are
    the superposition of 10 rate-1 Poisson processes and a round of 5 arrivals lasts 5/10 = 0.5 on average
    (2000 rounds × 20 replicates; tolerance 0.02, about 6 standard errors).

    ``anarchy.sync_mean_time``: the same schedule, each round charged the mean of the sampled workers' compute
    times: with FixedTime(c) every round still lasts exactly c, with Exp(1) times it is below the max.
    Deterministic (seed 0)."""
    from afltheory.anarchy import EventDriven, ExponentialTime, FixedTime, Synchronous

    ev1 = EventDriven(1, ExponentialTime(1.0))
    ok = ev1.sample(20, 3, 6, seed=0)
    with mutants.injected("anarchy.event_no_wait"):
        bad = ev1.sample(20, 3, 6, seed=0)
    assert np.array_equal(ok.workers, bad.workers) and np.array_equal(ok.wall_clock, bad.wall_clock)
    ev = EventDriven(5, ExponentialTime(1.0))
    ok = ev.sample(2000, 20, 10, seed=0)
    with mutants.injected("anarchy.event_no_wait"):
        bad = ev.sample(2000, 20, 10, seed=0)
    assert abs(ok.wall_clock[:, -1].mean() / 2000 - 0.6456) < 0.02
    assert abs(bad.wall_clock[:, -1].mean() / 2000 - 0.5) < 0.02
    sy = Synchronous(UniformArrivals(3), ExponentialTime(1.0))
    ok = sy.sample(20, 3, 6, seed=0)
    with mutants.injected("anarchy.sync_mean_time"):
        bad = sy.sample(20, 3, 6, seed=0)
        const = Synchronous(UniformArrivals(3), FixedTime(0.5)).sample(10, 2, 6, seed=0)
    assert np.array_equal(ok.workers, bad.workers)
    assert np.all(np.diff(bad.wall_clock, axis=1) < np.diff(ok.wall_clock, axis=1))
    assert np.allclose(np.diff(const.wall_clock, axis=1), 0.5)
