"""Theorems 2–4 at σ_L = 0 certified over the whole function class by performance estimation (PEP).

For each theorem, on a small configuration inside its conditions (``afltheory.pep.theorems.bracket``: L = 1,
Δ = f(x_0) − f_* = 1, σ_G = 0.1, M = m + 1, max-delay schedule; η_L = 0.9 × its largest allowed value, η the
largest admissible), the verdict is "PEP upper bound ≤ theorem's bound": the worst (1/T) Σ_{t<T} ‖∇f(x_t)‖²
over *every* family of L-smooth f_i with that σ_G and Δ, on that schedule, is at most the bound. The bracket
[lower, upper] (lower = best certified quadratic instance simulated by the engine) is reported next to it, so
the reader sees how loose the theorem is from both sides. Negative control: the bound without its transient
term (the plausible mistake "the σ_G terms alone bound the error") must be exceeded by the PEP value.
Quick tier: (m, K, T, τ) = (3, 2, 5, 1); full tier adds (3, 3, 6, 2) and σ_G = 0.5. Needs the 'pep' extra.
"""

from __future__ import annotations

import dataclasses

from afltheory.checks import NegativeControl, Verdict

from .registry import register

REF = "[Yang et al. 2022, Thm 2–4] at σ_L = 0; PEP: Taylor, Hendrickx & Glineur 2017"
SIZES_QUICK = ((3, 2, 5, 1, 0.1),)
SIZES_FULL = ((3, 2, 5, 1, 0.1), (3, 2, 5, 1, 0.5), (3, 3, 6, 2, 0.1))
_FIELDS = {f.name for f in dataclasses.fields(Verdict)}


def _verdict(**kw):
    """Build a Verdict with the fields this version of ``Verdict`` has (the checks API is being unified)."""
    kw.setdefault("ci", None)
    return Verdict(**{k: v for k, v in kw.items() if k in _FIELDS})


def verdict_for(b) -> Verdict:
    c = b.config
    size = f"(M, m, K, T, τ) = ({c['M']}, {c['m']}, {c['K']}, {c['T']}, {c['tau']}), σ_G = {c['sigma_G']}"
    passed = bool(b.certified and b.holds and b.inside_conditions)
    up = b.upper if b.upper is not None else float("inf")
    control = NegativeControl(description=f"{b.claim} bound without its transient term ({b.control:.4g})",
                              measured=up,
                              theoretical=b.control, passed=bool(b.upper is not None and b.upper <=
                              b.control))
    shares = {k: v / b.bound for k, v in b.terms.items()}
    return _verdict(
        id=f"pep.{b.claim}.m{c['m']}K{c['K']}T{c['T']}tau{c['tau']}sG{c['sigma_G']:g}",
        claim=f"{b.claim}: worst case over every L-smooth family (PEP) ≤ bound, σ_L = 0, {size}",
        reference=REF, measured=up, theoretical=b.bound,
        tolerance="certified SDP dual value (rel. gap ≤ 1e-4)",
        passed=passed, relation="<=", slack=None if b.upper is None else b.bound / b.upper,
        method=f"PEP (PEPit + Clarabel, Gram {b.gram_size}, {b.seconds:.1f} s, status {b.status})",
        notes=(f"bracket [{b.lower:.4g}, {up:.4g}] vs bound {b.bound:.4g} (upper/bound {up / b.bound:.3g}); "
               f"{b.search}; η = {b.eta:.4g}, η_L = {b.eta_L:.4g}; "
               + ("inside the conditions" if b.inside_conditions
                  else "OUTSIDE: " + "; ".join(b.scope_problems))),
        negative_control=control, inside_conditions=b.inside_conditions, terms=shares,
        details=dict(lower=b.lower, upper=b.upper, bound=b.bound, control=b.control, terms=b.terms,
                     seconds=b.seconds, status=b.status, schedule=b.schedule, lower_method=b.lower_method))


@register("pep", "PEP: Theorems 2–4 certified over the function class at σ_L = 0", REF, slow=True)
def run(ctx):
    from afltheory.pep import bracket

    out = []
    for m, K, T, tau, sG in (SIZES_QUICK if ctx.quick else SIZES_FULL):
        for claim in ("thm2", "thm3", "thm4"):
            out.append(verdict_for(bracket(claim, m=m, K=K, T=T, tau=tau, sigma_G=sG)))
    return out
