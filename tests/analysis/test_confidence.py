"""Statistics that cannot mislead (issue 21): no confidence bound from one sample, calibrated 99 % UCBs, slope
fits that report their finite-range bias, matplotlib's yerr convention."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from afltheory.analysis import bootstrap_slope, compare_bound, fit_slope, mean_ci, upper_confidence_bound
from afltheory.plots import rate_plot


def test_one_sample_has_no_confidence_bound():
    with pytest.raises(ValueError, match="at least 2 replicates"):
        upper_confidence_bound([1.0])
    with pytest.raises(ValueError, match="at least 2 replicates"):
        compare_bound(np.array([1.0]), 5.0)
    m, lo, hi = mean_ci([3.0])
    assert m == 3.0 and lo == -np.inf and hi == np.inf
    # exact expectations need no replicates
    assert compare_bound(1.0, 5.0, exact=True).holds


def test_nan_is_refused_and_divergence_cannot_pass():
    with pytest.raises(ValueError, match="NaN"):
        compare_bound(np.array([1.0, np.nan]), 5.0)
    with pytest.raises(ValueError, match="bound"):
        compare_bound(np.array([1.0, 2.0]), np.nan)
    c = compare_bound(np.array([1.0, np.inf]), 5.0)
    assert not c.holds and c.ucb == np.inf and c.slack == 0.0


def test_99_percent_ucb_passes_a_false_bound_about_1_percent_of_the_time():
    """Gaussian samples (n = 10) whose true mean equals the bound: the claim "mean < bound" is false at the
    margin, and the one-sided 99 % t-UCB must pass it with probability exactly 1 %. 20 000 repetitions (seed
    fixed): the pass count is Binomial(20 000, 0.01) = 200 ± 14; we require ≤ 260 (4.3 sd, exceedance
    probability < 1e-5 for a calibrated procedure) and ≥ 140 (the procedure is not conservative either)."""
    rng = np.random.default_rng(2026)
    n, reps, mu = 10, 20_000, 1.0
    X = rng.normal(mu, 0.5, size=(reps, n))
    ucb = X.mean(1) + stats.t.ppf(0.99, n - 1) * X.std(1, ddof=1) / np.sqrt(n)
    passes = int(np.sum(ucb <= mu))
    assert 140 <= passes <= 260, passes
    # the library function agrees with the vectorized formula on the first 50 repetitions
    for i in range(50):
        assert np.isclose(upper_confidence_bound(X[i]), ucb[i])
        assert compare_bound(X[i], mu).holds == bool(ucb[i] <= mu)
    # a bound 20 % below the true mean passes even less often (8 of these 20 000 repetitions; with n = 1
    # reported as a "UCB" it passed in 3 of 20 seeds)
    assert np.sum(ucb <= 0.8 * mu) < 0.2 * passes


def test_slope_fit_reports_finite_range_bias():
    x = np.array([1.0, 2, 4, 8, 16, 32])
    pure = fit_slope(x, 3 * x**-0.5)
    assert np.allclose(pure.end_slopes, -0.5) and abs(pure.curvature) < 1e-12
    # a power law plus a floor: the fitted slope is biased towards 0 and the end slopes disagree
    y = x**-0.5 + 0.05
    f = fit_slope(x, y)
    first = np.log(y[1] / y[0]) / np.log(2)
    last = np.log(y[-1] / y[-2]) / np.log(2)
    assert np.isclose(f.end_slopes[0], first) and np.isclose(f.end_slopes[1], last)
    assert f.curvature > 0.05 and f.slope > -0.5
    # bootstrap: the CI is about Monte Carlo noise; exact= adds the exact finite-range slope
    rng = np.random.default_rng(0)
    samples = [yi * rng.lognormal(0, 0.05, size=40) for yi in y]
    b = bootstrap_slope(x, samples, exact=y, n_boot=200)
    assert np.isclose(b.exact_slope, f.slope)
    assert "Monte Carlo noise only" in b.summary() and "exact finite-range slope" in b.summary()


def test_rate_plot_yerr_uses_matplotlibs_convention(tmp_path):
    x = np.array([1.0, 2, 4])
    y = np.array([1.0, 0.7, 0.5])
    rate_plot(tmp_path / "a.png", x, y, yerr=0.1)
    rate_plot(tmp_path / "b.png", x, y, yerr=[[0.1, 0.1, 0.1], [0.2, 0.2, 0.2]])
    with pytest.raises(ValueError, match="offsets"):
        rate_plot(tmp_path / "c.png", x, y, yerr=[[0.9, 0.6, 0.4], [1.1, 0.8, -0.6]])
    with pytest.raises(ValueError, match="shape"):
        rate_plot(tmp_path / "d.png", x, y, yerr=np.ones((3, 3)))
