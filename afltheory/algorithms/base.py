"""The documented bases of every algorithm: ``ServerRule`` and ``WorkerRule`` (docs/DESIGN.md principle 1).

An algorithm is defined ONCE, here and in its own small class, and every backend reads the same definition:
``afltheory.simulate`` calls ``init`` / ``aggregate``; the exact engine (``afltheory.exact``) and the torch
backend read the declarative hooks below. A rule is a frozen dataclass of hyperparameters (``eta``, ``eta_L``,
``worker``, ``compressor``, ...). Rules follow the (init, update) pattern of optax: ``init`` builds a typed
state (a frozen dataclass of arrays with a leading replicate axis: ``ServerState`` for a server rule,
``WorkerState`` for a worker rule) and every update takes a state and RETURNS the new one —
``update_memory(state, ...) -> state``, ``aggregate(state, ...) -> (x_{t+1}, state)``,
``WorkerRule.finish(state, ...) -> state``.

State passing is by DONATION: the state passed to an update is given up by the caller. A rule may reuse its
arrays for the state it returns (the built-in rules write the new values into them and return the same
arrays), and a caller never reads a state after passing it — it continues with the returned one (the engine
and the torch backend do; tests/algorithms/test_state.py runs rules that poison every donated state with
NaN). Copying instead — a fresh (R, M, d) array per update — made ``simulate`` 10–11 % slower for AFA-CS
step by step, 27–53 % on its collapsed path and 13–164 % for SCAFFOLD (``python benchmarks/engine.py
--state``, copy/donate time ratios in one run, 2026-11-26). Outside an update, the holder of the current
state reaches into it only through ``arrays()`` (the engine zeroes a diverged replicate's rows there).

Server step (all rules) [Yang et al. 2022, Alg. 2–3, with the proofs' step x − η η_L G], composed ONCE in
``ServerRule.view(M)`` (a ``ServerView``, the small frozen value every engine reads: ``aggregate``, simulate's
collapsed path, the exact engine's ``ExactRule``, the fast evaluator's ``RuleView``, the PEP skeleton)::

    w_i   = local_steps_weight(K_i) · staleness_weight(τ_i) · M p_i      (None = 1; p: client ``weights``)
    AFA-CD-like (keeps_memory False):  s_t = γ / normalizer(m, M) · Σ_{i∈M_t} w_i G_i
    AFA-CS-like (keeps_memory True):   s_i ← w_i G_i for i ∈ M_t;  s_t = γ / normalizer(m, M) · Σ_{i∈[M]} s_i
    x_{t+1} = x_t − s_t,  or x_t − optimizer(s_t) with a server optimizer (``server_opt``: after s_t)

with γ = ``step_size`` (η η_L). Memory rules warm-start their slots with every worker's update at x_0
(``warm_start``; the engine supplies those updates through ``init(..., initial_updates=...)``).

Hooks a subclass may override (a mutant, a new rule), all declared here: the declarative ones —
``step_size``, ``local_steps_weight``, ``staleness_weight``, ``worker_weights``, ``normalizer``,
``keeps_memory``, ``warm_start``, ``fixed_local_steps``, ``local_step_sizes``, ``at_round`` — are honoured
by every backend; ``check_m`` (refuse an m) and ``prepare`` (the problem the workers see) are called by every
engine. The imperative ones (``IMPERATIVE_HOOKS``: ``aggregate``, ``combine`` — the sum and its memory —,
``update_memory``, ``init``, ``arrival_weights``) are honoured by ``simulate`` (and the torch backend, which
calls them); the exact engine cannot represent arbitrary code and refuses a rule that overrides them with
``UnsupportedRule`` (a ``TypeError``; it never reads such a rule as its base class), and so do the PEP
skeleton (``afltheory.pep``) and the fast evaluator. Whether a class overrides a hook is read in one place,
``ServerRule.overridden_hooks`` (``WorkerRule.declares_affine`` for a worker rule). A new stateless rule is
one class overriding the weights (see ``FedAvg``).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from .._introspect import defining_class
from .._state import ArrayState
from .._validation import check_component, check_positive
from ..compression.channel import check_compressor
from .errors import UnsupportedRule
from .local import LocalView, local_view
from .schedules import StepSize, as_step_size

__all__ = [
    "IMPERATIVE_HOOKS",
    "check_weights",
    "MemoryState",
    "NoState",
    "RuleState",
    "ServerRule",
    "ServerState",
    "ServerView",
    "UnsupportedRule",
    "WorkerRule",
    "WorkerState",
]


def check_weights(weights: Any) -> tuple[float, ...]:
    """Client weights p (one per worker): finite, >= 0, summing to 1 (within 1e-9); returned as a tuple."""
    p = np.asarray(weights, dtype=float).ravel()
    if p.size == 0 or not np.all(np.isfinite(p)) or np.any(p < 0) or abs(p.sum() - 1.0) > 1e-9:
        raise ValueError(
            f"weights={weights!r} must be a probability vector (one entry >= 0 per worker, summing to 1)"
        )
    return tuple(float(v) for v in p)


@dataclass(frozen=True)
class RuleState(ArrayState):
    """Base of the typed rule states (the ``afltheory._state.ArrayState`` protocol): a frozen dataclass whose
    every field is an array with a leading replicate axis (NumPy, or torch tensors in the torch backend). A
    state is passed to a rule's update by donation (module docstring): the update returns the new state and
    the caller never reads the old one. ``state["name"]`` reads a field; ``len(state)`` is the number of
    arrays (0, falsy: a stateless rule)."""


@dataclass(frozen=True)
class ServerState(RuleState):
    """Base of the server rules' states (``ServerRule.init`` / ``aggregate``)."""


@dataclass(frozen=True)
class WorkerState(RuleState):
    """Base of the worker rules' states (``WorkerRule.init`` / ``finish``; SCAFFOLD's ``ControlVariates``)."""


@dataclass(frozen=True)
class NoState(ServerState, WorkerState):
    """A stateless rule's state (server or worker): no arrays."""


@dataclass(frozen=True)
class MemoryState(ServerState):
    """Per-worker memory slots s_i: ``memory`` (R, M, d)."""

    memory: np.ndarray


def _sum_arrivals(G: np.ndarray, weights: np.ndarray | None) -> np.ndarray:
    """Σ_i w_i G_i over the arrivals axis of G (R, n, d) — einsum runs one pass where ``G.sum(axis=1)``
    reduces d-long rows (4× slower at d = 10; benchmarks/engine.py)."""
    if weights is None:
        return np.einsum("rnd->rd", G)
    return np.einsum("rn,rnd->rd", np.asarray(weights, dtype=float), G)


#: The imperative hooks of ``ServerRule``: code the declarative view cannot state. ``simulate`` and the torch
#: backend run them; the exact engine, the PEP skeleton and the fast evaluator refuse a rule whose class
#: overrides one (``ServerRule.overridden_hooks``, ``ServerView.overridden``) rather than read it as its base.
IMPERATIVE_HOOKS: tuple[str, ...] = ("aggregate", "update_memory", "init", "arrival_weights", "combine")


@functools.cache
def _overridden(cls: type, hooks: tuple[str, ...]) -> tuple[str, ...]:
    """The hooks of ``hooks`` that ``cls`` defines below ``ServerRule`` (cached per class)."""
    return tuple(h for h in hooks if defining_class(cls, h) is not defining_class(ServerRule, h))


@functools.cache
def _own_code(cls: type) -> tuple[str, ...]:
    """The imperative hooks ``cls`` overrides with its own code: an override whose defining class declares
    ``base_code = True`` runs the base's code (the mutation analysis's equivalent controls)."""
    return tuple(
        h for h in _overridden(cls, IMPERATIVE_HOOKS) if not defining_class(cls, h).__dict__.get("base_code")
    )


@dataclass(frozen=True, eq=False)
class ServerView:
    """The declarative server step of one server rule for ``num_workers`` workers (``ServerRule.view``),
    computed once and read by every engine (``ServerRule.aggregate``, ``simulate``'s collapsed path, the
    exact engine's ``ExactRule``, the fast evaluator's ``RuleView``, the PEP skeleton)::

        w_i     = w_K(K_i) · w_τ(τ_i) · M p_i                   (``arrival_weights``; None = 1)
        s_t     = γ / n(m, M) · Σ_i w_i G_i                      (``scale``)
        x_{t+1} = x_t − s_t, or x_t − optimizer(s_t)             (``optimizer``: ``server_opt``, after s_t)

    The sum in s_t runs over the m arrivals, or over the M memory slots s_i ← w_i G_i when ``memory``.

    ``gamma`` = the rule's ``step_size`` (η η_L); ``client_weights`` (M,) = M p_i, None when uniform (or
    ``num_workers`` is None); ``step_sequence``: round t's E local step sizes when η_L decays per local step;
    ``overridden``: the ``IMPERATIVE_HOOKS`` the rule's class overrides (empty: this view IS the rule's
    step; the exact engine, PEP and the fast evaluator refuse the rule otherwise); ``own_code``: those of
    them not declared ``base_code`` (``simulate`` may then still sum the arrivals' noise in one draw)."""

    rule: Any = field(repr=False)
    num_workers: int | None
    gamma: float
    memory: bool
    warm_start: bool
    client_weights: np.ndarray | None
    step_sequence: tuple[float, ...] | None
    optimizer: Any
    overridden: tuple[str, ...]
    own_code: tuple[str, ...]

    @functools.cached_property
    def local(self) -> LocalView | None:
        """The rule's per-worker local computation (``ServerRule.local_view``), None without
        ``num_workers``."""
        return None if self.num_workers is None else self.rule.local_view(self.num_workers)

    def normalizer(self, m: int) -> int | float:
        """n(m, M), the count the sum is divided by (the rule's ``normalizer`` hook)."""
        return self.rule.normalizer(m, self.num_workers)

    def scale(self, m: int) -> float:
        """γ / n(m, M): the factor of the (weighted) sum of the updates."""
        return self.gamma / self.rule.normalizer(m, self.num_workers)

    def k_weight(self, K: Any) -> np.ndarray:
        """w_K(K) as floats of K's shape (ones when the rule has no K weight)."""
        return _table(self.rule.local_steps_weight(np.asarray(K)), np.shape(K))

    def tau_weight(self, tau: Any) -> np.ndarray:
        """w_τ(τ) as floats of τ's shape (ones when the rule has no staleness weight)."""
        return _table(self.rule.staleness_weight(np.asarray(tau)), np.shape(tau))

    def arrival_weights(self, K: np.ndarray, tau: np.ndarray, workers: np.ndarray) -> np.ndarray | None:
        """w_i = w(K_i, τ_i) · M p_i per arrival (the rule's ``arrival_weights`` times the client weights of
        ``workers``); None when every factor is 1."""
        w = self.rule.arrival_weights(K, tau)
        pw = self.client_weights
        if pw is not None:
            w = pw[workers] if w is None else w * pw[workers]
        return w


def _table(w: Any, shape: tuple[int, ...]) -> np.ndarray:
    return np.ones(shape) if w is None else np.broadcast_to(np.asarray(w, dtype=float), shape)


class ServerRule:
    """Base of the server rules (see the module docstring for the step and the hooks). Subclasses are frozen
    dataclasses with at least ``eta``, ``eta_L``, ``worker`` and ``compressor`` fields."""

    #: the rule keeps per-worker memory slots (AFA-CS)
    keeps_memory: ClassVar[bool] = False
    #: every arrival runs this many local steps whatever the behaviour says (AsySG: 1); None: the schedule's K
    fixed_local_steps: ClassVar[int | None] = None
    #: the algorithm of [Yang et al. 2022] whose theorems cover this rule — "AFA-CD" (Theorems 2–3) or
    #: "AFA-CS" (Theorem 4) — or None (no theorem of the paper); a subclass (a mutant, a variant) inherits
    #: it. The theorems' scope check (``theory._scope``) reads it instead of type-testing the rule.
    analysed_as: ClassVar[str | None] = None
    #: the server optimizer applied after the base aggregate (``afltheory.algorithms.server_opt``; None: the
    #: step x − s). Set on a copy by ``server_opt.with_server_optimizer``; ``at_round`` keeps it.
    server_optimizer: ClassVar[Any] = None
    #: round t's E local step sizes when ``eta_L`` decays per local step (``schedules``, per="step"): set on
    #: the rule ``at_round(t, local_steps=E)`` returns, whose ``eta_L`` is their mean; None: η_L every step
    local_step_sequence: ClassVar[tuple[float, ...] | None] = None
    #: what each arriving worker applies to its update before sending it (a compressor, ``ErrorFeedback(C)``,
    #: ``DIANA(C)``; ``afltheory.compression``); a rule with the option declares it as a field. None: none.
    compressor: ClassVar[Any] = None
    #: client weights p (one per worker, summing to 1; ``worker_weights`` reads them); a rule with the option
    #: declares it as a field. None: uniform.
    weights: ClassVar[tuple[float, ...] | None] = None
    #: ``prepare(problem) -> problem``, the problem the workers see (DynamicFedAvg: its agents' mini-batches),
    #: for a rule that changes it; None (the declared default): the problem as given. Every engine applies it
    #: (``simulate``, the exact engine, the torch backend); the fast evaluator and the diagonal exact path
    #: refuse or skip a rule that defines it.
    prepare: ClassVar[Callable[[Any], Any] | None] = None

    def __post_init__(self) -> None:
        for name in ("eta", "eta_L"):  # a number (validated > 0) or a step-size schedule (schedules.py)
            v = getattr(self, name)
            if isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool):
                check_positive(name, v)
            else:
                object.__setattr__(self, name, as_step_size(v, name))
        if isinstance(self.eta, StepSize) and self.eta.per_step:
            raise ValueError(
                f"eta={self.eta!r} decays per local step; the server step size is per round "
                f"(per='step' applies to eta_L only)"
            )
        if self.weights is not None:
            object.__setattr__(self, "weights", check_weights(self.weights))
        if hasattr(self, "worker"):
            check_component(
                "worker",
                self.worker,
                WorkerRule,
                "an afltheory.algorithms WorkerRule (SGD(), FedProx(mu), SCAFFOLD(), …)",
            )
        check_compressor(self.compressor)

    # ------------------------------------------------------------------ the one view of the server step
    @classmethod
    def overridden_hooks(cls, hooks: tuple[str, ...] = IMPERATIVE_HOOKS) -> tuple[str, ...]:
        """The hooks of ``hooks`` (default: ``IMPERATIVE_HOOKS``) this class defines below ``ServerRule``:
        the one place a server rule's code is introspected (the engines read ``ServerView.overridden``)."""
        return _overridden(cls, tuple(hooks))

    @classmethod
    def own_code_hooks(cls) -> tuple[str, ...]:
        """The imperative hooks this class overrides with its own code (``overridden_hooks`` less those whose
        defining class declares ``base_code = True``: an override that runs the base's code)."""
        return _own_code(cls)

    def view(self, num_workers: int | None = None) -> ServerView:
        """The rule's declarative server step for ``num_workers`` workers (``ServerView``): what every
        engine reads. A step-size schedule must be resolved first (``at_round(t)``): its ``step_size`` is
        then a number (otherwise ``UnsupportedRule``, from the schedule). Kept on the rule for the next call
        (``simulate`` reads it every round): a copy of the rule, or one given another optimizer or local-step
        sequence, builds its own."""
        memo = getattr(self, "__dict__", {}).get("_server_view")
        if (
            memo is not None
            and memo.rule is self
            and memo.num_workers == num_workers
            and memo.optimizer is self.server_optimizer
            and memo.step_sequence is self.local_step_sequence
        ):
            return memo
        cls = type(self)
        view = ServerView(
            rule=self,
            num_workers=num_workers,
            gamma=float(self.step_size),
            memory=bool(self.keeps_memory),
            warm_start=bool(self.warm_start),
            client_weights=None if num_workers is None else self.worker_weights(num_workers),
            step_sequence=self.local_step_sequence,
            optimizer=self.server_optimizer,
            overridden=_overridden(cls, IMPERATIVE_HOOKS),
            own_code=_own_code(cls),
        )
        if hasattr(self, "__dict__"):
            self.__dict__["_server_view"] = view
        return view

    def check_m(self, m: int) -> None:
        """ValueError when the rule cannot run with ``m`` arrivals per round (FedBuff: its buffer size);
        every engine calls it with the behaviour's m. Default: any m."""

    # ------------------------------------------------------------------ declarative hooks (every backend)
    @property
    def scheduled(self) -> bool:
        """True when ``eta`` or ``eta_L`` is a step-size schedule (``afltheory.algorithms.schedules``)."""
        return isinstance(self.eta, StepSize) or isinstance(self.eta_L, StepSize)

    @property
    def per_local_step(self) -> bool:
        """True when ``eta_L`` decays per local step (``StepSize(..., per="step")``: η_{L,tE+k})."""
        return isinstance(self.eta_L, StepSize) and self.eta_L.per_step

    def steps_per_round(self, *counts: np.ndarray) -> int | None:
        """E, the one local-step count of every arrival in the arrays ``counts`` (a schedule's local steps,
        its warm-start steps), when ``eta_L`` decays per local step (None when it does not): the counter
        s = tE + k needs one E, so varying counts are refused (ValueError naming the local steps)."""
        if not self.per_local_step:
            return None
        ks = np.unique(np.concatenate([np.ravel(np.asarray(c)) for c in counts]))
        if ks.size != 1:
            raise ValueError(
                f"eta_L={self.eta_L!r} decays per local step (s = tE + k), which needs the same number of "
                f"local steps E for every arrival; the schedule's local steps are {ks.tolist()}"
            )
        return int(ks[0])

    def at_round(self, t: int, local_steps: int | None = None) -> ServerRule:
        """The constant rule of round ``t`` (``self`` when nothing is scheduled): every backend runs round t
        of a scheduled rule with this rule, so a schedule needs no code of its own in any engine. A per-step
        ``eta_L`` needs ``local_steps`` = E (every arrival's local-step count): the rule's ``eta_L`` is then
        the round's mean step and ``local_step_sequence`` its E steps (``schedules``); without it
        ``UnsupportedRule`` (a backend running one step size per round refuses such a rule)."""
        if not self.scheduled:
            return self
        eta = self.eta.at(t) if isinstance(self.eta, StepSize) else self.eta
        seq = None
        if self.per_local_step:
            if local_steps is None:
                raise UnsupportedRule(
                    f"eta_L={self.eta_L!r} decays per local step; this backend runs one local step size per "
                    f"round — use afltheory.simulate, afltheory.exact.moments or the torch backend"
                )
            seq = self.eta_L.round_steps(t, local_steps)
            eta_L = sum(seq) / len(seq)
        else:
            eta_L = self.eta_L.at(t) if isinstance(self.eta_L, StepSize) else self.eta_L
        out = dataclasses.replace(self, eta=eta, eta_L=eta_L)
        if self.server_optimizer is not None:
            object.__setattr__(out, "server_optimizer", self.server_optimizer)
        if seq is not None and len(seq) > 1:
            object.__setattr__(out, "local_step_sequence", seq)
        return out

    def worker_weights(self, num_workers: int) -> np.ndarray | None:
        """Per-worker factors M·p_i on G_i from the client weights p (``weights``, summing to 1; FedAvg with
        p_k = n_k/n [Li et al. 2020, Alg. 1]); None: uniform. With m arrivals averaged, the server applies
        (1/m) Σ_{i∈S_t} M p_i Δ_i, which is Σ_i p_i Δ_i under full participation."""
        w = self.weights
        if w is None:
            return None
        if len(w) != num_workers:
            raise ValueError(
                f"weights has {len(w)} entries; expected one per worker (num_workers={num_workers})"
            )
        return num_workers * np.asarray(w, dtype=float)

    @property
    def step_size(self) -> float:
        """γ = η η_L, the factor of the aggregated update in x_{t+1} = x_t − γ G_t."""
        return float(self.eta) * float(self.eta_L)

    def local_steps_weight(self, K: np.ndarray) -> np.ndarray | None:
        """Per-arrival factor w_K(K) on G_i (None: 1). FedAvg/FedBuff: K (a worker sends Δ = −η_L K G)."""
        return None

    def staleness_weight(self, tau: np.ndarray) -> np.ndarray | None:
        """Per-arrival factor w_τ(τ) on G_i (None: 1). FedBuff: its staleness weight."""
        return None

    def local_step_sizes(self, num_workers: int) -> np.ndarray | None:
        """Per-worker local step sizes (M,) when they differ by worker (DynamicFedAvg's μ/E_k); None: η_L."""
        return None

    def local_view(self, num_workers: int) -> LocalView:
        """``fixed_local_steps`` and ``local_step_sizes`` normalized once for ``num_workers`` workers
        (``afltheory.algorithms.local``): what every backend reads."""
        return local_view(self, num_workers)

    def normalizer(self, m: int, num_workers: int) -> int:
        """The count the aggregated sum is divided by: m arrivals, or M slots for a memory rule."""
        return num_workers if self.keeps_memory else m

    @property
    def warm_start(self) -> bool:
        """Memory slots start with every worker's update at x_0 (``memory_init="warm"``)."""
        return self.keeps_memory and getattr(self, "memory_init", "zeros") == "warm"

    @property
    def needs_warm_start(self) -> bool:
        """Alias of ``warm_start`` (older name)."""
        return self.warm_start

    def arrival_weights(self, K: np.ndarray, tau: np.ndarray) -> np.ndarray | None:
        """w(K, τ) = w_K(K) · w_τ(τ) per arrival (None when both are 1)."""
        wk, wt = self.local_steps_weight(K), self.staleness_weight(tau)
        if wk is None:
            return None if wt is None else np.asarray(wt, dtype=float)
        wk = np.asarray(wk, dtype=float)
        return wk if wt is None else wk * np.asarray(wt, dtype=float)

    # ------------------------------------------------------------------ imperative hooks (simulate, torch)
    def init(
        self,
        replicates: int,
        num_workers: int,
        dim: int,
        initial_updates: Callable[[], np.ndarray] | None = None,
    ) -> ServerState:
        """The server state for ``replicates`` runs. ``initial_updates()`` -> (R, M, d): every worker's update
        at x_0, called only by a warm-started memory rule (the engines pass it; without it the slots start at
        zero and the caller fills them)."""
        opt = self.server_optimizer
        if not self.keeps_memory:
            return NoState() if opt is None else opt.init(replicates, dim, np.zeros((replicates, 0, dim)))
        mem = np.zeros((replicates, num_workers, dim))
        if self.warm_start and initial_updates is not None:
            mem[:] = initial_updates()
        return MemoryState(mem) if opt is None else opt.init(replicates, dim, mem)

    def update_memory(self, state: ServerState, workers: np.ndarray, U: np.ndarray) -> ServerState:
        """The memory after s_i ← U_i for the arrivals ``workers`` (R, m) (U = w_i G_i). ``state`` is donated:
        its array is reused for the returned state."""
        state.memory[np.arange(U.shape[0])[:, None], workers] = U
        return state

    def combine(
        self, state: ServerState, G: np.ndarray, w: np.ndarray | None, workers: np.ndarray, scale: float
    ) -> tuple[np.ndarray, ServerState]:
        """(s_t, the new state): ``scale`` · Σ_i w_i G_i over the arrivals (G (R, m, d), w (R, m) or None:
        1), or over the memory slots after ``update_memory`` (s_i ← w_i G_i) for a memory rule; ``scale`` is
        γ / n(m, M) (``ServerView.scale``). ``state`` is donated."""
        if self.keeps_memory:
            state = self.update_memory(state, workers, G if w is None else G * w[..., None])
            s = _sum_arrivals(state.memory, None)
        else:
            s = _sum_arrivals(G, w)
        s *= scale
        return s, state

    def aggregate(
        self,
        state: ServerState,
        x: np.ndarray,
        G: np.ndarray,
        workers: np.ndarray,
        K: np.ndarray,
        delays: np.ndarray,
        num_workers: int,
    ) -> tuple[np.ndarray, ServerState]:
        """One server step: x (R, d), G (R, m, d) the arrivals' (compressed) updates,
        ``workers``/``K``/``delays`` (R, m). Returns (x_{t+1}, the new state); ``state`` is donated (the
        caller reads only the returned one). The step is the rule's view's: its weights and scale, the sum
        (and memory) through ``combine``, then the server optimizer."""
        v = self.view(num_workers)
        s, state = self.combine(state, G, v.arrival_weights(K, delays, workers), workers, v.scale(G.shape[1]))
        if v.optimizer is not None:  # after the base aggregate: its weights are never dropped
            s, state = v.optimizer.update(state, s, float(self.eta))
        return x - s, state


class WorkerRule:
    """Base of the worker rules: what one arriving worker does during its K local steps from its (stale) start
    point y_0. ``correction(state, y, y0, rows, workers)`` is added to each stochastic gradient (None:
    nothing); ``finish`` returns the per-worker state after the K steps (the state passed in is donated);
    ``init`` builds that state (a ``WorkerState``: arrays with a leading replicate axis; ``NoState()`` for a
    stateless rule). Declarative hook read by the exact engine and the collapsed sampler: ``prox_weight`` —
    the rule's correction is μ (y − y_0) with no state (SGD: 0, FedProx: μ), or None. A subclass that
    overrides ``correction``/``finish`` below the class defining ``prox_weight`` is refused by the exact
    engine (it never reads such a rule as its base)."""

    def init(self, replicates: int, num_workers: int, dim: int) -> WorkerState:
        """Per-worker state (arrays with a leading replicate axis); ``NoState()`` for stateless rules."""
        return NoState()

    def correction(
        self, state: WorkerState, y: np.ndarray, y0: np.ndarray, rows: np.ndarray, workers: np.ndarray
    ) -> np.ndarray | None:
        """The term added to each stochastic gradient at y (None: nothing)."""
        return None

    def finish(
        self,
        state: WorkerState,
        y0: np.ndarray,
        yK: np.ndarray,
        K: np.ndarray,
        eta_L: float,
        rows: np.ndarray,
        workers: np.ndarray,
        num_workers: int,
    ) -> WorkerState:
        """The per-worker state after the K local steps of the arrivals ``workers`` (n, m) of replicates
        ``rows`` (n,) from y0 to yK (n, m, d); the other replicates' rows are carried over unchanged.
        ``state`` (all replicates) is donated: its arrays may be reused for the returned state."""
        return state

    @property
    def prox_weight(self) -> float | None:
        """μ when the correction is exactly μ (y − y_0) and the rule keeps no state; None otherwise."""
        return None

    @classmethod
    def declares_affine(cls) -> bool:
        """True when a class below ``WorkerRule`` defines ``prox_weight`` and no subclass of it changed
        ``correction``/``finish``/``init``: the class's correction is the μ (y − y_0) its ``prox_weight``
        states (the one place a worker rule's code is introspected)."""
        return _declares_affine(cls)

    def affine_prox_weight(self) -> float | None:
        """``prox_weight`` if the class ``declares_affine`` (what the exact engine and the collapsed sampler
        may rely on), else None."""
        if not type(self).declares_affine() or self.prox_weight is None:
            return None
        return float(self.prox_weight)


@functools.cache
def _declares_affine(cls: type) -> bool:
    base = defining_class(cls, "prox_weight")
    if base is None or base is WorkerRule:
        return False
    return not any(
        (d := defining_class(cls, h)) is not base and d is not WorkerRule and issubclass(d, base)
        for h in ("correction", "finish", "init")
    )
