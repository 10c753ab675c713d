"""``Claim``: one object that states a convergence theorem completely (docs/DESIGN.md, "Claims")."""

from __future__ import annotations

import dataclasses
import weakref
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import sympy as sp

from .. import _faults
from ..algorithms.schedules import StepSize
from ..theory import evaluate_terms, terms_in_force
from .symbols import SYMBOLS

__all__ = [
    "CONFIDENCES",
    "INDEX",
    "KINDS",
    "Assumptions",
    "Claim",
    "EngineForm",
    "FUNCTION_CLASSES",
    "Location",
    "QUANTITIES",
    "Transcription",
    "UnknownSymbol",
    "engine_confidence",
    "is_read",
    "substitute",
]

#: the measured quantities a claim may bound (name -> the expression it stands for)
QUANTITIES: dict[str, str] = {
    "avg_grad_sq": "(1/T) Σ_{t<T} E‖∇f(x_t)‖²",
    "virtual_avg_grad_sq": "(1/(TK)) Σ_{t<T} Σ_{k<K} E‖∇f(x̄_{t,k})‖²,  x̄_{t,k} the virtual averaged model",
    "weighted_avg_grad_sq": "Σ_{t<T} γ_t E‖∇f(x_t)‖² / Σ_{t<T} γ_t  (γ_t = η_t η_{L,t})",
    "min_grad_sq": "min_{t<T} E‖∇f(x_t)‖²",
    "last_gap": "E f(x_T) − f*",
    "last_dist_sq": "E‖x_T − x*‖²",
    "avg_iterate_gap": "E f(x̄_T) − f*,  x̄_T = (1/T) Σ_{t<T} x_t",
    "weighted_avg_iterate_gap": "E f(x̂_T) − f*,  x̂_T = Σ_{t<T} w_t x_t / Σ w_t,  w_t = γ_t^{-2}",
}
FUNCTION_CLASSES = ("smooth", "convex", "strongly_convex")
NOISE = ("variance", "second_moment", "none")
HETEROGENEITY = (None, "sigma_G_max", "sigma_G_mean", "Gamma", "zeta_star", "iid")
PARTICIPATION = ("full", "uniform", "arbitrary")


#: id(claim) -> {(expr, extra): (symbols, numeric function)} (claims are frozen: their values never change)
_COMPILED: dict[int, dict] = {}
#: id(claim) -> (claim, its engine form's claim) (built once: the engines' caches are keyed by the object)
_ENGINE: dict[int, tuple] = {}
#: what a claim states
KINDS = ("theorem", "corollary", "lemma", "proposition", "remark", "variant")


class UnknownSymbol(ValueError):
    """A bound or condition uses a symbol neither in ``afltheory.claims.SYMBOLS`` nor given a value."""


def _choice(name: str, value: Any, allowed: tuple) -> Any:
    if value not in allowed:
        raise ValueError(f"{name}={value!r} must be one of {allowed}")
    return value


@dataclass(frozen=True, kw_only=True)
class Assumptions:
    """The assumption class of a claim. ``function``: "smooth" (L-smooth, possibly nonconvex), "convex",
    "strongly_convex" (μ > 0); ``noise``: "variance" (E‖g − ∇f_i‖² ≤ σ_L²), "second_moment"
    (E‖g‖² ≤ G²) or "none"; ``heterogeneity``: how client drift is bounded — "sigma_G_max"
    (max_i sup_x ‖∇f_i − ∇f‖ ≤ σ_G, the reading of afltheory's certified σ_G), "sigma_G_mean"
    ((1/M) Σ_i ‖∇f_i − ∇f‖² ≤ σ_G²), "Gamma" (Γ = f* − Σ p_k f_k*), "zeta_star" (ζ*² at the optimum),
    "iid" or None; ``participation``: "full", "uniform" (m of M without replacement) or "arbitrary";
    ``max_delay``/``max_local_steps``: τ and K_max (None: unbounded / not part of the class);
    ``weights``: "uniform" or "data" (client weights p_k = n_k/n, the problem's ``weights``); ``delays``: a
    delay model of ``claims.assumption_class`` (e.g. ``JobsInFlight()``: the delays of n = M jobs in flight)
    replacing the bound ``max_delay`` (None: ``BoundedDelay(max_delay)``)."""

    function: str = "smooth"
    noise: str = "variance"
    heterogeneity: str | None = "sigma_G_max"
    participation: str = "arbitrary"
    max_delay: int | None = None
    max_local_steps: int | None = None
    weights: str = "uniform"
    delays: Any = None

    def __post_init__(self) -> None:
        _choice("function", self.function, FUNCTION_CLASSES)
        _choice("noise", self.noise, NOISE)
        _choice("heterogeneity", self.heterogeneity, HETEROGENEITY)
        _choice("participation", self.participation, PARTICIPATION)
        _choice("weights", self.weights, ("uniform", "data"))

    @classmethod
    def synchronous(
        cls,
        function: str,
        noise: str,
        heterogeneity: str | None,
        *,
        participation: str = "full",
        weights: str = "uniform",
        local_steps: int | None = None,
    ) -> Assumptions:
        """The class of a synchronous engine form: no delay (``max_delay=0``), ``local_steps`` local steps at
        most (None: not part of the class; 1: the H = K = 1 forms of the local-SGD theorems)."""
        return cls(
            function=function,
            noise=noise,
            heterogeneity=heterogeneity,
            participation=participation,
            weights=weights,
            max_delay=0,
            max_local_steps=local_steps,
        )

    def describe(self) -> str:
        """One line: the class in words."""
        parts = [
            {
                "smooth": "L-smooth",
                "convex": "L-smooth convex",
                "strongly_convex": "L-smooth μ-strongly convex",
            }[self.function],
            {
                "variance": "noise variance σ_L²",
                "second_moment": "second moment G²",
                "none": "exact gradients",
            }[self.noise],
        ]
        if self.heterogeneity:
            parts.append(
                {
                    "sigma_G_max": "σ_G (max over workers)",
                    "sigma_G_mean": "σ_G² (mean over workers)",
                    "Gamma": "Γ = f* − Σ p_k f_k*",
                    "zeta_star": "ζ*² at the optimum",
                    "iid": "identical data",
                }[self.heterogeneity]
            )
        parts.append(
            {"full": "full participation", "uniform": "m of M uniformly", "arbitrary": "arbitrary arrivals"}[
                self.participation
            ]
        )
        if self.max_delay is not None:
            parts.append(f"delays ≤ {self.max_delay}")
        if self.max_local_steps is not None:
            parts.append(f"K ≤ {self.max_local_steps}")
        if self.weights == "data":
            parts.append("client weights p_k")
        return ", ".join(parts)


def _sympify(v: Any, name: str) -> sp.Expr:
    if isinstance(v, str):
        v = sp.sympify(v, locals=dict(SYMBOLS))
    try:
        return sp.sympify(v)
    except (sp.SympifyError, TypeError) as exc:
        raise ValueError(f"{name}={v!r} must be a sympy expression, a number or a string: {exc}") from None


#: the grades of a claim's text: "read" (the statement itself was retrieved; ``excerpt``/``location`` say
#: where), "read (secondary: <who>)" (a secondary text quoting it was read), "abstract read, statement from
#: memory" (the retrieved page fixes the setting, not the constants), "from memory" (nothing retrieved),
#: "derived" (a consequence the package derives, e.g. a corollary written out). A verdict that contradicts a
#: claim whose text was not read is never called a finding.
CONFIDENCES = (
    "read",
    "read (secondary: …)",
    "abstract read, statement from memory",
    "from memory",
    "derived",
)
#: how the index (the `find_string` / `read_file` tools) names a file: it returns ids, not repositories
INDEX = "public-GitHub text index (find_string/read_file)"


def is_read(confidence: str) -> bool:
    """True when the grade says the statement's text itself was read (primary or secondary)."""
    return confidence == "read" or (confidence.startswith("read (secondary: ") and confidence.endswith(")"))


def _check_confidence(confidence: str) -> None:
    if confidence not in CONFIDENCES and not is_read(confidence):
        raise ValueError(f"confidence={confidence!r} must be one of {CONFIDENCES}")


def engine_confidence(confidence: str, own_form: bool = False) -> str:
    """The ONE rule grading an engine form's verdicts: "read" when the statement's text was read (primary or
    secondary: ``is_read``) and the engine runs the stated bound (under its substitution); "derived" stays
    "derived"; otherwise "from memory" (a statement from memory, or a check's own form of it —
    ``own_form``: the engine bound is not the stated one)."""
    _check_confidence(confidence)
    if confidence == "derived" and not own_form:
        return "derived"
    return "read" if is_read(confidence) and not own_form else "from memory"


@dataclass(frozen=True)
class Location:
    """Where a statement's text was read: the index id of the file (a converted markdown copy of the paper),
    a character offset at which a ``read_file`` page (16,000 characters) contains the statement, the
    theorem's number, and how the file was found (the exact fragment searched for).
    ``repo``/``path``/``commit``: None when the index did not report them (its string search returns file
    ids only); ``index_id`` None for a local file (then ``path``)."""

    index_id: str | None
    offset: int
    theorem: str
    found_by: str
    section: str = ""
    repo: str | None = None
    path: str | None = None
    commit: str | None = None

    def __post_init__(self) -> None:
        if self.index_id is None and not self.path:
            raise ValueError("a location needs the index's file id (index_id) or a path")
        if self.index_id is not None and not (isinstance(self.index_id, str) and self.index_id.isdigit()):
            raise ValueError(f"index_id={self.index_id!r} must be the index's decimal file id")
        if not isinstance(self.offset, int) or self.offset < 0:
            raise ValueError(f"offset={self.offset!r} must be a character offset >= 0")
        if not self.theorem or not self.found_by:
            raise ValueError("theorem and found_by must be non-empty")

    def __str__(self) -> str:
        where = (f"{self.repo}:" if self.repo else "") + (self.path or "")
        where += f"@{self.commit}" if self.commit else ""
        sec = f", {self.section}" if self.section else ""
        idx = f"index id {self.index_id}" if self.index_id else "file"
        return (
            f"read: {self.theorem}{sec}; {idx} at offset {self.offset}"
            + (f"; {where}" if where else "")
            + f"; found by the fragment “{self.found_by}”"
        )


@dataclass(frozen=True)
class Transcription:
    """The statement's formulas as LaTeX (formulas are facts; no prose copied).

    ``bound``: the bound as printed, in parseable LaTeX (``sympy.parsing.latex``); names in ``definitions``
    (e.g. Li et al.'s B, C) are LaTeX too and are substituted after parsing. ``symbols``: parsed symbol name
    -> the package's sympy expression (the symbol map of the equality test). ``normalisations``: what was
    changed from the printed form to make it parseable (a sum written as one symbol, a norm as D, …).
    ``assumptions``/``conditions``: LaTeX, for the reader (not parsed)."""

    bound: str
    symbols: dict
    definitions: dict = field(default_factory=dict)
    conditions: dict = field(default_factory=dict)
    assumptions: dict = field(default_factory=dict)
    normalisations: str = ""


@dataclass(frozen=True, kw_only=True)
class EngineForm:
    """How a claim stated in its paper's own symbols runs in the engines: ``subs`` maps the paper's symbols
    to the engines' (``claims.SYMBOLS`` and the claim's ``values``/``extra_symbols``), applied to the stated
    bound and — unless ``conditions`` gives the engines' own — to the stated conditions. ``bound``: the
    check's OWN form when the engines cannot run the stated one (its verdicts are then graded "from memory",
    ``engine_confidence``); ``reading``: what the engine form reads into the statement (appended to the
    claim's reading); ``id``: the verdict id (default "published." + the claim's id);
    ``title``/``reference``/``source_prefix``: the check's own form's title, reference and the words before
    the statement's source."""

    subs: Mapping[Any, Any] = field(default_factory=dict)
    conditions: Mapping[str, Any] | None = None
    bound: Mapping[str, Any] | None = None
    reading: str = ""
    id: str = ""
    title: str = ""
    reference: str = ""
    source_prefix: str = ""


def substitute(terms: Mapping[str, Any], subs: Mapping[Any, Any]) -> dict:
    """{name: term with ``subs`` substituted simultaneously} (a stated bound in the engines' symbols)."""
    return {k: sp.sympify(v).subs(dict(subs), simultaneous=True) for k, v in terms.items()}


def _by_name(values: Mapping[Any, Any], expr: sp.Expr) -> dict:
    """``values`` keyed by symbol or symbol name -> a substitution for ``expr``'s free symbols."""
    names = {str(s): s for s in expr.free_symbols}
    out = {}
    for k, v in values.items():
        key = names.get(k, sp.Symbol(k)) if isinstance(k, str) else k
        out[key] = v
    return out


def _evaluate_stated(expr: sp.Expr, values: Mapping[Any, Any], what: str) -> float:
    e = sp.sympify(expr).subs(_by_name(values, sp.sympify(expr)))
    if e.free_symbols:
        raise ValueError(f"{what}: unknown value of symbol(s) {sorted(map(str, e.free_symbols))}")
    return float(e)


@dataclass(frozen=True, kw_only=True)
class Claim:
    """A convergence theorem, stated once; every engine reads it (``verify``, the adversary, PEP, scope).

    - ``id``, ``title``; ``reference`` (citation), ``source`` (where the statement was read: a retrievable
      excerpt, or "from memory"), ``reading`` (how an ambiguous text was read), ``confidence`` ("read",
      "from memory", "derived").
    - ``assumptions``: the ``Assumptions`` class; ``rule``: the server rule class (e.g. ``FedAvg``) or a
      factory ``rule(eta=..., eta_L=..., **rule_options) -> ServerRule``; ``eta``/``eta_L``: numbers, sympy
      expressions in the round t and the claim's symbols (a step-size schedule), or callables of t.
    - ``measured``: one of ``QUANTITIES``; ``bound``: a sympy expression or a dict of named terms (their
      sum); ``conditions``: name -> sympy relation (``a <= b``) that must hold; ``values``: the claim's own
      symbols (numbers or expressions in ``SYMBOLS``, e.g. ``{"gamma": Max(8*kappa, E)}``).
    - ``statistics``: optional ``f(trace, problem, algorithm) -> {name: (R,) array}``: run statistics the
      generic ``run_values`` does not (or reads differently, e.g. Theorem 4's memory-slot averages); the names
      it adds are declared in ``extra_symbols`` (name -> meaning).
    - ``latex``: "bound" / a condition's / a value's name -> the LaTeX it was read from (filled from the
      ``afltheory.claims.latex.latex(...)`` objects given; docs/claims_latex.md).
    - ``rate``: claimed log–log slopes of the measured quantity, e.g. ``{"T": -1}``: an O(·) statement, so an
      UPPER rate (the measured slope ≤ claimed, one-sided); ``rate_attained=True``: the rate is attained
      (Θ(·): the slope ≈ claimed, two-sided); ``constant="hidden"``: an O-statement — the bound is its
      SHAPE and holds up to an unknown constant C (measured ≤ C · bound); ``holds_from``: symbol -> the value
      from which it holds (e.g. ``{"T": 100}``: for T ≥ 100); ``expect``: "holds"
      (a theorem) or "fails" (a false variant declared as expected to fail: its verdict passes when the
      bound is violated).
    - The statement as read (a published theorem is one claim): ``excerpt``, ``location`` (a ``Location``,
      required when the text was read), ``transcription`` (a ``Transcription``: the formula as printed, in
      LaTeX), ``readings`` ({name: one line} per ambiguity of the text; a verdict lists those it depends on),
      ``definitions`` (named sub-expressions), ``notes``, ``lower_bound`` (the bound is a lower bound),
      ``constants_explicit`` (False: constants hidden in O(·)), ``assumptions_text``/``algorithm_text``/
      ``measured_text`` (the setting in the paper's words), ``kind`` ("theorem", "corollary", "lemma", …) and
      ``paper`` (e.g. "li2020"; default: the id up to its first dot).
    - ``engine_form``: an ``EngineForm`` when ``bound`` and ``conditions`` are written in the paper's own
      symbols (then ``engine()`` is the claim the engines run: the substitution applied); None when they are
      already the engines'. ``runnable``: False for a statement no engine can run (no engine form;
      ``why_not_a_claim`` says why); None: inferred (False exactly when ``why_not_a_claim`` is given and
      ``engine_form`` is not).
    - ``setups``: per-reader setups, small frozen values keyed by reader: "search" (the adversary's
      ``SearchSpec``s, attached by the adversary), "pep_bracket" (``pep.theorems.BracketSetup``), "pep" (the
      published table's ``pep.claims.PepSetup``), "no_search"/"reading_constant" (the table's notes on the
      adversary's column, strings).
    """

    id: str
    title: str
    bound: Any
    measured: str | None = "avg_grad_sq"
    assumptions: Assumptions | None = field(default_factory=Assumptions)
    rule: Any = None
    rule_options: Mapping[str, Any] = field(default_factory=dict)
    eta: Any = None
    eta_L: Any = None
    conditions: Mapping[str, Any] = field(default_factory=dict)
    values: Mapping[str, Any] = field(default_factory=dict)
    rate: Mapping[str, float] = field(default_factory=dict)
    rate_attained: bool = False
    constant: str | None = None
    holds_from: Mapping[str, float] = field(default_factory=dict)
    reference: str = "user claim"
    source: str = "from memory"
    reading: str = ""
    confidence: str = "from memory"
    expect: str = "holds"
    statistics: Any = None
    extra_symbols: Mapping[str, str] = field(default_factory=dict)
    latex: Mapping[str, str] = field(default_factory=dict)
    excerpt: str | None = None
    location: Location | None = None
    transcription: Transcription | None = None
    readings: Mapping[str, str] = field(default_factory=dict)
    definitions: Mapping[str, Any] = field(default_factory=dict)
    notes: str = ""
    lower_bound: bool = False
    constants_explicit: bool = True
    assumptions_text: Mapping[str, str] = field(default_factory=dict)
    algorithm_text: str = ""
    measured_text: str = ""
    kind: str = "theorem"
    paper: str = ""
    engine_form: EngineForm | None = None
    runnable: bool | None = None
    why_not_a_claim: str = ""
    setups: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        parts = {"bound": self.bound, **self.conditions, **self.values}  # kept LaTeX: claims.latex.latex(...)
        found = {str(k): v.latex for k, v in parts.items() if isinstance(getattr(v, "latex", None), str)}
        object.__setattr__(self, "latex", {**found, **self.latex})
        if not isinstance(self.id, str) or not self.id:
            raise ValueError(f"id={self.id!r} must be a non-empty string")
        if self.runnable is None:  # a statement with a reason and no engine form is not runnable
            object.__setattr__(self, "runnable", self.engine_form is not None or not self.why_not_a_claim)
        if not isinstance(self.runnable, bool):
            raise TypeError(f"runnable={self.runnable!r} must be True, False or None (inferred)")
        if not self.runnable and not self.why_not_a_claim:
            raise ValueError(f"{self.id}: runnable=False needs why_not_a_claim (why no engine can run it)")
        if self.runnable or self.measured is not None:
            _choice("measured", self.measured, tuple(QUANTITIES))
        _choice("expect", self.expect, ("holds", "fails"))
        _check_confidence(self.confidence)
        if self.is_read and self.location is None:
            raise ValueError(f"{self.id}: confidence={self.confidence!r} needs a location")
        _choice("kind", self.kind, KINDS)
        if not self.paper:
            object.__setattr__(self, "paper", self.id.split(".")[0])
        if self.engine_form is not None and not isinstance(self.engine_form, EngineForm):
            raise TypeError(
                f"engine_form={self.engine_form!r} must be an afltheory.claims.EngineForm or None"
            )
        if not isinstance(self.assumptions, Assumptions) and (self.runnable or self.assumptions is not None):
            raise TypeError(f"assumptions={self.assumptions!r} must be an afltheory.claims.Assumptions")
        if isinstance(self.bound, Mapping):
            terms = {str(k): _sympify(v, f"bound[{k!r}]") for k, v in self.bound.items()}
            if not terms:
                raise ValueError("bound={} must have at least one term")
        else:
            e = _sympify(self.bound, "bound")
            terms = (
                {str(a): a for a in sp.Add.make_args(sp.expand(e))}
                if isinstance(sp.expand(e), sp.Add)
                else {"bound": e}
            )
        object.__setattr__(self, "bound", terms)
        object.__setattr__(
            self,
            "conditions",
            {str(k): _sympify(v, f"conditions[{k!r}]") for k, v in self.conditions.items()},
        )
        for k, v in self.conditions.items():
            if not isinstance(v, sp.core.relational.Relational):
                raise ValueError(f"conditions[{k!r}]={v} must be a relation (e.g. eta_L*L <= 1)")
        object.__setattr__(self, "values", dict(self.values))
        object.__setattr__(self, "rate", {str(k): float(v) for k, v in self.rate.items()})
        _choice("constant", self.constant, (None, "hidden"))
        object.__setattr__(self, "holds_from", {str(k): float(v) for k, v in self.holds_from.items()})
        for k in self.holds_from:
            if k not in SYMBOLS and k not in self.extra_symbols:
                raise UnknownSymbol(f"holds_from[{k!r}]: unknown symbol; use one of {', '.join(SYMBOLS)}")
        if not isinstance(self.rate_attained, bool):
            raise TypeError(
                f"rate_attained={self.rate_attained!r} must be True (Θ: the rate is attained) or "
                "False (O: an upper rate)"
            )
        for name in ("eta", "eta_L"):
            v = getattr(self, name)
            if v is not None and not isinstance(v, (int, float, sp.Basic, str)) and not callable(v):
                raise ValueError(f"{name}={v!r} must be a number, a sympy expression in t or a callable of t")
        object.__setattr__(self, "readings", dict(self.readings))
        object.__setattr__(self, "definitions", dict(self.definitions))
        object.__setattr__(self, "setups", dict(self.setups))
        if self.runnable and self.engine_form is None:
            self.free_symbols()  # unknown symbols are refused when the claim is stated
        elif self.engine_form is not None:
            self.engine()  # the engine form is built (and its symbols checked) when the claim is stated

    # ------------------------------------------------------------------ the statement as read
    @property
    def is_read(self) -> bool:
        """True when the statement's text itself (primary or secondary) was read (``claims.is_read``)."""
        return is_read(self.confidence)

    def total(self) -> sp.Expr:
        """The bound as stated: the sum of its named terms (in the claim's own symbols, unresolved)."""
        return sp.Add(*self.bound.values())

    def value(self, values: Mapping[Any, Any]) -> float:
        """The stated bound at ``values`` ({symbol or name: number}); ValueError naming free symbols."""
        return _evaluate_stated(self.total(), values, self.id)

    def term_values(self, values: Mapping[Any, Any]) -> dict[str, float]:
        """Each stated term at ``values``."""
        return {k: _evaluate_stated(v, values, f"{self.id}:{k}") for k, v in self.bound.items()}

    def conditions_hold(self, values: Mapping[Any, Any]) -> dict[str, bool]:
        """{condition name: bool}: the stated conditions at ``values`` (ValueError naming free symbols)."""
        out = {}
        for k, c in self.conditions.items():
            r = c.subs(_by_name(values, c))
            if r.free_symbols:
                raise ValueError(
                    f"condition {k!r} of {self.id} still has free symbols {sorted(map(str, r.free_symbols))}"
                )
            out[k] = bool(r)
        return out

    def source_line(self) -> str:
        """The source, confidence, excerpt, location and the named readings in one line (the ``source`` of
        the engine form: the one way a source is written)."""
        out = f"{self.source}; confidence: {self.confidence}" + (
            f"; excerpt: “{self.excerpt}”" if self.excerpt else ""
        )
        if self.location is not None:
            out += f"; {self.location}"
        if self.readings:
            out += "; readings: " + ", ".join(self.readings)
        return out

    def false_variant(self, factor: float = 10.0) -> Claim:
        """The engine form with its bound divided by ``factor``, declared ``expect="fails"`` (its verdict
        passes when that bound is violated on the same instance): id ``<engine id>.bound_div<factor>``."""
        if not (isinstance(factor, (int, float)) and factor > 1):
            raise ValueError(f"factor={factor!r} must be a number > 1")
        c = self.engine()
        return dataclasses.replace(
            c,
            id=f"{c.id}.bound_div{factor:g}",
            title=c.title + f" — false variant: bound / {factor:g}",
            expect="fails",
            bound={k: v / factor for k, v in c.bound.items()},
        )

    def engine(self) -> Claim:
        """The claim the engines run: itself when it is written in the engines' symbols; with an engine form,
        the stated bound and conditions under its substitution (or the form's own), the verdict id, the
        source line (``source_line``), the reading extended by the form's and the confidence graded by the
        one rule ``engine_confidence``. ValueError when the claim is not runnable (``why_not_a_claim``)."""
        if not self.runnable:
            raise ValueError(f"claim {self.id!r} has no engine form: {self.why_not_a_claim}")
        ef = self.engine_form
        if ef is None:
            return self
        cached = _ENGINE.get(id(self))
        if cached is not None and cached[0] is self:
            return cached[1]
        own = ef.bound is not None
        view = dataclasses.replace(
            self,
            id=ef.id or f"published.{self.id}",
            title=ef.title or self.title,
            reference=ef.reference or self.reference,
            source=ef.source_prefix + self.source_line(),
            reading=self.reading + ef.reading,
            confidence=engine_confidence(self.confidence, own_form=own),
            bound=dict(ef.bound) if own else substitute(self.bound, ef.subs),
            conditions=dict(ef.conditions)
            if ef.conditions is not None
            else substitute(self.conditions, ef.subs),
            engine_form=None,
        )
        _ENGINE[id(self)] = (self, view)
        weakref.finalize(self, _ENGINE.pop, id(self), None)
        return view

    @property
    def assumption_class(self) -> Any:
        """The claim's ``AssumptionClass`` (``claims.assumption_class``), the class the adversary reads."""
        from .assumption_class import AssumptionClass

        return AssumptionClass.of(self)

    # ------------------------------------------------------------------ symbols
    def _resolve(self, expr: sp.Expr, extra: Mapping[str, Any] | None = None) -> sp.Expr:
        """``expr`` with the claim's (and ``extra``) values substituted (values may refer to each other)."""
        vals = dict(self.values)
        vals.update(extra or {})
        subs = {}
        for k, v in vals.items():
            sym = SYMBOLS.get(k, sp.Symbol(k))
            subs[sym] = _sympify(v, f"values[{k!r}]") if not callable(v) else v
            for s in expr.free_symbols:
                if str(s) == k:
                    subs[s] = subs[sym]
        for _ in range(6):
            new = expr.subs(subs)
            if new == expr:
                break
            expr = new
        return expr

    def free_symbols(self, extra: Mapping[str, Any] | None = None) -> set[str]:
        """The symbols the bound and conditions still need (all in ``SYMBOLS``; ``UnknownSymbol`` names any
        other, with the list of known ones)."""
        names: set[str] = set()
        exprs = list(self.bound.values()) + list(self.conditions.values())
        for e in exprs:
            names |= {str(s) for s in self._resolve(e, extra).free_symbols}
        unknown = sorted(n for n in names if n not in SYMBOLS and n not in self.extra_symbols)
        if unknown:
            raise UnknownSymbol(
                f"claim {self.id!r} uses unknown symbol(s) {unknown}: give their values "
                f"(values={{...}}) or use the known symbols {', '.join(SYMBOLS)}"
            )
        return names

    def _bound_in_force(self) -> dict[str, sp.Expr]:
        """The bound's terms as every reader sees them: ``bound``, or — when the claim states a theory
        module's ``TERM_EXPRS`` and a bound-term mutant (``afltheory.mutants``, fault point
        ``theory.terms``) is injected — its mis-transcribed copy. Applied to the *unresolved* terms, before
        the claim's values are substituted, so the fault recognizes the theorem's own terms."""
        return terms_in_force(self.bound)

    def expr(self, extra: Mapping[str, Any] | None = None) -> sp.Expr:
        """The whole bound (sum of its terms) with the claim's values substituted."""
        return sum((self._resolve(e, extra) for e in self._bound_in_force().values()), sp.Integer(0))

    def term_exprs(self, extra: Mapping[str, Any] | None = None) -> dict[str, sp.Expr]:
        """Name -> term with the claim's values substituted."""
        return {k: self._resolve(e, extra) for k, e in self._bound_in_force().items()}

    # ------------------------------------------------------------------ evaluation
    def evaluate(
        self, expr: sp.Expr, stats: Mapping[str, Any], extra: Mapping[str, Any] | None = None
    ) -> np.ndarray:
        """``expr`` (a term, the bound, a condition side) on ``stats`` (symbol name -> number or per-replicate
        array): a float array broadcast over the replicates. A missing symbol is an ``UnknownSymbol``.
        (Resolved expressions and their numeric functions are cached: a claim is evaluated many times.)"""
        syms, f = self._compiled(sp.sympify(expr), extra)
        missing = [str(s) for s in syms if str(s) not in stats]
        if missing:
            raise UnknownSymbol(
                f"claim {self.id!r}: no value for symbol(s) {missing} on this run (known here: "
                f"{', '.join(sorted(stats))}); pass values={{...}}"
            )
        with np.errstate(all="ignore"):
            out = np.asarray(f(*(np.asarray(stats[str(s)], dtype=float) for s in syms)), dtype=float)
        return out

    def _compiled(self, expr: sp.Expr, extra: Mapping[str, Any] | None) -> tuple[list, Any]:
        try:
            key = (expr, tuple(sorted((k, v) for k, v in (extra or {}).items())))
            hash(key)
        except TypeError:
            key = None
        cache = _COMPILED.get(id(self))
        if cache is None:  # dropped with the claim: a later object reusing its id starts empty
            cache = _COMPILED[id(self)] = {}
            weakref.finalize(self, _COMPILED.pop, id(self), None)
        if key is not None and key in cache:
            return cache[key]
        e = self._resolve(expr, extra)
        syms = sorted(e.free_symbols, key=str)
        out = (syms, sp.lambdify(syms, e, "numpy"))
        if key is not None:
            if len(cache) > 512:
                cache.clear()
            cache[key] = out
        return out

    def terms(
        self, stats: Mapping[str, Any], extra: Mapping[str, Any] | None = None
    ) -> dict[str, np.ndarray]:
        """Name -> the term's value on ``stats`` (per replicate). The numbers come from the theories' one
        numeric evaluation of bound terms (``afltheory.theory.evaluate_terms``, which the theorems'
        ``bound``/``bound_terms`` and the adversary use too), on the terms in force (``_bound_in_force``)
        with the claim's values substituted; a missing symbol is an ``UnknownSymbol``."""
        resolved = self._resolved_terms(extra)
        needed = sorted({str(s) for e in resolved.values() for s in e.free_symbols})
        missing = [n for n in needed if n not in stats]
        if missing:
            raise UnknownSymbol(
                f"claim {self.id!r}: no value for symbol(s) {missing} on this run (known here: "
                f"{', '.join(sorted(stats))}); pass values={{...}}"
            )
        values = {n: np.asarray(stats[n], dtype=float) for n in needed}
        with np.errstate(all="ignore"):
            # a fault already applied (_bound_in_force) is not applied twice: evaluate_terms faults only a
            # theorem's own, unscaled terms, and the scaled ones are not
            out = evaluate_terms(resolved, values)
        return {k: np.asarray(v, dtype=float) for k, v in out.items()}

    def _resolved_terms(self, extra: Mapping[str, Any] | None) -> dict[str, sp.Expr]:
        """``term_exprs(extra)``, cached per (terms in force, extra) like ``_compiled``."""
        bound = self._bound_in_force()
        try:
            key = ("terms", tuple(bound.items()), tuple(sorted((k, v) for k, v in (extra or {}).items())))
            hash(key)
        except TypeError:
            key = None
        cache = _COMPILED.get(id(self))
        if cache is None:
            cache = _COMPILED[id(self)] = {}
            weakref.finalize(self, _COMPILED.pop, id(self), None)
        if key is not None and key in cache:
            return cache[key]
        out = {k: self._resolve(e, extra) for k, e in bound.items()}
        if key is not None:
            if len(cache) > 512:
                cache.clear()
            cache[key] = out
        return out

    def bound_value(self, stats: Mapping[str, Any], extra: Mapping[str, Any] | None = None) -> np.ndarray:
        """The bound (the ordered sum of the terms) on ``stats``."""
        return sum(self.terms(stats, extra).values())

    def check_conditions(
        self, stats: Mapping[str, Any], extra: Mapping[str, Any] | None = None
    ) -> dict[str, tuple[bool, float]]:
        """Name -> (holds on every replicate, smallest slack rhs − lhs)."""
        out = {}
        for k, rel in self.conditions.items():
            lhs = self.evaluate(rel.lhs, stats, extra)
            rhs = self.evaluate(rel.rhs, stats, extra)
            slack = rhs - lhs
            strict = isinstance(rel, (sp.StrictLessThan, sp.StrictGreaterThan))
            if isinstance(rel, (sp.GreaterThan, sp.StrictGreaterThan)):
                slack = -slack if not _faults.get(_faults.FaultPoint.CLAIMS_CONDITION_SIGN) else slack
            ok = bool(np.all(slack > 0) if strict else np.all(slack >= 0))
            out[k] = (ok, float(np.min(slack)))
        return out

    # ------------------------------------------------------------------ the algorithm
    def algorithm(self, values: Mapping[str, Any] | None = None, weights: Any = None) -> Any:
        """The server rule the claim is about, with its step-size schedule resolved against ``values``
        (numbers for the claim's symbols and the problem's constants, e.g. mu, kappa, E)."""
        if self.rule is None:
            raise ValueError(f"claim {self.id!r} names no rule: pass algorithm=... to verify")
        vals = {k: v for k, v in (values or {}).items() if np.ndim(v) == 0}
        kw = dict(self.rule_options)
        for name in ("eta", "eta_L"):
            v = getattr(self, name)
            if v is None:
                continue
            if callable(v) and not isinstance(v, sp.Basic):
                kw[name] = StepSize(v, name=name)
                continue
            e = self._resolve(_sympify(v, name), vals)
            e = e.subs({s: float(vals[str(s)]) for s in e.free_symbols if str(s) in vals})
            kw[name] = StepSize(e, name=name)
            if kw[name].constant is not None:
                kw[name] = kw[name].constant
        if weights is not None and self.assumptions.weights == "data":
            kw["weights"] = weights
        return self.rule(**kw)

    def describe(self) -> str:
        """A short text: the claim, its measured quantity and bound."""
        return f"{QUANTITIES[self.measured]} ≤ {sp.sstr(self.expr())}"
