"""Mutants generated from a user's claim and its rule (``afltheory verify FILE.py --mutants``).

The catalogue (``catalogue.py``) holds the project's own plausible bugs; most of them never reach a user's
claim. ``generate(claim)`` builds, from the ``Claim`` object alone (never the file's text), the slips a user
could make in the claim's rule, its schedule and its bound:

- **rule-view mutants** (``kind="rule"``): a subclass of ``claim.rule`` overriding one declarative hook — the
  step γ = η η_L squared or with η dropped, the normalizer off by one or m ↔ M, the per-arrival K weight
  dropped / squared / off by one, the staleness weight dropped / squared, the client weights M p_k dropped /
  squared / off by the factor M, the memory slots reset every round. Only the hooks the rule uses are
  mutated, and a mutant that is the identity on the claim's class (the K weight squared when K_max = 1, m ↔ M
  under full participation, η dropped when η = 1) is not generated. A rule given as a factory that names its
  parts (``server_opt.optimized(FedAvg, ServerAdam(...))``: ``rule_class``, ``optimizer``) gets the same
  view mutants of its base class, each run through the factory (the optimizer kept), plus the
  **server-optimizer mutants** (``opt.*``): the optimizer stage dropped (the base rule's plain step), its
  state reset every round, and for an adaptive optimizer the second moment fed |g| instead of g², β1 ↔ β2
  and τ inside the square root (η m / √(v + τ)); for heavy ball the buffer damped by (1 − β). Both are claim
  edits (the claim's ``rule`` replaced by a mutated factory), category "generated rule".
- **schedule mutants** (category "generated schedule", a claim edit of ``eta`` / ``eta_L`` only): a step
  schedule in t evaluated one round late or early (t ± 1) or counted in local steps (t·K); a step resolved
  from the run's T and K with T counted in local steps (T·K) or K dropped. The claimed bound is unchanged: it
  is the run that goes wrong — every engine builds the run's rule from the claim's step. (An ``at_round``
  override of the rule class would not do: the exact engine resolves a schedule on the rule it is given
  before the mutation machinery substitutes the per-round rule, so such a mutant never acts there.)
- **claim mutants** (``kind="claim"``): one bound term's constant × 2 or ÷ 2, m ↔ M, K̄ ↔ K_max (K) in the
  bound — the transcription slips.

Claim and schedule mutants edit the claim: inside ``applied(mutant)`` every module-level ``Claim``
with the mutant's claim id in a loaded user file is replaced by its edited copy (and restored on exit). A
generated mutant is registered (``register``) so ``afltheory.mutants.get`` finds it by name, also in the
worker processes the kill matrix forks.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import sys
import types
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
import sympy as sp

from ..algorithms.schedules import t as _T_ROUND  # the round index of a step schedule
from .mutant import Mutant

__all__ = ["GENERATED", "applied", "claims_in", "generate", "reaches", "register"]

#: generated mutants by name (``register``); ``afltheory.mutants.get`` consults it after the catalogue
GENERATED: dict[str, Mutant] = {}


def register(mutants: Sequence[Mutant]) -> list[str]:
    """Make ``mutants`` findable by name (``afltheory.mutants.get``); returns their names."""
    for m in mutants:
        GENERATED[m.name] = m
    return [m.name for m in mutants]


def claims_in(module: types.ModuleType) -> dict[str, object]:
    """{global name: Claim} of a loaded module."""
    return {k: v for k, v in vars(module).items() if _is_claim(v)}


def _is_claim(v) -> bool:
    """``v`` is an ``afltheory.claims.Claim`` (told by its type's name and module: the claims package sits in
    this package's layer, so it is not imported here — tests/test_layers.py)."""
    return any(c.__name__ == "Claim" and c.__module__.startswith("afltheory.claims") for c in type(v).__mro__)


def _user_modules() -> list:
    return [m for n, m in list(sys.modules.items()) if n.startswith("afltheory_user_") and m is not None]


@contextlib.contextmanager
def applied(mutant: Mutant) -> Iterator[None]:
    """Replace, in every loaded user file, each module-level claim with id ``mutant.claim_id`` by
    ``mutant.claim_edit(claim)`` for the block (a no-op for a mutant that edits no claim)."""
    if mutant.claim_edit is None:
        yield
        return
    saved = []
    for mod in _user_modules():
        for k, c in claims_in(mod).items():
            if c.id == mutant.claim_id:
                saved.append((mod, k, c))
                setattr(mod, k, mutant.claim_edit(c))
    try:
        yield
    finally:
        for mod, k, c in saved:
            setattr(mod, k, c)


def _names_used(func: Callable) -> set[str]:
    """The global names ``func`` (and the functions/lambdas nested in it) reads."""
    out, todo = set(), [getattr(func, "__code__", None)]
    while todo:
        code = todo.pop()
        if code is None:
            continue
        out.update(code.co_names)
        todo += [c for c in code.co_consts if hasattr(c, "co_names")]
    return out


def reaches(mutant: Mutant, func: Callable) -> bool:
    """Whether the check ``func`` reads (by a module-level name) a claim the claim mutant edits."""
    mod = sys.modules.get(getattr(func, "__module__", ""), None)
    if mod is None or mutant.claim_id is None:
        return False
    names = {k for k, c in claims_in(mod).items() if c.id == mutant.claim_id}
    return bool(names & _names_used(func))


# ----------------------------------------------------------------------------------------- rule view
def _subclass(base: type, tag: str, **hooks) -> type:
    """A subclass of the (frozen dataclass) rule ``base`` overriding ``hooks``; named after the mutant."""
    name = base.__name__ + "_" + "".join(w.capitalize() for w in tag.replace(".", "_").split("_"))
    cls = type(name, (base,), {**hooks, "__doc__": f"{base.__name__} mutant: {tag}", "__module__": __name__})
    cls.__qualname__ = name
    setattr(sys.modules[__name__], name, cls)  # findable by qualname (probe records, pickling)
    return cls


def _overrides(cls: type, hook: str) -> bool:
    return bool(cls.overridden_hooks((hook,)))  # ServerRule's one introspection


def _number(v) -> float | None:
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def _rule_mutants(claim, R: Any = None) -> list[tuple[str, str, dict]]:
    """(tag, description, hooks) of the rule-view mutants of the rule class ``R`` (default ``claim.rule``)."""
    from ..algorithms.base import ServerRule

    R, A = claim.rule if R is None else R, claim.assumptions
    if not (isinstance(R, type) and issubclass(R, ServerRule)):
        return []
    full = A.participation == "full"
    k1 = A.max_local_steps == 1 or R.fixed_local_steps == 1
    out = [
        (
            "step.squared",
            "the step γ = η η_L squared",
            {"step_size": property(lambda s: (s.eta * s.eta_L) ** 2)},
        ),
        (
            "normalizer.off_by_one",
            "the aggregate divided by m + 1 (normalizer off by one)",
            {"normalizer": lambda s, m, M: R.normalizer(s, m, M) + 1},
        ),
    ]
    if _number(claim.eta) != 1.0:
        out.append(
            (
                "step.eta_dropped",
                "the server step η dropped (γ = η_L)",
                {"step_size": property(lambda s: float(s.eta_L))},
            )
        )
    if not full:
        out.append(
            (
                "normalizer.m_M",
                "the aggregate divided by M instead of m (or m for M)",
                {"normalizer": lambda s, m, M: m if R.normalizer(s, m, M) == M else M},
            )
        )
    if _overrides(R, "local_steps_weight"):
        out.append(
            (
                "k_weight.off_by_one",
                "the K weight off by one (K + 1)",
                {"local_steps_weight": lambda s, K: np.asarray(R.local_steps_weight(s, K), float) + 1},
            )
        )
        if not k1:
            out += [
                ("k_weight.dropped", "the K weight dropped", {"local_steps_weight": lambda s, K: None}),
                (
                    "k_weight.squared",
                    "the K weight squared",
                    {"local_steps_weight": lambda s, K: np.asarray(R.local_steps_weight(s, K), float) ** 2},
                ),
            ]
    if _overrides(R, "staleness_weight") and A.max_delay != 0:
        out += [
            ("tau_weight.dropped", "the staleness weight dropped", {"staleness_weight": lambda s, tau: None}),
            (
                "tau_weight.squared",
                "the staleness weight squared",
                {"staleness_weight": lambda s, tau: np.asarray(R.staleness_weight(s, tau), float) ** 2},
            ),
        ]
    if A.weights == "data" and "weights" in {f.name for f in dataclasses.fields(R)}:

        def scaled(f):
            def worker_weights(s, M):
                w = R.worker_weights(s, M)
                return None if w is None else f(w, M)

            return worker_weights

        out += [
            (
                "p_weight.dropped",
                "the client weights p_k dropped (uniform)",
                {"worker_weights": lambda s, M: None},
            ),
            (
                "p_weight.squared",
                "the client weights M p_k squared",
                {"worker_weights": scaled(lambda w, M: w**2)},
            ),
            (
                "p_weight.off_by_M",
                "the client weights p_k instead of M p_k",
                {"worker_weights": scaled(lambda w, M: w / M)},
            ),
        ]
    if R.keeps_memory:

        def reset(s, state, workers, U):
            state.memory[...] = 0.0
            return R.update_memory(s, state, workers, U)

        out.append(("memory.reset", "the memory slots reset every round", {"update_memory": reset}))
    return out


# ----------------------------------------------------------------------------------------- server optimizer
def _factory_parts(rule: Any) -> tuple[type, Any] | None:
    """(base rule class, optimizer) of a rule factory naming its parts (``server_opt.optimized``), else
    None (a plain rule class, or a factory that does not say what it builds)."""
    from ..algorithms.base import ServerRule
    from ..algorithms.server_opt import ServerOptimizer

    base, opt = getattr(rule, "rule_class", None), getattr(rule, "optimizer", None)
    if isinstance(base, type) and issubclass(base, ServerRule) and isinstance(opt, ServerOptimizer):
        return base, opt
    return None


def _mutated_optimizer(opt: Any, tag: str, **methods) -> Any:
    """``opt`` rebuilt (same fields) as a subclass of its class overriding ``methods``; named after the
    mutant and findable by qualname, as ``_subclass`` does for rules."""
    cls = _subclass(type(opt), tag, **methods)
    return cls(**{f.name: getattr(opt, f.name) for f in dataclasses.fields(opt) if f.init})


def _optimizer_mutants(opt: Any, cid: str) -> list[tuple[str, str, Any]]:
    """(tag, description, mutated optimizer — None: the stage dropped) of the server optimizer ``opt``. An
    identity optimizer (ServerSGD) gets none: dropping it is the identity."""
    from ..algorithms.server_opt import ServerOptState

    if opt.identity:
        return []
    O, name = type(opt), type(opt).__name__
    spec: list[tuple[str, str, Any]] = [
        ("opt.dropped", f"the server optimizer {name} dropped (the base rule's plain step)", None)
    ]
    if opt.heavy_ball:  # (its state reset every round is the base step: the same run as "dropped")
        beta = float(opt.beta)

        def damped(self, state, s, eta):  # m ← β m + (1 − β) g: a dampening the rule does not have
            m = beta * state.m + (1.0 - beta) * s / eta
            return eta * m, ServerOptState(m, state.v, state.memory)

        if beta > 0:  # β = 0: no buffer to damp
            spec.append(("opt.damped", f"{name}'s buffer damped: m ← β m + (1 − β) g", {"update": damped}))
    else:

        def reset(self, state, s, eta):  # m, v back to their start (m = 0, v = τ² or 0) before every step
            return O.update(self, self.init(*state.m.shape, state.memory), s, eta)

        spec.append(("opt.state_reset", f"{name}'s state (m, v) reset every round", {"update": reset}))
    if hasattr(opt, "tau") and hasattr(O, "_v"):  # the adaptive three (v, τ): Adam, Yogi, Adagrad

        def v_abs(self, v, g2):  # the second moment fed |g| (the square dropped)
            return O._v(self, v, np.sqrt(g2))

        def tau_in_sqrt(self, state, s, eta):  # η m / √(v + τ) instead of η m / (√v + τ)
            step, new = O.update(self, state, s, eta)
            return step * (np.sqrt(new.v) + self.tau) / np.sqrt(new.v + self.tau), new

        spec.append(("opt.v_not_squared", f"{name}'s second moment fed |g| instead of g²", {"_v": v_abs}))
        spec.append(
            (
                "opt.tau_in_sqrt",
                f"{name}'s step η m / √(v + τ) instead of η m / (√v + τ)",
                {"update": tau_in_sqrt},
            )
        )
        if float(opt.beta1) != float(opt.beta2):  # equal β: the swap is the identity
            swapped = dataclasses.replace(opt, beta1=opt.beta2, beta2=opt.beta1)
            spec.append(("opt.betas_swapped", f"{name}'s β1 and β2 swapped", swapped))
    return [
        (t, d, _mutated_optimizer(opt, f"{cid}.{t}", **h) if isinstance(h, dict) else h) for t, d, h in spec
    ]


def _with_rule(rule: Any) -> Callable:
    """The claim edit putting ``rule`` in the claim's place."""
    return lambda cl: dataclasses.replace(cl, rule=rule)


# ----------------------------------------------------------------------------------------- claim edits
def _edit_terms(claim, f: Callable[[dict], dict]):
    return dataclasses.replace(claim, bound=f(dict(claim.bound)))


def _claim_mutants(claim) -> list[tuple[str, str, Callable]]:
    """(tag, description, claim -> edited claim) of the claim and t-free schedule mutants."""
    from ..theory.symbols import K, Kbar, M, T, m

    t = _T_ROUND

    out = []
    terms = dict(claim.bound)
    for k in terms:
        for tag, c in (("x2", 2), ("div2", sp.Rational(1, 2))):
            out.append(
                (
                    f"bound.{k}.{tag}",
                    f"the bound's term {k!r} × {c}",
                    lambda cl, k=k, c=c: _edit_terms(cl, lambda d: {**d, k: c * d[k]}),
                )
            )
    syms = set().union(*(e.free_symbols for e in terms.values()))
    full = claim.assumptions.participation == "full"
    for a, b, what in ((m, M, "m ↔ M"), (Kbar, K, "K̄ ↔ K_max")):
        # m = M under full participation, and K̄ = K_max under constant K: the swap is then the identity
        if (a == m and full) or (a == Kbar and a not in syms) or not ({a, b} & syms):
            continue
        out.append(
            (
                f"bound.{a}_{b}",
                f"the bound with {what}",
                lambda cl, a=a, b=b: _edit_terms(
                    cl, lambda d: {k: e.subs({a: b, b: a}, simultaneous=True) for k, e in d.items()}
                ),
            )
        )
    bsyms = syms | set().union(*(getattr(r, "free_symbols", set()) for r in dict(claim.conditions).values()))
    if {str(s) for s in bsyms} & {"eta", "eta_L"}:
        return out  # the bound reads the step: a step edit would edit the claim, not only the run
    k1 = claim.assumptions.max_local_steps == 1 or getattr(claim.rule, "fixed_local_steps", None) == 1
    for name in ("eta", "eta_L"):
        e = getattr(claim, name)
        if not isinstance(e, sp.Basic):
            continue
        if t in e.free_symbols:  # a schedule in t: every engine builds the run's rule from the claim's step
            shifts = [("late", "one round late (η_{t+1} in round t)", t + 1)]
            shifts.append(("early", "one round early (η_{t−1} in round t)", sp.Max(t - 1, 0)))
            if not k1:
                shifts.append(("per_step", "with t counted in local steps (t·K)", t * K))
            out += [
                (
                    f"schedule.{name}.{tag}",
                    f"{name} evaluated {what}",
                    lambda cl, n=name, new=new: dataclasses.replace(cl, **{n: getattr(cl, n).subs(t, new)}),
                )
                for tag, what, new in shifts
            ]
            continue
        if T in e.free_symbols and claim.assumptions.max_local_steps != 1:
            out.append(
                (
                    f"schedule.{name}.T_in_steps",
                    f"{name} resolved with T counted in local steps (T·K)",
                    lambda cl, n=name: dataclasses.replace(cl, **{n: getattr(cl, n).subs(T, T * K)}),
                )
            )
        if K in e.free_symbols:
            out.append(
                (
                    f"schedule.{name}.K_dropped",
                    f"{name} with its K dropped (K = 1)",
                    lambda cl, n=name: dataclasses.replace(cl, **{n: getattr(cl, n).subs(K, 1)}),
                )
            )
    return out


def generate(claim: Any) -> list[Mutant]:
    """The generated mutants of ``claim`` (``Claim``): rule-view, schedule and claim mutants (see the module
    docstring), named ``gen.<claim id>.<tag>``. A claim declared ``expect="fails"`` gets none."""
    if claim.expect != "holds":
        return []
    from ..algorithms.server_opt import optimized

    out, parts = [], _factory_parts(claim.rule)
    for tag, desc, hooks in _rule_mutants(claim, parts[0] if parts else None):
        name = f"gen.{claim.id}.{tag}"
        if parts is None:
            cls = _subclass(claim.rule, f"{claim.id}.{tag}", **hooks)
            cat = "generated schedule" if tag.startswith("schedule.") else "generated rule"
            out.append(Mutant(name, cat, desc, replaces={claim.rule: cls}))
        else:  # through the factory, its optimizer kept (a replaced class would be rebuilt without it)
            cls = _subclass(parts[0], f"{claim.id}.{tag}", **hooks)
            edit = _with_rule(optimized(cls, parts[1]))
            out.append(Mutant(name, "generated rule", desc, claim_id=claim.id, claim_edit=edit))
    for tag, desc, opt in _optimizer_mutants(parts[1], claim.id) if parts else ():
        edit = _with_rule(parts[0] if opt is None else optimized(parts[0], opt))
        out.append(
            Mutant(f"gen.{claim.id}.{tag}", "generated rule", desc, claim_id=claim.id, claim_edit=edit)
        )
    for tag, desc, edit in _claim_mutants(claim):
        cat = "generated schedule" if tag.startswith("schedule.") else "generated claim"
        out.append(Mutant(f"gen.{claim.id}.{tag}", cat, desc, claim_id=claim.id, claim_edit=edit))
    return out


def generate_for_files(files: Sequence[str]) -> list[Mutant]:
    """Load the user ``files`` and generate (and ``register``) the mutants of every module-level claim."""
    import zlib

    from ..checks.registry import load_file

    out, seen = [], set()
    for f in files:
        load_file(f)
        name = "afltheory_user_" + format(zlib.crc32(os.path.abspath(f).encode()), "x")  # load_file's name
        for c in claims_in(sys.modules[name]).values():
            if c.id not in seen:
                seen.add(c.id)
                out += generate(c)
    register(out)
    return out
