"""The reproducers D1-D19 of issue 42, each run as a fresh ``afltheory`` process in an empty directory.

``python tests/io/reproducers.py [ID ...]`` (from the repository root) runs them and prints one line per
reproducer: its id, the exit code, what it left in the directory and whether it now behaves (a clear
one-line error with a non-zero exit, or the correct result, and every input byte-identical);
tests/io/test_reproducers.py runs the same list. Each reproducer is the issue's command line as it was
reported; its setup writes only inside the directory (FIFOs and device nodes are private ones made with
mknod there, never the machine's /dev).
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import stat
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: a two-task spec: the store of D1/D2/D16/D18 is made from it in a second
SPEC = textwrap.dedent("""\
    name = "rp"
    rounds = 4
    replicates = 2
    seeds = [0]
    checkpoints = 2

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

HEAD = "from afltheory.checks import Verdict, register\n"


def _check(name: str, body: str, *, passed: bool = True, before: str = "") -> str:
    """Source of one registered check ``name`` whose body runs ``body`` then returns one verdict."""
    ret = (
        f'    return [Verdict(id="{name}.v", claim="c", reference="r", measured=1.0, theoretical=1.0, '
        f"passed={passed})]\n"
    )
    return f'{before}@register("{name}", "{name}", "none")\ndef _{name}(ctx):\n{body}{ret}'


GOOD = _check("good", "    pass\n")
FALSE = _check("false_claim", "    pass\n", passed=False)

FILES: dict[str, bytes | Callable[[Path], None]] = {
    "spec.toml": SPEC.encode(),
    "notes.txt": b"my notes: not a journal\n",
    "good.py": (HEAD + GOOD).encode(),
    "exit_in_check.py": (HEAD + _check("dies", "    import os\n    os._exit(0)\n") + GOOD).encode(),
    "exit_at_import.py": (HEAD + GOOD + "import os\nos._exit(0)\n").encode(),
    "hang.py": (HEAD + _check("hangs", "    import time\n    time.sleep(10**6)\n") + GOOD).encode(),
    "patch.py": (HEAD + "Verdict.ok = property(lambda self: True)\n" + GOOD).encode(),
    "setattr.py": (  # every Verdict built after this import gets passed=True, the other file's too
        HEAD
        + "_init = Verdict.__post_init__\n"
        + "def _forced(self):\n    _init(self)\n    object.__setattr__(self, 'passed', True)\n"
        + "Verdict.__post_init__ = _forced\n"
        + GOOD
    ).encode(),
    "false.py": (HEAD + FALSE).encode(),
    "syntax.py": b"def broken(:\n",
    "nul.py": b"x = 1\x00\n",
    "latin.py": b'x = "\xff"\n',
    "exits.py": b"import sys\nsys.exit(0)\n",
    "nobound.py": b'from afltheory.claims import Claim\nc = Claim(id="zz", title="t")\n',
    "kbint.py": (HEAD + _check("kb", "    raise KeyboardInterrupt\n") + GOOD).encode(),
    "subclass.py": (
        HEAD
        + "class V(Verdict):\n    pass\n"
        + '@register("sub", "sub", "none")\ndef _sub(ctx):\n'
        + '    return [V(id="sub.v", claim="c", reference="r", measured=1.0, theoretical=1.0, passed=True)]\n'
        + GOOD
    ).encode(),
    "closes.py": (HEAD + _check("closes", "    import sys\n    sys.stdout.close()\n") + GOOD).encode(),
    "forks.py": (HEAD + _check("forks", "    import os\n    os.fork()\n") + GOOD).encode(),
    "free_step.py": textwrap.dedent("""\
        from afltheory.algorithms import FedAvg
        from afltheory.claims import D0, Assumptions, Claim, L, T, eta_L, mu
        GD = Claim(id="gd.every_step", title="GD contracts for every step", rule=FedAvg, eta=1, eta_L=None,
                   measured="last_dist_sq", bound=(1 - eta_L * mu) ** (2 * T) * D0,
                   conditions={"step": eta_L * L <= 1},
                   assumptions=Assumptions(function="strongly_convex", participation="full",
                                           heterogeneity=None))
        """).encode(),
}


def _store(d: Path) -> None:
    """``s.sqlite``: the two-task spec run to the end (the store D1/D2/D18 must not lose)."""
    from afltheory.sweep import parse_spec, run_sweep

    run_sweep(parse_spec(SPEC, check_objects=False), d / "s.sqlite", task="synthetic")


def _foreign(d: Path) -> None:
    import sqlite3

    con = sqlite3.connect(d / "foreign.db")
    con.execute("create table t(x)")
    con.execute("insert into t values (1)")
    con.commit()
    con.close()


def _fifo(d: Path) -> None:
    os.mkfifo(d / "fifo.py")


def _dev(d: Path) -> None:
    os.mknod(d / "dev.py", 0o600 | stat.S_IFCHR, os.makedev(1, 3))  # the null device's numbers, private


def _notes_link(d: Path) -> None:
    os.symlink("notes.txt", d / "link.txt")


def _dir(d: Path) -> None:
    (d / "adir").mkdir()


SETUPS = {"store": _store, "foreign": _foreign, "fifo": _fifo, "dev": _dev, "link": _notes_link, "dir": _dir}


@dataclasses.dataclass(frozen=True)
class Repro:
    """One reproducer: the issue's command line, what it needs in the directory, what it must do now.

    ``codes``: the allowed exit codes; ``says``: a phrase the output must contain; ``new``: names the command
    may add to the directory (nothing else may appear, nothing given may change); ``pre``: Python run in the
    process before the CLI (used to hide an optional extra)."""

    id: str
    argv: tuple[str, ...]
    needs: tuple[str, ...] = ()
    codes: tuple[int, ...] = (2,)
    says: str = "error"
    new: tuple[str, ...] = ()
    pre: str = ""
    timeout: float = 120.0


def _verify(*files: str, extra: tuple[str, ...] = ()) -> tuple[str, ...]:
    return ("verify", *files, "--quiet", "--out", "rep", *extra)


T40 = ("pep", "thm2", "--m", "1", "--K", "1", "--T", "40", "--tau", "3", "--search", "exhaustive")
REP = ("rep", "rep/report.md", "rep/report.html", "rep/figures")
NO_SKLEARN = "sys.modules['sklearn'] = None"
NO_TORCH = "sys.modules['torch'] = None"

REPRODUCERS: list[Repro] = [
    Repro("D1", ("sweep", "plot", "--store", "s.sqlite", "--out", "s.sqlite"), ("store",), says="--store"),
    Repro("D2", ("sweep", "export", "--store", "s.sqlite", "--csv", "s.sqlite"), ("store",), says="--store"),
    Repro("D3", ("adversary", "thm2", "--budget", "8", "--journal", "notes.txt"), says="not a journal"),
    Repro("D3.pep", (*T40[:7], "2", "--tau", "0", "--search", "exhaustive", "--journal", "notes.txt")),
    Repro("D3.link", ("adversary", "thm2", "--budget", "8", "--journal", "link.txt"), ("link",)),
    Repro("D4", ("adversary", "thm2", "--budget", "8", "--journal", "x", "--json", "x"), says="--journal"),
    Repro("D5", _verify("exit_in_check.py"), codes=(1,), says="died (exit code 0", new=REP),
    Repro("D5.import", _verify("exit_at_import.py", extra=("--jobs", "2")), codes=(1,), new=REP),
    Repro("D6", _verify("hang.py", extra=("--timeout", "3")), codes=(1,), says="timed out", new=REP),
    Repro(
        "D6.jobs",
        _verify("hang.py", extra=("--timeout", "3", "--jobs", "2")),
        codes=(1,),
        says="timed out",
        new=REP,
    ),
    Repro("D7", _verify("patch.py", "false.py"), codes=(1,), says="1/2", new=REP),
    Repro("D7.setattr", _verify("setattr.py", "false.py"), codes=(1,), says="1/2", new=REP),
    Repro("D8", ("adversary", "thm2", "--budget", "4", "--file", "/no/such/file.py"), says="--file"),
    Repro("D8.dir", ("adversary", "thm2", "--budget", "4", "--file", "adir"), ("dir",), says="directory"),
    Repro("D8.fifo", ("adversary", "thm2", "--budget", "4", "--file", "fifo.py"), ("fifo",), says="FIFO"),
    Repro("D8.dev", ("adversary", "thm2", "--budget", "4", "--file", "dev.py"), ("dev",), says="device"),
    Repro("D8.syntax", ("adversary", "thm2", "--budget", "4", "--file", "syntax.py"), says="SyntaxError"),
    Repro("D9", ("claims", "list", "--file", "syntax.py"), says="SyntaxError"),
    Repro("D9.nul", ("claims", "list", "--file", "nul.py"), says="null bytes"),
    Repro("D9.latin", ("claims", "list", "--file", "latin.py"), says="utf-8"),
    Repro("D9.nobound", ("claims", "list", "--file", "nobound.py"), says="bound"),
    Repro("D10", ("claims", "list", "--file", "exits.py"), says="sys.exit"),
    Repro("D11", ("sweep", "run", "spec.toml", "--store", "n.sqlite", "--jobs", "1e23"), says="--jobs"),
    Repro("D11.seeds", ("adversary", "thm2", "--seeds", "1e23"), says="--seeds"),
    Repro(
        "D12.sklearn",
        ("real", "table2", "--ps", "1", "--rounds", "1", "--seeds", "1", "--out", "o"),
        codes=(1,),
        says="SKIPPED (needs: pip install 'afltheory[data]'",
        pre=NO_SKLEARN,
    ),
    Repro(
        "D12.torch",
        ("real", "wallclock", "--backend", "torch", "--out", "o"),
        codes=(1,),
        says="SKIPPED (needs: pip install 'afltheory[torch]'",
        pre=NO_TORCH,
    ),
    Repro(
        "D12.free",
        ("adversary", "gd.every_step", "--file", "free_step.py", "--budget", "4"),
        codes=(0, 1),
        says="eta_L=1.0",
    ),  # the search picks the free step; noise breaks this GD claim
    Repro("D13", ("real", "wallclock", "--target", "nan"), says="--target"),
    Repro("D13.2", ("real", "wallclock", "--target", "2"), says="--target"),
    Repro("D14", ("check", "--only", "thm2", "--json", "", "--out", "rep"), says="--json"),
    Repro("D14.out", ("adversary", "thm2", "--budget", "4", "--out", ""), says="--out"),
    Repro("D15", T40, says="--allow-large"),
    Repro("D15.budget", ("adversary", "thm2", "--budget", "1e23"), says="--budget"),
    Repro("D16", ("sweep", "run", "spec.toml", "--store", "foreign.db"), ("foreign",), says="never creates"),
    Repro("D17.kbint", _verify("kbint.py"), codes=(1,), says="1/2", new=REP),
    Repro("D17.subclass", _verify("subclass.py"), codes=(0,), says="2/2", new=REP),
    Repro("D17.closes", _verify("closes.py"), codes=(0, 1), says="verdicts", new=REP),
    Repro("D17.forks", _verify("forks.py"), codes=(0, 1), says="verdicts", new=REP),
    Repro("D18.dirs", ("adversary", "nosuch", "--budget", "4", "--json", "a/b/c.json"), says="nosuch"),
    Repro("D18.dirs.check", ("check", "--only", "nosuch", "--out", "rep/sub")),
    Repro("D18.status", ("sweep", "status", "--store", "missing.sqlite"), says="does not exist"),
    Repro("D18.status.foreign", ("sweep", "status", "--store", "foreign.db"), ("foreign",), says="not a"),
    Repro("D19.list", ("adversary", "--list"), codes=(0,), says="thm2"),
    Repro("D19.seed", ("adversary", "thm2", "--seed", str(2**64)), says="--seed"),
    Repro("D19.replicates", ("adversary", "thm2", "--replicates", "-1"), says="--replicates"),
    Repro("D19.threads", ("real", "table2", "--threads", "-1"), says="--threads"),
    Repro("D19.dash.json", ("adversary", "thm2", "--budget", "4", "--json", "-"), says="--json"),
    Repro("D19.dash.csv", ("sweep", "export", "--store", "s.sqlite", "--csv", "-"), ("store",), says="--csv"),
    Repro("D19.dash.journal", ("adversary", "thm2", "--budget", "4", "--journal", "-"), says="--journal"),
    Repro("D19.dash.file", ("adversary", "thm2", "--budget", "4", "--file", "-"), says="--file"),
    Repro("D19.dash.claims", ("claims", "list", "--file", "-"), says="--file"),
    Repro("D19.dash.store", ("sweep", "status", "--store", "-"), says="--store"),
]


@dataclasses.dataclass
class Outcome:
    """What a reproducer did: exit code, output, files added/changed/removed, and the verdict."""

    id: str
    code: int | None
    stdout: str
    stderr: str
    added: list[str]
    changed: list[str]
    seconds: float
    problems: list[str]

    @property
    def ok(self) -> bool:
        """True when the reproducer now behaves."""
        return not self.problems


def _tree(d: Path) -> dict[str, str | None]:
    """relative path -> sha256 of a regular file (None for anything else), symlinks not followed."""
    out: dict[str, str | None] = {}
    for root, dirs, files in os.walk(d):
        for name in dirs + files:
            p = Path(root) / name
            rel = str(p.relative_to(d))
            st = os.lstat(p)
            if stat.S_ISREG(st.st_mode):
                out[rel] = hashlib.sha256(p.read_bytes()).hexdigest()
            else:
                out[rel] = (
                    f"{stat.S_IFMT(st.st_mode)}:{st.st_rdev}:{os.readlink(p) if p.is_symlink() else ''}"
                )
    return out


def prepare(r: Repro, d: Path) -> None:
    """Write the files every reproducer may name, then run ``r``'s setups, inside ``d`` only."""
    for name, data in FILES.items():
        (d / name).write_bytes(data)  # type: ignore[arg-type]
    for need in r.needs:
        SETUPS[need](d)


def run(r: Repro, d: Path, python: str = sys.executable) -> Outcome:
    """Run reproducer ``r`` in the prepared directory ``d`` as a fresh process and judge it."""
    before = _tree(d)
    code = f"import sys\n{r.pre}\nfrom afltheory.cli import main\nsys.exit(main(sys.argv[1:]))"
    env = dict(os.environ, PYTHONPATH=str(ROOT), OPENBLAS_NUM_THREADS="1", MPLBACKEND="Agg")
    t0 = time.monotonic()
    try:
        p = subprocess.run(
            [python, "-c", code, *r.argv],
            cwd=d,
            capture_output=True,
            text=True,
            timeout=r.timeout,
            env=env,
            stdin=subprocess.DEVNULL,
        )
        rc, out, err = p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as exc:
        rc, out, err = None, str(exc.stdout or ""), str(exc.stderr or "")
    secs = time.monotonic() - t0
    after = _tree(d)
    added = sorted(set(after) - set(before))
    changed = sorted(k for k in before if after.get(k) != before[k])
    problems = []
    if rc is None:
        problems.append(f"hang (> {r.timeout:.0f} s)")
    elif rc not in r.codes:
        problems.append(f"exit {rc}, expected {r.codes}")
    if "Traceback" in out + err:
        problems.append("traceback")
    if r.says.lower() not in (out + err).lower():
        problems.append(f"output does not say {r.says!r}")
    if rc == 2 and "error" not in (err.strip().splitlines() or [""])[-1]:
        problems.append("exit 2 without an error line last on stderr")
    if changed:
        problems.append(f"changed or removed: {changed}")
    stray = [a for a in added if a not in r.new and not a.startswith("o/")]
    if stray:
        problems.append(f"left behind: {stray}")
    return Outcome(r.id, rc, out, err, added, changed, secs, problems)


def run_in_tmp(r: Repro, python: str = sys.executable) -> Outcome:
    """Run ``r`` in a fresh empty temporary directory (removed afterwards)."""
    with tempfile.TemporaryDirectory(prefix=f"repro-{r.id}-") as tmp:
        d = Path(tmp)
        prepare(r, d)
        return run(r, d, python)


def main(argv: list[str]) -> int:
    """Run the named reproducers (all by default); print a table; exit 1 when one misbehaves."""
    todo = [r for r in REPRODUCERS if not argv or r.id in argv or r.id.split(".")[0] in argv]
    bad = 0
    for r in todo:
        o = run_in_tmp(r)
        bad += not o.ok
        last = (o.stderr.strip().splitlines() or o.stdout.strip().splitlines() or [""])[-1][:110]
        print(f"{r.id:20s} exit {o.code!s:4s} {o.seconds:5.1f} s  {'ok ' if o.ok else 'BAD'} {last}")
        for p in o.problems:
            print(f"{'':20s} !! {p}")
    print(f"{len(todo) - bad}/{len(todo)} reproducers behave")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
