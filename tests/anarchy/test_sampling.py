"""Fast schedule sampling: exact distributions (Floyd's subsets, Lemire's bounded integers), the multi-block
fast path equal to the per-block reference, replicate-count invariance, and full validity of sampled
schedules.

Statistical tests use exact binomial / chi-square tails with a Bonferroni correction over every cell they
check; each states its false-failure probability (all ≤ 1e-4), and all seeds are fixed, so none can flake."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from afltheory import _rng
from afltheory import anarchy as an
from afltheory.anarchy.arrivals import _floyd, _uniform_below

ALPHA = 1e-4  # family-wise false-failure probability of each statistical test


def _binomial_pvalues(counts, n, p):
    """Two-sided exact binomial tail probabilities of ``counts`` ~ Binomial(n, p) (elementwise)."""
    counts = np.asarray(counts)
    lo = stats.binom.cdf(counts, n, p)
    hi = stats.binom.sf(counts - 1, n, p)
    return np.minimum(1.0, 2 * np.minimum(lo, hi))


def _assert_inclusion_matches(workers, arrivals, M):
    """First- and pairwise-inclusion counts of the rows of ``workers`` vs ``arrivals.inclusion(M)``: every one
    of the M + M(M−1)/2 counts must have exact two-sided binomial p ≥ ALPHA / cells (Bonferroni: a correct
    sampler fails with probability ≤ ALPHA)."""
    rows = workers.reshape(-1, workers.shape[-1])
    n = len(rows)
    pi, pij = arrivals.inclusion(M)
    ind = np.zeros((n, M))
    np.put_along_axis(ind, rows, 1.0, axis=1)
    assert np.all(ind.sum(axis=1) == rows.shape[1])  # m distinct workers per round
    iu = np.triu_indices(M, 1)
    counts = np.concatenate([ind.sum(axis=0), (ind.T @ ind)[iu]])
    probs = np.concatenate([pi, pij[iu]])
    pvals = _binomial_pvalues(counts, n, probs)
    assert pvals.min() >= ALPHA / len(counts), (pvals.min(), np.argmin(pvals))


def test_uniform_arrivals_inclusion_at_the_benchmark_size():
    """M = 100, m = 10 through ``Behaviour.sample`` (multi-block fast path, partial last block): 400
    replicates × 50 rounds = 20 000 i.i.d. rounds; 100 first- and 4 950 pairwise-inclusion counts (false
    failure ≤ 1e-4)."""
    arr = an.UniformArrivals(10)
    s = an.Behaviour(arr).sample(50, 400, 100, seed=11)
    _assert_inclusion_matches(s.workers, arr, 100)


@pytest.mark.parametrize("M, m", [(7, 7), (12, 11), (40, 33), (40, 40)])
def test_uniform_arrivals_inclusion_dense_and_key_paths(M, m):
    """m = M, m close to M (Floyd) and m > 32 (random keys): 20 000 rounds each (false failure ≤ 1e-4)."""
    arr = an.UniformArrivals(m)
    W = arr.sample(np.random.default_rng(M * 100 + m), 20_000, M)
    assert W.dtype == np.int64 and W.shape == (20_000, m)
    _assert_inclusion_matches(W, arr, M)


@pytest.mark.parametrize("M, m", [(6, 3), (7, 2), (5, 4)])
def test_floyd_subsets_are_exactly_uniform(M, m):
    """Every one of the C(M, m) subsets equally likely: chi-square over 60 000 draws, p ≥ 1e-4 / 3 (false
    failure ≤ 1e-4 over the three cases) — a stronger check than inclusion frequencies."""
    n = 60_000
    W = an.UniformArrivals(m).sample(np.random.default_rng(M * 10 + m), n, M)
    codes = (1 << W).sum(axis=1)
    assert np.all(np.bitwise_count(codes) == m)  # distinct workers
    _, counts = np.unique(codes, return_counts=True)
    assert len(counts) == math.comb(M, m)  # every subset seen
    assert stats.chisquare(counts).pvalue >= ALPHA / 3


def test_floyd_rows_are_in_insertion_order():
    """Documented order: column j holds Floyd's j-th insertion, so its entries are ≤ M − m + j."""
    W = _floyd([np.random.default_rng(0)], 5_000, 20, 6)[0]
    assert np.all(W <= (20 - 6 + np.arange(6)))
    assert np.all(W[:, :-1] != 19)  # worker M − 1 can only be inserted last


def test_uniform_below_corrects_lemire_bias():
    """h = 40 000: 2¹⁶ mod h = 25 536 chunks would map to values hit twice, so without the rejection step the
    values 0..25 535·(h/2¹⁶)… would be over-represented (share 0.78 instead of 0.64) and ~39 % of the draws
    are rejected and redrawn. The share of draws landing on those 'doubly hit' values must be |S|/h (exact
    binomial, false failure ≤ 1e-4), and all values must be in range."""
    h = 40_000
    n = 200_000
    x = _uniform_below([np.random.default_rng(5)], h, h, (1, n))[0, 0].astype(np.int64)
    assert x.min() >= 0 and x.max() < h
    v = np.arange(1 << 16) * h >> 16
    doubly = np.bincount(v, minlength=h) == 2  # values with two 16-bit preimages
    share_count = doubly[x].sum()
    assert _binomial_pvalues(share_count, n, doubly.mean()) >= ALPHA


def test_uniform_below_bounds_by_row_and_generator_independence():
    """Bounds min(first + i, cap) along axis −2; several generators at once give each generator's own
    draws."""
    rngs = [_rng.stream(3, _rng.SCHEDULE, b) for b in range(4)]
    many = _uniform_below(rngs, 1, 5, (7, 20, 3))  # rows: bounds 1, 2, 3, 4, 5, 5, 5 (delays, D = 4)
    assert many.shape == (4, 7, 20, 3)
    caps = np.minimum(np.arange(1, 21), 5)[:, None]
    assert np.all(many < caps) and np.all(many[:, :, 0] == 0)
    one = [_uniform_below([_rng.stream(3, _rng.SCHEDULE, b)], 1, 5, (7, 20, 3))[0] for b in range(4)]
    np.testing.assert_array_equal(many, np.stack(one))
    # many rejections (h = 40 000), several generators: still each generator's own stream
    rngs = [np.random.default_rng(b) for b in range(3)]
    many = _uniform_below(rngs, 40_000, 40_000, (2, 500))
    one = [_uniform_below([np.random.default_rng(b)], 40_000, 40_000, (2, 500))[0] for b in range(3)]
    np.testing.assert_array_equal(many, np.stack(one))
    # bounds above 2^16 fall back to rng.integers
    big = _uniform_below([np.random.default_rng(0)], 70_000, 70_000, (1, 1000))
    assert big.max() < 70_000 and big.max() > 1 << 16


def test_uniform_delay_frequencies_match_pmf():
    """τ_t ~ U{0..min(t, 4)}: per round t < 7 a chi-square over 64 000 arrivals against ``pmf(t)``; p ≥ 1e-4 /
    6 for the 6 random rounds (false failure ≤ 1e-4); round 0 is always 0."""
    d = an.UniformDelay(4)
    s = an.Behaviour(an.UniformArrivals(10), d).sample(7, 6400, 100, seed=2)
    for t in range(7):
        counts = np.bincount(s.delays[:, t].ravel(), minlength=5)
        pmf = d.pmf(t)
        assert counts[len(pmf) :].sum() == 0
        if t:
            assert stats.chisquare(counts[: len(pmf)], pmf * counts.sum()).pvalue >= ALPHA / 6, (t, counts)


def test_uniform_steps_accept_any_worker_shape():
    steps = an.UniformSteps(2, 5)
    for shape in [(), (7,), (3, 4), (2, 3, 4)]:
        K = steps.sample(np.random.default_rng(0), np.zeros(shape, dtype=np.int64))
        assert K.shape == shape and K.dtype == np.int64 and np.all((K >= 2) & (K <= 5))


def test_uniform_steps_frequencies_match_pmf():
    """K ~ U{1..10} (the paper's dynamic steps, c = 5): chi-square over 64 000 arrivals and over the 6 400 ×
    100 warm-start steps, p ≥ 1e-4 / 2 each (false failure ≤ 1e-4)."""
    steps = an.UniformSteps.paper(5)
    s = an.Behaviour(an.UniformArrivals(10), an.NoDelay(), steps).sample(1, 6400, 100, seed=4)
    for K in (s.local_steps, s.init_local_steps):
        counts = np.bincount(K.ravel(), minlength=11)
        assert counts[0] == 0
        assert stats.chisquare(counts[1:]).pvalue >= ALPHA / 2


# ------------------------------------------------------------------------------------- fast path = reference
def _reference(beh, rounds, replicates, M, seed):
    """The per-block definition: block b's stream draws sample_block, then delays, then K, then warm-start
    K."""
    B = _rng.BLOCK
    everyone = np.broadcast_to(np.arange(M), (B, 1, M))
    parts = []
    for b in range(-(-replicates // B)):
        rng = _rng.stream(seed, _rng.SCHEDULE, b)
        w = beh.arrivals.sample_block(rng, B, rounds, M)
        parts.append(
            (
                w,
                beh.delays.sample(rng, w),
                beh.local_steps.sample(rng, w),
                beh.local_steps.sample(rng, everyone, 0)[:, 0],
            )
        )
    W, D, K, K0 = (np.concatenate(p)[:replicates] for p in zip(*parts, strict=True))
    return an.Schedule(W, D, K, M, K0)


class _ShiftedDelay(an.UniformDelay):
    """A subclass overriding ``sample``: the fast path written for UniformDelay must not bypass it."""

    def sample(self, rng, workers):
        return np.minimum(super().sample(rng, workers) + 1, np.arange(workers.shape[-2])[:, None])


class _Doubled(an.ConstantSteps):
    def sample(self, rng, workers, start_round=0):
        return 2 * super().sample(rng, workers, start_round)


BEHAVIOURS = {
    "uniform-uniform-constant": an.Behaviour(an.UniformArrivals(10), an.UniformDelay(4), an.ConstantSteps(5)),
    "uniform-none-paper": an.Behaviour(an.UniformArrivals(10), an.NoDelay(), an.UniformSteps.paper(5)),
    "uniform-fixed-timevarying": an.Behaviour(
        an.UniformArrivals(3), an.FixedDelay(2), an.TimeVaryingSteps([1, 3])
    ),
    "dense-keys": an.Behaviour(an.UniformArrivals(40), an.UniformDelay(60), an.UniformSteps(2, 3)),
    "biased-geometric-perworker": an.Behaviour(
        an.BiasedArrivals(3, np.full(100, 0.01)),
        an.GeometricDelay(0.5, 3),
        an.PerWorkerSteps(np.arange(1, 101)),
    ),
    "cyclic-perworkerdelay": an.Behaviour(
        an.CyclicArrivals(7), an.PerWorkerDelay(np.arange(100) % 5), an.ConstantSteps(2)
    ),
    "subclasses": an.Behaviour(an.UniformArrivals(10), _ShiftedDelay(3), _Doubled(2)),
}


@pytest.mark.parametrize("name", sorted(BEHAVIOURS))
def test_fast_path_equals_the_per_block_reference_and_is_valid(name):
    """130 replicates (two full blocks and a partial one), 45 rounds, M = 100: ``Behaviour.sample``
    (vectorized block groups, broadcast constants, no re-validation) equals the per-block reference
    re-validated by the public ``Schedule`` constructor, and its arrays are read-only int64."""
    beh = BEHAVIOURS[name]
    s = beh.sample(45, 130, 100, seed=9)
    ref = _reference(beh, 45, 130, 100, 9)
    assert s == ref
    full = an.Schedule(
        s.workers, s.delays, s.local_steps, s.num_workers, s.init_local_steps
    )  # full validation
    assert full == s
    for arr in (s.workers, s.delays, s.local_steps, s.init_local_steps):
        assert arr.dtype == np.int64 and not arr.flags.writeable
    with pytest.raises(ValueError):
        s.workers[0, 0, 0] = 1
    if name == "subclasses":
        assert np.all(s.local_steps == 4) and s.delays[:, 1:].min() >= 1


def test_group_boundaries_keep_replicates_independent_of_the_count():
    """Blocks are drawn in vectorized groups (8 blocks of 64 at T = 50, m = 10); replicate r is the same for
    every replicate count, across block and group boundaries."""
    beh = an.Behaviour(an.UniformArrivals(10), an.UniformDelay(4), an.UniformSteps(1, 10))
    full = beh.sample(50, 600, 100, seed=1)
    for R in (1, 63, 64, 65, 511, 512, 513):
        assert beh.sample(50, R, 100, seed=1) == full.replicate(slice(0, R))
    assert beh.sample(50, 600, 100, seed=2) != full


def test_synchronous_schedule_is_valid():
    s = an.Synchronous(an.UniformArrivals(3)).sample(20, 3, 8, seed=0)
    assert an.Schedule(s.workers, s.delays, s.local_steps, 8, s.init_local_steps, s.wall_clock) == s
    assert np.all(s.delays == 0) and np.all(np.diff(s.wall_clock, axis=1) > 0)


@pytest.mark.parametrize("M, m, T", [(1, 1, 1), (1, 1, 2), (2, 1, 1), (3, 3, 5), (100, 1, 1), (70, 33, 2)])
def test_small_and_degenerate_shapes_match_the_reference(M, m, T):
    """Single worker / round / arrival (short last axes use the row layout of the Lemire tables)."""
    for delays in (an.UniformDelay(3), an.NoDelay()):
        beh = an.Behaviour(an.UniformArrivals(m), delays, an.UniformSteps(1, 7))
        s = beh.sample(T, 70, M, seed=3)
        assert s == _reference(beh, T, 70, M, 3)
