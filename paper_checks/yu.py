"""Yu et al.'s local-SGD bounds (lecture notes, seed 004) [Yu et al. 2019, via seed 004].

Local SGD = FedAvg(η = 1, η_L = s) with full participation (N = M = 4 workers, ``UniformArrivals(4)``), no
delay, synchronization period K; ``HeterogeneousQuadratic(dim=5, num_workers=4, L=1, mu=0.1, sigma_L=1,
seed=1)``; T_iter = rounds·K local iterations, s = √N/(L√T_iter) (the notes' choice), R = 32 (quick) / 96
(full).
- i.i.d. (σ_G = 0): K = 4, 250 rounds; bound 2(f_0 − f*)/(sT) + 4s²K²G²L² + (L/N)sσ² with s ≤ 1/L.
- non-i.i.d. (σ_G = 0.5): K = 2 (K ≤ 1/(6Ls) needs K ≤ 2.6), 500 rounds; bound with 4s²KG²L² + 9L²s²K²σ_G².
G² (bounded second moment of the stochastic gradients, not certified for a quadratic) is taken as
max_t E‖∇f_i(x_t)‖² + σ² measured on the run at the synchronization points (an estimate: stated in the notes).
The left side is measured at the synchronization points x_t (the notes average the virtual sequence over every
iteration; on a shared-Hessian quadratic the two differ only by the within-period transient).
MC mean with a one-sided 99 % t-UCB; negative control bound/100.
"""

from __future__ import annotations

import numpy as np

from afltheory.algorithms import FedAvg
from afltheory.anarchy import Behaviour, ConstantSteps, UniformArrivals
from afltheory.problems import HeterogeneousQuadratic
from afltheory.theory import yu_local_sgd as Y

from ._common import bound_verdict, sim
from .registry import register

REF = "[Yu et al. 2019, via seed 004]"


@register("yu", "Yu et al. local-SGD bounds (i.i.d. and non-i.i.d.)", REF)
def run(ctx):
    R = 32 if ctx.quick else 96
    N = 4
    out = []
    for setting, sg, K, rounds in (("iid", 0.0, 4, 250), ("noniid", 0.5, 2, 500)):
        p = HeterogeneousQuadratic(dim=5, num_workers=N, L=1.0, mu=0.1, sigma_L=1.0, sigma_G=sg, seed=1)
        c = p.constants
        T = rounds * K
        s = float(np.sqrt(N) / (c.L * np.sqrt(T)))
        conds = Y.conditions(setting=setting, s=s, L=c.L, K=K)
        assert all(x.holds for x in conds), conds
        tr = sim(p, FedAvg(1.0, s), Behaviour(UniformArrivals(N), local_steps=ConstantSteps(K)), rounds, R,
                 ctx.seed_for("yu", setting))
        gi = np.stack([p.local_grad(tr.x_final, np.full(R, i)) for i in range(N)])
        G2 = float(max(tr.grad_norm_sq.mean(0).max(), np.mean(np.sum(gi**2, -1),
                                                              1).max()) + c.sigma_L**2 + c.sigma_G**2)
        b = Y.bound(setting=setting, T=T, s=s, L=c.L, K=K, N=N, sigma=c.sigma_L, G=np.sqrt(G2),
                    sigma_G=sg if setting == "noniid" else None, f0=p.value(tr.x0), f_star=c.f_star)
        out.append(bound_verdict(f"yu.{setting}",
                                 f"Yu et al. {setting} local-SGD bound (N={N}, K={K}, s=√N/(L√T))",
                                 REF, tr.time_average(), b, inside_conditions=True,
                                 notes=f"s={s:.4g}, T_iter={T}, G² estimate {G2:.4g}; conditions "
                                       + ", ".join(f"{x.name} slack {x.slack:.3g}" for x in conds)))
    return out
