"""paper_checks: every registered check's verdicts pass and its negative controls fail (quick tier); the CLI
writes report.md/report.html and exits 0; a fixed seed gives identical verdicts.

Checks are discovered from the registry (every plugin of the entry-point group ``afltheory.checks`` plus
``paper_checks.registry.MODULES``); a check registered with ``slow=True`` runs in the slow tier only."""

import json

import pytest

from afltheory.checks import CHECKS, Context, run_check
from paper_checks.registry import load_all

load_all()
CHECK_PARAMS = [
    pytest.param(cid, marks=[pytest.mark.slow] if spec.slow else [], id=cid) for cid, spec in CHECKS.items()
]


def _check(cid, quick_check):
    r = quick_check(cid)  # run_check(cid, "quick", 0, out), shared with the other tests of the session
    assert r["error"] is None, r["error"]
    assert r["verdicts"]
    for v in r["verdicts"]:
        nc = v["negative_control"]
        assert nc is not None, f"{v['id']} has no negative control"
        assert nc["passed"] is False, f"{v['id']}: negative control passed"
        assert v["passed"], f"{v['id']} failed: {v['notes']}"
    return r


@pytest.mark.parametrize("cid", CHECK_PARAMS)
def test_checks_pass_and_controls_fail(cid, quick_check):
    _check(cid, quick_check)


def test_registry_has_required_ids():
    assert {
        "thm1",
        "thm2",
        "thm3",
        "thm4",
        "cor1",
        "cor2",
        "cor3",
        "remark4",
        "lemmas",
        "wallclock",
        "inconsistencies",
        "yu",
    } <= set(CHECKS)


def test_context_seed_is_stable():
    assert Context(seed=3).seed_for("a", 1) == Context(seed=3).seed_for("a", 1)
    assert Context(seed=3).seed_for("a", 1) != Context(seed=4).seed_for("a", 1)
    with pytest.raises(ValueError, match="tier"):
        Context(tier="medium")


def test_cli_quick_only_writes_reports_and_exits_0(tmp_path):
    from afltheory.cli import main

    out = tmp_path / "rep"
    js = tmp_path / "v.json"
    rc = main(
        ["check", "--quick", "--only", "wallclock", "yu", "--out", str(out), "--json", str(js), "--seed", "1"]
    )
    assert rc == 0
    assert (out / "report.md").exists() and (out / "report.html").exists()
    html = (out / "report.html").read_text()
    assert "data:image/png;base64," in html
    data = json.loads(js.read_text())
    assert data["schema_version"] == 1 and data["provenance"]["seed"] == 1
    assert all(d["ok"] and d["negative_control"]["failed_as_required"] for d in data["verdicts"])


def test_cli_unknown_id_is_error(tmp_path, capsys):
    from afltheory.cli import main

    assert main(["check", "--only", "nope", "--out", str(tmp_path)]) == 2
    assert "unknown check id" in capsys.readouterr().err


def test_determinism_fixed_seed(tmp_path):
    a = run_check("thm4", "quick", 5, str(tmp_path / "a"))
    b = run_check("thm4", "quick", 5, str(tmp_path / "b"))
    strip = lambda r: [{k: v for k, v in d.items()} for d in r["verdicts"]]
    assert strip(a) == strip(b)
