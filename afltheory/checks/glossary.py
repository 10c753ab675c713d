"""The statements and symbols a report reader needs, written out (the report is self-contained: nothing in it
refers to a file outside the repository; the full reconstruction of every statement is docs/theorems.md)."""

from __future__ import annotations

__all__ = ["GLOSSARY_MD"]

GLOSSARY_MD = r"""## How to read this report

**Verdict.** Each row is one claim. *measured* is what the toolkit computed, named (an exact
expectation, or a Monte Carlo mean with its labelled confidence interval), *pass criterion* the claimed
value with its relation (≤ for an upper bound, ≈ for a tight value) and the tolerance that decided the
verdict, *slack* = bound / measured for upper bounds (> 1 means the
bound holds, and how loosely). *PASS (finding)* marks a claim of a paper that the toolkit shows to
be wrong or incomplete (the verdict is that the finding is reproduced). Each verdict carries a
**negative control**: the same check fed a plausible wrong input (a bound without the term under
test, a mutated algorithm, a wrong slope); it must FAIL ("failed ✓"), otherwise the check could not
tell right from wrong. *inside the conditions*: whether the configuration satisfies the theorem's
hypotheses; rows outside them are exploratory. *terms*: each named term's share of the bound at the
measured point.

**Statistics.** UCB = one-sided 99 % Student-t upper confidence bound of a Monte Carlo mean, mean +
t_{0.99, R−1}·sd/√R over R replicates (an upper-bound claim passes when UCB ≤ bound); slopes are
least-squares fits of log y on log x with 95 % percentile-bootstrap CIs over replicates (Monte Carlo
noise only: finite-range bias shows as different local slopes at the two ends).

**Setting** [Yang et al., "Anarchic Federated Learning", ICML 2022]. M workers, f = (1/M) Σ_i f_i,
each f_i L-smooth; stochastic gradients with variance ≤ σ_L²; heterogeneity ‖∇f_i(x) − ∇f(x)‖² ≤
σ_G². Round t: the server receives m updates from the workers M_t; worker i started from the stale
model x_{t−τ_{t,i}} (τ_{t,i} ≤ τ) and returns the average G_i of its K_{t,i} stochastic gradients;
server step x_{t+1} = x_t − η η_L G_t. Per round, over the arrivals M_t: K̄_t = harmonic mean of the
K_{t,i}, K̃_t = their mean, K̂_t² = their mean square. f_0 − f* is the initial optimality gap, T the
number of rounds.

**Theorem 2 (AFA-CD, general arrivals).** If (C1) 6η_L²(2K² − 3K + 1)L² ≤ 1, (C2) 180η_L²K²L²τ < 1
and (C3) 2Lηη_L + 6τ²L²η²η_L² ≤ 1 (K = the largest K_{t,i}), then (1/T) Σ_t E‖∇f(x_t)‖² ≤ 4(f_0 −
f*)/(ηη_L T) + 4(α_L σ_L² + α_G σ_G²) with α_L = (1/T) Σ_t [(Lηη_L + 3τ²L²η²η_L²)/(m K̄_t) +
(15/2)L²η_L² K̃_t] and α_G = 3/2 + 45L²η_L² (1/T) Σ_t K̂_t².

**Theorem 3 (AFA-CD, uniform arrivals: M_t a uniform m-subset).** Under (C1), (C2) Lηη_L +
L²η²η_L²τ² ≤ 1/(2M) and (C3) 120L²K²η_L²τ < 1, (1/T) Σ_t E‖∇f(x_t)‖² ≤ 4(f_0 − f*)/(ηη_L T) + 4(α_L
σ_L² + α_G σ_G²) with α_L = (Lηη_L/m + 2τ²L²η²η_L²/m)(1/T)Σ_t 1/K̄_t + 5η_L²L²(1/T)Σ_t K̃_t and α_G
= 30L²η_L²(1/T)Σ_t K̂_t².

**Theorem 4 (AFA-CS: the server keeps every worker's latest update and averages all M).** With m'
fresh slots per round and the others stale by at most τ, under (C1), (L/2 + ηη_L(M −
m')²L²τ²/M²)ηη_L ≤ 1/4 and 30L²η_L²τ(1/M)Σ_i K_{t,i}² ≤ 1/4: (1/T) Σ_t ‖∇f(x_t)‖² ≤ 4(f_0 −
f(x_T))/(ηη_L T) + α_L σ_L² + α_G σ_G² with α_L = (4/T)Σ_t [5L²η_L² K^avg_t + (L/2 + ηη_L(M −
m')²L²τ²/M²)·2ηη_L/(M K̄_t)] and α_G = (120L²η_L²/M)(1/T)Σ_t K̂_t² (K̂_t² summed over the M memory
slots).

**Corollaries 1–3** substitute η_L = 1/√T and η = √(mK) (resp. √(MK)) into Theorems 2–4: error
O(1/√(mKT)) plus the σ_G² floor under general arrivals (Cor. 1), O(1/√(mKT)) under uniform arrivals
(Cor. 2), and a speedup in M for AFA-CS (Cor. 3). Statements of the other systems (Dynamic FedAvg,
compressed updates, MOCHA, the local-SGD theorems of Yu et al.) are given with their checks below
and in full in docs/theorems.md.
"""
