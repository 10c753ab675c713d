"""Instances inside each published statement's conditions, measured EXACTLY by the plain references
(``reference_loops``: exact moment propagation on quadratics, no afltheory code), with the bound
evaluated from the statement's sympy terms. ``run(case)`` -> dict(measured, bound, ratio, terms, conditions).

Each statement has a "tight" instance — chosen so that its dominant term is the one the instance exercises
(noise-only from x*, or init-only, …) — and, where useful, further instances. The control is the claim with
its bound divided by ``CONTROL_FACTOR``: it must FAIL (measured > bound / 10) on the tight instance for the
check to have power; otherwise the table says "no power" with the ratio.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from afltheory.published import fedprox2020, khaled2020, li2020, lian2015, stich2019

from .reference_loops import (
    Quadratics,
    asysg_exact,
    fedavg_exact,
    fedprox_expected_next_f,
    local_sgd_exact,
    prox_point,
)

CONTROL_FACTOR = 10.0
P4 = np.array([0.1, 0.2, 0.3, 0.4])
SIG4 = np.array([1.0, 0.5, 2.0, 1.0])
X0 = np.array([3.0, -2.0])
CROSS = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [0.0, -1.0]])
CURV4 = np.array([np.diag([1.0, 0.5]), np.diag([0.8, 1.0]), np.diag([1.0, 0.6]), np.diag([0.7, 0.9])])


@dataclass
class Case:
    """One instance of one statement: ``measure()`` -> (measured, {symbol name: value})."""

    statement: object
    name: str
    measure: Callable
    tight: bool = False
    notes: str = ""
    extra: dict = field(default_factory=dict)


_RUNS: dict = {}


def run(case: Case) -> dict:
    key = (case.statement.id, case.name)
    if key not in _RUNS:
        _RUNS[key] = _run(case)
    return _RUNS[key]


def _run(case: Case) -> dict:
    measured, values = case.measure()
    st = case.statement
    bound = st.value(values)
    return {
        "id": st.id,
        "case": case.name,
        "measured": float(measured),
        "bound": bound,
        "ratio": float(measured) / bound if bound > 0 else float("inf"),
        "terms": st.term_values(values),
        "conditions": st.conditions_hold(values),
        "tight": case.tight,
    }


# ------------------------------------------------------------------------------ Li et al. 2020
def _li(thm, scheme, Q, x0, E, rounds, m=None):
    def measure():
        mu, L = Q.mu, Q.L
        kappa = L / mu
        gamma = max(8 * kappa, E)
        gaps, G2 = fedavg_exact(
            Q, x0, E, rounds, lambda t: 2 / (mu * (gamma + t)), scheme=scheme, m=m, record_G=True
        )
        vals = dict(
            kappa=kappa,
            gamma=gamma,
            mu=mu,
            L=L,
            K=E,
            T=1 + rounds * E,
            D0=float(np.sum((x0 - Q.x_star) ** 2)),
            sum_p2_sigma2=float(np.sum(Q.p**2 * Q.sigma**2)),
            Gamma=Q.gamma_li(),
            G=float(np.sqrt(G2)),
            m=m or Q.N,
            M=Q.N,
        )
        return gaps[-1], vals

    return measure


_ISO_NOISE = Quadratics(np.array([np.eye(2)] * 4), np.zeros((4, 2)), p=P4, sigma=3 * SIG4)
_ISO_NOISE_U = Quadratics(np.array([np.eye(2)] * 4), np.zeros((4, 2)), sigma=3 * SIG4)
_HET = Quadratics(CURV4, 2 * CROSS, p=P4, sigma=SIG4)
_HET_U = Quadratics(CURV4, 2 * CROSS, sigma=SIG4)

CASES = [
    Case(
        li2020.THM1,
        "noise only, E=1, from x*",
        _li(li2020.THM1, "full", _ISO_NOISE, _ISO_NOISE.x_star, 1, 200),
        tight=True,
    ),
    Case(li2020.THM1, "heterogeneous curvature, E=3", _li(li2020.THM1, "full", _HET, X0, 3, 40)),
    Case(
        li2020.THM2,
        "noise only, E=1, m=2 of 4",
        _li(li2020.THM2, "I", _ISO_NOISE, _ISO_NOISE.x_star, 1, 200, 2),
        tight=True,
    ),
    Case(li2020.THM2, "heterogeneous curvature, E=3, m=2", _li(li2020.THM2, "I", _HET, X0, 3, 40, 2)),
    Case(
        li2020.THM3,
        "noise only, E=1, m=2 of 4",
        _li(li2020.THM3, "II", _ISO_NOISE_U, _ISO_NOISE_U.x_star, 1, 200, 2),
        tight=True,
    ),
    Case(li2020.THM3, "heterogeneous curvature, E=3, m=2", _li(li2020.THM3, "II", _HET_U, X0, 3, 40, 2)),
]


# ------------------------------------------------------------------------------ Stich 2019
def _stich(sig, H, M=4, T=200, x0=None):
    def measure():
        Q = Quadratics(np.array([np.eye(2)] * M), np.zeros((M, 2)), sigma=sig)
        mu = L = 1.0
        a = max(16.0, H)
        w = (a + np.arange(T)) ** 2
        start = Q.x_star if x0 is None else x0
        ex = local_sgd_exact(Q, start, H, T, lambda t: 4 / (mu * (a + t)), avg_weights=w, record_G=True)
        vals = dict(
            mu=mu,
            L=L,
            kappa=1.0,
            a=a,
            H=H,
            T=T,
            M=M,
            S_T=float(w.sum()),
            D0=float(np.sum((start - Q.x_star) ** 2)),
            sigma=sig,
            G=float(np.sqrt(ex["G2"])),
        )
        return ex["avg_gap"], vals

    return measure


CASES += [
    Case(stich2019.THM22, "noise only, H=1, from x*", _stich(2.0, 1), tight=True),
    Case(stich2019.THM22, "noise, H=4, from x0", _stich(2.0, 4, x0=X0)),
]


# ------------------------------------------------------------------------------ Khaled et al. 2020
def _kmr_id(sig, H, eta, T=200, x0=X0, M=4):
    def measure():
        Q = Quadratics(np.array([np.eye(2)] * M), np.zeros((M, 2)), sigma=sig)
        ex = local_sgd_exact(Q, x0, H, T, lambda t: eta)
        vals = dict(
            mu=1.0, L=1.0, eta=eta, H=H, T=T, M=M, D0=float(np.sum((x0 - Q.x_star) ** 2)), sigma_star=sig
        )
        return ex["dist"][-1], vals

    return measure


def _kmr_het(sig, spread, H, T=400, x0=X0, M=4):
    def measure():
        Q = Quadratics(CURV4, spread * CROSS, sigma=sig)  # per-worker curvature: client drift
        L = 1.0
        eta = min(1 / (4 * L), 1 / (10 * L * (H - 1))) if H > 1 else 1 / (4 * L)
        ex = local_sgd_exact(Q, x0, H, T, lambda t: eta, avg_weights=np.ones(T))
        sd2 = float(np.mean([np.sum(Q.grad_k(k, Q.x_star) ** 2) for k in range(M)]) + sig**2)
        vals = dict(
            L=L, eta=eta, H=H, T=T, M=M, D0=float(np.sum((x0 - Q.x_star) ** 2)), sigma_dif=np.sqrt(sd2)
        )
        return ex["avg_gap"], vals

    return measure


CASES += [
    Case(khaled2020.IDENTICAL, "noise, H=1, η=0.1, T=200", _kmr_id(2.0, 1, 0.1), tight=True),
    Case(khaled2020.IDENTICAL, "noise, H=4, η=1/(4L)", _kmr_id(2.0, 4, 0.25)),
    Case(khaled2020.HETEROGENEOUS, "heterogeneous, deterministic, H=4", _kmr_het(0.0, 1.0, 4), tight=True),
    Case(khaled2020.HETEROGENEOUS, "heterogeneous + noise, H=8", _kmr_het(1.0, 3.0, 8)),
]


# ------------------------------------------------------------------------------ Lian et al. 2015
def _lian(m, tau, eta, T, sig=1.0):
    def measure():
        A = np.diag([1.0, 0.5])
        g = asysg_exact(A, np.zeros(2), X0, T, np.full((T, m), tau), eta, sig)
        vals = dict(L=1.0, m=m, tau=tau, eta=eta, T=T, Delta=0.5 * X0 @ A @ X0, sigma=sig)
        return g[:T].mean(), vals

    return measure


CASES += [
    Case(lian2015.THM1, "m=1, τ=0, η=0.2 (noise + transient)", _lian(1, 0, 0.2, 400), tight=True),
    Case(lian2015.THM1, "m=2, τ=3, η=0.05", _lian(2, 3, 0.05, 200)),
    Case(lian2015.THM1, "m=2, τ=4, η=0.02", _lian(2, 4, 0.02, 300)),
]


# ------------------------------------------------------------------------------ FedProx (Li et al. 2020)
@functools.cache
def fedprox_worst_ratio(mu_prox: float, m: int, rounds: int, spread: float = 1.0):
    """Theorem 4's per-round claim f(w^t) − E_S f(w^{t+1}) ≥ ρ_t ‖∇f(w^t)‖² (B read at w^t, exact prox, S = m
    draws with replacement by p, expectation exact by enumeration) along the full-participation path w^t.
    Returns (max_t ρ_t‖∇f(w^t)‖² / decrease_t over the rounds with ρ_t > 0 — ≤ 1 means the claim holds —,
    number of such rounds, B range)."""
    Q = Quadratics(CURV4, spread * CROSS, p=P4)
    w = X0.copy()
    worst, n, Bs = -np.inf, 0, []
    for _ in range(rounds):
        g2 = float(np.sum(Q.grad(w) ** 2))
        B = float(np.sqrt(sum(Q.p[k] * np.sum(Q.grad_k(k, w) ** 2) for k in range(Q.N)) / g2))
        Bs.append(B)
        rho = fedprox2020.THM4.value(dict(L=Q.L, m=m, mu_prox=mu_prox, gamma_inexact=0.0, B=B))
        if rho > 0:
            dec = Q.f(w) - fedprox_expected_next_f(Q, w, mu_prox, m)
            worst = max(worst, rho * g2 / dec)
            n += 1
        w = sum(Q.p[k] * prox_point(Q, k, w, mu_prox) for k in range(Q.N))
    return worst, n, (min(Bs), max(Bs))
