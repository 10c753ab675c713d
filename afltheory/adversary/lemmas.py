"""Lemma-level claims: Lemma 2 and the local-drift bound (1) [Yang et al. 2022, Lemma 2, bound (1)].

Both are statements about one round of K local SGD steps on a linear-Gaussian worker, which are affine in
the start point with additive Gaussian noise (``exact.local.local_maps``): every expectation is in closed
form, no recursion.

- ``lemma2``: for an arrival set M_t (the m workers with the largest weights), per-arrival K_i in
  {1..K_max} and a common start x: E‖Σ_i G_i‖² = ‖Σ_i E G_i‖² + Σ_i tr Cov(G_i) against
  2‖Σ_i E G_i‖² + 2 (Σ_i 1/K_i) σ_L² (``theory.lemmas.lemma2_bound``). Terms: "mean" and "sigma_L".
- ``drift``: for a start x, the worst worker i and every k ≤ K:
  E‖y_k − x‖² = η_L²‖S_k ∇f_i(x)‖² + η_L² tr Σ_{j<k} P^j Σ_i P^jᵀ (S_k = Σ_{j<k} P^j, P = I − η_L A_i)
  against 5Kη_L²(σ_L² + 6Kσ_G²) + 30K²η_L²‖∇f(x)‖² (``theory.lemmas.drift_bound_terms``), with η_L
  inside (C1). Shared Hessians by default (σ_G then holds everywhere, as the proof needs along the path).
Instances are one-round AFA-CD instances (fixed arrivals, point-mass K pmfs, no delay), loadable like the
others.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import fastexact
from .claims import Evaluation, SearchSpec, register_claim
from .instance import Instance
from .space import AssumptionClass, Reader, Structure, certified_constants, decode_problem, rescale

__all__ = ["DriftClaim", "Lemma2Claim"]


@dataclass(frozen=True)
class _LemmaClaim(SearchSpec):
    def check_class(self, cls):
        if not isinstance(cls, AssumptionClass):
            raise TypeError(f"assumptions={cls!r} must be an afltheory.adversary.AssumptionClass")
        return cls

    def structures(self, cls, rng):
        m = cls.m if cls.m is not None else int(rng.integers(1, cls.num_workers + 1))
        return Structure(m, "fixed", {"K": int(rng.integers(1, cls.K_max + 1))})

    def _eta_L(self, cls, L, K, u):
        c1 = 6 * (2 * K**2 - 3 * K + 1) * L**2  # (C1): c1 η_L² ≤ 1
        cap = np.minimum(1.0 / L, np.where(c1 > 0, 1.0 / np.sqrt(np.where(c1 > 0, c1, 1.0)), np.inf))
        return cap * 10.0 ** (-cls.eta_L_decades * u)

    def _problem(self, cls, st, U):
        r = Reader(U)
        prob = decode_problem(cls, st, r)
        extra = self._extra_layout(cls, st, r)
        step = r.take("eta_L", 1)
        return r, prob, extra, step

    def num_params(self, cls, st):
        return self._problem(cls, st, None)[0].pos

    def _decode(self, cls, st, U):
        U = np.atleast_2d(np.asarray(U, dtype=float))
        _, prob, extra, step = self._problem(cls, st, U)
        H, C, covs, x0 = prob
        C, covs, x0 = rescale(cls, H, C, covs, x0)
        L, sL, sG, D, rho = certified_constants(cls, H, C, covs, x0)
        return H, C, covs, x0, L, sL, sG, rho, extra, step[:, 0]

    def _instance(self, cls, st, u, workers, Ks, eta_L):
        H, C, covs, x0, L, sL, sG, rho, extra, step = self._decode(cls, st, u[None])
        M = cls.num_workers
        kp = np.zeros((M, cls.K_max))
        kp[np.arange(M), np.clip(Ks, 1, cls.K_max) - 1] = 1.0
        return Instance(
            claim=self.id,
            algorithm_name="AFACD",
            hessians=H[0],
            centers=C[0],
            noise_cov=covs[0],
            x0=x0[0],
            eta=1.0,
            eta_L=float(eta_L),
            arrivals={"kind": "fixed", "m": len(workers), "workers": list(map(int, workers))},
            delay_pmf=np.ones(1),
            k_pmf=kp,
            rounds=1,
            radius=None if cls.hessian == "shared" else float(rho[0]),
        )

    def _maps(self, H, C, covs, eta_L, Kmax):
        # E (S, M, Kmax, d, 1+d) = [c_K | C_K], Q (S, M, Kmax, d, d): exact.local.local_maps, batched
        return fastexact.local_map_arrays(H, np.einsum("smij,smj->smi", H, C), covs, eta_L, 0.0, Kmax)

    def evaluate(self, cls: AssumptionClass, st: Structure, U: np.ndarray) -> Evaluation:
        """measured / bound per candidate row of ``U`` (``_parts``); an error is recorded, never fatal."""
        U = np.atleast_2d(U)
        S = U.shape[0]
        try:
            meas, terms, *rest = self._parts(cls, st, U)
        except Exception as exc:  # noqa: BLE001 - recorded, never fatal
            nan = np.full(S, np.nan)
            return Evaluation(nan, np.ones(S, int), nan, nan, {}, [f"error: {exc}"] * S)
        bound = sum(terms.values())
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(bound > 0, meas / bound, np.nan)
        return Evaluation(ratio, self._k_column(rest, S), meas, bound, terms, ["ok"] * S)

    def _k_column(self, rest, S):
        """The evaluation's K per row, from what ``_parts`` returns after (measured, terms)."""
        raise NotImplementedError

    def trajectory(self, cls, st, u):
        ev = self.evaluate(cls, st, np.asarray(u)[None])
        v = float(ev.measured[0])
        terms = {k: np.array([x[0]]) for k, x in ev.terms.items()}
        return np.array([v, v]), np.array([1]), np.array([v]), terms


@dataclass(frozen=True)
class Lemma2Claim(_LemmaClaim):
    def _extra_layout(self, cls, st, r):
        return r.take("arrival_weights", cls.num_workers), r.take("K_per_worker", cls.num_workers)

    def _parts(self, cls, st, U):
        H, C, covs, x0, L, sL, sG, rho, (w, kq), step = self._decode(cls, st, U)
        S, M = H.shape[:2]
        workers = np.sort(np.argsort(-w, axis=1, kind="stable")[:, : st.m], axis=1)
        Ks = 1 + np.minimum((kq * cls.K_max).astype(int), cls.K_max - 1)  # (S, M)
        eta_L = self._eta_L(cls, L, Ks.max(axis=1).astype(float), step)
        E, Q = self._maps(H, C, covs, eta_L, cls.K_max)
        rows = np.arange(S)[:, None]
        Ksel = Ks[rows, workers]  # (S, m)
        Em = E[rows, workers, Ksel - 1]  # (S, m, d, 1+d)
        EG = Em[..., 0] + np.einsum("smij,sj->smi", Em[..., 1:], x0)  # E G_i at the common start x0
        mean = np.sum(EG.sum(axis=1) ** 2, axis=1)
        var = np.trace(Q[rows, workers, Ksel - 1], axis1=2, axis2=3).sum(axis=1)
        terms = {"mean": 2 * mean, "sigma_L": 2 * (1.0 / Ksel).sum(axis=1) * sL**2}
        return mean + var, terms, workers, Ks, eta_L

    def _k_column(self, rest, S):
        return np.ones(S, int)  # one round: no K to report

    def make_instance(self, cls: AssumptionClass, st: Structure, u: np.ndarray, T: int) -> Instance:
        """The candidate ``u`` as a replayable ``Instance`` (horizon ``T``)."""
        _, _, workers, Ks, eta_L = self._parts(cls, st, u[None])
        return self._instance(cls, st, u, workers[0], Ks[0], eta_L[0])


@dataclass(frozen=True)
class DriftClaim(_LemmaClaim):
    def _extra_layout(self, cls, st, r):
        return None

    def _parts(self, cls, st, U):
        H, C, covs, x0, L, sL, sG, rho, _, step = self._decode(cls, st, U)
        S, M, d = H.shape[:3]
        K = st.extra["K"]
        eta_L = self._eta_L(cls, L, float(K), step)
        P = np.eye(d) - eta_L[:, None, None, None] * H
        g = np.einsum("smij,sj->smi", H, x0) - np.einsum("smij,smj->smi", H, C)  # ∇f_i(x0) (x* = 0)
        Sk = np.zeros_like(P)
        Pj = np.broadcast_to(np.eye(d), P.shape).copy()
        noise = np.zeros((S, M))
        best = np.zeros(S)
        worst_k = np.ones(S, int)
        worker = np.zeros(S, int)
        for k in range(1, K + 1):
            Sk += Pj
            noise += np.trace(Pj @ covs @ np.swapaxes(Pj, -1, -2), axis1=2, axis2=3)
            Pj = Pj @ P
            val = (eta_L**2)[:, None] * (np.sum(np.einsum("smij,smj->smi", Sk, g) ** 2, axis=2) + noise)
            v = val.max(axis=1)
            worst_k = np.where(v > best, k, worst_k)
            worker = np.where(v > best, val.argmax(axis=1), worker)
            best = np.maximum(best, v)
        gf = np.sum(np.einsum("sij,sj->si", H.mean(axis=1), x0) ** 2, axis=1)
        terms = {
            "sigma_L": 5 * K * eta_L**2 * sL**2,
            "sigma_G": 30 * K**2 * eta_L**2 * sG**2,
            "gradient": 30 * K**2 * eta_L**2 * gf,
        }
        return best, terms, worst_k, worker, eta_L

    def _k_column(self, rest, S):
        return rest[0]  # the worst k ≤ K

    def make_instance(self, cls: AssumptionClass, st: Structure, u: np.ndarray, T: int) -> Instance:
        """The candidate ``u`` as a replayable ``Instance`` (horizon ``T``)."""
        _, _, kk, worker, eta_L = self._parts(cls, st, u[None])
        Ks = np.full(cls.num_workers, st.extra["K"])
        return self._instance(cls, st, u, [int(worker[0])], Ks, eta_L[0])


register_claim(
    Lemma2Claim(
        "lemma2",
        "Lemma 2: E‖Σ_{i∈M_t} G_i‖² ≤ 2‖Σ E G_i‖² + 2(Σ 1/K_i)σ_L²",
        "[Yang et al. 2022, Lemma 2]",
        "lemma2",
        "AFACD",
        ("fixed",),
        lambda: AssumptionClass(arrivals=("fixed",), K_max=4),
    )
)
register_claim(
    DriftClaim(
        "drift",
        "Bound (1): E‖y_k − x‖² ≤ 5Kη_L²(σ_L² + 6Kσ_G²) + 30K²η_L²‖∇f(x)‖² for k ≤ K, under (C1)",
        "[Yang et al. 2022, bound (1)]",
        "drift",
        "AFACD",
        ("fixed",),
        lambda: AssumptionClass(arrivals=("fixed",), K_max=6),
    )
)
