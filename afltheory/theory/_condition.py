"""Common helpers: named learning-rate conditions, exact admissible step sizes, argument checks.

A ``Condition`` is one inequality of a theorem's hypothesis, ``lhs ≤ rhs`` (or ``<``), with its sympy
relation (``expr``), its numeric sides, ``holds`` and ``slack = rhs − lhs`` (positive inside, zero on the
boundary, negative outside; for a strict inequality the boundary itself is outside).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import sympy as sp

from .._validation import as_array, check_alloc, check_int, check_nonnegative, check_positive, check_real
from . import symbols as S


@dataclass(frozen=True)
class Condition:
    """One hypothesis ``lhs (≤|<) rhs`` evaluated at given numbers."""

    name: str
    expr: sp.core.relational.Relational  # symbolic relation, e.g. 6 η_L²(2K²−3K+1)L² ≤ 1
    lhs: float
    rhs: float
    strict: bool
    description: str = ""
    involves_eta: bool = False

    @property
    def slack(self) -> float:
        """rhs − lhs (≥ 0 when a non-strict condition holds)."""
        return self.rhs - self.lhs

    @property
    def rel_slack(self) -> float:
        """slack / rhs: the fraction of the allowed budget left (negative when violated)."""
        return self.slack / self.rhs if self.rhs else math.copysign(math.inf, self.slack)

    @property
    def holds(self) -> bool:
        """lhs ≤ rhs (lhs < rhs for a strict condition)."""
        return self.lhs < self.rhs if self.strict else self.lhs <= self.rhs

    def __repr__(self):
        op = "<" if self.strict else "<="
        return (
            f"Condition({self.name}: {self.lhs:.6g} {op} {self.rhs:.6g}, holds={self.holds}, "
            f"slack={self.slack:.6g})"
        )


@dataclass(frozen=True)
class ConditionSpec:
    """A condition template: sympy lhs/rhs and an independent plain-numpy evaluator of both sides."""

    name: str
    lhs: sp.Expr
    rhs: sp.Expr
    strict: bool
    numeric: Callable[..., tuple]  # numeric(**values) -> (lhs, rhs), vectorized over numpy arrays
    description: str = ""

    @property
    def expr(self):
        return sp.StrictLessThan(self.lhs, self.rhs) if self.strict else sp.LessThan(self.lhs, self.rhs)

    @property
    def free_symbols(self):
        return self.lhs.free_symbols | self.rhs.free_symbols

    def evaluate(self, values: Mapping[str, float], involves_eta_sym=None) -> Condition:
        try:
            lhs, rhs = self.numeric(**values)
        except (OverflowError, ZeroDivisionError):  # Python floats raise; IEEE arithmetic gives ±inf instead
            as_np = {
                k: np.float64(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else v
                for k, v in values.items()
            }
            with np.errstate(all="ignore"):
                lhs, rhs = self.numeric(**as_np)
        if np.isnan(float(lhs)) or np.isnan(float(rhs)):
            raise ValueError(
                f"condition {self.name!r} is undefined (NaN) at {dict(values)}: the values are "
                f"outside the range where it can be evaluated"
            )
        inv = involves_eta_sym is not None and involves_eta_sym in self.free_symbols
        return Condition(self.name, self.expr, float(lhs), float(rhs), self.strict, self.description, inv)

    def evaluate_sympy(self, subs: Mapping[sp.Symbol, float]) -> tuple[float, float]:
        """Both sides by sympy substitution (slow; used to cross-check the numeric evaluator)."""
        return float(self.lhs.subs(subs)), float(self.rhs.subs(subs))


#: the local-drift condition (C1), 6 η_L² (2K² − 3K + 1) L² ≤ 1 for all t, i: Theorems 2, 3 and 4 of
#: [Yang et al. 2022] state it identically, so their modules share this one spec
LOCAL_DRIFT_C1 = ConditionSpec(
    "C1",
    6 * S.eta_L**2 * (2 * S.K**2 - 3 * S.K + 1) * S.L**2,
    sp.Integer(1),
    False,
    lambda L, eta, eta_L, K_max, tau, **_: (6 * eta_L**2 * (2 * K_max**2 - 3 * K_max + 1) * L**2, 1.0),
    "local-drift condition (C1), all t, i",
)


def delay_drift(name: str, factor: int, description: str) -> ConditionSpec:
    """The delay-drift condition ``factor``·η_L² K² L² τ < 1 (Theorem 2's (C2): 180, Theorem 3's (C3): 120),
    evaluated at K = K_max."""
    return ConditionSpec(
        name,
        factor * S.eta_L**2 * S.K**2 * S.L**2 * S.tau,
        sp.Integer(1),
        True,
        lambda L, eta, eta_L, K_max, tau, **_: (factor * eta_L**2 * K_max**2 * L**2 * tau, 1.0),
        description,
    )


class Infeasible(ValueError):
    """Raised by ``AdmissibleStep.require()`` when no η > 0 satisfies every condition."""


@dataclass(frozen=True)
class AdmissibleStep:
    """Largest server step η for a given η_L, or the reason none exists.

    ``eta_max`` is None when ``feasible`` is False (never 0). ``binding`` names the condition whose boundary
    ``eta_max`` lies on; ``blocking`` the η-free conditions that fail for the given η_L, K, τ (those cannot be
    repaired by any η > 0). ``eta_max_expr`` is the exact sympy value (positive root of the quadratic).
    ``eta_max`` is the largest float at which the numeric evaluation of every condition holds.
    """

    eta_L: float | None
    feasible: bool
    eta_max: float | None
    binding: str | None
    blocking: tuple[str, ...] = ()
    eta_max_expr: sp.Expr | None = None
    conditions: tuple[Condition, ...] = field(default=(), repr=False)
    # boundary of the η-condition alone (reported even when blocked; not admissible then)
    eta_root: float | None = None

    def require(self) -> float:
        """η_max, or ``Infeasible`` naming the conditions that fail whatever η is."""
        if not self.feasible:
            raise Infeasible(
                f"no eta > 0 is admissible for eta_L={self.eta_L}: condition(s) "
                f"{', '.join(self.blocking)} fail independently of eta"
            )
        return self.eta_max

    def __bool__(self):
        return self.feasible


def positive_root(a: float, b: float, c: float) -> float:
    """Positive root of a x² + b x − c = 0 with a ≥ 0, b ≥ 0, c > 0, a + b > 0 (cancellation-free form)."""
    if a == 0:
        return c / b
    return 2.0 * c / (b + math.sqrt(b * b + 4.0 * a * c))


def quadratic_root_expr(a: sp.Expr, b: sp.Expr, c: sp.Expr) -> sp.Expr:
    return sp.Piecewise((c / b, sp.Eq(a, 0)), (2 * c / (b + sp.sqrt(b**2 + 4 * a * c)), True))


def admissible_from(
    specs: Sequence[ConditionSpec],
    values: dict,
    eta_L: float,
    quad: Callable[[dict], tuple[float, float, float]],
    quad_expr: sp.Expr,
    eta_spec_name: str,
    eta_sym: sp.Symbol,
) -> AdmissibleStep:
    """Shared ``admissible_step_sizes`` logic: the η-condition is a x² + b x ≤ c in x = η η_L."""
    free = [sp_ for sp_ in specs if eta_sym not in sp_.free_symbols]
    probe = dict(values, eta_L=eta_L, eta=1.0)
    conds_free = [sp_.evaluate(probe) for sp_ in free]
    blocking = tuple(c.name for c in conds_free if not c.holds)
    eta_max = _root_over_eta_L(quad, values, eta_L)
    if blocking:
        return AdmissibleStep(eta_L, False, None, None, blocking, None, tuple(conds_free), eta_max)
    spec = next(s_ for s_ in specs if s_.name == eta_spec_name)
    # certify: step down to the largest float at which the numeric evaluation holds (at most a few ulps)
    for _ in range(64):
        if spec.evaluate(dict(values, eta_L=eta_L, eta=eta_max)).holds:
            break
        eta_max = float(np.nextafter(eta_max, 0.0))
    else:  # pragma: no cover - would mean the closed form is wrong
        raise RuntimeError(f"closed-form root for {eta_spec_name} does not satisfy it numerically")
    if not eta_max > 0:
        raise ValueError(
            f"the largest admissible eta is below the smallest positive float at {dict(values)}, "
            f"eta_L={eta_L}: the values are outside the range where it can be evaluated"
        )
    conds = tuple(sp_.evaluate(dict(values, eta_L=eta_L, eta=eta_max), eta_sym) for sp_ in specs)
    return AdmissibleStep(eta_L, True, eta_max, eta_spec_name, (), quad_expr, conds, eta_max)


def _root_over_eta_L(quad, values: dict, eta_L: float) -> float:
    """x*/η_L for the positive root x* of the η-condition's quadratic; in exact (sympy) arithmetic, rounded
    once, when the float coefficients overflow (never a bare OverflowError; a root beyond the float range is
    inf or 0.0)."""
    try:
        a, b, c = quad(dict(values, eta_L=eta_L))
        if all(math.isfinite(v) for v in (a, b, c)):
            eta_max = positive_root(a, b, c) / eta_L
            if math.isfinite(eta_max) and eta_max > 0:
                return eta_max
    except (OverflowError, ZeroDivisionError):
        pass
    big = {
        k: sp.Float(v, 30) if isinstance(v, (int, float)) and not isinstance(v, bool) else v
        for k, v in values.items()
    }
    a, b, c = quad(dict(big, eta_L=sp.Float(eta_L, 30)))
    root = c / b if a == 0 else 2 * c / (b + sp.sqrt(b * b + 4 * a * c))
    return float(root / sp.Float(eta_L, 30))


def region_from(specs: Sequence[ConditionSpec], values: dict, eta, eta_L) -> np.ndarray:
    """Boolean grid (len(eta_L), len(eta)): every condition holds at (η, η_L)."""
    eta = as_array("eta", eta)
    eta_L = as_array("eta_L", eta_L)
    if eta.ndim != 1 or eta_L.ndim != 1:
        raise ValueError(f"eta and eta_L must be 1-D grids, got shapes {eta.shape}, {eta_L.shape}")
    if not (np.all(np.isfinite(eta)) and np.all(np.isfinite(eta_L))):
        raise ValueError("eta and eta_L grids must be finite")
    if np.any(eta <= 0) or np.any(eta_L <= 0):
        raise ValueError("eta and eta_L grids must be > 0")
    check_alloc(f"a {eta_L.size} x {eta.size} (eta_L, eta) grid", 8.0 * 6 * eta.size * eta_L.size)
    E, EL = np.meshgrid(eta, eta_L)
    ok = np.ones(E.shape, dtype=bool)
    # numpy scalars: an overflowing side is inf (the condition fails), never a Python OverflowError
    as_np = {
        k: np.float64(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else v
        for k, v in values.items()
    }
    for sp_ in specs:
        with np.errstate(over="ignore", invalid="ignore"):  # NaN comparisons are False: the condition fails
            lhs, rhs = sp_.numeric(**dict(as_np, eta=E, eta_L=EL))
        lhs = np.broadcast_to(lhs, E.shape)
        ok &= (lhs < rhs) if sp_.strict else (lhs <= rhs)
    return ok


# --------------------------------------------------------------------------------------------- checks
def req(name, value):
    if value is None:
        raise ValueError(f"{name} is required (missing symbol {name!r})")
    return value


def pos(name, value):
    return check_positive(name, req(name, value))


def nonneg(name, value):
    return check_nonnegative(name, req(name, value))


def real(name, value):
    return check_real(name, req(name, value))


def int_ge(name, value, low):
    """An integer ≥ low; floats that are integral (e.g. 5.0) are accepted, others rejected."""
    value = req(name, value)
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        value = int(value)
    return check_int(name, value, low=low)


def check_K(name, value):
    """K ≥ 1 (real-valued K allowed: the conditions are polynomial in K)."""
    return check_real(name, req(name, value), low=1.0)


def check_m_M(m, M):
    if m > M:
        raise ValueError(f"m={m} exceeds num_workers={M}; allowed range [1, {M}]")


def symbol_map(values: Mapping[str, float]) -> dict:
    """Map the keyword names used by ``conditions(...)`` to the sympy symbols (for cross-checks)."""
    from . import symbols as S

    names = {
        "L": S.L,
        "eta": S.eta,
        "eta_L": S.eta_L,
        "K_max": S.K,
        "tau": S.tau,
        "M": S.M,
        "m_fresh": S.m_fresh,
        "num_workers": S.M,
    }
    return {names[k]: v for k, v in values.items() if k in names}
