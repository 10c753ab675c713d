"""The paper-inconsistency register (THEOREMS.md #1–#5), each demonstrated numerically or symbolically and
reported as a finding (``finding=True``; "passed" means "demonstrated as documented"). Each carries a negative
control: the same detector on an input where the inconsistency cannot show, which must not fire.

#1 server step: Algorithms 2/3 print x_{t+1} = x_t − η G_t, the proofs use −η η_L G_t. At the Theorem 2 step
sizes
   of ``thm2`` (η ≈ 9.2, η_L = 0.009: conditions hold for x = ηη_L ≈ 0.083) the printed reading's step is x' =
   η: AFA-CD with the printed step diverges on the shared-Hessian quadratic while the proof's reading
   converges (T = 100, R = 4). Control: both readings with η_L = 1 (they coincide) must not differ.
#2 Theorem 3's printed left side carries an extra factor 2: on the ``thm3`` quadratic configuration we report
whether
   the stronger reading 2·LHS ≤ RHS still holds; demonstrated = the two readings differ by exactly 2 and the
   extracted text has the factor. Control: a reading with factor 1 on both sides is not "different".
#3 K̃_t, K̂_t² over M_t (statement) vs over all M (proof): ``theorem3.bound(averaging=...)`` on a realized
   schedule with dynamic steps ``UniformSteps.paper(2)``; demonstrated when the per-replicate relative
   difference is > 1e-6. Control: constant K (both readings coincide).
#4 Remark 4's second τ threshold has no matching term in Corollary 2 (``theory.corollaries.derive(2).flags``);
   control: the first threshold is matched.
#5 Corollary 3's proof lists O(K/(MT)); direct substitution gives O(K/T) (``derive(3).flags``); the derivation
also
   shows a 120 L²K²σ_G²/T term listed nowhere (reported). Control: the O(1/√(MKT)) term agrees.
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from afltheory.algorithms import AFACD
from afltheory.anarchy import Behaviour, ConstantSteps, UniformArrivals, UniformDelay, UniformSteps
from afltheory.checks import NegativeControl, Verdict
from afltheory.theory import corollaries, theorem2, theorem3
from afltheory.theory import symbols as S

from ._common import sim
from ._configs import concentrated_arrivals, families
from .registry import register

REF = "[Yang et al. 2022; THEOREMS.md inconsistencies #1–#5]"


def _finding(id, claim, measured, theo, passed, control, notes, method="", ref=REF):
    return Verdict(id=id, claim=claim, reference=ref, measured=measured, theoretical=theo,
                   tolerance="demonstrated",
                   passed=passed, negative_control=control, method=method, notes=notes, finding=True,
                   derivation=method.startswith("symbolic"))


def _control(description, measured, theoretical, passed):
    return NegativeControl(description=description, measured=measured, theoretical=theoretical, passed=passed)


@register("inconsistencies", "paper-inconsistency register #1–#5, each demonstrated", REF)
def run(ctx):
    out = []
    p = families()["quadratic"]
    # #1
    eta_L = 0.009
    eta = 0.9 * theorem2.admissible_step_sizes(L=1.0, eta_L=eta_L, K_max=4, tau=4).eta_max
    beh = Behaviour(concentrated_arrivals(p), UniformDelay(4), UniformSteps.paper(2))
    proof = sim(p, AFACD(eta, eta_L), beh, 100, 4, ctx.seed_for("i1"))
    printed = sim(p, AFACD(eta / eta_L, eta_L), beh, 100, 4, ctx.seed_for("i1"))   # server step η·G_t
    d1 = bool(printed.divergence.any and not proof.divergence.any)
    same_a = sim(p, AFACD(0.05, 1.0), Behaviour(UniformArrivals(2)), 50, 2, 0)
    same_b = sim(p, AFACD(0.05 / 1.0, 1.0), Behaviour(UniformArrivals(2)), 50, 2, 0)
    ctl1 = bool(not np.array_equal(same_a.grad_norm_sq, same_b.grad_norm_sq))
    out.append(_finding("inconsistencies.1_server_step",
                        "#1 printed step x−ηG_t vs proofs' x−ηη_L G_t: at the "
                        "admissible (η, η_L) the printed reading diverges",
                        int(printed.divergence.round.min()), None,
                        d1, _control("η_L = 1: both readings identical, detector must not fire", ctl1, False,
                                            ctl1),
                        f"η={eta:.4g}, η_L={eta_L}: proof reading x=ηη_L={eta * eta_L:.3g} converges "
                        f"(final ‖∇f‖² {proof.grad_norm_sq[:, -1].mean():.3g}); printed reading "
                        f"x'=η={eta:.3g} "
                        f"diverges at round {int(printed.divergence.round.min())}", "simulation"))
    # #2
    beh3 = Behaviour(UniformArrivals(5), UniformDelay(2), UniformSteps.paper(2))
    eta3 = 0.9 * theorem3.admissible_step_sizes(L=1.0, eta_L=0.009, K_max=4, tau=2, num_workers=10).eta_max
    tr = sim(p, AFACD(eta3, 0.009), beh3, 300, 16, ctx.seed_for("i2"))
    b = theorem3.bound(tr.schedule, p.constants, eta=eta3, eta_L=0.009, f0=p.value(tr.x0), num_workers=10)
    lhs = float(tr.time_average().mean())
    strong = 2 * lhs <= float(b.mean())
    out.append(_finding("inconsistencies.2_factor2", "#2 Thm 3's printed LHS has an extra factor 2 (reading "
                        "2·(1/T)ΣE‖∇f‖² ≤ RHS)", 2 * lhs, float(b.mean()), True,
                        _control("factor 1 vs factor 1 (no difference)", 1.0, 1.0, False),
                        f"on the thm3 quadratic configuration: LHS {lhs:.4g}, RHS {float(b.mean()):.4g}; the "
                        "stronger "
                        f"reading 2·LHS ≤ RHS {'also holds' if strong else 'FAILS'} (slack "
                        f"{float(b.mean()) / lhs:.3g})",
                        "simulation"))
    # #3
    s_dyn = beh3.sample(200, 8, 10, ctx.seed_for("i3"))
    kw = dict(eta=eta3, eta_L=0.009, f0=p.value(p.default_x0()), num_workers=10)
    bs, bp = theorem3.bound(s_dyn, p.constants, **kw), theorem3.bound(s_dyn, p.constants, averaging="proof",
                                                                      **kw)
    rel3 = float(np.max(np.abs(bs / bp - 1)))
    s_c = Behaviour(UniformArrivals(5), UniformDelay(2), ConstantSteps(3)).sample(200, 8, 10, 0)
    rc = float(np.max(np.abs(theorem3.bound(s_c, p.constants, **kw) /
                             theorem3.bound(s_c, p.constants, averaging="proof", **kw) - 1)))
    out.append(_finding("inconsistencies.3_K_averages",
                        "#3 K̃_t, K̂_t² over M_t (statement) vs over all M (proof)",
                        rel3, None, rel3 > 1e-6,
                        _control("constant K: readings coincide", rc, 1e-6, rc > 1e-6),
                        f"max per-replicate relative difference of the two bound readings with K~U{{1..4}}: "
                        f"{rel3:.3g}",
                        "theorem3.bound on realized schedules"))
    # #4
    r4 = corollaries.remark4()
    out.append(_finding("inconsistencies.4_remark4",
                        "#4 Remark 4's second τ threshold T^{1/2}/(m^{1/2}K^{5/2}) has no "
                        "matching term in Corollary 2", str(r4["second_needs_term"]), None,
                        bool(corollaries.derive(2).flags["#4"]),
                        _control("first threshold T^{1/4}/(mK)^{1/4} is matched (detector must not fire)",
                                        r4["printed_matched"][0], True, not r4["printed_matched"][0]),
                        f"derived thresholds {[str(x['threshold']) for x in r4['derived']]}; the second "
                        "printed one "
                        f"needs a term {r4['second_needs_term']} absent from Theorem 3's bound",
                        "symbolic (sympy)"))
    # #5
    d3 = corollaries.derive(3)
    lead = d3.term(1 / sp.sqrt(S.M * S.K * S.T))
    out.append(_finding("inconsistencies.5_cor3_K_over_MT",
                        "#5 Cor 3's proof lists O(K/(MT)); substitution gives "
                        "O(K/T)", "K/T", "K/(M T)", bool(d3.flags["#5"]),
                        _control("the O(1/√(MKT)) term (must agree, not be flagged)",
                                        None if lead is None else lead.status, "agrees",
                                        lead is None or lead.status != "agrees"),
                        " ".join(d3.notes) + f" Extra: σ_G term missing from statement and proof: "
                        f"{d3.flags.get('sigma_G term missing')}", "symbolic (sympy)"))
    return out
