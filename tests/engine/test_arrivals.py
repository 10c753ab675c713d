"""The round's arrival noises drawn as one Gaussian (issue 31, ``_CollapsedRunner.add_arrival_noise``): used
exactly where the server step is linear in the round's updates, replicate r bit-identical whatever R and the
chunk size, and the same law as one draw per arrival (statistical tests: fixed seeds, stated confidence)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import afltheory as aft
from afltheory import algorithms as al
from afltheory import anarchy as an
from afltheory import compression as cp
from afltheory import engine
from afltheory.problems import DriftingQuadratic, HeterogeneousCurvatureQuadratic, HeterogeneousQuadratic

FAMILIES = {
    "diag": lambda: HeterogeneousQuadratic(dim=5, num_workers=8, sigma_L=0.5, seed=1),
    "dense": lambda: HeterogeneousQuadratic(dim=5, num_workers=8, sigma_L=0.5, hessian="dense"),
    "dense-d40": lambda: HeterogeneousQuadratic(dim=40, num_workers=8, sigma_L=0.5, hessian="dense"),
    "per-worker-diag": lambda: HeterogeneousCurvatureQuadratic(dim=5, num_workers=8, sigma_L=0.5, seed=1),
    "drifting": lambda: DriftingQuadratic.from_problem(
        HeterogeneousQuadratic(dim=5, num_workers=8, sigma_L=0.5, seed=1), 0.05
    ),
}
RULES = {
    "AFACD": lambda: al.AFACD(0.5, 0.05),
    "FedAvg": lambda: al.FedAvg(0.5, 0.05),  # per-arrival weights K_i
    "FedBuff": lambda: al.FedBuff(0.5, 0.05, buffer_size=3, staleness="sqrt"),  # K_i and staleness weights
}
BEH = an.Behaviour(an.UniformArrivals(3), an.UniformDelay(2), an.UniformSteps(1, 4))


def _run(family, rule, R, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return aft.simulate(FAMILIES[family](), RULES[rule](), BEH, rounds=8, replicates=R, seed=3, **kw)


@pytest.mark.parametrize("rule", sorted(RULES))
@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_replicate_r_does_not_depend_on_the_replicate_count(family, rule):
    big = _run(family, rule, 70, record_x=True)  # one full noise block and a partial one
    assert big.config["arrivals_collapsed"]
    for R in (1, 2):
        small = _run(family, rule, R, record_x=True)
        for what in ("grad_norm_sq", "loss", "x_final", "x"):
            np.testing.assert_array_equal(getattr(small, what), getattr(big, what)[:R], err_msg=what)


@pytest.mark.parametrize("family", ["diag", "dense", "per-worker-diag"])
def test_chunk_size_changes_no_number(family, monkeypatch):
    monkeypatch.setattr(engine, "_CHUNK_VALUES", 1)
    small = _run(family, "FedAvg", 150)
    monkeypatch.setattr(engine, "_CHUNK_VALUES", 1 << 30)
    big = _run(family, "FedAvg", 150)
    np.testing.assert_array_equal(small.grad_norm_sq, big.grad_norm_sq)


def test_where_the_arrivals_are_collapsed():
    p = FAMILIES["diag"]()
    full = an.Behaviour(an.UniformArrivals(p.num_workers), an.UniformDelay(1), an.UniformSteps(1, 3))

    def flag(alg, beh=BEH, **kw):
        return aft.simulate(p, alg, beh, rounds=2, replicates=2, **kw).config["arrivals_collapsed"]

    assert flag(al.AFACD(1.0, 0.1)) and flag(al.AFACD(1.0, 0.1), collapse=True)
    assert not flag(al.AFACD(1.0, 0.1), collapse="steps")
    assert not flag(al.AFACD(1.0, 0.1), collapse=False)
    assert not flag(al.AFACS(1.0, 0.1))  # memory slots of absent workers keep their own noise
    assert flag(al.AFACS(1.0, 0.1), full)  # every slot overwritten every round
    assert not flag(al.AFACD(1.0, 0.1, compressor=cp.RandK(2)))
    assert not flag(al.AFACD(1.0, 0.1, worker=al.FedProx(0.1)))  # steps not collapsed at all
    with pytest.raises(ValueError, match="collapse='both'"):
        flag(al.AFACD(1.0, 0.1), collapse="both")


def test_without_noise_the_arrivals_path_equals_the_per_arrival_path():
    """σ_L = 0: the same numbers to the last bit (the noiseless updates are computed by the same code). The
    reference path's arrivals branch (``fast=False``; the fast path sums in another order: tests/engine/
    test_speed_fast.py compares it to 1e-12)."""
    p = HeterogeneousQuadratic(dim=5, num_workers=8, sigma_L=0.0, seed=1)
    a = aft.simulate(p, al.FedAvg(0.5, 0.05), BEH, rounds=10, replicates=5, seed=1, fast=False)
    b = aft.simulate(p, al.FedAvg(0.5, 0.05), BEH, rounds=10, replicates=5, seed=1, collapse="steps")
    assert a.config["arrivals_collapsed"] and not b.config["arrivals_collapsed"]
    np.testing.assert_array_equal(a.grad_norm_sq, b.grad_norm_sq)


@pytest.mark.parametrize(
    "family, rule", [("diag", "FedAvg"), ("dense", "FedBuff"), ("per-worker-diag", "AFACD")]
)
def test_one_round_has_the_per_arrival_covariance(family, rule):
    """x_1 from a fixed x_0 (no delays at round 0): per coordinate, the mean and the variance over 20000
    replicates of the one-draw path agree with one draw per arrival (collapse="steps") and with one draw per
    step (collapse=False): |z| < 5 for the means; variance ratio within 5 standard errors (SE of a log
    variance ratio ≈ sqrt(2/n + 2/n) = 0.014) — false-failure probability < 1e-5 over the 3·d·2 comparisons.
    A wrong combination (Σ w_i sc_i instead of sqrt(Σ w_i² sc_i²), or weights w_i instead of w_i²) changes
    the variance by a factor ≥ 1.5 here."""
    R = 20000
    runs = [
        _run(family, rule, R, record_x=True, **kw) for kw in ({}, {"collapse": "steps"}, {"collapse": False})
    ]
    assert runs[0].config["arrivals_collapsed"] and not runs[1].config["arrivals_collapsed"]
    xs = [tr.x[:, 1] for tr in runs]
    for other in xs[1:]:
        z = (xs[0].mean(0) - other.mean(0)) / np.sqrt(xs[0].var(0) / R + other.var(0) / R)
        assert np.all(np.abs(z) < 5), z
        log_ratio = np.log(xs[0].var(0, ddof=1) / other.var(0, ddof=1))
        assert np.all(np.abs(log_ratio) < 5 * np.sqrt(4 / R)), log_ratio


def test_afacs_with_all_workers_equals_afacd_and_matches_exact_moments():
    """All M workers every round: AFA-CS's memory sum is the round's sum, so it runs the one-draw path and
    equals AFA-CD step for step; its MC mean of ‖∇f‖² over 3000 replicates is within 4.5 SE of the exact
    expectation at every round (false-failure probability < 1e-4 under normality). AFA-CD on the reference
    path (``fast=False``): the fast path, which AFA-CS (a memory rule) never takes, draws other noise."""
    p = HeterogeneousQuadratic(dim=3, num_workers=4, L=2.0, mu=0.3, sigma_L=1.0, sigma_G=1.0, seed=2)
    beh = an.Behaviour(an.UniformArrivals(4), an.UniformDelay(2), an.UniformSteps(1, 5))
    a = aft.simulate(p, al.AFACS(1.0, 0.2), beh, rounds=10, replicates=3000, seed=7)
    b = aft.simulate(p, al.AFACD(1.0, 0.2), beh, rounds=10, replicates=3000, seed=7, fast=False)
    assert a.config["arrivals_collapsed"]
    np.testing.assert_allclose(a.grad_norm_sq, b.grad_norm_sq, rtol=1e-10)
    ex = aft.exact.moments(p, al.AFACS(1.0, 0.2), beh, rounds=10)
    z = (a.mean() - ex.grad_norm_sq)[1:] / a.sem()[1:]
    assert np.all(np.abs(z) < 4.5), z


@pytest.mark.parametrize("family", ["diag", "dense"])
def test_rounds_with_one_step_count_take_the_same_arithmetic(family):
    """A round whose arrivals share one K uses one std for every row: replicate 0 alone (many such rounds)
    equals replicate 0 of 70 replicates (none) bit for bit."""
    beh = an.Behaviour(an.UniformArrivals(2), an.UniformDelay(1), an.UniformSteps(1, 2))
    p = FAMILIES[family]()
    one, many = (aft.simulate(p, al.AFACD(0.5, 0.05), beh, rounds=30, replicates=R, seed=2) for R in (1, 70))
    assert (one.schedule.local_steps[0].min(axis=1) == one.schedule.local_steps[0].max(axis=1)).sum() >= 5
    np.testing.assert_array_equal(one.grad_norm_sq[0], many.grad_norm_sq[0])
