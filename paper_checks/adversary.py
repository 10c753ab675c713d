"""The adversary's verdicts: worst case found inside each claim's assumption class [Yang et al. 2022, Thms
2–4, Cors 1–3] (``afltheory.adversary.search``; exact engine, no Monte Carlo error in the ratio).

Per claim: "worst case found r (≤ 1 required; tightness r)" — passed iff no violation was confirmed. A ratio >
1 is re-run with ``afltheory.simulate`` (R = 1000) against the theorem's own ``bound`` on the realized
schedules; only a one-sided 99 % lower confidence bound on mean(LHS − bound) above 0 makes it a violation,
reported as a finding verdict with the instance saved (``adversary/<claim>.json`` in the report directory) if
it is a known one (``KNOWN_VIOLATIONS``), else as a failed verdict (a new finding to examine, or a bug).
Negative controls (plausible wrong claims, never bound/100): for a bound that held, the same worst point
against the bound without its dominant term (must exceed 1, i.e. the term matters there); for a violation, the
same instance and Monte Carlo detector against Theorem 2's bound (which keeps a σ_G² floor; its own conditions
are not required for this control) — the detector must not fire. Quick tier: thm2, thm3 and thm4 with m = 1
(partial participation: round robin, memory slots and their warm start matter), budget 300; full tier: every
claim, budget 2000, and the search-progress and worst-instance figures (the quick tier draws none: the same
verdicts at 40–50 % of the CPU time)."""

from __future__ import annotations

import os

from afltheory.adversary import confirm, get_claim, save_instance, search
from afltheory.adversary.plots import progress_plot, worst_instance_plot
from afltheory.checks import AtLeast, AtMost, ControlMeasurement, UnlessConfirmed, Verdict

from .registry import register

REF = "[Yang et al. 2022, Thms 2–4, Cors 1–3]"
QUICK = (("thm2", {}), ("thm3", {}), ("thm4", {"m": 1}), ("lemma2", {}), ("drift", {}))
FULL = (
    ("thm2", {}),
    ("thm3", {}),
    ("thm3", {"min_gap": 1.0}),
    ("thm4", {}),
    ("thm4", {"m": 1}),
    ("cor1", {}),
    ("cor2", {}),
    ("cor3", {}),
    ("lemma2", {}),
    ("drift", {}),
)
#: the violations the search found on the correct code (README, docs/adversary.md): reported as findings. A
#: confirmed violation of any other claim fails its verdict — a new finding to examine (and add here) or a bug
#: in a rule or an engine (this is how a mutant that breaks a claim that holds is killed).
KNOWN_VIOLATIONS = frozenset({"thm3", "thm3_gap", "cor2"})


def _verdict(ctx, cid, kw, budget, seed):
    c = get_claim(cid)
    cls = c.default_class().replace(**kw) if kw else c.default_class()
    tag = cid + ("_gap" if kw.get("min_gap") else "") + (f"_m{kw['m']}" if kw.get("m") else "")
    wc = search(c, budget=budget, seed=seed, assumptions=cls, replicates=1000)
    figs = []
    for name, fn in (("progress", progress_plot), ("worst", worst_instance_plot)) if not ctx.quick else ():
        path, rel = ctx.fig(f"adversary_{tag}_{name}")  # full tier only (0.3 CPU-s a figure)
        fn(path, wc)
        figs.append(rel)
    shares = {k: round(float(v), 4) for k, v in wc.shares.items()}
    dom = max(wc.shares, key=wc.shares.get)
    details = {
        "T": wc.T,
        "measured": wc.measured,
        "bound": wc.bound,
        "term_shares": shares,
        "evaluations": wc.evaluations,
        "evals_per_s": round(wc.evals_per_second, 1),
        "structure": {"m": wc.structure.m, "arrivals": wc.structure.arrivals, **wc.structure.extra},
        "eta": wc.instance.eta,
        "eta_L": wc.instance.eta_L,
        "counts": wc.counts,
    }
    where = (
        "x_0 anywhere with f(x_0) − f* ≤ Δ"
        if not kw.get("min_gap")
        else f"f(x_0) − f* ≥ {kw['min_gap']:g}·Δ (before scaling)"
    )
    if kw.get("m"):
        law = {"cyclic": "round robin", "periodic": "adversarial periodic sets"}.get(
            wc.structure.arrivals, wc.structure.arrivals
        )
        where += f"; m = {kw['m']} of M = {cls.num_workers} arrivals per round ({law})"
    terms = {k: float(v) for k, v in wc.shares.items()}
    if wc.violated:
        os.makedirs(os.path.join(ctx.out, "adversary"), exist_ok=True)
        rel = os.path.join("adversary", f"{tag}.json")
        save_instance(wc.instance, os.path.join(ctx.out, rel))
        details.update(confirmation=wc.confirmation, instance_file=rel)
        ctl = confirm(get_claim("thm2"), wc.instance, seed=seed, replicates=1000)
        cf = wc.confirmation
        known = tag in KNOWN_VIOLATIONS
        head = "FINDING" if known else "UNEXPECTED VIOLATION (a new finding or a bug: examine the instance)"
        # the Monte Carlo detector judges the claim and the control: its 99 % LCB on mean(LHS − bound) > 0
        detector = AtLeast(
            on="lcb",
            strict=True,
            limit=0.0,
            text="violation iff 99% lower confidence bound on mean(LHS − bound) > 0 (R=1000)",
        )
        return Verdict.judged(
            criterion=detector,
            stats={"lcb": cf["diff_lcb"]},
            requires={"inside the claim's conditions": cf["inside_conditions"] is True, "known": known},
            control=ControlMeasurement(
                description="same instance and detector against Theorem 2's bound (general arrivals, with "
                "the σ_G² floor): must not fire",
                measured=ctl["lhs_mean"],
                theoretical=ctl["bound_mean"],
                stats={"lcb": ctl["diff_lcb"]},
            ),
            id=f"adversary.{tag}",
            claim=f"{head}: {c.title} violated inside its conditions ({where}): worst ratio {wc.ratio:.3g}, "
            f"Monte Carlo-confirmed",
            reference=c.reference,
            measured=wc.ratio,
            ci=(cf["diff_lcb"], None),
            theoretical=1.0,
            quantity="worst ratio LHS/bound",
            interval="99 % LCB of mean(LHS − bound)",
            figures=tuple(figs),
            relation=">",
            slack=None,
            method=f"exact search ({wc.evaluations} evaluations) + monte-carlo confirmation",
            notes=f"dominant term {dom} ({wc.shares[dom]:.0%}); instance saved to {rel}"
            + ("" if known else "; not in KNOWN_VIOLATIONS"),
            finding=known,
            inside_conditions=True,
            terms=terms,
            details=details,
        )
    ctl_bound = wc.bound - wc.terms[dom]
    ctl_ratio = wc.measured / ctl_bound if ctl_bound > 0 else float("inf")
    # a ratio > 1 passes unless Monte Carlo confirms it (no confirmation path: not a violation); the control's
    # exact ratio has no Monte Carlo error to excuse (confirmed=None: the ratio alone decides)
    return Verdict.judged(
        criterion=UnlessConfirmed(
            AtMost(), text="exact ratio ≤ 1 (no Monte Carlo error); > 1 needs MC confirmation"
        ),
        stats={"confirmed": bool(wc.violated)},
        control=ControlMeasurement(
            description=f"worst point against the bound without its dominant term {dom} (LHS "
            f"{wc.measured:.4g}, bound {ctl_bound:.4g}): ratio",
            measured=ctl_ratio,
            theoretical=1.0,
            stats={"confirmed": None},
        ),
        id=f"adversary.{tag}",
        claim=f"{c.title}: worst case found {wc.ratio:.3g} (≤ 1 required; tightness {wc.ratio:.3g}; {where})",
        reference=c.reference,
        measured=wc.ratio,
        ci=None,
        theoretical=1.0,
        quantity="worst exact ratio LHS/bound",
        figures=tuple(figs),
        relation="<=",
        slack=1.0 / wc.ratio if wc.ratio > 0 else None,
        method=f"exact search ({wc.evaluations} evaluations, seed {seed})",
        notes=f"dominant term {dom} ({wc.shares[dom]:.0%})"
        + ("; ratio > 1 not confirmed by Monte Carlo" if wc.ratio > 1 else "")
        + f"; {wc.coverage}",
        inside_conditions=True,
        terms=terms,
        details=details,
    )


@register("adversary", "Adversary: worst case inside each claim's assumption class", REF, slow=True)
def run(ctx):
    budget = 300 if ctx.quick else 2000
    todo = QUICK if ctx.quick else FULL
    return [_verdict(ctx, cid, kw, budget, ctx.seed_for("adversary", cid, *sorted(kw))) for cid, kw in todo]
