"""Statistics that check themselves (issue 30 item 5): the confidence machinery every Monte Carlo verdict
trusts, calibrated on synthetic samples whose truth is known, in the quick tier.

- ``calibration.ucb_coverage`` — ``analysis.upper_confidence_bound`` at 99 % on N = 4000 synthetic problems of
  R = 8 normal samples with known mean: the number of bounds below the true mean is Binomial(N, 0.01) when the
  UCB is calibrated; passed when it lies in that law's two-sided 99.9 % interval. Negative control: the same
  count for the plausible bug "normal quantile instead of Student-t" (z_{0.99} for t_{0.99, R−1}), which
  under-covers (≈ 2.6 % misses at R = 8). Also asserts UCB ≥ mean on every problem (the invariant
  ``Verdict`` enforces).
- ``calibration.bound_decision`` — ``analysis.compare_bound`` (the decision of every Monte Carlo bound
  verdict) on N = 3000 problems of R = 6 normal samples whose true mean equals the bound: the number of
  false passes (UCB ≤ bound) is Binomial(N, 0.01) when the UCB is calibrated (99.9 % acceptance interval).
  Control: the normal-quantile bug (≈ 3.7 % false passes at R = 6).
- ``calibration.slope`` — ``analysis.bootstrap_slope`` on exact power laws y = c x^a (a = −0.5, five x over a
  decade) with multiplicative lognormal noise, R = 64 replicates per point, N = 800 problems: (i) on the
  noise-free law the fitted slope equals a to 1e-9; (ii) the 95 % bootstrap CI misses a no more often than
  Binomial(N, 0.05 + 0.02) allows at 99.9 % (the 0.02 is the percentile bootstrap's known finite-R
  under-coverage, measured at 0.5 % (N = 800) and 1.7 % (N = 300) here: stated, not tuned to pass) and no
  less often than Binomial(N, 0.05 − 0.03) allows. Negative control: the same coverage test for the bug
  "quantiles at (1 − level, level)" (a 90 % interval reported as 95 %), read off the same bootstrap draws.

Both are deterministic (fixed seeds) and cost 0.7 CPU-s together (measured, quick tier)."""

from __future__ import annotations

import numpy as np
from scipy import stats

from afltheory.analysis import upper_confidence_bound
from afltheory.analysis.slopes import bootstrap_slope, fit_slope
from afltheory.checks import AllOf, AtLeast, AtMost, ControlMeasurement, Holds, Verdict

from .registry import register

REF = "[afltheory.analysis: Student-t UCB, percentile bootstrap of a log-log slope; issue 30 item 5]"
LEVEL_TEST = 0.999  # two-sided confidence of the binomial acceptance intervals


def binomial_interval(n: int, p: float, level: float = LEVEL_TEST) -> tuple[int, int]:
    """Two-sided ``level`` acceptance interval [lo, hi] of Binomial(n, p) (each tail ≤ (1 − level)/2)."""
    a = (1 - level) / 2
    return int(stats.binom.ppf(a, n, p)), int(stats.binom.isf(a, n, p)) + 1


def _count_in(lo: int, hi: int, *more, text: str) -> AllOf:
    """The criterion "lo ≤ measured count ≤ hi" (and the further criteria ``more``)."""
    return AllOf(AtLeast(limit=lo), AtMost(limit=hi), *more, text=text)


def _ucb_coverage(ctx):
    N, R, level = (4000, 8, 0.99)
    rng = np.random.default_rng(ctx.seed_for("calibration", "ucb"))
    mu = 3.0
    S = mu + 2.0 * rng.standard_normal((N, R))
    ucb = np.array([upper_confidence_bound(s, level) for s in S])
    means = S.mean(axis=1)
    below_mean = int(np.sum(ucb < means - 1e-12 * np.abs(means)))
    misses = int(np.sum(ucb < mu))
    lo, hi = binomial_interval(N, 1 - level)
    z_ucb = means + stats.norm.ppf(level) * S.std(axis=1, ddof=1) / np.sqrt(R)
    misses_z = int(np.sum(z_ucb < mu))
    below_mean_z = int(np.sum(z_ucb < means - 1e-12 * np.abs(means)))
    never_below = "UCB ≥ mean on all"
    return Verdict.judged(
        id="calibration.ucb_coverage",
        claim=f"the one-sided {level:.0%} t-UCB covers the true mean with probability {level:.0%} "
        "(and is never below the sample mean)",
        reference=REF,
        measured=misses,
        theoretical=N * (1 - level),
        criterion=_count_in(
            lo,
            hi,
            Holds(on=never_below),
            text=f"misses in [{lo}, {hi}] (Binomial({N}, {1 - level:.2f}), two-sided "
            f"{LEVEL_TEST:.1%}); {never_below}",
        ),
        stats={never_below: below_mean == 0},
        relation="~=",
        method=f"synthetic: N = {N} problems of R = {R} N(μ, 2²) samples, μ known",
        notes=f"miss rate {misses / N:.4f} (nominal {1 - level:.3f}); UCB below its mean on {below_mean}",
        details={"misses": misses, "interval": [lo, hi], "below_mean": below_mean, "misses_z": misses_z},
        control=ControlMeasurement(
            description="normal quantile z_{0.99} instead of t_{0.99, R−1} (under-covers at small R): misses",
            measured=misses_z,
            theoretical=N * (1 - level),
            stats={never_below: below_mean_z == 0},
        ),
    )


def _slope(ctx):
    N, R, level, a = 800, 64, 0.95, -0.5
    x = np.geomspace(1.0, 10.0, 5)
    truth = 2.0 * x**a
    exact_fit = fit_slope(x, truth).slope
    rng = np.random.default_rng(ctx.seed_for("calibration", "slope"))
    s_noise = 0.3
    miss = miss_bug = 0
    for j in range(N):
        # lognormal noise with mean 1: E y = truth exactly, so log E y is the exact power law
        samples = [t * np.exp(s_noise * rng.standard_normal(R) - s_noise**2 / 2) for t in truth]
        fit = bootstrap_slope(x, samples, n_boot=400, level=level, seed=j)
        miss += not (fit.ci[0] <= a <= fit.ci[1])
        q = np.quantile(fit.boot[:, 0], [1 - level, level])  # the bug: a 90 % interval
        miss_bug += not (q[0] <= a <= q[1])
    under = 0.02
    lo, hi = binomial_interval(N, 1 - level - 0.03)[0], binomial_interval(N, 1 - level + under)[1]
    # the 90 %-as-95 % bug reads the same fits: its noise-free slope error is the claim's (NaN read as inf)
    err = abs(exact_fit - a)
    slope_err = {"|noise-free slope − a|": err if np.isfinite(err) else np.inf}
    return Verdict.judged(
        id="calibration.slope",
        claim=f"the bootstrap log-log slope recovers an exact power law and its {level:.0%} CI covers the "
        "true exponent at its level",
        reference=REF,
        measured=miss,
        theoretical=N * (1 - level),
        criterion=_count_in(
            lo,
            hi,
            AtMost(on="|noise-free slope − a|", limit=1e-9),
            text=f"noise-free slope within 1e-9 of {a}; CI misses in [{lo}, {hi}] (Binomial({N}, 0.02) "
            f"lower and Binomial({N}, {1 - level + under:.2f}) upper {LEVEL_TEST:.1%} tails; +0.02: "
            "the "
            "percentile bootstrap's finite-R under-coverage)",
        ),
        stats=slope_err,
        relation="~=",
        method=f"synthetic: N = {N} power laws 2x^{a} on 5 points in [1, 10], R = {R} lognormal "
        f"(σ = {s_noise}) samples per point, 400 bootstrap draws",
        notes=f"noise-free slope {exact_fit:.12g}; miss rate {miss / N:.3f} (nominal {1 - level:.2f}); the "
        f"90 %-as-95 % bug misses {miss_bug / N:.3f}",
        details={"misses": miss, "interval": [lo, hi], "misses_bug": miss_bug, "exact_slope": exact_fit},
        control=ControlMeasurement(
            description="bootstrap quantiles at (1 − level, level): a 90 % interval reported as 95 %: misses",
            measured=miss_bug,
            theoretical=N * (1 - level),
            stats=slope_err,
        ),
    )


def _bound_decision(ctx):
    """``analysis.compare_bound`` — the decision every Monte Carlo bound verdict makes — on samples whose true
    mean equals the bound (the bound is just violated in the limit): it must pass (UCB ≤ bound) with
    probability 1 − level, no more."""
    from afltheory.analysis import compare_bound

    N, R, level = 3000, 6, 0.99
    rng = np.random.default_rng(ctx.seed_for("calibration", "bound"))
    S = 5.0 + rng.standard_normal((N, R))
    false_pass = int(sum(compare_bound(s, 5.0, level=level).holds for s in S))
    lo, hi = binomial_interval(N, 1 - level)
    zq = stats.norm.ppf(level)
    bug = int(np.sum(S.mean(axis=1) + zq * S.std(axis=1, ddof=1) / np.sqrt(R) <= 5.0))
    return Verdict.judged(
        id="calibration.bound_decision",
        claim=f"a bound verdict's decision (compare_bound: one-sided {level:.0%} t-UCB ≤ bound) passes a "
        f"bound equal to the true mean with probability {1 - level:.0%}",
        reference=REF,
        measured=false_pass,
        theoretical=N * (1 - level),
        criterion=_count_in(
            lo,
            hi,
            text=f"false passes in [{lo}, {hi}] (Binomial({N}, {1 - level:.2f}), two-sided {LEVEL_TEST:.1%})",
        ),
        relation="~=",
        method=f"synthetic: N = {N} problems of R = {R} N(5, 1) samples against the bound 5",
        notes=f"false-pass rate {false_pass / N:.4f}; with the normal quantile it would be {bug / N:.4f}",
        control=ControlMeasurement(
            description="the normal quantile for Student's t (R = 6): false passes",
            measured=bug,
            theoretical=N * (1 - level),
        ),
    )


@register(
    "calibration",
    "statistics that check themselves: UCB coverage and the bootstrap slope on known truths",
    REF,
)
def run(ctx):
    """Calibration verdicts (synthetic samples with known truth, fixed seeds)."""
    return [_ucb_coverage(ctx), _bound_decision(ctx), _slope(ctx)]


__all__ = ["binomial_interval", "run"]
