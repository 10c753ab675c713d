"""Verdicts with power over the published transcriptions (issue 45 item 1): every published statement with a
formula-level transcription (``Claim.transcription``: the located formula as printed, in LaTeX) has its bound
recomputed from that text — parsed by sympy's LaTeX parser, the transcription's definitions (Li et al.'s B,
C, …) substituted, its symbols mapped onto the package's — and compared with the bound as every reader
sees it (``theory.terms_in_force`` of the statement's terms: what ``Claim.bound``/``Claim.terms``, the
published checks and the table read).

- ``power_transcriptions.symbolic`` — the number of statements whose sympy bound differs from the parsed
  LaTeX (0 after ``expand``: equal; a nonzero exact value at a rational point: different; else
  ``simplify`` decides) must be 0.
- ``power_transcriptions.numeric`` — the bound through the one numeric evaluation of bound terms
  (``theory.evaluate_terms``, the path of every numeric verdict) against the lambdified LaTeX at 12 random
  points per statement (each symbol uniform in [0.5, 3], fixed seed): max relative difference ≤ 1e-10.

Negative control of both (a real slip resembles it): the same comparison with each bound's first term × 3/2
(a constant of the module's transcription read wrong), which must differ for every statement — the symbolic
verdict requires all of them to be detected (its power on this corpus).
A bound verdict cannot see a looser constant ("measured ≤ bound" still holds), so these two are the
verdicts that kill a transcription slip such as the catalogue's ``li2020.init_looser``.

Cost (quick tier): 1.9 CPU-s for the two verdicts over 17 statements in a fresh process (sympy's ANTLR
LaTeX parsing dominates), 0.5 CPU-s on a second call (the parses are cached).
"""

from __future__ import annotations

import functools
import re

import numpy as np
import sympy as sp
from sympy.core.function import AppliedUndef

from afltheory.checks import AtMost, ControlMeasurement, Near, Verdict
from afltheory.published import STATEMENTS
from afltheory.theory import evaluate_terms, terms_in_force

from .registry import register

__all__ = ["differs", "run", "run_comparisons", "scaled_first_term", "transcribed"]

REF = "[the located formulas of afltheory.published (Claim.transcription), issue 40; issue 45 item 1]"
POINTS, TOL = 12, 1e-10


@functools.lru_cache(maxsize=256)
def _parse(tex: str) -> sp.Expr:
    from sympy.parsing.latex import parse_latex

    # \bar{\mu} would parse as the product bar·μ: name it \mu_{b}
    return parse_latex(re.sub(r"\\bar\{\\(\w+)\}", r"\\\1_{b}", tex))


def transcribed(st, bound: str | None = None) -> sp.Expr:
    """The statement's transcribed bound (``bound``: a replacement LaTeX text) parsed, its definitions
    substituted and its symbols mapped onto the package's; ValueError when a symbol has no entry in the map
    or a product parsed as a function call."""
    tr = st.transcription
    expr = _parse(tr.bound if bound is None else bound)
    expr = expr.subs({sp.Symbol(k): _parse(v) for k, v in tr.definitions.items()}, simultaneous=True)
    calls = expr.atoms(AppliedUndef)
    unknown = {str(s) for s in expr.free_symbols} - set(tr.symbols)
    if calls or unknown:
        raise ValueError(
            f"{st.id}: the transcription parses with function calls {sorted(map(str, calls))} / unmapped "
            f"symbols {sorted(unknown)}"
        )
    return expr.subs({sp.Symbol(k): v for k, v in tr.symbols.items()}, simultaneous=True)


def scaled_first_term(terms: dict) -> dict:
    """``terms`` with its first term × 3/2 (a constant of the module's transcription read wrong)."""
    k = next(iter(terms))
    return {**terms, k: terms[k] * sp.Rational(3, 2)}


def differs(terms: dict, expr: sp.Expr) -> bool:
    """Whether the sum of ``terms`` differs from ``expr`` as expressions: 0 after ``expand`` is equal; else a
    nonzero exact value at a rational point is different; else ``simplify`` decides."""
    d = sp.expand(sum(terms.values(), sp.Integer(0)) - expr)
    if d == 0:
        return False
    point = {x: sp.Rational(7 + 3 * i, 5 + 2 * i) for i, x in enumerate(sorted(d.free_symbols, key=str))}
    v = d.subs(point).evalf(30)
    if v.is_number and v.is_finite and abs(v) > 1e-20:
        return True
    return sp.simplify(d) != 0


def _numeric_error(terms: dict, expr: sp.Expr, rng: np.random.Generator) -> float:
    """Max relative difference at ``POINTS`` random points: ``evaluate_terms`` of ``terms`` (which applies
    the terms in force itself) vs the lambdified transcription (points where either side is not finite are
    skipped)."""
    free = set().union(*(sp.sympify(e).free_symbols for e in terms.values())) | expr.free_symbols
    free = sorted(free, key=str)
    f = sp.lambdify(free, expr, "numpy")
    worst = 0.0
    for _ in range(POINTS):
        x = rng.uniform(0.5, 3.0, len(free))
        values = {str(s): float(v) for s, v in zip(free, x, strict=True)}
        with np.errstate(all="ignore"):
            a = float(sum(np.asarray(v, dtype=float) for v in evaluate_terms(terms, values).values()))
            b = float(f(*x))
        if np.isfinite(a) and np.isfinite(b):
            worst = max(worst, abs(a - b) / max(abs(a), abs(b), 1e-300))
    return worst


def run_comparisons(ctx) -> dict:
    """Per statement with a transcription: whether the bound in force differs from the parsed LaTeX
    (symbolically) and their numeric difference, for the bound in force and for the control (its first term
    × 3/2)."""
    out = {}
    for st in STATEMENTS.values():
        if st.transcription is None:
            continue
        tex = transcribed(st)
        terms = terms_in_force(st.bound)  # what every reader sees (a transcription mutant acts here)
        wrong = scaled_first_term(terms)
        seed = ctx.seed_for("power_transcriptions", st.id)
        out[st.id] = {
            "symbolic": differs(terms, tex),
            "symbolic_control": differs(wrong, tex),
            # st.bound, not terms: evaluate_terms applies the terms in force itself (never twice)
            "numeric": _numeric_error(st.bound, tex, np.random.default_rng(seed)),
            "numeric_control": _numeric_error(wrong, tex, np.random.default_rng(seed)),
        }
    return out


@register(
    "power_transcriptions",
    "published bounds recomputed from their located LaTeX transcriptions, symbolically and at random points",
    REF,
)
def run(ctx):
    """The two transcription verdicts (issue 45 item 1)."""
    res = run_comparisons(ctx)
    n = len(res)
    wrong = sorted(k for k, r in res.items() if r["symbolic"])
    caught = sum(r["symbolic_control"] for r in res.values())
    sym = Verdict.judged(
        id="power_transcriptions.symbolic",
        claim=f"each of the {n} published bounds with a transcription equals its located LaTeX formula "
        "(parsed, definitions substituted, symbols mapped), symbolically",
        reference=REF,
        measured=len(wrong),
        theoretical=0,
        relation="==",
        criterion=AtMost(limit=0, text="no statement whose sympy bound differs from its parsed LaTeX"),
        requires={"every control slip detected": caught == n},
        quantity="statements whose bound differs from its transcription",
        method="sympy parse_latex of Claim.transcription vs theory.terms_in_force(Claim.bound): expand, then "
        "simplify of the difference",
        notes=(f"differ: {', '.join(wrong)}; " if wrong else "")
        + f"a first term × 3/2 detected in {caught} of {n}",
        details={
            k: {"differs": r["symbolic"], "control_differs": r["symbolic_control"]} for k, r in res.items()
        },
        inside_conditions=None,
        control=ControlMeasurement(
            description="the same comparison with each bound's first term × 3/2 (a constant transcribed "
            "wrong): "
            "statements that differ",
            measured=caught,
            theoretical=0,
        ),
    )
    err = max(r["numeric"] for r in res.values())
    ctl = min(r["numeric_control"] for r in res.values())
    num = Verdict.judged(
        id="power_transcriptions.numeric",
        claim=f"each of the {n} published bounds, through the numeric evaluation every verdict uses, equals "
        f"its located LaTeX formula at {POINTS} random points",
        reference=REF,
        measured=err,
        theoretical=0.0,
        relation="~=",
        criterion=Near(tol=TOL, text=f"max relative difference ≤ {TOL:g}"),
        quantity="max relative difference over statements and points",
        method=f"theory.evaluate_terms(Claim.bound) vs the lambdified parsed LaTeX, {POINTS} points per "
        "statement, every symbol uniform in [0.5, 3]",
        notes="worst: " + max(res, key=lambda k: res[k]["numeric"]) + f" {err:.2g}; control: smallest "
        f"{ctl:.3g} ({min(res, key=lambda k: res[k]['numeric_control'])})",
        details={k: {"error": r["numeric"], "control_error": r["numeric_control"]} for k, r in res.items()},
        inside_conditions=None,
        control=ControlMeasurement(
            description="the same comparison with each bound's first term × 3/2 (a constant transcribed "
            "wrong): "
            "the smallest maximal difference over the statements",
            measured=ctl,
            theoretical=0.0,
        ),
    )
    return [sym, num]
