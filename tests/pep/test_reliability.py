"""Issue 28, PEP: degenerate step sizes and unbounded sizes are refused before any solve (``--gamma 5e-324``
once printed a NaN control and "CERTIFIED"; ``--m 2**31`` bypassed the memory limit); ``--json`` is
validated before the solve and written as strict JSON (no NaN/Infinity tokens)."""

from __future__ import annotations

import json
import os

import pytest

from afltheory.cli import main
from afltheory.pep.theorems import bracket


@pytest.mark.parametrize("gamma", [5e-324, 1e-300, 1e30, float("nan"), float("inf")])
def test_degenerate_gamma_refused(gamma):
    with pytest.raises(ValueError, match="gamma"):
        bracket("thm2", m=3, K=2, T=5, tau=1, gamma=gamma)


@pytest.mark.parametrize("kw", [dict(m=2**31), dict(m=3, M=2**40), dict(m=3, T=10**9), dict(m=3, K=10**8)])
def test_sizes_bounded_before_allocation(kw):
    args = dict(K=2, T=5, tau=1) | kw
    with pytest.raises(ValueError, match="outside the allowed range"):
        bracket("thm2", **args)


@pytest.mark.parametrize("kw", [dict(sigma_G=1e308), dict(L=1e308), dict(L=1e-308), dict(delta=1e308)])
def test_extreme_constants_refused_not_overflowing(kw):
    """sigma_G = 1e308 once raised a bare OverflowError inside the SDP's constraints."""
    with pytest.raises(ValueError, match="outside the allowed range"):
        bracket("thm2", m=1, K=1, T=2, tau=0, **kw)


def test_cli_refuses_json_path_before_solving(tmp_path, capsys):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert main(["pep", "thm2", "--json", str(fifo)]) == 2
    assert "--json" in capsys.readouterr().err
    assert main(["pep", "thm2", "--gamma", "5e-324"]) == 2
    assert "degenerate" in capsys.readouterr().err


def test_cli_json_is_strict(tmp_path, capsys):
    pytest.importorskip("PEPit")
    out = tmp_path / "b.json"
    assert (
        main(
            ["pep", "thm2", "--m", "1", "--M", "2", "--T", "2", "--K", "1", "--tau", "0", "--json", str(out)]
        )
        == 0
    )
    d = json.loads(out.read_text(), parse_constant=lambda c: pytest.fail(f"non-JSON constant {c}"))
    assert d["claim"] == "thm2" and isinstance(d["bound"], float)
