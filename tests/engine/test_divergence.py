"""Divergence is reported the same way everywhere (issue 19): +inf from the divergence round, a flag (round
per replicate) and a DivergenceWarning — never NaN — in simulate (gradient, loss, iterates, tracking error,
x_final), exact.moments, compare_bound and the sweep summaries. Deterministic (fixed seeds)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import afltheory as aft
from afltheory import algorithms as al
from afltheory import anarchy as an
from afltheory import exact
from afltheory.analysis import compare_bound
from afltheory.engine import DivergenceWarning
from afltheory.problems import DriftingQuadratic, HeterogeneousQuadratic
from afltheory.sweep.tasks import decode_arrays, encode_arrays, summarize

from ..real.test_logistic import _problem as logistic_problem

BEH = an.Behaviour(an.UniformArrivals(2), an.UniformDelay(1), an.ConstantSteps(2))
QUAD = HeterogeneousQuadratic(dim=3, num_workers=4, sigma_L=0.1)


def _no_nan(tr):
    for name in ("grad_norm_sq", "loss", "x", "x_final", "tracking_error"):
        a = getattr(tr, name)
        assert a is None or not np.isnan(a).any(), name


def _simulate(problem=QUAD, algo=None, rounds=20, replicates=3, **kw):
    with pytest.warns(DivergenceWarning, match="diverged"):
        tr = aft.simulate(
            problem,
            algo or al.AFACD(1, 0.05),
            BEH,
            rounds=rounds,
            replicates=replicates,
            seed=0,
            record_x=True,
            **kw,
        )
    _no_nan(tr)
    return tr


@pytest.mark.parametrize("x0", [1e308, 1e200])
def test_a_start_point_that_overflows_has_diverged_at_round_zero(x0):
    tr = _simulate(x0=np.full(3, x0))
    assert np.all(tr.divergence.round == 0)
    assert np.all(tr.grad_norm_sq == np.inf) and np.all(tr.x_final == np.inf)


def test_a_huge_threshold_still_reports_overflow():
    """divergence_threshold=1e308: the threshold never triggers, but the overflow to inf must."""
    tr = _simulate(algo=al.AFACD(1, 50.0), rounds=300, replicates=2, divergence_threshold=1e308)
    k = tr.divergence.round
    assert np.all(k > 0)
    for r in range(2):
        assert np.all(np.isfinite(tr.grad_norm_sq[r, : k[r]])) and np.all(
            tr.grad_norm_sq[r, k[r] :] == np.inf
        )
        assert np.all(tr.x[r, k[r] :] == np.inf)


def test_divergence_in_the_loss_alone_is_detected():
    """Logistic regression has bounded gradients: at eta_L = 1e150 only f(x_t) explodes (to ~1e150)."""
    tr = _simulate(logistic_problem(M=4), al.AFACD(1, 1e150), rounds=5)
    assert np.all(tr.divergence.round == 1) and np.all(tr.loss[:, 1:] == np.inf)


def test_only_the_diverged_replicates_are_inf_and_a_converging_run_reports_nothing():
    x0 = np.array([QUAD.default_x0(), np.full(3, 1e200)])
    tr = _simulate(x0=x0, replicates=2)
    assert tr.divergence.round.tolist() == [-1, 0]
    assert np.all(np.isfinite(tr.x_final[0])) and np.all(tr.x_final[1] == np.inf)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DivergenceWarning)  # negative control: no false alarm
        ok = aft.simulate(QUAD, al.AFACD(1, 0.05), BEH, rounds=50, replicates=3, seed=0)
    assert not ok.divergence.any


def test_tracking_error_of_a_diverged_drifting_run_is_inf():
    p = DriftingQuadratic.from_problem(QUAD, 0.1)
    tr = _simulate(p, al.AFACD(1, 50.0), rounds=300, replicates=2, divergence_threshold=1e308)
    r, k = 0, tr.divergence.round[0]
    assert (
        k > 0 and np.all(tr.tracking_error[r, k:] == np.inf) and np.all(np.isfinite(tr.tracking_error[r, :k]))
    )


def test_exact_moments_flag_divergence_with_inf_and_compare_bound_has_no_nan():
    with pytest.warns(DivergenceWarning, match="diverged at round"):
        m = exact.moments(QUAD, al.AFACD(1, 50.0), BEH, rounds=400)
    assert m.diverged and m.divergence_round > 0
    k = m.divergence_round
    for a in (m.grad_norm_sq, m.loss, m.x_mean):
        assert not np.isnan(a).any() and np.all(a[k:] == np.inf) and np.all(np.isfinite(a[:k]))
    c = compare_bound(m.time_average(), 10.0, exact=True)
    assert c.measured == np.inf and c.slack == 0.0 and not c.holds
    with pytest.warns(DivergenceWarning):
        assert (
            exact.moments(QUAD, al.AFACD(1, 0.05), BEH, rounds=5, x0=np.full(3, 1e308)).divergence_round == 0
        )
    assert not exact.moments(QUAD, al.AFACD(1, 0.05), BEH, rounds=40).diverged  # negative control


def test_sweep_summaries_of_a_diverged_replicate_are_inf_not_nan():
    tr = _simulate(x0=np.array([QUAD.default_x0(), np.full(3, 1e200), QUAD.default_x0()]))
    metrics, arrays = summarize(tr.grad_norm_sq, tr.loss, rounds=20, checkpoints=5, diverged=tr.diverged)
    assert metrics["diverged_count"] == 1
    for name, a in arrays.items():
        assert not np.isnan(a).any(), name
    assert np.all(arrays["grad_norm_sq_mean"] == np.inf) and np.all(arrays["grad_norm_sq_sem"] == np.inf)
    back = decode_arrays(*encode_arrays(arrays))  # as stored
    assert all(not np.isnan(a).any() for a in back.values())
