"""afltheory.pep: PEP worst cases of the noise-free skeletons (skipped without the 'pep' extra).

Every test is deterministic (interior-point SDP solves, no randomness); tolerances are stated next to each
comparison and are set by the solver's accuracy (Clarabel gap tolerance 1e-6, see core.SOLVER_SETTINGS).
Sizes are tiny (Gram dimension ≤ ~30) so the whole file runs in a few seconds on one core.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("PEPit")

from afltheory.algorithms import AFACD, AFACS, FedAvg, FedBuff  # noqa: E402
from afltheory.anarchy import Schedule  # noqa: E402
from afltheory.pep import (  # noqa: E402
    PEPSizeError,
    bracket,
    delayed_gd_reference,
    gd_known_value,
    gd_schedule,
    gram_size,
    quadratic_lower_bound,
    replay,
    schedule_count,
    skeleton,
    worst_case,
    worst_schedule,
)

pytestmark = pytest.mark.pep
C = dict(L=1.0, sigma_G=0.3, sigma_L=0.0)


def sched(W, D, K, M, K0=None):
    W = np.asarray(W)
    return Schedule(
        W,
        np.asarray(D),
        np.broadcast_to(np.asarray(K), W.shape),
        M,
        init_local_steps=np.full(M, 1 if K0 is None else K0),
    )


# ------------------------------------------------------------------------------------------- anchors
def test_gd_anchor_nonconvex_known_value():
    """GD, γ = 1/L, min_{t≤N} ‖∇f(x_t)‖² ≤ (4/(3N)) L (f(x_0) − f(x_N)) is tight (PEPit's nonconvex
    gradient-descent example; Abbaszadehpeivasti et al. 2021): AFA-CD, M = m = K = 1, τ = 0, η η_L = 1/L."""
    N = 5
    r = worst_case(
        AFACD(eta=1.0, eta_L=1.0),
        gd_schedule(N),
        {"L": 1.0, "sigma_G": 0.0},
        delta=1.0,
        metric="min",
        gap="f_T",
    )
    assert r.certified and r.status == "optimal"
    assert r.value == pytest.approx(4 / (3 * N), rel=1e-5) == gd_known_value(N)


def test_delayed_gd_matches_independent_pepit_script():
    """Delayed GD (τ = 1, γ = 1/(2L)) through the AFA-CD skeleton equals a hand-written PEPit formulation
    (rel. 1e-4: two SDPs solved to gap 1e-6/1e-8), and τ = 0 gives back GD's 4/(3N) at γ = 1/L."""
    T, gamma = 4, 0.5
    ref = delayed_gd_reference(gamma, [min(t, 1) for t in range(T)])
    r = worst_case(
        AFACD(eta=gamma, eta_L=1.0),
        gd_schedule(T, tau=1),
        {"L": 1.0, "sigma_G": 0.0},
        delta=1.0,
        metric="min",
        gap="f_T",
    )
    assert r.certified and r.value == pytest.approx(ref, rel=1e-4)
    r0 = worst_case(
        AFACD(eta=gamma, eta_L=1.0),
        gd_schedule(T, tau=0),
        {"L": 1.0, "sigma_G": 0.0},
        delta=1.0,
        metric="min",
        gap="f_T",
    )
    assert r.value >= r0.value * (1 - 1e-5)  # delays cannot help the worst case here
    assert r.value == pytest.approx(20 / 31, rel=1e-5)  # the value found (pinned: 0.645161…)


# ------------------------------------------------------------------------------------------- instance replay
CASES = {
    "AFACD": (AFACD(eta=2.0, eta_L=0.1), sched([[0, 1], [2, 0], [1, 2]], [[0, 0], [1, 0], [1, 1]], 2, 3)),
    "FedAvg": (FedAvg(eta=1.0, eta_L=0.1), sched([[0], [1], [0]], [[0], [1], [0]], [[2], [1], [2]], 2)),
    "AFACS": (AFACS(eta=2.0, eta_L=0.1), sched([[0], [1], [0]], [[0], [0], [1]], 2, 2, K0=2)),
    "FedBuff": (FedBuff(eta=1.0, eta_L=0.1), sched([[0, 1], [2, 0], [1, 2]], [[0, 0], [1, 0], [1, 2]], 2, 3)),
}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("metric", ["average", "last"])
def test_replay_reproduces_metric(name, metric):
    """The instance recovered from the Gram matrix, replayed through the library's own ``aggregate`` (and a
    plain local-SGD loop), stays on the recorded points and reproduces the primal metric to 1e-6 relative."""
    algo, S = CASES[name]
    r = worst_case(algo, S, C, delta=1.0, metric=metric)
    assert r.certified
    xs, gn, value = replay(r)
    assert r.instance.metric == pytest.approx(r.primal, rel=1e-6)
    assert value == pytest.approx(r.primal, rel=1e-6, abs=1e-9)
    assert np.allclose(xs[: r.instance.x.shape[0]], r.instance.x, atol=1e-6)
    assert r.primal <= r.value * (1 + 1e-5)


def test_dimension_reduction_gives_low_rank_instance_that_replays():
    """PEPit's trace heuristic (an extra solve) finds a lower-dimensional worst case; the certified value is
    the first solve's, the instance still replays to its own metric (rel. 1e-6) within 1e-3 of the value."""
    algo, S = CASES["AFACS"]
    full = worst_case(algo, S, C, delta=1.0)
    red = worst_case(algo, S, C, delta=1.0, dimension_reduction="trace")
    assert red.certified and red.value == pytest.approx(full.value, rel=1e-6)
    assert red.instance.dim <= full.instance.dim
    _, _, value = replay(red)
    assert value == pytest.approx(red.instance.metric, rel=1e-6)
    assert red.instance.metric == pytest.approx(red.value, rel=1e-3)


def test_gram_size_matches_pepit_counter():
    from PEPit import Point

    for name, het in (("AFACD", "all"), ("AFACD", "server"), ("AFACS", "all"), ("FedAvg", "server")):
        algo, S = CASES[name]
        r = worst_case(algo, S, C, delta=1.0, heterogeneity=het)
        assert Point.counter == r.gram_size == gram_size(skeleton(algo, S), heterogeneity=het), name


def test_fedavg_equals_afacd_with_K_times_eta():
    """docs/DESIGN.md equivalence: FedAvg(η, η_L) = AFA-CD(η K, η_L) with constant K (here with delays
    too)."""
    S = sched([[0, 1], [1, 2], [2, 0]], [[0, 0], [1, 1], [1, 0]], 2, 3)
    a = worst_case(FedAvg(eta=1.5, eta_L=0.1), S, C, delta=1.0)
    b = worst_case(AFACD(eta=3.0, eta_L=0.1), S, C, delta=1.0)
    assert a.value == pytest.approx(b.value, rel=1e-5)


def test_all_heterogeneity_tighter_than_server_and_lower_below_upper():
    """More constraints ⇒ smaller SDP value ("all" ≤ "server", up to solver accuracy); a concrete certified
    instance never beats the certified upper bound (rel. 1e-5 for the solver's accuracy)."""
    algo, S = CASES["AFACD"]
    a = worst_case(algo, S, C, delta=1.0, heterogeneity="all")
    s = worst_case(algo, S, C, delta=1.0, heterogeneity="server")
    assert a.value <= s.value * (1 + 1e-5)
    lb = quadratic_lower_bound(algo, S, L=1.0, sigma_G=0.3, delta=1.0, grid=4)
    assert 0 < lb.value <= a.value * (1 + 1e-5)


def test_quadratic_lower_bound_reads_the_function_class_object():
    """``functions=`` and ``mu=`` name the same class and give the same search, bit for bit; the nonconvex
    and convex classes search the same positive curvatures [L/50, L] (a quadratic member with a minimizer);
    the strongly convex class only [μ, L]; bad or contradicting classes are refused."""
    from afltheory.functions import ConvexSmooth, SmoothNonconvex, StronglyConvexSmooth

    algo, S = CASES["FedAvg"]
    kw = dict(L=1.0, sigma_G=0.3, delta=1.0, grid=2)
    sc = quadratic_lower_bound(algo, S, functions=StronglyConvexSmooth(1.0, 0.5), **kw)
    assert sc.value == quadratic_lower_bound(algo, S, mu=0.5, **kw).value
    assert sc.hessian_diag == pytest.approx([0.5, 1.0])  # the best instance sits at the class's lowest μ
    nc = quadratic_lower_bound(algo, S, **kw)
    assert nc.value == quadratic_lower_bound(algo, S, functions=SmoothNonconvex(1.0), **kw).value
    assert nc.value == quadratic_lower_bound(algo, S, functions=ConvexSmooth(1.0), **kw).value
    assert nc.hessian_diag == pytest.approx([0.02, 1.0])  # L/50: the search's floor
    with pytest.raises(ValueError, match="contradicts"):
        quadratic_lower_bound(algo, S, mu=0.2, functions=StronglyConvexSmooth(1.0, 0.5), **kw)
    with pytest.raises(ValueError, match=r"functions\.L=2\.0 must equal L=1\.0"):
        quadratic_lower_bound(algo, S, functions=ConvexSmooth(2.0), **kw)
    with pytest.raises(ValueError, match=r"mu=1\.0 .*\[0\.0, 1\.0\)"):
        quadratic_lower_bound(algo, S, mu=1.0, **kw)


def test_strongly_convex_class_smaller_than_nonconvex():
    algo, S = CASES["FedAvg"]
    nc = worst_case(algo, S, C, delta=1.0)
    sc = worst_case(algo, S, C, delta=1.0, mu=0.5)
    assert sc.certified and sc.value <= nc.value * (1 + 1e-5)
    assert sc.instance.x_star is not None


# ------------------------------------------------------------------------------------------- schedules
@pytest.fixture(scope="module")
def sequential_search():
    """The exhaustive search of the M = 2, m = 1, K = 2, T = 2, τ = 1 schedules in this process (deterministic
    SDP solves), shared by the two tests below."""
    return worst_schedule(AFACD(eta=2.0, eta_L=0.1), C, num_workers=2, m=1, K=2, T=2, tau=1, delta=1.0)


def test_exhaustive_schedule_search_is_the_max(sequential_search):
    """M = 2, m = 1, T = 2, τ = 1: 1 · 4 = 4 schedules; the exhaustive maximum equals the max of the
    individually solved schedules and is ≥ the no-delay schedule's value."""
    algo = AFACD(eta=2.0, eta_L=0.1)
    assert schedule_count(2, 1, 2, 1) == 4
    res = sequential_search  # worst_schedule(algo, C, num_workers=2, m=1, K=2, T=2, tau=1, delta=1.0)
    assert res.method == "exhaustive" and res.solves == 4 and res.uncertified == 0 and res.certified_max
    vals = []
    for w1 in (0, 1):
        for d1 in (0, 1):
            S = sched([[0], [w1]], [[0], [d1]], 2, 2, K0=2)
            vals.append(worst_case(algo, S, C, delta=1.0, heterogeneity="server").value)
    assert res.best.value == pytest.approx(max(vals), rel=1e-6)


@pytest.mark.parametrize("executor", ["local", pytest.param("dask", marks=pytest.mark.slow)])
def test_schedule_search_on_an_executor_gives_the_sequential_result(executor, sequential_search):
    """The solves of a search step run as executor tasks (2 processes; Dask: a LocalCluster): the same
    schedules, values and maximum as in one process (results ordered as the sequential run's)."""
    if executor == "dask":
        pytest.importorskip("dask.distributed", reason="needs the dask extra: pip install 'afltheory[dask]'")
    algo = AFACD(eta=2.0, eta_L=0.1)
    one = sequential_search  # worst_schedule(algo, C, num_workers=2, m=1, K=2, T=2, tau=1, delta=1.0)
    two = worst_schedule(algo, C, num_workers=2, m=1, K=2, T=2, tau=1, delta=1.0, executor=executor, jobs=2)
    assert (two.solves, two.uncertified, two.method) == (one.solves, one.uncertified, one.method)
    assert two.best.value == one.best.value
    np.testing.assert_array_equal(two.schedule.workers, one.schedule.workers)
    np.testing.assert_array_equal(two.schedule.delays, one.schedule.delays)
    with pytest.raises(ValueError, match="executor='ray'"):
        worst_schedule(algo, C, num_workers=2, m=1, K=2, T=2, tau=1, delta=1.0, executor="ray")


# ------------------------------------------------------------------------------------------- brackets
def test_bracket_thm2_tiny_and_control():
    b = bracket("thm2", m=1, K=2, T=2, tau=1, M=2, sigma_G=0.1, lower_grid=3)
    assert b.inside_conditions and b.certified
    assert b.lower <= b.upper * (1 + 1e-5)
    assert b.holds and b.control_exceeded  # certified; the bound minus its transient term is not
    assert b.bound == pytest.approx(sum(b.terms.values()))
    json.dumps(b.to_json(), default=str)


# ------------------------------------------------------------------------------------------- bad input
def test_size_limit_error_names_size_and_time():
    S = sched(np.zeros((30, 1), int), [[0]] * 30, 5, 3)
    with pytest.raises(PEPSizeError, match=r"Gram dimension \d+ exceeds max_gram=.*estimated solve time"):
        worst_case(AFACD(eta=1.0, eta_L=0.1), S, C, delta=1.0)


@pytest.mark.parametrize(
    "kw, match",
    [
        (dict(metric="median"), "metric="),
        (dict(gap="f0"), "gap="),
        (dict(delta=0.0), "delta="),
        (dict(heterogeneity="some"), "heterogeneity="),
        (dict(mu=2.0), "mu="),
    ],
)
def test_bad_arguments(kw, match):
    algo, S = CASES["AFACD"]
    args = dict(delta=1.0) | kw
    with pytest.raises(ValueError, match=match):
        worst_case(algo, S, C, **args)


def test_noisy_constants_and_unsupported_rules_rejected():
    algo, S = CASES["AFACD"]
    with pytest.raises(ValueError, match="sigma_L"):
        worst_case(algo, S, dict(C, sigma_L=0.5), delta=1.0)
    from afltheory.algorithms import FedProx
    from afltheory.compression import RandK
    from afltheory.mutants.algorithms import AFACDOneArrival

    with pytest.raises(ValueError, match="algorithm.worker="):
        worst_case(AFACD(eta=1.0, eta_L=0.1, worker=FedProx(0.1)), S, C, delta=1.0)
    with pytest.raises(ValueError, match="algorithm.compressor="):
        worst_case(AFACD(eta=1.0, eta_L=0.1, compressor=RandK(1)), S, C, delta=1.0)
    with pytest.raises(TypeError, match="overrides combine"):  # imperative: refused
        worst_case(AFACDOneArrival(eta=1.0, eta_L=0.1), S, C, delta=1.0)
    with pytest.raises(TypeError, match="server rule"):
        worst_case("AFACD", S, C, delta=1.0)


def test_skeleton_reads_the_declarative_hooks():
    """The PEP analyses the rule as implemented (one definition for every backend): a rule whose step size
    is η η_L² (the mutant ``afacd.eta_L_twice``) has exactly the worst case of AFA-CD(η η_L, η_L) (same γ,
    same local η_L; rel. 1e-6), and differs from AFA-CD(η, η_L); FedBuff's staleness weights enter as
    w(τ) = 1/√(1+τ) on the arrivals."""
    from afltheory.mutants.algorithms import AFACDEtaLTwice

    algo, S = CASES["AFACD"]
    twice = worst_case(AFACDEtaLTwice(eta=2.0, eta_L=0.1), S, C, delta=1.0)
    same = worst_case(AFACD(eta=0.2, eta_L=0.1), S, C, delta=1.0)
    assert twice.value == pytest.approx(same.value, rel=1e-6)
    assert abs(twice.value - worst_case(algo, S, C, delta=1.0).value) > 1e-3 * same.value
    fb, Sb = CASES["FedBuff"]
    sk = skeleton(fb, Sb)
    assert np.allclose(sk.weights, 2.0 / np.sqrt(1.0 + np.asarray(Sb.delays[0])))  # K = 2 times w(τ)
    assert sk.normalizer == 2 and not sk.memory


def test_inaccurate_solver_status_is_not_certified(monkeypatch):
    """A solve stopped early (Clarabel max_iter = 3) is reported with its status and ``upper`` None."""
    from afltheory.pep import core

    monkeypatch.setattr(core, "SOLVER_SETTINGS", dict(core.SOLVER_SETTINGS, max_iter=3))
    monkeypatch.setattr(core, "RETRY_SETTINGS", dict(core.RETRY_SETTINGS, max_iter=3))
    algo, S = CASES["AFACD"]
    r = worst_case(algo, S, C, delta=1.0)
    assert not r.certified and r.upper is None and r.status != "optimal"
    assert "NOT certified" in r.summary()


def test_cli_json_has_the_bracket_keys(tmp_path, capsys):
    from afltheory.cli import main

    js = tmp_path / "b.json"
    rc = main(
        ["pep", "thm2", "--m", "1", "--M", "2", "--K", "2", "--T", "2", "--tau", "1", "--json", str(js)]
    )
    assert rc == 0
    d = json.loads(js.read_text())
    assert {"pep_upper", "lower", "theorem_bound", "status", "seconds"} <= set(d)
    assert d["status"] == "optimal" and d["lower"] <= d["pep_upper"] * (1 + 1e-5) <= d["theorem_bound"]
    assert "bracket" in capsys.readouterr().out


def test_cli_size_limit_exits_2_with_estimate(capsys):
    from afltheory.cli import main

    rc = main(["pep", "thm2", "--m", "4", "--K", "3", "--T", "10", "--tau", "2"])
    assert rc == 2
    assert "Gram dimension 117 exceeds max_gram=100" in capsys.readouterr().err


def test_decrease_weight_objective_replays_and_is_below_plain_metric():
    """metric − c (f(x_0) − f(x_T)): the replay subtracts c times the recovered decrease and matches the
    primal (abs. 1e-6: the values are small); the maximum stays below the plain metric's here."""
    algo, S = CASES["AFACS"]
    plain = worst_case(algo, S, C, delta=1.0)
    r = worst_case(algo, S, C, delta=1.0, decrease_weight=2.0)
    assert r.certified and r.decrease_weight == 2.0
    _, _, value = replay(r)
    assert value == pytest.approx(r.primal, abs=1e-6)
    assert r.value <= plain.value + 1e-6


def test_unbounded_worst_case_is_reported_not_raised():
    """γ = 2.5/L > 2/L: the worst case of GD is unbounded; the solver fails or reports infeasibility and
    ``worst_case`` returns an uncertified result (``upper`` None) instead of raising."""
    r = worst_case(
        AFACD(eta=2.5, eta_L=1.0),
        gd_schedule(3),
        {"L": 1.0, "sigma_G": 0.0},
        delta=1.0,
        metric="min",
        gap="f_T",
    )
    assert not r.certified and r.upper is None


def test_per_worker_fixed_local_steps_enter_the_skeleton():
    """A rule fixing one K per worker (``fixed_local_steps = (1, 3)``) is analysed on the schedule with those
    K written in — the one normalization simulate and torch use (``ServerRule.local_view``). The skeleton used
    to broadcast the tuple over arrival positions, not workers (worst case 1.6554 instead of 1.6581 here,
    measured). Same worst case as plain AFA-CD on the hand-written K, and a
    different one from K = 1 everywhere (the control)."""

    class PerWorkerK(AFACD):
        fixed_local_steps = (1, 3)

    W, D = [[0, 1], [1, 0], [0, 1]], [[0, 0], [1, 0], [0, 1]]
    ours = worst_case(PerWorkerK(eta=1.0, eta_L=0.1), sched(W, D, 1, 2), C, delta=1.0)
    hand = worst_case(
        AFACD(eta=1.0, eta_L=0.1), sched(W, D, [[1, 3], [3, 1], [1, 3]], 2, K0=[1, 3]), C, delta=1.0
    )
    ones = worst_case(AFACD(eta=1.0, eta_L=0.1), sched(W, D, 1, 2), C, delta=1.0)
    assert ours.value == pytest.approx(hand.value, rel=1e-6)
    assert abs(ours.value - ones.value) > 1e-3 * ones.value


def test_equal_per_worker_step_sizes_are_one_step_size():
    """The skeleton reads the rule's local view: Dynamic FedAvg with equal epochs E (per-worker steps μ/E, all
    equal) is AFA-CD with η = E, η_L = μ/E and K = E (same worst case); unequal epochs (per-worker step
    sizes) are refused, and K = 1 gives another worst case (the controls)."""
    from afltheory.algorithms import DynamicFedAvg

    W, D = [[0, 1], [1, 0], [0, 1]], [[0, 0], [1, 0], [0, 1]]
    ours = worst_case(DynamicFedAvg(0.2, epochs=2), sched(W, D, 1, 2), C, delta=1.0)
    hand = worst_case(AFACD(eta=2.0, eta_L=0.1), sched(W, D, 2, 2, K0=2), C, delta=1.0)
    ones = worst_case(AFACD(eta=2.0, eta_L=0.1), sched(W, D, 1, 2), C, delta=1.0)
    assert ours.value == pytest.approx(hand.value, rel=1e-6)  # 1.37599 (measured)
    assert abs(ours.value - ones.value) > 1e-3 * ones.value  # K = 1 instead: 1.34960
    with pytest.raises(ValueError, match="per-worker local step sizes"):
        worst_case(DynamicFedAvg(0.2, epochs=(1, 2)), sched(W, D, 1, 2), C, delta=1.0)
