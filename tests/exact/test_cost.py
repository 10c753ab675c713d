"""The exact engine's cost projection (afltheory.exact.cost, issue 31): the formula on pinned sizes, the
warning and the refusals at pinned sizes, before any round runs. No timing is asserted: the per-operation
constants are pinned module values (measured by benchmarks/exact_scaling.py --calibrate, compared with
measured runs in docs/performance.md), and the tests that need a long projection scale them."""

from __future__ import annotations

import warnings

import pytest

from afltheory import exact
from afltheory.algorithms import AFACD, AFACS
from afltheory.anarchy import Behaviour, ConstantSteps, NoDelay, UniformArrivals, UniformDelay, UniformSteps
from afltheory.exact import ExactCostWarning, ExactSystem, ExactUnavailable, moments, project_cost
from afltheory.exact import cost as cost_mod
from afltheory.exact.diagonal import DiagonalSystem
from afltheory.problems import HeterogeneousQuadratic

PROB = HeterogeneousQuadratic(dim=3, num_workers=5, sigma_L=0.3, seed=0)
BEH = Behaviour(UniformArrivals(2), UniformDelay(1), UniformSteps(1, 3))


def test_round_work_on_pinned_sizes():
    # AFA-CD, d = 10, M = 10, 5 stored models, every delay possible, every worker random with 3 K values:
    # nJ = n = 51, nnz(Ā) = 10·(1 + 5·10) + 5·10 = 560
    w = cost_mod.round_work(10, 10, 5, False, random_workers=10, k_combos=30)
    assert w == {
        "blas_flops": 2 * 10 * 10 * 51**2 + 2 * 10 * 100 * 51 + 2 * 30 * 10 * 11 * 21,  # 760800
        "einsum_flops": 2 * 10 * 5 * 11**2 + 2 * 100 * 10 * 51 + 2 * 10 * 100 * 51,  # 216100
        "sparse_flops": 4 * 560 * 51,
        "elements": 6 * 51**2,
    }
    # AFA-CS, d = 3, M = 5, 2 stored models, deterministic workers, a compressor: nJ = 7, Md = 15, n = 22,
    # nnz(Ā) = 3·(1 + 2·3)·(1 + 5) + 2·3 + 2·5·3 = 162
    w = cost_mod.round_work(3, 5, 2, True, compressed=True)
    assert w == {
        "blas_flops": 2 * 5 * 3 * 7**2 + 4 * 15**2 * 7,
        "einsum_flops": 0.0,
        "sparse_flops": 4 * 162 * 22,
        "elements": 6 * 22**2 + 4 * 5 * 9 + 8 * 15**2,
    }
    # one delay of positive probability instead of 5: one dense block in Ā's x-row
    assert cost_mod.round_work(10, 10, 5, False, delay_blocks=1)["sparse_flops"] == 4 * (10 * 11 + 50) * 51


def test_project_cost_sums_the_counts_times_the_constants():
    c = project_cost(10, 10, 5, False, 200, random_workers=10, k_combos=30, local_steps=60, build_terms=750)
    k = cost_mod.SECONDS_PER
    per_round = (
        760800 * k["blas_flop"]
        + 216100 * k["einsum_flop"]
        + 4 * 560 * 51 * k["sparse_flop"]
        + 6 * 51**2 * k["element"]
        + k["round"]
    )
    assert c.seconds_per_round == pytest.approx(per_round, rel=1e-12)
    assert c.setup_seconds == pytest.approx(60 * k["local_step"] + 750 * k["build_term"], rel=1e-12)
    assert c.seconds == pytest.approx(c.setup_seconds + 200 * per_round, rel=1e-12)
    assert c.state_size == 51 and c.rounds == 200
    assert c.bytes == exact.estimate_memory(10, 10, 4, False) + 8 * 201 * 13
    # the projection grows linearly in T and ~ d³·(max_delay+1)² per round: a minutes-long run at d = 320
    big = project_cost(320, 10, 5, False, 1000, random_workers=10, k_combos=30)
    assert big.seconds > 60 * 10  # pinned constants: ~1.7e3 s, far past the default warn_seconds = 60
    assert project_cost(320, 10, 5, False, 2000).seconds == pytest.approx(
        2 * project_cost(320, 10, 5, False, 1000).seconds, rel=1e-12
    )
    # the control: the sizes of the exact-agreement tests project to well under a second
    assert project_cost(3, 5, 2, True, 20, random_workers=5, k_combos=15).seconds < 0.1


def test_system_projection_reads_the_law():
    sys_ = ExactSystem(PROB, AFACD(1.0, 0.1), BEH)
    got = sys_.projected_cost(7)
    # 5 random workers (3 K values x 2 delays each), 2 delay blocks, local maps Σ (K_max + |K|) = 5·6,
    # round operators for t = 0 and t ≥ 1 (2 builds) of 5·3·2 terms each; nnz(Ā) read off the operator
    nnz = sys_.op(1).A.nnz
    # diagonal Hessians: the x-row holds the const column and one diagonal 3x3 block per delay, plus the
    # history shift and the constant's 1 (the dense-block bound of round_work is 3·(1 + 2·3) + 2·3 = 27)
    assert nnz == 1 + 3 * (1 + 2) + 3 < 27
    want = project_cost(
        3,
        5,
        2,
        False,
        7,
        delay_blocks=2,
        random_workers=5,
        k_combos=15,
        local_steps=30,
        build_terms=60,
        nnz=nnz,
    )
    assert got == want
    # deterministic (K, τ): no within-worker term; AFA-CS: memory slots in the state
    det = ExactSystem(PROB, AFACS(1.0, 0.1), Behaviour(UniformArrivals(2), NoDelay(), ConstantSteps(2)))
    assert det.projected_cost(7) == project_cost(
        3, 5, 1, True, 7, local_steps=15, build_terms=5, nnz=det.op(0).A.nnz
    )
    # the operator's entries replace the dense-block bound in the sparse count only
    w = cost_mod.round_work(3, 5, 2, False, nnz=10)
    assert w["sparse_flops"] == 4 * 10 * 7
    assert {k: v for k, v in w.items() if k != "sparse_flops"} == {
        k: v for k, v in cost_mod.round_work(3, 5, 2, False).items() if k != "sparse_flops"
    }


@pytest.fixture
def slow_constants(monkeypatch):
    """Every round projected at 1 s (the formula unchanged), on the dense and the batched per-coordinate path
    (exact/diagonal.py, which ``moments`` takes when projected cheaper): a tiny system looks like a
    minutes-long run. Both paths' ``step`` raise, so a warning or refusal that comes after a round would fail
    the test."""
    monkeypatch.setitem(cost_mod.SECONDS_PER, "round", 1.0)
    monkeypatch.setitem(cost_mod.BATCHED_SECONDS_PER, "round", 1.0)

    def no_round(self, S, t, noise=True):
        raise AssertionError("a round ran before the projection's warning/refusal")

    monkeypatch.setattr(ExactSystem, "step", no_round)
    monkeypatch.setattr(DiagonalSystem, "step", no_round)


def test_warning_and_refusal_fire_before_the_first_round(slow_constants):
    with pytest.raises(AssertionError, match="a round ran"):  # the control: 50 s projected is below 60 s
        with warnings.catch_warnings():
            warnings.simplefilter("error", ExactCostWarning)
            moments(PROB, AFACD(1.0, 0.1), BEH, 50)
    with pytest.warns(ExactCostWarning, match=r"100 rounds .*state size n = 7 .*~100 s in all") as rec:
        with pytest.raises(AssertionError, match="a round ran"):
            moments(PROB, AFACD(1.0, 0.1), BEH, 100)
    assert "warn_seconds=60" in str(rec[0].message) and "afltheory.simulate" in str(rec[0].message)
    with pytest.raises(ExactUnavailable, match=r"refused: above max_seconds=50 \(lower rounds"):
        moments(PROB, AFACD(1.0, 0.1), BEH, 100, max_seconds=50)
    assert issubclass(ExactUnavailable, ValueError)


def test_memory_above_the_available_ram_is_refused_unless_allowed(monkeypatch):
    need = exact.estimate_memory(3, 5, 1, False)
    monkeypatch.setattr(cost_mod, "available_memory", lambda: need - 1)
    for call in (
        lambda **k: moments(PROB, AFACD(1.0, 0.1), BEH, 5, **k),
        lambda **k: exact.steady_state(PROB, AFACD(1.0, 0.1), BEH, **k),
        lambda **k: exact.rounds_to_epsilon(PROB, AFACD(1.0, 0.1), BEH, 1e-3, max_rounds=5, **k),
    ):
        with pytest.raises(
            ExactUnavailable, match=r"state of size n=7 .*RAM available now — pass allow_large"
        ):
            call()
    monkeypatch.setattr(cost_mod, "available_memory", lambda: need + 100)  # the state fits ...
    with pytest.raises(ExactUnavailable, match=r"2000 rounds .*RAM available now \(pass allow_large=True"):
        moments(PROB, AFACD(1.0, 0.1), BEH, 2000)  # ... its 2001 x 6 output floats do not
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ExactCostWarning)
        m = moments(PROB, AFACD(1.0, 0.1), BEH, 5, allow_large=True)  # the override
    assert m.rounds == 5 and m.grad_norm_sq[-1] < m.grad_norm_sq[0]
    with pytest.raises(ExactUnavailable, match=r"refused: above max_memory=0.01 MiB"):
        moments(PROB, AFACD(1.0, 0.1), BEH, 2000, max_memory=0.01 * 1024**2, allow_large=True)
    monkeypatch.setattr(cost_mod, "available_memory", lambda: None)  # unknown: no RAM refusal
    assert moments(PROB, AFACD(1.0, 0.1), BEH, 5).rounds == 5


def test_bad_allow_large_and_counts_name_the_parameter():
    with pytest.raises(ValueError, match="allow_large='yes' must be True or False"):
        ExactSystem(PROB, AFACD(1.0, 0.1), BEH, allow_large="yes")
    with pytest.raises(ValueError, match="rounds"):
        ExactSystem(PROB, AFACD(1.0, 0.1), BEH).projected_cost(0)
    with pytest.raises(ValueError, match="delay_blocks"):
        cost_mod.round_work(3, 5, 2, False, delay_blocks=3)
    with pytest.raises(ValueError, match="random_workers"):
        cost_mod.round_work(3, 5, 2, False, random_workers=6)


def test_available_memory_is_positive_or_unknown():
    avail = cost_mod.available_memory()
    assert avail is None or avail > 0
