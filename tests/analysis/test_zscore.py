"""afltheory.analysis.z_score / z_interval: hand-checked values and edge cases (deterministic)."""

import math

import numpy as np
import pytest

from afltheory.analysis import z_interval, z_score


def test_z_score_by_hand():
    s = np.array([1.0, 2.0, 3.0, 4.0])
    se = np.std(s, ddof=1) / 2.0
    z, got_se = z_score(s, 2.0)
    assert got_se == pytest.approx(se) and z == pytest.approx(0.5 / se)
    lo, hi = z_interval(s, 2.0)
    assert (lo, hi) == pytest.approx((2.5 - 2 * se, 2.5 + 2 * se))


def test_z_score_edges():
    assert z_score(np.array([1.0, 1.0]), 1.0) == (0.0, 0.0)
    assert z_score(np.array([1.0, 1.0]), 0.5) == (math.inf, 0.0)
    assert z_score(np.array([1.0, 1.0]), 1.5) == (-math.inf, 0.0)
    assert z_score(np.array([1.0, np.inf]), 1.0) == (math.inf, math.inf)
    assert z_interval(np.array([1.0, np.inf]), 3.0) == (math.inf, math.inf)
    with pytest.raises(ValueError, match="at least 2"):
        z_score(np.array([1.0]), 1.0)
    with pytest.raises(ValueError, match="NaN"):
        z_score(np.array([1.0, np.nan]), 1.0)
    with pytest.raises(ValueError, match="value"):
        z_score(np.array([1.0, 2.0]), float("nan"))
    with pytest.raises(ValueError, match="z="):
        z_interval(np.array([1.0, 2.0]), -1.0)
