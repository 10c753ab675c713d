"""The CLI for outsiders (issue 21, points 8-10): provenance and a versioned JSON object (also on stdout),
progress per check on stderr, verdict ids and repeated --only, bad output paths refused before the run,
--version, python -m afltheory, a self-contained report."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from afltheory.cli import main


def test_json_on_stdout_is_an_object_with_provenance(tmp_path, capsys):
    rc = main(
        ["check", "--only", "wallclock.analytic", "--out", str(tmp_path / "r"), "--json", "-", "--seed", "2"]
    )
    assert rc == 0
    cap = capsys.readouterr()
    doc = json.loads(cap.out)  # stdout holds only the JSON
    assert doc["schema_version"] == 1
    prov = doc["provenance"]
    for key in ("afltheory", "numpy", "scipy", "python", "command", "tier", "seed", "elapsed_seconds"):
        assert key in prov
    assert prov["seed"] == 2 and prov["tier"] == "quick"
    assert [v["id"] for v in doc["verdicts"]] == ["wallclock.analytic"]  # a verdict id keeps that verdict
    assert "[1/1] wallclock" in cap.err and "1/1 verdicts pass" in cap.err  # progress and summary on stderr


def test_repeated_only_and_check_ids(tmp_path, capsys):
    rc = main(
        ["check", "--only", "wallclock.analytic", "--only", "yu", "--out", str(tmp_path / "r"), "--quiet"]
        + ["--verbose"]  # the full table (the default summary has one line per check)
    )
    assert rc == 0
    out = capsys.readouterr().out
    assert "wallclock.analytic" in out and "yu.iid" in out and "wallclock.event_afl" not in out


def test_bad_outputs_are_refused_before_running(tmp_path, capsys):
    f = tmp_path / "file"
    f.write_text("x")
    assert main(["check", "--only", "yu", "--out", str(f)]) == 2
    assert "--out" in capsys.readouterr().err
    assert main(["check", "--only", "yu", "--out", str(tmp_path / "r"), "--json", str(tmp_path)]) == 2
    assert "--json" in capsys.readouterr().err
    assert main(["check", "--only", "yu.nope", "--out", str(tmp_path / "r")]) == 2
    assert "no verdict of check 'yu'" in capsys.readouterr().err


def test_report_is_self_contained(tmp_path):
    out = tmp_path / "r"
    assert main(["check", "--only", "yu", "--out", str(out), "--quiet"]) == 0
    md = (out / "report.md").read_text()
    for needle in ("## Provenance", "K̄_t", "UCB", "Theorem 2", "negative control"):
        assert needle in md, needle
    html = (out / "report.html").read_text()
    assert "<h2>Provenance</h2>" in html and "How to read this report" in html
    for outside in ("THEOREMS.md", "DESIGN.md", "../shared", "seeds/"):
        assert outside not in md.split("## yu")[0], outside


def test_version_and_module_entry(capsys):
    r = subprocess.run(
        [sys.executable, "-m", "afltheory", "--version"], capture_output=True, text=True, timeout=60
    )
    assert r.returncode == 0 and r.stdout.startswith("afltheory ")
    # the module entry is the process above; the subcommand's help is the same main() in this process
    with pytest.raises(SystemExit) as exc:
        main(["check", "--help"])
    out = capsys.readouterr().out
    assert exc.value.code == 0 and "--only" in out and "verdict ids" in out


@pytest.mark.slow
def test_unreachable_dask_scheduler_is_one_line(tmp_path, capsys):
    """An address nothing listens on (port 9, discard): a one-line error and exit 2, not a traceback
    (slow: Dask waits its 30 s connect timeout)."""
    pytest.importorskip("distributed")
    spec = tmp_path / "s.toml"
    spec.write_text((Path(__file__).resolve().parents[2] / "experiments" / "smoke.toml").read_text())
    rc = main(
        [
            "sweep",
            "run",
            str(spec),
            "--store",
            str(tmp_path / "s.sqlite"),
            "--executor",
            "dask",
            "--scheduler",
            "tcp://127.0.0.1:9",
        ]
    )
    err = capsys.readouterr().err
    assert rc == 2 and "afltheory sweep: error" in err and "Traceback" not in err
