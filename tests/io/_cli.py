"""One in-process runner of ``afltheory ARGV`` for the tests (``cli``), and the CLI fuzz driver built on it.

``cli(*argv, cwd=...)`` runs ``afltheory.cli.main`` in the test process (no interpreter start per call) and
returns the exit code, stdout and stderr (argparse's SystemExit becomes the exit code); ``invoke`` is the
same call with an alarm and every escape caught, as the fuzz driver needs.

The CLI fuzz driver (issues 28, 42) runs as ``python tests/io/_cli.py WORKDIR N SEED [HOSTILE_SHARE]`` in a
fresh process (user check files register into the process's registry, so never inside the test process;
tests/fuzz/test_cli_fuzz.py starts it). It builds, inside WORKDIR only, every kind of output path a careless
or hostile user might give — a new file, an existing regular file, a directory, private character devices
with the numbers of the null and full devices (made with mknod here, never under /dev), a FIFO, a socket, a
dangling symlink, a symlink to a device, a path under a missing directory or under a regular file, '-' and
'' — plus crafted inputs (a user check file that calls sys.exit, returns garbage or has a syntax error;
specs, stores, instance files), then runs N argument lists drawn with ``random.Random(SEED)`` over every
subcommand through ``invoke``, each under a 60 s alarm. It prints one JSON object: per call the argv, the
exit code, whether it raised (a traceback), hung, printed "Traceback"/"nan", or — refused with exit 2 — left
anything new in WORKDIR; the state of every special file before/after (inode, mode, device numbers), the
inputs that changed, and any stray temporary or ``.corrupt-`` file.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import random
import signal
import socket
import stat
import subprocess
import sys
import textwrap
import time
import traceback


def cli(*argv, cwd) -> subprocess.CompletedProcess:
    """Run ``afltheory ARGV`` in ``cwd``; argparse's SystemExit becomes the exit code (any other exception
    propagates: a test shows its traceback)."""
    r = invoke([str(a) for a in argv], cwd=cwd, catch=False)
    return subprocess.CompletedProcess(argv, r["code"], r["stdout"], r["stderr"])


def one_line_error(r: subprocess.CompletedProcess) -> bool:
    """A refusal: exit 2, no traceback, the reason on the last stderr line, nothing on stdout."""
    return r.returncode == 2 and "Traceback" not in r.stderr and "error" in r.stderr.strip().splitlines()[-1]


class Hang(Exception):
    """A call ran past its alarm."""


def _alarm(signum, frame):
    raise Hang()


def invoke(argv: list[str], *, cwd=None, alarm: int = 0, catch: bool = True) -> dict:
    """``afltheory.cli.main(argv)`` with stdout/stderr captured (in ``cwd`` when given) under an ``alarm``
    of that many seconds (0: none): {"code", "stdout", "stderr", "raised", "hang"}. With ``catch`` an escaping
    exception is recorded as its traceback text in "raised" (the user would see it) instead of propagating."""
    from afltheory.cli import main

    rec = {"code": None, "raised": None, "hang": False}
    out, err = io.StringIO(), io.StringIO()
    old = os.getcwd()
    if cwd is not None:
        os.chdir(cwd)
    if alarm:
        signal.signal(signal.SIGALRM, _alarm)
        signal.alarm(alarm)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                rec["code"] = main(argv)
            except SystemExit as exc:  # argparse: usage errors exit 2, --help 0
                rec["code"] = exc.code if isinstance(exc.code, int) else 2
    except Hang:
        if not catch:
            raise
        rec["hang"] = True
    except BaseException as exc:  # noqa: BLE001 - any escape is a traceback the user would see
        if not catch:
            raise
        rec["raised"] = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))[-3000:]
    finally:
        if alarm:
            signal.alarm(0)
        os.chdir(old)
    rec["stdout"], rec["stderr"] = out.getvalue(), err.getvalue()
    return rec


# -- the CLI fuzz driver ---------------------------------------------------------------------------------

SPEC = textwrap.dedent("""\
    name = "fz"
    rounds = 6
    replicates = 2
    seeds = [0]
    checkpoints = 3

    [problem]
    family = "HeterogeneousQuadratic"
    dim = 2
    num_workers = 3
    L = 1.0
    mu = 0.1
    sigma_L = 0.1
    sigma_G = 0.5

    [behaviour.arrivals]
    kind = "UniformArrivals"
    m = 2

    [behaviour.delays]
    kind = "UniformDelay"
    max_delay = 1

    [behaviour.local_steps]
    kind = "ConstantSteps"
    K = 1

    [algorithm]
    name = "AFACD"
    eta = 1.0
    eta_L = 0.05

    [grid]
    "algorithm.eta_L" = [0.02, 0.1]
    """)

USER_CHECKS = textwrap.dedent("""\
    import sys
    from afltheory.checks import Verdict, register

    @register("fz_exit", "calls sys.exit", "none")
    def a(ctx):
        sys.exit(0)

    @register("fz_empty", "returns []", "none")
    def b(ctx):
        return []

    @register("fz_garbage", "returns garbage", "none")
    def c(ctx):
        return [float("nan")]

    @register("fz_good", "a good check", "none")
    def d(ctx):
        return [Verdict(id="fz_good.x", claim="c", reference="r", measured=1.0, theoretical=1.0, passed=True)]
    """)


def make_paths(w: str) -> tuple[dict, list]:
    """Output path kinds (name -> path) and the special files whose state must not change."""
    P = {}
    special = []

    def node(name, kind, dev=None):
        p = os.path.join(w, name)
        try:
            if kind == "fifo":
                os.mkfifo(p)
            elif kind == "chr":
                os.mknod(p, 0o666 | stat.S_IFCHR, os.makedev(*dev))
            elif kind == "sock":
                s = socket.socket(socket.AF_UNIX)
                s.bind(p)
                node.socks.append(s)
        except OSError:
            return None
        special.append(p)
        return p

    node.socks = []
    P["new"] = os.path.join(w, "out", "new.json")
    os.makedirs(os.path.join(w, "out"), exist_ok=True)
    P["regular"] = os.path.join(w, "out", "existing.txt")
    with open(P["regular"], "w") as fh:
        fh.write("keep?\n")
    P["dir"] = os.path.join(w, "out")
    for name, kind, dev in (
        ("null", "chr", (1, 3)),
        ("full", "chr", (1, 7)),
        ("fifo", "fifo", None),
        ("sock", "sock", None),
    ):
        p = node(name, kind, dev)
        if p is not None:
            P[name] = p
    P["dangling"] = os.path.join(w, "dangling")
    os.symlink(os.path.join(w, "nowhere", "x"), P["dangling"])
    if "null" in P:
        P["link_to_dev"] = os.path.join(w, "link_to_dev")
        os.symlink(P["null"], P["link_to_dev"])
        special.append(P["link_to_dev"])
    P["missing_dir"] = os.path.join(w, "no", "such", "x.json")
    P["under_file"] = os.path.join(P["regular"], "x.json")
    P["stdout"] = "-"
    P["empty"] = ""
    return P, special


def snapshot(paths: list) -> dict:
    out = {}
    for p in paths:
        st = os.lstat(p)
        out[p] = [st.st_ino, st.st_mode, st.st_rdev, os.readlink(p) if os.path.islink(p) else None]
    return out


def argv_for(rng: random.Random, P: dict, F: dict) -> list[str]:
    """One argument list for a random subcommand (cheap configurations: every call stays short)."""
    out = lambda: P[rng.choice(sorted(P))]  # noqa: E731
    cmd = rng.choice(
        [
            "check",
            "verify",
            "sweep run",
            "sweep export",
            "sweep status",
            "sweep copy",
            "sweep plot",
            "adversary",
            "pep",
        ]
    )
    if cmd == "check":
        a = ["check", "--quick", "--quiet", "--only", rng.choice(["thm1", "nosuch", "thm1.only_worker1"])]
        a += ["--out", out()] if rng.random() < 0.7 else ["--out", P["dir"]]
        return a + (["--json", out()] if rng.random() < 0.8 else [])
    if cmd == "verify":
        a = [
            "verify",
            rng.choice(
                [F["checks"], F["syntax"], F["checks"], P["dir"], P.get("fifo", F["syntax"]), F["missing"]]
            ),
            "--quiet",
        ]
        if rng.random() < 0.3:
            a.append(F["syntax"])
        a += ["--out", rng.choice([out(), P["dir"]])]
        return a + (["--json", out()] if rng.random() < 0.8 else [])
    if cmd == "sweep run":
        return [
            "sweep",
            "run",
            rng.choice([F["spec"], F["spec"], F["badspec"], P.get("fifo", F["badspec"])]),
            "--store",
            rng.choice([out(), F["store_new"]]),
            "--task",
            "synthetic",
            "--progress",
            "none",
        ]
    if cmd == "sweep export":
        return ["sweep", "export", "--store", rng.choice([F["store"], out()]), "--csv", out()]
    if cmd == "sweep status":
        return ["sweep", "status", "--store", rng.choice([F["store"], out()])] + (
            ["--json"] if rng.random() < 0.5 else []
        )
    if cmd == "sweep copy":
        return ["sweep", "copy", "--store", rng.choice([F["store"], out()]), "--to", out()]
    if cmd == "sweep plot":
        return ["sweep", "plot", "--store", F["store"], "--out", out()]
    if cmd == "adversary":
        a = [
            "adversary",
            rng.choice(["thm2", "cor1", "nosuch"]),
            "--budget",
            rng.choice(["8", "16", "0", "-3", "2.5"]),
            "--replicates",
            "4",
        ]
        if rng.random() < 0.3:
            a += ["--K-max", rng.choice(["64", "1", "0"]), "--rounds", rng.choice(["20", "3", "2.7"])]
        if rng.random() < 0.7:
            a += ["--json", out()]
        if rng.random() < 0.3:
            a += ["--out", out()]
        return a
    a = [
        "pep",
        rng.choice(["thm2", "thm4"]),
        "--T",
        rng.choice(["1", "2"]),
        "--m",
        rng.choice(["1", "2"]),
        "--K",
        "1",
        "--tau",
        rng.choice(["0", "1"]),
    ]
    a += ["--gamma", rng.choice(["5e-324", "1e30", "nan", "-1", "0.1"])]
    if rng.random() < 0.2:
        a[a.index("--m") + 1] = str(2**31)
    return a + (["--json", out()] if rng.random() < 0.8 else [])


#: integers no option accepts (seed 2**64, 10**23 jobs/seeds/budgets, negative counts)
def pep_tiny(search: str, *extra: str) -> list[str]:
    """The smallest ``afltheory pep thm2`` search (m = K = 1, T = 2, τ = 0) with ``--search search``, then
    ``extra`` (the journal / JSON paths under test)."""
    return ["pep", "thm2", "--m", "1", "--K", "1", "--T", "2", "--tau", "0", "--search", search, *extra]


HUGE = [str(2**64), str(10**23), "-1", "1e23", "nan"]


def hostile_argv(rng: random.Random, P: dict, F: dict) -> list[str]:
    """One argument list of the round-4 classes (issue 42) that must be refused (exit != 0, one line):
    an output that is an input (the store, a symlink to it, its -wal, the spec, a journal), a journal over a
    file that is not one, --journal x --json x, a bad --file for every CLAIM, claims --file on broken
    files, an out-of-range integer or NaN, an empty output path, a huge search without --allow-large,
    `verify` of a check file whose check calls os._exit(0), '-' where no stdin/stdout is meant, and a refusal
    naming outputs under missing directories (none may be created)."""
    kind = rng.choice(
        [
            "overlap",
            "journal",
            "same_json",
            "file",
            "claims",
            "numbers",
            "empty",
            "large",
            "dies",
            "nostore",
            "dash",
            "leftover",
        ]
    )
    store_alias = rng.choice(
        [F["store"], F["store_link"], F["store"] + "-wal", os.path.join(w_of(F), "st", ".", "s.sqlite")]
    )
    if kind == "overlap":
        return rng.choice(
            [
                ["sweep", "export", "--store", F["store"], "--csv", store_alias],
                ["sweep", "plot", "--store", F["store"], "--out", store_alias],
                ["sweep", "copy", "--store", F["store"], "--to", store_alias],
                [
                    "sweep",
                    "run",
                    F["spec"],
                    "--store",
                    F["spec"],
                    "--task",
                    "synthetic",
                    "--progress",
                    "none",
                ],
                ["adversary", "thm2", "--budget", "4", "--file", F["claimfile"], "--json", F["claimfile"]],
            ]
        )
    if kind == "journal":
        j = rng.choice([F["notes"], F["notes_link"], F["spec"]])
        return rng.choice(
            [
                ["adversary", rng.choice(["thm2", "lemma2"]), "--budget", "4", "--journal", j],
                ["adversary", "thm2", "--budget", "4", "--seeds", "2", "--journal", F["notes_base"]],
                pep_tiny("exhaustive", "--journal", j),
            ]
        )
    if kind == "same_json":
        x = os.path.join(w_of(F), "out", f"same{rng.randrange(10**6)}.json")
        return rng.choice(
            [
                ["adversary", "thm2", "--budget", "4", "--journal", x, "--json", x],
                pep_tiny("beam", "--journal", x, "--json", x),
            ]
        )
    if kind == "file":
        f = rng.choice(
            [
                F["missing"],
                P["dir"],
                P.get("fifo", F["missing"]),
                P.get("null", F["syntax"]),
                F["syntax"],
                F["exits"],
                F["nul"],
                F["latin"],
                F["plain"],
            ]
        )
        return ["adversary", rng.choice(["thm2", "cor1", "lemma2", "drift"]), "--budget", "4", "--file", f]
    if kind == "claims":
        f = rng.choice(
            [
                F["missing"],
                P["dir"],
                P.get("fifo", F["missing"]),
                F["syntax"],
                F["exits"],
                F["nul"],
                F["latin"],
                F["nobound"],
                "-",
                "",
            ]
        )
        return ["claims", rng.choice(["list", "markdown"]), "--file", f]
    if kind == "numbers":
        v = rng.choice(HUGE)
        return rng.choice(
            [
                [
                    "adversary",
                    "thm2",
                    rng.choice(["--seed", "--seeds", "--jobs", "--budget", "--replicates"]),
                    v,
                ],
                ["pep", "thm2", rng.choice(["--T", "--m", "--jobs", "--tau"]), v if v != "nan" else "-1"],
                [
                    "check",
                    "--quiet",
                    "--only",
                    "thm1",
                    "--out",
                    P["dir"],
                    rng.choice(["--seed", "--jobs"]),
                    v,
                ],
                ["sweep", "run", F["spec"], "--store", F["store_new"], "--jobs", v],
                ["real", "wallclock", rng.choice(["--threads", "--seed", "--seeds", "--rounds"]), v],
                ["real", "wallclock", "--target", rng.choice(["nan", "2", "0", "-0.5", "inf"])],
                ["adversary", "thm2", "--budget", "4", "--seed", v],
            ]
        )
    if kind == "empty":
        return rng.choice(
            [
                ["adversary", "thm2", "--budget", "4", rng.choice(["--json", "--out", "--journal"]), ""],
                ["pep", "thm2", "--T", "2", "--json", ""],
                ["check", "--quiet", "--only", "thm1", "--out", P["dir"], "--json", ""],
                ["sweep", "export", "--store", F["store"], "--csv", rng.choice(["", "-"])],
                ["sweep", "plot", "--store", F["store"], "--out", rng.choice(["", "-"])],
            ]
        )
    if kind == "large":
        return [
            "pep",
            "thm2",
            "--m",
            "1",
            "--K",
            "1",
            "--T",
            rng.choice(["40", "60"]),
            "--tau",
            "3",
            "--search",
            rng.choice(["exhaustive", "beam"]),
            "--beam",
            "1000",
        ]
    if kind == "dash":  # '-' is stdout only where documented (check/verify --json): elsewhere one line
        return rng.choice(
            [
                ["adversary", "thm2", "--budget", "4", "--file", "-"],
                ["adversary", "thm2", "--budget", "4", "--out", "-"],
                ["claims", "list", "--file", "-"],
                ["sweep", "status", "--store", "-"],
                ["sweep", "export", "--store", "-", "--csv", P["new"]],
                ["sweep", "run", "-", "--store", F["store_new"]],
                ["sweep", "fit", "--store", "-", "--x", "algorithm.eta_L"],
                ["verify", "-", "--quiet", "--out", P["dir"]],
                ["check", "--quiet", "--only", "thm1", "--out", "-"],
                ["pep", "thm2", "--T", "2", "--search", "beam", "--journal", "-"],
                ["real", "wallclock", "--out", "-"],
                ["real", "wallclock", "--data-dir", "-"],
            ]
        )
    if kind == "leftover":  # refused after naming outputs under missing directories: none may be made
        lo = os.path.join(w_of(F), "lo", str(rng.randrange(10**6)))
        return rng.choice(
            [
                ["adversary", "nosuch", "--budget", "4", "--json", os.path.join(lo, "a", "x.json")],
                ["adversary", "thm2", "--budget", "0", "--out", os.path.join(lo, "figs")],
                ["check", "--quiet", "--only", "nosuch", "--out", os.path.join(lo, "rep")],
                ["check", "--quiet", "--only", "thm1", "--json", "", "--out", os.path.join(lo, "rep")],
                ["verify", F["missing"], "--quiet", "--out", os.path.join(lo, "rep")],
                ["pep", "thm2", "--T", "2", "--gamma", "nan", "--json", os.path.join(lo, "p.json")],
                ["real", "wallclock", "--target", "2", "--out", os.path.join(lo, "real")],
            ]
        )
    if kind == "nostore":
        return ["sweep", rng.choice(["status", "export"]), "--store", F["foreign"], "--csv", P["new"]][
            : 4 if rng.random() < 0.5 else 6
        ]
    return ["verify", F["dies"], "--quiet", "--out", P["dir"], "--timeout", "60"]


def _entries(w: str) -> set[str]:
    """Every path under ``w`` (files, directories, links), symlinks not followed."""
    out = set()
    for root, dirs, files in os.walk(w):
        out.update(os.path.join(root, x) for x in dirs + files)
    return out


def w_of(F: dict) -> str:
    return os.path.dirname(F["spec"])


def _digest(path: str) -> str | None:
    import hashlib

    try:
        with open(path, "rb") as fh:
            return hashlib.sha256(fh.read()).hexdigest()
    except OSError:
        return None


def main() -> int:
    w, n, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    hostile_share = float(sys.argv[4]) if len(sys.argv) > 4 else 0.0
    os.chdir(w)
    P, special = make_paths(w)
    F = {
        "spec": os.path.join(w, "fz.toml"),
        "badspec": os.path.join(w, "bad.toml"),
        "checks": os.path.join(w, "user_checks.py"),
        "syntax": os.path.join(w, "syntax.py"),
        "missing": os.path.join(w, "missing.py"),
        "store": os.path.join(w, "st", "s.sqlite"),
        "store_new": os.path.join(w, "st", "new.sqlite"),
        "store_link": os.path.join(w, "st", "alias.csv"),
        "notes": os.path.join(w, "notes.txt"),
        "notes_link": os.path.join(w, "notes_link.txt"),
        "notes_base": os.path.join(w, "nb"),
        "claimfile": os.path.join(w, "claim_file.py"),
        "exits": os.path.join(w, "exits.py"),
        "nul": os.path.join(w, "nul.py"),
        "latin": os.path.join(w, "latin.py"),
        "nobound": os.path.join(w, "nobound.py"),
        "plain": os.path.join(w, "plain.py"),
        "dies": os.path.join(w, "dies.py"),
        "foreign": os.path.join(w, "foreign.db"),
    }
    for key, data in (
        ("notes", b"my notes: not a journal\n"),
        ("notes_base", b""),
        ("claimfile", b"x = 1\n"),
        ("exits", b"import sys\nsys.exit(0)\n"),
        ("nul", b"x = 1\x00\n"),
        ("latin", b'x = "\xff"\n'),
        ("nobound", b'from afltheory.claims import Claim\nc = Claim(id="zz", title="t")\n'),
        ("plain", b"x = 1\n"),
        (
            "dies",
            USER_CHECKS.split("@register")[0].encode()
            + b'@register("fz_dies", "os._exit(0)", "none")\ndef z(ctx):\n    import os\n    os._exit(0)\n',
        ),
    ):
        with open(F[key], "wb") as fh:
            fh.write(data)
    with open(F["notes_base"] + ".seed0", "wb") as fh:
        fh.write(b"not a journal either\n")
    os.symlink(F["notes"], F["notes_link"])
    import sqlite3

    con = sqlite3.connect(F["foreign"])
    con.execute("create table t(x)")
    con.commit()
    con.close()
    with open(F["spec"], "w") as fh:
        fh.write(SPEC)
    with open(F["badspec"], "w") as fh:
        fh.write("name = [unclosed\n")
    with open(F["checks"], "w") as fh:
        fh.write(USER_CHECKS)
    with open(F["syntax"], "w") as fh:
        fh.write("def broken(:\n")
    os.makedirs(os.path.dirname(F["store"]))
    from afltheory.sweep import parse_spec, run_sweep

    run_sweep(parse_spec(SPEC, check_objects=False), F["store"], task="synthetic")
    os.symlink(F["store"], F["store_link"])
    inputs = [F[k] for k in ("store", "spec", "notes", "notes_base", "claimfile", "foreign")]
    inputs.append(F["notes_base"] + ".seed0")
    digests_before = {p: _digest(p) for p in inputs}
    before = snapshot(special)
    rng = random.Random(seed)
    calls = []
    t0 = time.monotonic()
    for _ in range(n):
        hostile = rng.random() < hostile_share
        argv = hostile_argv(rng, P, F) if hostile else argv_for(rng, P, F)
        tree = _entries(w)
        rec = {"argv": argv, "must_fail": hostile} | invoke(argv, alarm=60)
        # a refusal (exit 2) writes nothing: no file, no empty output directory (issue 42, D18)
        rec["left_by_refusal"] = sorted(_entries(w) - tree) if rec["code"] == 2 else []
        o, e = rec.pop("stdout"), rec.pop("stderr")
        text = o + e
        rec["traceback_printed"] = "Traceback (most recent call last)" in text
        results = "\n".join(
            ln
            for ln in text.replace(w, "").splitlines()  # an error may echo the input
            if "error:" not in ln and not ln.startswith("usage:")
        )
        rec["nan_printed"] = any(tok in results for tok in (" nan", "NaN", "=nan", "(nan"))
        rec["tail"] = text[-400:]
        calls.append(rec)
    after = snapshot(special)
    stray = []
    for root, _dirs, files in os.walk(w):
        stray += [
            os.path.join(root, f)
            for f in files
            if ".tmp-" in f or ".corrupt-" in f or f.startswith(".afltheory-probe-")
        ]
    print(
        json.dumps(
            {
                "calls": calls,
                "special_before": before,
                "special_after": after,
                "stray": stray,
                "special": sorted(P),
                "inputs_changed": sorted(p for p in inputs if _digest(p) != digests_before[p]),
                "seconds": time.monotonic() - t0,
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
