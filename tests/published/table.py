"""Print the docs/published.md table of bound checks from the plain references (no afltheory engine):
``PYTHONPATH=. python -m tests.published.table``. Every number is an exact expectation (moment propagation on
quadratics), so reruns print the same digits."""

from __future__ import annotations

from . import cases


def rows() -> list[str]:
    out = [
        "| statement | instance | confidence | verdict | measured / bound | dominant term (share) |",
        "|---|---|---|---|---|---|",
    ]
    for c in cases.CASES:
        r = cases.run(c)
        verdict = "holds" if r["measured"] <= r["bound"] else "VIOLATED"
        if c.tight:
            verdict += (
                "; control bound/10 fails"
                if r["ratio"] > 1 / cases.CONTROL_FACTOR
                else "; no power (bound/10 also holds)"
            )
        dom = max(r["terms"], key=r["terms"].get)
        out.append(
            f"| {r['id']} | {r['case']} | {c.statement.confidence} | {verdict} | {r['measured']:.3g} "
            f"/ {r['bound']:.3g} = {r['ratio']:.3g} | {dom} ({r['terms'][dom] / r['bound']:.0%}) |"
        )
    for m, mu, tight in ((4, 50.0, False), (6, 50.0, True)):
        worst, n, (b0, b1) = cases.fedprox_worst_ratio(mu, m, 15)
        v = "holds" + ("; control ×10 fails" if tight and worst > 0.1 else "")
        out.append(
            f"| fedprox2020.thm4 | exact prox, μ={mu:g}, K={m} sampled, 15 rounds, "
            f"B∈[{b0:.2f},{b1:.2f}] | {cases.fedprox2020.THM4.confidence} | {v} | "
            f"max ρ‖∇f‖²/decrease = {worst:.3g} ({n} rounds with ρ>0) | decrease |"
        )
    return out


if __name__ == "__main__":
    print("\n".join(rows()))
