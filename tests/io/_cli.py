"""``afltheory ARGV`` in the test process (no interpreter start per call): exit code, stdout, stderr."""

from __future__ import annotations

import contextlib
import io
import os
import subprocess


def cli(*argv, cwd) -> subprocess.CompletedProcess:
    """Run ``afltheory ARGV`` in ``cwd``; argparse's SystemExit becomes the exit code."""
    from afltheory.cli import main

    out, err = io.StringIO(), io.StringIO()
    old = os.getcwd()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main([str(a) for a in argv])
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else 1
    finally:
        os.chdir(old)
    return subprocess.CompletedProcess(argv, code, out.getvalue(), err.getvalue())


def one_line_error(r: subprocess.CompletedProcess) -> bool:
    """A refusal: exit 2, no traceback, the reason on the last stderr line, nothing on stdout."""
    return r.returncode == 2 and "Traceback" not in r.stderr and "error" in r.stderr.strip().splitlines()[-1]
