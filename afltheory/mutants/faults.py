"""Engine faults of the mutation catalogue: the wrong engine behaviour each fault point is given while a
mutant is injected (``afltheory.mutants.injected``; the points are ``afltheory._faults.FaultPoint``).

Each function receives what the engine would use at that point and returns the faulty replacement (a delay
array, the local step counts, a noise factor, ...); ``no_noise`` replaces the noise factor by 0.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

__all__ = [
    "ClaimTermScaled",
    "arrival_weights_dropped",
    "arrival_weights_not_squared",
    "client_weight_not_squared",
    "grad_sign_flipped",
    "kbar_is_kmax",
    "noise_weight_not_squared",
    "smallest_term",
    "sum_p2_uniform",
    "uniform_weights",
    "virtual_one_step_late",
    "TermScaled",
    "bootstrap_without_replacement",
    "drift_std_as_var_cov",
    "drift_cov_squared",
    "drift_per_coordinate_cov",
    "drift_per_coordinate_increments",
    "drift_per_epoch_cov",
    "drift_per_epoch_increments",
    "drift_scale_as_cov",
    "drift_std_as_var_increments",
    "k_max",
    "k_minus_one",
    "k_plus_one",
    "mean_time",
    "minibatch_with_replacement",
    "no_noise",
    "one_sided_tail",
    "normal_quantile",
    "omega_is_sigma",
    "restart_at_arrival",
    "reuse_step0_noise",
    "shared_stream",
    "stale_ignored",
    "stale_off_by_one",
    "stale_oldest",
    "std_per_coordinate",
    "var_per_coordinate",
    "zero_quantile",
]


def _rounds(d):
    return np.arange(d.shape[1])[None, :, None]


def stale_off_by_one(d: np.ndarray) -> np.ndarray:
    """x_{t−τ−1} instead of x_{t−τ} (clipped at x_0)."""
    return np.minimum(d + 1, _rounds(d))


def stale_oldest(d: np.ndarray) -> np.ndarray:
    """every arrival starts from the oldest model kept, x_{t−D} (D = the schedule's max delay; clipped at
    x_0)."""
    return np.minimum(np.full_like(d, d.max() if d.size else 0), _rounds(d))


def stale_ignored(d: np.ndarray) -> np.ndarray:
    """every arrival starts from the current model x_t."""
    return np.zeros_like(d)


def k_plus_one(K: np.ndarray) -> np.ndarray:
    """K + 1 local steps."""
    return K + 1


def k_minus_one(K: np.ndarray) -> np.ndarray:
    """max(K − 1, 1) local steps."""
    return np.maximum(K - 1, 1)


def k_max(K: np.ndarray) -> np.ndarray:
    """each arrival runs the largest K of its round (of the warm start's workers for the initial K)."""
    return np.broadcast_to(K.max(axis=-1, keepdims=True), K.shape).copy()


def std_per_coordinate(dim: int) -> float:
    """noise std σ_L per coordinate instead of σ_L/√d: factor √d on every draw."""
    return float(np.sqrt(dim))


def var_per_coordinate(dim: int) -> float:
    """noise covariance σ_L² I instead of (σ_L²/d) I: factor d on the covariance."""
    return float(dim)


def shared_stream(comp: Any, v: np.ndarray, gen: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """every worker's compressor restarted from the same generator state: the n arrivals of a replicate share
    one random pattern (the bug of seeding each worker's compressor identically)."""
    state = gen.bit_generator.state
    ys, bs = [], []
    for i in range(v.shape[1]):
        gen.bit_generator.state = state
        y, b = comp.compress(v[:, i], gen)
        ys.append(y)
        bs.append(b)
    return np.stack(ys, axis=1), np.stack(bs, axis=1)


def _sigma_q(Q):
    return float(np.sqrt(max(np.trace(Q), 0.0)))


def drift_std_as_var_increments(Q: np.ndarray) -> float:
    """factor on the drift increments when σ_q is used where σ_q² belongs: Cov q = Q/σ_q (tr = σ_q)."""
    s = _sigma_q(Q)
    return s**-0.5 if s > 0 else 1.0


def drift_std_as_var_cov(Q: np.ndarray) -> np.ndarray:
    """Q/σ_q instead of Q (tr Q = σ_q², so the covariance's trace becomes σ_q)."""
    s = _sigma_q(Q)
    return Q / s if s > 0 else Q


def drift_per_coordinate_increments(Q: np.ndarray) -> float:
    """factor on the drift increments when σ_q² is read as the variance per coordinate: Cov q = σ_q² I =
    d·Q for the isotropic Q = (σ_q²/d) I (E‖q‖² = d σ_q²): factor √d."""
    return float(np.sqrt(Q.shape[0]))


def drift_per_coordinate_cov(Q: np.ndarray) -> np.ndarray:
    """d·Q: σ_q² I instead of (σ_q²/d) I for an isotropic drift (tr = d σ_q²)."""
    return Q * Q.shape[0]


def drift_scale_as_cov(Q: np.ndarray) -> float:
    """factor on the drift increments drawn as q = Q z instead of Q^{1/2} z (the covariance used as its own
    square root: Cov q = Q²): √(tr Q² / tr Q), exact for an isotropic Q (the checks' drift), the trace of Q²
    for any Q."""
    t = float(np.trace(Q))
    return float(np.sqrt(np.trace(Q @ Q) / t)) if t > 0 else 1.0


def drift_cov_squared(Q: np.ndarray) -> np.ndarray:
    """Q² = Q Q instead of Q: the drift's covariance of increments drawn as Q z instead of Q^{1/2} z."""
    return Q @ Q


def _round_epochs(algorithm: Any) -> int:
    """The epochs of a round: max_k E_k of a rule with ``epochs`` (Dynamic FedAvg: int or one per agent), else
    1 (a rule without epochs is unchanged by the drift-per-epoch faults)."""
    epochs = getattr(algorithm, "epochs", None)
    return 1 if epochs is None else int(np.max(np.atleast_1d(np.asarray(epochs, dtype=np.int64))))


def drift_per_epoch_increments(algorithm: Any) -> float:
    """factor on the drift increments when the optimum drifts once per local epoch instead of once per round:
    a round of E = max_k E_k epochs (the round lasts its longest agent's epochs) sees E independent
    increments, Cov = E·Q: factor √E (1 for a rule without epochs)."""
    return float(np.sqrt(_round_epochs(algorithm)))


def drift_per_epoch_cov(Q: np.ndarray, algorithm: Any) -> np.ndarray:
    """E·Q instead of Q (E = max_k E_k of ``algorithm``, 1 without epochs): the drift covariance per round
    when the optimum drifts once per local epoch."""
    return Q * _round_epochs(algorithm)


def restart_at_arrival(times: Any, now: float) -> list:
    """arrived workers restart at their own arrival times (correct: at ``now``, when the round closes)."""
    return list(times)


def mean_time(times: np.ndarray) -> np.ndarray:
    """(rounds, m) compute times -> per-round time = their mean (the slowest worker's is correct)."""
    return times.mean(axis=1)


def no_noise(dim: int) -> float:
    """noise factor 0: the engine draws (or adds) no gradient noise."""
    return 0.0


def minibatch_with_replacement(n: Any, shape: tuple, rng: np.random.Generator) -> np.ndarray:
    """Indices of B samples drawn uniformly *with* replacement from n (an int, or per-draw sizes broadcastable
    to ``shape``) — the bug; ``shape`` = (draws, B)."""
    return rng.integers(0, n, size=shape)


def omega_is_sigma(Omega: np.ndarray, Sigma: np.ndarray) -> np.ndarray:
    """MOCHA's Ω-step keeps the covariance Σ itself in the regularizer (the seed's printed reading)."""
    return Sigma


def normal_quantile(level: float, n: int) -> float:
    """The normal quantile z_level where the UCB needs Student's t_{level, n−1}."""
    from scipy import stats

    return float(stats.norm.ppf(level))


def zero_quantile(level: float, n: int) -> float:
    """0 where the UCB needs t_{level, n−1}: the "confidence bound" is the Monte Carlo mean itself (and the
    generic adversary's lower bound 2·mean − UCB too: a violation confirmed on the mean)."""
    return 0.0


def bootstrap_without_replacement(rng: np.random.Generator, n: int, n_boot: int) -> np.ndarray:
    """(n_boot, n) replicate indices drawn *without* replacement: every bootstrap sample is a permutation of
    the replicates, so every resampled mean is the sample mean and the percentile interval collapses to the
    point estimate."""
    return rng.permuted(np.broadcast_to(np.arange(n), (n_boot, n)), axis=1)


def one_sided_tail(level: float) -> float:
    """The percentile interval's tail mass per side 1 − level instead of (1 − level)/2: the quantiles (1 −
    level, level), a (2·level − 1) interval reported at ``level`` (90 % as 95 %)."""
    return 1.0 - level


def reuse_step0_noise(additive: bool) -> bool:
    """the step-by-step local steps reuse step 0's noise draw ξ_0 at every step k ≥ 1 (additive-noise problems
    only: the noise of the K-step sum then has variance K² σ² instead of K σ²)."""
    return additive


def noise_weight_not_squared(w: float, client: float) -> float:
    """The exact engine's weight on an arrival's noise covariance w (w = w_K w_τ M p_i) where w² belongs."""
    return w


def client_weight_not_squared(w: float, client: float) -> float:
    """The client weight M p_i enters the noise covariance once: w² / (M p_i) where w² belongs (w_K, w_τ
    squared, the client factor not)."""
    return w * w / client


def arrival_weights_not_squared(w: np.ndarray) -> np.ndarray:
    """The collapsed arrival-noise draw sums Σ_i w_i sc_i² where Σ_i w_i² sc_i² belongs."""
    return np.array(w, dtype=float)


def arrival_weights_dropped(w: np.ndarray) -> np.ndarray:
    """The collapsed arrival-noise draw sums Σ_i sc_i² (every arrival weight read as 1)."""
    return np.ones_like(np.asarray(w, dtype=float))


def uniform_weights(w: np.ndarray) -> np.ndarray:
    """A weighted average taken with equal weights (γ_t ignored): 1/T each."""
    return np.full(len(w), 1.0 / len(w))


def virtual_one_step_late(v: np.ndarray, next_rounds: np.ndarray) -> np.ndarray:
    """The virtual averaged model read one local step late: ‖∇f(x̄_{t,k+1})‖² at k (k = K − 1: the next
    round's model x_{t+1}); ``v`` (..., T, K), ``next_rounds`` (..., T) = ‖∇f(x_{t+1})‖²."""
    return np.concatenate([v[..., 1:], np.asarray(next_rounds)[..., None]], axis=-1)


def kbar_is_kmax(vals: dict) -> dict:
    """The run symbol K̄ (harmonic mean of the local steps) read as K_max (the largest K of the run)."""
    out = dict(vals)
    if "K" in out:
        out["Kbar"] = out["K"]
    return out


def sum_p2_uniform(vals: dict) -> dict:
    """The run symbol Σ_k p_k² read as 1/M (the uniform weights' value, whatever the client weights)."""
    out = dict(vals)
    if "M" in out:
        out["sum_p2"] = 1.0 / np.asarray(out["M"], dtype=float)
    return out


def smallest_term(vals: Any, key: Any) -> Any:
    """``min`` where ``max`` belongs: the default control halves the smallest term of the bound."""
    return min(vals, key=key)


def grad_sign_flipped(grads: np.ndarray) -> np.ndarray:
    """The PEP interpolant rebuilt from −g_p where the Gram data give g_p."""
    return -np.asarray(grads)


@dataclass(frozen=True)
class ClaimTermScaled:
    """A mis-transcribed constant of a published statement's bound: in every term dict that carries the
    statement's terms — its keys include ``keys`` and the term ``marker[0]`` reads a symbol named
    ``marker[1]`` (the statement itself, the theorems that reuse its terms, and the ``Claim`` built from
    them: ``Claim.bound`` and ``Claim.terms`` read ``theory.terms_in_force``) — the term ``term`` is
    multiplied by ``factor``. (``afltheory.mutants`` sits below ``afltheory.published`` in the layers, so
    the statement is recognized by its terms, not imported.)"""

    keys: tuple
    marker: tuple
    term: str
    factor: Fraction

    def __call__(self, term_exprs: dict) -> dict:
        """``term_exprs`` with ``term`` scaled if they are the statement's terms (else unchanged)."""
        import sympy as sp

        name, symbol = self.marker
        if not set(self.keys) <= set(term_exprs) or name not in term_exprs:
            return term_exprs
        if symbol not in {str(x) for x in sp.sympify(term_exprs[name]).free_symbols}:
            return term_exprs
        out = dict(term_exprs)
        out[self.term] = out[self.term] * sp.Rational(self.factor.numerator, self.factor.denominator)
        return out


@dataclass(frozen=True)
class TermScaled:
    """A mis-transcribed constant of a theorem's bound: the term ``term`` of ``afltheory.theory.<module>``'s
    ``TERM_EXPRS`` multiplied by ``factor`` wherever those terms are evaluated (``bound``, ``bound_terms``,
    the adversary, and the claims path: ``Claim.terms`` of a claim stating those terms, so ``claims.verify``);
    other theorems' terms are untouched. A factor > 1 is a looser bound, which every numeric
    check still passes by construction: only a test pinning the term to a hand-derived value can see it."""

    module: str
    term: str
    factor: Fraction

    def __call__(self, term_exprs: dict) -> dict:
        """``term_exprs`` with the term scaled if they are the theorem's own ``TERM_EXPRS``."""
        import importlib

        import sympy as sp

        own = importlib.import_module(f"afltheory.theory.{self.module}").TERM_EXPRS
        if term_exprs is not own and term_exprs != own:
            return term_exprs
        out = dict(term_exprs)
        out[self.term] = out[self.term] * sp.Rational(self.factor.numerator, self.factor.denominator)
        return out
