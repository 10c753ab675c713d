import textwrap

import pytest

TINY = textwrap.dedent("""\
    name = "tiny"
    rounds = 20
    replicates = 4
    seeds = [0, 1]
    checkpoints = 10

    [problem]
    family = "HeterogeneousQuadratic"
    dim = 3
    num_workers = 6
    L = 2.0
    mu = 0.1
    sigma_L = 0.5
    sigma_G = 1.0

    [behaviour.arrivals]
    kind = "UniformArrivals"
    m = 3

    [behaviour.delays]
    kind = "UniformDelay"
    max_delay = 2

    [behaviour.local_steps]
    kind = "ConstantSteps"
    K = 2

    [algorithm]
    name = "AFACD"
    eta = 1.0
    eta_L = 0.05

    [grid]
    "algorithm.name" = ["AFACD", "AFACS"]
    "algorithm.eta_L" = [0.02, 0.1, 0.5]
    """)


@pytest.fixture
def tiny_text():
    return TINY


@pytest.fixture
def tiny_path(tmp_path):
    p = tmp_path / "tiny.toml"
    p.write_text(TINY)
    return p
