"""Corollaries 1–3 and Remark 4 of [Yang et al. 2022, Cor 1, Cor 2, Cor 3, Remark 4], derived from the
theorems.

``printed(k)`` is the rate as stated (docs/theorems.md); ``derive(k)`` substitutes η_L = 1/√T and η = √(mK)
(Corollaries 1, 2) or η = √(MK) (Corollary 3), constant K (K̄ = K̃ = K, K̂² = K², or M K² for Theorem 4's
summed K̂²), into the theorem's ``bound_expr()``, expands it, groups the terms by their *order* (the monomial
in T, m, K, M, τ, M − m' obtained by setting L, σ_L, σ_G, f_0 − f_* and numeric factors to 1) and reports,
term by term, whether the printed corollary has it (``agrees``), has a larger term of the same T-power that
dominates it for K, m, M ≥ 1 (``absorbed``), or does not have it (``missing``); and printed terms the
derivation does not produce (``not derived``). Documented mismatches: #4 (Remark 4's second τ threshold) and
#5 (O(K/(MT)) in the proof of Corollary 3 vs O(K/T) by substitution).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import sympy as sp

from .._validation import check_int, check_positive
from . import symbols as S
from . import theorem2, theorem3, theorem4

if TYPE_CHECKING:
    from ..anarchy.schedule import Schedule

__all__ = [
    "CITATION",
    "cor3_readings",
    "cor3_realized",
    "Derivation",
    "derive",
    "derive_terms_only",
    "min_memory_staleness",
    "ORDER_SYMBOLS",
    "printed",
    "printed_rate",
    "PROOF_LISTED",
    "remark4",
    "remark4_numbers",
    "SLIDES_LISTED",
    "substitution",
    "Term",
]

CITATION = "[Yang et al. 2022, Cor 1–3, Remark 4]"
ORDER_SYMBOLS = (S.T, S.m, S.K, S.M, S.tau, S.s_stale)
_UNIT = {S.L: 1, S.sigma_L: 1, S.sigma_G: 1, S.Delta: 1}


def printed(k: int) -> list:
    """The printed rate's terms (orders). Corollary 2's trailing O(K²/T) is uncertain in the extraction."""
    if k == 1:
        return [1 / sp.sqrt(S.m * S.K * S.T), S.tau**2 / S.T, S.K**2 / S.T, sp.Integer(1)]  # O(σ_G²) floor
    if k == 2:
        return [1 / sp.sqrt(S.m * S.K * S.T), S.tau**2 / S.T, S.K**2 / S.T]
    if k == 3:
        return [1 / sp.sqrt(S.M * S.K * S.T), S.tau**2 * S.s_stale**2 / (S.M**2 * S.T)]
    raise ValueError(f"k={k} must be 1, 2 or 3")


def printed_rate(k: int) -> sp.Expr:
    """The printed rate as a sympy sum of its terms (O(·) dropped)."""
    return sp.Add(*printed(k))


#: terms the *proof* of a corollary lists that the statement does not (docs/theorems.md #5)
PROOF_LISTED = {3: [S.K / (S.M * S.T)]}

#: terms the talk slides list for a corollary that the paper's statement does not
SLIDES_LISTED = {3: [S.K**2 / (S.M * S.T)]}


@dataclass
class Term:
    order: sp.Expr  # monomial in T, m, K, M, τ, M_c (= M − m')
    coefficient: sp.Expr  # what multiplies it (in L, σ_L, σ_G, Δ), summed over terms of the same order
    T_power: sp.Rational
    status: str  # "agrees" | "absorbed" | "missing" | "not derived"
    matched: sp.Expr | None = None
    note: str = ""

    def __repr__(self):
        by = " by " + str(self.matched) if self.matched is not None and self.status == "absorbed" else ""
        return f"Term({self.coefficient} * {self.order}: {self.status}{by})"


@dataclass
class Derivation:
    corollary: int
    substituted: sp.Expr  # the bound after substitution
    terms: list[Term]  # derived terms (grouped by order)
    unmatched_printed: list[Term]  # printed terms without a derived counterpart
    leading: Term  # the slowest-decaying term as T → ∞ with m, K, M, τ fixed
    notes: list[str] = field(default_factory=list)
    flags: dict = field(default_factory=dict)  # documented inconsistency id -> True if reproduced

    def term(self, order: sp.Expr) -> Term | None:
        """The derived term of order ``order`` (equal up to simplification), or None."""
        for t in self.terms:
            if sp.simplify(t.order - order) == 0:
                return t
        return None

    @property
    def mismatches(self) -> list[Term]:
        """Terms the derivation has that the printed rate misses, plus printed terms the derivation does not
        produce."""
        return [t for t in self.terms if t.status == "missing"] + self.unmatched_printed

    def report(self) -> str:
        """The derivation as text: each term with its status (matched, absorbed, missing) and notes."""
        lines = [f"Corollary {self.corollary}: substituted bound = {self.substituted}"]
        for t in sorted(self.terms, key=lambda t: -t.T_power):
            lines.append(
                f"  {t.status:>11}: ({t.coefficient}) * {t.order}"
                + (f"  [<= {t.matched}]" if t.status == "absorbed" else "")
                + (f"  {t.note}" if t.note else "")
            )
        for t in self.unmatched_printed:
            lines.append(f"  not derived: printed {t.order}  {t.note}")
        lines += [f"  note: {n}" for n in self.notes]
        return "\n".join(lines)


def _order_and_coeff(term):
    order = sp.Integer(1)
    for f in sp.Mul.make_args(term):
        base, _ = f.as_base_exp()
        if base in ORDER_SYMBOLS:
            order *= f
    coeff = sp.simplify(term / order)
    return sp.powsimp(order, force=True), coeff


def _exp(expr, sym):
    e = sp.Integer(0)
    for f in sp.Mul.make_args(sp.powsimp(sp.expand_power_base(expr, force=True), force=True)):
        b, x = f.as_base_exp()
        if b == sym:
            e += x
    return e


def _T_power(order):
    return _exp(order, S.T)


def _dominated(d, p):
    """d ≤ const · p for all K, m, M ≥ 1, τ ≥ 0, 0 ≤ M_c ≤ M, same T-power."""
    if _T_power(d) != _T_power(p):
        return False
    ratio = sp.powsimp(sp.expand_power_base(d / p, force=True), force=True)
    ex = {sym: _exp(ratio, sym) for sym in ORDER_SYMBOLS}
    if ex[S.tau] != 0:
        return False
    # M_c ≤ M: a positive power of M_c can be traded for the same power of M
    ex[S.M] += max(ex[S.s_stale], 0)
    ex[S.s_stale] = min(ex[S.s_stale], 0)
    if ex[S.s_stale] != 0:
        return False
    return all(ex[sym] <= 0 for sym in (S.m, S.K, S.M))


def _classify(expr, printed_terms, proof_terms=()):
    expanded = sp.expand(sp.powsimp(sp.expand_power_base(sp.expand(expr), force=True), force=True))
    groups: dict = {}
    for term in sp.Add.make_args(expanded):
        order, coeff = _order_and_coeff(term)
        key = sp.srepr(order)
        if key in groups:
            groups[key][1] += coeff
        else:
            groups[key] = [order, coeff]
    terms = []
    used = set()
    for order, coeff in groups.values():
        tp = _T_power(order)
        status, matched, note = "missing", None, ""
        for j, p in enumerate(printed_terms):
            if sp.simplify(sp.powsimp(sp.expand_power_base(order / p, force=True), force=True) - 1) == 0:
                status, matched = "agrees", p
                used.add(j)
                break
        if status == "missing":
            for p in printed_terms:
                if _dominated(order, p):
                    status, matched = "absorbed", p
                    break
        if status == "missing":
            for p in proof_terms:
                if _exp(p, S.K) == _exp(order, S.K) and _T_power(p) == tp:
                    note = f"the proof lists {p} instead"
            note = note or "listed neither in the statement nor in the proof"
        terms.append(Term(order, sp.factor(sp.simplify(coeff)), tp, status, matched, note))
    unmatched = [
        Term(p, sp.Integer(1), _T_power(p), "not derived")
        for j, p in enumerate(printed_terms)
        if j not in used and not any(t.status == "agrees" and t.matched == p for t in terms)
    ]
    leading = max(terms, key=lambda t: t.T_power)
    return terms, unmatched, leading


def substitution(k: int) -> dict[sp.Symbol, sp.Expr]:
    """{η_L: 1/√T, η: √(mK) or √(MK)}."""
    n = S.M if k == 3 else S.m
    return {S.eta_L: 1 / sp.sqrt(S.T), S.eta: sp.sqrt(n * S.K)}


@functools.cache
def derive(k: int, *, khat: str = "sum") -> Derivation:
    """Substitute the corollary's step sizes into its theorem's bound and compare with ``printed(k)``.

    ``khat`` (Corollary 3 only): Theorem 4's K̂_t² as a sum over the M slots ("sum", docs/theorems.md) or a
    mean.
    Cached (sympy simplification is slow): treat the returned ``Derivation`` as read-only.
    """
    printed_terms = printed(k)
    if k == 1:
        rate = theorem2.rate()
    elif k == 2:
        rate = theorem3.rate()
    elif k == 3:
        rate = theorem4.rate(khat).subs(S.m_fresh, S.M - S.s_stale)
    else:
        raise ValueError(f"k={k} must be 1, 2 or 3")
    sub = sp.simplify(rate.subs(substitution(k)))
    terms, unmatched, leading = _classify(sub, printed_terms, PROOF_LISTED.get(k, ()))
    notes = []
    if k == 1:
        notes.append("the T^0 term 6 σ_G² is the O(σ_G²) error ball (Remark 2); it matches Theorem 1's σ_G².")
    if k == 2:
        notes.append("printed O(K²/T) is uncertain (the extracted statement is truncated after O(τ²/T)).")
        r4 = remark4()
        notes.append(
            f"Remark 4: first threshold derived ({r4['derived'][0]['threshold']}); second printed "
            f"threshold {r4['printed'][1]} would need a term {r4['second_needs_term']} "
            f"which the bound does not contain (#4)."
        )
    if k == 3:
        notes.append("#5: the substituted bound has 20 L² σ_L² K/T; the proof lists O(K/(MT)).")
        notes.append(
            "#5 is reading-dependent: the talk slides list O(K²/(MT)), which is the σ_G² term "
            "under the 'mean' reading of K̂_t² (under 'sum' it is O(K²/T)); see cor3_readings()."
        )
        kt = [t for t in terms if t.status == "missing" and _exp(t.order, S.K) == 2]
        if kt:
            notes.append(
                f"(not in #1–#5) the σ_G² term {kt[0].coefficient}·{kt[0].order} "
                f"(khat={khat!r}) is in neither the statement nor the proof's list."
            )
    flags = {}
    if k == 2:
        flags["#4"] = not remark4()["printed_matched"][1]
    if k == 3:
        kt = [t for t in terms if t.status == "missing" and "proof lists" in t.note]
        flags["#5"] = bool(kt) and sp.simplify(kt[0].order - S.K / S.T) == 0
        flags["sigma_G term missing"] = any(
            t.status == "missing" and t.coefficient.has(S.sigma_G) for t in terms
        )
    return Derivation(k, sub, terms, unmatched, leading, notes, flags)


def _same(a, b) -> bool:
    return sp.simplify(sp.powsimp(sp.expand_power_base(a / b, force=True), force=True) - 1) == 0


def cor3_readings() -> dict:
    """Inconsistency #5 is reading-dependent. For each reading of Theorem 4's K̂_t² ("sum" over the M slots,
    as docs/theorems.md encodes it; "mean", as in Theorem 2), the T^{-1} orders of the substituted bound and
    whether the proof's O(K/(MT)) and the talk slides' O(K²/(MT)) match one of them. Under "mean" the slides'
    K²/(MT) is the σ_G² term 120 L² K² σ_G²/(MT); under "sum" that term is K²/T and nothing matches the
    slides. Under both readings the σ_L² drift term is 20 L² K σ_L²/T, which the proof's K/(MT) does not
    match."""
    out = {}
    for kh in ("sum", "mean"):
        d = derive(3, khat=kh)
        t1 = [t for t in d.terms if t.T_power == -1]
        out[kh] = {
            "terms": {str(t.order): str(t.coefficient) for t in t1},
            "proof_K_over_MT_matched": any(_same(t.order, PROOF_LISTED[3][0]) for t in t1),
            "slides_K2_over_MT_matched": any(_same(t.order, SLIDES_LISTED[3][0]) for t in t1),
            "sigma_L_K_over_T": any(_same(t.order, S.K / S.T) and t.coefficient.has(S.sigma_L) for t in t1),
        }
    return out


def min_memory_staleness(M: int, m: int) -> int:
    """With m arrivals per round, at most m memory slots are refreshed per round, so after any round some
    AFA-CS slot is at least ⌈M/m⌉ − 1 rounds old: the memory staleness τ (Theorem 4) is ≥ ⌈M/m⌉ − 1."""
    try:
        M_, m_ = check_int("M", M, low=1), check_int("m", m, low=1)
        check_int("m", m_, high=M_)
    except ValueError as exc:
        raise ValueError(f"m={m!r}, M={M!r}: need integers 1 <= m <= M ({exc})") from None
    return -(-M_ // m_) - 1


def cor3_realized(
    schedule: Schedule, *, K: int, L: float, eta: float | None = None, eta_L: float | None = None
) -> dict:
    """Corollary 3's terms and Theorem 4's conditions on a realized AFA-CS schedule (per replicate).

    Step sizes default to the corollary's η_L = 1/√T, η = √(MK). Returns the leading order 1/√(MKT), the
    stale-memory order τ²(M − m'_t)²/(M²T) averaged over rounds (τ = the realized maximum memory staleness,
    m'_t the realized fresh slots), their ratio, the lower bound ⌈M/m⌉ − 1 on τ, and Theorem 4's conditions at
    (K, τ_max, min_t m'_t). With m fixed the stale order grows with M and the second condition eventually
    fails: the M-speedup of Corollary 3 needs m ∝ M."""
    import numpy as np

    from . import theorem4

    stale, _, mf, tau = theorem4.realized(schedule)
    K, L = check_int("K", K, low=1), check_positive("L", L)
    M, T = schedule.num_workers, schedule.rounds
    eta_L = 1 / np.sqrt(T) if eta_L is None else check_positive("eta_L", eta_L)
    eta = np.sqrt(float(M) * K) if eta is None else check_positive("eta", eta)
    lead = 1 / np.sqrt(float(M) * K * T)
    stale_term = (tau[:, None] ** 2 * (M - mf) ** 2 / (M**2 * T)).mean(axis=1)
    conds = theorem4.conditions(
        L=L, eta=eta, eta_L=eta_L, K_max=K, tau=float(tau.max()), num_workers=M, m_fresh=float(mf.min())
    )
    return {
        "M": M,
        "m": schedule.m,
        "T": T,
        "lead": float(lead),
        "stale_term": stale_term,
        "ratio": stale_term / lead,
        "tau": tau,
        "tau_lower": min_memory_staleness(M, schedule.m),
        "m_fresh_mean": float(mf.mean()),
        "conditions": conds,
        "inside_conditions": all(c.holds for c in conds),
    }


@functools.cache
def remark4():
    """Remark 4's delay thresholds vs the ones implied by Corollary 2's derived τ-terms.

    Derived: each T^{-1} term c·τ^a·g(m, K)/T ≤ 1/√(mKT) solved for τ. Printed: τ ≲ T^{1/4}/(mK)^{1/4} and
    τ ≲ T^{1/2}/(m^{1/2} K^{5/2}); the second corresponds to a term τ K²/T (τ ≤ T^{1/2}/(m^{1/2}K^{5/2}) ⇔
    τK²/T ≤ 1/√(mKT)), which Theorem 3's bound does not contain (#4). Theorem 3's own condition (C3) at
    η_L = 1/√T reads 120 L² K² τ/T < 1, a third, different threshold (τ < T/(120 L² K²)).
    """
    d = derive_terms_only(2)
    target = 1 / sp.sqrt(S.m * S.K * S.T)
    derived = []
    for t in d:
        a = _exp(t.order, S.tau)
        if a > 0:
            thr = sp.powsimp(sp.simplify((target / (t.order / S.tau**a)) ** (1 / a)), force=True)
            derived.append({"term": t.order, "threshold": thr})
    printed_thr = [
        S.T ** sp.Rational(1, 4) / (S.m * S.K) ** sp.Rational(1, 4),
        sp.sqrt(S.T) / (sp.sqrt(S.m) * S.K ** sp.Rational(5, 2)),
    ]
    needs = S.tau * S.K**2 / S.T  # the term whose threshold is printed_thr[1]
    check = sp.simplify((target / (needs / S.tau)) - printed_thr[1])
    matches = [any(sp.simplify(x["threshold"] - p) == 0 for x in derived) for p in printed_thr]
    return {
        "printed": printed_thr,
        "derived": derived,
        "printed_matched": matches,
        "second_needs_term": needs,
        "second_term_check": check == 0,
        "condition_threshold": S.T / (120 * S.L**2 * S.K**2),
    }


@functools.cache
def derive_terms_only(k: int):
    rate = {1: theorem2.rate, 2: theorem3.rate}[k]()
    sub = sp.simplify(rate.subs(substitution(k)))
    terms, _, _ = _classify(sub, printed(k))
    return terms


def remark4_numbers(T: float, m: int, K: int, L: float = 1.0) -> dict:
    """Remark 4's thresholds evaluated at numbers: T > 0 (finite), integers m, K >= 1, L > 0 (finite).
    Evaluated exactly (sympy) and rounded to float: a threshold beyond the float range is inf (or 0.0)."""
    T = check_positive("T", T)
    m = check_int("m", m, low=1)
    K = check_int("K", K, low=1)
    L = check_positive("L", L)
    r = remark4()
    vals = {S.T: T, S.m: m, S.K: K, S.L: L}
    return {
        "printed": [float(p.subs(vals)) for p in r["printed"]],
        "derived": [float(x["threshold"].subs(vals)) for x in r["derived"]],
        "condition": float(r["condition_threshold"].subs(vals)),
    }
