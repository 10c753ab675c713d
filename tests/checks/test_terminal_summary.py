"""The terminal output a person reads (issue 43): by default one screen — the counts, then failures,
crashes, verdicts without power and skipped checks, one line per check (failures first), the report paths;
``--verbose`` the full table, in which an id is never split; the progress lines condensed."""

from __future__ import annotations

import dataclasses
import io
import json
from collections import defaultdict
from pathlib import Path

import pytest

from afltheory.checks import Verdict
from afltheory.checks.report import ProgressLines, print_summary, print_table

DATA = Path(__file__).parent / "data" / "quick_verdicts.json"


def _results() -> list[dict]:
    """The 89 stored verdicts of a real quick run, grouped into their checks (id before the first dot)."""
    by = defaultdict(list)
    for d in json.loads(DATA.read_text(encoding="utf-8"))["verdicts"]:
        by[d["id"].split(".")[0]].append(Verdict.from_dict(d))
    return [
        {"spec": {"id": c, "title": c}, "verdicts": vs, "elapsed": 1.5, "cpu": 1.0, "error": None}
        for c, vs in by.items()
    ]


def _summary(results, width=100, **meta) -> list[str]:
    buf = io.StringIO()
    n_ok = sum(v.ok for r in results for v in r["verdicts"])
    print_summary(
        results, {"n_ok": n_ok, "elapsed": 12.0, **meta}, ("r/report.md", "r/report.html"), buf, width
    )
    return buf.getvalue().splitlines()


def test_summary_of_a_real_run_fits_one_screen():
    results = _results()
    n = sum(len(r["verdicts"]) for r in results)
    lines = _summary(results)
    assert lines[0].startswith(
        f"{n}/{n} verdicts pass in {len(results)} checks (12.0 s): 0 failed, 0 crashed"
    )
    # counts, a header, one line per check, the report paths: nothing else when everything passes
    assert len(lines) == 1 + 1 + len(results) + 1 <= 60
    assert lines[-1].startswith("reports: r/report.md, r/report.html")
    for r in results:
        assert sum(ln.split()[0] == r["spec"]["id"] for ln in lines[2:-1]) == 1
    assert max(len(ln) for ln in lines[:-1]) <= 100


def test_failures_crashes_and_no_power_come_first():
    results = _results()
    failing = dataclasses.replace(results[3]["verdicts"][0], passed=False)
    results[3]["verdicts"][0] = failing
    weak = Verdict(
        id="mine.weak",
        claim="c",
        reference="r",
        measured=1.0,
        theoretical=2.0,
        passed=True,
        relation="<=",
        notes="no power: every default control still holds",
    )
    crashed = {
        "spec": {"id": "boom", "title": "t"},
        "verdicts": [],
        "elapsed": 0.1,
        "cpu": None,
        "error": "Traceback (most recent call last):\n  ...\nValueError: boom at x.py:3",
    }
    skipped = {
        "spec": {"id": "pep", "title": "t"},
        "verdicts": [],
        "elapsed": 0.0,
        "cpu": None,
        "error": None,
        "skipped": "pip install 'afltheory[pep]'",
    }
    results += [
        {"spec": {"id": "mine", "title": "m"}, "verdicts": [weak], "elapsed": 1.0, "error": None},
        crashed,
        skipped,
    ]
    lines = _summary(results, width=80)
    n = sum(len(r["verdicts"]) for r in results)
    i = next(k for k, ln in enumerate(lines) if ln.startswith("FAILED: "))  # the counts wrap at 80
    head, lines = " ".join(lines[:i]), lines[i - 1 :]
    assert head.startswith(f"{n - 1}/{n} verdicts pass") and i == 2
    assert head.endswith("1 failed, 1 crashed, 1 without power, 1 skipped")
    assert lines[1] == f"FAILED: {failing.id}" and lines[2].startswith(f"  {failing.id}  FAIL")
    assert lines[3] == "CRASHED: boom" and lines[4] == "  boom: ValueError: boom at x.py:3"
    assert lines[5] == "NO POWER (the verdict cannot fail): mine.weak"
    assert (
        " ".join(lines[6:8])
        == "SKIPPED (optional extra not installed): pep (needs: pip install 'afltheory[pep]')"
    )
    lines = lines[1:]  # the skipped line wrapped at 80 (between words)
    checks = [ln.split()[0] for ln in lines[8:-1]]
    assert checks[:2] == [results[3]["spec"]["id"], "boom"]  # the failing and the crashed check first
    assert "1 FAILED" in lines[8] and "CRASHED" in lines[9]
    assert "1/1 pass, 1 no power" in next(ln for ln in lines if ln.split()[0] == "mine")
    assert max(len(ln) for ln in lines[:-1]) <= 80


def test_id_lists_wrap_between_ids():
    vs = [
        Verdict(
            id=f"wangjoshi2018.speedup_{i}",
            claim="c",
            reference="r",
            measured=1.0,
            theoretical=2.0,
            passed=False,
        )
        for i in range(8)
    ]
    lines = _summary([{"spec": {"id": "w", "title": "t"}, "verdicts": vs, "elapsed": 1.0, "error": None}], 60)
    fail_lines = lines[
        [ln[:7] for ln in lines].index("FAILED:") : lines.index(
            next(ln for ln in lines if ln.startswith("  wangjoshi2018"))
        )
    ]
    assert len(fail_lines) > 1 and max(len(ln) for ln in fail_lines) <= 60
    words = " ".join(fail_lines).replace("FAILED: ", "").split(", ")
    assert words == [v.id for v in vs]  # every id whole


@pytest.mark.parametrize("width", [60, 80, 100])
def test_verbose_table_never_splits_an_id(width):
    long_id = "wangjoshi2018.speedup_noniid_tau"
    v = Verdict(
        id=long_id,
        claim="a claim " * 12,
        reference="r",
        measured=0.5,
        theoretical=1.0,
        passed=True,
        relation="<=",
        quantity="left side",
        tolerance="one-sided 99% t-UCB",
    )
    buf = io.StringIO()
    print_table([{"spec": {}, "verdicts": [v]}], file=buf, width=width)
    assert long_id in buf.getvalue()
    assert max(len(ln) for ln in buf.getvalue().splitlines()) <= width


def _progress(lines: list[str], tty: bool) -> str:
    buf = io.StringIO()
    p = ProgressLines(buf, tty=tty)
    for ln in lines:
        print(ln, file=p, flush=True)
    p.finish()
    return buf.getvalue()


def _lines(n: int, bad: int) -> list[str]:
    return [
        f"[{k}/{n}] c{k}: "
        + ("CRASHED" if k == bad else f"{k % 3 + 1}/{k % 3 + 1} verdicts pass")
        + " (1.0 s)"
        for k in range(1, n + 1)
    ]


def test_progress_in_a_log_keeps_every_ceil_n_over_8th_line_and_what_did_not_pass():
    out = _progress(_lines(31, bad=5) + ["a line of another shape"], tty=False).splitlines()
    # ceil(31/8) = 4: lines 4, 8, ..., 28, the last (31) and the crashed one (5)
    assert [ln.split("]")[0] for ln in out[:-1]] == [f"[{k}/31" for k in (4, 5, 8, 12, 16, 20, 24, 28, 31)]
    assert out[1] == "[5/31] c5: CRASHED (1.0 s)" and out[-1] == "a line of another shape"


def test_progress_on_a_terminal_overwrites_passing_lines():
    out = _progress(_lines(3, bad=2), tty=True)
    assert out.count("\n") == 1 and "[2/3] c2: CRASHED (1.0 s)\n" in out  # only the crash keeps its line
    assert out.count("\r\x1b[K") == 4 and out.endswith("\r\x1b[K")  # 3 lines, then the last one cleared


def test_report_html_figures_are_compressed_and_linked(tmp_path):
    import base64
    import re

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from PIL import Image

    from afltheory.checks.report import _img

    (tmp_path / "figures").mkdir()
    fig, ax = plt.subplots(figsize=(6, 3.6), dpi=100)
    for k in range(5):
        ax.semilogy(range(1, 200), [1 / (t ** (0.3 + 0.1 * k)) for t in range(1, 200)], label=f"k={k}")
    ax.legend()
    fig.savefig(tmp_path / "figures" / "f.png")
    plt.close(fig)
    raw = (tmp_path / "figures" / "f.png").read_bytes()
    tag = _img(str(tmp_path), "figures/f.png")
    assert tag.startswith('<a href="figures/f.png"><img')
    png = base64.b64decode(re.search(r"base64,([^\"]+)", tag).group(1))
    assert len(png) < 0.6 * len(raw)  # measured ~0.3 on matplotlib line plots
    with Image.open(tmp_path / "figures" / "f.png") as a, Image.open(__import__("io").BytesIO(png)) as b:
        assert a.size == b.size == (600, 360)
    assert "missing figure" in _img(str(tmp_path), "figures/none.png")
