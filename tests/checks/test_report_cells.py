"""Every cell of the verdict table reads alone (issue 29): the measured cell names its quantity and labels its
interval, the pass criterion carries exactly one relation (no ``≥ >=``), sympy is rendered as math, the
terminal table fits the terminal, the HTML table sorts and filters without network access.

The rendered rows are checked on (a) the 89 verdicts of a real ``afltheory check --quick`` run, stored trimmed
in tests/checks/data/quick_verdicts.json, and (b) a live run of the thm1, cor1, cor2 and inconsistencies
checks, so a check that stops naming its quantity fails here."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest

from afltheory.checks import Verdict
from afltheory.checks.report import (
    COLUMNS_MD,
    criterion_str,
    math_str,
    measured_str,
    print_table,
    quantity_of,
    table_lines,
    theory_str,
)
from afltheory.checks.runner import write_reports

DATA = Path(__file__).parent / "data" / "quick_verdicts.json"
RELATIONS = "≤≥<>≈="
NUMBER = r"[-−+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?"


def _stored() -> list[Verdict]:
    return [Verdict.from_dict(v) for v in json.loads(DATA.read_text(encoding="utf-8"))["verdicts"]]


def _problems(head: list[str], body: list[list[str]], verdicts: list[Verdict]) -> list[str]:
    """Every reason a rendered row needs another section to be understood."""
    im, ic = head.index("measured"), head.index("pass criterion")
    bad = []
    for v, row in zip(verdicts, body, strict=True):
        m, c = row[im], row[ic]
        if not quantity_of(v):
            bad.append(f"{v.id}: no quantity name")
        # the measured cell starts with the quantity's name, never with a bare number
        if re.match(NUMBER, m):
            bad.append(f"{v.id}: measured cell starts with a number: {m!r}")
        # every bracket / second number is labelled: what comes after ", " starts with a word
        for part in re.sub(r"\[[^\]]*\]|\([^()]*\)", "[]", m).split(", ")[1:]:
            if re.match(rf"\[|{NUMBER}(?![\d.e]|\s*%)", part):
                bad.append(f"{v.id}: unlabelled interval or number in {m!r}")
        if v.ci is not None and not re.search(r"(CI|UCB|LCB|interval|s\.e\.|min–max)[^\[]*(\[|\d)", m):
            bad.append(f"{v.id}: bracket without its meaning in {m!r}")
        # one relation symbol at a time, written once
        if re.search(rf"[{RELATIONS}]\s*[{RELATIONS}]", c) or re.search(r">=|<=|~=", c):
            bad.append(f"{v.id}: doubled or ASCII relation in {c!r}")
        if re.match(NUMBER, c):
            bad.append(f"{v.id}: criterion without a relation: {c!r}")
        for cell in row:
            if "**" in cell or re.search(r"\w\*[\w(]", cell, re.ASCII):
                bad.append(f"{v.id}: raw sympy in {cell!r}")
            if cell.strip() == "":
                bad.append(f"{v.id}: empty cell")
    return bad


def test_math_rendering():
    assert math_str("K**2*tau/T") == "K²·τ/T"
    assert math_str("sqrt(m*K*T)") == "√(m·K·T)"
    assert math_str("sigma_G**2*eta_L") == "σ_G²·η_L"
    assert math_str("theta*x") == "θ·x"
    assert math_str("E‖x_T − x*‖²/D_0") == "E‖x_T − x*‖²/D_0"  # not sympy: unchanged
    assert math_str("K/(M T)") == "K/(M T)"


def test_one_relation_symbol():
    v = Verdict(
        id="a.b",
        claim="c",
        reference="r",
        measured=0.118,
        theoretical=">= 0.01",
        relation=">=",
        passed=True,
        quantity="ε^40/ε⁰",
    )
    assert theory_str(v) == "≥ 0.01"
    v = Verdict(
        id="a.b", claim="c", reference="r", measured=0.1, theoretical="< 1", relation="<=", passed=True
    )
    assert theory_str(v) == "< 1"
    v = Verdict(
        id="a.b",
        claim="c",
        reference="r",
        measured=1.72,
        theoretical=0.0,
        passed=True,
        tolerance="max |z| ≤ 3.76 (two-sided 99.9%, Bonferroni over 6)",
    )
    assert measured_str(v) == "max |z| = 1.72"
    assert criterion_str(v) == "≤ 3.76 (two-sided 99.9%, Bonferroni over 6)"


def test_widened_ci_shows_its_tolerance():
    v = Verdict(
        id="cor2.slope_T_mc",
        claim="c",
        reference="r",
        measured=-0.4387,
        ci=(-0.4937, -0.3855),
        theoretical=-0.5,
        passed=True,
        quantity="slope",
        tolerance="95 % bootstrap CI (widened by 0.03) contains -0.5",
        method="monte-carlo (R=16)",
    )
    assert measured_str(v) == "slope = -0.4387, 95 % bootstrap CI [-0.4937, -0.3855]"
    assert criterion_str(v) == "≈ -0.5: the 95 % bootstrap CI widened by ±0.03 contains it"


def test_stored_quick_run_every_cell_reads_alone():
    verdicts = _stored()
    assert len(verdicts) >= 80
    head, body = table_lines([{"spec": {}, "verdicts": verdicts}])
    assert _problems(head, body, verdicts) == []
    # the control would catch the old rendering: a bare number, a doubled relation, raw sympy
    old = [
        ["x", "c", "1.724", "≈ 0", "—", "—", "PASS", "failed ✓"],
        ["y", "c", "0.118", "≥ >= 0.01", "—", "—", "PASS", "failed ✓"],
        ["z", "c", "K**2*tau/T", "≈ —", "—", "—", "PASS", "failed ✓"],
    ]
    assert len(_problems(head, old, verdicts[:3])) >= 3


@pytest.mark.parametrize("width", [60, 80, 100, 140])
def test_terminal_table_fits_the_width(width):
    buf = io.StringIO()
    print_table([{"spec": {}, "verdicts": _stored()}], file=buf, width=width)
    lines = buf.getvalue().splitlines()
    assert max(len(ln) for ln in lines) <= width
    assert "..." not in buf.getvalue()  # nothing cut: long cells wrap
    # every word of every claim is printed (wrapped, not truncated)
    text = " ".join(buf.getvalue().split())
    for v in _stored()[:10]:
        assert v.claim.split()[-1] in text


def test_live_run_report_cells_and_html(tmp_path, capsys, quick_check):
    # run_check(c, tier="quick", seed=0, out=...) once per session (the paper-check tests read them too)
    results = [quick_check(c) for c in ("thm1", "cor1", "cor2", "inconsistencies")]
    for r in results:
        r["verdicts"] = [Verdict.from_dict(v) for v in r["verdicts"]]
    verdicts = [v for r in results for v in r["verdicts"]]
    head, body = table_lines(results)
    assert _problems(head, body, verdicts) == []
    meta = {
        "tier": "quick",
        "seed": 0,
        "n_verdicts": len(verdicts),
        "n_ok": sum(v.ok for v in verdicts),
        "elapsed": 1.0,
    }
    write_reports(str(tmp_path), results, meta)
    md = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert COLUMNS_MD in md and "| pass criterion |" in md
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "id='vfilter'" in html and "<script>" in html and "localeCompare" in html
    assert not re.search(r"<script[^>]+src=|https?://", html.split("<script>")[1])  # no network
    table = html[html.index("<table id='verdicts'") : html.index("</table>")]
    assert "K²·τ/T" in table and "**" not in table
