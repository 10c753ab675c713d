"""Mutation catalogue: plausible implementation bugs as first-class objects (docs/DESIGN.md, "Verdict power").

A verdict is evidence only if it would have come out differently had the implementation been wrong. Each
``Mutant`` in ``CATALOGUE`` is one such wrong implementation, of one of two kinds:

- **rule mutants** (``kind="rule"``): a subclass of a correct component overriding one hook
  (``afltheory.mutants.algorithms``): a server or worker rule, a compressor, or the worker-side scheme around
  it (``ErrorFeedback``, ``DIANA``). They *are* components — ``simulate`` and the torch backend run them
  directly; the exact engine honours a mutated declarative hook (a rule's step size, normalizer, weights; a
  compressor's ``rescale``/``mean_gain``) and refuses (TypeError) a mutant overriding an imperative one (a
  rule's ``aggregate``/``update_memory``, a compressor's sampling code below its ``moment_map``) — never
  reading a mutant as its base class.
- **engine faults** (``kind="engine"``): a wrong engine (the simulator reads the wrong stale model, misreads
  K, drops or mis-scales the noise, applies the drift of a moving optimum after the update or with σ_q for
  σ_q²; the compression channel shares one random stream between workers; the exact engine drops or
  mis-scales the noise covariance, reports its curve one round late, or applies the drift after the update /
  with σ_q for σ_q²). They exist only inside ``injected(...)``: a private hook (``afltheory._faults``) that
  the engines consult and that is None on every default path.

``with injected(mutant):`` also substitutes every correct component the mutant replaces (exact type) by its
mutant wherever an engine receives it, nested components included (``AFACD(η, η_L)`` built inside a check is
run as ``AFACDEtaLMissing(η, η_L)``; ``AFACD(..., compressor=DIANA(RandK(2)))`` as
``AFACD(..., compressor=DIANA(RandKNoRescale(2)))``); a ``Channel`` a check builds itself does the same. So a
check runs under a mutant without being edited. ``kill_matrix(...)`` (``afltheory.mutants.run``) runs checks
under every mutant; ``afltheory check --mutants`` is its command line.

Example::

    from afltheory import mutants, simulate
    with mutants.injected("sim.noise_dropped"):
        tr = simulate(problem, AFACD(1.0, 0.1), behaviour, rounds=100)   # noise-free, whatever σ_L says
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import _faults
from ..algorithms.server import AFACD, AFACS, FedAvg, FedBuff
from ..algorithms.workers import SCAFFOLD, FedProx
from ..compression.channel import DIANA, ErrorFeedback
from ..compression.compressors import QSGD, RandK
from . import algorithms as A

if TYPE_CHECKING:
    from .run import KillMatrix

__all__ = [
    "CATALOGUE",
    "CATEGORIES",
    "CONTROLS",
    "Mutant",
    "active",
    "get",
    "injected",
    "kill_matrix",
    "names",
    "probe",
]


@dataclass(frozen=True, eq=False)
class Mutant:
    """One plausible bug. ``replaces``: {correct component class: mutant class} substituted at use (exact
    type match, nested components included); ``faults``: {engine point: fault} consulted by the engines (see
    ``afltheory._faults``); ``engines``: where it acts ("simulate", "exact"); ``kind``: "rule" or
    "engine"."""

    name: str
    category: str
    description: str
    replaces: Mapping[type, type] = field(default_factory=dict)
    faults: Mapping[str, object] = field(default_factory=dict)

    @property
    def kind(self) -> str:
        """How the mutant is injected: "control", "rule" (a replaced class) or "engine" (fault points)."""
        return "control" if self.category == "control" else "rule" if self.replaces else "engine"

    @property
    def engines(self) -> tuple[str, ...]:
        """The engines the mutant can change: "simulate" (the Monte Carlo engines: ``simulate`` and the torch
        backend) and "exact" when the exact engine represents it (declarative hooks); the exact engine refuses
        (TypeError) a rule overriding an imperative hook or a worker correction, and a compressor whose
        sampling code changed below its exact moments — it never reads a mutant as its base class. A fault
        mutant: the engines of its fault points."""
        if self.replaces:
            exact_ok = not any(_exact_refuses(cls) for cls in self.replaces.values())
            return ("exact", "simulate") if exact_ok else ("simulate",)
        points = {p.split(".", 1)[0] for p in self.faults}
        rename = {"sim": "simulate", "channel": "simulate"}   # the compression channel: Monte Carlo engines
        return tuple(sorted({rename.get(p, p) for p in points}))

    @property
    def refused_by_exact(self) -> bool:
        """A rule mutant (or control) that the exact engine refuses although it runs the correct class: a
        check then switches from exact moments to Monte Carlo (or crashes), as under the equivalent controls.
        False for components the exact engine never runs, mutated or not (EF, DIANA, QSGD, …)."""
        if self.kind not in ("rule", "control"):
            return False
        return any(_exact_refuses(m) and not _exact_never_runs(b) for b, m in self.replaces.items())

    def substitute(self, component: Any) -> Any:
        """``component`` with every component whose exact type the mutant replaces — itself or any component
        nested in its dataclass fields, recursively (worker rule, compressor, the compressor inside
        ``ErrorFeedback``/``DIANA``) — rebuilt as the mutant class with the same fields. Components that
        contain nothing to replace are returned as they are (the same object)."""
        return _replace(component, self.replaces) if self.replaces else component

    def exercised_by(self, seen: set) -> bool:
        """Whether a run that consulted ``seen`` (see ``probe``) reaches this mutant: it received a rule the
        mutant replaces or read a fault point the mutant sets. (If not, the mutant cannot change that run.)"""
        return any(c in seen or qualname(c) in seen for c in self.replaces) or any(
            p in seen for p in self.faults
        )

    def __repr__(self):
        return f"Mutant({self.name!r})"


def _exact_never_runs(cls) -> bool:
    """The exact engine refuses every instance of ``cls`` (a compressor it cannot represent, EF, DIANA)."""
    from ..compression.compressors import Compressor

    if issubclass(cls, (ErrorFeedback, DIANA)):
        return True
    return issubclass(cls, Compressor) and not cls.linear


def _exact_refuses(cls) -> bool:
    """The exact engine refuses the (mutant) class ``cls`` (see ``Mutant.engines``)."""
    from ..algorithms.base import ServerRule, WorkerRule, defining_class
    from ..compression.compressors import Compressor
    from ..exact.local import _IMPERATIVE

    if issubclass(cls, ServerRule):
        return any(defining_class(cls, h) is not defining_class(ServerRule, h) for h in _IMPERATIVE)
    if issubclass(cls, WorkerRule):
        return True
    if issubclass(cls, Compressor):
        return _exact_never_runs(cls) or cls.sampling_changed_below_moments()
    return _exact_never_runs(cls)


def _replace(obj, replaces):
    """``obj`` rebuilt bottom-up with the classes in ``replaces`` substituted (exact type match)."""
    if not dataclasses.is_dataclass(obj) or isinstance(obj, type):
        return obj
    fields = [f for f in dataclasses.fields(obj) if f.init]
    changes = {}
    for f in fields:
        value = getattr(obj, f.name)
        new = _replace(value, replaces)
        if new is not value:
            changes[f.name] = new
    cls = replaces.get(type(obj))
    if cls is None and not changes:
        return obj
    return (cls or type(obj))(**{f.name: changes.get(f.name, getattr(obj, f.name)) for f in fields})


def qualname(cls) -> str:
    """``module.Class`` of a rule class (how ``probe`` results are stored as text)."""
    return f"{cls.__module__}.{cls.__qualname__}"


# ----------------------------------------------------------------------------------------- engine faults
def _rounds(d):
    return np.arange(d.shape[1])[None, :, None]


def _stale_off_by_one(d):
    """x_{t−τ−1} instead of x_{t−τ} (clipped at x_0)."""
    return np.minimum(d + 1, _rounds(d))


def _stale_oldest(d):
    """every arrival starts from the oldest model kept, x_{t−D} (D = the schedule's max delay; clipped at
    x_0)."""
    return np.minimum(np.full_like(d, d.max() if d.size else 0), _rounds(d))


def _stale_ignored(d):
    """every arrival starts from the current model x_t."""
    return np.zeros_like(d)


def _k_plus_one(K):
    return K + 1


def _k_minus_one(K):
    return np.maximum(K - 1, 1)


def _k_max(K):
    """each arrival runs the largest K of its round (of the warm start's workers for the initial K)."""
    return np.broadcast_to(K.max(axis=-1, keepdims=True), K.shape).copy()


def _std_per_coordinate(dim):
    """noise std σ_L per coordinate instead of σ_L/√d: factor √d on every draw."""
    return float(np.sqrt(dim))


def _var_per_coordinate(dim):
    """noise covariance σ_L² I instead of (σ_L²/d) I: factor d on the covariance."""
    return float(dim)


def _shared_stream(comp, v, gen):
    """every worker's compressor restarted from the same generator state: the n arrivals of a replicate share
    one random pattern (the bug of seeding each worker's compressor identically)."""
    state = gen.bit_generator.state
    ys, bs = [], []
    for i in range(v.shape[1]):
        gen.bit_generator.state = state
        y, b = comp.compress(v[:, i], gen)
        ys.append(y)
        bs.append(b)
    return np.stack(ys, axis=1), np.stack(bs, axis=1)


def _sigma_q(Q):
    return float(np.sqrt(max(np.trace(Q), 0.0)))


def _drift_std_as_var_increments(Q):
    """factor on the drift increments when σ_q is used where σ_q² belongs: Cov q = Q/σ_q (tr = σ_q)."""
    s = _sigma_q(Q)
    return s**-0.5 if s > 0 else 1.0


def _drift_std_as_var_cov(Q):
    """Q/σ_q instead of Q (tr Q = σ_q², so the covariance's trace becomes σ_q)."""
    s = _sigma_q(Q)
    return Q / s if s > 0 else Q


def _restart_at_arrival(times, now):
    """arrived workers restart at their own arrival times (correct: at ``now``, when the round closes)."""
    return list(times)


def _mean_time(times):
    """(rounds, m) compute times -> per-round time = their mean (the slowest worker's is correct)."""
    return times.mean(axis=1)


def _minibatch_with_replacement(n, shape, rng):
    """indices of B samples drawn uniformly *with* replacement from n (an int, or per-draw sizes broadcastable
    to ``shape``) — the bug; ``shape`` = (draws, B)."""
    return rng.integers(0, n, size=shape)


def _omega_is_sigma(Omega, Sigma):
    """MOCHA's Ω-step keeps the covariance Σ itself in the regularizer (the seed's printed reading)."""
    return Sigma


def _normal_quantile(level, n):
    """the normal quantile z_level where the UCB needs Student's t_{level, n−1}."""
    from scipy import stats

    return float(stats.norm.ppf(level))


def _m(name, category, description, replaces=None, faults=None) -> Mutant:
    return Mutant(name, category, description, dict(replaces or {}), dict(faults or {}))


#: (category, one line) for the report and the docs
CATEGORIES = {
    "server step": "server step scaling (η_L missing or twice, η missing)",
    "averaging": "averaging over M instead of m and vice versa",
    "K gradients": "sum instead of average of the K local gradients",
    "partial aggregation": "one arrival only, first arrival counted twice",
    "staleness": "stale model off by one / always the oldest / ignored (simulator)",
    "K misread": "local steps misread (K+1, K−1, the round's max K) (simulator)",
    "AFA-CS memory": "AFA-CS memory not updated / wrong slot / not used / no warm start",
    "FedAvg/FedBuff weights": "FedAvg's K factor missing, FedBuff's staleness weight ignored",
    "noise (simulator)": "gradient noise dropped or mis-scaled in the Monte Carlo engine",
    "noise (exact)": "noise covariance dropped or mis-scaled in the exact-moments engine",
    "exact rounds": "exact engine off by one round",
    "worker correction": "SCAFFOLD / FedProx correction sign",
    "compressor": "a compressor's law: rand-k without its d/k rescaling, QSGD on the wrong norm",
    "compression randomness": "every worker's compressor shares one random stream (simulator)",
    "compression memory": "error feedback's memory unused; DIANA's shifts frozen or of the wrong sign",
    "drift (simulator)": "Dynamic FedAvg's moving optimum: update before the drift, σ_q for σ_q² (simulator)",
    "drift (exact)": "the same two drift bugs in the exact engine (generic recursion and Stein solver)",
    "minibatch sampling": "a size-B minibatch drawn with replacement (finite-sum and Dynamic FedAvg data)",
    "MOCHA": "MOCHA's Ω-step keeps Σ instead of Σ⁻¹",
    "statistics": "the confidence machinery: a UCB with the normal quantile for Student's t",
    "wall clock": "event-driven / synchronous round clock (schedule samplers)",
}

_LIST = [
    _m(
        "afacd.eta_L_missing",
        "server step",
        "AFA-CD server step x − η G (η_L missing)",
        {AFACD: A.AFACDEtaLMissing},
    ),
    _m(
        "afacd.eta_L_twice",
        "server step",
        "AFA-CD server step x − η η_L² G (η_L twice)",
        {AFACD: A.AFACDEtaLTwice},
    ),
    _m(
        "afacd.eta_missing",
        "server step",
        "AFA-CD server step x − η_L G (η missing)",
        {AFACD: A.AFACDEtaMissing},
    ),
    _m("afacd.over_M", "averaging", "AFA-CD averages the m arrivals over M", {AFACD: A.AFACDOverM}),
    _m("afacs.over_m", "averaging", "AFA-CS averages its M memory slots over m", {AFACS: A.AFACSOverm}),
    _m(
        "afacd.sum_K",
        "K gradients",
        "AFA-CD worker update = sum (not mean) of its K gradients",
        {AFACD: A.AFACDSumK},
    ),
    _m(
        "afacd.one_arrival",
        "partial aggregation",
        "AFA-CD applies only the first arrival's update",
        {AFACD: A.AFACDOneArrival},
    ),
    _m(
        "afacd.first_twice",
        "partial aggregation",
        "AFA-CD counts the first arrival twice",
        {AFACD: A.AFACDFirstTwice},
    ),
    _m(
        "sim.stale_off_by_one",
        "staleness",
        "simulator starts arrivals at x_{t−τ−1} instead of x_{t−τ}",
        faults={"sim.delays": _stale_off_by_one},
    ),
    _m(
        "sim.stale_oldest",
        "staleness",
        "simulator starts every arrival at the oldest model x_{t−max τ}",
        faults={"sim.delays": _stale_oldest},
    ),
    _m(
        "sim.stale_ignored",
        "staleness",
        "simulator ignores delays (every arrival starts at x_t)",
        faults={"sim.delays": _stale_ignored},
    ),
    _m(
        "sim.K_plus_one",
        "K misread",
        "simulator runs K+1 local steps",
        faults={"sim.local_steps": _k_plus_one},
    ),
    _m(
        "sim.K_minus_one",
        "K misread",
        "simulator runs max(K−1, 1) local steps",
        faults={"sim.local_steps": _k_minus_one},
    ),
    _m(
        "sim.K_max",
        "K misread",
        "simulator runs the round's largest K for every arrival",
        faults={"sim.local_steps": _k_max},
    ),
    _m(
        "afacs.memory_frozen",
        "AFA-CS memory",
        "AFA-CS never updates its memory slots",
        {AFACS: A.AFACSMemoryFrozen},
    ),
    _m(
        "afacs.wrong_slot",
        "AFA-CS memory",
        "AFA-CS writes worker i's update into slot i+1",
        {AFACS: A.AFACSWrongSlot},
    ),
    _m(
        "afacs.memory_unused",
        "AFA-CS memory",
        "AFA-CS steps with this round's arrivals only (memory unused)",
        {AFACS: A.AFACSMemoryUnused},
    ),
    _m(
        "afacs.cold_start",
        "AFA-CS memory",
        "AFA-CS skips the warm start (slots start at zero)",
        {AFACS: A.AFACSColdStart},
    ),
    _m(
        "fedavg.no_K",
        "FedAvg/FedBuff weights",
        "FedAvg drops the factor K_i of Δ_i = −η_L K_i G_i",
        {FedAvg: A.FedAvgNoK},
    ),
    _m(
        "fedbuff.no_staleness",
        "FedAvg/FedBuff weights",
        "FedBuff ignores the staleness weight w(τ)",
        {FedBuff: A.FedBuffNoStaleness},
    ),
    _m(
        "sim.noise_dropped",
        "noise (simulator)",
        "simulator draws no gradient noise",
        faults={"sim.noise": lambda dim: 0.0},
    ),
    _m(
        "sim.noise_per_coordinate",
        "noise (simulator)",
        "simulator draws noise with std σ_L per coordinate instead of σ_L/√d (E‖ξ‖² = d σ_L²)",
        faults={"sim.noise": _std_per_coordinate},
    ),
    _m(
        "exact.noise_dropped",
        "noise (exact)",
        "exact engine drops the noise covariance term",
        faults={"exact.noise": lambda dim: 0.0},
    ),
    _m(
        "exact.noise_per_coordinate",
        "noise (exact)",
        "exact engine uses covariance σ_L² I instead of (σ_L²/d) I per worker (E‖ξ‖² = d σ_L²)",
        faults={"exact.noise": _var_per_coordinate},
    ),
    _m(
        "exact.round_late",
        "exact rounds",
        "exact engine reports E‖∇f(x_t)‖² one round late (value of t−1)",
        faults={"exact.round_shift": 1},
    ),
    _m(
        "anarchy.event_no_wait",
        "wall clock",
        "event-driven AFL restarts an arrived worker at its arrival time, not when its round closes",
        faults={"anarchy.event_restart": _restart_at_arrival},
    ),
    _m(
        "anarchy.sync_mean_time",
        "wall clock",
        "synchronous FedAvg charges a round the mean of its workers' compute times, not the slowest's",
        faults={"anarchy.sync_clock": _mean_time},
    ),
    _m(
        "fedprox.sign", "worker correction", "FedProx correction −μ(y − y_0)", {FedProx: A.FedProxSignFlipped}
    ),
    _m(
        "scaffold.sign", "worker correction", "SCAFFOLD correction c_i − c", {SCAFFOLD: A.SCAFFOLDSignFlipped}
    ),
    _m(
        "randk.no_rescale",
        "compressor",
        "rand-k keeps its k coordinates without the d/k rescaling (E C(x) = (k/d) x)",
        {RandK: A.RandKNoRescale},
    ),
    _m(
        "qsgd.max_norm",
        "compressor",
        "QSGD quantizes and decodes with ‖x‖_∞ instead of ‖x‖₂ (unbiased, not its stated law)",
        {QSGD: A.QSGDMaxNorm},
    ),
    _m(
        "channel.shared_stream",
        "compression randomness",
        "every worker's compressor draws from the same random stream (identical masks/sketches per round)",
        faults={"channel.rng": _shared_stream},
    ),
    _m(
        "ef.memory_unused",
        "compression memory",
        "error feedback accumulates e_i but compresses G_i, not G_i + e_i",
        {ErrorFeedback: A.ErrorFeedbackUnused},
    ),
    _m(
        "diana.shift_frozen",
        "compression memory",
        "DIANA never updates its shifts h_i",
        {DIANA: A.DIANAShiftFrozen},
    ),
    _m(
        "diana.shift_sign",
        "compression memory",
        "DIANA updates its shifts h_i ← h_i − αΔ",
        {DIANA: A.DIANAShiftSign},
    ),
    _m(
        "sim.drift_after",
        "drift (simulator)",
        "simulator updates on the round's objective before the optimum drifts (drift after the update)",
        faults={"sim.drift_order": True},
    ),
    _m(
        "sim.drift_sigma_q",
        "drift (simulator)",
        "simulator draws drift increments with covariance trace σ_q instead of σ_q²",
        faults={"sim.drift_cov": _drift_std_as_var_increments},
    ),
    _m(
        "exact.drift_after",
        "drift (exact)",
        "exact engine adds the drift covariance after the round instead of before",
        faults={"exact.drift_order": True},
    ),
    _m(
        "exact.drift_sigma_q",
        "drift (exact)",
        "exact engine uses the drift covariance Q/σ_q (trace σ_q instead of σ_q²)",
        faults={"exact.drift_cov": _drift_std_as_var_cov},
    ),
    _m(
        "ef.residual_sign",
        "compression memory",
        "error feedback keeps e_i ← C(G_i + e_i) − (G_i + e_i) (residual sign flipped)",
        {ErrorFeedback: A.ErrorFeedbackResidualSign},
    ),
    _m(
        "sampling.with_replacement",
        "minibatch sampling",
        "finite-sum minibatches (FiniteSumNoise, Dynamic FedAvg's AgentSampleNoise) drawn with replacement: "
        "covariance S/B instead of (n − B)/(B(n − 1))·S",
        faults={"problems.minibatch": _minibatch_with_replacement},
    ),
    _m(
        "mocha.omega_not_inverted",
        "MOCHA",
        "MOCHA's Ω-step puts Σ = (WᵀW)^{1/2}/tr(·) in the regularizer instead of Ω = Σ⁻¹",
        faults={"mtl.omega": _omega_is_sigma},
    ),
    _m(
        "stats.ucb_normal_quantile",
        "statistics",
        "the one-sided UCB uses the normal quantile z_level instead of Student's t_{level, R−1}",
        faults={"stats.ucb_quantile": _normal_quantile},
    ),
]

#: every catalogued mutant by name, in report order
CATALOGUE: dict[str, Mutant] = {m.name: m for m in _LIST}

#: equivalent mutants: the correct rules overriding an imperative hook with the base's own code, which the
#: exact engine refuses (a check falls back to Monte Carlo, as under the mutants overriding ``aggregate``).
#: They must survive every check; one that is "killed" marks that check's kills as possibly caused by the
#: engine switch.
CONTROLS: dict[str, Mutant] = {
    m.name: m
    for m in [
        _m(
            "control.afacd_subclass",
            "control",
            "AFA-CD unchanged, as a subclass (equivalent mutant)",
            {AFACD: A.AFACDUnchanged},
        ),
        _m(
            "control.afacs_subclass",
            "control",
            "AFA-CS unchanged, as a subclass (equivalent mutant)",
            {AFACS: A.AFACSUnchanged},
        ),
    ]
}


def names() -> list[str]:
    """The names of the catalogue's mutants."""
    return list(CATALOGUE)


def get(mutant: str | Mutant) -> Mutant:
    """The catalogued mutant (or equivalent control) ``mutant`` (a name or a ``Mutant``)."""
    if isinstance(mutant, Mutant):
        return mutant
    if mutant in CONTROLS:
        return CONTROLS[mutant]
    if mutant not in CATALOGUE:
        raise ValueError(f"mutant={mutant!r} is not catalogued; known: {', '.join(CATALOGUE)}")
    return CATALOGUE[mutant]


def active() -> Mutant | None:
    """The mutant injected right now (None outside ``injected``)."""
    return _faults._ACTIVE


@contextlib.contextmanager
def injected(mutant: str | Mutant) -> Iterator[Mutant]:
    """Inject ``mutant`` (a name or a ``Mutant``) into every engine for the duration of the block; always
    reset on exit (also on exceptions). Test-only: not reentrant (``RuntimeError`` if a mutant is active)."""
    m = get(mutant)
    if _faults._ACTIVE is not None:
        raise RuntimeError(f"mutant {_faults._ACTIVE.name!r} is already injected; injected() does not nest")
    _faults._ACTIVE = m
    try:
        yield m
    finally:
        _faults._ACTIVE = None


@contextlib.contextmanager
def probe() -> Iterator[set]:
    """Record what the engines consult inside the block (yields a set: rule classes received, fault points
    read); with no mutant injected nothing changes. ``Mutant.exercised_by(seen)`` says whether a mutant could
    change the probed run — deterministic runs that never reach a mutant are left out of the kill matrix."""
    if _faults._SEEN is not None:
        raise RuntimeError("probe() does not nest")
    seen = _faults._SEEN = set()
    try:
        yield seen
    finally:
        _faults._SEEN = None


def kill_matrix(*args: Any, **kwargs: Any) -> KillMatrix:
    """Run checks under mutants; see ``afltheory.mutants.run.kill_matrix``."""
    from .run import kill_matrix as _km

    return _km(*args, **kwargs)
