"""The adversary's evaluator reads the rules' declarative view (``exact.local.server_rule``), not a copy.

- Agreement: every declaratively defined rule (AFA-CD, AFA-CS with m < M warm and cold, FedAvg, FedBuff,
  AsySG, Dynamic FedAvg with per-agent epochs, a FedProx worker, FedAvg with client weights, step-size
  schedules η(t), η_L(t) (round t runs ``rule.at_round(t)``), a user's stateless rule) equals the general
  exact engine ``afltheory.exact.moments`` (an independent implementation) to 1e-10 relative error, with
  diagonal structure (the B·d one-dimensional reduction) and dense Hessians.
- Monte Carlo: AFA-CS with m < M under round-robin arrivals (which ``exact.moments`` refuses: not i.i.d.)
  against ``simulate`` (R = 4000, |z| ≤ 4.5 at 5 checkpoints: false-failure probability < 4e-5 under
  normality).
- Refusal: rules overriding imperative hooks, non-affine workers and compressors raise ``UnsupportedRule``
  (never read as their base), and a refused rule refuses the whole search.
- Mutants: every rule mutant (and control) of the catalogue either changes the evaluated moments or is
  refused — none is silently evaluated as its base class.
"""

import zlib
from dataclasses import dataclass

import numpy as np
import pytest

from afltheory import mutants, simulate
from afltheory.adversary import CovarianceNoise, PmfDelay, PmfSteps, get_claim, make_instance, search
from afltheory.adversary.fastexact import Batch, grad_norm_sq, rule_view
from afltheory.adversary.space import Structure
from afltheory.algorithms import AFACD, AFACS, AsySG, FedAvg, FedBuff, UnsupportedRule
from afltheory.algorithms.dynamic import DynamicFedAvg
from afltheory.algorithms.published import FedNova
from afltheory.algorithms.schedules import StepSize
from afltheory.algorithms.workers import SCAFFOLD, FedProx
from afltheory.anarchy import Behaviour, BiasedArrivals, CyclicArrivals, UniformArrivals
from afltheory.compression.channel import DIANA, ErrorFeedback
from afltheory.compression.compressors import QSGD, RandK
from afltheory.exact import moments
from afltheory.problems import HeterogeneousCurvatureQuadratic, HeterogeneousQuadratic


@dataclass(frozen=True)
class SquaredK(AFACD):
    """A user's stateless rule defined only by declarative hooks: weight K²/(1 + τ), sum over m + 1."""

    def local_steps_weight(self, K):
        return np.asarray(K, dtype=float) ** 2

    def staleness_weight(self, tau):
        return 1.0 / (1.0 + np.asarray(tau, dtype=float))

    def normalizer(self, m, num_workers):
        return m + 1


def _problem(rng, d, M, shared, diag):
    if shared:
        A = rng.standard_normal((d, d))
        H = np.broadcast_to(A @ A.T / d + 0.2 * np.eye(d), (M, d, d)).copy()
    else:
        A = rng.standard_normal((M, d, d))
        H = A @ A.transpose(0, 2, 1) / d + 0.2 * np.eye(d)
    Z = rng.standard_normal((M, d, d))
    N = Z @ Z.transpose(0, 2, 1) * 0.1
    if diag:
        H, N = H * np.eye(d), N * np.eye(d)
    C = rng.standard_normal((M, d))
    if shared:
        return HeterogeneousQuadratic.from_arrays(hessian=H[0], centers=C, sigma_L=CovarianceNoise(N))
    return HeterogeneousCurvatureQuadratic.from_arrays(
        hessians=H, centers=C, sigma_L=CovarianceNoise(N), radius=5.0
    )


def _batch(p, arr, dp, kp, rule, x0):
    lg = p.linear_gaussian()
    xs = lg.x_star
    pi, pij = arr.inclusion(p.num_workers)
    return Batch(
        hessians=lg.hessians[None],
        b_tilde=(lg.b - np.einsum("mij,j->mi", lg.hessians, xs))[None],
        noise_cov=lg.noise_cov[None],
        hbar=lg.hessian_mean[None],
        x0=(x0 - xs)[None],
        m=arr.m,
        pi=pi[None],
        pij=pij[None],
        delay_pmf=dp[None],
        k_pmf=kp[None],
        rules=(rule,),
    )


RULES = {
    "AFACD": lambda: AFACD(0.7, 0.05),
    "AFACS_warm": lambda: AFACS(0.7, 0.05),
    "AFACS_cold": lambda: AFACS(0.7, 0.05, memory_init="zeros"),
    "FedAvg": lambda: FedAvg(0.7, 0.05),
    "FedBuff": lambda: FedBuff(0.7, 0.05),
    "AsySG": lambda: AsySG(0.7, 0.05),
    "DynamicFedAvg": lambda: DynamicFedAvg(0.1, epochs=(1, 2, 3, 2)),
    "FedProx": lambda: AFACD(0.7, 0.05, worker=FedProx(0.3)),
    "FedAvg_weights": lambda: FedAvg(0.7, 0.05, weights=(0.1, 0.2, 0.3, 0.4)),
    "FedAvg_schedule": lambda: FedAvg(0.7, StepSize("0.5/(t + 10)")),
    "AFACS_schedule": lambda: AFACS(StepSize("1 + 1/(t + 1)"), StepSize("0.5/(t + 10)")),
    "user": lambda: SquaredK(0.5, 0.05),
}


@pytest.mark.parametrize("structure", ["diagonal", "dense_shared", "dense_per_worker"])
@pytest.mark.parametrize("name", sorted(RULES))
def test_every_declarative_rule_equals_exact_moments(name, structure):
    rng = np.random.default_rng(zlib.crc32(f"{name}{structure}".encode()))
    d, M, m, D, Kmax = 3, 4, 2, 2, 3
    p = _problem(rng, d, M, structure == "dense_shared", structure == "diagonal")
    rule = RULES[name]()
    arr = UniformArrivals(m) if name != "FedBuff" else BiasedArrivals(m, rng.dirichlet(np.ones(M)))
    dp = rng.dirichlet(np.ones(D + 1))
    kp = rng.dirichlet(np.ones(Kmax), size=M)
    x0 = rng.standard_normal(d)
    ex = moments(p, rule, Behaviour(arr, PmfDelay(dp), PmfSteps(kp)), 25, x0=x0).grad_norm_sq
    g = grad_norm_sq(_batch(p, arr, dp, kp, rule, x0), 25)[0]
    np.testing.assert_allclose(g, ex, rtol=1e-10)


def test_afacs_round_robin_m_below_M_matches_monte_carlo():
    """Theorem 4's class with partial participation: a decoded thm4 candidate (round-robin m = 2 of M = 5,
    delays, random K, warm-started memory) against ``simulate``; the rows evaluate together as alone."""
    c = get_claim("thm4")
    cls = c.default_class().replace(rounds=30, min_rounds=1, hessian="per_worker")
    st = Structure(2, "cyclic", {})
    U = np.random.default_rng(7).random((3, c.num_params(cls, st)))
    U[:, -2 - cls.K_max - cls.max_delay - 1 :] = 0.9  # full delay / K support
    dec = c.decode(cls, st, U)
    assert dec.inside.all() and dec.pi.shape[1] == 5  # period M / gcd(M, m)
    g = grad_norm_sq(c.batch(cls, dec), 30)
    np.testing.assert_allclose(g[1], grad_norm_sq(c.batch(cls, c.decode(cls, st, U[1:2])), 30)[0], rtol=1e-12)
    inst = make_instance(c, cls, st, U[0], 30)
    assert isinstance(inst.behaviour().arrivals, CyclicArrivals) and isinstance(inst.algorithm(), AFACS)
    tr = simulate(inst.problem(), inst.algorithm(), inst.behaviour(), 30, 4000, seed=11, x0=inst.x0)
    t = np.array([1, 4, 9, 17, 30])
    z = (tr.mean()[t] - g[0, t]) / tr.sem()[t]
    assert np.all(np.abs(z) < 4.5), z


@dataclass(frozen=True)
class _Aggregate(AFACD):
    def aggregate(self, state, x, G, workers, K, delays, num_workers):
        return super().aggregate(state, x, G, workers, K, delays, num_workers)


@dataclass(frozen=True)
class _UpdateMemory(AFACS):
    def update_memory(self, state, workers, U):
        return super().update_memory(state, workers, U)


@dataclass(frozen=True)
class _Init(AFACS):
    def init(self, replicates, num_workers, dim, initial_updates=None):
        return super().init(replicates, num_workers, dim, initial_updates)


@dataclass(frozen=True)
class _ArrivalWeights(FedAvg):
    def arrival_weights(self, K, tau):
        return super().arrival_weights(K, tau)


@pytest.mark.parametrize(
    "rule",
    [
        _Aggregate(1.0, 0.1),
        _UpdateMemory(1.0, 0.1),
        _Init(1.0, 0.1),
        _ArrivalWeights(1.0, 0.1),
        AFACD(1.0, 0.1, worker=SCAFFOLD()),
        AFACD(1.0, 0.1, compressor=RandK(1)),
    ],
    ids=lambda r: (
        type(r).__name__
        + ("_" + type(r.worker).__name__ if type(r.worker).__name__ != "SGD" else "")
        + ("_compressed" if r.compressor is not None else "")
    ),
)
def test_unrepresentable_rules_are_refused(rule):
    with pytest.raises(UnsupportedRule):
        rule_view((rule,), m=2, num_workers=3, K_max=2, max_delay=1)


def test_a_refused_rule_refuses_the_search():
    c = get_claim("thm3")
    cls = c.default_class().replace(rounds=20, min_rounds=5)
    with mutants.injected("afacd.one_arrival"):
        with pytest.raises(UnsupportedRule):
            search(c, budget=8, batch=4, assumptions=cls, confirm_violation=False)


def _host(base, category=None):
    """A rule that contains the component class ``base`` (what a check would build); with unequal client
    weights for a client-weight mutant (where it acts)."""
    if category == "client weights":
        return base(0.7, 0.05, weights=(0.4, 0.3, 0.2, 0.1))
    if issubclass(base, (AFACD, AFACS, FedAvg, FedBuff, FedNova, AsySG)):
        return base(0.7, 0.05)
    if base in (FedProx, SCAFFOLD):
        return AFACD(0.7, 0.05, worker=base())
    comp = {RandK: RandK(1), QSGD: QSGD(4), ErrorFeedback: ErrorFeedback(RandK(1)), DIANA: DIANA(RandK(1))}[
        base
    ]
    return AFACD(0.7, 0.05, compressor=comp)


RULE_MUTANTS = [
    n for n in list(mutants.CATALOGUE) + list(mutants.CONTROLS) if mutants.get(n).kind in ("rule", "control")
]


@pytest.mark.parametrize("name", RULE_MUTANTS)
def test_every_rule_mutant_is_killed_or_refused(name):
    """Under each rule mutant the evaluator either refuses the host rule or computes different moments (m = 2
    of M = 4, delays and random K, so weight and normalizer mutants act); none is read as its base."""
    mut = mutants.get(name)
    if mut.category == "schedules":
        # the evaluator, like the exact engine, resolves round t of a schedule on the rule it was given and
        # substitutes afterwards: injected() cannot reach a schedule mutant there (Mutant.engines: simulate)
        assert "exact" not in mut.engines
        return
    (base,) = mut.replaces
    rule = _host(base, mut.category)
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    p = _problem(rng, 3, 4, False, False)
    arr, dp, kp = UniformArrivals(2), np.array([0.5, 0.3, 0.2]), np.full((4, 3), 1 / 3)
    b = _batch(p, arr, dp, kp, rule, rng.standard_normal(3))
    try:
        ref = grad_norm_sq(b, 20)[0]
    except UnsupportedRule:
        ref = None  # the base itself is outside the evaluator (compressors, SCAFFOLD)
    with mutants.injected(name):
        try:
            got = grad_norm_sq(b, 20)[0]
        except UnsupportedRule:
            return  # refused: recorded by the kill matrix as "refused", never a silent base
    assert mut.kind == "rule", f"control {name} was evaluated instead of refused"
    assert ref is not None
    assert not np.allclose(got, ref, rtol=1e-9), f"{name} evaluated as its base class"


def test_claim_evaluation_sees_a_declarative_mutant():
    """Theorem 3's evaluation of a fixed batch changes under a step-size mutant (the evaluator reads the
    substituted rule)."""
    c = get_claim("thm3")
    cls = c.default_class().replace(rounds=30, min_rounds=5)
    st = Structure(2, "uniform", {})
    U = np.random.default_rng(3).random((4, c.num_params(cls, st)))
    ok = c.evaluate(cls, st, U).ratio
    with mutants.injected("afacd.eta_L_missing"):
        bad = c.evaluate(cls, st, U).ratio
    assert np.all(np.isfinite(ok)) and not np.allclose(ok, bad)


def test_thm4_is_searched_with_m_below_M():
    c = get_claim("thm4")
    cls = c.default_class().replace(m=2, rounds=40, min_rounds=10, arrivals=("uniform", "cyclic"))
    wc = search(c, budget=64, batch=16, assumptions=cls, seed=1, confirm_violation=False)
    assert wc.structure.m == 2 and wc.structure.arrivals == "cyclic"
    assert wc.counts.get("ok", 0) > 0 and np.isfinite(wc.ratio)
    assert wc.instance.arrivals == {"kind": "cyclic", "m": 2}
    assert c.theorem_tau(wc.instance) == wc.instance.tau + 2  # ⌈5/2⌉ − 1 rounds of slot age
    with pytest.raises(ValueError, match="cyclic"):
        c.check_class(c.default_class().replace(m=2, arrivals=("uniform",)))


def test_search_cost_is_projected_and_refused():
    c = get_claim("thm3")
    with pytest.raises(ValueError, match=r"max_memory=.*MiB"):
        search(c, budget=8, max_memory=1e4)
    with pytest.raises(ValueError, match="max_seconds"):
        search(c, budget=10**6, max_seconds=1e-6, confirm_violation=False)


@pytest.mark.slow
def test_figures_survive_diverged_candidates(tmp_path):
    """A search whose candidates diverge (ratio +inf, here under a step-size mutant) still draws both figures
    (log-scale ticks used to overflow and crash the check)."""
    from afltheory.adversary.plots import progress_plot, worst_instance_plot

    with mutants.injected("afacd.eta_L_missing"):
        wc = search("thm3", budget=64, batch=16, seed=0, confirm_violation=False)
        assert wc.counts.get("diverged", 0) > 0
        for fn, name in ((progress_plot, "p.png"), (worst_instance_plot, "w.png")):
            assert (tmp_path / name).exists() is False
            fn(tmp_path / name, wc)
            assert (tmp_path / name).stat().st_size > 1000
