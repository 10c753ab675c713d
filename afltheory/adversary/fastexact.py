"""Exact E‖∇f(x_t)‖² of any declaratively defined server rule on linear-Gaussian problems, batched over
candidates: the adversary's evaluator.

No update is defined here. Each candidate's rule is read through ``afltheory.exact.local.server_rule`` — the
declarative view the exact engine ``afltheory.exact.moments`` reads (after ``afltheory._faults.substitute``,
as there, so the catalogue's rule mutants reach the search), i.e. the rule's ``ServerRule.view``: step size
γ, normalizer n(m, M), per-arrival weights w_K(K) w_τ(τ), memory slots, warm start, fixed local steps,
per-worker local step sizes, client weights M·p_i (stateless rules), and the worker's proximal weight μ. The
K-step local maps are ``afltheory.exact.local.local_maps`` in batched form. A rule the view cannot represent
is refused with ``UnsupportedRule`` (never read as its base): an overridden imperative hook
(``IMPERATIVE_HOOKS``), a worker that is not affine, weighted memory slots (``server_rule`` refuses those), a
compressor, or a rule whose ``prepare`` changes the problem (mini-batches). A step-size schedule
is read as the exact engine reads it: round t runs ``rule.at_round(t)`` (the warm start round 0's rule).

The recursion is the one of ``afltheory.exact.moments`` (see its module docstring), vectorized over a batch
of B candidates sharing (d, M, max delay, K_max), with the delay pmf shared by the workers (round t clips the
delay at t). With s = γ / n(m, M), U_i = E[w D_i] (over K and τ), Γ = Π − ππᵀ − diag(π):

* stateless rules (AFA-CD, FedAvg, FedBuff, AsySG, Dynamic FedAvg, user rules), z_t = (1, x̃_t, …, x̃_{t−D}):
  S_{t+1} = Ā S Āᵀ + s² e_x [Σ_ij Γ_ij U_i S U_jᵀ + Σ_i π_i (E[w² D_i S D_iᵀ] + E[w² Q_i])] e_xᵀ; the
  bracket is one precomputed linear map of the upper triangle of S per round type (cost per round
  independent of M).
* memory rules (AFA-CS, any m ≤ M, warm or cold start), z_t = (1, x̃_t, …, x̃_{t−D}, s_1, …, s_M): the new
  slots s'_i = (1 − χ_i) s_i + χ_i g_i have E[s'_i zᵀ] = (1 − π_i) S_{s_i,·} + π_i U_i S_{J,·} and, for i ≠ j,
  E[s'_i s'_jᵀ] = (1 − π_i − π_j + π_ij) S_{s_i s_j} + (π_j − π_ij) S_{s_i J} U_jᵀ
  + (π_i − π_ij) U_i S_{J s_j} + π_ij U_i S_JJ U_jᵀ, E[s'_i s'_iᵀ] = (1 − π_i) S_{s_i s_i}
  + π_i (E[D_i S D_iᵀ] + E[Q_i]); then x̃_{t+1} = x̃_t − s Σ_i s'_i and the history shifts.

Structure: when every Hessian and noise covariance of the batch is diagonal (the default classes: unrotated
spectra, diagonal noise), the d coordinates evolve independently (the random round law is shared, but the
second moment of coordinate k only feeds on itself), so the batch is evaluated as B·d one-dimensional
problems and E‖∇f‖² = Σ_k h̄_k² E x̃_k² — the state shrinks from 1 + (D+1)d (+ Md) to 1 + (D+1) (+ M).

``tests/adversary`` check it against ``afltheory.exact.moments`` (an independent implementation) to 1e-10 and
against ``simulate``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from .. import _faults
from ..algorithms.base import ServerRule, UnsupportedRule
from ..exact.diagonal import is_diagonal, split
from ..exact.local import local_maps, server_rule

__all__ = ["Batch", "RuleView", "estimate_bytes", "grad_norm_sq", "local_map_arrays", "rule_view"]


@dataclass(frozen=True)
class RuleView:
    """The batched declarative view of the candidates' server rules (from ``exact.local.server_rule``).
    ``scale`` (B,) = γ / normalizer(m, M); ``mu`` (B,) the worker's proximal weight; ``eta_L`` (B, M) the
    local step of each worker; ``w_K`` (B, K_max) = w_K(1..K_max); ``w_tau`` (B, D+1) = w_τ(0..D);
    ``w_worker`` (B, M) the client-weight factors M·p_i (ones without client weights); ``memory``,
    ``warm_start`` and ``local_steps`` (the rules' fixed K_i from their local view, (M,) int, or None: the
    law's K) are common to the batch."""

    memory: bool
    warm_start: bool
    scale: np.ndarray
    mu: np.ndarray
    eta_L: np.ndarray
    w_K: np.ndarray
    w_tau: np.ndarray
    local_steps: np.ndarray | None
    w_worker: np.ndarray | None = None

    def repeat(self, k: int) -> RuleView:
        """Every candidate repeated ``k`` times in a row (the diagonal reduction)."""
        return replace(self, **{f: np.repeat(getattr(self, f), k, axis=0) for f in _ROWS})

    def rows(self, sl: slice) -> RuleView:
        """The candidates ``sl`` of the batch."""
        return replace(self, **{f: getattr(self, f)[sl] for f in _ROWS})


_ROWS = ("scale", "mu", "eta_L", "w_K", "w_tau", "w_worker")


def _finite(w: np.ndarray, what: str, rule: object) -> np.ndarray:
    if not np.all(np.isfinite(w)):
        raise ValueError(f"{what} of {rule!r} returned a non-finite weight: {w.tolist()}")
    return w


def rule_view(
    rules: ServerRule | Sequence[ServerRule], *, m: int, num_workers: int, K_max: int, max_delay: int
) -> RuleView:
    """The declarative view of ``rules`` (one per candidate) for ``m`` arrivals per round among
    ``num_workers``, K in 1..``K_max`` and delays in 0..``max_delay``. Raises ``UnsupportedRule`` for a rule
    the evaluator cannot represent (see the module docstring), ValueError if the rules of a batch disagree on
    memory, warm start or fixed local steps."""
    rules = (rules,) if isinstance(rules, ServerRule) else tuple(rules)
    if not rules:
        raise ValueError("rules=() is empty; expected one server rule per candidate")
    Ks = np.arange(1, K_max + 1)
    taus = np.arange(max_delay + 1)
    out: dict[str, list] = {k: [] for k in _ROWS}
    common = None
    seen: dict[int, tuple] = {}
    for rule in rules:
        if id(rule) not in seen:
            r = _faults.substitute(rule)  # identity unless inside afltheory.mutants.injected(...)
            if getattr(r, "scheduled", False):
                raise ValueError(
                    f"algorithm={r!r} has a step-size schedule: pass round t's rule "
                    f"(algorithm.at_round(t)); grad_norm_sq does so per round"
                )
            ev = server_rule(r, num_workers)  # TypeError / UnsupportedRule, as in the exact engine
            v = ev.view  # the rule's declarative server step (ServerRule.view), the one every engine reads
            if r.compressor is not None:
                raise UnsupportedRule(
                    f"algorithm={r!r}: the adversary's evaluator does not represent "
                    f"compressors (compressor={r.compressor!r}); use afltheory.exact.moments"
                )
            if getattr(r, "batch", None) is not None and r.prepare is not None:
                raise UnsupportedRule(
                    f"algorithm={r!r} changes the problem (prepare with batch={r.batch!r}); "
                    "the adversary's evaluator takes the problem's arrays as they are"
                )
            r.check_m(m)
            Ks_fixed = v.local.steps  # the rule's local view: fixed K_i or None
            fixed = None if Ks_fixed is None else tuple(Ks_fixed.tolist())
            row = (
                v.scale(m),
                ev.mu,
                ev.local_steps_for(num_workers),
                _finite(v.k_weight(Ks), "local_steps_weight", r),
                _finite(v.tau_weight(taus), "staleness_weight", r),
                np.ones(num_workers) if v.client_weights is None else v.client_weights,
            )
            seen[id(rule)] = (row, (v.memory, v.warm_start, fixed))
        row, kind = seen[id(rule)]
        if common is None:
            common = kind
        elif kind != common:
            raise ValueError(
                f"the rules of one batch must agree on (memory, warm_start, fixed local steps); "
                f"got {common} and {kind}"
            )
        for k, val in zip(out, row, strict=True):
            out[k].append(val)
    memory, warm, fixed = common
    if not np.all(np.isfinite(out["scale"])):
        raise ValueError(f"step_size/normalizer gave a non-finite server factor: {out['scale']}")
    return RuleView(
        memory=bool(memory),
        warm_start=bool(warm),
        scale=np.array(out["scale"], dtype=float),
        mu=np.array(out["mu"], dtype=float),
        eta_L=np.array(out["eta_L"], dtype=float),
        w_K=np.array(out["w_K"]),
        w_tau=np.array(out["w_tau"]),
        local_steps=None if fixed is None else np.array(fixed, dtype=np.int64),
        w_worker=np.array(out["w_worker"], dtype=float),
    )


@dataclass(frozen=True)
class Batch:
    """B candidates with a common structure. Arrays (batch axis first): ``hessians`` (B, M, d, d),
    ``b_tilde`` (B, M, d) = H_i(c_i − x*), ``noise_cov`` (B, M, d, d), ``hbar`` (B, d, d), ``x0`` (B, d)
    centred at x*, ``m`` (int), ``pi`` (B, M) and ``pij`` (B, M, M) (or (B, P, M) and (B, P, M, M): a periodic
    deterministic sequence of arrival sets, phase t mod P), ``delay_pmf`` (B, D+1) or (B, P, D+1) (round t
    clips the delay at t), ``k_pmf`` (B, M, K_max) or (B, P, M, K_max) over K = 1..K_max; ``rules``: one
    ``ServerRule`` per candidate (or one for all), read through their declarative view (``rule_view``)."""

    hessians: np.ndarray
    b_tilde: np.ndarray
    noise_cov: np.ndarray
    hbar: np.ndarray
    x0: np.ndarray
    m: int
    pi: np.ndarray
    pij: np.ndarray
    delay_pmf: np.ndarray
    k_pmf: np.ndarray
    rules: ServerRule | tuple


def local_map_arrays(
    hessians: np.ndarray,
    b_tilde: np.ndarray,
    noise_cov: np.ndarray,
    eta_L: np.ndarray,
    mu: np.ndarray | float,
    K_max: int,
) -> tuple[np.ndarray, np.ndarray]:
    """``exact.local.local_maps`` for a batch, stacked over K = 1..K_max: E = [c_K | C_K] (B, M, K_max, d,
    1+d) and Q_K (B, M, K_max, d, d) (unweighted). ``eta_L``: (B,) or (B, M); ``mu``: scalar or (B,)."""
    eta_L = np.asarray(eta_L, dtype=float)
    if eta_L.ndim == 1:
        eta_L = eta_L[:, None]
    mu = np.asarray(mu, dtype=float)
    maps = local_maps(
        hessians, b_tilde, noise_cov, eta_L, mu[:, None] if mu.ndim == 1 else mu, range(1, K_max + 1)
    )
    E = np.stack(
        [np.concatenate([maps[k].c[..., None], maps[k].C], axis=-1) for k in range(1, K_max + 1)], axis=2
    )
    Q = np.stack([np.broadcast_to(maps[k].Q, maps[k].C.shape) for k in range(1, K_max + 1)], axis=2)
    return E, Q


def estimate_bytes(
    batch: int,
    dim: int,
    num_workers: int,
    max_delay: int,
    K_max: int,
    *,
    memory: bool,
    periods: int = 1,
    diagonal: bool = False,
) -> int:
    """Peak bytes of one ``grad_norm_sq`` call (the search projects this before it starts): the state, the
    per-round-type operators it caches and the local maps. ``diagonal``: the B·d one-dimensional reduction."""
    B, d, M, H = batch, dim, num_workers, max_delay + 1
    if diagonal:
        B, d = B * d, 1
    nJ = 1 + H * d
    maps = B * M * K_max * (2 * d * (1 + d) + d * d)
    types = periods * H
    if memory:
        Md = M * d
        n = nJ + Md
        per = 8 * B * (6 * n * n + 6 * Md * Md + 3 * Md * nJ + M * K_max * d * (1 + d))
        cached = 8 * B * (types * Md * nJ + 3 * periods * Md * Md)
    else:
        n = nJ
        tri_n, tri_d = n * (n + 1) // 2, d * (d + 1) // 2
        per = 8 * B * (6 * n * n + 3 * d * d * n * n + periods * d * d * (1 + d) ** 2)
        cached = 8 * B * types * (tri_n * tri_d + d * n + d * d)
    return int(per + cached + 8 * maps * 2)


def _delay_at(pmf, t):
    """Round-t delay pmf (B, …, D+1): the mass above t moved onto t."""
    if t >= pmf.shape[-1] - 1:
        return pmf
    out = pmf.copy()
    out[..., t] += out[..., t + 1 :].sum(axis=-1)
    out[..., t + 1 :] = 0.0
    return out


def grad_norm_sq(b: Batch, rounds: int) -> np.ndarray:
    """E‖∇f(x_t)‖², t = 0..rounds, for every candidate: (B, rounds + 1). A candidate whose second moments
    overflow gets +inf from the first non-finite round on (it is flagged by the caller, never NaN).
    ``UnsupportedRule`` for a rule the declarative view cannot represent."""
    B, M, d, _ = b.hessians.shape
    P = max(
        np.shape(b.pi)[1] if np.ndim(b.pi) == 3 else 1,
        np.shape(b.delay_pmf)[1] if np.ndim(b.delay_pmf) == 3 else 1,
        np.shape(b.k_pmf)[1] if np.ndim(b.k_pmf) == 4 else 1,
    )

    def phases(a, base):
        a = np.asarray(a, dtype=float)
        a = a[:, None] if a.ndim == base + 1 else a
        if a.shape[1] not in (1, P):
            raise ValueError(
                f"a periodic field has {a.shape[1]} phases; all periodic fields need the same period {P}"
            )
        return np.broadcast_to(a, (a.shape[0], P) + a.shape[2:])

    PI, PIJ = phases(b.pi, 1), phases(b.pij, 2)
    DP, pK = phases(b.delay_pmf, 1), phases(b.k_pmf, 2)
    Hn = DP.shape[-1]
    rules = (b.rules,) if isinstance(b.rules, ServerRule) else tuple(b.rules)
    if len(rules) not in (1, B):
        raise ValueError(f"rules has {len(rules)} entries for a batch of {B} candidates (expected 1 or {B})")
    scheduled = any(getattr(r, "scheduled", False) for r in rules)
    at = (
        (lambda t: tuple(r.at_round(t) if getattr(r, "scheduled", False) else r for r in rules))
        if scheduled
        else (lambda t: rules)
    )
    Kmax = pK.shape[-1]
    view = rule_view(at(0), m=int(b.m), num_workers=M, K_max=Kmax, max_delay=Hn - 1)
    Kf = view.local_steps
    if Kf is not None:  # K_{t,i} = the rule's fixed count, whatever the law (AsySG, DynamicFedAvg)
        Kmax = max(Kmax, int(Kf.max()))
        pK = np.zeros(pK.shape[:-1] + (Kmax,))
        pK[..., np.arange(M), Kf - 1] = 1.0
        if Kmax != view.w_K.shape[1]:
            view = rule_view(at(0), m=int(b.m), num_workers=M, K_max=Kmax, max_delay=Hn - 1)
    diag = d > 1 and is_diagonal(b.hessians) and is_diagonal(b.noise_cov)

    def finish(v):
        v = v.repeat(B) if v.scale.shape[0] == 1 and B > 1 else v
        return v.repeat(d) if diag else v

    if not scheduled:
        view = finish(view)
        views = lambda t: (0, view)
    else:  # round t's constant rule; equal step sizes share one view (and operators)
        memo: dict = {}

        def views(t):
            rs = at(t)
            key = tuple((float(r.step_size), float(r.eta_L)) for r in rs)
            if key not in memo:
                memo.clear()
                memo[key] = finish(rule_view(rs, m=int(b.m), num_workers=M, K_max=Kmax, max_delay=Hn - 1))
            return key, memo[key]

    if diag:  # B·d one-dimensional problems (exact.diagonal.split, shared with exact.moments)
        H1, bt1, N1, hb, x01 = split(b.hessians, b.b_tilde, b.noise_cov, b.hbar, b.x0)
        rep = lambda a: np.repeat(a, d, axis=0)
        g = _run(H1, bt1, N1, hb, x01, rep(PI), rep(PIJ), rep(DP), rep(pK), views, rounds)
        with np.errstate(over="ignore", invalid="ignore"):
            return g.reshape(B, d, rounds + 1).sum(axis=1)
    return _run(b.hessians, b.b_tilde, b.noise_cov, b.hbar, b.x0, PI, PIJ, DP, pK, views, rounds)


#: the memory-slot recursion runs in chunks of candidates whose states fit in about this many floats (cache)
_CHUNK_FLOATS = 2**17


def _run(H, bt, N, hbar, x0, PI, PIJ, DP, pK, views, rounds):
    """Round t's view is ``views(t)`` = (key, RuleView); the round operators are rebuilt when the key
    changes (a step-size schedule) and reused otherwise."""
    with np.errstate(over="ignore", invalid="ignore"):
        if not views(0)[1].memory:
            return _stateless(H, bt, N, hbar, x0, PI, PIJ, DP, pK, views, rounds)
        B, M, d, _ = H.shape
        n = 1 + DP.shape[-1] * d + M * d
        step = max(1, _CHUNK_FLOATS // (n * n))
        if B <= step:
            return _memory(H, bt, N, hbar, x0, PI, PIJ, DP, pK, views, rounds)
        parts = []
        for a in range(0, B, step):
            sl = slice(a, a + step)
            parts.append(
                _memory(
                    H[sl],
                    bt[sl],
                    N[sl],
                    hbar[sl],
                    x0[sl],
                    PI[sl],
                    PIJ[sl],
                    DP[sl],
                    pK[sl],
                    _rows(views, sl),
                    rounds,
                )
            )
        return np.concatenate(parts)


def _rows(views, sl):
    """``views`` restricted to the candidates ``sl`` (one restricted view per key)."""
    memo: dict = {}

    def sub(t):
        key, v = views(t)
        if key not in memo:
            memo.clear()
            memo[key] = v.rows(sl)
        return key, memo[key]

    return sub


def _check(g, S, dead):
    bad = ~np.isfinite(g) | (g > 1e300)
    if bad.any():
        dead |= bad
        S[bad] = 0.0
    g[dead] = np.inf
    return g


def _stateless_prep(H, bt, N, PI, pK, view):
    """What a stateless round needs of the rule view: the weighted mean local maps, the noise and the
    within-worker map."""
    E, Q = local_map_arrays(H, bt, N, view.eta_L, view.mu, pK.shape[-1])
    wK = view.w_K
    ww = np.ones(E.shape[:2]) if view.w_worker is None else view.w_worker  # client weights M p_i (B, M)
    Ew = E * (wK[:, None, :] * ww[:, :, None])[..., None, None]  # M p_i w_K [c_K | C_K]
    Ebar = np.einsum("bpmk,bmkij->bpmij", pK, Ew)  # (B, P, M, d, 1+d)
    Qbar = np.einsum("bpmk,bmkij->bpmij", pK * (wK**2)[:, None, None] * (ww**2)[:, None, :, None], Q)
    noise0 = np.einsum("bpm,bpmij->bpij", PI, Qbar)  # Σ_i π_i E[w_K² Q_i]
    # within-worker second moment, a linear map of S_(0,τ): Σ_i π_i Σ_K p_K w_K² E_K ⊗ E_K  (B, P, d, d, 1+d,
    # 1+d)
    W2 = np.einsum("bpm,bpmk,bmkac,bmkel->bpaecl", PI, pK, Ew, Ew, optimize=True)
    return Ebar, noise0, W2


def _stateless(H, bt, N, hbar, x0, PI, PIJ, DP, pK, views, rounds):
    """The stateless recursion: per round type (rule view, phase, clipped delay pmf) one linear map of the
    upper triangle of S onto the new x̃ block."""
    B, M, d, _ = H.shape
    P, Hn = DP.shape[1], DP.shape[-1]
    n = 1 + Hn * d
    Gamma = PIJ - PI[..., :, None] * PI[..., None, :]
    Gamma = Gamma - np.einsum("bpi,ij->bpij", PI, np.eye(M))  # Δ − diag(π)
    Hbar2 = hbar @ hbar
    blk = np.array([np.r_[0, 1 + t * d + np.arange(d)] for t in range(Hn)])
    iu = np.triu_indices(n)
    off = iu[0] != iu[1]
    ou = np.triu_indices(d)
    keep = np.r_[0, np.arange(1 + d, n)]
    z = np.concatenate([np.ones((B, 1)), np.tile(x0, (1, Hn))], axis=1)
    S = z[:, :, None] * z[:, None, :]
    out = np.empty((B, rounds + 1))
    xs = slice(1, 1 + d)
    out[:, 0] = np.einsum("bij,bji->b", Hbar2, S[:, xs, xs])
    cache: dict = {}
    current = None
    dead = np.zeros(B, dtype=bool)
    for t in range(rounds):
        vkey, view = views(t)
        if vkey != current:  # a new rule view (step-size schedule): rebuild its operators
            cache.clear()
            current = vkey
            Ebar, noise0, W2 = _stateless_prep(H, bt, N, PI, pK, view)
            wt, s = view.w_tau, view.scale
            s2 = (s * s)[:, None]
        ph = t % P
        key = (ph, min(t, Hn - 1))
        if key not in cache:
            pt = _delay_at(DP[:, ph], t)  # (B, Hn)
            a = pt * wt  # E-weights of the history blocks
            q = pt * wt * wt
            Eb = Ebar[:, ph]
            U = np.zeros((B, M, d, n))
            U[..., 0] = a.sum(axis=1)[:, None, None] * Eb[..., 0]
            for tau in range(Hn):
                U[..., 1 + tau * d : 1 + (tau + 1) * d] = a[:, tau, None, None, None] * Eb[..., 1:]
            R = -s[:, None, None] * np.einsum("bm,bmdk->bdk", PI[:, ph], U)
            R[:, :, xs] += np.eye(d)
            GU = np.einsum("bij,bjel->biel", Gamma[:, ph], U)
            W = np.einsum("biak,biel->baekl", U, GU)
            for tau in range(Hn):
                idx = blk[tau]
                W[:, :, :, idx[:, None], idx[None, :]] += q[:, tau, None, None, None, None] * W2[:, ph]
            W = W.reshape(B, d, d, n * n)
            Wu = W[:, ou[0], ou[1]]
            Wsym = Wu[..., iu[0] * n + iu[1]]
            Wsym[..., off] += Wu[..., iu[1] * n + iu[0]][..., off]
            nx = noise0[:, ph] * q.sum(axis=1)[:, None, None]
            cache[key] = (R, np.ascontiguousarray(np.swapaxes(Wsym, 1, 2)), nx)
        R, Wt, nx = cache[key]
        RS = R @ S
        Snew = np.empty_like(S)
        Snew[:, keep[:, None], keep[None, :]] = S[:, : n - d, : n - d]
        Snew[:, xs, keep] = RS[:, :, : n - d]
        Snew[:, keep, xs] = np.swapaxes(RS[:, :, : n - d], 1, 2)
        xx = RS @ np.swapaxes(R, 1, 2)
        inc = (S[:, iu[0], iu[1]][:, None, :] @ Wt)[:, 0]
        upper = np.zeros((B, d, d))
        upper[:, ou[0], ou[1]] = inc * s2
        xx += upper + np.swapaxes(upper, 1, 2)
        xx[:, np.arange(d), np.arange(d)] -= inc[:, ou[0] == ou[1]] * s2
        xx += s2[:, :, None] * nx
        Snew[:, xs, xs] = 0.5 * (xx + np.swapaxes(xx, 1, 2))
        S = Snew
        out[:, t + 1] = _check(np.einsum("bij,bji->b", Hbar2, S[:, xs, xs]), S, dead)
    return out


def _blocks(X, d):
    """(…, M, M) → (…, M d, M d): every entry repeated as a d × d block."""
    return np.repeat(np.repeat(X, d, axis=-1), d, axis=-2)


def _memory_prep(H, bt, N, pK, view):
    """What a memory round needs of the rule view: local maps, weighted means, noise, within-worker map."""
    E, Q = local_map_arrays(H, bt, N, view.eta_L, view.mu, pK.shape[-1])
    B, M, _, d, _ = E.shape
    wK = view.w_K
    Ebar = np.einsum("bpmk,bmkij->bpmij", pK, E * wK[:, None, :, None, None])  # (B, P, M, d, 1+d)
    pw2 = pK * (wK**2)[:, None, None]  # (B, P, M, K)
    Qbar = np.einsum("bpmk,bmkij->bpmij", pw2, Q)
    # within-worker second moment as a map of S_(0,τ): Σ_K p_K w_K² E_K ⊗ E_K   (B, P, M d d, (1+d)²)
    W2 = np.einsum("bpmk,bmkac,bmkel->bpmaecl", pw2, E, E, optimize=True).reshape(
        B, pK.shape[1], M * d * d, -1
    )
    return E, Q, Ebar, Qbar, W2


def _memory(H, bt, N, hbar, x0, PI, PIJ, DP, pK, views, rounds):
    """The memory-slot recursion (AFA-CS-like rules, any m ≤ M): see the module docstring."""
    B, M, d, _ = H.shape
    P, Hn = DP.shape[1], DP.shape[-1]
    nJ = 1 + Hn * d
    Md = M * d
    n = nJ + Md
    current, view = views(0)
    E, Q, Ebar, Qbar, W2 = _memory_prep(H, bt, N, pK, view)
    wt, s = view.w_tau, view.scale
    Acoef = _blocks(1.0 - PI[..., :, None] - PI[..., None, :] + PIJ, d)  # (B, P, Md, Md)
    Bcoef = _blocks(PI[..., None, :] - PIJ, d)
    Pcoef = _blocks(PIJ, d)
    keepc = np.repeat(1.0 - PI, d, axis=-1)  # (B, P, Md)
    pirow = np.repeat(PI, d, axis=-1)
    Hbar2 = hbar @ hbar
    blk = np.array([np.r_[0, 1 + t * d + np.arange(d)] for t in range(Hn)])
    ar = np.arange(M)
    # S_0: deterministic x̃_0 history; slots warm-started with every worker's update at x_0 (K from the
    # phase-0 pmf, the exact engine's k_init_pmf) or zero
    z = np.zeros((B, n))
    z[:, 0] = 1.0
    z[:, 1:nJ] = np.tile(x0, (1, Hn))
    cov = None
    if view.warm_start:
        v = E[..., 0] + np.einsum("bmkij,bj->bmki", E[..., 1:], x0)  # (B, M, K, d)
        p0 = pK[:, 0]
        mean = np.einsum("bmk,bmki->bmi", p0, v)
        dv = v - mean[:, :, None]
        cov = np.einsum("bmk,bmki,bmkj->bmij", p0, dv, dv) + np.einsum("bmk,bmkij->bmij", p0, Q)
        z[:, nJ:] = mean.reshape(B, Md)
    S = z[:, :, None] * z[:, None, :]
    if cov is not None:
        S4 = S[:, nJ:, nJ:].reshape(B, M, d, M, d)
        S4[:, ar, :, ar, :] += cov.transpose(1, 0, 2, 3)
        S[:, nJ:, nJ:] = S4.reshape(B, Md, Md)
    out = np.empty((B, rounds + 1))
    xs = slice(1, 1 + d)
    out[:, 0] = np.einsum("bij,bji->b", Hbar2, S[:, xs, xs])
    cache: dict = {}
    dead = np.zeros(B, dtype=bool)
    sc = s[:, None, None]
    for t in range(rounds):
        vkey, view = views(t)
        if vkey != current:  # a new rule view (step-size schedule): rebuild its operators
            cache.clear()
            current = vkey
            E, Q, Ebar, Qbar, W2 = _memory_prep(H, bt, N, pK, view)
            wt, s = view.w_tau, view.scale
            sc = s[:, None, None]
        ph = t % P
        key = (ph, min(t, Hn - 1))
        if key not in cache:
            pt = _delay_at(DP[:, ph], t)
            a, q = pt * wt, pt * wt * wt
            Eb = Ebar[:, ph]
            U = np.zeros((B, M, d, nJ))
            U[..., 0] = a.sum(axis=1)[:, None, None] * Eb[..., 0]
            for tau in range(Hn):
                U[..., 1 + tau * d : 1 + (tau + 1) * d] = a[:, tau, None, None, None] * Eb[..., 1:]
            noise = Qbar[:, ph] * q.sum(axis=1)[:, None, None, None]
            cache[key] = (U.reshape(B, Md, nJ), q, noise)
        Uf, q, noise = cache[key]
        SJJ = S[:, :nJ, :nJ]
        SsJ = S[:, nJ:, :nJ]
        Y = Uf @ SJJ  # U_i S_JJ
        UfT = np.swapaxes(Uf, 1, 2)
        UU = Y @ UfT  # U_i S_JJ U_jᵀ
        X = Bcoef[:, ph] * (SsJ @ UfT)  # (π_j − π_ij) S_{s_i J} U_jᵀ
        Tvv = Acoef[:, ph] * S[:, nJ:, nJ:] + X + np.swapaxes(X, 1, 2) + Pcoef[:, ph] * UU
        # own arrivals: π_i (E[w² D_i S D_iᵀ] + E[w² Q_i] − U_i S U_iᵀ) on the diagonal blocks
        St = np.einsum("bt,btij->bij", q, S[:, blk[:, :, None], blk[:, None, :]])  # Σ_τ p_τ w_τ² S_(0,τ)
        own = (W2[:, ph] @ St.reshape(B, -1, 1)).reshape(B, M, d, d) + noise
        T4 = Tvv.reshape(B, M, d, M, d)
        UU4 = UU.reshape(B, M, d, M, d)
        T4[:, ar, :, ar, :] += PI[:, ph].T[:, :, None, None] * (
            own.transpose(1, 0, 2, 3) - UU4[:, ar, :, ar, :]
        )
        TvJ = keepc[:, ph, :, None] * SsJ + pirow[:, ph, :, None] * Y  # E[s'_i Jᵀ]  (B, Md, nJ)
        sumJ = TvJ.reshape(B, M, d, nJ).sum(axis=1)  # Σ_i E[s'_i Jᵀ]  (B, d, nJ)
        sumV = Tvv.reshape(B, M, d, Md).sum(axis=1)  # Σ_i E[s'_i s'ᵀ]  (B, d, Md)
        Snew = np.empty_like(S)
        k = nJ - d  # old (1, x̃_t..x̃_{t−D+1})
        Snew[:, 0, 0] = 1.0
        Snew[:, 0, 1 + d : nJ] = S[:, 0, 1:k]
        Snew[:, 1 + d : nJ, 0] = S[:, 1:k, 0]
        Snew[:, 1 + d : nJ, 1 + d : nJ] = S[:, 1:k, 1:k]
        Rx = S[:, xs, :k] - sc * sumJ[:, :, :k]  # E[x̃' (old kept)ᵀ]
        Snew[:, xs, 0] = Rx[:, :, 0]
        Snew[:, 0, xs] = Rx[:, :, 0]
        Snew[:, xs, 1 + d : nJ] = Rx[:, :, 1:]
        Snew[:, 1 + d : nJ, xs] = np.swapaxes(Rx[:, :, 1:], 1, 2)
        xsJ = sumJ[:, :, xs]
        xx = (
            S[:, xs, xs]
            - sc * (xsJ + np.swapaxes(xsJ, 1, 2))
            + (s * s)[:, None, None] * sumV.reshape(B, d, M, d).sum(axis=2)
        )
        Snew[:, xs, xs] = 0.5 * (xx + np.swapaxes(xx, 1, 2))
        Snew[:, nJ:, 0] = TvJ[:, :, 0]
        Snew[:, 0, nJ:] = TvJ[:, :, 0]
        Snew[:, nJ:, 1 + d : nJ] = TvJ[:, :, 1:k]
        Snew[:, 1 + d : nJ, nJ:] = np.swapaxes(TvJ[:, :, 1:k], 1, 2)
        xsl = np.swapaxes(TvJ[:, :, xs], 1, 2) - sc * sumV  # E[x̃' s'ᵀ]
        Snew[:, xs, nJ:] = xsl
        Snew[:, nJ:, xs] = np.swapaxes(xsl, 1, 2)
        Snew[:, nJ:, nJ:] = 0.5 * (Tvv + np.swapaxes(Tvv, 1, 2))
        S = Snew
        out[:, t + 1] = _check(np.einsum("bij,bji->b", Hbar2, S[:, xs, xs]), S, dead)
    return out
