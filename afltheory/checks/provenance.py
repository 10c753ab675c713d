"""Provenance of a check run: what produced a report (package version, git commit if any, library versions,
Python and platform, command line, seed, tier, elapsed time). Written into report.md/html and the JSON."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from collections.abc import Sequence
from importlib import metadata

__all__ = ["provenance", "SCHEMA_VERSION"]

#: version of the JSON written by ``afltheory check --json`` (an object: schema_version, provenance, verdicts)
SCHEMA_VERSION = 1


def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def _git_commit() -> str | None:
    """The commit of the afltheory source tree when it is a git checkout (None otherwise)."""
    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    if not os.path.exists(os.path.join(here, ".git")):
        return None
    try:
        r = subprocess.run(
            ["git", "-C", here, "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5
        )
        dirty = subprocess.run(
            ["git", "-C", here, "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=5,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if r.returncode != 0:
        return None
    return r.stdout.strip() + ("+dirty" if dirty.returncode == 0 and dirty.stdout.strip() else "")


def provenance(
    *, tier: str, seed: int, elapsed: float | None = None, argv: Sequence[str] | None = None
) -> dict:
    """A JSON-able dict describing this run."""
    return {
        "afltheory": _version("afltheory"),
        "git_commit": _git_commit(),
        "numpy": _version("numpy"),
        "scipy": _version("scipy"),
        "sympy": _version("sympy"),
        "matplotlib": _version("matplotlib"),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "command": " ".join(["afltheory"] + list(sys.argv[1:] if argv is None else argv)),
        "tier": tier,
        "seed": seed,
        "elapsed_seconds": None if elapsed is None else round(float(elapsed), 2),
    }
