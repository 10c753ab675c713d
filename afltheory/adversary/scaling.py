"""Scaling search: follow the worst ratio along the open directions of a claim's class by doubling.

The box search (``search``) explores a bounded class (M ≤ 5, T ≤ 200, ...). A theorem can fail only far out
along a direction the box does not reach (Theorem 4: large M/m, small steps, long horizons), so the verdict
must say how far each direction was followed. ``scale(claim)`` starts from canonical instances — isotropic
quadratics (L = 1, d coordinates), one group of bound terms isolated at a time (noise σ_L = 1 from x_0 = x*;
heterogeneity σ_G = 1; transient Δ = 1) — and climbs greedily: each step evaluates one doubling along every
direction (M with m fixed, i.e. M/m; T; 1/η_L and 1/η inside the conditions; the delay τ; K; d) exactly
(``fastexact``: exact moments, the schedule law's expected bound), moves to the best, and stops when a ratio
exceeds 1 (a violation, certified and confirmed by the exact moments) or the time budget (cost projected
before each evaluation) is spent. At the end each direction's trend is fit (log–log slope of the ratio with a
95 % CI over its doublings) and, where the trend crosses 1 within the caps, evaluated there.

η_L = cap · 2^(−a) (cap: the largest η_L the η-free conditions allow) and η = η_max(η_L) · 2^(−b) (η_max:
the positive root of the theorem's condition in η η_L), so every candidate is inside the conditions with
known slack (the certificate lists it)."""

from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import numpy as np

from . import fastexact
from .claims import Decoded, get_claim
from .claims import SearchSpec as Claim

__all__ = [
    "DIRECTIONS",
    "LIMIT_OPTIONS",
    "coverage_lines",
    "Point",
    "ScalingResult",
    "evaluate_point",
    "fit_limits",
    "point_certificate",
    "scale",
    "scale_directions",
    "within_limits",
]

#: direction -> (point field, move)
DIRECTIONS = ("M/m", "T", "1/eta_L", "1/eta", "tau", "K", "d")
GROUPS = ("sigma_L", "sigma_G", "transient")
_SECONDS_PER_UNIT = 6e-7  # calibrated: memory rule, M = 20, T = 20 000 takes ≈ 5 s on one core


def coverage_lines(directions: dict) -> str:
    """One line per followed direction (name -> {"max_size", "best", "trend"}): how far it was followed,
    its best ratio and its fitted trend with the 95 % CI ("—" when no trend was fitted). Shared by the
    built-in claims' and the generic (user-claim) scaling searches."""
    out = []
    for dname, info in directions.items():
        tr = info.get("trend")
        t = (
            "—"
            if tr is None
            else f"slope {tr['slope']:+.2f} (95% CI {tr['ci95'][0]:+.2f}..{tr['ci95'][1]:+.2f})"
        )
        out.append(f"{dname}: followed to {info['max_size']:g}, best ratio {info['best']:.3g}, trend {t}")
    return "\n".join(out)


@dataclass(frozen=True)
class Point:
    """A canonical candidate: sizes, step exponents (a, b) and the isolated group."""

    M: int = 5
    m: int = 1
    T: int = 200
    a: int = 0
    b: int = 0
    tau: int = 0
    K: int = 1
    d: int = 1
    group: str = "sigma_L"
    eta: float | None = None  # given steps (a hand-set instance) instead of the (a, b) parametrization
    eta_L: float | None = None

    def move(self, direction: str) -> Point:
        """The point one doubling step further along ``direction`` (one of ``DIRECTIONS``)."""
        d = self.__dict__.copy()
        if direction == "M/m":
            d["M"] = 2 * self.M
        elif direction == "T":
            d["T"] = 2 * self.T
        elif direction == "1/eta_L":
            d["a"] = self.a + 1
        elif direction == "1/eta":
            d["b"] = self.b + 1
        elif direction == "tau":
            d["tau"] = max(1, 2 * self.tau)
        elif direction == "K":
            d["K"] = 2 * self.K
        elif direction == "d":
            d["d"] = 2 * self.d
        else:
            raise ValueError(f"direction={direction!r} must be one of {DIRECTIONS}")
        return Point(**d)

    def size(self, direction: str) -> float:
        """This point's size along ``direction`` (the abscissa of that direction's trend fit)."""
        return {
            "M/m": self.M / self.m,
            "T": self.T,
            "1/eta_L": 2.0**self.a,
            "1/eta": 2.0**self.b,
            "tau": max(self.tau, 0.5),
            "K": self.K,
            "d": self.d,
        }[direction]


def scale_directions(claim: Claim, directions: tuple = DIRECTIONS) -> list[str]:
    """The directions ``scale`` follows: those of ``directions`` that the claim's statement's
    ``AssumptionClass`` opens (``Claim.statement``; M/m with M open), without 1/η for a corollary (its η is
    fixed), M/m last for a full-participation claim (doubling M keeps m = M)."""
    stmt = getattr(claim, "statement", None)
    opened = None if stmt is None else set(stmt.assumption_class.directions())
    dirs = [
        d
        for d in directions
        if not (d == "1/eta" and claim.corollary is not None)
        and (opened is None or d in opened or (d == "M/m" and "M" in opened))
    ]
    if claim.full:
        dirs = [d for d in dirs if d != "M/m"] + ["M/m"]  # m = M: doubling M keeps full participation
    return dirs


#: the box's size options that also cap the scaling search: option -> (the points' field it caps, its flag)
LIMIT_OPTIONS = {
    "dim": ("d", "--dim"),
    "num_workers": ("M", "--num-workers"),
    "max_delay": ("tau", "--max-delay"),
    "K_max": ("K", "--K-max"),
    "rounds": ("T", "--rounds"),
}
#: the smallest value each capped field of a scaling point can take
_FIELD_LOW = {"M": 1, "T": 1, "tau": 0, "K": 1, "d": 1}


def within_limits(p: Any, limits: dict) -> bool:
    """Whether the scaling point ``p`` (``Point`` or ``generic.ScalePoint``) has every capped field at or
    below its limit (``limits``: {field: largest value}, fields of ``LIMIT_OPTIONS``)."""
    return all(getattr(p, k) <= v for k, v in limits.items())


def fit_limits(start: Any, limits: dict | None, names: dict | None = None, lows: dict | None = None) -> Any:
    """``start`` (a scaling point) with every field above its limit lowered to it — the search then never
    evaluates a point beyond the limits (``within_limits``). ``limits``: {field: largest value} over the
    fields M, T, tau, K, d; ``names``: how to call each limit in an error (default ``limits['M']``; the CLI
    passes its flags, ``--num-workers``); ``lows``: the smallest value each field may take where the claim's
    class asks more than the point's own minimum (M, T, K, d ≥ 1, tau ≥ 0). A limit below that smallest
    value (or not an integer) is refused (ValueError naming it)."""
    limits = dict(limits or {})
    names = dict(names or {})
    fixed = {}
    for k, v in limits.items():
        name = names.get(k, f"limits[{k!r}]")
        if k not in _FIELD_LOW:
            raise ValueError(
                f"{name}: {k!r} is not a capped size of the scaling search ({', '.join(_FIELD_LOW)})"
            )
        low = max(_FIELD_LOW[k], int((lows or {}).get(k) or 0))
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < low:
            raise ValueError(
                f"{name}={v!r}: the scaling search cannot stay within it (its {k} must be an integer ≥ {low}"
                f"{' — the claim' + chr(39) + 's class asks it' if low > _FIELD_LOW[k] else ''}); raise it, "
                "or turn the scaling search off (--scaling 0)"
            )
        if getattr(start, k) > v:
            fixed[k] = int(v)
    if "M" in fixed and getattr(start, "m", 1) > fixed["M"]:
        fixed["m"] = fixed["M"]
    return dataclasses.replace(start, **fixed) if fixed else start


def _cost(claim: Claim, p: Point) -> float:
    """Projected seconds of one exact evaluation of ``p`` (state size² × rounds)."""
    n = 2 + p.tau + (p.M if claim.theorem == "thm4" else 0)
    return _SECONDS_PER_UNIT * p.T * n * n * p.d + 1e-3


def _decode(claim: Claim, p: Point) -> tuple[Any, Decoded]:
    M, m, d, K = p.M, p.m, p.d, p.K
    full = claim.full or m >= M
    m = M if full else m
    cls = SimpleNamespace(num_workers=M, K_max=K, rounds=p.T, min_rounds=min(p.T, 10), eta_L_decades=1.0)
    H = np.broadcast_to(np.eye(d), (1, M, d, d)).copy()
    C = np.zeros((1, M, d))
    covs = np.zeros((1, M, d, d))
    x0 = np.zeros((1, d))
    sL = sG = Dl = 0.0
    if p.group == "sigma_L":
        covs[:] = np.eye(d) / d
        sL = 1.0
    elif p.group == "sigma_G":
        v = np.arange(M) - (M - 1) / 2.0
        C[0, :, 0] = v / np.abs(v).max()
        sG = 1.0
    else:
        x0[0, 0] = math.sqrt(2.0)
        Dl = 1.0
    if full or not claim.bounded_staleness:
        pi = np.full((1, M), m / M)
        pij = np.full((1, M, M), m * (m - 1) / (M * (M - 1)) if M > 1 else 0.0)
        pij[:, np.arange(M), np.arange(M)] = m / M
        kind = "uniform"
    else:  # round robin: the memory slots' staleness stays bounded (Theorem 4's τ)
        P = M // math.gcd(M, m)
        pi = np.zeros((1, P, M))
        for ph in range(P):
            pi[:, ph, (ph * m + np.arange(m)) % M] = 1.0
        pij = pi[..., :, None] * pi[..., None, :]
        kind = "cyclic"
    dp = np.zeros((1, p.tau + 1))
    dp[0, p.tau] = 1.0
    kp = np.zeros((1, M, K))
    kp[:, :, K - 1] = 1.0
    tau_d = np.array([p.tau])
    tau = tau_d + (claim.staleness_bound(M, m) if (claim.bounded_staleness and m < M) else 0)
    L = np.ones(1)
    st = SimpleNamespace(m=m, extra={"K": K})
    u = np.array([[1.0, 1.0]])
    cls.eta_L_decades = max(p.a * math.log10(2.0), 1e-12)
    eta, eta_L, inside = claim.step_sizes(cls, st, u, L, np.array([K]), tau, tau_delay=tau_d)
    if p.eta is not None or p.eta_L is not None:
        eta = np.array([p.eta]) if p.eta is not None else eta
        eta_L = np.array([p.eta_L]) if p.eta_L is not None else eta_L
        inside = claim.holds(claim._values(L, eta_L, np.array([K]), tau, M, claim.m_fresh(M, tau_d, m), eta))
    elif claim.corollary is None:
        eta = eta * 2.0 ** (-p.b)
        inside = claim.holds(claim._values(L, eta_L, np.array([K]), tau, M, claim.m_fresh(M, tau_d, m), eta))
    dec = Decoded(
        H,
        C,
        covs,
        x0,
        L,
        np.array([sL]),
        np.array([sG]),
        np.array([Dl]),
        np.zeros(1),
        pi,
        pij,
        None,
        dp,
        kp,
        tau,
        np.array([K]),
        eta,
        eta_L,
        inside,
        m,
        kind,
        tau_d,
    )
    return cls, dec


def evaluate_point(claim: str | Claim, p: Point) -> dict:
    """Exact ratio of the canonical candidate ``p``: max over horizons 10..T of (1/T) Σ E‖∇f(x_t)‖² / E bound,
    with the measured value, the bound's terms there, the steps and ``inside`` (every condition holds)."""
    claim = get_claim(claim)
    cls, dec = _decode(claim, p)
    g = fastexact.grad_norm_sq(claim.batch(cls, dec), p.T)[0]
    Ts = np.unique(np.geomspace(min(10, p.T), p.T, 40).astype(int))
    terms = claim.expected_terms(cls, dec, Ts)
    meas = np.cumsum(g[: p.T])[Ts - 1] / Ts
    bound = sum(v[0] for v in terms.values())
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.where(bound > 0, meas / bound, np.inf)
    j = int(np.nanargmax(r))
    return {
        "point": p.__dict__.copy(),
        "ratio": float(r[j]) if bool(dec.inside[0]) else float("nan"),
        "T": int(Ts[j]),
        "measured": float(meas[j]),
        "bound": float(bound[j]),
        "terms": {k: float(v[0, j]) for k, v in terms.items()},
        "eta": float(dec.eta[0]),
        "eta_L": float(dec.eta_L[0]),
        "tau": int(dec.tau[0]),
        "inside": bool(dec.inside[0]),
        "arrivals": dec.arrivals,
    }


def point_certificate(claim: str | Claim, ev: dict) -> dict:
    """The membership certificate of an evaluated point: the arrival law realizes the theorem's τ (the
    largest staleness of a memory slot on the realized round-robin schedule, computed from the schedule),
    the constants are exact (isotropic quadratic: L = 1, σ_L² = tr Σ_i, σ_G = max‖∇f_i − ∇f‖, Δ = f(x_0)),
    and every condition holds with the listed slack (rhs − lhs, the theorem's numeric specs)."""
    claim = get_claim(claim)
    p = Point(**ev["point"])
    cls, dec = _decode(claim, p)
    M, m = p.M, dec.m
    # realized staleness of the slots under the law (deterministic round robin or all-arrive)
    if dec.arrivals == "cyclic":
        last = np.full(M, -1)
        worst = 0
        for t in range(min(ev["T"], 4 * M)):
            arr = (t * m + np.arange(m)) % M
            last[arr] = t
            worst = max(worst, int((t - last[last >= 0]).max()) + p.tau) if t >= M else worst
        staleness = worst
    else:
        staleness = p.tau
    mf = claim.m_fresh(M, dec.tau_delay, m)
    v = claim._values(dec.L, dec.eta_L, dec.K_max, dec.tau, M, mf, dec.eta)
    slack = {}
    for spec in claim.module.SPECS:
        lhs, rhs = spec.numeric(**v)
        slack[spec.name] = float(np.asarray(rhs - lhs).ravel()[0])
    checks = {
        "staleness": (
            staleness <= int(dec.tau[0]),
            f"realized slot staleness {staleness} ≤ τ = {int(dec.tau[0])}",
        ),
        "constants": (
            True,
            f"exact: L = 1, σ_L = {dec.sigma_L[0]:g}, σ_G = {dec.sigma_G[0]:g}, "
            f"Δ = {dec.Delta[0]:g} (isotropic quadratic, x* = 0)",
        ),
        "arrivals": (True, f"{dec.arrivals}, m = {m} of M = {M}"),
        "conditions": (all(s >= 0 for s in slack.values()), "every condition with slack ≥ 0"),
    }
    return {
        "inside": all(ok for ok, _ in checks.values()),
        "checks": {k: {"ok": ok, "detail": d} for k, (ok, d) in checks.items()},
        "slack": slack,
    }


def _trend(xs: list[float], rs: list[float]) -> dict | None:
    """Log–log slope of the ratio over a direction's doublings with a 95 % t-interval (None: < 3 points)."""
    pts = [(math.log(x), math.log(r)) for x, r in zip(xs, rs, strict=True) if r > 0 and math.isfinite(r)]
    if len(pts) < 3:
        return None
    X, Y = np.array(pts).T
    A = np.vstack([X, np.ones_like(X)]).T
    coef, res, *_ = np.linalg.lstsq(A, Y, rcond=None)
    n = len(X)
    resid = Y - A @ coef
    s2 = float(resid @ resid) / max(n - 2, 1)
    se = math.sqrt(s2 / float(((X - X.mean()) ** 2).sum())) if n > 2 else float("inf")
    from scipy.stats import t as student

    h = float(student.ppf(0.975, max(n - 2, 1))) * se
    return {"slope": float(coef[0]), "ci95": [float(coef[0] - h), float(coef[0] + h)], "points": n}


@dataclass
class ScalingResult:
    """What the scaling search did: per group the path, per direction the ratios along its doublings and
    their trend, the best ratio, the violation (if any) with its certificate."""

    claim: str
    best: dict | None
    violation: dict | None
    certificate: dict | None
    directions: dict = field(default_factory=dict)
    evaluations: int = 0
    elapsed: float = 0.0
    budget_seconds: float = 0.0
    groups: tuple = GROUPS
    #: every evaluated point's fields, in evaluation order
    searched: list = field(default_factory=list)

    def coverage(self) -> str:
        """Lines: per direction the sizes followed, the best ratio and the trend."""
        return coverage_lines(self.directions)

    def summary(self) -> str:
        """The search in words: evaluations, budget, best ratio, and each direction's trend."""
        head = (
            f"{self.claim} scaling search: {self.evaluations} exact evaluations in {self.elapsed:.0f} s "
            f"(budget {self.budget_seconds:.0f} s), groups {', '.join(self.groups)}; best ratio "
            f"{(self.best or {}).get('ratio', float('nan')):.4g}"
        )
        if self.violation is not None:
            v = self.violation
            p = v["point"]
            head += (
                f"\n  VIOLATED (exact moments): M = {p['M']}, m = {p['m']}, {v['arrivals']}, K = {p['K']}, "
                f"delay {p['tau']}, η = {v['eta']:.4g}, η_L = {v['eta_L']:.4g}, T = {v['T']}: measured "
                f"{v['measured']:.4g} vs bound {v['bound']:.4g} (ratio {v['ratio']:.3f}); membership: "
                + ("inside" if self.certificate and self.certificate["inside"] else "OUTSIDE")
                + " — "
                + "; ".join(d["detail"] for d in (self.certificate or {}).get("checks", {}).values())
            )
        return head + "\n  coverage:\n    " + self.coverage().replace("\n", "\n    ")

    def to_dict(self) -> dict:
        """JSON-safe form of the result (best point, violation, coverage per direction)."""
        return {
            "claim": self.claim,
            "best": self.best,
            "violation": self.violation,
            "certificate": self.certificate,
            "directions": self.directions,
            "evaluations": self.evaluations,
            "elapsed": self.elapsed,
            "budget_seconds": self.budget_seconds,
            "searched": self.searched,
        }


def scale(
    claim: str | Claim,
    *,
    budget_seconds: float = 90.0,
    start: Point | None = None,
    groups: tuple = GROUPS,
    directions: tuple = DIRECTIONS,
    max_size: dict | None = None,
    limits: dict | None = None,
    limit_names: dict | None = None,
) -> ScalingResult:
    """Greedy doubling ascent of the worst ratio from ``start`` (default M = 5, m = 1, T = 200, steps at
    the conditions' boundary) for each isolated group (module docstring); stops at the first violation.
    ``max_size``: {direction: largest size followed}; ``limits``: {field: largest value} over the points'
    M, T, tau, K, d (the box's size options, ``LIMIT_OPTIONS``): no point beyond them is evaluated, the start
    is lowered into them (``fit_limits``; ``limit_names`` name them in its errors)."""
    claim = get_claim(claim)
    limits = dict(limits or {})
    start = fit_limits(Point() if start is None else start, limits, limit_names)
    t0 = time.perf_counter()
    caps = {"M/m": 160, "T": 2_000_000, "1/eta_L": 2.0**30, "1/eta": 2.0**30, "tau": 16, "K": 32, "d": 8}
    caps.update(max_size or {})
    dirs = scale_directions(claim, directions)
    seen: dict[Point, dict] = {}
    along: dict[str, list] = {d: [] for d in dirs}
    res = ScalingResult(claim.id, None, None, None, budget_seconds=budget_seconds, groups=tuple(groups))

    def left() -> float:
        return budget_seconds - (time.perf_counter() - t0)

    def ev(p: Point) -> dict | None:
        if p in seen:
            return seen[p]
        if _cost(claim, p) > left():
            return None
        out = evaluate_point(claim, p)
        seen[p] = out
        res.searched.append(dict(p.__dict__))
        res.evaluations += 1
        if res.best is None or (out["ratio"] == out["ratio"] and out["ratio"] > res.best["ratio"]):
            res.best = out
        return out

    def moved(p, dname):
        """(p moved along ``dname``, its evaluation), the evaluation None past the caps or limits (not
        evaluated) or where ``ev`` gives none."""
        q = p.move(dname)
        if q.size(dname) > caps[dname] or not within_limits(q, limits):
            return q, None
        return q, ev(q)

    per_group = budget_seconds / max(len(groups), 1)
    for gi, group in enumerate(groups):
        g_end = time.perf_counter() - t0 + per_group * (1 if gi < len(groups) - 1 else 10)
        cur = Point(**{**start.__dict__, "group": group})
        cur_ev = ev(cur)
        if cur_ev is None:
            break
        while time.perf_counter() - t0 < min(g_end, budget_seconds):
            tried = []
            for dname in dirs:
                q, e = moved(cur, dname)
                if e is None:
                    continue
                along[dname].append((q.size(dname), e["ratio"], cur))
                tried.append((e["ratio"] if e["ratio"] == e["ratio"] else -1.0, dname, q, e))
            if not tried:
                break
            r, dname, q, e = max(tried, key=lambda x: x[0])
            if e["inside"] and e["ratio"] > 1.0:
                res.violation = e
                res.certificate = point_certificate(claim, e)
                break
            if r <= cur_ev["ratio"] * (1 + 1e-6):
                break  # a local maximum of the doubling moves
            cur, cur_ev = q, e
        if res.violation is not None:
            break
    # per direction: the trend of the ratio along its doublings from the final point of the climb
    base = Point(**res.best["point"]) if res.best else start
    for dname in dirs:
        xs, rs = [base.size(dname)], [seen.get(base, {}).get("ratio", float("nan"))]
        q = base
        for _ in range(3):
            q, e = moved(q, dname)
            if e is None:
                break
            xs.append(q.size(dname))
            rs.append(e["ratio"])
        rr = [r for _, r, _ in along[dname]] + [r for r in rs if r == r]
        sizes = [s for s, _, _ in along[dname]] + xs
        res.directions[dname] = {
            "sizes": xs,
            "ratios": rs,
            "max_size": max(sizes) if sizes else base.size(dname),
            "best": max(rr) if rr else float("nan"),
            "trend": _trend(xs, rs),
        }
        tr = res.directions[dname]["trend"]
        if res.violation is None and tr and tr["slope"] > 0 and rs[-1] == rs[-1] and 0 < rs[-1] < 1:
            k = math.ceil(math.log2(1.0 / rs[-1]) / tr["slope"])  # doublings to the crossing
            target = q
            for _ in range(max(k, 0)):
                target = target.move(dname)
            if target.size(dname) <= caps[dname] and within_limits(target, limits):
                e = ev(target)
                res.directions[dname]["crossing"] = (
                    None if e is None else {"size": target.size(dname), "ratio": e["ratio"]}
                )
                if e is not None and e["inside"] and e["ratio"] > 1.0:
                    res.violation, res.certificate = e, point_certificate(claim, e)
    if res.best is not None and res.best["inside"] and res.best["ratio"] > 1.0:
        res.violation, res.certificate = res.best, point_certificate(claim, res.best)  # the worst one found
    res.elapsed = time.perf_counter() - t0
    return res
