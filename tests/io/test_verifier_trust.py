"""Round 4, D5-D7 and D17: a verifier that reports only what it saw. ``afltheory verify`` runs each FILE in a
child process of its own and rebuilds the verdicts from validated data; exit 0 only when every loaded check
reported and every verdict passes. A check that dies (os._exit, even with code 0), hangs past --timeout,
raises KeyboardInterrupt, returns a Verdict subclass, closes stdout or forks is handled: its own failing
verdict (or its plain rebuilt verdicts), the other checks' verdicts kept, one report."""

from __future__ import annotations

import contextlib
import io
import json
import os
import textwrap

from afltheory.checks.runner import run_check
from afltheory.checks.verdict import Verdict

HEAD = """\
import os, sys, time
from afltheory.checks import register, Verdict

def ok(cid, passed=True):
    @register(cid, "t", "none")
    def run(ctx):
        return [Verdict(id=f"{cid}.x", claim="c", reference="r", measured=1, theoretical=1, passed=passed)]
"""

FILES = {
    # D5: exit 0 from inside a check, in the middle of the file's checks
    "dies.py": HEAD
    + textwrap.dedent("""
        ok("d_before")
        @register("d_exit0", "os._exit(0)", "none")
        def a(ctx):
            os._exit(0)
        ok("d_after")
        """),
    # D5: exit 0 at import: no check ever registers
    "dies_at_import.py": HEAD + "ok('never')\nos._exit(0)\n",
    # D7: patches the Verdict class and a foreign verdict in its own process
    "patcher.py": HEAD
    + textwrap.dedent("""
        Verdict.ok = property(lambda self: True)
        ok("p_own")
        """),
    # the false claim the patcher would like to make PASS
    "false_claim.py": HEAD + "ok('f_false', passed=False)\n",
    # D17: KeyboardInterrupt, a Verdict subclass, closed stdout, a fork
    "odd.py": HEAD
    + textwrap.dedent("""
        class Mine(Verdict):
            pass

        @register("o_kbd", "raises KeyboardInterrupt", "none")
        def k(ctx):
            raise KeyboardInterrupt

        @register("o_sub", "returns a Verdict subclass", "none")
        def s(ctx):
            return [Mine(id="o_sub.x", claim="c", reference="r", measured=1, theoretical=1, passed=True)]

        @register("o_close", "closes stdout", "none")
        def c(ctx):
            sys.stdout.close()
            return [Verdict(id="o_close.x", claim="c", reference="r", measured=1, theoretical=1, passed=True)]

        @register("o_fork", "forks", "none")
        def f(ctx):
            os.fork()
            return [Verdict(id="o_fork.x", claim="c", reference="r", measured=1, theoretical=1, passed=True)]
        """),
}


def _verify(tmp_path, *argv):
    from afltheory.cli import main

    out, err = io.StringIO(), io.StringIO()
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(["verify", *argv, "--out", "rep", "--json", "v.json", "--quiet"])
    finally:
        os.chdir(old)
    doc = json.loads((tmp_path / "v.json").read_text())
    return code, {v["id"]: v for v in doc["verdicts"]}, out.getvalue(), err.getvalue()


def test_isolated_files_report_only_what_they_saw(tmp_path):
    for name, text in FILES.items():
        (tmp_path / name).write_text(text)
    code, by, out, err = _verify(tmp_path, *FILES, "--jobs", "2")
    assert code == 1 and "Traceback" not in err
    # D5: the check that exited 0 is a failure; the checks before and after it are kept and pass
    assert by["d_exit0"]["ok"] is False and "died (exit code 0)" in by["d_exit0"]["notes"]
    assert by["d_before.x"]["ok"] and by["d_after.x"]["ok"]
    assert by["file:dies_at_import.py"]["ok"] is False
    assert "ended (exit code 0) before it registered any check" in by["file:dies_at_import.py"]["notes"]
    assert "never.x" not in by
    # D7: another file's patch of Verdict.ok cannot make this false claim pass
    assert by["f_false.x"]["ok"] is False and by["f_false.x"]["passed"] is False
    assert by["p_own.x"]["ok"] is True  # its own true verdict, rebuilt here with the real Verdict.ok
    false_here = Verdict(id="z", claim="c", reference="r", measured=2, theoretical=1, passed=False)
    assert false_here.ok is False  # this process's Verdict class was never patched
    # D17
    assert by["o_kbd"]["ok"] is False and "KeyboardInterrupt" in by["o_kbd"]["notes"]
    assert by["o_sub.x"]["ok"] is True
    assert by["o_close.x"]["ok"] is True
    assert by["o_fork.x"]["ok"] is True
    assert out.count(" verdicts pass in ") == 1  # one report, not one per forked copy
    n_ok = sum(v["ok"] for v in by.values())
    assert f"{n_ok}/{len(by)} verdicts pass" in out


def test_a_hanging_check_times_out_and_the_rest_run_on(tmp_path):
    (tmp_path / "hang.py").write_text(
        HEAD
        + textwrap.dedent("""
        ok("h_first")
        @register("h_hang", "never returns", "none")
        def h(ctx):
            while True:
                time.sleep(0.05)
        ok("h_last")
        """)
    )
    code, by, out, err = _verify(tmp_path, "hang.py", "--timeout", "3")
    assert code == 1
    assert by["h_hang"]["ok"] is False and "timed out" in by["h_hang"]["notes"]
    assert by["h_first.x"]["ok"] and by["h_last.x"]["ok"]
    assert (tmp_path / "rep" / "report.md").exists()


def test_all_pass_exits_0_and_nothing_reported_is_not_a_pass(tmp_path):
    (tmp_path / "good.py").write_text(HEAD + "ok('g_one')\n")
    code, by, _, _ = _verify(tmp_path, "good.py")
    assert code == 0 and list(by) == ["g_one.x"] and by["g_one.x"]["ok"]


def test_in_process_run_check_handles_keyboardinterrupt_fork_and_subclass(tmp_path):
    """The in-process mode (`afltheory check`, trusted code) keeps these guards too."""
    from afltheory.checks.registry import CHECKS, register

    class Mine(Verdict):
        pass

    @register("ip_kbd_r4", "raises KeyboardInterrupt", "none")
    def k(ctx):
        raise KeyboardInterrupt

    @register("ip_sub_r4", "subclass", "none")
    def s(ctx):
        return [Mine(id="ip_sub_r4.x", claim="c", reference="r", measured=1, theoretical=1, passed=True)]

    @register("ip_slow_r4", "sleeps", "none")
    def z(ctx):
        import time

        time.sleep(30)
        return []

    try:
        with contextlib.redirect_stderr(io.StringIO()):
            r = run_check("ip_kbd_r4", out=str(tmp_path))
            assert r["verdicts"][0]["passed"] is False and "KeyboardInterrupt" in r["verdicts"][0]["notes"]
            r = run_check("ip_sub_r4", out=str(tmp_path))
            assert r["verdicts"][0]["ok"] is True and r["error"] is None
            r = run_check("ip_slow_r4", out=str(tmp_path), timeout=0.5)
            assert r["elapsed"] < 5 and r["verdicts"][0]["passed"] is False
            assert "timed out" in r["verdicts"][0]["claim"]
    finally:
        for i in ("ip_kbd_r4", "ip_sub_r4", "ip_slow_r4"):
            CHECKS.pop(i, None)
