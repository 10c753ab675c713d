"""Sphinx extension: docstrings shown as written (``plain_docstring``), and every docs/tutorial/*.py becomes a
page with its source and its *real* output, produced
at build time by ``python -m afltheory verify FILE --verbose`` (the same command a reader types). Pages are
written to docs/_generated/tutorial/ (not committed), found by the glob in docs/index.md, so a new tutorial
appears without editing anything. A tutorial whose run fails still gets its page, which shows the exit code
and the output: the build goes on (the failure is the tutorial's, and its page says so).

``AFLTHEORY_DOCS_RUN=0`` skips the runs (the pages then say the output was not produced in this build)."""

from __future__ import annotations

import datetime as _dt
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from sphinx.util import logging

LOG = logging.getLogger(__name__)
#: seconds one tutorial may run before its page reports a timeout
TIMEOUT = 600


def _title(src: str, stem: str) -> str:
    """The tutorial's first comment line (its citation), else its file name."""
    for line in src.splitlines():
        if line.startswith("#") and line.strip("# "):
            return line.strip("# ").rstrip(".,")
        if line.strip():
            break
    return stem


def run_tutorial(path: Path, root: Path) -> tuple[str, int | None, float]:
    """(output, exit code or None when not run / timed out, wall seconds) of ``afltheory verify path``."""
    if os.environ.get("AFLTHEORY_DOCS_RUN", "1") == "0":
        return "(not run in this build: AFLTHEORY_DOCS_RUN=0)", None, 0.0
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "COLUMNS": "110"}
    with tempfile.TemporaryDirectory() as out:
        cmd = [sys.executable, "-m", "afltheory", "verify", str(path), "--out", out, "--verbose", "--quiet"]
        t0 = time.perf_counter()
        try:
            r = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True, timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            return f"(timed out after {TIMEOUT} s)", None, time.perf_counter() - t0
        text = (r.stdout + (("\n" + r.stderr) if r.stderr.strip() else "")).replace(out, "OUT")
        return text.rstrip(), r.returncode, time.perf_counter() - t0


def page(path: Path, root: Path) -> str:
    src = path.read_text(encoding="utf-8")
    out, rc, secs = run_tutorial(path, root)
    rel = path.relative_to(root).as_posix()
    when = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    status = (
        "not run"
        if rc is None
        else "exit 0: every verdict passes"
        if rc == 0
        else f"**exit {rc}**: see below"
    )
    fence = "````"  # the output may contain ``` itself
    lines = [
        f"# {_title(src, path.stem)}",
        "",
        f"`{rel}` ({len(src.splitlines())} lines). Run it yourself: `afltheory verify {rel}`; print its",
        f"claims: `afltheory claims list --file {rel}`.",
        "",
        f"```{{literalinclude}} ../../tutorial/{path.name}",
        ":language: python",
        "```",
        "",
        "## Its real output",
        "",
        f"Produced while this site was built ({when}, {secs:.1f} s wall; {status}):",
        "",
        f"{fence}text",
        f"$ afltheory verify {rel} --verbose",
        out,
        fence,
        "",
    ]
    return "\n".join(lines)


def generate(app) -> None:
    docs = Path(app.srcdir)
    root = docs.parent
    dest = docs / "_generated" / "tutorial"
    dest.mkdir(parents=True, exist_ok=True)
    tutorials = sorted((docs / "tutorial").glob("*.py"))
    keep = {f"{p.stem}.md" for p in tutorials}
    for old in dest.glob("*.md"):  # a tutorial that was removed loses its page
        if old.name not in keep:
            old.unlink()
    for p in tutorials:
        text = page(p, root)
        target = dest / f"{p.stem}.md"
        if not target.exists() or target.read_text(encoding="utf-8") != text:
            target.write_text(text, encoding="utf-8")
        m = re.search(r"Produced while this site was built \(.*?; (.*?)\):", text)
        LOG.info(f"tutorial {p.name}: {m.group(1) if m else '?'}")


_ESCAPE = re.compile(r"([\\`*|_])")


def plain_docstring(app, what, name, obj, options, lines: list[str]) -> None:
    """``autodoc-process-docstring``: a docstring as written — its first paragraph as escaped text (the
    summary autosummary shows), the rest as a literal block (formulas, tables and code keep their layout)."""
    if not lines:
        return
    end = next((i for i, ln in enumerate(lines) if not ln.strip()), len(lines))
    head = " ".join(ln.strip() for ln in lines[:end])
    rest = lines[end:]
    while rest and not rest[0].strip():
        rest = rest[1:]
    new = [_ESCAPE.sub(r"\\\1", head), ""]
    if rest:
        new += ["::", ""] + [("    " + ln) if ln.strip() else "" for ln in rest] + [""]
    lines[:] = new


def setup(app):
    app.connect("builder-inited", generate)
    app.connect("autodoc-process-docstring", plain_docstring)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
