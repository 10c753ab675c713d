"""Verdict-power helpers of paper_checks (_power, _reference): hand-computed cases, the power rule,
controls that fire on plausible mistakes, the plain reference loop against the engine. Deterministic (fixed
seeds; the only stochastic input, the z-test case, uses fixed sample arrays)."""

import numpy as np
import pytest

import afltheory as aft
from afltheory.algorithms import AFACD, AFACS, FedAvg
from afltheory.anarchy import Behaviour, BiasedArrivals, Replay, UniformDelay, UniformSteps
from afltheory.problems import HeterogeneousCurvatureQuadratic, HeterogeneousQuadratic
from afltheory.theory import theorem2
from paper_checks._power import (
    ConditionsViolated,
    agreement_check,
    bound_check,
    reference_check,
    require_conditions,
    steep_start,
    top_direction,
)
from paper_checks._reference import reference_grad_norm_sq, reference_iterates


def _field(v, name):
    """A Verdict field (afltheory.checks.Verdict) or its transitional copy in ``details``."""
    return getattr(v, name)


def _bc(measured, terms, about, **kw):
    return bound_check(
        id="x.y",
        claim="c",
        reference="r",
        measured=np.asarray(measured, dtype=float),
        terms=terms,
        about=about,
        exact=True,
        inside_conditions=kw.pop("inside", True),
        **kw,
    )


def test_bound_check_hand():
    terms = {"transient": np.array([9.0]), "floor": np.array([1.0])}
    v = _bc(3.0, terms, "transient")
    assert v.passed and v.theoretical == 10.0 and v.slack == pytest.approx(10 / 3)
    assert _field(v, "terms") == pytest.approx({"transient": 0.9, "floor": 0.1})
    # control: the bound without the transient (= 1) is violated by 3 -> the control fails as required
    assert not v.negative_control.passed and v.negative_control.theoretical == 1.0
    assert v.measured == 3.0 and "about transient (90% of the bound)" in v.notes


def test_bound_check_power_rule_and_labels():
    terms = {"transient": np.array([1.0]), "floor": np.array([9.0])}
    v = _bc(0.5, terms, "transient")
    assert not v.passed and "NO POWER: floor holds 90%" in v.notes
    # about the dominant term: fine
    assert _bc(0.5, terms, "floor").passed
    # a measurement the bound without the term still covers: the control passes (the verdict is not ok)
    assert _bc(0.5, terms, "floor").negative_control.passed
    out = _bc(0.5, terms, "floor", inside=False)
    assert out.passed and out.notes.startswith("outside the conditions (exploratory)")
    assert _field(out, "inside_conditions") is False
    with pytest.raises(ValueError, match="not terms"):
        _bc(0.5, terms, "nope")


def test_require_conditions_raises_not_asserts():
    conds = theorem2.conditions(L=1.0, eta=100.0, eta_L=0.009, K_max=4, tau=4)
    with pytest.raises(ConditionsViolated, match="C3"):
        require_conditions(conds, "test")
    assert require_conditions(theorem2.conditions(L=1.0, eta=1.0, eta_L=0.009, K_max=4, tau=4), "test")


def test_agreement_check_hand():
    # samples with mean 1.1 and sd 1 over R = 100 -> se 0.1; exact 1.0 -> z = +1.0; wrong 0.5 -> z = 6
    s = np.array([0.1, 2.1] * 50)
    v = agreement_check(
        id="a",
        claim="c",
        reference="r",
        mc_samples=s[:, None],
        exact_value=[1.0],
        exact_wrong=[0.5],
        wrong_desc="w",
    )
    sd = s.std(ddof=1) / 10
    assert v.measured == pytest.approx(0.1 / sd) and v.passed
    assert v.negative_control.measured == pytest.approx(0.6 / sd) and not v.negative_control.passed
    # a deterministic statistic (zero spread) equal to the exact value up to rounding is not a disagreement
    d = agreement_check(
        id="a",
        claim="c",
        reference="r",
        mc_samples=np.full((8, 1), 1.0 + 1e-15),
        exact_value=[1.0],
        exact_wrong=[1.5],
        wrong_desc="w",
    )
    assert d.passed and not d.negative_control.passed


def test_steep_start_hits_the_share():
    p = HeterogeneousQuadratic(dim=4, num_workers=3, L=1.0, mu=0.1, sigma_L=0.0, sigma_G=0.5, seed=2)
    v = top_direction(p)
    H = p.dense_hessians().mean(axis=0) if p.dense_hessians().ndim == 3 else p.dense_hessians()
    w, V = np.linalg.eigh(H)
    assert abs(abs(v @ V[:, -1]) - 1) < 1e-6
    x0 = steep_start(p, rest=np.array([2.0]), x_step=0.1, T=50, share=0.8)
    transient = 4 * (p.value(x0) - p.constants.f_star) / (0.1 * 50)
    assert transient / (transient + 2.0) == pytest.approx(0.8, rel=1e-9)


@pytest.mark.parametrize("algo", [AFACD(4.0, 0.02), AFACS(4.0, 0.02), FedAvg(1.0, 0.05)])
def test_reference_loop_equals_engine_and_wrong_readings_differ(algo):
    p = HeterogeneousCurvatureQuadratic(dim=3, num_workers=5, L=1.0, mu=0.1, sigma_L=0.0, sigma_G=1.0, seed=1)
    s = Behaviour(
        BiasedArrivals(2, np.array([0.4, 0.3, 0.1, 0.1, 0.1])), UniformDelay(2), UniformSteps.paper(2)
    ).sample(25, 2, 5, 3)
    x0 = p.default_x0()
    tr = aft.simulate(p, algo, Replay(s), 25, 2, 0, x0=x0)
    ref = reference_grad_norm_sq(p, algo, s, x0)
    np.testing.assert_allclose(tr.grad_norm_sq, ref, rtol=1e-10)
    for kind in ("sum_K",) if isinstance(algo, FedAvg) else ("sum_K", "printed_step"):
        assert not np.allclose(reference_grad_norm_sq(p, algo, s, x0, kind=kind), ref, rtol=1e-6)
    with pytest.raises(ValueError, match="kind"):
        reference_iterates(p, algo, s, x0, kind="nope")


def test_reference_check_verdict():
    p = HeterogeneousQuadratic(dim=3, num_workers=4, L=1.0, mu=0.1, sigma_L=0.0, sigma_G=1.0, seed=1)
    s = Behaviour(
        BiasedArrivals(2, np.array([0.4, 0.3, 0.2, 0.1])), UniformDelay(1), UniformSteps.paper(2)
    ).sample(20, 2, 4, 1)
    v = reference_check(
        id="r", claim="c", reference="r", problem=p, algorithm=AFACD(3.0, 0.05), schedule=s, x0=p.default_x0()
    )
    assert v.passed and v.measured <= 1e-10 and not v.negative_control.passed
    noisy = HeterogeneousQuadratic(dim=3, num_workers=4, L=1.0, mu=0.1, sigma_L=0.5, sigma_G=1.0, seed=1)
    with pytest.raises(ValueError, match="sigma_L"):
        reference_check(
            id="r",
            claim="c",
            reference="r",
            problem=noisy,
            algorithm=AFACD(3.0, 0.05),
            schedule=s,
            x0=noisy.default_x0(),
        )


def test_agreement_check_without_exact_reference_is_vacuous_not_a_disagreement():
    """A refused exact engine (NaN reference) is reported as 'n/a', outside the check's scope — not as a
    failure that would count a mere engine switch (e.g. an equivalent subclass) as a detected bug."""
    v = agreement_check(
        id="a",
        claim="c",
        reference="r",
        mc_samples=np.ones((8, 2)),
        exact_value=[np.nan] * 2,
        exact_wrong=[np.nan] * 2,
        wrong_desc="w",
    )
    assert v.passed and v.ok and v.inside_conditions is False and str(v.measured).startswith("n/a")
