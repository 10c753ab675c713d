"""Independent plain-numpy references for the published theorems (issue 26). NOTHING here imports afltheory:
these loops are the second implementation the afltheory rules and the published bounds are checked against.

- ``Quadratics``: f_k(x) = ½ (x − c_k)ᵀ A_k (x − c_k), f = Σ_k p_k f_k; additive Gaussian gradient noise with
  E‖ξ_k‖² = σ_k² (isotropic).
- plain loops, one replicate at a time, literally as the papers write the algorithms: FedAvg with client
  weights and a per-local-step schedule (Li et al. schemes full / I / II), local SGD (Stich, Khaled et al.),
  SCAFFOLD with a server step, FedNova, FedProx with an exact proximal step, AsySG, FedBuff.
- exact moments: every algorithm above is, on quadratics with additive Gaussian noise, an affine map of a
  stacked state plus Gaussian noise (a mixture of such maps under client sampling), so the mean and second
  moment of the state propagate exactly (``Moments``); E f(x) − f*, E‖x − x*‖², E‖∇f(x)‖² follow.
"""

from __future__ import annotations

import itertools
import math

import numpy as np


class Quadratics:
    """f_k(x) = ½ (x − c_k)ᵀ A_k (x − c_k) for k < N; f = Σ p_k f_k; noise std per device σ_k."""

    def __init__(self, A, c, p=None, sigma=None):
        self.A = np.asarray(A, dtype=float)
        self.c = np.asarray(c, dtype=float)
        self.N, self.d = self.c.shape
        self.p = np.full(self.N, 1.0 / self.N) if p is None else np.asarray(p, dtype=float)
        self.sigma = (
            np.zeros(self.N) if sigma is None else np.broadcast_to(np.asarray(sigma, float), (self.N,))
        )
        self.Abar = np.einsum("k,kij->ij", self.p, self.A)
        self.x_star = np.linalg.solve(self.Abar, np.einsum("k,kij,kj->i", self.p, self.A, self.c))
        self.f_star = self.f(self.x_star)
        ev = np.concatenate([np.linalg.eigvalsh(a) for a in self.A])
        self.L, self.mu = float(ev.max()), float(ev.min())

    def gap(self, x):
        """f(x) − f* = ½ (x − x*)ᵀ Ā (x − x*), computed without cancellation."""
        v = np.asarray(x, float) - self.x_star
        return 0.5 * v @ self.Abar @ v

    def fk(self, k, x):
        v = x - self.c[k]
        return 0.5 * v @ self.A[k] @ v

    def f(self, x):
        return sum(self.p[k] * self.fk(k, x) for k in range(self.N))

    def grad_k(self, k, x):
        return self.A[k] @ (x - self.c[k])

    def grad(self, x):
        return sum(self.p[k] * self.grad_k(k, x) for k in range(self.N))

    def noise(self, k, rng):
        if rng is None or self.sigma[k] == 0:
            return np.zeros(self.d)
        return rng.standard_normal(self.d) * (self.sigma[k] / math.sqrt(self.d))

    def gamma_li(self):
        """Γ = f* − Σ p_k f_k* (Li et al.); f_k* = 0 here."""
        return self.f_star

    def minimiser(self, weights):
        """argmin Σ w_k f_k."""
        w = np.asarray(weights, float)
        return np.linalg.solve(np.einsum("k,kij->ij", w, self.A), np.einsum("k,kij,kj->i", w, self.A, self.c))


# ---------------------------------------------------------------------------------------------- plain loops
def fedavg_loop(Q, x0, E, rounds, eta, rng, scheme="full", m=None, t0=1):
    """FedAvg as in Li et al. 2020: each round every (or every sampled) device runs E local SGD
    steps, the t-th local step overall (t = t0, t0+1, …) with step eta(t); the server aggregates
    full: Σ p_k w^k; "I": m draws with replacement by p, simple average; "II": m uniform without replacement,
    Σ_{k∈S} p_k N/m w^k. Returns the server models x_0..x_rounds."""
    x = np.array(x0, dtype=float)
    xs = [x.copy()]
    t = t0
    for _ in range(rounds):
        if scheme == "full":
            idx = list(range(Q.N))
        elif scheme == "I":
            idx = list(rng.choice(Q.N, size=m, replace=True, p=Q.p))
        elif scheme == "II":
            idx = list(rng.choice(Q.N, size=m, replace=False))
        else:
            raise ValueError(scheme)
        ys = {}
        for k in sorted(set(idx)):
            y = x.copy()
            for j in range(E):
                y = y - eta(t + j) * (Q.grad_k(k, y) + Q.noise(k, rng))
            ys[k] = y
        t += E
        if scheme == "full":
            x = sum(Q.p[k] * ys[k] for k in idx)
        elif scheme == "I":
            x = sum(ys[k] for k in idx) / m
        else:
            x = sum(Q.p[k] * Q.N / m * ys[k] for k in idx)
        xs.append(x)
    return xs


def local_sgd_loop(Q, x0, H, T, eta, rng):
    """Local SGD, full participation, uniform average every H local steps; step t (t = 0..T−1) uses eta(t).
    Returns the virtual averages x̄_0..x̄_T (x̄_t = Σ p_k y_k(t))."""
    ys = np.tile(np.asarray(x0, float), (Q.N, 1))
    avgs = [Q.p @ ys]
    for t in range(T):
        for k in range(Q.N):
            ys[k] = ys[k] - eta(t) * (Q.grad_k(k, ys[k]) + Q.noise(k, rng))
        if (t + 1) % H == 0:
            ys[:] = Q.p @ ys
        avgs.append(Q.p @ ys)
    return avgs


def scaffold_loop(Q, x0, K, rounds, eta_l, eta_g, rng, m=None, sets=None):
    """SCAFFOLD (Karimireddy et al. 2020, Alg. 1, option II): sample m of N uniformly without
    replacement; each sampled client runs y ← y − η_l (g_i(y) − c_i + c) K times from x;
    c_i⁺ = c_i − c + (x − y)/(K η_l); x ← x + η_g mean_{i∈S}(y_i − x); c ← c + (1/N) Σ_{i∈S} (c_i⁺ − c_i).
    Controls start at 0. ``sets``: the sampled sets per round (replay), else drawn from ``rng``."""
    m = Q.N if m is None else m
    x = np.array(x0, float)
    c = np.zeros(Q.d)
    ci = np.zeros((Q.N, Q.d))
    xs = [x.copy()]
    for r in range(rounds):
        if sets is not None:
            S = np.asarray(sets[r])
        else:
            S = np.sort(rng.choice(Q.N, size=m, replace=False)) if m < Q.N else np.arange(Q.N)
        dx, dc = np.zeros(Q.d), np.zeros(Q.d)
        for i in S:
            y = x.copy()
            for _ in range(K):
                y = y - eta_l * (Q.grad_k(i, y) + Q.noise(i, rng) - ci[i] + c)
            new = ci[i] - c + (x - y) / (K * eta_l)
            dx += (y - x) / m
            dc += (new - ci[i]) / Q.N
            ci[i] = new
        x = x + eta_g * dx
        c = c + dc
        xs.append(x.copy())
    return xs


def fednova_loop(Q, x0, taus, rounds, eta_l, eta_g, rng, weights=None):
    """FedNova (Wang et al. 2020) with vanilla local SGD: client i runs τ_i steps, d_i = (x − y_i)/(η_l τ_i)
    (its average gradient); τ_eff = Σ p_i τ_i; x ← x − η_g η_l τ_eff Σ p_i d_i. Full participation."""
    p = Q.p if weights is None else np.asarray(weights, float)
    x = np.array(x0, float)
    xs = [x.copy()]
    for _ in range(rounds):
        d = np.zeros(Q.d)
        for i in range(Q.N):
            y = x.copy()
            for _ in range(int(taus[i])):
                y = y - eta_l * (Q.grad_k(i, y) + Q.noise(i, rng))
            d += p[i] * (x - y) / (eta_l * taus[i])
        x = x - eta_g * eta_l * float(p @ np.asarray(taus, float)) * d
        xs.append(x.copy())
    return xs


def fedavg_taus_loop(Q, x0, taus, rounds, eta_l, eta_g, rng, weights=None):
    """FedAvg with per-client local steps τ_i: x ← x + η_g Σ p_i (y_i − x). Full participation."""
    p = Q.p if weights is None else np.asarray(weights, float)
    x = np.array(x0, float)
    xs = [x.copy()]
    for _ in range(rounds):
        delta = np.zeros(Q.d)
        for i in range(Q.N):
            y = x.copy()
            for _ in range(int(taus[i])):
                y = y - eta_l * (Q.grad_k(i, y) + Q.noise(i, rng))
            delta += p[i] * (y - x)
        x = x + eta_g * delta
        xs.append(x.copy())
    return xs


def prox_point(Q, k, w, mu):
    """argmin_v f_k(v) + μ/2 ‖v − w‖² (exact: (A_k + μI)^{-1}(A_k c_k + μ w))."""
    return np.linalg.solve(Q.A[k] + mu * np.eye(Q.d), Q.A[k] @ Q.c[k] + mu * w)


def fedprox_expected_next_f(Q, w, mu, m):
    """E_S f(w⁺) for one FedProx round with exact proximal steps: S = m draws with replacement by p, w⁺ the
    simple mean of the drawn devices' proximal points. Exact (enumerates the N^m ordered draws)."""
    pts = [prox_point(Q, k, w, mu) for k in range(Q.N)]
    total = 0.0
    for draw in itertools.product(range(Q.N), repeat=m):
        prob = float(np.prod(Q.p[list(draw)]))
        total += prob * Q.f(sum(pts[k] for k in draw) / m)
    return total


def asysg_loop(grad, x0, T, delays, gamma, sigma, d, rng):
    """AsySG-con (Lian et al. 2015): x_{k+1} = x_k − γ Σ_{j<m} (∇f(x_{k−τ_{k,j}}) + ξ), delays (T, m) with
    k − τ clipped at 0; E‖ξ‖² = σ². Returns x_0..x_T."""
    xs = [np.array(x0, float)]
    for k in range(T):
        step = np.zeros(d)
        for tau in delays[k]:
            step += grad(xs[max(k - int(tau), 0)]) + rng.standard_normal(d) * (sigma / math.sqrt(d))
        xs.append(xs[-1] - gamma * step)
    return xs


def fedbuff_loop(Q, x0, workers, delays, Ks, eta, eta_l, rng, staleness=lambda tau: 1 / math.sqrt(1 + tau)):
    """FedBuff (Nguyen et al. 2022) on a replayed schedule: round t aggregates the m arrivals
    (workers[t, j], delays[t, j], Ks[t, j]); arrival j ran K local SGD steps from x_{t−τ} and sends
    Δ = y_K − y_0; x_{t+1} = x_t + η (1/m) Σ_j s(τ_j) Δ_j."""
    xs = [np.array(x0, float)]
    for t in range(len(workers)):
        acc = np.zeros(Q.d)
        for i, tau, K in zip(workers[t], delays[t], Ks[t], strict=True):
            y0 = xs[max(t - int(tau), 0)]
            y = y0.copy()
            for _ in range(int(K)):
                y = y - eta_l * (Q.grad_k(int(i), y) + Q.noise(int(i), rng))
            acc += staleness(int(tau)) * (y - y0)
        xs.append(xs[-1] + eta * acc / len(workers[t]))
    return xs


def fednova_replay(Q, x0, workers, delays, Ks, eta, eta_l, rng):
    """FedNova on a replayed asynchronous schedule (uniform p_i = 1/m over the round's arrivals):
    arrival j ran K_j steps from x_{t−τ_j}, d_j = (y_0 − y_K)/(η_l K_j);
    x_{t+1} = x_t − η η_l mean_j(K_j) mean_j(d_j)."""
    xs = [np.array(x0, float)]
    for t in range(len(workers)):
        ds, ks = [], []
        for i, tau, K in zip(workers[t], delays[t], Ks[t], strict=True):
            y0 = xs[max(t - int(tau), 0)]
            y = y0.copy()
            for _ in range(int(K)):
                y = y - eta_l * (Q.grad_k(int(i), y) + Q.noise(int(i), rng))
            ds.append((y0 - y) / (eta_l * K))
            ks.append(K)
        xs.append(xs[-1] - eta * eta_l * float(np.mean(ks)) * np.mean(ds, axis=0))
    return xs


# ---------------------------------------------------------------------------------------------- exact moments
class Moments:
    """Mean and second moment of a state z under affine maps z ← F z + g + ξ, ξ ~ N(0, Q) (or a
    mixture of such maps with probabilities). Exact: second moments of affine maps of z are linear in
    (E z, E zzᵀ)."""

    def __init__(self, z0):
        z0 = np.asarray(z0, float)
        self.mean = z0.copy()
        self.S = np.outer(z0, z0)

    def step(self, F, g=None, Qn=None):
        self.mix([(1.0, F, g, Qn)])

    def mix(self, branches):
        n = self.mean.size
        mean, S = np.zeros(n), np.zeros((n, n))
        for prob, F, g, Qn in branches:
            g = np.zeros(F.shape[0]) if g is None else g
            Fm = F @ self.mean
            mean += prob * (Fm + g)
            FSF = F @ self.S @ F.T
            cross = np.outer(Fm, g)
            S += prob * (FSF + cross + cross.T + np.outer(g, g) + (0 if Qn is None else Qn))
        self.mean, self.S = mean, 0.5 * (S + S.T)

    def quad(self, M, c):
        """E (Cz − c)ᵀ M (Cz − c) for a read-out C given as M (n×n in z) and c (the shifted point, n)."""
        return float(np.trace(M @ self.S) - 2 * c @ M @ self.mean + c @ M @ c)


def _sel(n_blocks, d, k):
    E = np.zeros((d, n_blocks * d))
    E[:, k * d : (k + 1) * d] = np.eye(d)
    return E


def fedavg_exact(Q, x0, E, rounds, eta, scheme="full", m=None, t0=1, record_G=False):
    """Exact E f(x_r) − f* (r = 0..rounds) of ``fedavg_loop`` (same schemes and schedule), and when
    record_G the realised second-moment bound G² = max over local steps and devices of E‖∇f_k(y) + ξ‖²
    (the device iterates at the start of each of their steps). State: the N device iterates stacked (Nd)."""
    N, d = Q.N, Q.d
    n = N * d
    J = np.vstack([np.eye(d)] * N)  # x -> (x, …, x)
    mom = Moments(J @ np.asarray(x0, float))
    sel = [_sel(N, d, k) for k in range(N)]
    # aggregation branches: (prob, weights over devices)
    if scheme == "full":
        aggs = [(1.0, Q.p)]
    elif scheme == "I":
        aggs = []
        for draw in itertools.product(range(N), repeat=m):
            w = np.zeros(N)
            for k in draw:
                w[k] += 1.0 / m
            aggs.append((float(np.prod(Q.p[list(draw)])), w))
    elif scheme == "II":
        subsets = list(itertools.combinations(range(N), m))
        aggs = []
        for S in subsets:
            w = np.zeros(N)
            for k in S:
                w[k] = Q.p[k] * N / m
            aggs.append((1.0 / len(subsets), w))
    else:
        raise ValueError(scheme)
    sel0 = sel[0]
    xstar = J @ Q.x_star
    Mf = 0.5 * sel0.T @ Q.Abar @ sel0
    gaps = [mom.quad(Mf, xstar)]
    G2 = 0.0
    t = t0
    for _ in range(rounds):
        for j in range(E):
            h = eta(t + j)
            F = np.zeros((n, n))
            g = np.zeros(n)
            Qn = np.zeros((n, n))
            for k in range(N):
                blk = slice(k * d, (k + 1) * d)
                F[blk, blk] = np.eye(d) - h * Q.A[k]
                g[blk] = h * Q.A[k] @ Q.c[k]
                Qn[blk, blk] = h * h * Q.sigma[k] ** 2 / d * np.eye(d)
                if record_G:
                    Mk = sel[k].T @ Q.A[k] @ Q.A[k] @ sel[k]
                    G2 = max(G2, mom.quad(Mk, J @ Q.c[k]) + Q.sigma[k] ** 2)
            mom.step(F, g, Qn)
        t += E
        mom.mix([(prob, J @ sum(w[k] * sel[k] for k in range(N)), None, None) for prob, w in aggs])
        gaps.append(mom.quad(Mf, xstar))
    return (np.array(gaps), G2) if record_G else np.array(gaps)


def local_sgd_exact(Q, x0, H, T, eta, avg_weights=None, record_G=False):
    """Exact moments of ``local_sgd_loop``: returns dict with 'gap' (E f(x̄_t) − f*, t = 0..T), 'dist'
    (E‖x̄_t − x*‖²), and when ``avg_weights`` (T,) is given 'avg_gap' = E f(Σ_t w_t x̄_t / Σ w_t) − f* over
    t = 0..T−1 (an accumulator is carried in the state); 'G2' the realised max E‖∇f_k + ξ‖²."""
    N, d = Q.N, Q.d
    n = N * d + d
    J = np.vstack([np.eye(d)] * N)
    z0 = np.concatenate([J @ np.asarray(x0, float), np.zeros(d)])
    mom = Moments(z0)
    P = np.hstack([np.kron(Q.p[None, :], np.eye(d)), np.zeros((d, d))])  # z -> x̄
    Acc = np.hstack([np.zeros((d, N * d)), np.eye(d)])
    sel = [np.hstack([_sel(N, d, k), np.zeros((d, d))]) for k in range(N)]
    zstar = np.concatenate([J @ Q.x_star, Q.x_star])
    Mf = 0.5 * P.T @ Q.Abar @ P
    Md = P.T @ P
    gap, dist, G2 = [mom.quad(Mf, zstar)], [mom.quad(Md, zstar)], 0.0
    wsum = 0.0
    for t in range(T):
        if avg_weights is not None:  # acc += w_t x̄_t (before the step: t = 0..T−1)
            F = np.eye(n)
            F[N * d :, :] += avg_weights[t] * P
            mom.step(F)
            wsum += avg_weights[t]
        h = eta(t)
        F = np.eye(n)
        g = np.zeros(n)
        Qn = np.zeros((n, n))
        for k in range(N):
            blk = slice(k * d, (k + 1) * d)
            F[blk, blk] = np.eye(d) - h * Q.A[k]
            g[blk] = h * Q.A[k] @ Q.c[k]
            Qn[blk, blk] = h * h * Q.sigma[k] ** 2 / d * np.eye(d)
            if record_G:
                G2 = max(
                    G2,
                    mom.quad(sel[k].T @ Q.A[k] @ Q.A[k] @ sel[k], np.concatenate([J @ Q.c[k], Q.c[k]]))
                    + Q.sigma[k] ** 2,
                )
        mom.step(F, g, Qn)
        if (t + 1) % H == 0:
            F = np.eye(n)
            F[: N * d, :] = J @ P
            mom.step(F)
        gap.append(mom.quad(Mf, zstar))
        dist.append(mom.quad(Md, zstar))
    out = {"gap": np.array(gap), "dist": np.array(dist), "G2": G2}
    if avg_weights is not None:
        out["avg_gap"] = mom.quad(
            0.5 * Acc.T @ Q.Abar @ Acc / wsum**2, np.concatenate([np.zeros(N * d), wsum * Q.x_star])
        )
    return out


def asysg_exact(A, c, x0, T, delays, gamma, sigma):
    """Exact E‖∇f(x_k)‖² (k = 0..T) of ``asysg_loop`` on f(x) = ½(x − c)ᵀA(x − c) with a FIXED delay pattern
    ``delays`` (T, m). State: the last τ_max + 1 iterates stacked."""
    A = np.asarray(A, float)
    d = A.shape[0]
    tmax = int(np.max(delays))
    nb = tmax + 1
    n = nb * d
    z0 = np.tile(np.asarray(x0, float), nb)  # block b = x_{k−b}; before the start all equal x_0
    mom = Moments(z0)
    M0 = _sel(nb, d, 0).T @ A @ A @ _sel(nb, d, 0)
    cz = np.tile(np.asarray(c, float), nb)
    out = [mom.quad(M0, cz)]
    for k in range(T):
        F = np.zeros((n, n))
        F[d:, :-d] = np.eye(n - d)  # shift: new block b+1 = old block b
        new = _sel(nb, d, 0).copy()
        g0 = np.zeros(d)
        for tau in delays[k]:
            b = min(int(tau), k)
            new = new - gamma * A @ _sel(nb, d, b)
            g0 += gamma * A @ c
        F[:d, :] = new
        g = np.zeros(n)
        g[:d] = g0
        Qn = np.zeros((n, n))
        Qn[:d, :d] = gamma**2 * len(delays[k]) * sigma**2 / d * np.eye(d)
        mom.step(F, g, Qn)
        out.append(mom.quad(M0, cz))
    return np.array(out)
