"""The allowed range named in a refusal agrees with what is refused: infinity is never allowed, so an
unbounded end is written open ("inf)"), and a closed bound stays closed."""

import math

import pytest

from afltheory._validation import check_nonnegative, check_positive, check_real


@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan])
def test_non_finite_refusal_names_an_open_unbounded_end(value):
    with pytest.raises(ValueError) as e:
        check_positive("divergence_threshold", value)
    assert str(e.value).endswith("allowed range (0.0, inf)")
    assert "divergence_threshold" in str(e.value)


def test_closed_bounds_stay_closed_and_unbounded_ends_open():
    with pytest.raises(ValueError, match=r"allowed range \[0\.0, inf\)$"):
        check_nonnegative("x", -1.0)
    with pytest.raises(ValueError, match=r"allowed range \(-inf, 1\.0\]$"):
        check_real("x", 2.0, high=1.0)
    with pytest.raises(ValueError, match=r"allowed range \[0\.0, 1\.0\)$"):
        check_real("x", 1.0, low=0.0, high=1.0, high_open=True)
    assert check_real("x", 1.0, low=0.0, high=1.0) == 1.0  # the closed end itself is accepted
