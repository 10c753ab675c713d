import numpy as np
import pytest

from afltheory.anarchy.schedule import Schedule
from afltheory.problems.base import Constants


@pytest.fixture
def tiny():
    """R=1, T=2, m=2, M=3.
    round 0: workers [0, 1], delays [0, 0], K [1, 2]
    round 1: workers [1, 2], delays [1, 0], K [3, 1]      -> realized tau = 1
    """
    w = np.array([[[0, 1], [1, 2]]])
    d = np.array([[[0, 0], [1, 0]]])
    k = np.array([[[1, 2], [3, 1]]])
    return Schedule(w, d, k, num_workers=3)


@pytest.fixture
def consts():
    return Constants(L=2.0, mu=0.0, sigma_L=1.0, sigma_G=0.5, f_star=0.0, x_star=None)
