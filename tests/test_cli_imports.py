"""The command line starts at once (issue 41): ``afltheory --version``/``--help`` import no subcommand and
none of sympy, scipy, matplotlib; every subcommand (and sub-subcommand) still answers ``--help``; the one-line
entries of ``afltheory --help`` are the real parsers' help lines. The start-up time itself is measured by
benchmarks/cli_start.py, not asserted here."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pytest

from afltheory.cli import BUILTIN_COMMANDS, build_parser, main

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("sympy", "scipy", "matplotlib", "afltheory.checks", "afltheory.adversary", "afltheory.claims")


def _modules_after(argv: list[str]) -> tuple[int, str, list[str]]:
    """Run ``main(argv)`` in a fresh interpreter from the worktree root: (exit code, stdout, the top-level
    packages and afltheory subpackages imported by then)."""
    code = (
        "import json, sys\n"
        "from afltheory.cli import main\n"
        "try:\n"
        f"    rc = main({argv!r})\n"
        "except SystemExit as e:\n"
        "    rc = e.code\n"
        "mods = sorted({m if m.startswith('afltheory.') else m.split('.')[0] for m in sys.modules})\n"
        "print('\\nMODULES ' + json.dumps([rc, mods]))\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    out, _, tail = r.stdout.rpartition("\nMODULES ")
    rc, mods = json.loads(tail)
    return rc, out, mods


@pytest.mark.parametrize("argv", [["--version"], ["--help"], ["-h"]])
def test_version_and_help_import_nothing_heavy(argv):
    rc, out, mods = _modules_after(argv)
    assert rc == 0
    assert out.startswith("afltheory ") if argv == ["--version"] else "pep" in out and "sweep" in out
    heavy = [m for m in mods if m.split(".")[0] in HEAVY or any(m.startswith(h) for h in HEAVY)]
    assert heavy == [], heavy


@pytest.mark.parametrize("command", ["check", "verify", "pep"])
def test_a_command_help_imports_only_its_parser(command):
    """``check``/``verify --help`` build the runner's parser and the ``--mutants`` options without the
    mutation catalogue (its rules import sympy through the step-size schedules) or any check."""
    rc, out, mods = _modules_after([command, "--help"])
    assert rc == 0 and out.startswith(f"usage: afltheory {command}")
    heavy = [m for m in mods if m in ("sympy", "scipy", "matplotlib", "paper_checks")]
    heavy += [m for m in mods if m.startswith(("afltheory.mutants.catalogue", "afltheory.algorithms"))]
    assert heavy == [], heavy


def test_the_sentinel_sees_a_heavy_import():
    """The check above can fail: running a command that needs sympy shows sympy in the same listing."""
    rc, _, mods = _modules_after(["claims", "--help"])
    assert rc == 0 and "sympy" in mods and "afltheory.claims" in mods
    assert "afltheory.algorithms" in mods  # the prefix test above sees this subpackage too


def test_a_command_builds_only_its_own_parser():
    parser = build_parser(["sweep", "status", "--store", "x.sqlite"])
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    real = {name for name, p in sub.choices.items() if len(p._actions) > 0}
    assert "sweep" in real and not real & (set(BUILTIN_COMMANDS) - {"sweep"})


def test_help_lines_are_the_real_parsers():
    sub = next(a for a in build_parser(None)._actions if isinstance(a, argparse._SubParsersAction))
    real = {a.dest: a.help for a in sub._choices_actions}
    stubs = {name: hlp for name, (hlp, _) in BUILTIN_COMMANDS.items()}
    assert stubs == {n: real[n] for n in BUILTIN_COMMANDS}


def _command_paths(parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    paths = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, p in action.choices.items():
                paths.append((*prefix, name))
                paths.extend(_command_paths(p, (*prefix, name)))
    return paths


def test_every_subcommand_answers_help(capsys):
    paths = _command_paths(build_parser(None))
    assert {p[0] for p in paths} >= set(BUILTIN_COMMANDS) | {"real"}
    assert ("sweep", "run") in paths
    for path in paths:
        with pytest.raises(SystemExit) as exc:
            main([*path, "--help"])
        out = capsys.readouterr().out
        assert exc.value.code == 0, path
        assert out.startswith(f"usage: afltheory {' '.join(path)}"), (path, out[:200])


def test_bad_command_and_missing_command_are_usage_errors(capsys):
    for argv in ([], ["nosuchcommand"]):
        with pytest.raises(SystemExit) as exc:
            main(argv)
        assert exc.value.code == 2
    assert "invalid choice: 'nosuchcommand'" in capsys.readouterr().err


def _blas_env_in_child(env_extra: dict[str, str], preload_numpy: bool) -> str:
    """The OPENBLAS_NUM_THREADS a check process sees after ``main(['--version'])`` in a fresh interpreter."""
    import os

    code = (
        ("import numpy\n" if preload_numpy else "")
        + "import os\nfrom afltheory.cli import main\n"
        + "try:\n    main(['--version'])\nexcept SystemExit:\n    pass\n"
        + "print('\\nBLAS ' + os.environ.get('OPENBLAS_NUM_THREADS', '<unset>'))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"} | env_extra
    r = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=env, timeout=120
    )
    return r.stdout.rpartition("\nBLAS ")[2].strip()


def test_commands_run_blas_single_threaded_unless_the_user_says_otherwise():
    """``single_threaded_blas``: the command line sets OPENBLAS_NUM_THREADS=1 (inherited by its check
    processes); a value the user set wins; a caller that already loaded numpy keeps its threads (setting it
    then would claim an effect it cannot have)."""
    assert _blas_env_in_child({}, preload_numpy=False) == "1"
    assert _blas_env_in_child({"OPENBLAS_NUM_THREADS": "2"}, preload_numpy=False) == "2"
    assert _blas_env_in_child({}, preload_numpy=True) == "<unset>"
