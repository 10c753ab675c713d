"""``afltheory published`` (issue 26): the table command prints one row per published statement, with a
verdict, a worst ratio and a PEP bracket where they apply. Deterministic (exact moments, deterministic
simulations, hypothesis with a fixed seed, the PEP's SDP): no confidence level is involved, except the
verdicts' one-sided 99 % t-UCB of the two deterministic simulations (identical replicates)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from afltheory.cli import main
from afltheory.published import STATEMENTS


def test_command_prints_a_row_per_statement(capsys):
    assert main(["published", "--budget", "6", "--seed", "0", "--markdown"]) == 0
    out = capsys.readouterr().out
    rows = [ln for ln in out.splitlines() if ln.startswith("| ") and not ln.startswith("| theorem")]
    assert len(rows) == len(STATEMENTS) >= 8
    for sid in STATEMENTS:
        assert sum(r.startswith(f"| {sid} — ") for r in rows) == 1, sid
    for r in rows:
        assert " nan" not in r.lower()
        assert "not a claim:" in r or "PASS" in r, r  # every statement: a verdict or the reason it has none
        assert "FAIL" not in r and "VIOLATED" not in r
        assert r.rstrip(" |").split(" | ")[-1] != "not run", r  # every claim row has its kill-matrix cell
    m = re.search(
        r"(\d+) statements; (\d+) with a verdict, (\d+) with a worst ratio, (\d+) with a PEP "
        r"bracket",
        out,
    )
    from afltheory.published.registry import engine_forms

    CLAIMS = engine_forms()

    plain = [r for r in rows if "PASS" in r and "not searched: not a Claim" in r]  # a module's plain check
    assert m and int(m[1]) == len(STATEMENTS) and int(m[2]) == len(CLAIMS) + len(plain) >= 12
    assert sum("PASS" in r for r in rows) == int(m[2]) and len(plain) >= 6
    no_search = [c for c in CLAIMS.values() if "no_search" in c.setups]  # FedNova's own threshold
    assert int(m[3]) == len(CLAIMS) - len(no_search) and len(no_search) == 1 and int(m[4]) >= 5


def test_pep_brackets_are_ordered_and_below_the_bound():
    from afltheory.adversary.published_table import _pep
    from afltheory.published.registry import engine_forms

    n = 0
    for c in engine_forms().values():
        text, ok = _pep(c)
        if not ok:
            assert "refused" in text, text
            continue
        n += 1
        lo, up, bound = map(float, re.search(r"\[([^,]+), ([^\]]+)\] ≤ bound (\S+)", text).groups())
        assert lo <= up * (1 + 1e-6) and up <= bound
    assert n >= 3


def test_bad_input_is_refused(capsys):
    assert main(["published", "--budget", "0"]) == 2
    assert "budget" in capsys.readouterr().err


def test_plain_text_output(capsys):
    from afltheory.adversary.published_table import Row, text

    r = Row("x.y", "t", "s", "src", "not a claim: rate only", "—", "—", "—")
    out = text([r])
    assert out.startswith("x.y: t\n") and "1 statements; 0 with a verdict" in out


@pytest.mark.slow
def test_docs_table_is_current():
    """docs/published.md carries the rows ``python -m afltheory published --markdown`` prints (default budget
    60, seed 0), run as the command in a fresh process (the adversary's worst ratio depends on the process's
    earlier state, see docs/published.md); ~10 s."""
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(root), "OPENBLAS_NUM_THREADS": "1"}
    out = subprocess.run(
        [sys.executable, "-m", "afltheory", "published", "--markdown"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    ).stdout
    doc = (root / "docs" / "published.md").read_text()
    for line in out.splitlines():
        if line.startswith("| ") or line.startswith(f"{len(STATEMENTS)} statements"):
            assert line in doc, (
                f"docs/published.md is stale; regenerate with `afltheory published --markdown`: {line}"
            )


@pytest.mark.slow
def test_kill_record_is_current():
    """The recorded kill-matrix column (afltheory/published/kill_record.py) is what a live kill matrix of the
    published checks gives now (quick tier, seed 0: the checks are seeded and exact or deterministic, so the
    same code gives the same matrix); ~30 s."""
    from afltheory.adversary.published_table import live_kills
    from afltheory.published.kill_record import KILLS

    assert live_kills() == KILLS, (
        "regenerate afltheory/published/kill_record.py (afltheory published --kill-matrix)"
    )
