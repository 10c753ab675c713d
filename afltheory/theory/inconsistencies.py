"""Register of the paper's inconsistencies #1–#5 [Yang et al. 2022] (docs/theorems.md), each with a
demonstration.

Every ``demonstrate()`` is computable without the simulation engine (closed forms, sympy, hand-built
Schedules) and returns a dict of numbers; ``shown`` is True when the numbers exhibit the inconsistency.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .._validation import check_int, check_positive

__all__ = ["BY_ID", "demo_1", "demo_2", "demo_3", "demo_4", "demo_5", "get", "Inconsistency", "REGISTER"]


@dataclass(frozen=True)
class Inconsistency:
    id: str
    title: str
    description: str
    where: str
    demonstrate: Callable[[], dict]


def _gd_factor(step_server: float, eta_L: float, L: float, K: int) -> float:
    """x_{t+1} = ρ x_t for AFA-CD on f = (L/2) x² (τ = 0, K local steps, σ = 0) with server step
    x_{t+1} = x_t − step_server · G_t, G_t = (1/K) Σ_k L y_k, y_k = (1 − η_L L)^k x_t."""
    q = np.float64(1.0 - eta_L * L)
    with np.errstate(over="ignore", invalid="ignore"):  # IEEE: an overflow is ±inf, never an error
        avg = np.mean(q ** np.arange(K)) if K <= 1024 else np.nan
        if not np.isfinite(avg):  # closed form (1 − q^K) / (K (1 − q)), q ≠ 1 here (q = 1 sums to 1)
            avg = 1.0 if q == 1.0 else (1.0 - q ** np.float64(K)) / (K * (1.0 - q))
        return float(1.0 - np.float64(step_server) * L * avg)


def demo_1(eta: float = 1.0, eta_L: float = 0.1, L: float = 3.0, K: int = 1, T: int = 20) -> dict:
    """Algorithm 2 as printed (step η) vs as proved (step η η_L) on f = (L/2)x², x_0 = 1, with Theorem 2's
    conditions at τ = 0 (they only constrain η η_L, so they hold for both readings)."""
    from . import theorem2

    eta, eta_L, L = check_positive("eta", eta), check_positive("eta_L", eta_L), check_positive("L", L)
    K, T = check_int("K", K, low=1), check_int("T", T, low=1)
    rho_printed = _gd_factor(eta, eta_L, L, K)
    rho_proved = _gd_factor(eta * eta_L, eta_L, L, K)
    conds = theorem2.conditions(L=L, eta=eta, eta_L=eta_L, K_max=K, tau=0)
    with np.errstate(over="ignore"):
        x_T = [float(np.float64(r) ** np.float64(T)) for r in (rho_printed, rho_proved)]
    return {
        "rho_printed": rho_printed,
        "rho_proved": rho_proved,
        "x_T_printed": x_T[0],
        "x_T_proved": x_T[1],
        "T": T,
        "conditions_hold": all(c.holds for c in conds),
        "C3_slack": conds[2].slack,
        "C3_if_step_were_eta": 2 * L * eta,  # (C3) at τ=0 with η η_L replaced by the printed step η
        "shown": bool(all(c.holds for c in conds) and abs(rho_printed) > 1 >= abs(rho_proved)),
    }


def _tiny_schedule_3():
    from afltheory.anarchy.schedule import Schedule

    # M = 3, m = 1: worker 0 arrives every round with K = 10; workers 1, 2 keep their warm-start K = 1.
    w = np.array([[[0], [0], [0]]])
    d = np.zeros_like(w)
    k = np.full_like(w, 10)
    return Schedule(w, d, k, num_workers=3, init_local_steps=np.array([[1, 1, 1]]))


def demo_2() -> dict:
    """Theorem 3's printed left side has an extra "2" (possibly the ℓ2-norm subscript lost in extraction,
    possibly a factor): read as a factor on the left, the bound is 2× tighter than what the proof
    establishes."""
    from afltheory.problems import Constants

    from . import theorem3

    c = Constants(L=1.0, mu=0.0, sigma_L=1.0, sigma_G=1.0, f_star=0.0, x_star=None)
    b = float(theorem3.bound(_tiny_schedule_3(), c, eta=1.0, eta_L=0.01, f0=1.0)[0])
    return {"bound_as_proved": b, "bound_as_printed_with_factor_2": b / 2, "ratio": 2.0, "shown": True}


def demo_3() -> dict:
    """K̃_t, K̂_t² over M_t (statement, "as in Theorem 2") vs over all M (the proof's (b9)) on a schedule
    where only a worker with K = 10 arrives and the others sit at K = 1."""
    from afltheory.problems import Constants

    from . import theorem3

    s = _tiny_schedule_3()
    c = Constants(L=1.0, mu=0.0, sigma_L=1.0, sigma_G=1.0, f_star=0.0, x_star=None)
    _, kt_s, kh_s = theorem3.k_averages(s, "statement")
    _, kt_p, kh_p = theorem3.k_averages(s, "proof")
    bs = float(theorem3.bound(s, c, eta=1.0, eta_L=0.01, f0=1.0, averaging="statement")[0])
    bp = float(theorem3.bound(s, c, eta=1.0, eta_L=0.01, f0=1.0, averaging="proof")[0])
    return {
        "Ktilde_statement": float(kt_s.mean()),
        "Ktilde_proof": float(kt_p.mean()),
        "Khat2_statement": float(kh_s.mean()),
        "Khat2_proof": float(kh_p.mean()),
        "bound_statement": bs,
        "bound_proof": bp,
        "shown": abs(bs - bp) > 1e-12,
    }


def demo_4(T: float = 1e4, m: int = 5, K: int = 5) -> dict:
    """Remark 4's second threshold T^{1/2}/(m^{1/2}K^{5/2}) matches no term of Corollary 2's derivation."""
    from . import corollaries

    r = corollaries.remark4()
    num = corollaries.remark4_numbers(T, m, K)
    return {
        "printed_thresholds": num["printed"],
        "derived_thresholds": num["derived"],
        "condition_C3_threshold": num["condition"],
        "printed_matched": r["printed_matched"],
        "second_needs_term": str(r["second_needs_term"]),
        "shown": not r["printed_matched"][1],
    }


def demo_5(M: int = 10, K: int = 5, T: float = 1e3, L: float = 1.0) -> dict:
    """Corollary 3: substituting η_L = 1/√T into 4·5 L² η_L² K gives 20 L² K/T; the proof lists O(K/(MT))."""
    from . import corollaries

    M, K = check_int("M", M, low=1), check_int("K", K, low=1)
    T, L = check_positive("T", T), check_positive("L", L)
    d = corollaries.derive(3)
    with np.errstate(over="ignore", under="ignore"):  # IEEE: ±inf / 0.0 beyond the float range
        derived = float(20 * np.float64(L) ** 2 * K / T)
        claimed = float(np.float64(K) / (np.float64(M) * T))
        ratio = float(20 * np.float64(L) ** 2 * M)  # derived / claimed, exactly (never 0/0 or inf/inf)
    return {
        "derived_term": derived,
        "proof_term_K_over_MT": claimed,
        "ratio": ratio,
        "flags": d.flags,
        "shown": bool(d.flags.get("#5")),
    }


REGISTER = (
    Inconsistency(
        "#1",
        "server step η vs η η_L",
        "Algorithms 2 and 3 print x_{t+1} = x_t − η G_t; every proof uses x_{t+1} − x_t = −η η_L G_t.",
        "Algorithm 2 (Sec. 4.1), Algorithm 3 (Sec. 4.2) vs Appendix B.2, B.3, C",
        demo_1,
    ),
    Inconsistency(
        "#2",
        "stray factor 2 in Theorem 3",
        "The printed left side of Theorem 3 carries an extra '2' absent from the proof's last line.",
        "Theorem 3 statement (Sec. 4.1 and Appendix B.3)",
        demo_2,
    ),
    Inconsistency(
        "#3",
        "K̃_t, K̂_t² over M_t or over M",
        "Theorem 3 says 'other parameters as in Theorem 2' (means "
        "over M_t); the proof's (b9) takes means over all M workers.",
        "Theorem 3 statement vs Appendix B.3, step (b9)",
        demo_3,
    ),
    Inconsistency(
        "#4",
        "Remark 4's second τ threshold",
        "τ ≲ T^{1/2}/(m^{1/2}K^{5/2}) corresponds to a τK²/T term that Corollary 2 does not have.",
        "Remark 4 (Sec. 4.1)",
        demo_4,
    ),
    Inconsistency(
        "#5",
        "O(K/(MT)) vs O(K/T) in Corollary 3",
        "The proof of Corollary 3 lists O(K/(MT)); substituting η_L = 1/√T into α_L gives O(K/T).",
        "Proof of Corollary 3 (Appendix C)",
        demo_5,
    ),
)

BY_ID = {e.id: e for e in REGISTER}


def get(id_: str) -> Inconsistency:
    """The register entry ``id_``; ValueError naming the known ids otherwise."""
    if not isinstance(id_, str) or id_ not in BY_ID:
        raise ValueError(f"id={id_!r} must be one of {sorted(BY_ID)}")
    return BY_ID[id_]
