"""The paper's theorems as ``Claim`` objects [Yang et al. 2022, Thm 2–4]: the bounds are the theory modules'
``TERM_EXPRS`` and the conditions their ``SPECS`` — the same expressions, not copies — so ``verify``, the
adversary (which evaluates ``TERM_EXPRS`` on expected statistics) and the paper checks read one statement.
Readings and confidence: docs/theorems.md (generated from these claims' fields where stated)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..algorithms import AFACD, AFACS
from ..pep.theorems import SETUPS as BRACKETS
from ..theory import compression as TC
from ..theory import theorem2, theorem3, theorem4
from ._claim import Assumptions, Claim, Location
from .symbols import D0, zeta_star

__all__ = ["COMPRESSED_DISTRIBUTED_GD", "PAPER_CLAIMS", "THEOREM2", "THEOREM3", "THEOREM4"]

_SOURCE = (
    "Yang, Zhang, Khanduri, Liu, ICML 2022 (arXiv:2204.09364); read from the source documents, "
    "docs/theorems.md"
)


def _where(offset: int, theorem: str, heading: str) -> Location:
    """Where docs/theorems.md states it: the character offset of its section heading ``heading``."""
    return Location(None, offset, theorem, heading, path="docs/theorems.md")


def _conditions(module: Any) -> dict:
    return {s.name: s.expr for s in module.SPECS}


def _theorem4_statistics(trace: Any, problem: Any, algorithm: Any) -> dict[str, np.ndarray]:
    """Theorem 4's run averages over the M memory slots (``theorem4.realized``): Kbar, Ktilde, Khat2 (sum
    over slots), Qstale, τ = the largest memory staleness, and m' = the fewest fresh slots."""
    _, Ks, mf, tau = theorem4.realized(trace.schedule)
    M = trace.schedule.num_workers
    inv_kbar = (1.0 / Ks).mean(axis=-1)
    return {
        "Kbar": 1.0 / inv_kbar.mean(axis=1),
        "Ktilde": Ks.mean(axis=-1).mean(axis=1),
        "Khat2": (Ks**2).sum(axis=-1).mean(axis=1),
        "tau": tau,
        "Qstale": (((M - mf) ** 2 / M**2) * inv_kbar).mean(axis=1),
        "m'": mf.min(axis=1).astype(float),
    }


def _theorem(
    n: int, module: Any, rule: Any, participation: str, title: str, offset: int, heading: str, **kw
) -> Claim:
    """Theorem ``n`` of the paper: its bound ``module.TERM_EXPRS`` and conditions ``module.SPECS`` (the same
    expressions, not copies), the class L-smooth with σ_L² noise and σ_G heterogeneity, the average squared
    gradient norm, located at ``offset`` of docs/theorems.md (its section ``heading``)."""
    return Claim(
        id=f"yang2022.thm{n}",
        title=title,
        assumptions=Assumptions(
            function="smooth", noise="variance", heterogeneity="sigma_G_max", participation=participation
        ),
        rule=rule,
        measured="avg_grad_sq",
        bound=module.TERM_EXPRS,
        conditions=_conditions(module),
        reference=module.CITATION,
        source=_SOURCE,
        confidence="read",
        location=_where(offset, f"Theorem {n}", heading),
        setups={"pep_bracket": BRACKETS[f"thm{n}"]},
        **kw,
    )


THEOREM2 = _theorem(
    2,
    theorem2,
    AFACD,
    "arbitrary",
    "AFA-CD, general arrivals: (1/T) Σ E‖∇f(x_t)‖² bound",
    2593,
    "## Theorem 2 — AFA-CD",
    reading="server step x − η η_L G (the proofs' step, inconsistency #1); worker returns the mean of its K "
    "gradients; the K̃ term from the proof",
)
THEOREM3 = _theorem(
    3,
    theorem3,
    AFACD,
    "uniform",
    "AFA-CD, uniform arrivals: (1/T) Σ E‖∇f(x_t)‖² bound",
    3319,
    "## Theorem 3 — AFA-CD",
    reading="as Theorem 2; K̃_t and K̂_t² averaged over the arrivals (averaging='statement')",
)
THEOREM4 = _theorem(
    4,
    theorem4,
    AFACS,
    "arbitrary",
    "AFA-CS (memory of all M workers): (1/T) Σ E‖∇f(x_t)‖² bound",
    5688,
    "## Theorem 4 — AFA-CS",
    statistics=_theorem4_statistics,
    extra_symbols={
        "Qstale": "(1/T) Σ_t ((M − m'_t)/M)² / K̄_t over the memory slots",
        "m'": "the fewest fresh memory slots of a round",
    },
    reading="K̂_t² a sum over all M slots (khat='sum'); f_* read as f* (a valid, weaker numerator than "
    "f(x_T))",
)


def _omega(trace: Any, problem: Any, algorithm: Any) -> dict[str, np.ndarray]:
    """ω of the rule's unbiased compressor at the problem's dimension (0 without a compressor)."""
    comp = getattr(algorithm, "compressor", None)
    return {"omega": np.full(trace.replicates, 0.0 if comp is None else float(comp.omega(problem.dim)))}


COMPRESSED_DISTRIBUTED_GD = Claim(
    id="compression.distributed_gd",
    title="distributed compressed GD: E‖x_k − x*‖² ≤ (1 − γμ)^k D_0 + 2γωζ*²/(μn)",
    assumptions=Assumptions.synchronous("strongly_convex", "none", "zeta_star", local_steps=1),
    rule=AFACD,
    measured="last_dist_sq",
    bound={"transient": TC.COMPRESSED_GD_BOUND, "floor": TC.DISTRIBUTED_FLOOR},
    conditions={"step": TC.gamma <= TC.DISTRIBUTED_STEP},
    values={"gamma": "eta*eta_L", "k": "T", "n": "M", "D_0": D0, "zeta_star^2": zeta_star**2},
    statistics=_omega,
    extra_symbols={"omega": "the compressor's certified ω (C ∈ U(ω)) at the dimension"},
    reference=TC.CITATION,
    source="docs/theorems.md 'Compression' (from the source documents)",
    confidence="read",
    location=_where(12088, "Compression: distributed compressed GD", "## Compression — the claims to verify"),
    reading="x⁺ = x − γ (1/n) Σ C_i(∇f_i(x)): AFA-CD with η η_L = γ, every worker every round, K = 1, τ = 0; "
    "ζ*² = (1/n) Σ‖∇f_i(x*)‖² (the floor's [M]-marked derivation, docs/compression.md)",
)

#: id -> claim
PAPER_CLAIMS = {c.id: c for c in (THEOREM2, THEOREM3, THEOREM4, COMPRESSED_DISTRIBUTED_GD)}
