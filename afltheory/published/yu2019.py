"""Yu, Yang, Zhu, "Parallel Restarted SGD with Faster Convergence and Less Communication: Demystifying Why
Model Averaging Works for Deep Learning", AAAI 2019 (arXiv:1807.06629): Theorem 1 (nonconvex local SGD,
constant step) and its corollary (the linear-speedup step s = √N/(L√T)).

Where and how it was read: the statement is quoted from the lecture notes in the shared seeds
(``/work/shared/seeds/004_…``, the slides "Convergence Results: FedAvg with I.I.D. Datasets", "Theorem 1
([Yu et al. AAAI'19])" and "Corollary 2 ([Yu et al. AAAI'19])") — a secondary source quoting the paper; the
reading sheet (``/work/shared/THEOREMS.md``, section "Local SGD / FedAvg theorems") carries NO confidence
tag on it. The paper itself was searched for with the ``search`` tool (corpus pages): only its abstract and
the first lines of its introduction were retrievable (ar5iv 1807.06629), which fix that each f_i "can be
possibly different for different i" — the theorem text was not. Confidence "read" here means: read in the
notes, verbatim.

Paper letters -> symbols (``afltheory.theory.symbols``, as in ``theory.yu_local_sgd``): γ (the notes' s) ->
``s``; I (the notes' K, the averaging interval) -> ``K``; N workers -> ``N``; T = total local SGD iterations
(NOT rounds) -> ``T``; f(x̄⁰) − f* -> ``Delta``; σ² (variance), G² (second moment) -> ``sigma``, ``G``.

ONE definition of the bound: the terms are ``theory.yu_local_sgd.SETTING_TERM_EXPRS["iid"]`` (read here,
never retyped); the corollary is that bound with s substituted (its printed form is checked against the
substitution by tests/published/test_yu2019.py).
"""

from __future__ import annotations

import sympy as sp

from ..theory import yu_local_sgd as _yu
from ..theory.symbols import Delta, G, K, L, N, T, s, sigma
from ._statement import Location, Statement

__all__ = ["COR2", "COR2_PRINTED", "COR2_STEP", "STATEMENTS", "THM1"]

SOURCE = (
    "lecture notes quoting the paper, shared seed 004, slides 'Convergence Results: FedAvg with I.I.D. "
    "Datasets' (Theorem 1 and Corollary 2 [Yu et al. AAAI'19]; THEOREMS.md: untagged; the paper's abstract "
    "and introduction, ar5iv.labs.arxiv.org/html/1807.06629, retrieved with the `search` tool, corpus pages; "
    "the paper's theorem text not retrieved)"
)

_SEED = "/work/shared/seeds/004_7fb80dd1afdad999.txt"
_CONF = "read (secondary: lecture notes quoting the paper, shared seed 004)"
LOC1 = Location(None, 10968, "Theorem 1 ([Yu et al. AAAI'19]) as quoted", "Yu et al. AAAI'19", path=_SEED)
LOC2 = Location(None, 11455, "Corollary 2 ([Yu et al. AAAI'19]) as quoted", "Yu et al. AAAI'19", path=_SEED)

THM1 = Statement(
    id="yu2019.thm1",
    title="Parallel restarted SGD (local SGD), nonconvex, constant step",
    reference="Yu, Yang, Zhu, AAAI 2019, Theorem 1 (as quoted by the lecture notes)",
    source=SOURCE,
    excerpt=(
        "if $s \\in (0, \\frac{1}{L}]$ ... $\\frac{1}{T} \\sum_{t=1}^T "
        "\\mathbb{E}[\\|\\nabla f(\\bar{\\mathbf{x}}^{t-1})\\|^2] "
        "\\leq \\frac{2}{sT}(f(\\bar{\\mathbf{x}}^0) - f^*) + 4s^2 K^2 G^2 L^2 + \\frac{L}{N}s\\sigma^2$"
    ),
    confidence=_CONF,
    location=LOC1,
    reading=(
        "T counts local SGD iterations (every worker steps once per t); x̄^t = (1/N) Σ_i x_i^t the virtual "
        "average at EVERY iteration, the models averaged every K iterations; σ² bounds the variance and G² "
        "the second moment E‖∇F_i(x, ξ)‖² of one stochastic gradient, for all x and i; f_i may differ (the "
        "paper's introduction) though the notes' slide is titled i.i.d."
    ),
    assumptions={
        "function": "smooth (nonconvex)",
        "noise": "variance σ² and second moment G²",
        "heterogeneity": "identical data (the notes); bounded by G² (the paper)",
        "participation": "full",
    },
    algorithm="local SGD: N workers, constant step s, average the models every K iterations",
    measured="avg_grad_sq of the virtual average: (1/T) Σ_{t=1}^T E‖∇f(x̄^{t−1})‖²",
    bound=dict(_yu.SETTING_TERM_EXPRS["iid"]),
    conditions={"step": sp.Le(s, 1 / L)},
)

#: the corollary's step
COR2_STEP = sp.sqrt(N) / (L * sp.sqrt(T))
#: the corollary's right-hand side as the notes print it (tests: equal to THM1 at s = COR2_STEP)
COR2_PRINTED = {
    "transient": 2 * L / sp.sqrt(N * T) * Delta,
    "sigma": sigma**2 / sp.sqrt(N * T),
    "G_drift": 4 * N / T * K**2 * G**2,
}

COR2 = Statement(
    id="yu2019.cor2",
    title="Parallel restarted SGD at s = √N/(L√T): linear speedup O(1/√(NT))",
    reference="Yu, Yang, Zhu, AAAI 2019, the corollary of Theorem 1 (the notes' Corollary 2; the paper's "
    "numbering not retrieved)",
    source=SOURCE,
    excerpt=(
        "If we let $s = \\frac{\\sqrt{N}}{L\\sqrt{T}}$: ... $\\leq \\frac{2L}{\\sqrt{NT}}"
        "(f(\\bar{x}^0) - f^*) + 4\\frac{N}{T}K^2G^2 + \\frac{1}{\\sqrt{NT}}\\sigma^2$ "
        '$\\simeq O(\\frac{1}{\\sqrt{NT}})$ ← "linear speedup"'
    ),
    confidence=_CONF,
    location=LOC2,
    reading=(
        THM1.reading + " The corollary is Theorem 1 at s = √N/(L√T) (its condition s ≤ 1/L is T ≥ N); the "
        "rate O(1/√(NT)) holds while the G² term 4NK²G²/T is of lower order (K ≤ T^{1/4}/N^{3/4})."
    ),
    assumptions=THM1.assumptions,
    algorithm="local SGD with s = √N/(L√T)",
    measured=THM1.measured,
    bound={k: v.subs(s, COR2_STEP) for k, v in THM1.bound.items()},
    conditions={"step": sp.Le(N, T)},
)

STATEMENTS = (THM1, COR2)
