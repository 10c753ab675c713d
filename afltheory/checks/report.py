"""report.md and a self-contained report.html (PNG figures embedded as base64) from the check results, and
the verdict table printed on stdout."""

from __future__ import annotations

import base64
import html
import os
import re
from typing import TYPE_CHECKING, Any, TextIO

import numpy as np

from .._io import atomic_open
from .glossary import GLOSSARY_MD

if TYPE_CHECKING:
    from .verdict import Verdict

__all__ = ["control_str", "fmt", "measured_str", "print_table", "table_lines", "terms_str", "theory_str",
           "verdict_str", "write_html", "write_markdown"]


def fmt(v: Any, digits: int = 4) -> str:
    """A number for the report: 4 significant digits, scientific outside [1e-3, 1e4); text passes through."""
    if v is None:
        return "—"
    if isinstance(v, str):
        return v
    if isinstance(v, (bool, np.bool_)):
        return str(bool(v))
    try:
        f = float(v)
    except (TypeError, ValueError):
        return str(v)
    if not np.isfinite(f):
        return str(f)
    if f == 0:
        return "0"
    if abs(f) >= 1e4 or abs(f) < 1e-3:
        return f"{f:.{digits - 1}e}"
    return f"{f:.{digits}g}"


def measured_str(v: Verdict) -> str:
    """Measured value with its CI (or one-sided UCB)."""
    s = fmt(v.measured)
    if v.ci is not None and len(v.ci) == 2 and v.ci[0] is not None:
        s += f" [{fmt(v.ci[0])}, {fmt(v.ci[1])}]"
    elif v.ci is not None and len(v.ci) == 2:
        s += f" (UCB {fmt(v.ci[1])})"
    return s


def theory_str(v: Verdict) -> str:
    """Theoretical value with its relation sign."""
    rel = {"<=": "≤ ", ">=": "≥ ", "<": "< ", ">": "> ", "~=": "≈ ", "==": "= "}.get(v.relation, "")
    return rel + fmt(v.theoretical)


def verdict_str(v: Verdict) -> str:
    """PASS / FAIL / FAIL (negative control passed); labelled "(derivation)" for a symbolic derivation and
    "outside the conditions (exploratory)" for a configuration outside the theorem's hypotheses."""
    if v.ok:
        s = "PASS" + (" (finding)" if v.finding else "")
    elif not v.passed:
        s = "FAIL"
    else:
        s = "FAIL (negative control passed)"
    if v.derivation:
        s += " (derivation)"
    if v.inside_conditions is False:
        s += " · outside the conditions (exploratory)"
    return s


def terms_str(v: Verdict) -> str:
    """The dominant term of a bound verdict and its share of the bound ("transient 90%"), or "—"."""
    if not v.terms:
        return "—"
    name = max(v.terms, key=lambda k: v.terms[k])
    try:
        return f"{name} {float(v.terms[name]):.0%}"
    except (TypeError, ValueError):
        return f"{name} {v.terms[name]}"


def control_str(v: Verdict) -> str:
    """How the negative control came out."""
    nc = v.negative_control
    if nc is None:
        return "—"
    return ("failed ✓" if not nc.passed else "PASSED ✗")


def rows(results):
    for r in results:
        for v in r["verdicts"]:
            yield r, v


def table_lines(results: list[dict], kills: dict | None = None) -> tuple[list[str], list[list[str]]]:
    """(header, rows) of the verdict table; with ``kills`` ({verdict id: mutants}, ``afltheory check
    --mutants``) a last column lists the mutants each verdict kills."""
    head = ["id", "claim", "measured [CI]", "theory", "slack", "dominant term", "verdict", "neg. control"]
    if kills is not None:
        head.append("kills (mutants)")
    out = []
    for _, v in rows(results):
        slack = fmt(v.slack, 3) if v.slack is not None else "—"
        out.append([v.id, v.claim, measured_str(v), theory_str(v), slack, terms_str(v), verdict_str(v),
                    control_str(v)])
        if kills is not None:
            out[-1].append(", ".join(kills.get(v.id, ())) or "none")
    for r in results:   # a check whose optional extra is missing: one SKIPPED row with the install hint
        if r.get("skipped"):
            out.append([r["spec"]["id"], r["spec"]["title"], "—", "—", "—", "—",
                        f"SKIPPED (needs: {r['skipped']})", "—"] + ([] if kills is None else ["—"]))
    return head, out


def print_table(results: list[dict], file: TextIO | None = None, kills: dict | None = None) -> None:
    """The verdict table (cells cut at 60 characters) on ``file`` (stdout)."""
    head, body = table_lines(results, kills)
    short = [[c if len(c) <= 60 else c[:57] + "..." for c in row] for row in body]
    w = [max(len(head[j]), *(len(r[j]) for r in short)) if short else len(head[j]) for j in range(len(head))]
    line = "  ".join(h.ljust(w[j]) for j, h in enumerate(head))
    print(line, file=file)
    print("-" * len(line), file=file)
    for row in short:
        print("  ".join(c.ljust(w[j]) for j, c in enumerate(row)), file=file)


def _md_escape(s):
    return str(s).replace("|", "\\|").replace("\n", " ")


def _extra_lines(v) -> list[str]:
    L = []
    if v.inside_conditions is not None:
        L.append(f"- inside the theorem's conditions: {'yes' if v.inside_conditions else 'NO (exploratory)'}")
    if v.derivation:
        L.append("- symbolic derivation (no measurement)")
    if v.terms:
        L.append("- terms (share of the bound): " + ", ".join(f"{k} {fmt(x, 3)}" for k, x in v.terms.items()))
    return L


def write_markdown(path: str, results: list[dict], meta: dict, title: str = "afltheory check") -> str:
    """Write report.md (table, then one section per check with its configuration and verdict details)."""
    head, body = table_lines(results, meta.get("kills"))
    L = [f"# {title} — {meta['tier']} tier", "",
         f"seed {meta['seed']} · {meta['n_verdicts']} verdicts · {meta['n_ok']} pass · "
         f"{meta['n_verdicts'] - meta['n_ok']} fail · {meta['elapsed']:.1f} s", "",
         "Every verdict ships a negative control (the same check fed a wrong input) that must FAIL. "
         "Upper bounds: Monte Carlo means are compared through a one-sided 99 % Student-t upper confidence "
         "bound "
         "(UCB); exact moments have no Monte Carlo error. Slack = bound / measured. Slope CIs: 95 % "
         "percentile "
         "bootstrap over replicates.", "",
         "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in body:
        L.append("| " + " | ".join(_md_escape(c) for c in row) + " |")
    L.append("")
    prov = meta.get("provenance")
    if prov:
        L += ["## Provenance", ""] + [f"- {k}: {'—' if v is None else v}" for k, v in prov.items()] + [""]
    L += [GLOSSARY_MD.strip(), ""]
    for r in results:
        spec = r["spec"]
        L += [f"## {spec['id']}: {spec['title']}", "", f"*{spec['reference']}* · {r['elapsed']:.1f} s", ""]
        if r.get("error"):
            L += ["**check crashed:**", "", "```", r["error"], "```", ""]
        if r.get("skipped"):
            L += [f"**SKIPPED** (needs: `{r['skipped']}`)", ""]
        if r.get("doc"):
            L += ["<details><summary>configuration</summary>", "", "```", r["doc"].strip(), "```", "",
                  "</details>", ""]
        for v in r["verdicts"]:
            L += [f"### {v.id} — {verdict_str(v)}", "", f"**Claim.** {v.claim} ({v.reference})", "",
                  f"- measured: {measured_str(v)} ({v.method})", f"- theory: {theory_str(v)}",
                  f"- tolerance: {v.tolerance}"]
            if v.slack is not None:
                L.append(f"- slack (bound / measured): {fmt(v.slack, 3)}")
            nc = v.negative_control
            if nc is not None:
                L.append(f"- negative control: {nc.description} → measured {fmt(nc.measured)} vs "
                         f"{fmt(nc.theoretical)}: {'passed (BAD)' if nc.passed else 'failed (as required)'}")
            L += _extra_lines(v)
            if v.notes:
                L.append(f"- notes: {v.notes}")
            L.append("")
            for f in v.figures:
                L += [f"![{v.id}]({f})", ""]
    with atomic_open(path, "w", encoding="utf-8") as fh:   # never over a FIFO/device; never half-written
        fh.write("\n".join(L))
    return path


def _md_to_html(text: str) -> str:
    """The glossary's small Markdown subset (## headers, paragraphs, **bold**, *italic*) as HTML."""
    out = []
    for para in text.strip().split("\n\n"):
        para = html.escape(para.strip())
        para = re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", para)
        para = re.sub(r"(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?![\w*])", r"<i>\1</i>", para)
        out.append(f"<h2>{para[3:]}</h2>" if para.startswith("## ") else f"<p>{para}</p>")
    return "\n".join(out)


def _img(out, rel):
    p = os.path.join(out, rel)
    if not os.path.exists(p):
        return f"<p><em>missing figure {html.escape(rel)}</em></p>"
    with open(p, "rb") as fh:
        b = base64.b64encode(fh.read()).decode()
    return f'<img alt="{html.escape(rel)}" src="data:image/png;base64,{b}" style="max-width:100%">'


def write_html(path: str, out: str, results: list[dict], meta: dict, title: str = "afltheory check") -> str:
    """Write a self-contained report.html (figures embedded as base64 PNG)."""
    head, body = table_lines(results, meta.get("kills"))
    e = html.escape
    css = ("body{font-family:sans-serif;max-width:1200px;margin:auto;padding:1em}"
           "table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ccc;padding:3px 6px}"
           ".PASS{background:#e3f6e3}.FAIL{background:#f9dede}"
           "pre{background:#f4f4f4;padding:6px;overflow:auto}")
    H = [f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{e(title)}</title><style>{css}</style>"
         "</head><body>", f"<h1>{e(title)} — {e(meta['tier'])} tier</h1>",
         f"<p>seed {meta['seed']} · {meta['n_verdicts']} verdicts · {meta['n_ok']} pass · "
         f"{meta['n_verdicts'] - meta['n_ok']} fail · {meta['elapsed']:.1f} s</p>",
         "<table><tr>" + "".join(f"<th>{e(h)}</th>" for h in head) + "</tr>"]
    for row in body:
        cls = "PASS" if row[head.index("verdict")].startswith("PASS") else "FAIL"
        H.append(f"<tr class='{cls}'>" + "".join(f"<td>{e(c)}</td>" for c in row) + "</tr>")
    H.append("</table>")
    prov = meta.get("provenance")
    if prov:
        items = "".join(f"<li>{e(str(k))}: {e('—' if v is None else str(v))}</li>" for k, v in prov.items())
        H.append(f"<h2>Provenance</h2><ul>{items}</ul>")
    H.append(_md_to_html(GLOSSARY_MD))
    for r in results:
        spec = r["spec"]
        H.append(f"<h2>{e(spec['id'])}: {e(spec['title'])}</h2><p><em>{e(spec['reference'])}</em> · "
                 f"{r['elapsed']:.1f} s</p>")
        if r.get("error"):
            H.append(f"<p><b>check crashed:</b></p><pre>{e(r['error'])}</pre>")
        if r.get("doc"):
            H.append(f"<details><summary>configuration</summary><pre>{e(r['doc'].strip())}</pre></details>")
        for v in r["verdicts"]:
            nc = v.negative_control
            H.append(f"<h3>{e(v.id)} — {e(verdict_str(v))}</h3><p><b>Claim.</b> {e(v.claim)} "
                     f"({e(v.reference)})</p>"
                     f"<ul><li>measured: {e(measured_str(v))} ({e(v.method)})</li><li>theory: "
                     f"{e(theory_str(v))}</li>"
                     f"<li>tolerance: {e(str(v.tolerance))}</li>"
                     + (f"<li>slack: {e(fmt(v.slack, 3))}</li>" if v.slack is not None else "")
                     + (f"<li>negative control: {e(nc.description)} → {e(fmt(nc.measured))} vs "
                        f"{e(fmt(nc.theoretical))}: "
                        f"{'passed (BAD)' if nc.passed else 'failed (as required)'}</li>"
                        if nc is not None else "")
                     + "".join(f"<li>{e(x[2:])}</li>" for x in _extra_lines(v))
                     + (f"<li>notes: {e(v.notes)}</li>" if v.notes else "") + "</ul>")
            for f in v.figures:
                H.append(_img(out, f))
    H.append("</body></html>")
    with atomic_open(path, "w", encoding="utf-8") as fh:   # never over a FIFO/device; never half-written
        fh.write("\n".join(H))
    return path
