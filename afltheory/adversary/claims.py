"""The adversary's per-reader setups: one ``SearchSpec`` per claim it can attack (a small frozen value
attached to its statement, ``Claim.setups["search"]``, in the one registry
``afltheory.published.registry``; the ids "thm2", …, "cor1", … name them; Corollary k's spec and the
lemmas' are attached to their own claims, ``searched_claim_id``): how a point of [0, 1]^p becomes
an instance inside the claim's assumptions, how the instance is evaluated exactly (a batch at a time), the
bound with its named terms, and how a violation is confirmed by Monte Carlo with the theorem's own
``bound`` on the realized schedules.

Theorem claims (``thm2``, ``thm3``, ``thm4``; corollaries ``cor1``–``cor3`` at their step sizes) measure (1/T)
Σ_{t<T} E‖∇f(x_t)‖² exactly (``fastexact``) and compare it with the bound's expectation over the schedule law.
With τ set to the largest delay the law can produce, every bound is affine in per-round averages of 1/K, K and
K² over the arrivals (Theorem 4, m = M: over the M slots, and (M − m'_t)² independent of K), so its
expectation is the bound at the expected averages: E[(1/m)Σ_{i∈M_t} g(K_i)] = (1/m) Σ_i π_i E_i g(K). The term
names are those of ``theory.theoremK.bound_terms``; ``tests/adversary`` check the expected terms against
``bound_terms`` on sampled schedules."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from .._validation import check_component
from ..algorithms.base import UnsupportedRule
from ..published import registry as registry
from ..theory import evaluate_terms, theorem2, theorem3, theorem4
from . import fastexact
from .components import biased_inclusion, periodic_max_gap
from .space import (
    AssumptionClass,
    Reader,
    Structure,
    box_of,
    certified_constants,
    decode_problem,
    pmf_from,
    rescale,
)

if TYPE_CHECKING:
    from types import ModuleType

    from .instance import Instance

__all__ = [
    "BOUNDED_KINDS",
    "CLAIMS",
    "Evaluation",
    "SearchSpec",
    "get_claim",
    "periodic_sets",
    "register_claim",
    "searched_claim_id",
]

THEOREMS = {"thm2": theorem2, "thm3": theorem3, "thm4": theorem4}
#: arrival laws that keep a memory slot's staleness bounded with m < M (round robin; searched periodic sets)
BOUNDED_KINDS = ("cyclic", "periodic")


@dataclass
class Evaluation:
    """Per candidate of a batch: ``ratio`` (max over horizons; +inf if the run diverged, NaN if the candidate
    could not be evaluated), ``T`` (the horizon), ``measured``, ``bound`` and ``terms`` (name → value) at T,
    ``status`` ("ok" | "diverged" | "outside" | "error: ...")."""

    ratio: np.ndarray
    T: np.ndarray
    measured: np.ndarray
    bound: np.ndarray
    terms: dict
    status: list


@dataclass
class Decoded:
    """A decoded batch (x* = 0 coordinates): problem arrays, law, step sizes, exact constants."""

    H: np.ndarray
    C: np.ndarray
    covs: np.ndarray
    x0: np.ndarray
    L: np.ndarray
    sigma_L: np.ndarray
    sigma_G: np.ndarray
    Delta: np.ndarray
    radius: np.ndarray
    pi: np.ndarray
    pij: np.ndarray
    arrival_params: np.ndarray | None
    delay_pmf: np.ndarray
    k_pmf: np.ndarray
    tau: np.ndarray
    K_max: np.ndarray
    eta: np.ndarray
    eta_L: np.ndarray
    inside: np.ndarray
    m: int
    arrivals: str
    tau_delay: np.ndarray | None = None  # the law's largest delay when ``tau`` is a memory staleness bound


@dataclass(frozen=True)
class SearchSpec:
    """The adversary's setup of one claim (its id, e.g. "thm2", is the setup's ``key``). ``theorem``: "thm2" |
    "thm3" | "thm4"; ``algorithm``: "AFACD" | "AFACS"; ``arrivals``: allowed laws; ``full``: m = M only
    (Theorem 4's memory is then the latest round); ``corollary``: k for Corollary k's step sizes (η_L =
    1/√T, η = √(mK) or √(MK), constant K); ``bounded_staleness``: the theorem's τ bounds the staleness of
    memory slots (Theorem 4) — with m < M only round-robin arrivals keep it bounded (every worker returns
    every ⌈M/m⌉ rounds), so m < M is searched with cyclic arrivals and τ = the largest delay + ⌈M/m⌉ − 1,
    or with adversarial periodic sequences of sets ("periodic": period P, each phase's set searched, every
    worker arriving in each period) and τ = the largest delay + the longest wait between two arrivals of a
    worker − 1."""

    id: str
    title: str
    reference: str
    theorem: str
    algorithm: str
    arrivals: tuple
    default_class: Callable[[], AssumptionClass]
    full: bool = False
    corollary: int | None = None
    notes: str = ""
    extra: dict = field(default_factory=dict)
    bounded_staleness: bool = False

    @property
    def key(self) -> str:
        """The setup's key in the registry (the adversary's id: "thm2", "cor1", "lemma2", …)."""
        return self.id

    @property
    def statement(self) -> Any:
        """The theorem as the registered ``afltheory.claims.Claim`` (the one statement ``verify`` and the
        generic adversary read); this object is its search spec (the batched evaluator, the box
        ``default_class`` derived from ``statement.assumption_class`` by ``space.box_of``). None for a
        claim with no such statement (the lemmas)."""
        return registry.get(f"yang2022.{self.theorem}") if self.theorem in THEOREMS else None

    @property
    def module(self) -> ModuleType:
        """The ``afltheory.theory`` module of the claim's theorem (its ``SPECS``, ``TERMS``, bound on
        schedules)."""
        if self.theorem not in THEOREMS:
            raise ValueError(
                f"claim {self.id!r} has no theorem bound on schedules (theorem={self.theorem!r})"
            )
        return THEOREMS[self.theorem]

    @property
    def term_names(self) -> tuple:
        """The names of the bound's terms (the theorem module's ``TERMS``)."""
        return tuple(self.module.TERMS)

    # ------------------------------------------------------------------------------------------ class checks
    def check_class(self, cls: AssumptionClass) -> AssumptionClass:
        """``cls`` if this claim can be searched in it, else a ValueError naming the conflicting field."""
        if not isinstance(cls, AssumptionClass):
            raise TypeError(f"assumptions={cls!r} must be an afltheory.adversary.AssumptionClass")
        bad = [a for a in cls.arrivals if a not in self.arrivals]
        if bad:
            raise ValueError(
                f"arrivals={list(cls.arrivals)} include {bad}, outside claim "
                f"{self.id!r}'s assumptions (allowed {list(self.arrivals)})"
            )
        if self.full and cls.m not in (None, cls.num_workers):
            raise ValueError(
                f"m={cls.m}: claim {self.id!r} is evaluated with every worker "
                f"arriving each round (m = num_workers = {cls.num_workers})"
            )
        if (
            self.bounded_staleness
            and cls.m is not None
            and cls.m < cls.num_workers
            and not set(BOUNDED_KINDS) & set(cls.arrivals)
        ):
            raise ValueError(
                f"m={cls.m} < num_workers={cls.num_workers}: claim {self.id!r} needs a bounded "
                f"memory staleness, which only cyclic or periodic arrivals give with m < M; add 'cyclic' "
                f"or 'periodic' to arrivals={list(cls.arrivals)}"
            )
        if self.corollary is not None and cls.min_rounds != cls.rounds:
            cls = cls.replace(min_rounds=cls.rounds)  # the corollary's step sizes depend on T
        return cls

    def structures(self, cls: AssumptionClass, rng: np.random.Generator) -> Structure:
        """Draw one discrete structure (m, arrival kind, extras) of a candidate inside ``cls``."""
        M = cls.num_workers
        low = 1 if not self.bounded_staleness or set(BOUNDED_KINDS) & set(cls.arrivals) else M
        m = M if self.full else (cls.m if cls.m is not None else int(rng.integers(low, M + 1)))
        kind = str(rng.choice(list(cls.arrivals)))
        if m == M:
            kind = "uniform"  # every law is "all workers" when m = M
        elif self.bounded_staleness and kind not in BOUNDED_KINDS:
            # the laws with bounded slot staleness: round robin, or a searched periodic sequence of sets
            kind = "cyclic" if "cyclic" in cls.arrivals else "periodic"
        extra = {}
        if kind == "schedule":
            extra["P"] = int(rng.integers(1, 5))
        if kind == "periodic":  # long enough for every worker to arrive once per period
            extra["P"] = int(rng.integers(-(-M // m), -(-M // m) + 4))
        if self.corollary is not None:
            extra["K"] = int(rng.integers(1, cls.K_max + 1))
        return Structure(m, kind, extra)

    # ------------------------------------------------------------------------------------------ layout
    def layout(self, cls: AssumptionClass, st: Structure, U: np.ndarray | None = None) -> tuple:
        """(reader, problem, arrivals, delays, local-step pmfs, steps) decoded from the parameter rows
        ``U``."""
        r = Reader(U)
        prob = decode_problem(cls, st, r)
        if st.arrivals == "schedule":
            P = st.extra["P"]
            arr = r.take("schedule_sets", P * cls.num_workers)
            dl = r.take("schedule_delays", P)
            kp = r.take("schedule_K", P)
        elif st.arrivals == "periodic":
            arr = r.take("periodic_sets", st.extra["P"] * cls.num_workers)
            dl = r.take("delay_pmf", cls.max_delay + 1)
            kp = r.take("k_pmf", (cls.num_workers if cls.k_per_worker else 1) * cls.K_max)
        else:
            arr = r.take("arrival_weights", cls.num_workers) if st.arrivals in ("biased", "fixed") else None
            dl = r.take("delay_pmf", cls.max_delay + 1)
            kp = r.take("k_pmf", (cls.num_workers if cls.k_per_worker else 1) * cls.K_max)
        steps = r.take("step_sizes", 2)
        return r, prob, arr, dl, kp, steps

    def num_params(self, cls: AssumptionClass, st: Structure) -> int:
        """The length of the continuous parameter vector u for structure ``st``."""
        return self.layout(cls, st)[0].pos

    # ------------------------------------------------------------------------------------------ decoding
    def decode(self, cls: AssumptionClass, st: Structure, U: np.ndarray) -> Decoded:
        """The batch of candidates encoded by the rows of ``U`` (problem, law and step sizes)."""
        U = np.atleast_2d(np.asarray(U, dtype=float))
        S, M, m = U.shape[0], cls.num_workers, st.m
        _, prob, arr, dl, kp, steps = self.layout(cls, st, U)
        H, C, covs, x0 = prob
        C, covs, x0 = rescale(cls, H, C, covs, x0)
        L, sL, sG, D, rho = certified_constants(cls, H, C, covs, x0)
        # arrival law
        if st.arrivals == "uniform" or m == M:
            pi = np.full((S, M), m / M)
            pij = np.full((S, M, M), m * (m - 1) / (M * (M - 1)) if M > 1 else 0.0)
            pij[:, np.arange(M), np.arange(M)] = m / M
            aparams = None
        elif st.arrivals == "biased":
            aparams = 0.02 + arr
            aparams = aparams / aparams.sum(axis=1, keepdims=True)
            pi, pij = np.empty((S, M)), np.empty((S, M, M))
            for j in range(S):
                pi[j], pij[j] = biased_inclusion(aparams[j], m)
        elif st.arrivals == "schedule":  # a periodic adversarial schedule: per phase a set, a delay and a K
            P = st.extra["P"]
            w = arr.reshape(S, P, M)
            aparams = np.sort(np.argsort(-w, axis=2, kind="stable")[:, :, :m], axis=2)  # (S, P, m)
            pi = np.zeros((S, P, M))
            np.put_along_axis(pi, aparams, 1.0, axis=2)
            pij = pi[..., :, None] * pi[..., None, :]
        elif st.arrivals == "cyclic":  # round t: workers (t·m + j) mod M, period M / gcd(M, m)
            P = M // np.gcd(M, m)
            pi = np.zeros((S, P, M))
            for p in range(P):
                pi[:, p, (p * m + np.arange(m)) % M] = 1.0
            pij = pi[..., :, None] * pi[..., None, :]
            aparams = None
        elif st.arrivals == "periodic":  # searched sets per phase, repaired so that every worker arrives
            aparams = periodic_sets(arr.reshape(S, st.extra["P"], M), m)
            pi = np.zeros((S, st.extra["P"], M))
            np.put_along_axis(pi, aparams, 1.0, axis=2)
            pij = pi[..., :, None] * pi[..., None, :]
        else:  # fixed: the m workers with the largest weights
            aparams = np.sort(np.argsort(-arr, axis=1, kind="stable")[:, :m], axis=1)
            pi = np.zeros((S, M))
            np.put_along_axis(pi, aparams, 1.0, axis=1)
            pij = pi[:, :, None] * pi[:, None, :]
        if st.arrivals == "schedule":  # point masses per phase: τ_p, K_p
            D1 = cls.max_delay + 1
            taus = np.minimum((dl * D1).astype(int), D1 - 1)  # (S, P)
            Kp = 1 + np.minimum((kp * cls.K_max).astype(int), cls.K_max - 1)  # (S, P)
            dp = np.zeros((S, dl.shape[1], D1))
            np.put_along_axis(dp, taus[..., None], 1.0, axis=2)
            kpm = np.zeros((S, dl.shape[1], M, cls.K_max))
            np.put_along_axis(
                kpm, np.broadcast_to((Kp - 1)[:, :, None, None], (S, dl.shape[1], M, 1)), 1.0, axis=3
            )
            tau = taus.max(axis=1)
        else:
            dp = pmf_from(dl)
            tau = np.array([np.flatnonzero(p > 0)[-1] for p in dp])
            rows = M if cls.k_per_worker else 1
            kpm = pmf_from(kp.reshape(S * rows, cls.K_max)).reshape(S, -1, cls.K_max)
            kpm = np.broadcast_to(kpm, (S, M, cls.K_max)).copy()
        if self.corollary is not None:
            kpm[:] = 0.0
            kpm[:, :, st.extra["K"] - 1] = 1.0
        Kmax = np.array([np.flatnonzero(k.reshape(-1, cls.K_max).sum(axis=0) > 0)[-1] + 1 for k in kpm])
        tau_delay = tau
        if self.bounded_staleness and m < M:  # round robin: a slot is at most ⌈M/m⌉ − 1 rounds old
            if st.arrivals == "periodic":  # the longest wait between two arrivals of a worker, − 1
                tau = tau + np.array([periodic_max_gap(a, M) - 1 for a in aparams])
            else:
                tau = tau + self.staleness_bound(M, m)
        eta, eta_L, inside = self.step_sizes(cls, st, steps, L, Kmax, tau, tau_delay=tau_delay)
        return Decoded(
            H,
            C,
            covs,
            x0,
            L,
            sL,
            sG,
            D,
            rho,
            pi,
            pij,
            aparams,
            dp,
            kpm,
            tau,
            Kmax,
            eta,
            eta_L,
            inside,
            m,
            st.arrivals,
            tau_delay,
        )

    @staticmethod
    def staleness_bound(M: int, m: int) -> int:
        """⌈M/m⌉ − 1: the most rounds a worker's memory slot ages under round-robin arrivals (before the
        delay of the update it holds)."""
        return -(-M // m) - 1

    def theorem_tau(self, instance: Instance) -> int:
        """The τ of the claim's bound for ``instance``: its largest delay, plus the slots' round-robin age for
        a bounded-staleness claim with m < M."""
        M, m = instance.num_workers, instance.m
        if not (self.bounded_staleness and m < M):
            return instance.tau
        if instance.arrivals["kind"] == "periodic":
            return instance.tau + periodic_max_gap(instance.arrivals["workers"], M) - 1
        return instance.tau + self.staleness_bound(M, m)

    def _values(self, L, eta_L, Kmax, tau, M, m_fresh, eta=None):
        v = dict(L=L, eta_L=eta_L, K_max=Kmax.astype(float), tau=tau.astype(float), M=M, m_fresh=m_fresh)
        if eta is not None:
            v["eta"] = eta
        return v

    def holds(self, v: Mapping[str, np.ndarray]) -> np.ndarray:
        """Per candidate: every condition of the theorem holds at the values ``v`` (its numeric form)."""
        ok = np.ones(np.shape(v["L"]), dtype=bool)
        for spec in self.module.SPECS:
            lhs, rhs = spec.numeric(**v)
            ok &= (lhs < rhs) if spec.strict else (lhs <= rhs)
        return ok

    def m_fresh(self, M: int, tau: np.ndarray, m: int | None = None) -> np.ndarray:
        """Theorem 4's m' for the conditions: the worst case over rounds (0 when some delay can be
        positive, else the m arrivals of a round; ``tau``: the largest delay)."""
        return np.where(tau > 0, 0.0, float(M if m is None else m))

    def step_sizes(
        self,
        cls: AssumptionClass,
        st: Structure,
        u: np.ndarray,
        L: np.ndarray,
        Kmax: np.ndarray,
        tau: np.ndarray,
        *,
        tau_delay: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(η, η_L, inside): admissible steps (η_L log-uniform below the cap of the η-free conditions, η a
        log-fraction of the largest admissible η — the positive root of the theorem's quadratic in η η_L) or
        the corollary's steps. ``inside``: every condition holds (checked with the theorem's own numeric
        specs)."""
        M = cls.num_workers
        mf = self.m_fresh(M, tau if tau_delay is None else tau_delay, st.m)
        if self.corollary is not None:
            T = cls.rounds
            K = float(st.extra["K"])
            n = M if self.corollary == 3 else st.m
            eta_L = np.full(L.shape, 1.0 / np.sqrt(T))
            eta = np.full(L.shape, np.sqrt(n * K))
            return eta, eta_L, self.holds(self._values(L, eta_L, Kmax, tau, M, mf, eta))
        free = [s for s in self.module.SPECS if "eta" not in {str(x) for x in s.free_symbols}]
        cap = 1.0 / L
        for spec in free:  # every η-free condition is c·η_L² (≤|<) rhs
            lhs, rhs = spec.numeric(**self._values(L, np.ones_like(L), Kmax, tau, M, mf, np.ones_like(L)))
            lhs = np.broadcast_to(lhs, L.shape)
            with np.errstate(divide="ignore"):
                lim = np.where(lhs > 0, np.sqrt(rhs / np.where(lhs > 0, lhs, 1.0)), np.inf)
            cap = np.minimum(cap, lim * ((1 - 1e-9) if spec.strict else 1.0))
        eta_L = cap * 10.0 ** (-cls.eta_L_decades * u[:, 0])
        a, b, c = self.module._quad(dict(L=L, tau=tau.astype(float), M=M, m_fresh=mf))
        a = np.broadcast_to(a, L.shape)
        x = 2 * c / (b + np.sqrt(b * b + 4 * a * c))
        eta = x / eta_L * (1 - 1e-12) * 10.0 ** (-2.0 * (1 - u[:, 1]))
        v = self._values(L, eta_L, Kmax, tau, M, mf, eta)
        ok = self.holds(v)
        for _ in range(8):
            if ok.all():
                break
            eta = np.where(ok, eta, eta * (1 - 1e-9))
            eta_L = np.where(ok, eta_L, eta_L * (1 - 1e-9))
            ok = self.holds(self._values(L, eta_L, Kmax, tau, M, mf, eta))
        return eta, eta_L, ok

    # ------------------------------------------------------------------------------------------ bound
    def expected_terms(self, cls: AssumptionClass, dec: Decoded, T: np.ndarray) -> dict:
        """E over the schedule law of ``theoremK.bound_terms`` with τ = the law's largest delay: dict name →
        (S, len(T)) for horizons T."""
        M, m = cls.num_workers, dec.m
        Ks = np.arange(1, cls.K_max + 1, dtype=float)
        EinvK = dec.k_pmf @ (1.0 / Ks)
        EK = dec.k_pmf @ Ks
        EK2 = dec.k_pmf @ Ks**2
        L, sL2, sG2 = dec.L[:, None], dec.sigma_L[:, None] ** 2, dec.sigma_G[:, None] ** 2
        tau = dec.tau[:, None].astype(float)
        Tf = T[None, :].astype(float)
        one = np.ones((1, len(T)))
        stats = {
            "T": Tf,
            "L": L,
            "sigma_L": np.sqrt(sL2),
            "sigma_G": np.sqrt(sG2),
            "tau": tau,
            "eta": dec.eta[:, None],
            "eta_L": dec.eta_L[:, None],
            "Delta": dec.Delta[:, None],
            "m": float(m),
            "M": float(M),
        }
        if self.theorem in ("thm2", "thm3"):
            ik = self._round_average(dec.pi, EinvK, T) / m  # E (1/m) Σ_{M_t} 1/K, averaged over t < T
            stats.update(
                Kbar=1.0 / ik,
                Ktilde=self._round_average(dec.pi, EK, T) / m,
                Khat2=self._round_average(dec.pi, EK2, T) / m,
            )
        else:  # Theorem 4: m'_t (fresh slots) ~ Binomial(m, P(τ_t = 0)); the slots' K are the workers' laws
            ikb = EinvK.mean(axis=1)[:, None]
            Tmax = int(T.max())
            q = np.empty((len(dec.tau), Tmax))
            for t in range(Tmax):
                q[:, t] = 1.0 - fastexact._delay_at(dec.delay_pmf, t)[:, 0]
            p0 = 1.0 - q
            e2 = (m * p0 * q + (M - m * p0) ** 2) / M**2  # E (M − m'_t)² / M²
            e2[:, 0] = 0.0  # round 0: every slot is fresh (warm start at x_0, delays clip to 0)
            stats.update(
                Kbar=1.0 / ikb,
                Ktilde=EK.mean(axis=1)[:, None],
                Khat2=EK2.sum(axis=1)[:, None],
                Qstale=np.cumsum(e2, axis=1)[:, T - 1] / Tf * ikb,
            )
        # the theorem's own terms (theoremK.TERM_EXPRS), evaluated on the law's expected run averages
        out = evaluate_terms(self.module.TERM_EXPRS, stats)
        return {k: np.broadcast_to(v, (len(dec.tau), len(T))) * one for k, v in out.items()}

    @staticmethod
    def _round_average(pi, g, T):
        """(1/T) Σ_{t<T} Σ_i π_i(t) g_i for horizons T: (S, len(T)); π i.i.d. (S, M) or periodic (S, P, M)."""
        if pi.ndim == 2 and g.ndim == 2:
            return (pi * g).sum(axis=1)[:, None] * np.ones((1, len(T)))
        if pi.ndim == 2:
            pi = pi[:, None]
        per = np.einsum("spm,spm->sp", pi, g if g.ndim == 3 else g[:, None])  # (S, P)
        P = per.shape[1]
        seq = per[:, np.arange(int(T.max())) % P]
        return np.cumsum(seq, axis=1)[:, T - 1] / T[None, :]

    # ------------------------------------------------------------------------------------------ evaluate
    def batch(self, cls: AssumptionClass, dec: Decoded) -> fastexact.Batch:
        """The exact-moment batch (``adversary.fastexact``) of the decoded candidates."""
        Hbar = dec.H.mean(axis=1)
        return fastexact.Batch(
            hessians=dec.H,
            b_tilde=np.einsum("smij,smj->smi", dec.H, dec.C),
            noise_cov=dec.covs,
            hbar=Hbar,
            x0=dec.x0,
            m=dec.m,
            pi=dec.pi,
            pij=dec.pij,
            delay_pmf=dec.delay_pmf,
            k_pmf=dec.k_pmf,
            rules=self.rules(dec),
        )

    def rules(self, dec: Decoded) -> tuple:
        """One server rule per decoded candidate (the claim's algorithm at its (η, η_L)); the evaluator reads
        them through their declarative view, so a substituted rule (a mutant) is what is evaluated."""
        from .instance import ALGORITHMS

        alg = ALGORITHMS[self.algorithm]
        return tuple(alg(float(e), float(el)) for e, el in zip(dec.eta, dec.eta_L, strict=True))

    def trajectory(
        self, cls: AssumptionClass, st: Structure, u: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict]:
        """One candidate over t: (E‖∇f(x_t)‖² for t = 0..T_max, horizons T = 1..T_max, running average
        (1/T) Σ_{t<T} E‖∇f(x_t)‖², {term: value at horizon T}) — for the worst-instance plot."""
        dec = self.decode(cls, st, np.asarray(u, dtype=float)[None])
        g = fastexact.grad_norm_sq(self.batch(cls, dec), cls.rounds)[0]
        T = np.arange(1, cls.rounds + 1)
        terms = {k: v[0] for k, v in self.expected_terms(cls, dec, T).items()}
        return g, T, np.cumsum(g[:-1]) / T, terms

    def evaluate(self, cls: AssumptionClass, st: Structure, U: np.ndarray) -> Evaluation:
        """Exact measured/bound ratios of the candidates ``U`` (the worst horizon T of each)."""
        U = np.atleast_2d(U)
        S = U.shape[0]
        T = np.arange(cls.min_rounds, cls.rounds + 1)
        try:
            dec = self.decode(cls, st, U)
            g = fastexact.grad_norm_sq(self.batch(cls, dec), cls.rounds)
            terms = self.expected_terms(cls, dec, T)
        except UnsupportedRule:  # the rule cannot be represented: the whole search is refused
            raise
        except Exception as exc:  # noqa: BLE001 - a candidate that cannot be evaluated is recorded, never fatal
            nan = np.full(S, np.nan)
            return Evaluation(nan, np.zeros(S, int), nan, nan, {}, [f"error: {exc}"] * S)
        meas = np.cumsum(g[:, : cls.rounds], axis=1)[:, T - 1] / T[None, :]
        bound = sum(terms.values())
        with np.errstate(divide="ignore", invalid="ignore"):
            r = meas / bound
        r = np.where(np.isnan(r), -np.inf, r)
        j = np.argmax(r, axis=1)
        rows = np.arange(S)
        ratio = r[rows, j]
        status = []
        for k in range(S):
            if not dec.inside[k]:
                status.append("outside")
            elif not np.isfinite(meas[k, j[k]]):
                status.append("diverged")
            else:
                status.append("ok")
        ratio = np.where(dec.inside, ratio, np.nan)
        return Evaluation(
            ratio, T[j], meas[rows, j], bound[rows, j], {k: v[rows, j] for k, v in terms.items()}, status
        )


class _Specs(Mapping):
    """The adversary's ids -> their ``SearchSpec``: a view of the registry's "search" setups."""

    def __getitem__(self, key: str) -> SearchSpec:
        try:
            return registry.setups("search")[key]
        except KeyError:
            raise KeyError(key) from None

    def __iter__(self):
        return iter(registry.setups("search"))

    def __len__(self) -> int:
        return len(registry.setups("search"))


#: id -> search spec (a view of the one registry)
CLAIMS: Mapping[str, SearchSpec] = _Specs()


def periodic_sets(weights: np.ndarray, m: int) -> np.ndarray:
    """(S, P, m) sorted worker sets from weights (S, P, M): each phase takes its m largest weights; then every
    worker that never arrives replaces, in the phase where it has its largest weight among the phases whose
    set holds a worker arriving more than once, that repeated worker of lowest weight (so every worker arrives
    at least once per period; possible whenever P·m ≥ M)."""
    S, P, M = weights.shape
    if P * m < M:
        raise ValueError(f"period P={P} with m={m} cannot cover num_workers={M} (need P·m >= M)")
    sets = np.argsort(-weights, axis=2, kind="stable")[:, :, :m].copy()
    for s in range(S):
        W = sets[s]
        count = np.bincount(W.ravel(), minlength=M)
        for i in np.flatnonzero(count == 0):
            best = None
            for p in range(P):
                for j in range(m):
                    w = W[p, j]
                    if count[w] > 1 and (best is None or (weights[s, p, i] - weights[s, p, w]) > best[0]):
                        best = (weights[s, p, i] - weights[s, p, w], p, j)
            _, p, j = best
            count[W[p, j]] -= 1
            W[p, j] = i
            count[i] += 1
    return np.sort(sets, axis=2)


def register_claim(spec: SearchSpec) -> SearchSpec:
    """Attach ``spec`` to the claim it attacks in the registry (``Claim.setups["search"]``,
    ``searched_claim_id``; a spec no registered claim states is kept under its id only) and return it
    (ValueError if the id is taken)."""
    check_component("claim", spec, SearchSpec, "an afltheory.adversary SearchSpec")
    if spec.id in CLAIMS:
        raise ValueError(f"claim id {spec.id!r} registered twice")
    return registry.attach(searched_claim_id(spec), "search", spec)


def searched_claim_id(spec: SearchSpec) -> str | None:
    """The id of the registered claim a search spec attacks: Corollary k's claim for a corollary's spec
    ("yang2022.cork", though the search evaluates Theorem k+1's bound, ``spec.statement``), the lemma's claim
    for a lemma's ("yang2022.lemma2", "yang2022.drift"), else its theorem's; None when no registered claim
    states it (a user's spec)."""
    if spec.corollary is not None:
        cid = f"yang2022.cor{spec.corollary}"
    elif spec.statement is not None:
        cid = spec.statement.id
    else:
        cid = f"yang2022.{spec.theorem}"
    return cid if cid in registry.CLAIMS else None


def get_claim(claim: str | SearchSpec) -> SearchSpec:
    """The search spec named ``claim`` (a SearchSpec is returned as is); ValueError for an unknown name."""
    if isinstance(claim, SearchSpec):
        return claim
    if not isinstance(claim, str) or claim not in CLAIMS:
        raise ValueError(f"claim={claim!r} is not a registered claim; allowed: {sorted(CLAIMS)}")
    return CLAIMS[claim]


def _box(theorem: str, **fields: Any) -> AssumptionClass:
    """The default box of a theorem's search: ``space.box_of`` of its statement's ``AssumptionClass``."""
    return box_of(registry.get(f"yang2022.{theorem}").assumption_class, **fields)


register_claim(
    SearchSpec(
        "thm2",
        "Theorem 2: AFA-CD under general arrival processes",
        "[Yang et al. 2022, Thm 2]",
        "thm2",
        "AFACD",
        ("uniform", "biased", "fixed", "cyclic", "schedule"),
        lambda: _box("thm2"),
    )
)
register_claim(
    SearchSpec(
        "thm3",
        "Theorem 3: AFA-CD under uniform arrivals",
        "[Yang et al. 2022, Thm 3]",
        "thm3",
        "AFACD",
        ("uniform",),
        lambda: _box("thm3"),
    )
)
register_claim(
    SearchSpec(
        "thm4",
        "Theorem 4: AFA-CS (all M memory slots), m ≤ M arrivals per round",
        "[Yang et al. 2022, Thm 4]",
        "thm4",
        "AFACS",
        ("uniform", "cyclic", "periodic"),
        lambda: _box("thm4", bounded_staleness=True),
        bounded_staleness=True,
        notes="m = M: slot staleness = the arrival's delay ≤ τ; m < M: round-robin arrivals, "
        "slot staleness ≤ largest delay + ⌈M/m⌉ − 1 = τ, or an adversarial periodic sequence of sets "
        "(period P, every worker in each period), slot staleness ≤ largest delay + longest wait between "
        "two arrivals − 1 = τ (under i.i.d. arrivals with m < M the staleness of absent workers "
        "is unbounded, outside the class).",
    )
)
_CORS = ((1, "thm2", "AFACD", False), (2, "thm3", "AFACD", False), (3, "thm4", "AFACS", True))
for _k, _thm, _alg, _full in _CORS:
    register_claim(
        SearchSpec(
            f"cor{_k}",
            f"Corollary {_k}: Theorem {_k + 1} at η_L = 1/√T, η = √({'M' if _k == 3 else 'm'}K), constant K",
            f"[Yang et al. 2022, Cor {_k}]",
            _thm,
            _alg,
            ("uniform", "biased", "fixed") if _k == 1 else ("uniform",),
            (
                lambda k=_k, thm=_thm: _box(
                    thm,
                    bounded_staleness=thm == "thm4",
                    dim=2,
                    num_workers=4,
                    max_delay=1,
                    K_max=2,
                    rounds=2000,
                    min_rounds=2000,
                    arrivals=("uniform", "biased", "fixed") if k == 1 else ("uniform",),
                )
            ),
            full=_full,
            corollary=_k,
            bounded_staleness=_thm == "thm4",
        )
    )
