"""``afltheory published [--budget N] [--seed S] [--markdown]``: ONE table of the published FL theorems
(``afltheory.published``, issue 26) — per statement its setting, source and confidence, and, for the
statements an engine can run (``Claim.runnable``; the engine form ``Claim.engine()``):

- verdict: the paper module's ``verify()`` (the same verdicts the registered checks ``published.*`` run), with
  their controls;
- worst ratio: the generic adversary (``afltheory.adversary.generic.search_claim``, ``budget`` exact
  evaluations, ``seed``) and the share of the dominant bound term at the worst instance (tightness);
- PEP: ``afltheory.pep.claims.claim_pep`` on the claim's own class, or — when the PEP refuses the class —
  on the sub-class named in the row (a certificate for that sub-class only), noise-free (σ_L = 0). The
  bracket is [lower, upper]: lower = the recovered worst instance replayed through the rule, upper = the
  certified SDP value; "≤ bound" when upper ≤ the claim's bound at the same constants. Where the PEP
  refuses, the row gives its reason.

A statement no engine runs gets a row "not a claim: <its why_not_a_claim>". Layering: ``adversary`` sits above
``published``, ``claims`` and ``pep``, so the table lives here (``published`` cannot import the adversary).
"""

from __future__ import annotations

import dataclasses
import re
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .._validation import check_int

if TYPE_CHECKING:
    import argparse

__all__ = [
    "Row",
    "add_parser",
    "live_kills",
    "markdown",
    "rows",
    "run",
    "summary",
    "text",
]


@dataclass
class Row:
    """One statement's row; the ``None`` fields are the columns that do not apply (not a claim, refused)."""

    theorem: str
    title: str
    setting: str
    source: str
    verdict: str
    measured_bound: str
    worst: str
    pep: str
    has_verdict: bool = False
    has_worst: bool = False
    has_pep: bool = False
    kills: str = "—"

    def cells(self) -> list[str]:
        """The eight table cells."""
        return [
            f"{self.theorem} — {self.title}",
            self.setting,
            self.source,
            self.verdict,
            self.measured_bound,
            self.worst,
            self.pep,
            self.kills,
        ]


HEADER = [
    "theorem",
    "setting",
    "source & confidence",
    "verdict",
    "measured / bound",
    "worst ratio (adversary) · dominant term share",
    "PEP bracket (noise-free)",
    "kill matrix (catalogued mutants its checks kill)",
]


def _g(x: float) -> str:
    return f"{x:.3g}"


def _source(st: Any) -> str:
    urls = [w for w in st.source.replace(",", " ").split() if w.startswith("http")]
    where = f"abstract {urls[0]}" if urls else st.source.split(" (")[0]
    return f"{where}; {st.confidence}"


def _setting_of_claim(claim: Any) -> str:
    a = claim.assumptions
    words = {
        "strongly_convex": "μ-strongly convex, L-smooth",
        "convex": "convex, L-smooth",
        "smooth": "L-smooth nonconvex",
    }
    part = {
        "full": "full participation",
        "uniform": "m of M uniformly",
        "arbitrary": "any m arrivals, delays",
    }
    het = {
        "Gamma": "Γ heterogeneity",
        "iid": "identical data",
        "sigma_G_max": "σ_G heterogeneity",
        "zeta_star": "ζ* heterogeneity",
        None: "any heterogeneity",
    }
    noise = {"variance": "σ_L² noise", "none": "exact gradients"}
    return (
        f"{claim.rule.__name__}; {words.get(a.function, a.function)}; {noise.get(a.noise, a.noise)}; "
        f"{het.get(a.heterogeneity, a.heterogeneity)}; {part.get(a.participation, a.participation)}; "
        f"{a.weights} weights; measured {claim.measured}"
    )


def _setting_of_statement(st: Any) -> str:
    a = st.assumptions_text
    return (
        "; ".join(
            str(a[k]).split(" (")[0] for k in ("function", "heterogeneity", "participation") if a.get(k)
        )
        + f"; measured {st.measured_text.split(':')[0]}"
    )


def _verdict(fn: Any, claim_id: str) -> tuple[str, str]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        vs = [v for v in fn() if v.id == claim_id or v.id.startswith(claim_id + ".")]
    parts, ratios = [], []
    for v in vs:
        nc = v.negative_control
        ctl = "" if nc is None else ("; control fails" if not nc.passed else "; CONTROL PASSES (no power)")
        tag = v.id[len(claim_id) + 1 :] if v.id != claim_id else ""
        parts.append(f"{'PASS' if v.passed else 'FAIL'} ({v.method}){ctl}" + (f" [{tag}]" if tag else ""))
        if "over" in (v.details or {}):  # a rate verdict (claims.verify_rate): slopes, not a ratio
            ratios.append(
                f"slope {_g(v.measured)} (claimed {_g(v.theoretical)})" + (f" [{tag}]" if tag else "")
            )
            continue
        r = v.measured / v.theoretical if v.theoretical > 0 else float("inf")
        low = " (required: measured ≥ bound)" if v.relation == ">=" else ""
        ratios.append(f"{_g(v.measured)} / {_g(v.theoretical)} = {_g(r)}{low}" + (f" [{tag}]" if tag else ""))
    return "; ".join(parts), "; ".join(ratios)


def _worst(claim: Any, budget: int, seed: int) -> tuple[str, bool]:
    from .generic import search_claim

    # the claim's own notes for this column (``Claim.setups``): "no_search" — its bound is not a statement
    # over a class (the adversary's ratio would be meaningless), and why; "reading_constant" — its bound
    # carries a constant the paper hides (Õ): a ratio > 1 refutes the check's reading, not the paper
    if "no_search" in claim.setups:
        return f"not searched: {claim.setups['no_search']}", False
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            w = search_claim(claim, budget=budget, seed=seed)
    except ValueError as exc:
        if "no instance of its class could be evaluated exactly" in str(exc):
            return (
                f"refused: the exact engine cannot represent {claim.rule.__name__} "
                f"({budget}/{budget} candidates; verdict by simulation only)",
                False,
            )
        raise
    dom = max(w.terms, key=w.terms.get) if w.terms else "—"
    how = "deterministic re-run" if (w.confirmation or {}).get("deterministic") else "Monte Carlo"
    if w.violated and "reading_constant" in claim.setups:
        v = (
            f" — violated under the reading “{claim.setups['reading_constant']}” ({how} confirms; the paper "
            "hides the constant in Õ: not a finding)"
        )
    elif w.violated:
        v = f" — VIOLATED ({how} confirmed)"
    else:
        v = f" — not confirmed by {how}" if w.confirmation else ""
    sim = f" [{w.simulated} of {w.evaluations} candidates by deterministic simulation]" if w.simulated else ""
    cov = w.coverage.get("searched", {})
    out = f" [searched {', '.join(f'{k} {r}' for k, r in cov.items())}]" if cov else ""
    if w.outside:
        out += f" [{w.outside} candidates outside the class refused]"
    return f"{_g(w.ratio)} · {dom} {w.terms.get(dom, 0.0):.0%}{v}{sim}{out}", True


def _refusal(exc: Exception) -> str:
    """The PEP's reason in a few words (its parenthesised explanations dropped)."""
    msg = str(exc)
    if "cannot be analysed by the PEP:" in msg:
        reasons = re.sub(r"\s*\([^()]*\)", "", msg.split("cannot be analysed by the PEP:", 1)[1])
        return reasons.strip().replace("'", "")
    m = re.search(r"overrides (\w+)", msg)
    if m:
        return (
            f"rule not representable: it overrides {m.group(1)} (PEP and exact moments need the "
            "declarative hooks)"
        )
    if "not affine" in msg:
        return f"rule not representable: {msg.split(' (')[0]}"
    return f"{type(exc).__name__}: {msg[:100]}"


def _pep(claim: Any) -> tuple[str, bool]:
    from ..algorithms.base import UnsupportedRule
    from ..pep.claims import claim_pep

    setup = claim.setups.get("pep")
    if setup is None:
        return "no PEP setup written", False
    values, T, K, where = dict(setup.values), setup.T, setup.K, setup.description
    own = ""
    target = claim
    if setup.subclass:
        try:
            claim_pep(claim, T=T, K=K, values=values)
            raise AssertionError(
                f"{claim.id}: the PEP now accepts the claim's own class; update its PEP setup"
            )
        except (ValueError, UnsupportedRule) as exc:
            own = f"refused on its class ({_refusal(exc)}); "
        target = dataclasses.replace(
            claim,
            id=claim.id + ".pep_subclass",
            assumptions=dataclasses.replace(claim.assumptions, **setup.subclass),
        )
    try:
        p = claim_pep(target, T=T, K=K, values=values)
    except (ValueError, UnsupportedRule) as exc:
        why = f"refused: {_refusal(exc)}"
        if "heterogeneity=None" in str(exc):  # allowed with one client: say why that fails too
            try:
                claim_pep(target, T=T, K=K, M=1, values=values)
            except (ValueError, UnsupportedRule) as exc1:
                why += f"; with M = 1: {_refusal(exc1)}"
        return why, False
    if p.upper is None:
        return own + f"{where}: solver returned no certified value (T={T}, K={K})", False
    rel = "≤" if p.holds else "> (exceeds)"
    inside = "" if p.inside_conditions else "; OUTSIDE the claim's conditions"
    return (
        own + f"{where}: [{_g(p.lower)}, {_g(p.upper)}] {rel} bound {_g(p.bound)} "
        f"(T={p.T}, K={p.K}, M={p.M}{', instance in the class: exact' if p.exact else ''}{inside})",
        True,
    )


def live_kills(seed: int = 0) -> dict[str, list[str]]:
    """{verdict id: catalogued mutants it kills}: ``afltheory.mutants.kill_matrix`` over the registered checks
    ``published.<module>`` of the paper modules (``afltheory.published.SELF_CHECKED``; quick tier, ``seed``;
    minutes on the shared machine) — what ``--kill-matrix`` prints and what the modules' ``KILLS`` record."""
    from ..mutants import kill_matrix
    from ..published import SELF_CHECKED

    own = [f"published.{p.__name__.rsplit('.', 1)[1]}" for p in SELF_CHECKED]
    km = kill_matrix(only=own, tier="quick", seed=seed, jobs=1)
    return {v: sorted(ms) for v, ms in sorted(km.kills().items())}


def _kills_cell(kills: dict[str, list[str]], claim_id: str) -> str:
    found = sorted(
        {m for v, ms in kills.items() if v == claim_id or v.startswith(claim_id + ".") for m in ms}
    )
    known = any(v == claim_id or v.startswith(claim_id + ".") for v in kills)
    if not known:
        return "not run"
    return ", ".join(f"`{m}`" for m in found) if found else "none"


def _plain(paper: Any, vid: str, cache: dict) -> tuple[str, str] | None:
    """(verdict cell, measured/bound cell) of the verdicts ``vid`` (or ``vid.*``) of a paper module that
    carries its own check (``afltheory.published.SELF_CHECKED``), for a statement without a ``Claim``; None
    when the module has no such verdict. ``cache``: paper module -> its verdicts (``verify()`` runs once)."""
    from ..published import SELF_CHECKED

    if paper not in SELF_CHECKED:
        return None
    if paper not in cache:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cache[paper] = list(paper.verify())
    vs = cache[paper]
    if not any(v.id == vid or v.id.startswith(vid + ".") for v in vs):
        return None
    return _verdict(lambda: vs, vid)


def rows(budget: int = 60, seed: int = 0, kills: dict[str, list[str]] | None = None) -> list[Row]:
    """Every published statement (``afltheory.published.STATEMENTS``, the registry's view) as a ``Row``
    (module docstring), in the order of docs/published.md. ``budget``: exact evaluations of the adversary
    per claim; ``seed``: its seed; ``kills``: {verdict id: mutants killed} for the kill-matrix column
    (default: the recorded run, ``afltheory.published.kill_record.KILLS``)."""
    from ..published import PAPERS, STATEMENTS

    budget = check_int("budget", budget, low=1, high=100_000)
    seed = check_int("seed", seed, low=0)
    if kills is None:
        from ..published.kill_record import KILLS as kills
    modules = {p.__name__.rsplit(".", 1)[1]: p for p in PAPERS}
    out: list[Row] = []
    cache: dict = {}
    for st in STATEMENTS.values():
        paper = modules[st.paper]
        claim = st.engine() if st.runnable else None
        plain = _plain(paper, f"published.{st.id}", cache) if claim is None else None
        if plain is not None:  # a paper module's own check of a statement without an engine form
            verdict, mb = plain
            searched = f"not searched: not a Claim ({st.why_not_a_claim})"
            kill = _kills_cell(kills, f"published.{st.id}")
            out.append(_statement_row(st, verdict, mb, searched, has_verdict=True, kills=kill))
            continue
        if claim is None:
            out.append(_statement_row(st, f"not a claim: {st.why_not_a_claim}", "—", "—"))
            continue
        verdict, mb = _verdict(paper.verify, claim.id)
        worst, has_w = _worst(claim, budget, seed)
        pep, has_p = _pep(claim)
        out.append(
            Row(
                st.id,
                st.title,
                _setting_of_claim(claim),
                _source(st),
                verdict,
                mb,
                worst,
                pep,
                True,
                has_w,
                has_p,
                _kills_cell(kills, claim.id),
            )
        )
    return out


def _statement_row(
    st: Any, verdict: str, measured_bound: str, worst: str, *, has_verdict: bool = False, kills: str = "—"
) -> Row:
    """The row of a statement the engines do not run (no engine form): its setting is the statement's own
    text and it has no PEP bracket."""
    return Row(
        st.id,
        st.title,
        _setting_of_statement(st),
        _source(st),
        verdict,
        measured_bound,
        worst,
        "—",
        has_verdict,
        kills=kills,
    )


def summary(table: list[Row]) -> str:
    """One line: how many rows, and how many have a verdict, a worst ratio and a PEP bracket."""
    return (
        f"{len(table)} statements; {sum(r.has_verdict for r in table)} with a verdict, "
        f"{sum(r.has_worst for r in table)} with a worst ratio, {sum(r.has_pep for r in table)} with a "
        f"PEP bracket"
    )


def _esc(s: str) -> str:
    return s.replace("|", "\\|")


def markdown(table: list[Row]) -> str:
    """The table as GitHub markdown, followed by the summary line."""
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    lines += ["| " + " | ".join(_esc(c) for c in r.cells()) + " |" for r in table]
    return "\n".join(lines) + "\n\n" + summary(table) + "\n"


def text(table: list[Row]) -> str:
    """The table as plain text: one block per statement, then the summary line."""
    out = []
    for r in table:
        out.append(f"{r.theorem}: {r.title}")
        for h, c in zip(HEADER[1:], r.cells()[1:], strict=True):
            out.append(f"  {h}: {c}")
    return "\n".join(out) + "\n" + summary(table) + "\n"


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Add ``afltheory published [--budget N] [--seed S] [--markdown]`` (nothing heavy imported here)."""
    p = sub.add_parser(
        "published",
        help="the table of published FL theorems: verdicts, worst ratios, PEP",
        description="Regenerate the table of the published FL theorems "
        "(afltheory.published): verdict on the checks' instances, the generic "
        "adversary's worst ratio, the PEP bracket where the class allows.",
    )
    p.add_argument(
        "--budget", type=int, default=60, help="adversary: exact evaluations per claim (default 60)"
    )
    p.add_argument("--seed", type=int, default=0, help="adversary seed (default 0)")
    p.add_argument("--markdown", action="store_true", help="print a markdown table (docs/published.md)")
    p.add_argument(
        "--kill-matrix",
        action="store_true",
        help="run the kill matrix of the published checks now (minutes) instead of printing the recorded one "
        "(the paper modules' KILLS, merged in afltheory/published/kill_record.py)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print the table; exit 0 (1 if a verdict FAILs or a violation is confirmed)."""
    kills = live_kills() if getattr(args, "kill_matrix", False) else None
    table = rows(budget=args.budget, seed=args.seed, kills=kills)
    print(markdown(table) if args.markdown else text(table), end="")
    if kills is not None:
        print(f"\nkill matrix (run now): KILLS = {kills!r}")
    bad = any("FAIL" in r.verdict or "VIOLATED" in r.worst for r in table)
    return 1 if bad else 0
