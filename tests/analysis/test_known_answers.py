"""Known answers for the statistics the paper checks read from ``afltheory.analysis`` (issue #27: no hand
statistics outside it): one-sided t-bounds, NaN-safe |z| aggregates, affine and semi-log fits. Deterministic
inputs only (no randomness, no confidence level to state)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from afltheory.analysis import (
    affine_fit,
    lower_confidence_bound,
    max_abs_z,
    min_abs_z,
    semilog_slope,
    upper_confidence_bound,
)


def test_lower_confidence_bound_known_answer_and_symmetry():
    s = np.array([1.0, 2.0, 3.0, 4.0])  # mean 2.5, sd √(5/3)
    h = stats.t.ppf(0.99, 3) * math.sqrt(5 / 3) / 2
    assert lower_confidence_bound(s, 0.99) == pytest.approx(2.5 - h, rel=1e-14)
    assert upper_confidence_bound(s, 0.99) + lower_confidence_bound(s, 0.99) == pytest.approx(5.0, rel=1e-14)
    assert lower_confidence_bound([3.0, 3.0, 3.0]) == 3.0  # zero spread: the mean, never NaN
    assert lower_confidence_bound([1.0, math.inf]) == math.inf  # a diverged replicate: the mean is infinite
    with pytest.raises(ValueError, match="at least 2"):
        lower_confidence_bound([1.0])
    with pytest.raises(ValueError, match="level"):
        lower_confidence_bound(s, 1.5)


def test_abs_z_aggregates_are_nan_safe():
    assert max_abs_z([0.5, -2.0, 1.0]) == 2.0 and min_abs_z([0.5, -2.0, 1.0]) == 0.5
    assert max_abs_z(np.array([1.0, -math.inf])) == math.inf
    # an undefined comparison never looks good: NaN is +inf for the claim's max, 0 for the control's min
    assert max_abs_z([0.1, math.nan]) == math.inf and min_abs_z([9.0, math.nan]) == 0.0
    with pytest.raises(ValueError, match="empty"):
        max_abs_z([])


def test_affine_fit_known_answer():
    x = [0.0, 1.0, 2.0, 3.0]
    f = affine_fit(x, [1.0, 3.0, 5.0, 7.0])  # y = 1 + 2x exactly
    assert f.slope == pytest.approx(2.0, abs=1e-12) and f.intercept == pytest.approx(1.0, abs=1e-12)
    assert f.max_rel_residual < 1e-12 and f.predict(10.0) == pytest.approx(21.0)
    g = affine_fit(x, [0.0, 1.0, 0.0, 1.0])  # LS line 0.2 + 0.2x: residuals ±0.2, ±0.6
    assert g.slope == pytest.approx(0.2) and g.intercept == pytest.approx(0.2)
    assert g.max_rel_residual == pytest.approx(0.6)  # relative to max |y| = 1
    assert affine_fit(x, [0.0] * 4).max_rel_residual == 0.0
    with pytest.raises(ValueError, match="two distinct"):
        affine_fit([1.0, 1.0], [1.0, 2.0])


def test_semilog_slope_recovers_a_geometric_rate():
    t = np.arange(5, 25)
    assert math.exp(semilog_slope(t, 3.0 * 0.8**t)) == pytest.approx(0.8, rel=1e-12)
    with pytest.raises(ValueError, match="> 0"):
        semilog_slope([0.0, 1.0], [1.0, 0.0])


def test_ztests_known_answers():
    from afltheory.analysis import bonferroni_z, column_z, gaussian_law_z, z_ratio

    assert bonferroni_z(1, 0.95) == pytest.approx(1.959963984540054)
    assert bonferroni_z(4, 0.999) == pytest.approx(stats.norm.ppf(1 - 0.001 / 8))
    assert z_ratio(1.0, 0.5) == 2.0 and z_ratio(0.0, 0.0) == 0.0 and z_ratio(1.0, 0.0) == math.inf
    s = np.array([[1.0, 5.0, 2.0], [3.0, 5.0, 2.0], [5.0, 5.0, math.inf]])  # column 3 diverged
    z, se = column_z(s, [2.0, 5.0, 2.0])
    assert se[0] == pytest.approx(2 / math.sqrt(3)) and z[0] == pytest.approx(1 / (2 / math.sqrt(3)))
    assert z[1] == 0.0 and z[2] == math.inf  # zero spread at the value: 0; a diverged column: inf
    assert column_z(s[:, :2], [2.0, 4.0])[0][1] == math.inf  # zero spread off the value
    zf, sef = column_z(s[:, :2], [3.0, 4.0], floor=[0.0, 0.5])
    assert zf[0] == 0.0 and sef[1] == 0.5 and zf[1] == pytest.approx(2.0)  # the rounding floor
    X = np.array([[1.0, -1.0], [-1.0, 1.0], [1.0, 1.0], [-1.0, -1.0]])  # whitened, mean 0, unit variance
    z = gaussian_law_z(X, np.zeros(2), np.ones(2))
    assert z.tolist() == pytest.approx([0.0, 0.0, 0.0, 0.0])  # 2 means, χ² (8 − 8)/4, 1 correlation
    assert gaussian_law_z(np.array([[math.inf, 0.0]]), np.zeros(2), np.ones(2)).tolist() == [math.inf]
    with pytest.raises(ValueError, match="n >= 2"):
        column_z([1.0], 0.0)
