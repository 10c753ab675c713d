"""afltheory.checks as a public API: frozen keyword-only verdicts, entry-point discovery, a user file run by
``afltheory verify`` (its check appears in the report), and the library never importing paper_checks."""

import dataclasses
import pathlib
import subprocess
import sys
import textwrap

import pytest

from afltheory.checks import CHECKS, NegativeControl, Verdict, load_all, load_file
from afltheory.cli import main

USER_FILE = textwrap.dedent("""
    from afltheory.checks import NegativeControl, Verdict, register

    @register("user_demo", "a user's own claim", "[User 2026, Thm 1]")
    def run(ctx):
        m, b = 1.0, 2.0
        return [Verdict(id="user_demo.bound", claim="1 <= 2", reference="[User 2026, Thm 1]", measured=m,
                        theoretical=b, passed=m <= b, relation="<=",
                        negative_control=NegativeControl(description="bound halved twice", measured=m,
                                                         theoretical=b / 4, passed=m <= b / 4))]
""")


def test_verdict_is_frozen_and_keyword_only():
    v = Verdict(id="a", claim="c", reference="r", measured=1.0, theoretical=2.0, passed=True)
    with pytest.raises(dataclasses.FrozenInstanceError):
        v.passed = False
    with pytest.raises(TypeError):
        Verdict("a", "c", "r", 1.0, 2.0, True)
    with pytest.raises(ValueError, match="relation"):
        Verdict(id="a", claim="c", reference="r", measured=1.0, theoretical=2.0, passed=True, relation="=<")
    nc = NegativeControl(description="d", passed=False)
    with pytest.raises(dataclasses.FrozenInstanceError):
        nc.passed = True
    assert v.ok and v.inside_conditions is None and v.terms is None and v.figures == ()


def test_paper_checks_found_through_entry_point():
    from importlib.metadata import entry_points

    eps = {e.name: e.value for e in entry_points(group="afltheory.checks")}
    assert eps.get("paper_checks") == "paper_checks.registry:load"
    load_all()
    assert {"thm1", "thm2", "cor2", "yu"} <= set(CHECKS)


def test_verify_user_file_writes_report(tmp_path, capsys):
    f = tmp_path / "my_claim.py"
    f.write_text(USER_FILE)
    out = tmp_path / "rep"
    assert main(["verify", str(f), "--out", str(out), "--verbose"]) == 0
    md = (out / "report.md").read_text()
    assert "user_demo.bound" in md and "afltheory verify" in md
    assert "user_demo.bound" in capsys.readouterr().out  # --verbose: the full table
    assert load_file(str(f)) == ["user_demo"]  # loading twice registers nothing new


def test_verify_file_without_checks_is_an_error(tmp_path, capsys):
    f = tmp_path / "empty.py"
    f.write_text("x = 1\n")
    assert main(["verify", str(f), "--out", str(tmp_path / "r")]) == 2
    assert "registers no check" in capsys.readouterr().err


def test_library_never_imports_paper_checks():
    root = pathlib.Path(__file__).resolve().parents[2] / "afltheory"
    hits = [str(p) for p in root.rglob("*.py") if "paper_checks" in p.read_text(encoding="utf-8")]
    assert hits == []
    code = (
        "import sys, afltheory.cli, afltheory.checks.runner; "
        "assert not any(m.startswith('paper_checks') for m in sys.modules)"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
