"""Exact moments on diagonal structure (issue 41, afltheory/exact/diagonal.py): the per-coordinate recursion,
batched over the coordinates, gives the dense recursion's values to 1e-12 on several rules (AFA-CD with
client weights, AFA-CS warm and cold, FedAvg, FedBuff's staleness weights, AsySG) and behaviours (partial
participation, fixed and random delays, random K, per-worker delays); the dense path stays available
(``structure=False``); non-diagonal problems and compressors keep the dense path; the cost projection is the
batched one (pinned counts) and ``moments`` takes the cheaper path."""

from __future__ import annotations

import numpy as np
import pytest

from afltheory.algorithms import AFACD, AFACS, AsySG, FedAvg, FedBuff
from afltheory.anarchy import (
    Behaviour,
    ConstantSteps,
    FixedDelay,
    NoDelay,
    UniformArrivals,
    UniformDelay,
    UniformSteps,
)
from afltheory.compression import RandK
from afltheory.exact import ExactSystem, moments
from afltheory.exact.cost import BATCHED_SECONDS_PER, batched_round_work, project_batched_cost
from afltheory.exact.diagonal import DiagonalSystem, diagonal_system, is_diagonal, split
from afltheory.problems import HeterogeneousQuadratic
from afltheory.problems.curvature import HeterogeneousCurvatureQuadratic

M = 6
WEIGHTS = tuple(np.arange(1.0, M + 1) / np.arange(1.0, M + 1).sum())
RULES = {
    "afacd-weights": AFACD(0.4, 0.05, weights=WEIGHTS),
    "afacs-warm": AFACS(0.4, 0.05),
    "afacs-cold": AFACS(0.4, 0.05, memory_init="zeros"),
    "fedavg": FedAvg(0.5, 0.05),
    "fedbuff": FedBuff(0.5, 0.05),
    "asysg": AsySG(0.3),
}
BEHAVIOURS = {
    "partial-fixed": Behaviour(UniformArrivals(3), FixedDelay(2), ConstantSteps(2)),
    "partial-random": Behaviour(UniformArrivals(2), UniformDelay(2), UniformSteps(1, 3)),
    "full-nodelay": Behaviour(UniformArrivals(M), NoDelay(), UniformSteps(1, 2)),
}


def _run(system, x0, rounds):
    """Plain loop over the system's interface: (E‖∇f‖², E f, E x, E‖x̃‖²) at t = 0..rounds."""
    S = system.initial(x0)
    out = [(*system.observe(S), system.msd(S))]
    for t in range(rounds):
        S = system.step(S, t)
        out.append((*system.observe(S), system.msd(S)))
    g, f, x, e = zip(*out, strict=True)
    return np.array(g), np.array(f), np.array(x), np.array(e)


def _problem(d=4, seed=1):
    return HeterogeneousCurvatureQuadratic(dim=d, num_workers=M, sigma_L=0.5, seed=seed)


def _close(a, b):
    scale = np.maximum(1.0, np.abs(b))
    assert np.all(np.abs(a - b) <= 1e-12 * scale), np.max(np.abs(a - b) / scale)


@pytest.mark.parametrize("beh", list(BEHAVIOURS))
@pytest.mark.parametrize("rule", list(RULES))
def test_per_coordinate_equals_dense(rule, beh):
    p, alg, b = _problem(), RULES[rule], BEHAVIOURS[beh]
    diag = diagonal_system(p, alg, b, ExactSystem)  # no rounds: the structure path whatever its projection
    assert isinstance(diag, DiagonalSystem) and diag.d == p.dim
    x0 = p.default_x0()
    got, want = _run(diag, x0, 25), _run(ExactSystem(p, alg, b), x0, 25)
    assert np.all(np.isfinite(want[0])) and want[0][-1] < want[0][0]  # a converging, non-trivial run
    for a, w in zip(got, want, strict=True):
        _close(a, w)


def test_moments_takes_the_structure_path_where_it_is_cheaper_and_agrees():
    """d = 20, M = 20 AFA-CS: the dense state has 1 + 3·20 + 20·20 entries, the coordinates 1 + 3 + 20 each;
    the default path is the per-coordinate one and gives the dense path's values."""
    p = HeterogeneousCurvatureQuadratic(dim=20, num_workers=20, sigma_L=0.5, seed=3)
    alg, b = AFACS(0.4, 0.05), Behaviour(UniformArrivals(5), UniformDelay(2), UniformSteps(1, 3))
    fast = moments(p, alg, b, 20)
    dense = moments(p, alg, b, 20, structure=False)
    assert fast.config["structure"] == "diagonal" and dense.config["structure"] == "dense"
    for what in ("grad_norm_sq", "loss", "x_mean", "msd"):
        _close(getattr(fast, what), getattr(dense, what))


def test_small_dim_keeps_the_dense_path():
    """d = 2 AFA-CD: one batched round (its fixed interpreter cost) costs more than one tiny dense round."""
    m = moments(_problem(d=2), AFACD(0.4, 0.05), BEHAVIOURS["partial-fixed"], 5)
    assert m.config["structure"] == "dense"


def test_non_diagonal_and_compressed_keep_the_dense_path():
    b = BEHAVIOURS["partial-fixed"]
    dense = HeterogeneousQuadratic(dim=4, num_workers=M, seed=0, hessian="dense")
    assert diagonal_system(dense, AFACD(0.4, 0.05), b, ExactSystem) is None
    assert diagonal_system(_problem(), AFACD(0.4, 0.05, compressor=RandK(2)), b, ExactSystem) is None
    assert diagonal_system(_problem(), AFACD(0.4, 0.05), b, ExactSystem) is not None
    with pytest.raises(ValueError, match="structure"):
        moments(_problem(), AFACD(0.4, 0.05), b, 3, structure="yes")


def test_split_reads_each_coordinate():
    rng = np.random.default_rng(0)
    B, d = 2, 3
    H = np.zeros((B, M, d, d))
    N = np.zeros((B, M, d, d))
    k = np.arange(d)
    H[..., k, k] = rng.uniform(1, 2, (B, M, d))
    N[..., k, k] = rng.uniform(0, 1, (B, M, d))
    bb, x0 = rng.standard_normal((B, M, d)), rng.standard_normal((B, d))
    hbar = H.mean(axis=1)
    assert is_diagonal(H) and not is_diagonal(H + 1e-300 * rng.standard_normal(H.shape))
    H1, b1, N1, hb, x1 = split(H, bb, N, hbar, x0)
    assert H1.shape == (B * d, M, 1, 1) and x1.shape == (B * d, 1)
    for c in range(B):
        for j in range(d):
            r = c * d + j  # candidate-major
            assert np.array_equal(H1[r, :, 0, 0], H[c, :, j, j]) and np.array_equal(b1[r, :, 0], bb[c, :, j])
            assert np.array_equal(N1[r, :, 0, 0], N[c, :, j, j]) and hb[r, 0, 0] == hbar[c, j, j]
            assert x1[r, 0] == x0[c, j]


def test_batched_round_work_pinned():
    """Hand counts: AFA-CD-like, M = 2, history 2: n₁ = nJ₁ = 3, Ā S Āᵀ 4·27, D̄ S_JJ 2·2·9 + cross 2·2·3,
    symmetrisation 2·9; with one random worker of 2 K values: + 8·1·2 + 16·2. AFA-CS-like, M = 2, history 1:
    nJ₁ = 2, n₁ = 4, 4·64; 2·2·4 + slots 4·4·2; 2·16 + 8·4."""
    assert batched_round_work(2, 2, False) == {"blas_flops": 108.0, "small_flops": 48.0, "elements": 18.0}
    w = batched_round_work(2, 2, False, random_workers=1, k_combos=2)
    assert w == {"blas_flops": 108.0, "small_flops": 96.0, "elements": 18.0}
    assert batched_round_work(2, 1, True) == {"blas_flops": 256.0, "small_flops": 48.0, "elements": 64.0}
    ones = dict.fromkeys(BATCHED_SECONDS_PER, 1.0)
    c = project_batched_cost(3, 2, 2, False, 10, random_workers=1, k_combos=2, constants=ones)
    # per round: 1 + 3·(1 coordinate + 1 random worker + 108 + 96 + 18) = 673; no set-up counted
    assert c.seconds_per_round == 673.0 and c.seconds == 6730.0 and c.setup_seconds == 0.0
    assert c.state_size == 1 + 2 * 3 and c.blas_flops == 324.0 and c.einsum_flops == 288.0
    with pytest.raises(ValueError, match="random_workers"):
        project_batched_cost(3, 2, 2, False, 10, random_workers=3)


def test_projection_is_the_batched_coordinates():
    p, alg, b = _problem(d=8), AFACS(0.4, 0.05), BEHAVIOURS["partial-random"]
    diag = diagonal_system(p, alg, b, ExactSystem)
    a = diag.base.projection_args(30)
    c = diag.projected_cost(30)
    want = project_batched_cost(
        8,
        M,
        3,
        True,
        30,
        random_workers=a["random_workers"],
        k_combos=a["k_combos"],
        local_steps=a["local_steps"],
        build_terms=a["build_terms"],
    )
    assert c == want and a["random_workers"] == M and c.state_size == 1 + 3 * 8 + M * 8 and c.dim == 8
    dense = diag.dense_cost(30)
    assert dense.state_size == 1 + 3 * 8 + M * 8
    # moments' choice is the cheaper projection, either way
    chosen = diagonal_system(p, alg, b, ExactSystem, 30)
    assert (chosen is None) == (dense.seconds <= c.seconds)
    for d, path in ((2, "dense"), (40, "diagonal")):  # tiny dense rounds win at d = 2, the batch at d = 40
        m = moments(_problem(d=d), AFACD(0.4, 0.05), BEHAVIOURS["partial-fixed"], 5)
        assert m.config["structure"] == path


def test_divergence_is_reported_at_the_same_round():
    """An unstable step size: the per-coordinate path diverges at the dense path's round, +inf from there."""
    p = HeterogeneousCurvatureQuadratic(dim=40, num_workers=20, sigma_L=0.5, seed=2)
    alg, b = AFACD(100.0, 0.05), Behaviour(UniformArrivals(5), FixedDelay(2), ConstantSteps(3))
    with pytest.warns(Warning, match="diverged"):
        fast = moments(p, alg, b, 40)
    with pytest.warns(Warning, match="diverged"):
        dense = moments(p, alg, b, 40, structure=False)
    assert fast.config["structure"] == "diagonal"
    assert fast.divergence_round == dense.divergence_round is not None
    t = fast.divergence_round
    assert np.all(np.isinf(fast.grad_norm_sq[t:])) and np.all(np.isfinite(fast.grad_norm_sq[:t]))
    _close(fast.grad_norm_sq[:t], dense.grad_norm_sq[:t])


@pytest.mark.parametrize("dim", [20, 80])
def test_issue41_family_default_path_equals_dense(dim):
    """Issue 41's family (M = 20, m = 5, FixedDelay(2), K = 3, T = 60, AFA-CD): the default path is the
    batched per-coordinate one at d = 20 and 80, and every output equals the dense recursion's to 1e-12."""
    p = HeterogeneousCurvatureQuadratic(dim=dim, num_workers=20, sigma_L=0.5, seed=0)
    alg, b = AFACD(0.5, 0.05), Behaviour(UniformArrivals(5), FixedDelay(2), ConstantSteps(3))
    fast, dense = moments(p, alg, b, 60), moments(p, alg, b, 60, structure=False)
    assert fast.config["structure"] == "diagonal" and dense.config["structure"] == "dense"
    assert dense.grad_norm_sq[-1] < 0.5 * dense.grad_norm_sq[0]  # a run that moves
    for what in ("grad_norm_sq", "loss", "x_mean", "msd"):
        _close(getattr(fast, what), getattr(dense, what))
