"""Shared machinery for the corollary slope checks: runs at η_L = 1/√T, η = √(nK) and bootstrap slopes."""

from __future__ import annotations

import numpy as np

from afltheory.analysis import bootstrap_slope
from afltheory.anarchy import Behaviour, ConstantSteps, NoDelay, UniformArrivals, UniformDelay
from afltheory.checks import NegativeControl, Verdict

from ._common import expectation


def corollary_run(problem, algo_cls, arrivals, m, K, T, R, seed, tau=0, n_eta=None, prefer_exact=True):
    """(1/T) Σ E‖∇f(x_t)‖² per replicate (MC) or exact, with η_L = 1/√T and η = √(n K) (n = m, or M for
    AFA-CS)."""
    n = m if n_eta is None else n_eta
    beh = Behaviour(arrivals if arrivals is not None else UniformArrivals(m),
                    UniformDelay(tau) if tau else NoDelay(), ConstantSteps(K))
    algo = algo_cls(float(np.sqrt(n * K)), float(1 / np.sqrt(T)))
    return expectation(problem, algo, beh, T, R, seed, prefer_exact=prefer_exact), beh, algo


def lead_fraction(L, Delta, sigma_L, m, K, T, tau, aL_extra):
    """Theory's O(1/√(mKT)) terms (4Δ/(ηη_L T) + 4Lηη_Lσ_L²/(mK)) over the whole bound (σ_G = 0)."""
    x = np.sqrt(m * K / T)
    lead = 4 * Delta / (x * T) + 4 * L * x * sigma_L**2 / (m * K)
    rest = aL_extra(L, x, m, K, T, tau) * 4 * sigma_L**2
    return lead / (lead + rest)


def slope_verdict(id, claim, ref, xs, exps, theory, *, xlabel, seed, fig, tol=0.0, notes="", details=None,
                  wrong=None, also=True, inside_conditions=None):
    """Slope with a 95 % bootstrap CI over replicates (MC) or exact slope within ``tol`` (exact moments).
    ``also``: a further requirement of the claim (e.g. the regime holds on the grid), and-ed into
    ``passed``."""
    exact = all(e.exact for e in exps)
    if exact:
        from afltheory.analysis import fit_slope
        fit = fit_slope(xs, [e.time_avg for e in exps])
        method = "exact moments"
        tolerance = f"|slope − ({theory})| ≤ {tol}"
    else:
        fit = bootstrap_slope(xs, [e.samples for e in exps], seed=seed, level=0.95)
        method = f"monte-carlo (R={len(exps[0].samples)}), 95 % percentile bootstrap over replicates"
        tolerance = f"95 % bootstrap CI (widened by {tol}) contains {theory}"
    ok = fit.contains(theory, tol)
    wrong = theory + 0.5 if wrong is None else wrong
    nc = NegativeControl(description=f"same fit tested against the wrong slope {wrong:g}", measured=fit.slope,
                         theoretical=wrong, passed=fit.contains(wrong, tol))
    return Verdict(id=id, claim=claim, reference=ref, measured=fit.slope, ci=fit.ci, theoretical=theory,
                   tolerance=tolerance, passed=bool(ok and also), figures=[fig] if fig else [],
                   negative_control=nc,
                   method=method, notes=notes, inside_conditions=inside_conditions,
                   details=dict(details or {}, x=list(map(float, xs)), y=list(map(float, fit.y)))), fit
