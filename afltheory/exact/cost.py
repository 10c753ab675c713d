"""Cost projection of the exact second-moment recursion (issue 31): time and memory before a run.

One round of ``ExactSystem.step`` on the stacked state of size n = nJ + Md (nJ = 1 + H·d, H = max_delay + 1
stored models, Md = M·d AFA-CS memory slots or 0) does, in this order (see moments.py):

- two sparse products with the round operator Ā (``A @ S``, ``A @ T.T``): 4·nnz(Ā)·n flops; nnz(Ā) is read
  off the built operator (``ExactSystem.projected_cost``), at most d·(1 + B·d)·(1 + M[AFA-CS]) + H·d +
  2·M·d[AFA-CS] with B the number of delays of positive probability (Ā's x-row holds a d×d block per such
  delay, dense for dense Hessians, diagonal for diagonal ones; AFA-CS adds one such row block per slot);
- BLAS products: Y = D̄ S_JJ (2·M·d·nJ²), AFA-CS's slot blocks (4·Md²·nJ), the within-worker variance of
  the R workers whose (K, τ) is random (2·R·d²·nJ + 2·C·d·(1+d)·(1+2d), C = Σ over them of |K support|);
- ``einsum`` contractions (no BLAS): the cross-worker term (2·M²·d·nJ + 2·M·d²·nJ, not AFA-CS) and the
  delay mixture of the random workers (2·R·H·(1+d)²);
- elementwise passes over the state: ~6·n² (the symmetrisation, the dense copy of the sparse product) plus
  ~8·Md² for AFA-CS's slot blocks and 4·M·d² for a compressor's ``moment_map``;
- a fixed interpreter cost per round (~60 numpy calls, with the round's readout).

Set-up, once per run: the local maps (interpreter work per local step and per K of the pmfs; their d³ flops
are bounded separately by ``MAX_LOCAL_MAP_FLOPS``) and the round operators, one per distinct round law
(rounds 0..max_delay for the built-in delays, then one), each a Python loop over (worker, K, τ) triples.

Seconds = Σ counts × the per-operation constants ``SECONDS_PER`` (one BLAS thread; measured with
``benchmarks/exact_scaling.py --calibrate``; docs/performance.md gives the measurement and how far the
projection lands from measured runs). The projection is an order-of-magnitude estimate made before anything
runs; ``moments`` also times its first round and warns from that measurement (a machine slower than the one
the constants were measured on).

Memory: ``estimate_memory`` (a few n×n state-sized arrays, (Md)² for AFA-CS) plus the returned moments
(rounds + 1)·(dim + 3) floats, compared with the RAM available now (``available_memory``: MemAvailable of
/proc/meminfo, else the free physical pages).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from .._validation import check_int

__all__ = [
    "BATCHED_SECONDS_PER",
    "ExactCost",
    "SECONDS_PER",
    "available_memory",
    "batched_round_work",
    "estimate_memory",
    "project_batched_cost",
    "project_cost",
    "round_work",
]

#: Per-operation constants (seconds) of the projection: one BLAS flop (dense matmul, one thread), one einsum
#: flop, one flop of a sparse (CSR) × dense product, one element of a dense elementwise pass, the fixed
#: interpreter cost of one round, of one local step of the local maps and of one (worker, K, τ) term of a
#: round operator's construction. Measured on the project machine (2 shared cores, OPENBLAS_NUM_THREADS=1,
#: CPU time, best of 3, three runs agreeing within 7 %) with ``benchmarks/exact_scaling.py --calibrate``,
#: 2026-11-26 at load 7-8.
SECONDS_PER = {
    "blas_flop": 4.0e-11,
    "einsum_flop": 1.0e-10,
    "sparse_flop": 1.4e-10,
    "element": 4.4e-10,
    "round": 2.6e-5,
    "local_step": 4.8e-6,
    "build_term": 4.7e-6,
}


@dataclass(frozen=True)
class ExactCost:
    """Projected cost of ``rounds`` rounds of the exact recursion: per-round operation counts,
    ``seconds_per_round``, ``setup_seconds`` (local maps and round operators, once), ``seconds`` (total:
    set-up plus rounds) and ``bytes`` (peak memory of the recursion and its output)."""

    dim: int
    num_workers: int
    history: int
    memory_slots: bool
    state_size: int
    rounds: int
    blas_flops: float
    einsum_flops: float
    sparse_flops: float
    elements: float
    seconds_per_round: float
    setup_seconds: float
    seconds: float
    bytes: int

    def describe(self) -> str:
        """One line with the numbers: rounds, state size and what it is made of, time and memory."""
        return (
            f"{self.rounds} rounds of the exact recursion, state size n = {self.state_size} (dim "
            f"{self.dim}, delay history {self.history}, num_workers {self.num_workers}"
            f"{', AFA-CS memory slots' if self.memory_slots else ''}): ~{self.seconds_per_round:.3g} s per "
            f"round ({self.blas_flops + self.einsum_flops + self.sparse_flops:.3g} flops), "
            f"~{self.seconds:.3g} s in all with ~{self.setup_seconds:.3g} s of set-up, "
            f"~{self.bytes / 1024**2:.4g} MiB"
        )


def round_work(
    dim: int,
    num_workers: int,
    history: int,
    memory_slots: bool,
    *,
    delay_blocks: int | None = None,
    random_workers: int = 0,
    k_combos: int = 0,
    compressed: bool = False,
    nnz: int | None = None,
) -> dict[str, float]:
    """Operation counts of one round (keys ``blas_flops``, ``einsum_flops``, ``sparse_flops``,
    ``elements``) for a state with ``history`` stored models of dimension ``dim``; ``delay_blocks``: the
    number of delays of positive probability (default: all ``history``); ``random_workers`` / ``k_combos``:
    the workers whose (K, τ) is random and the sum of their K-support sizes; ``compressed``: a linear
    compressor's ``moment_map`` per round; ``nnz``: the round operator's stored entries when known (default:
    the dense-block bound above, exact for problems with dense Hessians)."""
    d = check_int("dim", dim, low=1)
    M = check_int("num_workers", num_workers, low=1)
    H = check_int("history", history, low=1)
    B = H if delay_blocks is None else check_int("delay_blocks", delay_blocks, low=1, high=H)
    R = check_int("random_workers", random_workers, low=0, high=M)
    C = check_int("k_combos", k_combos, low=0)
    cs = bool(memory_slots)
    nJ = 1 + H * d
    Md = M * d if cs else 0
    n = nJ + Md
    if nnz is None:
        nnz = d * (1 + B * d) * (1 + (M if cs else 0)) + H * d + (2 * M * d if cs else 0)
    nnz = check_int("nnz", nnz, low=1)
    blas = 2.0 * M * d * nJ**2 + 2.0 * R * d * d * nJ + 2.0 * C * d * (1 + d) * (1 + 2 * d)
    einsum = 2.0 * R * H * (1 + d) ** 2
    elements = 6.0 * n * n + (4.0 * M * d * d if compressed else 0.0)
    if cs:
        blas += 4.0 * Md * Md * nJ
        elements += 8.0 * Md * Md
    else:
        einsum += 2.0 * M * M * d * nJ + 2.0 * M * d * d * nJ
    return {
        "blas_flops": blas,
        "einsum_flops": einsum,
        "sparse_flops": 4.0 * nnz * n,
        "elements": elements,
    }


def project_cost(
    dim: int,
    num_workers: int,
    history: int,
    memory_slots: bool,
    rounds: int,
    *,
    delay_blocks: int | None = None,
    random_workers: int = 0,
    k_combos: int = 0,
    compressed: bool = False,
    nnz: int | None = None,
    local_steps: int = 0,
    build_terms: int = 0,
    constants: dict[str, float] | None = None,
) -> ExactCost:
    """``ExactCost`` of ``rounds`` rounds (arguments as ``round_work``; ``local_steps``: Σ_i (K_max,i + |K
    support of worker i|), the local maps' interpreter work; ``build_terms``: Σ over the round operators to
    build of their (worker, K, τ) terms; ``constants``: per-operation seconds, default ``SECONDS_PER``)."""
    rounds = check_int("rounds", rounds, low=1)
    c = SECONDS_PER if constants is None else constants
    w = round_work(
        dim,
        num_workers,
        history,
        memory_slots,
        delay_blocks=delay_blocks,
        random_workers=random_workers,
        k_combos=k_combos,
        compressed=compressed,
        nnz=nnz,
    )
    per_round = (
        w["blas_flops"] * c["blas_flop"]
        + w["einsum_flops"] * c["einsum_flop"]
        + w["sparse_flops"] * c["sparse_flop"]
        + w["elements"] * c["element"]
        + c["round"]
    )
    setup = (
        check_int("local_steps", local_steps, low=0) * c["local_step"]
        + check_int("build_terms", build_terms, low=0) * c["build_term"]
    )
    nbytes = estimate_memory(dim, num_workers, history - 1, bool(memory_slots)) + 8 * (rounds + 1) * (dim + 3)
    return ExactCost(
        dim=dim,
        num_workers=num_workers,
        history=history,
        memory_slots=bool(memory_slots),
        state_size=1 + history * dim + (num_workers * dim if memory_slots else 0),
        rounds=rounds,
        seconds_per_round=per_round,
        setup_seconds=setup,
        seconds=setup + per_round * rounds,
        bytes=int(nbytes),
        **w,
    )


def estimate_memory(dim: int, num_workers: int, max_delay: int, memory_slots: bool) -> int:
    """Bytes the exact engine needs: a few (n, n) state-sized arrays (and (Md, Md) for AFA-CS)."""
    dim, num_workers = check_int("dim", dim, low=1), check_int("num_workers", num_workers, low=1)
    max_delay = check_int("max_delay", max_delay, low=0)
    if not isinstance(memory_slots, (bool, np.bool_)):
        raise TypeError(f"memory_slots={memory_slots!r} must be True or False")
    nJ = 1 + (max_delay + 1) * dim
    Md = num_workers * dim if memory_slots else 0
    n = nJ + Md
    return 8 * (5 * n * n + 4 * Md * Md + 3 * num_workers * dim * nJ + num_workers**2)


#: Per-operation constants of the batched per-coordinate recursion (``exact.diagonal.DiagonalSystem``, its
#: arrays stacked over the dim coordinates): one flop of its stacked n₁ × n₁ matrix products (``blas_flop``),
#: one flop of its other small products and reductions (``small_flop``), one element of an elementwise pass,
#: the fixed cost per coordinate of one round (numpy's per-matrix dispatch in stacked products), per random
#: worker and coordinate (the within-worker variance's gathers), and the fixed interpreter cost of one round
#: (~40 numpy calls, paid once whatever dim is). Fitted by hand on the project machine (one BLAS thread, CPU
#: time, 2026-12-02 at load ~8) to ``benchmarks/exact_structure.py --calibrate``: projected / measured per
#: round 0.75–2.3 over its 24 configurations (docs/performance.md).
BATCHED_SECONDS_PER = {
    "blas_flop": 6.0e-11,
    "small_flop": 3.0e-10,
    "element": 5.0e-10,
    "coordinate": 3.0e-7,
    "random_worker": 1.2e-7,
    "round": 5.0e-5,
}


def batched_round_work(
    num_workers: int, history: int, memory_slots: bool, random_workers: int = 0, k_combos: int = 0
) -> dict[str, float]:
    """Operation counts of one round of the batched per-coordinate recursion for ONE coordinate (keys
    ``blas_flops``, ``small_flops``, ``elements``): the stacked state has n₁ = 1 + history (+ num_workers)
    entries a side, nJ₁ = 1 + history. Ā S Āᵀ: 4·n₁³; D̄ S_JJ: 2·M·nJ₁²; the cross-worker term 2·M·nJ₁ (its
    Δ-weighted factor is per operator), or AFA-CS's slot blocks 4·M²·nJ₁ (+ 8·M² elements); the within-worker
    variance of the random workers 8·R·H + 16·C; the symmetrisation 2·n₁²."""
    M = check_int("num_workers", num_workers, low=1)
    H = check_int("history", history, low=1)
    R = check_int("random_workers", random_workers, low=0, high=M)
    C = check_int("k_combos", k_combos, low=0)
    nJ = 1 + H
    n = nJ + (M if memory_slots else 0)
    small = 2.0 * M * nJ * nJ + 8.0 * R * H + 16.0 * C
    elements = 2.0 * n * n
    if memory_slots:
        small += 4.0 * M * M * nJ
        elements += 8.0 * M * M
    else:
        small += 2.0 * M * nJ
    return {"blas_flops": 4.0 * n**3, "small_flops": small, "elements": elements}


def project_batched_cost(
    dim: int,
    num_workers: int,
    history: int,
    memory_slots: bool,
    rounds: int,
    *,
    random_workers: int = 0,
    k_combos: int = 0,
    local_steps: int = 0,
    build_terms: int = 0,
    constants: dict[str, float] | None = None,
) -> ExactCost:
    """``ExactCost`` of ``rounds`` rounds of the batched per-coordinate recursion of a ``dim``-dimensional
    diagonal problem (arguments as ``project_cost``; ``build_terms``: one coordinate's round-operator terms,
    built once on (dim,) arrays): per round, ``dim`` times ``batched_round_work`` at ``constants`` (default
    ``BATCHED_SECONDS_PER``) plus one round's interpreter cost; set-up, twice one coordinate's (coordinate
    0's system, then the batched maps and operators); memory, ``dim`` states of n₁² entries (a few copies)
    and the output. The reported state size is the dense one's (1 + history·dim (+ num_workers·dim)), the
    counts the d coordinates' sums (``small_flops`` reported as einsum flops)."""
    d = check_int("dim", dim, low=1)
    M = check_int("num_workers", num_workers, low=1)
    H = check_int("history", history, low=1)
    rounds = check_int("rounds", rounds, low=1)
    c = BATCHED_SECONDS_PER if constants is None else constants
    w = batched_round_work(M, H, bool(memory_slots), random_workers, k_combos)
    per_round = c["round"] + d * (
        c["coordinate"]
        + random_workers * c["random_worker"]
        + w["blas_flops"] * c["blas_flop"]
        + w["small_flops"] * c["small_flop"]
        + w["elements"] * c["element"]
    )
    setup = 2.0 * (
        check_int("local_steps", local_steps, low=0) * SECONDS_PER["local_step"]
        + check_int("build_terms", build_terms, low=0) * SECONDS_PER["build_term"]
    )
    n1 = 1 + H + (M if memory_slots else 0)
    nbytes = 8 * d * (5 * n1 * n1 + 3 * M * (1 + H)) + 8 * (rounds + 1) * (d + 3)
    return ExactCost(
        dim=d,
        num_workers=M,
        history=H,
        memory_slots=bool(memory_slots),
        state_size=1 + H * d + (M * d if memory_slots else 0),
        rounds=rounds,
        blas_flops=d * w["blas_flops"],
        einsum_flops=d * w["small_flops"],
        sparse_flops=0.0,
        elements=d * w["elements"],
        seconds_per_round=per_round,
        setup_seconds=setup,
        seconds=setup + per_round * rounds,
        bytes=int(nbytes),
    )


def available_memory() -> int | None:
    """Bytes of RAM available to a new allocation now (MemAvailable of /proc/meminfo, else the free physical
    pages), None when the system does not say."""
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return int(os.sysconf("SC_AVPHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):
        return None
