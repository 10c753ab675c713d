"""report.md and a self-contained report.html (PNG figures embedded as base64, palette-compressed) from the
check results, and the terminal output: by default a one-screen summary (``print_summary``: counts,
failures / crashes / "no power" first, one line per check, the report paths), with ``--verbose`` the full
verdict table (``print_table``)."""

from __future__ import annotations

import base64
import html
import os
import re
import shutil
import sys
import textwrap
from typing import TYPE_CHECKING, Any, TextIO

import numpy as np

from .._io import atomic_open
from .glossary import GLOSSARY_MD

if TYPE_CHECKING:
    from .verdict import Verdict

__all__ = [
    "COLUMNS_MD",
    "control_str",
    "criterion_str",
    "fmt",
    "interval_label",
    "math_str",
    "measured_str",
    "print_summary",
    "print_table",
    "ProgressLines",
    "quantity_of",
    "table_lines",
    "terms_str",
    "theory_str",
    "verdict_str",
    "write_html",
    "write_markdown",
]


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


_REL = {"<=": "≤", ">=": "≥", "<": "<", ">": ">", "~=": "≈", "==": "="}
_ASCII_REL = ((">=", "≥"), ("<=", "≤"), ("~=", "≈"), ("!=", "≠"))
_RELATION_START = re.compile(r"^\s*(>=|<=|~=|==|[≤≥<>≈=])\s*")
_SUPERSCRIPT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")
# longer names first ("theta" before "eta", "zeta" before "eta"); matched between non-letters only
_GREEK = (
    ("epsilon", "ε"),
    ("lambda", "λ"),
    ("sigma", "σ"),
    ("gamma", "γ"),
    ("omega", "ω"),
    ("alpha", "α"),
    ("theta", "θ"),
    ("delta", "δ"),
    ("zeta", "ζ"),
    ("beta", "β"),
    ("eta", "η"),
    ("tau", "τ"),
    ("rho", "ρ"),
    ("mu", "μ"),
    ("nu", "ν"),
    ("Gamma", "Γ"),
    ("Delta", "Δ"),
)
_SYMPY_LIKE = re.compile(r"\*\*|\w\s?\*\s?[\w(]|\bsqrt\(")


def math_str(s: Any) -> str:
    """Readable one-line math for a sympy expression or its ``str`` (``K**2*tau/T`` → ``K²·τ/T``,
    ``sqrt(m*K*T)`` → ``√(m·K·T)``, ``sigma_G`` → ``σ_G``); text that is not sympy-like passes unchanged."""
    t = str(s)
    if not _SYMPY_LIKE.search(t) and not hasattr(s, "free_symbols"):
        return t
    t = re.sub(r"\*\*(\d+)", lambda m: m.group(1).translate(_SUPERSCRIPT), t)
    t = re.sub(r"\*\*\(?(-\d+)\)?", lambda m: m.group(1).translate(_SUPERSCRIPT), t)
    t = re.sub(r"\*\*(\w+|\([^()]*\))", r"^\1", t)
    t = re.sub(r"\bsqrt\(", "√(", t)
    t = re.sub(r"\s*\*\s*", "·", t)
    for name, sym in _GREEK:
        t = re.sub(rf"(?<![A-Za-z]){name}(?![A-Za-z])", sym, t)
    return t


def _rel_text(s: str) -> str:
    """ASCII relations (``>=``, ``<=``, ``~=``) as one symbol each."""
    for a, b in _ASCII_REL:
        s = s.replace(a, b)
    return s


def _value(x: Any) -> str:
    return math_str(x) if isinstance(x, str) or hasattr(x, "free_symbols") else fmt(x)


#: readable names of the Claim API's measured statistics (``Claim.measured``, carried in ``details``)
_MEASURED_NAMES = {
    "avg_grad_sq": "(1/T)ΣE‖∇f(x_t)‖²",
    "weighted_avg_grad_sq": "weighted (1/T)ΣE‖∇f(x_t)‖²",
    "min_grad_sq": "min_t E‖∇f(x_t)‖²",
    "last_gap": "E f(x_T) − f*",
    "last_dist_sq": "E‖x_T − x*‖²",
    "avg_iterate_gap": "E f(x̄_T) − f*",
    "weighted_avg_iterate_gap": "E f(x̂_T) − f*",
}


def quantity_of(v: Verdict) -> str:
    """The name of the measured quantity: ``v.quantity``, else inferred from the common check shapes (a
    z-test, a slope, an upper bound compared through its UCB, an engine-vs-loop difference); "" if unknown."""
    q = getattr(v, "quantity", "") or ""
    if q:
        return q
    tol = str(v.tolerance or "")
    if re.match(r"(max(_\w+)? )?\|z\|", tol) and v.theoretical in (0, 0.0):
        return "max |z|" if tol.startswith("max") else "|z|"
    if "slope" in tol or ".slope" in v.id:
        return "slope"
    if "≤ bound" in tol:
        named = (v.details or {}).get("quantity") if isinstance(v.details, dict) else None
        name = _MEASURED_NAMES.get(named, named) if isinstance(named, str) else "left side"
        return f"{name}, {'exact' if v.ci is None else 'mean'}"
    m = re.match(r"(.*engine − loop.*?) ≤ ", tol)
    if m:
        return m.group(1)
    return ""


def _percent(v: Verdict) -> str:
    m = re.search(r"(\d+(?:\.\d+)?) ?%", f"{v.tolerance or ''} {v.method or ''}")
    return f"{m.group(1)} % " if m else ""


def interval_label(v: Verdict) -> str:
    """What the bracket after the measured value is: ``v.interval`` if set, else "95 % bootstrap CI",
    "99.9 % CI", "99 % UCB" (one-sided upper), "99 % LCB" (one-sided lower), from the tolerance/method."""
    lab = getattr(v, "interval", "") or ""
    if lab or v.ci is None or len(v.ci) != 2:
        return lab
    lo, hi = v.ci
    p = _percent(v)
    if lo is None:
        return f"{p}UCB"
    if hi is None:
        return f"{p}LCB"
    text = f"{v.tolerance or ''} {v.method or ''}"
    return f"{p}{'bootstrap ' if 'bootstrap' in text else ''}CI"


def measured_str(v: Verdict) -> str:
    """The measured cell, readable alone: the quantity's name, its value and its labelled interval
    (``slope = -0.4387, 95 % bootstrap CI [-0.4937, -0.3855]``, ``left side, mean = 14.19, 99 % UCB
    14.3``)."""
    q = quantity_of(v)
    val = _value(v.measured)
    if q:
        s = f"{q} {val}" if isinstance(v.measured, str) else f"{q} = {val}"
    else:
        s = val
    if v.ci is not None and len(v.ci) == 2:
        lo, hi = v.ci
        lab = interval_label(v)
        if lo is not None and hi is not None:
            s += f", {lab} [{fmt(lo)}, {fmt(hi)}]"
        elif hi is not None:
            s += f", {lab} {fmt(hi)}"
        elif lo is not None:
            s += f", {lab} {fmt(lo)}"
    return s


def theory_str(v: Verdict) -> str:
    """Theoretical value with exactly one relation sign (a theoretical text that carries its own relation,
    ``'>= 0.01'``, keeps it; sympy is rendered as readable math)."""
    t = v.theoretical
    if isinstance(t, str) and _RELATION_START.match(t):
        return _rel_text(math_str(t))
    rel = _REL.get(v.relation, "")
    return (rel + " " if rel else "") + _value(t)


def criterion_str(v: Verdict) -> str:
    """The pass criterion, readable alone: one relation and the target with the tolerance that decided the
    verdict (``≤ 3.76 (two-sided 99.9%, Bonferroni over 6)`` for a max |z|, ``≈ -0.5 ± 0.03`` for an exact
    slope, ``one-sided 99% t-UCB ≤ bound 62.19`` for an upper bound)."""
    tol = _rel_text(math_str(v.tolerance)) if v.tolerance not in (None, "") else ""
    q = quantity_of(v)
    theo = theory_str(v)
    # the tolerance is a rule on the measured quantity itself ("max |z| ≤ 3.76 (...)")
    if q and tol.lower().startswith(q.lower()):
        rest = tol[len(q) :].strip()
        if _RELATION_START.match(rest):
            return rest
    m = re.fullmatch(r"\|(.+?) − \(?([^()|]+?)\)?\| ≤ (\S+)(.*)", tol)
    if m and (m.group(1) in q or m.group(1) == "value"):
        return f"≈ {m.group(2).strip()} ± {m.group(3)}{m.group(4)}"
    if tol.startswith("±"):
        return f"{theo} {tol}"
    m = re.fullmatch(r"(.*CI) \(widened by (\S+)\) contains (\S+)", tol)
    if m:
        return f"{theo}: the {m.group(1)} widened by ±{m.group(2)} contains it"
    if "≤ bound" in tol and not isinstance(v.theoretical, str):
        if v.relation in (">", ">="):  # a variant declared to fail: PASS means the bound is violated
            return f"{theo}; pass: the bound is violated (not {tol})"
        return tol.replace("≤ bound", f"≤ bound {fmt(v.theoretical)}", 1)
    if not tol or tol == "demonstrated" or tol == theo:
        return theo if v.theoretical is not None else (tol or "—")
    if v.theoretical is None:
        return tol
    if v.finding:  # a tight value is the paper's claim; an inequality is the finding's own direction
        return f"{'paper: ' if v.relation == '~=' else ''}{theo}; finding if: {tol}"
    return f"{theo}; pass: {tol}"


def verdict_str(v: Verdict) -> str:
    """PASS / FAIL / FAIL (negative control passed); labelled "(derivation)" for a symbolic derivation and
    "outside the conditions (exploratory)" for a configuration outside the theorem's hypotheses."""
    tags = []
    if v.ok:
        s = "PASS"
        if v.finding:
            tags.append("finding")
    elif not v.passed:
        s = "FAIL"
    else:
        s = "FAIL"
        tags.append("negative control passed")
    if v.derivation:
        tags.append("derivation")
    if tags:
        s += f" ({', '.join(tags)})"
    if v.inside_conditions is False:
        s += " · outside the conditions (exploratory)"
    return s


def terms_str(v: Verdict) -> str:
    """The dominant term of a bound verdict and its share of the bound ("transient 90% of bound"), or "—"."""
    if not v.terms:
        return "—"
    name = max(v.terms, key=lambda k: v.terms[k])
    try:
        return f"{name} {float(v.terms[name]):.0%} of bound"
    except (TypeError, ValueError):
        return f"{name} {v.terms[name]}"


def control_str(v: Verdict) -> str:
    """How the negative control came out."""
    nc = v.negative_control
    if nc is None:
        return "—"
    return "failed ✓" if not nc.passed else "PASSED ✗"


def rows(results):
    for r in results:
        for v in r["verdicts"]:
            yield r, v


HEAD = ["id", "claim", "measured", "pass criterion", "slack", "dominant term", "verdict", "neg. control"]

#: what each column of the verdict table holds (printed above the table in report.md / report.html)
COLUMNS_MD = (
    "**Columns.** *measured*: the quantity's name, its value and, after a comma, its interval with its "
    "meaning — `95 % bootstrap CI [lo, hi]` a percentile-bootstrap confidence interval of a slope, "
    "`99.9 % CI [lo, hi]` a two-sided Student-t interval of a Monte Carlo mean, `99 % UCB x` / `99 % LCB x` "
    "a one-sided upper / lower confidence bound; other brackets name what they are. *pass criterion*: the "
    "relation the measured quantity must satisfy and the tolerance that decided the verdict (`left side` = "
    "the theorem's left-hand side; `bound` = its right-hand side on the realized schedules). *slack* = "
    "bound / measured (upper bounds only; > 1: the bound holds, and how loosely). *dominant term*: the "
    "largest named term of the bound and its share of the bound. *neg. control*: the same check fed a "
    'plausible wrong input; it must fail ("failed ✓").'
)


def table_lines(results: list[dict], kills: dict | None = None) -> tuple[list[str], list[list[str]]]:
    """(header, rows) of the verdict table; with ``kills`` ({verdict id: mutants}, ``afltheory check
    --mutants``) a last column lists the mutants each verdict kills."""
    head = list(HEAD)
    if kills is not None:
        head.append("kills (mutants)")
    out = []
    for _, v in rows(results):
        slack = fmt(v.slack, 3) if v.slack is not None else "—"
        out.append(
            [
                v.id,
                v.claim,
                measured_str(v),
                criterion_str(v),
                slack,
                terms_str(v),
                verdict_str(v),
                control_str(v),
            ]
        )
        if kills is not None:
            out[-1].append(", ".join(kills.get(v.id, ())) or "none")
    for r in results:  # a check whose optional extra is missing: one SKIPPED row with the install hint
        if r.get("skipped"):
            out.append(
                [
                    r["spec"]["id"],
                    r["spec"]["title"],
                    "—",
                    "—",
                    "—",
                    "—",
                    f"SKIPPED (needs: {r['skipped']})",
                    "—",
                ]
                + ([] if kills is None else ["—"])
            )
    return head, out


#: terminal columns (slack and the dominant term are in report.md / report.html) and their caps in characters
_TERM_COLS = ("id", "verdict", "measured", "pass criterion", "claim", "kills (mutants)")
_CAPS = {"verdict": 18, "measured": 34, "pass criterion": 34, "kills (mutants)": 24}


def _fit_widths(head: list[str], body: list[list[str]], width: int) -> list[int]:
    """Column widths whose table (two spaces between columns) fits ``width``: every column but the id capped;
    the claim column keeps at least max(24, 30 % of the width) while the widest other column shrinks (minimum
    14, then 8); the id column never shrinks (an id is never split)."""
    nat = [max(len(head[j]), *(len(r[j]) for r in body)) if body else len(head[j]) for j in range(len(head))]
    w = [min(n, _CAPS.get(h, n)) for n, h in zip(nat, head, strict=True)]
    sep = 2 * (len(head) - 1)
    c = head.index("claim") if "claim" in head else None
    if c is not None:
        w[c] = min(nat[c], max(24, int(0.3 * width)))
    i = head.index("id") if "id" in head else None
    while sum(w) + sep > width:
        # ids stay whole (never narrower than the longest id); the other columns give, down to 14, then 8
        others = [k for k in range(len(w)) if k not in (c, i) and w[k] > 14]
        others = others or [k for k in range(len(w)) if k not in (c, i) and w[k] > 8]
        if not others:
            if c is not None and w[c] > 8:
                w[c] -= 1
                continue
            break
        k = max(others, key=lambda k: w[k])
        w[k] -= 1
    if c is not None:  # the claim takes what is left
        w[c] = max(w[c], min(nat[c], width - sep - (sum(w) - w[c])))
    return w


def print_table(
    results: list[dict], file: TextIO | None = None, kills: dict | None = None, width: int | None = None
) -> None:
    """The verdict table on ``file`` (stdout), fitted to ``width`` (default: the terminal's, 100 when
    unknown): columns id, verdict (with the negative control), measured, pass criterion, claim; long cells
    wrap inside their column. report.md / report.html hold every column (slack, dominant term)."""
    head, body = table_lines(results, kills)
    cols = [head.index(h) for h in _TERM_COLS if h in head]
    iv, ic = head.index("verdict"), head.index("neg. control")
    body = [
        [(f"{r[iv]}; control {r[ic]}" if r[ic] != "—" else r[iv]) if j == iv else r[j] for j in cols]
        for r in body
    ]
    head = [head[j] for j in cols]
    if width is None:
        width = shutil.get_terminal_size((100, 24)).columns
    width = max(int(width), 60)
    w = _fit_widths(head, body, width)
    stacked = sum(w) + 2 * (len(w) - 1) > width and head[0] == "id"
    if stacked:  # whole ids do not fit beside the other columns: each id on its own line above its row
        ids, head, body = [r[0] for r in body], head[1:], [r[1:] for r in body]
        w = _fit_widths(head, body, width)

    def emit(cells: list[str]) -> None:
        wrapped = [  # an id is never split (its column is as wide as the longest id)
            textwrap.wrap(c, w[j], break_long_words=j != 0 or stacked, break_on_hyphens=False) or [""]
            for j, c in enumerate(cells)
        ]
        for i in range(max(len(x) for x in wrapped)):
            line = "  ".join((x[i] if i < len(x) else "").ljust(w[j]) for j, x in enumerate(wrapped))
            print(line.rstrip(), file=file)

    legend = (
        "measured: quantity = value, then its interval as labelled (CI: confidence interval; UCB/LCB: "
        "one-sided upper/lower confidence bound). control failed ✓: the negative control failed as it "
        "must. Slack, dominant term and full details: report.md / report.html."
    )
    for ln in textwrap.wrap(legend, width):
        print(ln, file=file)
    emit(head)
    print("-" * min(width, sum(w) + 2 * (len(w) - 1)), file=file)
    multi = any(len(c) > w[j] for row in body for j, c in enumerate(row))
    for k, row in enumerate(body):
        if (multi or stacked) and k:
            print("", file=file)
        if stacked:
            print(ids[k], file=file)
        emit(row)


def _no_power(v: Verdict) -> bool:
    """A verdict that says it could not fail ("no power" in its notes: no control that can fail)."""
    return "no power" in (v.notes or "").lower()


def _one_line(text: str, width: int) -> str:
    text = str(text).replace("\n", " ").rstrip()
    return text if len(text) <= width else text[: max(width - 1, 1)] + "…"


def _check_line(r: dict, idw: int = 16) -> str:
    vs = r["verdicts"]
    cid = r["spec"]["id"]
    if r.get("skipped"):
        state = f"SKIPPED (needs: {r['skipped']})"
    elif r["error"]:
        state = "CRASHED"
    else:
        bad = [v for v in vs if not v.ok]
        state = f"{len(vs) - len(bad)}/{len(vs)} pass" + (f", {len(bad)} FAILED" if bad else "")
        weak = sum(_no_power(v) for v in vs)
        state += f", {weak} no power" if weak else ""
    cpu = f" ({r['cpu']:5.1f} s CPU)" if r.get("cpu") is not None else ""
    return f"  {cid:{idw}s} {state:28s} {r['elapsed']:6.1f} s{cpu}"


def print_summary(
    results: list[dict],
    meta: dict,
    reports: tuple[str, ...] = (),
    file: TextIO | None = None,
    width: int | None = None,
) -> None:
    """The run on one screen: the counts; then what needs a look first — failed verdicts (id, verdict,
    measured, pass criterion), crashed checks (their error), verdicts without power, skipped checks; then
    one line per check (failures first) and the report paths. Every line fits ``width``; ids are whole."""
    file = sys.stdout if file is None else file
    if width is None:
        width = shutil.get_terminal_size((100, 24)).columns
    width = max(int(width), 60)
    allv = [v for r in results for v in r["verdicts"]]
    bad = [v for v in allv if not v.ok]
    crashed = [r for r in results if r["error"]]
    skipped = [r for r in results if r.get("skipped")]
    weak = [v for v in allv if _no_power(v)]
    n_ok = meta.get("n_ok", len(allv) - len(bad))
    elapsed = meta.get("elapsed")
    took = f" ({elapsed:.1f} s)" if elapsed is not None else ""

    plural = "s" if len(results) != 1 else ""

    def out(line: str = "") -> None:
        print(_one_line(line, width) if line else "", file=file)

    head = (
        f"{n_ok}/{len(allv)} verdicts pass in {len(results)} check{plural}{took}: {len(bad)} failed, "
        f"{len(crashed)} crashed, {len(weak)} without power, {len(skipped)} skipped"
    )
    for ln in textwrap.wrap(head, width, break_long_words=False):
        print(ln, file=file)

    def ids(label: str, names: list[str]) -> None:  # wrapped between ids, never inside one
        text = label + ", ".join(names)
        for ln in textwrap.wrap(text, width, break_long_words=False, break_on_hyphens=False):
            print(ln, file=file)

    if bad:
        ids("FAILED: ", [v.id for v in bad])
        for v in bad:
            ctl = control_str(v)
            out(f"  {v.id}  {verdict_str(v)}; control {ctl}: {measured_str(v)} | {criterion_str(v)}")
    if crashed:
        ids("CRASHED: ", [r["spec"]["id"] for r in crashed])
        for r in crashed:
            last = str(r["error"]).strip().splitlines()
            out(f"  {r['spec']['id']}: {last[-1] if last else ''}")
    if weak:
        ids("NO POWER (the verdict cannot fail): ", [v.id for v in weak])
    if skipped:
        ids(
            "SKIPPED (optional extra not installed): ",
            [f"{r['spec']['id']} (needs: {r['skipped']})" for r in skipped],
        )
    idw = max([16] + [len(r["spec"]["id"]) for r in results])  # ids whole, columns aligned
    out(f"  {'check':{idw}s} {'verdicts':28s} {'wall':>8s}")
    first = [r for r in results if r["error"] or any(not v.ok for v in r["verdicts"])]
    for r in first + [r for r in results if r not in first]:
        out(_check_line(r, idw))
    if reports:
        print("reports: " + ", ".join(reports) + "  (the full table: --verbose, or report.md)", file=file)


class ProgressLines:
    """The per-check progress lines (``[k/n] id: state (t s)``, written by ``run_checks``) condensed for a
    person: on a terminal each line overwrites the previous one, and a check that does not pass (failed,
    crashed, skipped) keeps its line; elsewhere (a pipe, a log) those lines and every ``ceil(n/8)``-th line
    are kept. Lines of another shape pass through unchanged."""

    _LINE = re.compile(r"^\[(\d+)/(\d+)\] \S+: (?:(\d+)/(\d+) verdicts pass|.*)")

    def __init__(self, stream: TextIO, tty: bool | None = None):
        self.stream = stream
        self.tty = bool(getattr(stream, "isatty", lambda: False)()) if tty is None else tty
        self._buf = ""
        self._pending = False

    def write(self, s: str) -> int:
        """File-like ``write``: buffers ``s`` and emits its complete lines condensed."""
        self._buf += s
        while "\n" in self._buf:
            line, self._buf = self._buf.split("\n", 1)
            self._line(line)
        return len(s)

    def _line(self, line: str) -> None:
        m = self._LINE.match(line)
        if m is None:
            self._emit(line, keep=True)
            return
        k, n = int(m.group(1)), int(m.group(2))
        passed = m.group(3) is not None and m.group(3) == m.group(4)
        if self.tty:
            self._emit(line, keep=not passed)
        elif not passed or k == n or k % max(1, -(-n // 8)) == 0:
            self._emit(line, keep=True)

    def _emit(self, line: str, keep: bool) -> None:
        if self.tty:
            self.stream.write("\r\x1b[K" + line + ("\n" if keep else ""))
            self._pending = not keep
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def flush(self) -> None:
        """File-like ``flush`` of the underlying stream."""
        self.stream.flush()

    def finish(self) -> None:
        """End an overwritten line (call once the run is over)."""
        if self._buf:
            self._line(self._buf)
            self._buf = ""
        if self._pending:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self._pending = False


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
    d = v.details if isinstance(v.details, dict) else {}
    if d.get(
        "latex"
    ):  # a claim read from the paper's LaTeX (afltheory.claims.latex): source next to the parse
        src = "; ".join(f"{k} `{x}`" for k, x in d["latex"].items())
        L.append(f"- from LaTeX: {src} → bound `{d.get('bound_expr', '?')}`")
    return L


def write_markdown(path: str, results: list[dict], meta: dict, title: str = "afltheory check") -> str:
    """Write report.md (table, then one section per check with its configuration and verdict details)."""
    head, body = table_lines(results, meta.get("kills"))
    L = [
        f"# {title} — {meta['tier']} tier",
        "",
        f"seed {meta['seed']} · {meta['n_verdicts']} verdicts · {meta['n_ok']} pass · "
        f"{meta['n_verdicts'] - meta['n_ok']} fail · {meta['elapsed']:.1f} s",
        "",
        "Every verdict ships a negative control (the same check fed a wrong input) that "
        "must FAIL. Upper bounds: Monte Carlo means are compared through a one-sided 99 % "
        "Student-t upper confidence bound (UCB); exact moments have no Monte Carlo error. "
        "Slack = bound / measured. Slope CIs: 95 % percentile bootstrap over replicates.",
        "",
        COLUMNS_MD,
        "",
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
    ]
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
            L += [
                "<details><summary>configuration</summary>",
                "",
                "```",
                r["doc"].strip(),
                "```",
                "",
                "</details>",
                "",
            ]
        for v in r["verdicts"]:
            L += [
                f"### {v.id} — {verdict_str(v)}",
                "",
                f"**Claim.** {v.claim} ({v.reference})",
                "",
                f"- measured: {measured_str(v)} ({v.method})",
                f"- theory: {theory_str(v)}",
                f"- pass criterion: {criterion_str(v)}",
                f"- tolerance: {_rel_text(math_str(v.tolerance))}",
            ]
            if v.slack is not None:
                L.append(f"- slack (bound / measured): {fmt(v.slack, 3)}")
            nc = v.negative_control
            if nc is not None:
                L.append(
                    f"- negative control: {nc.description} → measured {fmt(nc.measured)} vs "
                    f"{fmt(nc.theoretical)}: {'passed (BAD)' if nc.passed else 'failed (as required)'}"
                )
            L += _extra_lines(v)
            if v.notes:
                L.append(f"- notes: {v.notes}")
            L.append("")
            for f in v.figures:
                L += [f"![{v.id}]({f})", ""]
    with atomic_open(path, "w", encoding="utf-8") as fh:  # never over a FIFO/device; never half-written
        fh.write("\n".join(L))
    return path


def _md_to_html(text: str) -> str:
    """The glossary's small Markdown subset (## headers, paragraphs, **bold**, *italic*, `code`) as HTML."""
    out = []
    for para in text.strip().split("\n\n"):
        para = html.escape(para.strip())
        para = re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", para)
        para = re.sub(r"`(.+?)`", r"<code>\1</code>", para)
        para = re.sub(r"(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?![\w*])", r"<i>\1</i>", para)
        out.append(f"<h2>{para[3:]}</h2>" if para.startswith("## ") else f"<p>{para}</p>")
    return "\n".join(out)


def _compressed_png(data: bytes) -> bytes:
    """``data`` (a PNG) re-encoded with an adaptive palette of 256 colours (matplotlib's line plots use far
    fewer: 3-4x smaller, the same pixels to the eye), or unchanged when Pillow cannot read it or the result
    is not smaller."""
    try:
        import io

        from PIL import Image  # matplotlib's own dependency

        with Image.open(io.BytesIO(data)) as im:
            rgb = im.convert("RGB")
        buf = io.BytesIO()
        rgb.quantize(colors=256, method=Image.Quantize.MEDIANCUT).save(buf, "PNG", optimize=True)
    except Exception:  # noqa: BLE001 - a figure Pillow cannot read is embedded as it is
        return data
    return buf.getvalue() if len(buf.getvalue()) < len(data) else data


def _img(out, rel):
    """A figure embedded in report.html (palette-compressed, so the report stays light and self-contained),
    linked to the full-quality PNG next to the report."""
    p = os.path.join(out, rel)
    if not os.path.exists(p):
        return f"<p><em>missing figure {html.escape(rel)}</em></p>"
    with open(p, "rb") as fh:
        b = base64.b64encode(_compressed_png(fh.read())).decode()
    return (
        f'<a href="{html.escape(rel)}"><img alt="{html.escape(rel)}" src="data:image/png;base64,{b}" '
        'style="max-width:100%"></a>'
    )


_JS = """
(function(){
  var t = document.getElementById('verdicts'); if (!t) return;
  var body = t.tBodies[0], rows = Array.prototype.slice.call(body.rows);
  var sel = document.getElementById('vfilter'), q = document.getElementById('vsearch');
  var shown = document.getElementById('vshown');
  function key(cell){ var k = cell.getAttribute('data-sort'); return k === null ? cell.textContent : k; }
  function apply(){
    var want = sel.value, text = q.value.toLowerCase(), n = 0;
    rows.forEach(function(r){
      var ok = (want === 'all' || r.getAttribute('data-kind').split(' ').indexOf(want) >= 0)
               && (!text || r.textContent.toLowerCase().indexOf(text) >= 0);
      r.style.display = ok ? '' : 'none'; if (ok) n++;
    });
    shown.textContent = n + ' of ' + rows.length + ' rows shown';
  }
  sel.addEventListener('change', apply); q.addEventListener('input', apply);
  var h = decodeURIComponent(location.hash.slice(1));   // report.html#finding opens filtered
  Array.prototype.forEach.call(sel.options, function(o){ if (o.value === h) sel.value = h; });
  Array.prototype.forEach.call(t.tHead.rows[0].cells, function(th, j){
    th.style.cursor = 'pointer'; th.title = 'click to sort';
    th.addEventListener('click', function(){
      var asc = th.getAttribute('data-dir') !== 'asc';
      Array.prototype.forEach.call(t.tHead.rows[0].cells, function(h){
        h.removeAttribute('data-dir'); h.textContent = h.textContent.replace(/ [▲▼]$/, ''); });
      th.setAttribute('data-dir', asc ? 'asc' : 'desc'); th.textContent += asc ? ' ▲' : ' ▼';
      rows.sort(function(a, b){
        var x = key(a.cells[j]), y = key(b.cells[j]), nx = parseFloat(x), ny = parseFloat(y);
        var c = (!isNaN(nx) && !isNaN(ny) && String(nx) === x.trim() && String(ny) === y.trim())
                ? nx - ny : x.localeCompare(y);
        return asc ? c : -c;
      });
      rows.forEach(function(r){ body.appendChild(r); });
    });
  });
  apply();
})();
"""


def _kind(v: Verdict) -> str:
    """Filter classes of a row: pass/fail, finding, exploratory, derivation."""
    k = ["pass" if v.ok else "fail"]
    if v.finding:
        k.append("finding")
    if v.inside_conditions is False:
        k.append("exploratory")
    if v.derivation:
        k.append("derivation")
    return " ".join(k)


def _sort_key(v: Any) -> str | None:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return repr(f) if np.isfinite(f) else None


def write_html(path: str, out: str, results: list[dict], meta: dict, title: str = "afltheory check") -> str:
    """Write a self-contained report.html (figures embedded as base64 PNG; the verdict table sorts by any
    column on a click and filters by verdict and by text, with a few lines of inline JavaScript — no
    network)."""
    head, body = table_lines(results, meta.get("kills"))
    verdicts = [v for _, v in rows(results)]
    e = html.escape
    css = (
        "body{font-family:sans-serif;max-width:1400px;margin:auto;padding:1em}"
        "table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ccc;padding:3px 6px;"
        "vertical-align:top}th{background:#eee;position:sticky;top:0}"
        ".pass{background:#e3f6e3}.fail{background:#f9dede}.finding{background:#fdf3d6}"
        "td.claim{max-width:420px}td.num{text-align:right}.controls{margin:.5em 0}"
        "pre{background:#f4f4f4;padding:6px;overflow:auto}"
    )
    opts = [
        ("all", "all verdicts"),
        ("pass", "PASS"),
        ("fail", "FAIL"),
        ("finding", "PASS (finding)"),
        ("exploratory", "outside the conditions (exploratory)"),
        ("derivation", "derivation"),
    ]
    H = [
        f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{e(title)}</title><style>{css}</style>"
        "</head><body>",
        f"<h1>{e(title)} — {e(meta['tier'])} tier</h1>",
        f"<p>seed {meta['seed']} · {meta['n_verdicts']} verdicts · {meta['n_ok']} pass · "
        f"{meta['n_verdicts'] - meta['n_ok']} fail · {meta['elapsed']:.1f} s</p>",
        _md_to_html(COLUMNS_MD),
        "<div class='controls'><label>show <select id='vfilter'>"
        + "".join(f"<option value='{a}'>{e(b)}</option>" for a, b in opts)
        + "</select></label> <label>containing <input id='vsearch' type='search' size='24'></label> "
        "<span id='vshown'></span> · click a column header to sort</div>",
        "<table id='verdicts'><thead><tr>"
        + "".join(f"<th>{e(h)}</th>" for h in head)
        + "</tr></thead><tbody>",
    ]
    for v, row in zip(verdicts, body[: len(verdicts)], strict=True):  # then the SKIPPED checks' rows
        kind = _kind(v)
        cls = "finding" if v.finding and v.ok else ("pass" if v.ok else "fail")
        cells = []
        for h, c in zip(head, row, strict=True):
            attrs = ""
            if h == "claim":
                attrs = " class='claim'"
            elif h == "slack":
                k = _sort_key(v.slack)
                attrs = " class='num'" + (f" data-sort='{k}'" if k else "")
            elif h == "measured":
                k = _sort_key(v.measured)
                attrs = f" data-sort='{k}'" if k else ""
            cells.append(f"<td{attrs}>{e(c)}</td>")
        H.append(f"<tr class='{cls}' data-kind='{kind}'>" + "".join(cells) + "</tr>")
    for row in body[len(verdicts) :]:  # a check whose optional extra is missing (table_lines' last rows)
        H.append(
            "<tr class='skipped' data-kind='skipped'>" + "".join(f"<td>{e(c)}</td>" for c in row) + "</tr>"
        )
    H.append("</tbody></table>")
    prov = meta.get("provenance")
    if prov:
        items = "".join(f"<li>{e(str(k))}: {e('—' if v is None else str(v))}</li>" for k, v in prov.items())
        H.append(f"<h2>Provenance</h2><ul>{items}</ul>")
    H.append(_md_to_html(GLOSSARY_MD))
    for r in results:
        spec = r["spec"]
        H.append(
            f"<h2>{e(spec['id'])}: {e(spec['title'])}</h2><p><em>{e(spec['reference'])}</em> · "
            f"{r['elapsed']:.1f} s</p>"
        )
        if r.get("error"):
            H.append(f"<p><b>check crashed:</b></p><pre>{e(r['error'])}</pre>")
        if r.get("skipped"):
            H.append(f"<p><b>SKIPPED</b> (needs: <code>{e(r['skipped'])}</code>)</p>")
        if r.get("doc"):
            H.append(f"<details><summary>configuration</summary><pre>{e(r['doc'].strip())}</pre></details>")
        for v in r["verdicts"]:
            nc = v.negative_control
            H.append(
                f"<h3>{e(v.id)} — {e(verdict_str(v))}</h3><p><b>Claim.</b> {e(v.claim)} "
                f"({e(v.reference)})</p><ul><li>measured: {e(measured_str(v))} "
                f"({e(v.method)})</li><li>theory: {e(theory_str(v))}</li><li>pass criterion: "
                f"{e(criterion_str(v))}</li><li>tolerance: {e(_rel_text(math_str(v.tolerance)))}</li>"
                + (f"<li>slack: {e(fmt(v.slack, 3))}</li>" if v.slack is not None else "")
                + (
                    f"<li>negative control: {e(nc.description)} → {e(fmt(nc.measured))} vs "
                    f"{e(fmt(nc.theoretical))}: "
                    f"{'passed (BAD)' if nc.passed else 'failed (as required)'}</li>"
                    if nc is not None
                    else ""
                )
                + "".join(f"<li>{e(x[2:])}</li>" for x in _extra_lines(v))
                + (f"<li>notes: {e(v.notes)}</li>" if v.notes else "")
                + "</ul>"
            )
            for f in v.figures:
                H.append(_img(out, f))
    H.append(f"<script>{_JS}</script></body></html>")
    with atomic_open(path, "w", encoding="utf-8") as fh:  # never over a FIFO/device; never half-written
        fh.write("\n".join(H))
    return path
