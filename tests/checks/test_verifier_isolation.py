"""The verifier cannot be fooled: every check runs isolated (sys.exit, exceptions, garbage or empty returns
are that check's failure, with type, message and file:line; the others still run), a user file with a
syntax error is that file's failure, Verdict validation is deep, verdict JSON is read strictly, and a check
whose optional extra is missing is SKIPPED with the install hint (exit 0). The CLI runs in subprocesses so
the test checks never enter this process's registry."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from afltheory.checks.verdict import NegativeControl, Verdict, verdicts_from_json

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

FOOL = textwrap.dedent("""
    import sys
    from afltheory.checks import register, Verdict

    @register("exits", "calls sys.exit", "none")
    def a(ctx):
        sys.exit(0)

    @register("empty", "returns []", "none")
    def b(ctx):
        return []

    @register("garbage", "returns garbage", "none")
    def c(ctx):
        return [1, 2]

    @register("notalist", "returns a dict", "none")
    def c2(ctx):
        return {"passed": True}

    @register("raises", "raises", "none")
    def d(ctx):
        raise KeyError("boom")

    @register("nanpass", "passed=nan", "none")
    def e(ctx):
        return [Verdict(id="nanpass.x", claim="c", reference="r", measured=1, theoretical=1,
                        passed=float("nan"))]

    @register("good", "good", "none")
    def f(ctx):
        return [Verdict(id="good.x", claim="c", reference="r", measured=1, theoretical=1, passed=True)]
""")


def _cli(args, cwd, pre=""):
    code = f"import sys\n{pre}\nfrom afltheory.cli import main\nsys.exit(main(sys.argv[1:]))"
    env = dict(os.environ, PYTHONPATH=ROOT, OPENBLAS_NUM_THREADS="1")
    return subprocess.run(
        [sys.executable, "-c", code, *args], cwd=cwd, capture_output=True, text=True, timeout=300, env=env
    )


def test_each_check_isolated_and_syntax_error_file(tmp_path):
    (tmp_path / "fool.py").write_text(FOOL)
    (tmp_path / "syn.py").write_text("def broken(:\n")
    r = _cli(["verify", "fool.py", "syn.py", "--out", "rep", "--json", "v.json"], tmp_path)
    assert r.returncode == 1, r.stderr
    assert "Traceback" not in r.stderr
    doc = json.loads((tmp_path / "v.json").read_text())
    by = {v["id"]: v for v in doc["verdicts"]}
    assert by["good.x"]["ok"] is True  # the good check still ran after sys.exit in another
    for cid in ("exits", "empty", "garbage", "notalist", "raises", "nanpass", "file:syn.py"):
        assert by[cid]["passed"] is False, cid
    fool = str(tmp_path / "fool.py")
    assert f"SystemExit: the check called sys.exit(0) (at {fool}:7)" in r.stderr
    assert f"KeyError: 'boom' (at {fool}:23)" in r.stderr
    assert "no verdict" in by["empty"]["notes"] and f"{fool}:9" in by["empty"]["notes"]
    assert "TypeError" in by["garbage"]["notes"] and f"{fool}:13" in by["garbage"]["notes"]
    assert "passed=nan" in by["nanpass"]["notes"]
    assert f"SyntaxError: invalid syntax (at {tmp_path / 'syn.py'}:1)" in r.stderr


def test_missing_optional_extra_is_skipped_with_hint(tmp_path):
    """PEPit blocked (sys.modules['PEPit'] = None): the pep check is SKIPPED with the install hint in the
    table and the JSON, thm1 still runs, exit 0."""
    r = _cli(
        ["check", "--quick", "--only", "pep", "--only", "thm1", "--out", "rep", "--json", "c.json"],
        tmp_path,
        pre="sys.modules['PEPit'] = None",
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert "SKIPPED (needs: pip install 'afltheory[pep]')" in r.stdout
    doc = json.loads((tmp_path / "c.json").read_text())
    assert doc["skipped"] == [{"id": "pep", "status": "SKIPPED", "needs": "pip install 'afltheory[pep]'"}]
    assert doc["summary"]["skipped"] == 1 and {v["id"].split(".")[0] for v in doc["verdicts"]} == {"thm1"}
    for name in ("report.md", "report.html"):  # the reports say it too
        assert "SKIPPED" in (tmp_path / "rep" / name).read_text()


def _main(args, cwd, monkeypatch, capsys):
    """``afltheory.cli.main(args)`` in this process, in ``cwd``: (exit code, stderr)."""
    from afltheory.cli import main

    monkeypatch.chdir(cwd)
    capsys.readouterr()
    try:
        code = main(args)
    except SystemExit as exc:
        code = exc.code
    return code, capsys.readouterr().err


def test_unknown_only_and_bad_json_refused_before_running(tmp_path, monkeypatch, capsys):
    (tmp_path / "fool.py").write_text(FOOL + "\nopen('ran', 'w').close()\n")
    r = _cli(["verify", "fool.py", "--only", "nosuch", "--out", "rep"], tmp_path)
    assert r.returncode == 2 and "--only: unknown check id" in r.stderr and "Traceback" not in r.stderr
    os.mkfifo(tmp_path / "fifo")
    r = _cli(["verify", "fool.py", "--json", "fifo", "--out", "rep"], tmp_path)
    assert r.returncode == 2 and "--json 'fifo' is a FIFO" in r.stderr
    assert not (tmp_path / "ran").exists() or r.returncode == 2
    # `check` loads no user file (nothing enters this process's registry): run in process
    code, err = _main(["check", "--mutants", "--json", "fifo", "--out", "rep"], tmp_path, monkeypatch, capsys)
    assert code == 2 and "--json 'fifo' is a FIFO" in err
    code, err = _main(
        ["check", "--only", "thm1", "--only", "nosuch", "--out", "rep"], tmp_path, monkeypatch, capsys
    )
    assert code == 2 and "--only: unknown check id" in err and "[1/" not in err


def _v(**kw):
    base = dict(id="x.y", claim="c", reference="r", measured=1.0, theoretical=2.0, passed=True)
    base.update(kw)
    return Verdict(**base)


NAN = float("nan")


@pytest.mark.parametrize(
    "kw",
    [
        {"passed": NAN},
        {"passed": "false"},
        {"passed": 1},
        {"inside_conditions": NAN},
        {"measured": {"a": [1.0, NAN]}},
        {"theoretical": complex(NAN, 0)},
        {"measured": 1 + 2j},
        {"measured": np.array([1.0, np.nan])},
        {"ci": (0.0, NAN)},
        {"tolerance": NAN},
        {"tolerance": float("inf")},
        {"terms": {"transient": NAN}},
        {"terms": {"transient": float("inf")}},
        {"details": {"k": {"z": NAN}}},
        {"slack": NAN},
        {"figures": "a.png"},
        {"id": 3},
        {"measured": np.complex128(1)},
        {"details": {NAN: 1}},
    ],
)
def test_deep_validation_refuses(kw):
    with pytest.raises((TypeError, ValueError)):
        _v(**kw)


def test_negative_control_flag_must_be_bool():
    with pytest.raises(ValueError, match="NaN"):
        NegativeControl(description="d", measured={"a": NAN})
    with pytest.raises(TypeError):
        NegativeControl(description="d", passed=NAN)
    with pytest.raises(TypeError):
        NegativeControl(description="d", passed="false")


def test_divergence_as_inf_still_allowed_and_roundtrips():
    v = _v(
        measured=float("inf"),
        passed=np.bool_(False),
        ci=(None, float("inf")),
        negative_control=NegativeControl(description="d", measured=float("inf"), passed=np.bool_(False)),
    )
    assert v.passed is False and Verdict.from_dict(v.to_dict()) == v
    assert verdicts_from_json(json.dumps([v.to_dict()])) == [v]


@pytest.mark.parametrize(
    "patch",
    [
        {"passed": "false"},
        {"passed": "true"},
        {"passed": 0},
        {"ok": "true"},
        {"ok": False},
        {"measured": "nan"},
        {"bogus": 1},
        {"inside_conditions": "no"},
        {"figures": "a.png"},
    ],
)
def test_verdict_json_read_strictly(patch):
    d = _v().to_dict()
    d.update(patch)
    with pytest.raises(ValueError):
        verdicts_from_json(json.dumps([d]))


def test_verdict_json_missing_field_and_tampered_control():
    d = _v(negative_control=NegativeControl(description="d", passed=False)).to_dict()
    del d["passed"]
    with pytest.raises(ValueError, match="passed"):
        verdicts_from_json(json.dumps([d]))
    d = _v(negative_control=NegativeControl(description="d", passed=False)).to_dict()
    d["negative_control"]["passed"] = "false"
    with pytest.raises(ValueError):
        verdicts_from_json(json.dumps([d]))


KILLER = textwrap.dedent("""
    import os
    from afltheory.checks import register, Verdict

    @register("kz_dies", "kills its process", "none")
    def a(ctx):
        os._exit(9)

    def good(cid):
        @register(cid, "good", "none")
        def run(ctx):
            return [Verdict(id=f"{cid}.x", claim="c", reference="r", measured=1, theoretical=1, passed=True)]

    for k in range(4):
        good(f"kz_good{k}")
""")


def test_a_check_that_kills_its_worker_fails_alone_under_jobs(tmp_path):
    """--jobs 2: os._exit in one check breaks the process pool; every other check is rerun alone and passes,
    only the killer is reported crashed."""
    (tmp_path / "killer.py").write_text(KILLER)
    r = _cli(["verify", "killer.py", "--jobs", "2", "--out", "rep", "--json", "k.json", "--quiet"], tmp_path)
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    by = {v["id"]: v for v in json.loads((tmp_path / "k.json").read_text())["verdicts"]}
    assert by["kz_dies"]["passed"] is False and "died" in by["kz_dies"]["notes"]
    assert all(by[f"kz_good{k}.x"]["ok"] for k in range(4))


def test_no_empty_figures_directory_left(tmp_path):
    """A run whose checks write no figure leaves no empty ``figures/`` in ``--out`` (it always did); a
    figure a check writes keeps the directory."""
    good = FOOL[FOOL.index('@register("good"') :]
    (tmp_path / "good.py").write_text("from afltheory.checks import register, Verdict\n\n" + good)
    r = _cli(["verify", "good.py", "--out", "rep", "--quiet"], tmp_path)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "rep" / "report.md").is_file()
    assert not (tmp_path / "rep" / "figures").exists()
    from afltheory.checks.runner import _drop_empty_dir

    (tmp_path / "kept").mkdir()
    (tmp_path / "kept" / "f.png").write_bytes(b"x")
    _drop_empty_dir(str(tmp_path / "kept"))
    _drop_empty_dir(str(tmp_path / "missing"))  # absent: nothing to do, no error
    assert (tmp_path / "kept" / "f.png").is_file()
